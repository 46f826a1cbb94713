"""Names are told from ordinary words by how the documents write them (deepresearch.understanding.
linking.name_flags), not by how a question happens to be typed: a question in lower case finds the
same things as one with capitals. Invented entries throughout."""

from deepresearch.understanding.embedded.concepts import extract
from deepresearch.understanding.embedded.question import description_of
from deepresearch.understanding.linking import Linker, name_flags

ENTRIES = {
    "Zorvak": "Glass works in Osterby",
    "Glimmerphone": "Pocket telephone",
    "Ida Roon": "Osterby engineer (1861-1930)",
    "Quill": "Writing tool",
    "Osterby": "Town on the river Tarn",
    "Grey Road of Osterby": "Road from Osterby to Velm",
}
TEXTS = {
    "Zorvak": "Zorvak is a glass works in Osterby. Its lenses made Zorvak known; in 1802 Zorvak opened a kiln, "
    "and the firm of Zorvak still grinds glass.",
    "Glimmerphone": "The Glimmerphone is a pocket telephone made by Zorvak. The first Glimmerphone was shown in "
    "1902 by Ida Roon, and the Glimmerphone sold well.",
    "Ida Roon": "Ida Roon was an engineer of Osterby. She designed the Glimmerphone for Zorvak.",
    "Quill": "A quill is a writing tool made from a feather. The quill was cut with a knife; a quill wore out.",
    "Osterby": "Osterby is a town on the river Tarn. The glass works of Osterby employ half the town; a quill "
    "maker lived there.",
    "Grey Road of Osterby": "The Grey Road of Osterby is a grey road of stone; a grey dust covers it, and a grey "
    "wall runs beside it.",
}


class Encyclopedia:
    """An invented encyclopedia: titles, their descriptions and texts, and a search that finds nothing."""

    def titles(self) -> list[str]:
        return list(ENTRIES)

    def link_texts(self) -> list[str]:
        return [TEXTS[t] for t in ENTRIES]

    def description(self, title: str) -> str:
        return ENTRIES.get(title, "")

    def describe(self, title: str) -> str:
        return ENTRIES.get(title, "")

    def search(self, query: str, k: int = 5) -> list:
        return []


def names(question: str) -> list[str]:
    return [c["name"] for c in extract(question, Encyclopedia())]


def test_the_documents_say_which_words_are_names():
    linker = Linker(list(TEXTS), list(TEXTS.values()))
    assert linker.written_as_name("zorvak") is True  # capitalized inside sentences
    assert linker.written_as_name("quill") is False  # the documents write it in lower case
    assert linker.written_as_name("ferrule") is None  # they do not use it: the question's capitals decide
    assert name_flags(["who", "founded", "zorvak"], linker) == [False, False, True]
    assert name_flags(["Who", "cut", "the", "Ferrule"], linker) == [False, False, False, True]
    assert name_flags(["who", "cut", "the", "quill"], linker) == [False, False, False, False]


def test_a_question_typed_in_lower_case_finds_the_same_names():
    assert names("Which town is Zorvak in?") == ["Zorvak"]
    assert names("which town is zorvak in") == ["Zorvak"]
    assert names("who designed the glimmerphone for zorvak") == names("Who designed the Glimmerphone for Zorvak?")
    assert "Glimmerphone" in names("who designed the glimmerphone for zorvak")


def test_an_adverb_of_order_describes_nothing():
    """'first' in 'when was X first sold' says when, not which thing: the question names X."""
    assert description_of("When was the Glimmerphone first sold?", ["glimmerphone"]) is None
    assert names("When was the Glimmerphone first sold?") == ["Glimmerphone"]
    assert description_of("Which is the first town on the river Tarn?", []) is not None  # a town described


def test_the_first_of_a_named_thing_is_that_thing():
    """'the first Glimmerphone' is the Glimmerphone, a name by the documents' usage, not a thing
    described by a superlative whose subject must be looked up."""
    assert names("Who showed the first glimmerphone?") == ["Glimmerphone"]


def test_names_side_by_side_that_no_title_holds_together_are_each_a_thing():
    """'Zorvak Glimmerphone' is no title, but each word is one: two things. 'Ida Roon' is one title,
    and 'Zorvak Tessel' holds a word no title is: one name, unlinked."""
    assert names("who started zorvak glimmerphone?") == ["Zorvak", "Glimmerphone"]
    assert names("Where did Ida Roon work?") == ["Ida Roon"]
    assert names("Who started Zorvak Tessel?") == ["Zorvak Tessel"]


