"""A deep run whose sections are runs on the LangGraph server (`section_execution: server`).

Two `langgraph dev` processes stand in for two workers of a deployment: the parent's, which
takes the deep run, and the sections', which `DEEPRESEARCH_SECTION_SERVER` points the parent
at (each takes runs from its own queue: enough to show the sections leave the parent's
process). The model is the local OpenAI stub; both processes call it over HTTP. A deep run
has 16 sections (3 where a test looks at one section's failure and budget). The tests share the
two processes (a module fixture: each process's first run loads the encyclopedia, most of a
short test's time); a test that kills one starts it again, and each test reads only the runs it
made. A shared `langgraph dev` has answered state reads, and from the first one on it no longer
writes its checkpoints to disk (its in-memory runtime registers a new copy of them for its
10-second saves and then drops it): a killed parent started again there has no checkpoint of
its fan-out and runs the deep graph again from its input, under the same run id.

The writer cites sentences that lie past the snippets kept in state, so a citation is found
supported only against the full text its section's run read (copied into the parent's store).

- The same question researched with local sections and with sections as runs gives the same
  sections, citations and verdicts; the sections were runs of the sections' process (its
  threads hold the drafts the report has), and their events reached the parent's stream
  tagged with each section's index.
- On a server with sign-in, the section runs are the owner's: hers to see, nobody else's, and
  no token of hers (nor the deployment's key) is kept in any thread.
- The sections' process is killed while it researches and started again at its address, with
  its saved state or with none: the parent still finishes, with every section.
- The parent's process is killed while its sections run and started again: it finds each
  section's thread again (even planning again from its input) and starts no section twice.
- A section whose run fails is a gap in the report, as a local failing section: the other
  sections and their citations are the local run's; each section's run gets the budget share the
  parent computed for it.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import jwt
import pytest
from langgraph_sdk import get_client

from tests.deep_helpers import DEEP_QUESTION, TOPICS, deep_responder, section_calls
from tests.dev_server import DevServer, DevServerError
from tests.helpers import citations_resolve, cli
from tests.stub_openai import StubOpenAI
from tests.test_resume_elsewhere import past_snippets, write_late

FAKE_KEY = "sk-test-sections-as-runs-0123456789"
SECTIONS = 16
CONTEXT = {
    "model": "openai:stub",
    "max_iterations": 2,
    "max_sections": SECTIONS,
    "max_seconds": 600,
    "max_tokens": 8000 * SECTIONS,  # a share that pays for a whole loop of each section
}


def start(folder: Path, env: dict, port: int | None = None, n_jobs: int = 1) -> DevServer:
    folder.mkdir(exist_ok=True)
    server = DevServer(folder, {"OPENAI_API_KEY": FAKE_KEY, **env}, n_jobs=n_jobs, port=port)
    try:
        return server.wait_ready()
    except DevServerError as e:
        pytest.fail(str(e))


def saved(folder: Path, since: float) -> None:
    """Wait until the `langgraph dev` serving from `folder` has saved its state twice after
    `since` (it writes .langgraph_api/ every 10 s; the second write began after `since`), so a
    kill loses nothing from before then, as with a deployment's PostgreSQL."""
    deadline = time.monotonic() + 90
    writes: set[float] = set()
    while len(writes) < 2:
        assert time.monotonic() < deadline, f"{folder} was not saved"
        times = [f.stat().st_mtime for f in (folder / ".langgraph_api").glob("*.pckl")]
        writes |= {t for t in times if t > since}
        time.sleep(0.2)  # polls for the server's saves, settles no race


def kill(server: DevServer) -> None:
    """As a worker dies: SIGKILL to its process group, nothing saved."""
    os.killpg(server.proc.pid, signal.SIGKILL)
    server.proc.wait(timeout=30)


def start_parent(folder: Path, sections: DevServer, port: int | None = None) -> DevServer:
    return start(folder, {"DEEPRESEARCH_SECTION_SERVER": sections.url}, port=port, n_jobs=2)


def pair(root: Path) -> dict:
    """The parent's server and the sections' server (the parent sending sections to the other);
    `folders` holds the folder each one's state is kept in."""
    sections = start(root / "sections", {}, n_jobs=SECTIONS)
    parent = start_parent(root / "parent", sections)
    servers = {
        "parent": parent,
        "sections": sections,
        "folders": {"parent": root / "parent", "sections": root / "sections"},
    }
    return servers


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """The two servers, for the module."""
    servers = pair(tmp_path_factory.mktemp("workers"))
    yield servers
    for name in ("parent", "sections"):
        servers[name].stop()


@pytest.fixture()
def workers(servers):
    """The module's two servers, either started again (at its address, on its state) if a test
    before this one left it stopped."""
    for name in ("sections", "parent"):
        server = servers[name]
        if server.proc.poll() is not None:
            folder = servers["folders"][name]
            if name == "sections":
                servers[name] = start(folder, {}, port=server.port, n_jobs=SECTIONS)
            else:
                servers[name] = start_parent(folder, servers["sections"], port=server.port)
    return servers


def go(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=480))


