"""An aspect's name and sources, on invented entries: a group whose shared words all name other
aspects is named by its own words (never by a used word that is an article's title alone); a name
that is a title of the corpus's (not only of the material's) takes one more word unless the question
names that article (the outline reads the backend's title index); a name's word pairs never run
across a comma; and a section whose other source's sentence only points back ("These ...") takes
another source's sentence instead, one that reads by itself."""

from __future__ import annotations

import re

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.aspect_report import compose
from deepresearch.research.aspects import Sentence, name_groups
from deepresearch.research.explore import aspect_outline
from deepresearch.research.terms import terms, title_alone
from deepresearch.understanding.linking import Linker
from tests.test_aspect_outline import Search, _subject

QUESTION = "Tell me about Kessport."


def sim():
    return similarity_for(embedder_for("local"))


def test_a_group_whose_shared_words_name_other_aspects_is_named_by_its_own_words_not_a_title():
    sentences = [
        Sentence("The harbour of Kessport has tall cranes along the quay.", "Kessport", 0),
        Sentence("Ships in the harbour are unloaded by cranes at night.", "Harbour", 0),
        Sentence("A harbour needs cranes, tugs and deep water.", "Tugboat", 0),
        # shares only "harbour" (the first group's word and an article's title) and nothing else
        Sentence("Old herring boats still moor in the harbour every winter.", "Herring", 0),
        Sentence("The harbour froze solid during the long war with Vell.", "Harbour", 1),
    ]
    titles = ["Kessport", "Harbour", "Tugboat", "Herring"]
    first, second = name_groups([[0, 1, 2], [3, 4]], sentences, QUESTION, "Kessport", titles)
    assert "harbour" in first.name.lower()
    assert second.name.lower() != "harbour", second.name  # the article's title alone
    assert "harbour" not in second.name.lower() and second.terms  # no word another aspect's name has
    said = set(re.findall(r"\w+", (sentences[3].text + " " + sentences[4].text).lower()))
    assert set(re.findall(r"\w+", second.name.lower())) - {"and"} <= said, second.name  # its own words


LIGHT = [
    Sentence("The lighthouse on the cape guided ships past the reef.", "Cape Orn", 0),
    Sentence("Its keeper lit the lighthouse lamp with whale oil.", "Orn keepers", 0),
]


def test_a_name_that_is_a_title_of_the_corpus_takes_one_more_word_unless_the_question_names_it():
    index = Linker(["Lighthouse", "Cape Orn", "Orn keepers", "Whale oil"])
    # the material's articles do not hold "Lighthouse": the corpus's title index does
    (alone,) = name_groups([[0, 1]], LIGHT, QUESTION, "Kessport", ["Cape Orn", "Orn keepers"])
    assert alone.name == "Lighthouse"
    (material,) = name_groups([[0, 1]], LIGHT, QUESTION, "Kessport", ["Cape Orn", "Lighthouse (building)"])
    assert material.name.lower().startswith("lighthouse and "), material.name  # a title of the material's
    (named,) = name_groups(
        [[0, 1]], LIGHT, QUESTION, "Kessport", ["Cape Orn", "Orn keepers"], titled=index.exact_titles
    )
    assert named.name.lower().startswith("lighthouse and "), named.name
    assert len(named.terms) == 2
    # a question that names the article may have a section of that name
    asked = "What is the history of the lighthouse of Kessport?"
    (kept,) = name_groups([[0, 1]], LIGHT, asked, "Kessport", ["Cape Orn", "Orn keepers"], titled=index.exact_titles)
    assert kept.name == "Lighthouse"
    # a plural name and a title's qualifier are the same article
    assert title_alone("Lighthouses", QUESTION, ["Lighthouse (building)"])
    assert not title_alone("Lighthouses and keepers", QUESTION, ["Lighthouse (building)"])


# a cape whose articles say "lighthouse" in several sentences; the corpus's "Lighthouse" article shares
# no word with the question or the cape's opening, so it is no article of the outline's material
CAPE = {
    "Cape Orn": "Cape Orn (Headland). Cape Orn is a rocky headland at the western end of Osterland. "
    "Storms from the ocean break on its cliffs for most of the year. "
    "The old lighthouse on the cape was built in 1820 by the harbour board of Kessport. "
    "Seals breed on the rocks below the cliffs in spring.",
    "Orn reef": "Orn reef (Reef). Orn reef is a line of sunken rocks off Cape Orn. "
    "Many ships were wrecked on the reef before the lighthouse was lit. "
    "Divers still find anchors and cannons among the rocks of the reef.",
    "Orn keepers": "Orn keepers (Family). The Orn keepers were a family who kept the lamp at Cape Orn. "
    "Three generations of the family lived in the lighthouse and trimmed its wick every night. "
    "The last keeper left the cape in 1961 when the lamp was made automatic.",
    "Osterland seals": "Osterland seals (Animal). Grey seals breed on the cliffs and rocks of western Osterland. "
    "Their pups are born white in spring and swim within weeks. "
    "Fishermen once hunted the seals for their oil and fur.",
    "Lighthouse": "Lighthouse (Building). A tall tower with a bright lamp warns sailors of danger at night. "
    "Fresnel lenses focus its beam.",
}


