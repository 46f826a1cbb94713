"""Two `langgraph dev` processes as two workers of a deployment, for the tests of a deep run whose
sections are runs on the server (tests/test_sections_as_runs*.py; the first one says how).
The tests are in several files so that `--dist loadfile` spreads them over the workers; each file
with shared servers makes its own pair (`module_servers`)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from tests.deep_helpers import DEEP_QUESTION
from tests.dev_server import DevServer, DevServerError

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


def module_servers(root: Path) -> Iterator[dict]:
    """The two servers, for a module's fixture (stopped at its end)."""
    servers = pair(root)
    yield servers
    for name in ("parent", "sections"):
        servers[name].stop()


def restarted(servers: dict) -> dict:
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
