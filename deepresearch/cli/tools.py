"""`deepresearch tools [--mcp CONFIG.json]`: the search tools a run can use.

Lists the built-in search backends and, with --mcp, every tool of every MCP server in the
config: a tool whose input is one required string is used as a search tool (`server/tool`
in `--search`-style runs with `--mcp`); the others are shown with the reason they are
skipped. Exit status: 0 listed, 1 a server could not be listed, 2 bad input.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from deepresearch.cli.common import EXIT_FAILED, EXIT_OK, UsageError, _Parser, _positive

if TYPE_CHECKING:
    from deepresearch.tools.mcp import MCPTool


def tools_parser():
    p = _Parser(prog="deepresearch tools", description="List the search tools a run can use.")
    p.add_argument("--mcp", metavar="CONFIG.json", help='MCP servers to list ({"mcpServers": {...}})')
    p.add_argument("--timeout", type=_positive(float), default=30.0, help="seconds each server may take (default 30)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def cmd_tools(argv: list[str]) -> int:
    from deepresearch.tools.registry import DESCRIPTIONS

    args = tools_parser().parse_args(argv)
    backends = [{"name": n, "description": d} for n, d in DESCRIPTIONS.items()]
    tools: list[MCPTool] = []
    failures: dict[str, str] = {}
    if args.mcp:
        from deepresearch.tools.mcp import MCPConfigError, list_tools, load_config

        try:
            servers = load_config(args.mcp)
        except MCPConfigError as e:
            raise UsageError(str(e)) from None
        tools, failures = list_tools(servers, args.timeout)
    if args.json:
        out = {
            "backends": backends,
            "mcp_tools": [
                {
                    "name": t.name,
                    "server": t.server,
                    "tool": t.tool,
                    "description": t.description,
                    "search": t.query_arg is not None,
                    **({"reason": t.reason} if t.reason else {}),
                }
                for t in tools
            ],
            "mcp_failures": failures,
        }
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        lines = ["Search backends (--search NAME, several comma-separated):"]
        lines += [f"  {b['name']:<15} {b['description']}" for b in backends]
        if args.mcp:
            lines += ["", f"MCP tools ({args.mcp}):"]
            width = max([len(t.name) for t in tools] + [10])
            for t in tools:
                what = f"search tool: {t.description}" if t.query_arg else f"skipped: {t.reason}"
                lines.append(f"  {t.name:<{width}}  {what}")
            lines += [f"  {server}: {cause}" for server, cause in failures.items()]
            if not tools and not failures:
                lines.append("  (no tools)")
        print("\n".join(lines))
    return EXIT_FAILED if failures else EXIT_OK
