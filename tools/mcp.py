"""MCP tools as search tools, through `langchain-mcp-adapters`.

The config is the common one, read by tools.mcp_config (`load_config`, `public_config` and
`MCPConfigError` are importable from here too). Each server's tools are listed once per process
(a caller with a time budget waits no longer than its time left); a tool whose input is one
required string (a query) is a search tool, named `server/tool`; the others are listed with the
reason they are skipped.
Each search opens a session of its own (a stdio server is started for it and stopped
after), so nothing is left running between searches.

A server that fails to start, times out or answers with an error is reported as a cause
string (the caller emits it as an `error` event), never raised past the search. The
server's environment and headers never appear in a cause: their values are masked, and
a stdio server's stderr is captured (not passed to the terminal) and quoted only masked.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import os
import signal
import tempfile
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import cast

from deepresearch.tools.base import SearchError, SearchResult, time_left
from deepresearch.tools.mcp_config import MCPConfigError, load_config, mask, public_config  # noqa: F401 (re-exported)
from deepresearch.tools.mcp_results import to_results
from deepresearch.worker_threads import KeptThreads

COUNT_ARGS = ("max_results", "limit", "k", "top_k", "count", "num_results", "n")


# --- sessions ----------------------------------------------------------------------------


@asynccontextmanager
async def _session(conn: dict, errlog):
    """An initialized MCP ClientSession. A stdio server is started by the MCP SDK's client
    directly, so its stderr goes to `errlog` instead of the terminal (the adapters' own
    stdio helper offers no such choice); other transports go through the adapters."""
    if conn["transport"] == "stdio":
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=conn["command"], args=conn["args"], env=conn.get("env"), cwd=conn.get("cwd")
        )
        _reap_at_exit([conn["command"], *conn["args"]])
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session
    else:
        from langchain_mcp_adapters.sessions import Connection, create_session

        # `conn` is one of the adapters' connections (sse, streamable_http, websocket), as the config gave it
        async with create_session(cast(Connection, conn)) as session:
            await session.initialize()
            yield session


_started: set[tuple[str, ...]] = set()  # the command lines of the stdio servers this process started


def _reap_at_exit(argv: list[str]) -> None:
    """Stop, when this process exits, the stdio servers it started that are still running.
    A server stuck in a call outlives its search (the run moved on at its deadline; the session
    closes it a few seconds later): a CLI run that ends first must not leave it behind."""
    with _list_lock:
        if not _started:
            atexit.register(reap_servers)
        _started.add(tuple(argv))


def reap_servers() -> None:
    """Kill our child processes that are MCP stdio servers (the MCP SDK starts each as the
    leader of a new session, so its own children go with it). Linux's /proc; elsewhere a no-op."""
    me = os.getpid()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            if ppid != me or os.getpgid(pid) != pid:
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = tuple(a.decode("utf-8", "replace") for a in f.read().split(b"\0")[:-1])
            if argv in _started:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        except (OSError, ValueError, IndexError, ChildProcessError):
            continue


