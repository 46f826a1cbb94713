"""An MCP server that starts, lists its tools and never answers a tool call (for the time
budget): `search_archive(query)` waits ten minutes. `--hang-list` makes it hang when its tools
are listed instead."""

import sys
import time

from mcp.server.fastmcp import FastMCP

server = FastMCP("archive")


@server.tool()
def search_archive(query: str) -> str:
    """Search the archive by keywords."""
    time.sleep(600)  # blocks the server: no answer, not even to a cancellation
    return f"Archive note about {query}."


if __name__ == "__main__":
    if "--hang-list" in sys.argv:
        time.sleep(600)
    server.run()
