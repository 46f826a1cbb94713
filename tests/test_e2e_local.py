"""End to end with the real embedded model (SmolLM2 via llama.cpp) and the offline encyclopedia."""

import json
import re
import subprocess
import sys

QUESTION = "Who designed the Eiffel Tower, and why was it built?"


def test_iterative_offline_run_cites_the_eiffel_tower_article(cli_env, tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "deepresearch.cli", QUESTION, "--mode", "iterative", "--json",
         "--db", str(tmp_path / "runs.sqlite")],
        env=cli_env, capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    titles = {s["title"] for s in out["sources"]}
    assert "Eiffel Tower" in titles
    assert len({s["url"] for s in out["sources"]}) >= 2
    body = out["report"].split("## Sources")[0]
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    assert cited == {s["id"] for s in out["sources"]}
    assert out["usage"]["llm_calls"] >= 3 and out["usage"]["total_tokens"] > 0
    assert all(c["verdict"] in ("supported", "partial", "unsupported") for c in out["citations"])