def test_the_outline_names_no_section_after_a_title_of_the_backend_outside_its_material():
    sections = aspect_outline("Tell me about Cape Orn.", _subject("Cape Orn"), Search(CAPE), set(), 4, sim())
    material = {t for s in sections for t, _pos in s["aspect"]["members"]}
    assert "Lighthouse" not in material
    names = [s["title"] for s in sections]
    assert any(n.lower().startswith("lighthouse") for n in names), names  # the aspect is there, named more fully
    assert not {n.lower() for n in names} & {t.lower() for t in CAPE}, names


def test_a_names_word_pairs_do_not_run_across_a_comma():
    keys = [k for k, _w in terms("Records kept by handwriting, phonographic cylinders and tape.", frozenset())]
    assert "phonograph cylind" in keys or any(k.startswith("phonograph ") for k in keys), keys
    assert not any(k.startswith("handwrit ") for k in keys), keys


SEA = {
    "Kessport": "Kessport (City). Kessport is a port city on the southern coast of Osterland. "
    "Its harbour ships wine and fruit to the northern towns. "
    "The city is the seat of the parliament of Osterland. "
    "Fishing boats land herring and cod at the old quay every morning.",
    "Herring": "Herring (Fish). Herring are small silver fish that swim in large shoals. "
    "These shoals are caught by fishermen of the southern coast with drift nets in autumn. "
    "These catches fed the coastal towns through the long winter. "
    "These smoked fish are a common dish of Osterland.",
}


def test_a_section_whose_other_sources_sentence_only_points_back_takes_another_of_its_sentences():
    evidence = [
        {"id": i, "key": f"k{i}", "title": t, "url": f"https://example.org/{i}", "text": x}
        for i, (t, x) in enumerate(SEA.items(), 1)
    ]
    plan = {
        "title": QUESTION,
        "sections": [
            {  # Herring's sentences here say "These catches", "These smoked fish": without the one before, none
                "title": "Catches",
                "key_question": "Catches?",
                "aspect": {
                    "terms": ["catches"],
                    "subject": "Kessport",
                    "members": [["Kessport", 3], ["Herring", 2], ["Herring", 3]],
                },
            },
            {
                "title": "Fish and shoals",
                "key_question": "Fish?",
                "aspect": {
                    "terms": ["fish"],
                    "subject": "Kessport",
                    "members": [["Herring", 0], ["Herring", 1], ["Kessport", 0], ["Kessport", 1], ["Kessport", 2]],
                },
            },
        ],
    }
    # the other section's closest Herring sentence ("These shoals are caught ...") reads only after its
    # sentence before: the one taken is another
    written, _ = compose(plan, evidence, lambda s: s["text"], sim())
    catches = written[0]
    assert catches is not None and "These" not in catches.text
    assert set(re.findall(r"\[(\d+)\]", catches.text)) == {"1", "2"}, catches.text  # both sources, not one


def test_a_group_with_no_shared_word_is_named_by_its_rare_words_closest_to_what_it_says_not_the_rarest():
    import numpy as np

    from deepresearch.research.aspects import _unit, meaning

    sentences = [
        Sentence("Ships unload grain at the harbour of Velt every week.", "Velt", 0),
        Sentence("The harbour of Velt shelters the fishing fleet in winter.", "Quay", 0),
        Sentence("Zarquon's basin holds the deepest impact scar on the moon.", "Moon", 0),
        Sentence("Old lava plains cover the southern half of the moon.", "Lava", 0),
    ]
    # a crater's own name is the rarest word of the group, and says least of what its sentences are about
    rare = {"zarquon": 9.0, "scar": 5.5, "lava": 5.0, "basin": 4.0, "impact": 4.0, "plain": 3.0, "deepest": 3.5}
    embed = sim()
    raw = meaning(sentences, embed, "Moon", desource=0.0)
    named = name_groups(
        [[0, 1], [2, 3]],
        sentences,
        "What is the moon like?",
        "Moon",
        [],
        lambda w: rare.get(w, 2.0),
        lambda m: _unit(raw[m].mean(axis=0, keepdims=True))[0],
        lambda forms: np.asarray(embed.vectors(forms)),
    )
    assert "zarquon" not in named[1].name.lower(), named[1].name
    assert set(named[1].name.lower().replace(" and ", " ").split()) <= set(
        re.findall(r"\w+", " ".join(s.text.lower() for s in sentences[2:]))
    ), named[1].name
