"""The deep-graph helpers shared by the tests: the one deep responder, the one plan builder,
and a driver that answers outline reviews. (`citations_resolve` is re-exported from
tests/helpers.py, the one citation check.)"""

import re
import threading
import time

from langgraph.types import Command

from tests.fakes import first_sentence, sources_in
from tests.helpers import citations_resolve  # noqa: F401 - re-exported

TOPICS = [
    ("Design", "Who was the engineer behind the Eiffel Tower?"),
    ("Construction", "How was the Eiffel Tower built?"),
    ("Purpose", "Why was the Eiffel Tower built for the World's Fair?"),
    ("Legacy", "How is the Eiffel Tower seen today?"),
    ("Visitors", "How many people visit the Eiffel Tower each year?"),
    ("Bridges", "What bridges did Gustave Eiffel build?"),
    ("Ironwork", "What kind of iron went into the lattice of the tower?"),
    ("Paint", "How often is the tower repainted, and in which colours?"),
    ("Lifts", "Which companies supplied the lifts that climb the Eiffel Tower's four legs?"),
    ("Critics", "Which artists signed the protest against the tower in 1887?"),
    ("Wind", "How did the Eiffel Tower's builders reckon with the force of wind on its frame?"),
    ("Radio", "What part did the tower play in early wireless telegraphy?"),
    ("Lights", "When did the sparkling lights first dress the tower at night?"),
    ("Wartime", "What happened on the tower during the two world wars?"),
    ("Replicas", "Where have copies of the tower been raised in other cities?"),
    ("Upkeep", "Who looks after the tower now, and what does its upkeep cost?"),
]  # sixteen: a deep run of as many sections as tests/test_sections_as_runs*.py ask for
TITLE = "The Eiffel Tower"


def topics_of(sections) -> list[tuple[str, str]]:
    """`sections` as (title, key question) pairs: a count (the first of TOPICS) or the pairs."""
    return list(TOPICS[:sections]) if isinstance(sections, int) else [tuple(s) for s in sections]


def plan_for(sections=3, title=TITLE):
    """A ReportPlan: `sections` is a count (the first of TOPICS) or (title, question) pairs."""
    return {
        "title": title,
        "background": "A tower in Paris.",
        "sections": [{"title": t, "key_question": q} for t, q in topics_of(sections)],
    }


def deep_responder(
    sections=3, fail_on=None, slow=None, plans=None, complete=True, queries=None, polish=None, write=None
):
    """Plans `sections` sections (a count or (title, question) pairs; or the plans in `plans`,
    one per planner call), searches "Gustave Eiffel" (or `queries(n)`), judges complete (or
    never, with complete=False), synthesizes, judges every citation supported, and writes
    drafts citing every source it was shown.
    `fail_on`: a substring whose calls raise (the section with that key question fails).
    `slow`: {substring: seconds} extra latency for matching prompts.
    `polish`: a function (section text) -> reply for the proofreader's polish calls (by
    default they are answered with the text unchanged).
    `write`: a function (prompt, source ids shown) -> the draft, for the writer's calls."""
    state = {"plans": 0}
    lock = threading.Lock()

    def respond(kind, prompt, n):
        if fail_on and fail_on in prompt:
            return ConnectionError("provider unreachable")
        for key, secs in (slow or {}).items():
            if key in prompt:
                time.sleep(secs)
        if kind == "ReportPlan":
            with lock:
                i = state["plans"]
                state["plans"] += 1
            if plans:
                return plans[min(i, len(plans) - 1)]
            return plan_for(sections)
        if kind == "KnowledgeGapOutput":
            return {
                "research_complete": complete,
                "outstanding_gaps": [] if complete else ["more detail on the Eiffel Tower"],
            }
        if kind == "AgentSelectionPlan":
            q = queries(n) if queries else "Gustave Eiffel"
            return {"tasks": [{"gap": "more", "tool": "wiki", "query": q}]}
        if kind == "ConceptProposal":  # the question's reading: nothing beyond what the rules find
            return {"concepts": []}
        if kind == "Synthesis":
            return {"introduction": "This report looks at the tower [1].", "conclusion": "That is the story."}
        if kind == "SupportJudgement":
            return {"verdict": "supported", "span": ""}
        if is_polish(prompt):
            text = polished_text(prompt)
            return polish(text) if polish else text
        ids = sources_in(prompt)
        if "In two to four sentences" in prompt:
            return "Notes."
        if write:
            return write(prompt, ids)
        # a writer that states what its sources say: each one's first sentence, cited
        return " ".join(f"{first_sentence(prompt, i)} [{i}]." for i in ids[:3]) or "Nothing."

    return respond


