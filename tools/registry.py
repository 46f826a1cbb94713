"""The tools a run can search with, their one-line descriptions, and the choice per gap.

The tools of a run are its `search` backends (in the order given; the first is the
primary) followed by the search tools of its MCP servers. The tool selector shows them
to the model as `- name: description` lines and applies `choose_tool` to what the model
wrote; when the model gives nothing usable, `rotation` sends each gap to the tools in
turn. `backend_for` gives execute_tools the backend behind a tool name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepresearch.choices.backends import ALIASES, DESCRIPTIONS
from deepresearch.choices.controls import docs_params, web_params
from deepresearch.events import emit, unsaid
from deepresearch.tools import get_search, split_specs, tool_name


@dataclass(frozen=True)
class Tool:
    name: str  # what tasks, events and sources carry: `pubmed`, `docs`, `notes/search`
    description: str
    spec: str | None = None  # the search spec (`docs:./notes`), None for an MCP tool


def _mcp_servers(ctx) -> dict[str, dict]:
    from deepresearch.tools.mcp import load_config

    return load_config(ctx.mcp_servers) if ctx.mcp_servers else {}


def _report_once(failures: dict[str, str]) -> None:
    """An `error` event per MCP server that could not be listed, once per run (thread)."""
    for server, cause in unsaid("unlisted", failures.items(), outside_runs=True):
        emit("error", node="tool_selector", tool=server, cause=cause)


def run_tools(ctx) -> list[Tool]:
    """The run's tools: its search backends, then its MCP servers' search tools. A server
    that cannot be listed is an `error` event and contributes no tool."""
    tools = [Tool(tool_name(s), DESCRIPTIONS.get(tool_name(s), "search"), s) for s in run_specs(ctx)]
    if ctx.mcp_servers:
        from deepresearch.tools.mcp import MCPConfigError, cached_tools

        try:
            servers = _mcp_servers(ctx)
        except MCPConfigError as e:
            _report_once({"mcp": str(e)})
            return tools
        listed, failures = cached_tools(servers, ctx.request_timeout)
        _report_once(failures)
        tools += [
            Tool(t.name, t.description or f"the {t.tool} tool of the {t.server} MCP server")
            for t in listed
            if t.query_arg
        ]
    return tools


def tools_prompt(tools: list[Tool]) -> str:
    """One line per tool, as the tool selector shows them to the model."""
    return "\n".join(f'- "{t.name}": {t.description}' for t in tools)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def choose_tool(choice, tools: list[Tool]) -> str | None:
    """The tool the model meant by `choice`, or None when it names none of the run's tools.
    Accepts case and punctuation variants (`PubMed`, `"clinicaltrials.gov"`), the spec
    (`docs:./notes`), common aliases (`wikipedia`, `web`) and, for an MCP tool, its bare
    name when only one server has it."""
    if not isinstance(choice, str) or not choice.strip() or not tools:
        return None
    names = [t.name for t in tools]
    raw = choice.strip().strip("\"'`").strip()
    if raw in names:
        return raw
    key = _norm(raw)
    by_norm = {_norm(n): n for n in names}
    by_norm.update({_norm(t.spec): t.name for t in tools if t.spec})
    if key in by_norm:
        return by_norm[key]
    if ALIASES.get(key) in names:
        return ALIASES[key]
    spec_head = _norm(raw.split(":", 1)[0])
    if spec_head in by_norm:
        return by_norm[spec_head]
    bare = [t.name for t in tools if "/" in t.name and _norm(t.name.split("/", 1)[1]) == key]
    if len(bare) == 1:
        return bare[0]
    for sep in ("_", "."):  # server_tool or server.tool
        joined = [n for n in names if "/" in n and _norm(n.replace("/", sep)) == key]
        if len(joined) == 1:
            return joined[0]
    return None


def assign(choice, tools: list[Tool]) -> str:
    """`choose_tool`, falling back to the primary tool (the first of the run's `search`)."""
    return choose_tool(choice, tools) or tools[0].name


def rotation(gaps: list[str], tools: list[Tool], turn: int) -> list[dict]:
    """Fallback tasks when the model gave nothing usable: each gap goes to the tools in turn.
    Round r sends gap i to tool (i + r + turn) mod n, so one iteration spreads the gaps over
    the tools, and later rounds (and iterations) try the remaining tools for each gap."""
    n = len(tools)
    return [
        {"gap": g, "tool": tools[(i + r + turn) % n].name, "query": g[:120]}
        for r in range(n)
        for i, g in enumerate(gaps)
    ]


def done_key(tool: str, query: str, primary: str, page: int = 0) -> str:
    """How a search is recorded in `queries_done`: the query alone for the primary tool
    (a one-backend run reads as before), `tool: query` for the others, so the same query
    may still go to another tool; a later page of its results (`page` 1, 2…: the results after
    the first `page` pages) adds its number, so that asking for it again is a new search."""
    key = query if tool == primary else f"{tool}: {query}"
    return f"{key} (page {page + 1})" if page else key


def run_specs(ctx) -> list[str]:
    """The run's search specs, in order (the encyclopedia when none is given)."""
    return split_specs(ctx.search) or ["wiki"]


def primary(ctx) -> str:
    return tool_name(run_specs(ctx)[0])


def backend_for(ctx, name: str):
    """The search backend behind the tool `name` of this run; ValueError when it has none."""
    for spec in run_specs(ctx):
        if tool_name(spec) == name:
            base = (ctx.search_base_urls or {}).get(name)
            if base is None and name == "tavily":
                base = ctx.search_base_url
            options = web_params(ctx) if name == "tavily" else docs_params(ctx) if name == "docs" else ()
            return get_search(
                spec,
                base_url=base,
                timeout=ctx.request_timeout,
                max_retries=ctx.max_retries,
                options=options,
                embeddings=ctx.embeddings,
                embeddings_base_url=ctx.embeddings_base_url,
            )
    if ctx.mcp_servers and "/" in name:
        from deepresearch.tools.mcp import MCPSearch, cached_tools

        servers = _mcp_servers(ctx)
        listed, _ = cached_tools(servers, ctx.request_timeout)
        for t in listed:
            if t.name == name and t.query_arg:
                return MCPSearch(t, servers[t.server], timeout=ctx.request_timeout)
    raise ValueError(f"no search tool {name!r} in this run")
