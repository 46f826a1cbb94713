"""A sentence may end inside its quotation marks ('... the motto "Salt before silver."'): it is a sentence
of its text, cited after its quotation, and the quoted words are a thing's answer though not
capitalized, of whatever kind the question asks for when no document has them. Invented entries."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.report.grounding import cite, source_sentences
from deepresearch.research.asked import open_asked
from deepresearch.research.sentences import type_match
from deepresearch.understanding.embedded.reader import rules_reading
from tests.test_asked import Encyclopedia

SAID = (
    'The Vellmark guild was founded by glassblowers in 1731. Its members swore by the motto "salt before '
    'silver, glass before gold." The guild hall stands beside the harbour of Osterby.'
)


def test_a_sentence_ending_inside_its_quotation_is_kept_and_cited_after_it():
    sents = source_sentences(SAID)
    assert sents == [
        "The Vellmark guild was founded by glassblowers in 1731.",
        'Its members swore by the motto "salt before silver, glass before gold."',
        "The guild hall stands beside the harbour of Osterby.",
    ]
    assert cite(sents[1], 2) == 'Its members swore by the motto "salt before silver, glass before gold" [2].'
    assert cite("Ida Roon said “glass remembers.”", 1) == "Ida Roon said “glass remembers” [1]."


def test_quoted_words_are_a_things_answer():
    assert type_match("thing", 'They swore by the motto "salt before silver."', frozenset({"motto"}))
    assert not type_match("thing", "They swore by an old motto of the harbour.", frozenset({"motto"}))


def test_a_quoted_answer_no_document_has_answers_a_kind_of_thing_asked():
    backend = Encyclopedia(
        {
            "Vellmark guild": "Guild of glassblowers in Osterby",
            "Orm guild": "Guild of potters in Osterby",
            **{f"Ferro motto {i}": f"Motto of the Ferro house number {i}" for i in range(4)},
        }
    )
    guild = {
        "name": "Vellmark guild",
        "query": "Vellmark guild",
        "title": "Vellmark guild",
        "phrase": "vellmark guild",
        "origin": "question",
    }
    question = "What motto did the members of the Vellmark guild swear by?"
    reading = rules_reading(question, [guild])
    sim = similarity_for(embedder_for("local"))

    def unanswered(text: str) -> list:
        source = {"key": "a", "title": "Vellmark guild", "snippet": text}
        return open_asked(reading, [guild], [source], lambda s: s["snippet"], sim, backend)[1]

    assert unanswered(SAID) == []
    assert len(unanswered(SAID.replace('"salt before silver, glass before gold."', "of their trade."))) == 1


def test_a_model_written_sentence_ending_inside_its_quotation_is_cited_after_it():
    from deepresearch.report.grounding import ground

    source = {"id": 1, "key": "a", "title": "Vellmark guild", "snippet": SAID}
    draft = (
        'Its members swore by the motto "salt before silver, glass before gold." The guild hall stands by the harbour.'
    )
    text, _ = ground(draft, [source], lambda s: s["snippet"], threshold=0.25)
    assert '"salt before silver, glass before gold" [1].' in text
