"""The page's settings checked before a run starts, with the checks the CLI makes.

The page sends the context it is about to start a run with; the answer is `{"error": "..."}`
(one line, the CLI's own message) or `{"ok": true}`. The same functions as the CLI's: the
context's own validation (`deepresearch.config.Context`) and the search sources'
(`deepresearch.tools.check_search_spec`), so the page refuses what the CLI refuses, with the
same words. The model is not checked here: a model the server cannot use fails the run, and
the page shows the run's error.
"""

from __future__ import annotations

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