def section_of(prompt: str, sections=TOPICS) -> str | None:
    """The title of the section whose key question the prompt carries."""
    return next((t for t, q in topics_of(sections) if q in prompt), None)


def is_polish(prompt: str) -> bool:
    """The proofreader's polish call (a copy edit of one section, no sources shown)."""
    return "Improve the flow" in prompt and "<source id=" not in prompt


def polished_text(prompt: str) -> str:
    """The section text a polish call asks to edit (after its instructions)."""
    at = prompt.find("Improve the flow")
    return prompt[prompt.find("\n\n", at) + 2 :]


def run_deep(graph, ctx, config, inp, answers=()):
    """Stream a deep run, answering each outline interrupt with the next answer."""
    answers = list(answers)
    events, requests = [], []
    while True:
        for mode, chunk in graph.stream(inp, config, context=ctx, stream_mode=["custom", "values"]):
            if mode == "custom":
                events.append(chunk)
        snap = graph.get_state(config)
        if not snap.interrupts:
            return snap.values, events, requests
        requests.append(snap.interrupts[0].value)
        if not answers:
            return snap.values, events, requests
        inp = Command(resume=answers.pop(0))


# --- deep runs through the CLI against the HTTP stub ------------------------------------------

DEEP_QUESTION = "Give an overview of the Eiffel Tower: its design, construction and purpose"


def deep_args(stub, db, *extra, question=DEEP_QUESTION) -> list[str]:
    """CLI arguments of a deep run on the stub with the checkpoint database `db`."""
    return [
        question,
        "--mode",
        "deep",
        "--model",
        "openai:stub",
        "--base-url",
        stub.base_url,
        "--max-iterations",
        "2",
        "--db",
        str(db),
        *map(str, extra),
    ]


def section_calls(requests, topics=TOPICS[:3]) -> dict[str, int]:
    """Model requests (from a stub's log) made while researching each section: its loop's
    prompts carry the section question "<key question> (in: <report title>)"."""
    import json

    counts = {t: 0 for t, _ in topics}
    for r in requests:
        text = json.dumps(r["body"].get("messages", []), ensure_ascii=False)
        for t, q in topics:
            if json.dumps(f"{q} (in: ", ensure_ascii=False)[1:-1] in text:
                counts[t] += 1
    return counts


def plan_requests(stub) -> list[dict]:
    """The planner's requests in a stub's log."""
    import json

    return [q for q in stub.requests if "ReportPlan" in json.dumps(q["body"])]


def kill_after_a_section_and_resume(env, db: str, thread_id: str):
    """A 3-section deep run (one section at a time, a slow model) killed with SIGKILL right
    after a section completed, then resumed: returns (done_before_kill, calls_before,
    calls_of_resume, resume_result, resume_process, stub)."""
    import json
    import signal

    from tests.helpers import Running, cli
    from tests.stub_openai import StubOpenAI

    with StubOpenAI(deep_responder(3), latency=0.15) as stub:
        run = Running(deep_args(stub, db, "--sections", "3", "--concurrency", "1", "--thread-id", thread_id), env)
        try:
            run.wait_for(rf"thread {thread_id} \(deep mode\)")
            run.wait_for(r"section \d+ done: ")
            status = run.kill()
        finally:
            run.close()
        assert status == -signal.SIGKILL
        done = set(re.findall(r"section \d+ done: (\w+)", run.text))
        before = section_calls(stub.requests)
        n_before = len(stub.requests)
        assert done and len(done) < 3, run.text

        r = cli(["resume", thread_id, "--db", db, "--json"], env)
        assert r.returncode == 0, r.stderr
        resumed = section_calls(stub.requests[n_before:])
        return done, before, resumed, json.loads(r.stdout), r, stub
