"""`deepresearch serve`: the LangGraph server in memory (`langgraph dev`) with this package's graphs,
its sign-in and its web page, from wherever the package is installed.

The server's configuration ships in the package (deepresearch/cli/langgraph.json: the repository's
langgraph.json with module paths instead of file paths), so a pip install serves the same graphs as
`make serve` in a clone. The server runs offline (no analytics, no version check, no tracing), in
the working folder (its state, .langgraph_api/, is kept there); keys come from the environment or
./.env. This process becomes the server (exec): Ctrl-C stops it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from importlib import resources

from deepresearch.cli.common import UsageError, _Parser

OFFLINE_ENV = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true", "LANGSMITH_TRACING": "false"}
SERVE_MISSING = "the server is not installed: it needs the 'serve' extra (pip install 'deepresearch[serve]')"


def serve_parser() -> _Parser:
    p = _Parser(
        prog="deepresearch serve",
        description="Serve the graphs (iterative, deep), the API and the web page (/ui/) with the "
        "LangGraph server, in memory.",
    )
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=2024, help="the port (default 2024)")
    return p


def config_path() -> str:
    """The packaged server configuration, as a file (the package is installed as files)."""
    return str(resources.files("deepresearch.cli").joinpath("langgraph.json"))


def server_command(host: str, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "langgraph_cli",
        "dev",
        "--config",
        config_path(),
        "--host",
        host,
        "--port",
        str(port),
        "--no-browser",
        "--no-reload",  # an installed package does not change under the server
    ]


def cmd_serve(argv: list[str]) -> int:
    args = serve_parser().parse_args(argv)
    if not 0 < args.port < 65536:
        raise UsageError(f"--port must be from 1 to 65535, not {args.port}")
    if any(importlib.util.find_spec(m) is None for m in ("langgraph_cli", "langgraph_api")):
        raise UsageError(SERVE_MISSING)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"deepresearch: serving the graphs and the page at http://{host}:{args.port}/ui/", file=sys.stderr)
    sys.stderr.flush()
    sys.stdout.flush()
    env = {**OFFLINE_ENV, **os.environ}  # offline unless the environment says otherwise
    command = server_command(args.host, args.port)
    os.execve(command[0], command, env)
    return 0  # not reached: this process is the server now
