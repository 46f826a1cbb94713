"""The user's own notes through the reference MCP memory server (@modelcontextprotocol/server-memory
from npm, run by node): a question about them is answered from them, cited to the server, on the
embedded defaults beside the encyclopedia.

The notes share words with the encyclopedia ("bridges", "inspected"), which once won: the report
answered with Mimar Sinan's bridges. Three mechanisms make the difference, each tested here on
notes no evaluation set holds: a concept that names no encyclopedia article ("Project Heron") is
searched in every tool the question goes to, a knowledge graph's answer is read as the sentences it
holds (not as JSON), and each part of the question gets the sentence closest to it in meaning that
holds the kind of answer asked (a number; a name).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.helpers import cli

SERVER = (
    Path(__file__).resolve().parent / "artifacts" / "npm" / "node_modules" / "@modelcontextprotocol" / "server-memory"
)
NOTES = [
    {
        "type": "entity",
        "name": "Project Heron",
        "entityType": "project",
        "observations": [
            "Project Heron drones inspected 412 bridges in 2026",
            "Project Heron is led by the infrastructure team in Rotterdam",
        ],
    },
    {
        "type": "entity",
        "name": "Kestrel Survey",
        "entityType": "project",
        "observations": ["Kestrel Survey mapped 57 tunnels for the water board"],
    },
]


@pytest.fixture
def memory_config(tmp_path: Path) -> Path:
    node, script = shutil.which("node"), SERVER / "dist" / "index.js"
    if not node or not script.exists():
        pytest.fail("the MCP memory server is missing: 'make test' installs it with npm (make browser)", pytrace=False)
    notes = tmp_path / "memory.jsonl"
    notes.write_text("".join(json.dumps(n) + "\n" for n in NOTES), encoding="utf-8")
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "memory": {"command": node, "args": [str(script)], "env": {"MEMORY_FILE_PATH": str(notes)}}
                }
            }
        ),
        encoding="utf-8",
    )
    return config


def test_a_question_about_the_users_notes_is_answered_from_them(memory_config, cli_env):
    r = cli(
        [
            "How many bridges did Project Heron inspect, and who leads it?",
            "--mcp",
            str(memory_config),
            "--mode",
            "iterative",
            "--json",
        ],
        cli_env,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads(r.stdout)
    answer = result["report"].split("## Answer", 1)[1].split("\n## ", 1)[0]
    assert "412" in answer and "Rotterdam" in answer, answer
    assert "Not found" not in result["report"]
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", answer)}
    memory = [s for s in result["sources"] if s["url"].startswith("mcp://memory/")]
    assert memory and {int(s["id"]) for s in memory} >= cited, (cited, result["sources"])
    assert "Kestrel" not in result["report"]  # the other notes answer nothing asked
