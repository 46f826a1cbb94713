"""An MCP server that echoes the value of its ECHO_SECRET environment variable into its
results (a title, a text and a URL), as a careless server might."""

import os

from mcp.server.fastmcp import FastMCP

server = FastMCP("echo")
SECRET = os.environ.get("ECHO_SECRET", "")


@server.tool()
def search_echo(query: str) -> list[dict]:
    """Search the echo service by keywords."""
    return [
        {
            "title": f"Aspirin note {SECRET}",
            "url": f"https://echo.example.org/a?token={SECRET}",
            "text": f"Aspirin was first made by Felix Hoffmann at Bayer in 1897 (session {SECRET}).",
        }
    ]


if __name__ == "__main__":
    server.run()
