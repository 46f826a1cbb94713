"""A deep run with sections as runs whose sections' worker dies midway (the servers and the stub
as in tests/test_sections_as_runs.py, helpers in tests/sections_servers.py; this file's tests
share their own two processes).

- The sections' process is killed while it researches and started again at its address, with
  its saved state or with none: the parent still finishes, with every section.
"""

from __future__ import annotations

import threading
import time

import pytest
from langgraph_sdk import get_client

from tests.deep_helpers import DEEP_QUESTION, TOPICS, deep_responder, section_calls
from tests.helpers import citations_resolve
from tests.sections_servers import CONTEXT, SECTIONS, go, kill, module_servers, restarted, saved, section_runs, start
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
