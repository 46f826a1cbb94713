"""The embedded model is not asked whether the research is complete: the coverage check decides
(nodes/knowledge_gap.py). Reading ten sources' text took SmolLM2 most of a run's time, and its verdict
was noise beside the check."""

from __future__ import annotations

from types import SimpleNamespace

from deepresearch.config import Context
from nodes.knowledge_gap import knowledge_gap

SOURCE = {
    "id": 1,
    "key": "k1",
    "title": "Orla ferry",
    "url": "https://example.org/1",
    "snippet": "The Orla ferry is run by the harbour board of Tessa Marn.",
}
CONCEPT = {"name": "Orla ferry", "query": "Orla ferry", "title": "Orla ferry", "phrase": "orla ferry"}


def _judge(model: str, evidence: list[dict]) -> dict:
    state = {"question": "Who runs the Orla ferry?", "iteration": 1, "concepts": [CONCEPT], "evidence": evidence}
    return knowledge_gap(state, SimpleNamespace(context=Context(model=model)))


def test_with_every_concept_covered_the_embedded_model_is_not_asked():
    out = _judge("local", [SOURCE])
    assert out["stopped_by"] == "complete" and out["gaps"] == []
    assert out["usage"]["total_tokens"] == 0, out["usage"]


def test_a_concept_no_source_covers_is_still_a_gap():
    out = _judge("local", [])
    assert "stopped_by" not in out and out["gaps"][0] == "Orla ferry"
