"""A deep run whose sections are runs on the LangGraph server (`section_execution: server`).

Two `langgraph dev` processes stand in for two workers of a deployment: the parent's, which
takes the deep run, and the sections', which `DEEPRESEARCH_SECTION_SERVER` points the parent
at (each takes runs from its own queue: enough to show the sections leave the parent's
process). The model is the local OpenAI stub; both processes call it over HTTP. A deep run
has 16 sections (3 where a test looks at one section's failure and budget, or at sign-in). The
tests of a file share its two processes (a module fixture: each process's first run loads the
encyclopedia, most of a short test's time); a test that kills one starts it again, and each test
reads only the runs it made. The tests are in three files (this one,
tests/test_sections_as_runs_resumed.py and tests/test_sections_as_runs_sign_in.py, helpers in
tests/sections_servers.py) so that the suite's workers share them out; in each file with shared
servers, the tests after the first run on servers that have run deep runs and answered their
state reads, as when these tests were in one file. A shared `langgraph dev` has answered state
reads, and from the first one on it no longer writes its checkpoints to disk (its in-memory
runtime registers a new copy of them for its 10-second saves and then drops it): a killed parent
started again there has no checkpoint of its fan-out and runs the deep graph again from its
input, under the same run id.

The writer cites sentences that lie past the snippets kept in state, so a citation is found
supported only against the full text its section's run read (copied into the parent's store).

- The same question researched with local sections and with sections as runs gives the same
  sections, citations and verdicts; the sections were runs of the sections' process (its
  threads hold the drafts the report has), and their events reached the parent's stream
  tagged with each section's index.
- The sections' process is killed while it researches and started again at its address, with
  its saved state or with none: the parent still finishes, with every section.
- (tests/test_sections_as_runs_resumed.py) A section whose run fails is a gap in the report; the
  parent's process is killed while its sections run and started again.
- (tests/test_sections_as_runs_sign_in.py) On a server with sign-in, the section runs are the
  owner's.
"""

from __future__ import annotations

import threading
import time

import pytest
from langgraph_sdk import get_client

from tests.deep_helpers import DEEP_QUESTION, TOPICS, deep_responder, section_calls
from tests.helpers import citations_resolve
from tests.sections_servers import (
    CONTEXT,
    SECTIONS,
    deep_run,
    drafts,
    go,
    kill,
    module_servers,
    restarted,
    saved,
    section_runs,
    start,
    summary,
)
from tests.stub_openai import StubOpenAI
from tests.test_resume_elsewhere import past_snippets, write_late


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """The two servers, for the module."""
    yield from module_servers(tmp_path_factory.mktemp("workers"))


@pytest.fixture()
def workers(servers):
    """The module's two servers, either started again if a test before this one left it stopped."""
    return restarted(servers)


def test_sections_as_runs_give_the_local_runs_report(workers):
    sections_url = workers["sections"].url
    before = go(section_runs(sections_url))
    with StubOpenAI(deep_responder(SECTIONS, write=write_late)) as stub:
        context = {**CONTEXT, "base_url": stub.base_url}
        local, _ = go(deep_run(workers["parent"].url, context))
        assert go(section_runs(sections_url, before)) == []  # local sections: nothing sent
        remote, events = go(deep_run(workers["parent"].url, {**context, "section_execution": "server"}))
        runs = go(section_runs(sections_url, before))
    written = go(drafts(sections_url, runs))

    assert [s[2] for s in summary(local)[0]] == ["done"] * SECTIONS
    # each section's loop ran to its end (the judge's call made), none stopped by its budget share
    assert {s["stopped_by"] for s in remote["section_results"]} <= {"complete", "max_iterations"}
    assert summary(remote) == summary(local)
    assert len(remote["citations"]) >= SECTIONS and all(c["verdict"] == "supported" for c in remote["citations"])
    assert citations_resolve(remote)
    # sentences past the snippets kept in state: checked against the texts the sections' runs read
    assert len(past_snippets(remote["citations"], remote["evidence"])) >= 1
    # every section was a run of the sections' server, which finished it and wrote its draft there
    assert len(runs) == SECTIONS and all(r["status"] == "success" for r in runs)
    assert sorted(written) == sorted(s["draft"] for s in remote["section_results"]) and all(written)
    # the events of each section's loop reached the parent's stream, tagged with its index
    inner = {
        e["section"]
        for e in events
        if e.get("section") is not None and e.get("type") not in ("section_started", "section_complete")
    }
    assert inner == set(range(SECTIONS)), events[:20]


@pytest.mark.parametrize("state", ["kept", "lost"])
def test_the_parent_finishes_when_the_sections_worker_is_killed_midway(workers, tmp_path, state):
    """`kept`: the worker starts again on its saved state (as a deployment's queue in PostgreSQL
    keeps the runs): it takes the section runs up again and the parent follows them. `lost`: it
    starts with nothing: the parent finds no section thread there and starts the section again."""
    release = threading.Event()
    base = deep_responder(SECTIONS, write=write_late)
    writing = threading.Semaphore(0)

    def respond(kind, prompt, n):
        if kind == "KnowledgeGapOutput" and not release.is_set():  # a section's loop, midway
            writing.release()
            release.wait(120)
        return base(kind, prompt, n)

    with StubOpenAI(respond) as stub:
        context = {**CONTEXT, "base_url": stub.base_url, "section_execution": "server"}
        url = workers["parent"].url
        earlier = go(section_runs(workers["sections"].url))

        async def begin():
            parent = get_client(url=url)
            tid = (await parent.threads.create())["thread_id"]
            run = await parent.runs.create(tid, "deep", input={"question": DEEP_QUESTION}, context=context)
            return tid, run["run_id"]

        tid, run_id = go(begin())
        assert writing.acquire(timeout=300), workers["parent"].log()  # a section is midway on the sections' worker
        before = section_calls(stub.requests, TOPICS[:SECTIONS])
        sections = workers["sections"]
        if state == "kept":  # its runs saved, as a deployment's queue keeps them
            saved(workers["folders"]["sections"], time.time())
        kill(sections)
        release.set()
        if state == "lost":
            workers["folders"]["sections"] = tmp_path / "sections-again"
        workers["sections"] = start(workers["folders"]["sections"], {}, port=sections.port, n_jobs=SECTIONS)

        async def finish():
            parent = get_client(url=url)
            await parent.runs.join(tid, run_id)
            return (await parent.runs.get(tid, run_id))["status"], (await parent.threads.get_state(tid))["values"]

        status, values = go(finish())
        rerun = go(section_runs(workers["sections"].url, earlier))  # the runs the started-again worker took
        after = section_calls(stub.requests, TOPICS[:SECTIONS])

    assert status == "success", workers["parent"].log()
    assert [s["status"] for s in values["section_results"]] == ["done"] * SECTIONS
    assert len(values["citations"]) >= SECTIONS and all(c["verdict"] == "supported" for c in values["citations"])
    assert citations_resolve(values)
    assert len(past_snippets(values["citations"], values["evidence"])) >= 1
    # the sections lost with the killed worker (its state went with it) were started again there
    assert len(rerun) == SECTIONS and all(r["status"] == "success" for r in rerun), rerun
    assert all(after[t] > before[t] for t in after), (before, after)
