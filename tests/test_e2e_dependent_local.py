"""`deepresearch QUESTION --mode deep --outline dependent` offline: the embedded model, the
offline encyclopedia, an outline from the question's concepts whose effects build on
its causes."""

import json
import re
import subprocess
import sys

QUESTION = "What were the causes and effects of the French Revolution?"


def test_dependent_outline_offline(cli_env, tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "deepresearch.cli",
            QUESTION,
            "--mode",
            "deep",
            "--outline",
            "dependent",
            "--max-iterations",
            "1",
            "--json",
            "--db",
            str(tmp_path / "runs.sqlite"),
        ],
        env=cli_env,
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    sections = out["outline"]["sections"]
    # the two aspects the question names come first, each its own question; the effects build on
    # the causes, and the aspects drawn from the material stand on their own
    causes, effects = sections[0], sections[1]
    assert "causes" in causes["title"] and causes["depends_on"] == []
    assert "effects" in effects["title"] and effects["depends_on"] == [0]
    assert all(s["depends_on"] == [] for s in sections[2:])
    assert re.search(r"layers [0-9+]+ -> 2\b", r.stderr)
    assert re.search(r"section 2 started: .*effects.* \(builds on 1\)", r.stderr)
    assert r.stderr.index("section 1 researched") < r.stderr.index("section 2 started")
    assert {s["status"] for s in out["sections"]} == {"done"}
    assert "https://en.wikipedia.org/wiki/French_Revolution" in {s["url"] for s in out["sources"]}
