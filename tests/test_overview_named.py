"""A broad question that names several things opens with an overview of each: the first one's opening
and closest sentences, then what every other named thing is, in its own source's words. Invented
entries."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.answer import overview_picks


def _concept(name: str) -> dict:
    return {"name": name, "query": name, "title": name, "phrase": name.lower(), "origin": "question"}


ROON = {
    "key": "a",
    "title": "Ida Roon",
    "snippet": "Ida Roon was an Osterland engineer who built tide mills. She patented a brass gear in 1881. "
    "Her mills ground grain for the towns of the coast. She taught at the Vellmark school.",
}
VARO = {
    "key": "b",
    "title": "Pell Varo",
    "snippet": "Pell Varo was an Osterland glassblower and inventor. He made lenses for lighthouses.",
}


def test_the_overview_says_what_each_named_thing_is():
    sim = similarity_for(embedder_for("local"))
    picks = overview_picks(
        "Tide mills and the work of Ida Roon and Pell Varo",
        [_concept("Ida Roon"), _concept("Pell Varo")],
        [ROON, VARO],
        lambda s: s["snippet"],
        sim,
    )
    assert picks[0].sentence.startswith("Ida Roon was an Osterland engineer")
    assert [p.source["key"] for p in picks].count("a") == 3
    assert picks[-1].sentence == "Pell Varo was an Osterland glassblower and inventor."
