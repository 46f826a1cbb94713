"""Typing errors read in their context (deepresearch.understanding.spelling): among the backend's words
equally near a slip, the one the question's other words share documents with, on a small invented
backend whose words no evaluation question uses."""

from __future__ import annotations

from deepresearch.understanding.cooccurrence import evidence
from deepresearch.understanding.spelling import corrected


class Backend:
    """An encyclopedia of invented entries: `titles` and `link_texts`, as the offline one has."""

    def __init__(self, entries: list[tuple[str, str]]):
        self.entries = entries

    def titles(self) -> list[str]:
        return [title for title, _ in self.entries]

    def link_texts(self) -> list[str]:
        return [f"{title} {text}" for title, text in self.entries]


def _fens() -> Backend:
    """ "telvan" (a tool) is in twelve entries; "telvar" (a bird of the Mossfen marsh) in five, each
    with "mossfen"; both are one slip from "telva". So is "kelva", in thirty, but a slip seldom
    changes a word's first letter."""
    tools = [
        (f"Telvan maker {i}", "A workshop that sharpens the telvan, a hooked blade for cutting reeds.")
        for i in range(12)
    ]
    birds = [
        (f"Telvar colony {i}", "The telvar is a wading bird that breeds in the reedbeds of Mossfen.") for i in range(5)
    ]
    filler = [(f"Quarry {i}", "A kelva quarry of grey slate worked by hand.") for i in range(30)]
    return Backend(tools + birds + filler)


def test_a_slip_takes_the_word_its_questions_other_words_go_with_over_the_more_common_one():
    fens = _fens()
    # "mossfen" shares every document of "telvar" and none of "telvan"
    assert evidence("telvar", {"mossfen"}, fens) > evidence("telvan", {"mossfen"}, fens) == 0.0
    assert corrected("where does the telva of mossfen nest", fens) == "where does the telvar of Mossfen nest"
    # with nothing in the question to tell them apart, the word more documents use
    assert corrected("how sharp is a telva", fens) == "how sharp is a telvan"
    # a word of the question found everywhere ("the", or "grey" beside "slate") is no evidence
    assert corrected("is the telva grey", fens) == "is the telvan grey"


def test_another_slip_of_the_question_counts_as_its_first_reading():
    """ "mossfem" is one slip from "mossfen" alone; read so, it tells "telva" is the bird."""
    fens = _fens()
    assert corrected("where does the telva of mossfem nest", fens) == "where does the telvar of Mossfen nest"


def test_another_form_of_a_known_word_stays_unless_the_question_calls_for_a_word_one_slip_away():
    """ "vornets" is a plural of "vornet" (which the backend knows): no slip, as a rule; but in a
    question about Quillan, whose entries all speak of "vorents", it is a slip of that word."""
    entries = [(f"Vornet {i}", "A vornet is a copper coin struck in the northern mints.") for i in range(3)]
    entries += [(f"Quillan shore {i}", "Small crabs called vorents live on the shore of Quillan.") for i in range(6)]
    entries += [(f"Quarry {i}", "A quarry of grey slate worked by hand since the old days.") for i in range(20)]
    coins = Backend(entries)
    assert corrected("where were vornets minted", coins) == "where were vornets minted"
    assert corrected("which vornets live in quillan", coins) == "which vorents live in Quillan"


def test_a_word_written_with_an_accent_is_one_word_of_the_backend():
    """ "Haldérsson" is a word of the backend, so "haldresson" (a slip of it typed without the accent)
    is corrected to it, and the name itself, as written, is left alone."""
    people = Backend(
        [("Ilse Haldérsson", "Ilse Haldérsson was a glassblower in Orvik."), ("Orvik", "Orvik is a harbour town.")]
        + [(f"Quarry {i}", "A quarry of grey slate worked by hand since the old days.") for i in range(5)]
    )
    assert corrected("where did ilse haldresson work", people).lower() == "where did ilse haldersson work"
    assert corrected("Where did Ilse Haldérsson work?", people) == "Where did Ilse Haldérsson work?"


def test_a_word_both_readings_go_with_leaves_the_commoner_unless_the_rarer_goes_with_it_far_more():
    """ "lowlands" is in every entry of the rarer "telvar" and in half of those of "telvan": that is
    more than chance for both, and not far more for the rarer, so the commoner stays."""
    tools = [(f"Telvan maker {i}", "A workshop that sharpens the telvan, a hooked blade.") for i in range(12)]
    tools = [(t, x + (" It is used in the lowlands." if i < 6 else "")) for i, (t, x) in enumerate(tools)]
    birds = [(f"Telvar colony {i}", "The telvar is a wading bird of the lowlands.") for i in range(5)]
    filler = [(f"Quarry {i}", "A quarry of grey slate worked by hand.") for i in range(200)]
    both = Backend(tools + birds + filler)
    assert evidence("telvar", {"lowlands"}, both) > evidence("telvan", {"lowlands"}, both) > 0.0
    assert corrected("is the telva of the lowlands", both) == "is the telvan of the lowlands"
