"""What every benchmark shares: the environment, the stub, its responders, and run helpers.

Everything goes through the real `ChatOpenAI` path (model spec "openai:stub") against
`tests.stub_openai.StubOpenAI` on 127.0.0.1, and searches go through the real Tavily
client against the same stub's `/search` (so a search costs one local HTTP request and no
CPU-heavy ranking). Keys are fake and set inside this process only.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `tests` (the stub) lives at the repository root
    sys.path.insert(0, str(ROOT))

FAKE_OPENAI_KEY = "sk-bench-fake-key-not-real-0000"
FAKE_TAVILY_KEY = "tvly-bench-fake-key-not-real-0000"
QUESTION = "Who designed the Eiffel Tower, and why was it built?"

_ORIGINAL_ENV: dict[str, str | None] = {}
_SCRATCH: Path | None = None


def setup_env() -> Path:
    """Fake keys, no tracing, and a scratch cache (the text store) for the stub runs."""
    global _SCRATCH
    if _SCRATCH is not None:
        return _SCRATCH
    for k in ("OPENAI_API_KEY", "TAVILY_API_KEY", "OPENAI_BASE_URL", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        _ORIGINAL_ENV[k] = os.environ.get(k)
    os.environ["OPENAI_API_KEY"] = FAKE_OPENAI_KEY  # never a real key, even towards 127.0.0.1
    os.environ["TAVILY_API_KEY"] = FAKE_TAVILY_KEY
    os.environ.pop("OPENAI_BASE_URL", None)
    os.environ["LANGSMITH_TRACING"] = "false"
    # the indexes derived from what is installed stay the user's (built at set-up: `deepresearch
    # index`); only the runs' own files go to the scratch cache
    from deepresearch.embeddings.index_dir import INDEX_DIR_ENV, index_dir

    _ORIGINAL_ENV[INDEX_DIR_ENV] = os.environ.get(INDEX_DIR_ENV)
    os.environ[INDEX_DIR_ENV] = str(index_dir())
    _SCRATCH = Path(tempfile.mkdtemp(prefix="deepresearch-bench-"))
    atexit.register(shutil.rmtree, _SCRATCH, ignore_errors=True)
    os.environ["XDG_CACHE_HOME"] = str(_SCRATCH / "cache")
    os.environ["XDG_DATA_HOME"] = str(_SCRATCH / "data")
    return _SCRATCH


def scratch() -> Path:
    return setup_env()


class user_cache:
    """Within this block the user's own cache dirs apply (the wiki index built by the CLI)."""

    def __enter__(self):
        self._saved = {k: os.environ.get(k) for k in ("XDG_CACHE_HOME", "XDG_DATA_HOME")}
        for k in self._saved:
            if _ORIGINAL_ENV.get(k) is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = _ORIGINAL_ENV[k]  # type: ignore[assignment]
        return self

    def __exit__(self, *exc):
        for k, v in self._saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# --- the stub's responders --------------------------------------------------------------

SYLLABLES = "ba ce di fo gu ha je ki lo mu na pe ri so tu vy".split()
VOCAB = (
    "engineer iron lattice tower Paris exposition wrought design structure gallery visitors "
    "construction century monument height platform foundation"
).split() + [a + b + c for a in SYLLABLES for b in SYLLABLES for c in ("n", "r", "s", "")]


def _paragraph(seed: str, words: int = 120) -> str:
    """Deterministic filler text: sentences of words drawn from a large made-up vocabulary."""
    import random

    rnd = random.Random(hashlib.sha1(seed.encode()).digest())
    sentences, left = [], words
    while left > 0:
        k = min(left, rnd.randint(9, 16))
        sentences.append(" ".join(rnd.choice(VOCAB) for _ in range(k)).capitalize() + ".")
        left -= k
    return " ".join(sentences)


def stub_search(query: str) -> list[dict]:
    """Tavily-shaped results: three distinct pages per query (new sources every search)."""
    h = hashlib.sha1(query.encode()).hexdigest()[:10]
    return [
        {
            "title": f"{query[:60]} ({j + 1})",
            "url": f"https://bench.example/{h}/{j}",
            "content": f"{query}. " + _paragraph(f"{query} {j}"),
        }
        for j in range(3)
    ]


def plan(sections: int) -> dict:
    return {
        "title": "The Eiffel Tower",
        "background": "A wrought-iron lattice tower in Paris.",
        "sections": [
            {"title": f"Part {i + 1}", "key_question": f"What is aspect {i + 1} of the Eiffel Tower?"}
            for i in range(sections)
        ],
    }


