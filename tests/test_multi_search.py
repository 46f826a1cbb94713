"""Several backends in one run: the tool selector's list, the choice per gap and its
fallbacks, events and sources naming their backend, identifiers in the Sources list, a
failing source, and NCBI's rate limit held under --concurrency 8 (from the stub's log)."""

import json
import re
import subprocess
import sys
import threading

import pytest

from deepresearch.config import Context
from deepresearch.runtime.runner import research
from deepresearch.tools.registry import Tool, assign, choose_tool, rotation
from tests.deep_helpers import deep_responder
from tests.fakes import first_sentence, sources_in
from tests.stub_openai import StubOpenAI
from tests.stub_sources import StubSources, max_in_window

QUESTION = "How does aspirin prevent heart attacks, and who first made it?"
MEDICAL_GAP = "whether low-dose aspirin prevents a first myocardial infarction"
HISTORY_GAP = "who first synthesized aspirin and when"
MEDICAL_QUERY = "aspirin myocardial infarction prevention"
HISTORY_QUERY = "aspirin history Bayer"


def cli(args, env, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "deepresearch.cli", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def tools_in(prompt: str) -> dict[str, str]:
    """The tools the selector showed the model: {name: description}."""
    return dict(re.findall(r'^- "([^"]+)": (.+)$', prompt, re.M))


def picker(plan=None, gaps=(MEDICAL_GAP, HISTORY_GAP)):
    """A fake model that reads the tools' descriptions and picks, per gap, the tool whose
    description fits (biomedical literature for the medical gap, the encyclopedia for the
    historical one); `plan(tools)` overrides the tasks. Writes a report citing every source."""
    state = {"judged": 0, "tools_seen": []}
    lock = threading.Lock()

    def pick(tools, *words):
        return next(name for name, d in tools.items() if any(w in d.lower() for w in words))

    def respond(kind, prompt, n):
        if kind == "KnowledgeGapOutput":
            with lock:
                state["judged"] += 1
                first = state["judged"] == 1
            return {"research_complete": not first, "outstanding_gaps": list(gaps) if first else []}
        if kind == "AgentSelectionPlan":
            tools = tools_in(prompt)
            state["tools_seen"].append(tools)
            if plan:
                return plan(tools)
            return {
                "tasks": [
                    {"gap": MEDICAL_GAP, "tool": pick(tools, "biomedical"), "query": MEDICAL_QUERY},
                    {"gap": HISTORY_GAP, "tool": pick(tools, "encyclopedia"), "query": HISTORY_QUERY},
                ]
            }
        if kind == "SupportJudgement":
            return {"verdict": "supported", "span": ""}
        if kind == "Synthesis":
            return {"introduction": "Intro.", "conclusion": "End."}
        ids = sources_in(prompt)
        if "In two to four sentences" in prompt:
            return "Notes."
        return "# Report\n\n" + (" ".join(f"{first_sentence(prompt, i)} [{i}]." for i in ids) or "Nothing.")

    respond.state = state
    return respond


# --- the choice per gap ------------------------------------------------------------------

TOOLS = [
    Tool("wiki", "encyclopedia", "wiki"),
    Tool("pubmed", "biomedical", "pubmed"),
    Tool("docs", "documents", "docs:./notes"),
    Tool("notes/search_notes", "my notes"),
    Tool("web/search", "web"),
    Tool("notes/search", "notes"),
]


@pytest.mark.parametrize(
    "choice,expected",
    [
        ("pubmed", "pubmed"),
        ("PubMed", "pubmed"),
        (' "pubmed" ', "pubmed"),
        ("Wikipedia", "wiki"),
        ("encyclopedia", "wiki"),
        ("docs:./notes", "docs"),
        ("docs:elsewhere", "docs"),
        ("search_notes", "notes/search_notes"),
        ("notes.search_notes", "notes/search_notes"),
        ("notes_search", "notes/search"),
        ("search", None),  # two servers have a tool called search: ambiguous
        ("bing", None),
        ("", None),
        (None, None),
        (3, None),
    ],
)
def test_choose_tool(choice, expected):
    assert choose_tool(choice, TOOLS) == expected


def test_an_invalid_choice_falls_back_to_the_primary_tool():
    assert assign("bing", TOOLS) == "wiki"
    assert assign("ncbi", TOOLS) == "pubmed"


def test_rotation_sends_each_gap_to_the_tools_in_turn():
    tools = TOOLS[:3]
    tasks = rotation(["g0", "g1"], tools, turn=0)
    assert [(t["gap"], t["tool"]) for t in tasks] == [
        ("g0", "wiki"),
        ("g1", "pubmed"),
        ("g0", "pubmed"),
        ("g1", "docs"),
        ("g0", "docs"),
        ("g1", "wiki"),
    ]
    assert [t["tool"] for t in rotation(["g0", "g1"], tools, turn=1)][:2] == ["pubmed", "docs"]


# --- runs in Python -----------------------------------------------------------------------


@pytest.fixture
def sources():
    with StubSources() as s:
        yield s


def _ctx(model, stub, search, **kw):
    urls = {n: stub.base(n) for n in ("pubmed", "clinicaltrials", "europepmc", "arxiv")}
    return Context(model=model, search=search, search_base_urls=urls, max_iterations=3, **kw)


def test_an_invalid_tool_choice_searches_the_primary_tool(fake_model, sources):
    respond = picker(plan=lambda tools: {"tasks": [{"gap": MEDICAL_GAP, "tool": "bing", "query": MEDICAL_QUERY}]})
    model, _ = fake_model(respond)
    events = []
    research(QUESTION, _ctx(model, sources, "wiki,pubmed"), mode="iterative", on_event=events.append)
    searched = [(e["tool"], e["query"]) for e in events if e["type"] == "searching"]
    assert ("wiki", MEDICAL_QUERY) in searched and ("pubmed", MEDICAL_QUERY) not in searched


def test_when_the_model_gives_nothing_usable_each_gap_goes_to_the_tools_in_turn(fake_model, sources):
    state = {"judged": 0}

    def respond(kind, prompt, n):
        if kind == "KnowledgeGapOutput":
            state["judged"] += 1
            return {"research_complete": state["judged"] >= 3, "outstanding_gaps": [MEDICAL_GAP, HISTORY_GAP]}
        if kind == "AgentSelectionPlan":
            return ConnectionError("provider unreachable")
        return picker()(kind, prompt, n)

    model, _ = fake_model(respond)
    events = []
    out = research(
        QUESTION, _ctx(model, sources, "wiki,pubmed", max_retries=0), mode="iterative", on_event=events.append
    )
    searched = [(e["tool"], e["query"]) for e in events if e["type"] == "searching"]
    later = searched[2:]  # after the question went to both tools
    for gap in (MEDICAL_GAP, HISTORY_GAP):
        assert {t for t, q in later if q == gap} == {"wiki", "pubmed"}, searched
    assert len(later) == len(set(later))  # no search repeated
    assert any(e["type"] == "error" and e.get("node") == "tool_selector" for e in events)
    assert out["stopped_by"] in ("complete", "max_iterations")


def test_three_specialist_backends_at_once_with_their_identifiers(fake_model, sources):
    model, _ = fake_model(picker(plan=lambda tools: {"tasks": []}))
    events = []
    out = research(
        "Does aspirin dose matter in coronary disease?",
        _ctx(model, sources, "clinicaltrials,europepmc,arxiv"),
        mode="iterative",
        on_event=events.append,
    )
    backends = {s["backend"] for s in out["sources"]}
    assert backends == {"clinicaltrials", "europepmc", "arxiv"}
    for e in events:
        if e["type"] in ("searching", "search_complete"):
            assert e["tool"] in backends
    by_url = {s["url"]: s for s in out["sources"]}
    assert by_url["https://clinicaltrials.gov/study/NCT09000001"]["ids"] == {"NCT": "NCT09000001"}
    report = out["report"]
    assert "https://clinicaltrials.gov/study/NCT09000001 (NCT NCT09000001)" in report
    assert "https://arxiv.org/abs/2401.00001 (arXiv 2401.00001, DOI 10.5555/gnn.2024.01)" in report
    assert "https://europepmc.org/article/MED/39000002 (PMID 39000002, DOI 10.5555/pbr.2023.0077)" in report


def test_the_same_article_from_two_backends_is_one_source(fake_model, sources):
    model, _ = fake_model(picker(plan=lambda tools: {"tasks": []}))
    out = research("How does aspirin block platelets?", _ctx(model, sources, "pubmed,europepmc"), mode="iterative")
    pmids = [s["ids"].get("PMID") for s in out["sources"] if s.get("ids")]
    assert pmids.count("39000002") == 1  # PubMed's and Europe PMC's record of one article
    assert "https://europepmc.org/article/PPR/PPR800001" in {s["url"] for s in out["sources"]}


def test_a_failing_source_is_an_error_event_and_the_run_goes_on(fake_model, sources):
    sources.fail("esearch", *([500] * 20))
    model, _ = fake_model(picker())
    events = []
    out = research(
        QUESTION, _ctx(model, sources, "wiki,pubmed", max_retries=1), mode="iterative", on_event=events.append
    )
    failed = [e for e in events if e["type"] == "error" and e.get("tool") == "pubmed" and not e.get("retrying")]
    assert failed and "pubmed: HTTP 500 (gave up after 2 attempts)" in failed[0]["cause"]
    assert any(e["type"] == "error" and e.get("retrying") and e.get("tool") == "pubmed" for e in events)
    assert out["report"] and {s["backend"] for s in out["sources"]} == {"wiki"}
    assert any(x.get("tool") == "pubmed" for x in out["errors"])


# --- through the CLI ----------------------------------------------------------------------


def test_cli_wiki_and_pubmed_the_model_picks_per_gap(sources, cli_env, tmp_path):
    respond = picker()
    with StubOpenAI(respond) as model:
        cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
        r = cli(
            [
                QUESTION,
                "--mode",
                "iterative",
                "--model",
                "openai:stub",
                "--base-url",
                model.base_url,
                "--search",
                "wiki,pubmed",
                "--search-base-url",
                f"pubmed={sources.base('pubmed')}",
                "--json",
                "--db",
                str(tmp_path / "runs.sqlite"),
            ],
            cli_env,
        )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    # the model saw both tools with their one-line descriptions
    shown = respond.state["tools_seen"][0]
    assert set(shown) == {"wiki", "pubmed"}
    assert "biomedical" in shown["pubmed"] and "encyclopedia" in shown["wiki"]
    # the medical gap went to PubMed, the historical one to the encyclopedia
    terms = [q["params"]["term"] for q in sources.requests("esearch")]
    assert terms == [QUESTION, MEDICAL_QUERY]
    assert f"searching (pubmed): {MEDICAL_QUERY}" in r.stderr
    assert f"searching (wiki): {HISTORY_QUERY}" in r.stderr
    by_backend = {}
    for s in out["sources"]:
        by_backend.setdefault(s["backend"], []).append(s)
    assert set(by_backend) == {"wiki", "pubmed"}
    assert "https://en.wikipedia.org/wiki/Aspirin" in {s["url"] for s in by_backend["wiki"]}
    trial = next(s for s in by_backend["pubmed"] if s["ids"]["PMID"] == "39000001")
    assert trial["url"] == "https://pubmed.ncbi.nlm.nih.gov/39000001/"
    line = next(x for x in out["report"].splitlines() if "pubmed.ncbi.nlm.nih.gov/39000001/" in x)
    assert line.endswith("(PMID 39000001, PMCID PMC11000001, DOI 10.5555/jcp.2024.0001)")


def test_cli_all_four_specialist_backends(sources, cli_env, tmp_path):
    def plan(tools):
        return {"tasks": [{"gap": "theory", "tool": "arXiv", "query": "graph diffusion"}]}

    respond = picker(plan=plan)
    urls = [f"{n}={sources.base(n)}" for n in ("pubmed", "clinicaltrials", "europepmc", "arxiv")]
    with StubOpenAI(respond) as model:
        cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
        r = cli(
            [
                QUESTION,
                "--mode",
                "iterative",
                "--model",
                "openai:stub",
                "--base-url",
                model.base_url,
                "--search",
                "pubmed,clinicaltrials,europepmc,arxiv",
                *sum((["--search-base-url", u] for u in urls), []),
                "--json",
                "--quiet",
                "--db",
                str(tmp_path / "runs.sqlite"),
            ],
            cli_env,
        )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {s["backend"] for s in out["sources"]} == {"pubmed", "clinicaltrials", "europepmc", "arxiv"}
    # the first round sends the question to all four (its cap); later the model's choice of arXiv
    arxiv = [q["params"]["search_query"] for q in sources.requests("arxiv")]
    assert arxiv[0].startswith("all:How AND all:does AND all:aspirin")
    assert "all:graph AND all:diffusion" in arxiv[1:]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--search", "wiki,bing"], "unknown search backend 'bing'"),
        (["--search-base-url", "wiki=http://127.0.0.1:9"], "unknown backend 'wiki'"),
        (["--search-base-url", "pubmed=ftp://example.org"], "must be an http(s) URL"),
        (["--search", "wiki,tavily"], "needs TAVILY_API_KEY"),
    ],
)
def test_cli_bad_search_settings_exit_2(args, message, cli_env):
    r = cli(["q", *args], cli_env)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_cli_ncbi_limit_holds_under_concurrency_8(cli_env, tmp_path):
    sections = [
        {"title": f"Part {i}", "key_question": f"What does study {i} say about aspirin dose {i}?"} for i in range(8)
    ]
    respond = deep_responder(plans=[{"title": "Aspirin", "background": "A drug.", "sections": sections}])
    with StubSources(ncbi_limit=3) as sources, StubOpenAI(respond) as model:
        cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
        r = cli(
            [
                "Compare what studies say about aspirin doses",
                "--mode",
                "deep",
                "--sections",
                "8",
                "--concurrency",
                "8",
                "--search-concurrency",
                "8",
                "--model",
                "openai:stub",
                "--base-url",
                model.base_url,
                "--search",
                "pubmed",
                "--search-base-url",
                f"pubmed={sources.base('pubmed')}",
                "--json",
                "--quiet",
                "--db",
                str(tmp_path / "r.sqlite"),
            ],
            cli_env,
        )
        log = list(sources.log)
    assert r.returncode == 0, r.stderr
    searched = {q["params"]["term"] for q in log if q["route"] == "esearch"}
    for s in sections:  # all eight sections searched PubMed
        assert any(term.startswith(s["key_question"]) for term in searched), (s, searched)
    times = [q["t"] for q in log]
    assert len(times) >= 16
    assert max_in_window(times, 1.0) <= 3  # NCBI's limit without a key, as the server saw it
    assert sources.served_429 == 0
    out = json.loads(r.stdout)
    assert out["sources"] and all(s["backend"] == "pubmed" for s in out["sources"])


def test_the_time_budget_reaches_the_backends_retry_waits(fake_model, sources):
    sources.fail("esearch", (429, 50))  # longer than what is left of the budget
    model, _ = fake_model(picker(plan=lambda tools: {"tasks": []}))
    events = []
    research(QUESTION, _ctx(model, sources, "pubmed", max_seconds=30), mode="iterative", on_event=events.append)
    failed = [e for e in events if e["type"] == "error" and e.get("tool") == "pubmed"]
    assert failed and "pubmed: HTTP 429 (gave up after 1 attempt" in failed[0]["cause"]
    assert "time budget" in failed[0]["cause"]
    assert [q["params"]["term"] for q in sources.requests("esearch")].count(QUESTION) == 1  # not retried
