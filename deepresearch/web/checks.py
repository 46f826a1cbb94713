"""The page's settings checked before a run starts, with the checks the CLI makes.

The page sends the context it is about to start a run with; the answer is `{"error": "..."}`
(one line, the CLI's own message) or `{"ok": true}`. The same functions as the CLI's: the
context's own validation (`deepresearch.config.Context`) and the search sources'
(`deepresearch.tools.check_search_spec`), so the page refuses what the CLI refuses, with the
same words. The model is not checked here: a model the server cannot use fails the run, and
the page shows the run's error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from deepresearch.choices.backends import BACKENDS
from deepresearch.config import CONTEXT_FIELDS, Context
from deepresearch.text.safe import one_line


def context_problem(context: dict) -> str | None:
    """Why a run with `context` would be refused before it starts, or None."""
    from deepresearch.tools import check_search_spec

    try:
        ctx = Context(**{k: v for k, v in context.items() if k in CONTEXT_FIELDS})
        check_search_spec(ctx.search)
    except (ValueError, TypeError) as e:
        return one_line(str(e), 400)
    return None


DOCS_ENV = "DEEPRESEARCH_DOCS"  # folders the page offers as sources, separated by os.pathsep


def offered_sources(env: Mapping[str, str] | None = None) -> list[dict]:
    """The search sources the page offers as checkboxes, as this server is set up: the offline
    encyclopedia (checked, the default), each folder of DEEPRESEARCH_DOCS that exists as
    `docs:FOLDER`, web search when TAVILY_API_KEY is set, and the public literature services
    (no key needed). Each: {"spec": what `search` takes, "label", "title": what it searches}."""
    env = os.environ if env is None else env
    out: list[dict] = []
    for b in BACKENDS:
        if b.spec:  # docs:<folder>: the folders this server was given
            for folder in [f.strip() for f in env.get(DOCS_ENV, "").split(os.pathsep) if f.strip()]:
                path = Path(folder).expanduser()
                if path.is_dir():
                    label = f"docs: {path.resolve().name or path}"
                    out.append({"spec": f"docs:{path}", "label": label, "title": f"{b.description}: {path}"})
        elif b.name == "tavily" and not env.get("TAVILY_API_KEY"):
            continue
        else:
            out.append({"spec": b.name, "label": b.name, "title": b.description, "checked": b.name == "wiki"})
    return out