@dataclass(frozen=True)
class Responder:
    """A researcher that never runs out of gaps unless `complete`, plans new queries each
    call, writes drafts long enough to be proofread, and cites what it was shown. (An object,
    not a closure: `StubProcess` sends it to the stub's own process.)"""

    sections: int = 1
    complete: bool = False

    def __call__(self, kind: str, prompt: str, n: int):
        sections, complete = self.sections, self.complete
        if kind == "ReportPlan":
            return plan(sections)
        if kind == "ConceptProposal":  # the question's things, as the thinking node asks a capable model
            return {"concepts": ["Eiffel Tower"]}
        if kind == "KnowledgeGapOutput":
            # a gap about the question (the node drops gaps that share no word with it)
            return {"research_complete": complete, "outstanding_gaps": [] if complete else [f"Eiffel Tower point {n}"]}
        if kind == "AgentSelectionPlan":
            return {
                "tasks": [
                    {"gap": f"open point {n}", "tool": "tavily", "query": f"eiffel aspect {n} {j}"} for j in range(2)
                ]
            }
        if kind == "Synthesis":
            return {
                "introduction": "This report looks at the tower from several sides.",
                "conclusion": "Together the parts explain the tower's design and purpose.",
            }
        if kind == "SupportJudgement":
            return {"verdict": "supported", "span": ""}
        if "Improve the flow of this report section" in prompt:  # proofreader: echo the section
            return prompt.rpartition("Reply with the section text only.\n\n")[2].strip()
        if "In two to four sentences" in prompt:  # thinking
            return (
                "The sources establish the tower's engineer and its iron lattice design. "
                "They say less about the exposition and why the design was chosen. "
                f"Still unknown: point {n}."
            )
        # writer: one sentence from each source it was shown (at most five), cited
        blocks = re.findall(r'<source id="(\d+)"[^>]*>\n(.*?)(?:\n</source>)', prompt, re.S)
        body = " ".join(f"{text.split('. ')[1 if '. ' in text else 0].rstrip('. …')} [{i}]." for i, text in blocks[:5])
        body = body or "Nothing was found."
        return body if "This is one section" in prompt else f"# Report\n\n{body}"


def responder(*, sections: int = 1, complete: bool = False) -> Responder:
    return Responder(sections, complete)


def node_of(body: dict) -> str:
    """Which node sent a chat request (from its prompt)."""
    from tests.fakes import kind_of

    prompt = prompt_text(body)
    kind = kind_of(prompt)
    if kind == "text" and body.get("tools"):
        kind = body["tools"][0]["function"]["name"]
    return {
        "KnowledgeGapOutput": "knowledge_gap",
        "AgentSelectionPlan": "tool_selector",
        "ReportPlan": "planner",
        "Synthesis": "synthesizer",
        "SupportJudgement": "source_tracer",
        "ConceptProposal": "thinking",
    }.get(kind) or (
        "thinking"
        if "In two to four sentences" in prompt
        else "proofreader"
        if "Improve the flow" in prompt
        else "writer"
    )


def prompt_text(body: dict) -> str:
    return "\n\n".join(str(m.get("content") or "") for m in body.get("messages", []))


def prompt_tokens(body: dict) -> int:
    """Prompt size as the stub counts it (characters / 4)."""
    return max(1, len(prompt_text(body)) // 4)


def chat_requests(stub) -> list[dict]:
    return [r for r in stub.requests if r["path"].rstrip("/").endswith("/chat/completions")]


def make_stub(respond=None, **kw):
    """A StubOpenAI answering with `respond` (default: `responder()`) and `stub_search`.
    (The stub turns Nagle's algorithm off itself: no delayed-ACK stall per request.)"""
    from tests.stub_openai import StubOpenAI

    return StubOpenAI(respond or responder(), search=kw.pop("search", stub_search), **kw)


# --- runs -----------------------------------------------------------------------------


def stub_context(stub, **over) -> Any:
    from deepresearch.config import Context

    base = dict(
        model="openai:stub",
        base_url=stub.base_url,
        search="tavily",
        search_base_url=stub.root_url,
        max_tokens=10_000_000,
        max_seconds=600.0,
        request_timeout=30.0,
    )
    base.update(over)
    return Context(**base)


@dataclass
class Run:
    final: dict
    events: list[tuple[float, dict]] = field(default_factory=list)  # (seconds since start, event)
    cpu: list[float] = field(default_factory=list)  # the process's CPU seconds at each event's arrival
    seconds: float = 0.0
    error: str | None = None

    def times(self, type_: str) -> list[float]:
        return [t for t, e in self.events if e.get("type") == type_]


def stream_run(graph, inp, config: dict, ctx) -> Run:
    """Stream a graph (custom + values, like the runner), timing each event on arrival."""
    run = Run(final={})
    t0 = time.monotonic()
    try:
        for mode, chunk in graph.stream(inp, config, context=ctx, stream_mode=["custom", "values"]):
            if mode == "custom":
                run.events.append((time.monotonic() - t0, chunk))
                run.cpu.append(time.process_time())
            else:
                run.final = chunk
    except Exception as e:  # noqa: BLE001 - a failed run is a figure too
        run.error = f"{type(e).__name__}: {str(e)[:200]}"
    run.seconds = time.monotonic() - t0
    return run


def config_for(thread: str, *, max_iterations: int = 3, max_concurrency: int | None = None) -> dict:
    cfg: dict = {"configurable": {"thread_id": thread}, "recursion_limit": 4 * (max_iterations + 1) + 40}
    if max_concurrency:
        cfg["max_concurrency"] = max_concurrency
    return cfg


def fmt_s(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    line = lambda r: "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([line(cells[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in cells[1:]])


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
