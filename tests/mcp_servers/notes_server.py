"""An MCP server over stdio for the tests, written with the `mcp` package's server API.

Tools: `search_notes(query, max_results)` (records with and without a URL),
`plain_note(query)` (plain text), `failing_lookup(query)` (raises, quoting its token) and
`add(a, b)` (not a search tool). `--http PORT` serves streamable HTTP instead of stdio.
It prints its NOTES_TOKEN to stderr at start, as a
careless server might: the client must keep that out of its own output and events.
"""

import os
import sys

from mcp.server.fastmcp import FastMCP

server = FastMCP("notes")
TOKEN = os.environ.get("NOTES_TOKEN", "")
NOTES = [
    {
        "title": "Felix Hoffmann and aspirin",
        "url": "https://notes.example.org/hoffmann",
        "text": "Felix Hoffmann, a chemist at Bayer, made acetylsalicylic acid in a stable form in 1897.",
    },
    {
        "title": "Lab notebook, 12 March",
        "text": "Aspirin trial notes: the low-dose arm had fewer first heart attacks than placebo.",
    },
]


@server.tool()
def search_notes(query: str, max_results: int = 5) -> list[dict]:
    """Search my research notes by keywords.

    Returns the matching notes."""
    words = [w for w in query.lower().split() if len(w) > 2]
    hits = [n for n in NOTES if any(w in (n["title"] + " " + n["text"]).lower() for w in words)]
    return hits[:max_results]


@server.tool()
def plain_note(query: str) -> str:
    """Write a short plain-text note about a topic."""
    return f"Note about {query}\nNo link here, only text about {query}."


@server.tool()
def failing_lookup(query: str) -> str:
    """Look a term up in a service that is down."""
    raise RuntimeError(f"lookup service down (token {TOKEN})")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    print(f"notes server starting with token {TOKEN}", file=sys.stderr, flush=True)
    if "--http" in sys.argv:  # streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio
        server.settings.host = "127.0.0.1"
        server.settings.port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http")
    else:
        server.run()