def _run(coro):
    """Run a coroutine from sync code (a node runs in a worker thread with no event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict = {}
    thread = threading.Thread(target=lambda: box.update(value=asyncio.run(coro)))
    thread.start()
    thread.join()
    return box["value"]


def _leaf(e: BaseException) -> BaseException:
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return e


def _cause(server: str, conn: dict, e: BaseException, errlog, timeout: float) -> str:
    e = _leaf(e)
    if isinstance(e, TimeoutError):
        why = f"did not answer within {timeout:.0f}s"
    else:
        text = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
        why = f"failed: {type(e).__name__}" + (f": {text}" if text else "")
    try:
        errlog.seek(0)
        tail = [line.strip() for line in errlog.read()[-4000:].splitlines() if line.strip()]
    except (OSError, ValueError):
        tail = []
    if tail:
        why += f" (its stderr ends: {tail[-1][:200]})"
    return mask(f"MCP server {server!r} {why}", conn)


# --- tools -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MCPTool:
    server: str
    tool: str
    description: str
    query_arg: str | None  # the one required string argument; None: not a search tool
    count_arg: str | None = None  # an optional integer argument taking the number of results
    reason: str | None = None  # why it is not a search tool

    @property
    def name(self) -> str:
        return f"{self.server}/{self.tool}"


def classify(server: str, name: str, description: str, schema: dict | None) -> MCPTool:
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties")
    if not isinstance(props, dict):
        props = {}
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    first_line = " ".join((description or "").strip().split("\n", 1)[0].split())[:200]

    def skipped(reason: str) -> MCPTool:
        return MCPTool(server, name, first_line, None, reason=reason)

    if len(required) != 1:
        return skipped(f"takes {len(required)} required arguments; a search tool takes one string (a query)")
    arg = required[0]
    if (props.get(arg) or {}).get("type") != "string":
        return skipped(f"its required argument {arg!r} is not a string")
    count = next((a for a in COUNT_ARGS if a in props and (props[a] or {}).get("type") == "integer"), None)
    return MCPTool(server, name, first_line, arg, count)


async def _list_one(server: str, conn: dict, timeout: float) -> tuple[list[MCPTool], str | None]:
    from langchain_mcp_adapters.tools import load_mcp_tools

    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            async with asyncio.timeout(timeout):
                async with _session(conn, errlog) as session:
                    tools = await load_mcp_tools(session, server_name=server)
        except Exception as e:  # noqa: BLE001 - any failure is the server's, reported as a cause
            return [], _cause(server, conn, e, errlog, timeout)
    return [
        classify(server, t.name, t.description, t.args_schema if isinstance(t.args_schema, dict) else None)
        for t in tools
    ], None


def list_tools(servers: dict[str, dict], timeout: float = 30.0) -> tuple[list[MCPTool], dict[str, str]]:
    """Every server's tools (all of them, search tools or not) and {server: cause} for the
    servers that could not be listed."""

    async def all_servers():
        return await asyncio.gather(*(_list_one(name, conn, timeout) for name, conn in servers.items()))

    tools: list[MCPTool] = []
    failures: dict[str, str] = {}
    for name, (found, cause) in zip(servers, _run(all_servers())):
        tools += found
        if cause:
            failures[name] = cause
    return tools, failures


# (config key, server) -> its listing, kept for the process once it is known for good (listed,
# or failed by itself: not cut short by a caller's time budget); listings under way, shared
_listed: dict[tuple[str, str], tuple[list[MCPTool], str | None]] = {}
_listing: dict[tuple[str, str], Future] = {}
_list_lock = threading.Lock()
LISTERS = KeptThreads("mcp-list")


def config_key(servers: dict[str, dict]) -> str:
    return hashlib.sha1(json.dumps(servers, sort_keys=True).encode()).hexdigest()


def _list_kept(key: tuple[str, str], server: str, conn: dict, timeout: float, run_for: float):
    found: tuple[list[MCPTool], str | None] = ([], f"MCP server {server!r} could not be listed")
    try:
        found = _run(_list_one(server, conn, run_for))
    finally:
        with _list_lock:
            if found[1] is None or run_for >= timeout:  # a listing cut by a time budget is asked again later
                _listed[key] = found
            _listing.pop(key, None)
    return found


def cached_tools(servers: dict[str, dict], timeout: float = 30.0) -> tuple[list[MCPTool], dict[str, str]]:
    """`list_tools`, once per process and server (parallel sections share one listing), waiting
    no longer than the time left of the caller's search deadline (tools.base.search_deadline):
    a server not listed by then is a failure of this call. The listing goes on in the background
    only as long (its session closes then) and is not kept: a later caller asks again."""
    left = time_left()
    run_for = timeout if left is None else max(0.0, min(timeout, left))
    key = config_key(servers)
    results: dict[str, tuple[list[MCPTool], str | None]] = {}
    pending: dict[str, Future] = {}
    with _list_lock:
        for name, conn in servers.items():
            if (key, name) in _listed:
                results[name] = _listed[(key, name)]
            elif run_for <= 0.05:
                results[name] = [], f"MCP server {name!r} was not listed: no time left in the run's budget"
            else:
                if (key, name) not in _listing:
                    _listing[(key, name)] = LISTERS.submit(_list_kept, (key, name), name, conn, timeout, run_for)
                pending[name] = _listing[(key, name)]
    end = time.monotonic() + run_for
    for name, future in pending.items():
        try:
            results[name] = future.result(timeout=None if left is None else max(0.0, end - time.monotonic()))
        except FutureTimeout:
            results[name] = [], f"MCP server {name!r} did not answer within the {run_for:.0f}s left in the run's budget"
    tools = [t for name in servers for t in results[name][0]]
    return tools, {name: why for name in servers if (why := results[name][1])}


class MCPSearch:
    """One MCP search tool behind the search protocol."""

    def __init__(self, tool: MCPTool, conn: dict, timeout: float = 60.0):
        if tool.query_arg is None:  # the registry makes none of a tool that is not a search tool
            raise ValueError(f"{tool.name} is not a search tool: {tool.reason}")
        self.query_arg: str = tool.query_arg
        self.tool = tool
        self.conn = conn
        self.timeout = timeout
        self.name = tool.name

    async def _call(self, args: dict, timeout: float, errlog):
        from langchain_mcp_adapters.tools import load_mcp_tools

        async with asyncio.timeout(timeout):
            async with _session(self.conn, errlog) as session:
                tools = await load_mcp_tools(session, server_name=self.tool.server, handle_tool_errors=False)
                lc_tool = next((t for t in tools if t.name == self.tool.tool), None)
                if lc_tool is None:
                    raise LookupError(f"the server no longer offers the tool {self.tool.tool!r}")
                return await lc_tool.ainvoke(
                    {"type": "tool_call", "id": "deepresearch", "name": lc_tool.name, "args": args}
                )

    def search(self, query: str, k: int) -> list[SearchResult]:
        left = time_left()
        timeout = self.timeout if left is None else min(self.timeout, left)
        if timeout <= 0.05:
            raise SearchError(f"{self.name}: no time left in the run's budget")
        args: dict[str, str | int] = {self.query_arg: query}
        if self.tool.count_arg:
            args[self.tool.count_arg] = k
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            try:
                message = _run(self._call(args, timeout, errlog))
            except Exception as e:  # noqa: BLE001 - reported as the search's failure
                leaf = _leaf(e)
                if type(leaf).__name__ in ("ToolException", "_MCPToolExecutionError"):
                    detail = " ".join(str(leaf).split())[:200]
                    raise SearchError(
                        mask(f"{self.name}: the tool answered with an error: {detail}", self.conn)
                    ) from None
                raise SearchError(_cause(self.tool.server, self.conn, e, errlog, timeout)) from None
        return to_results(self.tool.server, self.tool.tool, message.content, getattr(message, "artifact", None), k)
