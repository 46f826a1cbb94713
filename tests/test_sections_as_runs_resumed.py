"""A deep run with sections as runs, continued: a section whose run fails, and the parent's worker
killed midway (the servers, the stub and the helpers as in tests/test_sections_as_runs.py, which
says how; this file's tests share their own two processes, and the first test's runs leave them
with deep runs done and state reads answered before the parent is killed, as in one file).

- A section whose run fails is a gap in the report, as a local failing section: the other
  sections and their citations are the local run's; each section's run gets the budget share the
  parent computed for it.
- The parent's process is killed while its sections run and started again: it finds each
  section's thread again (even planning again from its input) and starts no section twice.
"""

from __future__ import annotations

import threading
import time

import pytest
from langgraph_sdk import get_client

from tests.deep_helpers import DEEP_QUESTION, TOPICS, deep_responder
from tests.helpers import citations_resolve
from tests.sections_servers import (
    CONTEXT,
    SECTIONS,
    deep_run,
    go,
    kill,
    module_servers,
    restarted,
    run_contexts,
    saved,
    section_runs,
    start_parent,
    summary,
)
from tests.stub_openai import StubOpenAI
from tests.test_resume_elsewhere import write_late


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """The two servers, for the module."""
    yield from module_servers(tmp_path_factory.mktemp("workers"))


@pytest.fixture()
def workers(servers):
    """The module's two servers, either started again if a test before this one left it stopped."""
    return restarted(servers)


FEW = 3  # sections of the deep run that looks at one section's failure and the budget shares


def test_a_failing_section_run_is_a_gap_and_each_section_run_gets_its_share(workers):
    """The stub refuses every call of one section's loop: its run fails on the sections' worker,
    the report has the gap a local failing section leaves, and the other sections, citations and
    verdicts are the local run's. Each section's run was given the budget share the parent
    announced for that section (its `section_started` event)."""
    title, question = TOPICS[1]
    base = deep_responder(FEW, write=write_late)

    def respond(kind, prompt, n):
        if f"{question} (in: " in prompt:  # that section's loop, wherever it runs
            return 400, {"error": {"message": "the stub refuses this section", "type": "invalid_request_error"}}
        return base(kind, prompt, n)

    sections_url = workers["sections"].url
    before = go(section_runs(sections_url))
    with StubOpenAI(respond) as stub:
        context = {**CONTEXT, "base_url": stub.base_url, "max_sections": FEW, "max_tokens": 8000 * FEW}
        local, _ = go(deep_run(workers["parent"].url, context))
        remote, events = go(deep_run(workers["parent"].url, {**context, "section_execution": "server"}))
    runs = go(section_runs(sections_url, before))
    given = go(run_contexts(sections_url, runs))

    status = {s["title"]: s for s in remote["section_results"]}
    assert status[title]["status"] == "failed" and "the stub refuses this section" in status[title]["reason"]
    assert [s["status"] for s in remote["section_results"]].count("done") == FEW - 1
    assert summary(remote) == summary(local)  # the same gap, the others' sections, citations and verdicts
    assert len(remote["citations"]) >= FEW - 1 and all(c["verdict"] == "supported" for c in remote["citations"])
    assert citations_resolve(remote)
    assert "could not be researched" in remote["report"] and f"1 of {FEW} sections failed" in remote["report"]
    # every section, the failing one too, was a run on the sections' worker, with its share
    assert len(runs) == FEW
    shares = {e["title"]: e["budget"] for e in events if e.get("type") == "section_started"}
    assert sorted(shares) == sorted(given) == sorted(t for t, _ in TOPICS[:FEW])
    for name, share in shares.items():
        assert given[name]["max_tokens"] == share["max_tokens"] < context["max_tokens"], (name, given[name], share)
        assert given[name]["max_seconds"] == share["max_seconds"] < context["max_seconds"]
        assert given[name]["mode"] == "iterative" and given[name]["section_execution"] == "local"


def test_a_resumed_parent_follows_its_sections_and_never_runs_them_again(workers):
    """The parent's worker is killed while its sections run on the other one, and started again
    on its saved state: the deep run is taken up again under its run id (on these shared servers
    from its input: the worker kept no checkpoint, see above), finds each section's thread by the
    id its run and section task give it, and follows the run there instead of starting one."""
    release = threading.Event()
    base = deep_responder(SECTIONS, write=write_late)
    midway = threading.Semaphore(0)

    def respond(kind, prompt, n):
        if kind == "KnowledgeGapOutput" and not release.is_set():
            midway.release()
            release.wait(120)
        return base(kind, prompt, n)

    with StubOpenAI(respond) as stub:
        context = {**CONTEXT, "base_url": stub.base_url, "section_execution": "server"}
        url = workers["parent"].url
        earlier = go(section_runs(workers["sections"].url))
        assert earlier  # servers that ran other tests' runs (and answered their state reads)

        async def begin():
            parent = get_client(url=url)
            tid = (await parent.threads.create())["thread_id"]
            run = await parent.runs.create(tid, "deep", input={"question": DEEP_QUESTION}, context=context)
            return tid, run["run_id"]

        tid, run_id = go(begin())
        for _ in range(SECTIONS):  # every section is midway on the sections' worker
            assert midway.acquire(timeout=300), workers["parent"].log()
        started = go(section_runs(workers["sections"].url, earlier))
        saved(workers["folders"]["parent"], time.time())  # the checkpoint of its fan-out, as PostgreSQL keeps it
        old = workers["parent"]
        kill(old)
        workers["parent"] = start_parent(workers["folders"]["parent"], workers["sections"], port=old.port)
        release.set()

        async def finish():
            parent = get_client(url=url)
            await parent.runs.join(tid, run_id)
            return (await parent.runs.get(tid, run_id))["status"], (await parent.threads.get_state(tid))["values"]

        status, values = go(finish())
        runs = go(section_runs(workers["sections"].url, earlier))

    assert len(started) == SECTIONS
    assert status == "success", workers["parent"].log()
    assert [s["status"] for s in values["section_results"]] == ["done"] * SECTIONS
    assert citations_resolve(values)
    # the same runs, each finished once: none started again
    assert sorted(r["run_id"] for r in runs) == sorted(r["run_id"] for r in started)
    assert all(r["status"] == "success" for r in runs)