def test_the_first_of_a_named_thing_of_several_words_is_that_thing():
    """'the first grey road of osterby' is the Grey Road of Osterby (a title whose first word heads no
    kind of thing), though the documents write 'grey' in lower case."""
    assert names("who paved the first grey road of osterby") == ["Grey Road of Osterby"]


def test_a_slip_in_a_name_only_its_own_text_uses_is_corrected_by_its_title():
    """A name one document uses is still a word of the backend: its title counts as a use."""
    from deepresearch.understanding.spelling import corrected

    class Small:
        def titles(self) -> list[str]:
            return ["Tamsin Quarle", "Velm"]

        def link_texts(self) -> list[str]:
            return ["Tamsin Quarle was a weaver who lived in Velm.", "Velm is a town where cloth is woven."]

    assert corrected("where did tamsin quarel live", Small()).lower() == "where did tamsin quarle live"


def test_a_complex_preposition_ends_a_key_phrase():
    """Without titles to link to, 'according to' is no part of what is researched: the runs are
    'bake rye bread' and 'velmbook', not 'bake rye bread according'."""
    found = [c["name"] for c in extract("How do I bake rye bread according to velmbook?")]
    assert not any("according" in f for f in found) and "velmbook" in found


class WithExtra(Encyclopedia):
    """The encyclopedia with the entries of `EXTRA`: title -> (description, text)."""

    EXTRA: dict[str, tuple[str, str]] = {}

    def titles(self) -> list[str]:
        return [*ENTRIES, *self.EXTRA]

    def link_texts(self) -> list[str]:
        return [*(TEXTS[t] for t in ENTRIES), *(text for _, text in self.EXTRA.values())]

    def description(self, title: str) -> str:
        return self.EXTRA[title][0] if title in self.EXTRA else ENTRIES.get(title, "")

    describe = description


class WithTales(WithExtra):
    """The encyclopedia with a tale whose title opens with "A", and a song named like it without."""

    EXTRA = {
        "A Zorvak Tale": ("Novella by Ida Roon", "A Zorvak Tale is a novella by Ida Roon about a glass miner."),
        "Zorvak Tale": ("Folk song of Osterby", "The Zorvak Tale is a folk song sung at Osterby fairs."),
    }


def test_a_title_that_opens_with_an_article_is_read_with_it():
    found = [c["name"] for c in extract("which miner does the hero meet first in a zorvak tale", WithTales())]
    assert "A Zorvak Tale" in found and "Zorvak Tale" not in found


class WithNovels(WithExtra):
    """The encyclopedia with a novel whose title opens with "The" and holds "of", and the mineral
    its second word names."""

    EXTRA = {
        "The Salt of the Marshes": (
            "Novel by Ida Roon",
            "The Salt of the Marshes is a novel by Ida Roon about a family of salt gatherers.",
        ),
        "Salt": ("Mineral", "Salt is a mineral made of sodium chloride, gathered from the sea and from marshes."),
    }


def test_a_whole_title_typed_in_lower_case_is_read_whole():
    """ "the salt of the marshes", typed without capitals: the novel, not the mineral."""
    found = [c["name"] for c in extract("who wrote the salt of the marshes", WithNovels())]
    assert found == ["The Salt of the Marshes"]
    # typed without its article too
    assert [c["name"] for c in extract("who wrote salt of the marshes", WithNovels())] == ["The Salt of the Marshes"]
    # ordinary words that merely begin like a title stay ordinary ("the salt of the sea")
    assert "The Salt of the Marshes" not in [c["name"] for c in extract("what is the salt of the sea", WithNovels())]


class WithSurnames(WithExtra):
    """The encyclopedia with a unit named after a person, whose surname alone titles no article."""

    EXTRA = {
        "Brannock (unit)": ("Unit of glass hardness", "The brannock is a unit of glass hardness used in Osterby."),
        "Ada Brannock": (
            "Osterby glassmaker (1801-1877)",
            "Ada Brannock was a glassmaker of Osterby. She tested glass.",
        ),
        # villages enough that "brannock", in two texts, is no word every text uses
        **{
            f"Vell {a}{b}": ("Village near Osterby", f"Vell {a}{b} is a village near Osterby.")
            for a in "abcdef"
            for b in "abcdef"
        },
    }


def test_a_word_that_titles_no_article_alone_may_be_the_surname_that_ends_one():
    """ "brannock" is the title of no article but a qualified one (the unit): the person whose name
    it ends is a reading too, chosen by the question's words."""
    assert "Ada Brannock" in [c["name"] for c in extract("who was older ida roon or brannock", WithSurnames())]