async def deep_run(url: str, context: dict) -> tuple[dict, list[dict]]:
    """The deep run's output and its progress events."""
    client = get_client(url=url)
    tid = (await client.threads.create())["thread_id"]
    events = []
    async for part in client.runs.stream(
        tid, "deep", input={"question": DEEP_QUESTION}, context=context, stream_mode="custom"
    ):
        if part.event == "custom":
            events.append(part.data)
    return (await client.threads.get_state(tid))["values"], events


async def section_runs(url: str, since: Sequence[dict] = ()) -> list[dict]:
    """The runs a server holds, but those in `since` (a list it gave before)."""
    client = get_client(url=url)
    threads = await client.threads.search(limit=1000)
    old = {r["run_id"] for r in since}
    return [run for t in threads for run in await client.runs.list(t["thread_id"]) if run["run_id"] not in old]


async def drafts(url: str, runs: list[dict]) -> list[str]:
    """The drafts the threads of these runs hold on their server."""
    client = get_client(url=url)
    return [(await client.threads.get_state(r["thread_id"]))["values"].get("draft", "") for r in runs]


def summary(values: dict) -> tuple:
    sections = [
        (s["index"], s["title"], s["status"], s["stopped_by"])
        for s in sorted(values["section_results"], key=lambda s: s["index"])
    ]
    citations = sorted((c["sentence"], c["source_id"], c["verdict"], c["score"]) for c in values["citations"])
    return sections, citations


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


FEW = 3  # sections of the deep run that looks at one section's failure and the budget shares


async def run_contexts(url: str, runs: list[dict]) -> dict[str, dict]:
    """The context each of these runs was given, by the section it researched."""
    client = get_client(url=url)
    out = {}
    for run in runs:
        (full,) = [
            r
            for r in await client.runs.list(run["thread_id"], select=["run_id", "kwargs"])
            if r["run_id"] == run["run_id"]
        ]
        out[full["kwargs"]["input"]["section"]] = full["kwargs"]["context"]
    return out


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


SECTION_KEY = "k" * 16 + "the-deployments-own-section-key"


def test_section_runs_are_the_owners_on_a_server_with_sign_in(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("DEEPRESEARCH_")}
    env.update(HOME=str(tmp_path), DEEPRESEARCH_TOKENS_FILE=str(tmp_path / "tokens.json"))
    creds = {}
    for name in ("alice", "bob"):
        r = cli(["users", "add", name], env)
        assert r.returncode == 0, r.stderr
        creds[name] = r.stdout.strip()
    signin = {
        "DEEPRESEARCH_AUTH": "tokens",
        "DEEPRESEARCH_TOKENS_FILE": env["DEEPRESEARCH_TOKENS_FILE"],
        "DEEPRESEARCH_SECTION_KEY": SECTION_KEY,
    }
    servers = []
    try:
        sections = start(tmp_path / "sections", signin, n_jobs=SECTIONS)
        servers.append(sections)
        parent = start(tmp_path / "parent", {**signin, "DEEPRESEARCH_SECTION_SERVER": sections.url}, n_jobs=2)
        servers.append(parent)

        def as_user(url: str, who: str | None):
            return get_client(url=url, headers={"Authorization": f"Bearer {creds[who]}"} if who else {})

        with StubOpenAI(deep_responder(SECTIONS, write=write_late)) as stub:
            context = {**CONTEXT, "base_url": stub.base_url, "section_execution": "server"}

            async def alices_run():
                client = as_user(parent.url, "alice")
                tid = (await client.threads.create())["thread_id"]
                await client.runs.wait(tid, "deep", input={"question": DEEP_QUESTION}, context=context)
                history = await client.threads.get_history(tid, limit=100)
                return (await client.threads.get_state(tid))["values"], history

            values, history = go(alices_run())

        async def seen_by(who: str | None) -> list[dict]:
            client = as_user(sections.url, who)
            threads = await client.threads.search(limit=100)
            return [{**t, "states": [await client.threads.get_state(t["thread_id"])]} for t in threads]

        alices, bobs = go(seen_by("alice")), go(seen_by("bob"))
        with pytest.raises(httpx.HTTPStatusError) as anonymous:
            go(seen_by(None))
        now = int(time.time())  # a section token signed with another key names nobody
        forged = jwt.encode(
            {"sub": "alice", "aud": "deepresearch-section-run", "iss": "deepresearch", "iat": now, "exp": now + 600},
            "another-key-of-at-least-32-characters",
            algorithm="HS256",
        )
        forged_status = httpx.post(
            f"{sections.url}/threads/search", json={}, headers={"Authorization": f"Bearer {forged}"}, timeout=30
        ).status_code
    finally:
        for server in servers:
            server.stop()

    assert [s["status"] for s in values["section_results"]] == ["done"] * SECTIONS, values["section_results"][0][
        "reason"
    ]
    assert citations_resolve(values) and all(c["verdict"] == "supported" for c in values["citations"])
    assert len(past_snippets(values["citations"], values["evidence"])) >= 1  # the texts, read as hers
    assert len(alices) == SECTIONS and all(t["metadata"]["owner"] == "alice" for t in alices)
    assert bobs == [] and anonymous.value.response.status_code == 401 and forged_status == 401
    kept = json.dumps([values, history, alices], default=str)
    assert creds["alice"] not in kept and SECTION_KEY not in kept and "eyJ" not in kept
