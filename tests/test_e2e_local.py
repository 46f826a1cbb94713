"""End to end with the real embedded model (SmolLM2 via llama.cpp) and the offline encyclopedia."""

import json
import re

from tests.helpers import QUESTION, citations_resolve, cli


def test_iterative_offline_run_cites_the_eiffel_tower_article(cli_env, tmp_path):
    r = cli([QUESTION, "--mode", "iterative", "--json", "--db", str(tmp_path / "runs.sqlite")], cli_env, timeout=600)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    titles = {s["title"] for s in out["sources"]}
    assert "Eiffel Tower" in titles
    assert len({s["url"] for s in out["sources"]}) >= 2
    assert citations_resolve(out)
    # coverage decides when the research is complete (the tiny model is not asked); the extractive
    # writer quotes the sources: every citation supported
    assert out["usage"]["llm_calls"] == 0 and out["usage"]["total_tokens"] == 0
    # every citation was checked: one verdict per [n] in the report body
    body = out["report"].split("## Sources")[0]
    assert out["citations"] and len(out["citations"]) == len(re.findall(r"\[\d+\]", body))
    assert all(c["verdict"] == "supported" for c in out["citations"])
    assert out["concepts"][0]["title"] == "Eiffel Tower" and out["stopped_by"] == "complete"
