"""The roles through which a question reaches its subject ("the architect of X"), each with the
question's words that say it: deepresearch.research.bridges follows them in the retrieved texts."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from deepresearch.text.words import tokens
from deepresearch.understanding.analysis import Hop
from deepresearch.understanding.embedded.clauses import hop_clause
from deepresearch.understanding.embedded.nouns import RELATION_NOUNS, is_person_noun
from deepresearch.understanding.embedded.question import answer_kind
from deepresearch.understanding.embedded.role_forms import possessive_role, predicate_role, relations_of


def hops_of(
    question: str,
    concepts: list[dict],
    kinds: AbstractSet[str] | None = None,
    own_kinds: Mapping[str, AbstractSet[str]] | None = None,
) -> tuple[Hop, ...]:
    """The relations through which the question reaches a subject, outermost first, each with the
    question's words that say it (from the role word to the named thing it leads to, the thing's own
    name left out: "engineer is named after"): the sentence of the named thing's text closest to them
    in meaning states the relation (deepresearch.research.bridges)."""
    words = tokens(question)
    phrases = [c.get("phrase") or c["name"] for c in concepts if c.get("origin") != "bridge"]
    named = {w for p in phrases for w in tokens(p)}
    kind = answer_kind(question)[0]
    out = []
    for relation in relations_of(question, phrases, kinds, own_kinds):
        # the relation's own words, not the thing it starts from (which every sentence of its text names)
        clause = hop_clause(question, relation, phrases) - named
        said = " ".join(w for w in words if w in clause) or relation
        # "X's home city": the role and the word narrowing it, what follows being asked of its filler;
        # "X is headquartered in a city that ...": the verb, its preposition and the role
        for form in (possessive_role, predicate_role):
            said = next((" ".join(p) for ph in phrases if (p := form(question, ph, kinds))[-1:] == [relation]), said)
        person = is_person_noun(relation) or (relation not in RELATION_NOUNS and kind == "person")
        out.append(Hop(relation=relation, phrase=said, person=person))
    return tuple(out)
