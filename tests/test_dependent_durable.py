"""A dependent deep run killed mid-layer (SIGKILL, in a CLI subprocess against the OpenAI stub)
resumes without researching its finished sections again; `--outline` on the command line."""

from __future__ import annotations

import json
import re
import signal
import time

from tests.dependent_helpers import dep_plan, own_question
from tests.fakes import sources_in
from tests.helpers import Running, citations_resolve, cli
from tests.stub_openai import StubOpenAI
from tests.test_durable import env  # noqa: F401 (env: a fixture)

QUESTION = "Give an overview of the Eiffel Tower: its design, construction and purpose"
TITLES = ["Design", "Construction", "Purpose", "Legacy"]
SLOW = 0.8  # seconds per model call of Purpose (the second layer), so the kill lands in it


def responder():
    def respond(kind, prompt, n):
        if own_question("Purpose") in prompt:
            time.sleep(SLOW)
        if kind == "ReportPlan":
            return dep_plan()
        if kind == "KnowledgeGapOutput":
            return {"research_complete": True, "outstanding_gaps": []}
        if kind == "AgentSelectionPlan":
            return {"tasks": [{"gap": "the engineer", "tool": "wiki", "query": "Gustave Eiffel"}]}
        if kind == "Synthesis":
            return {"introduction": "This report looks at the tower.", "conclusion": "That is the story."}
        if kind == "SupportJudgement":
            return {"verdict": "supported", "span": ""}
        if kind == "ConceptProposal":
            return {"concepts": []}
        if "In two to four sentences" in prompt:
            return "Notes on what was found."
        return " ".join(f"The tower is described in source {i} [{i}]." for i in sources_in(prompt)[:3]) or "Nothing."

    return respond


def research_calls(requests) -> dict[str, int]:
    """Model requests of each section's research (its own prompts, the writer's excepted)."""
    counts = dict.fromkeys(TITLES, 0)
    for r in requests:
        text = json.dumps(r["body"].get("messages", []), ensure_ascii=False)
        if "Write the section body" in text:
            continue
        for t in TITLES:
            if json.dumps(own_question(t), ensure_ascii=False)[1:-1] in text:
                counts[t] += 1
    return counts


def args(stub, db, *extra):
    return [
        QUESTION,
        "--mode",
        "deep",
        "--outline",
        "dependent",
        "--model",
        "openai:stub",
        "--base-url",
        stub.base_url,
        "--max-iterations",
        "2",
        "--db",
        str(db),
        *extra,
    ]


def test_killed_after_the_first_layer_resumes_without_researching_it_again(env, tmp_path):  # noqa: F811
    db = tmp_path / "runs.sqlite"
    with StubOpenAI(responder()) as stub:
        run = Running(args(stub, db, "--thread-id", "dep-1"), env)
        try:
            run.wait_for(r"layers 1\+2 -> 3 -> 4")  # the outline event shows the layers
            run.wait_for(r"section 3 started: Purpose \(builds on 1, 2\)")
            time.sleep(SLOW / 2)  # Purpose's first model call is under way
            status = run.kill()
        finally:
            run.close()
        assert status == -signal.SIGKILL
        log = "".join(run.lines)
        assert "section 1 researched: Design" in log and "section 2 researched: Construction" in log
        assert "section 3 researched" not in log and "section 4 started" not in log
        before = research_calls(stub.requests)
        assert before["Design"] > 0 and before["Construction"] > 0 and before["Legacy"] == 0
        n = len(stub.requests)

        r = cli(["resume", "dep-1", "--db", str(db), "--json"], env)
        assert r.returncode == 0, r.stderr
        assert "resuming thread dep-1 at " in r.stderr and "layer_research" in r.stderr
        after = research_calls(stub.requests[n:])
        assert after["Design"] == after["Construction"] == 0, (before, after)  # not researched again
        assert after["Purpose"] > 0 and after["Legacy"] > 0
        assert not [q for q in stub.requests[n:] if "ReportPlan" in json.dumps(q["body"])]  # nor planned again
        out = json.loads(r.stdout)
        assert [s["title"] for s in out["sections"]] == TITLES
        assert all(s["status"] == "done" for s in out["sections"])
        assert [h for h in re.findall(r"^## (.+)$", out["report"], re.M) if h in TITLES] == TITLES
        assert citations_resolve(out["report"], out["sources"])


def test_outline_option_is_checked(env):  # noqa: F811
    r = cli([QUESTION, "--outline", "sideways"], env)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--outline" in r.stderr and "sideways" in r.stderr
