"""The embedded reader: the question read by rules alone (no model), its concepts linked to the
search backend's titles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from deepresearch.language import detect
from deepresearch.state.analysis import ConceptData
from deepresearch.text.words import singular, tokens
from deepresearch.understanding.analysis import Analysis, Concept, Part
from deepresearch.understanding.embedded.concepts import extract
from deepresearch.understanding.embedded.hops import hops_of
from deepresearch.understanding.embedded.parts import compared, is_comparison, parts_of
from deepresearch.understanding.embedded.question import analyse, is_broad
from deepresearch.understanding.linking import kinds_for, own_kinds
from deepresearch.understanding.spelling import language_and_reading


def rules_reading(
    question: str,
    concepts: Sequence[Mapping[str, Any]],
    language: str | None = None,
    spelled: str | None = None,
    kinds: AbstractSet[str] | None = None,
    own: Mapping[str, AbstractSet[str]] | None = None,
) -> Analysis:
    """Everything the analysis holds, given the question's concepts, as the rules read it: the
    question as `spelled` (its typing errors corrected, deepresearch.understanding.spelling); `own`: the kinds
    each concept's own description says it is (deepresearch.understanding.linking.own_kinds)."""
    found = [dict(c) for c in concepts]
    focus_concepts = [c for c in found if c.get("origin") not in ("bridge", "described")]
    asked, question = question, spelled or question
    return Analysis(
        question=asked,
        spelled=question if question != asked else "",
        language=language or detect(asked),
        subjects=tuple(Concept.of(c) for c in found),
        focus=analyse(question, focus_concepts, kinds, own),
        broad=is_broad(question),
        comparison=is_comparison(question),
        compared=tuple(Concept.of(c) for c in compared(question, found)),
        hops=hops_of(question, found, kinds, own),
        words=tuple(tokens(question)),
        parts=tuple(Part(text, kind) for text, kind in parts_of(question)),
    )


@dataclass
class EmbeddedReader:
    """`any_language`: the rules read a question in any language (their concepts are the names they
    find); else only an English one (the deep graph's outline, which a model plans otherwise)."""

    backend: Any
    any_language: bool = True

    def read(
        self, question: str, brief: str, given: Sequence[ConceptData] | None = None
    ) -> tuple[Analysis, list[dict]]:
        language, spelled = language_and_reading(question, self.backend)
        kinds = kinds_for(self.backend)
        if given:
            return rules_reading(question, given, language, spelled, kinds, own_kinds(given, self.backend)), []
        if not self.any_language and language != "en":
            return rules_reading(question, [], language, kinds=kinds), []
        found = extract(spelled, self.backend)
        reading = rules_reading(question, found, language, spelled, kinds, own_kinds(found, self.backend))
        kept = [c for c in found if not _says_a_role(c, reading, spelled or question)]
        if kept and len(kept) < len(found):  # read again without them: a role reaches a subject, it is none
            reading = rules_reading(question, kept, language, spelled, kinds, own_kinds(kept, self.backend))
        return reading, []


def _says_a_role(concept: Mapping[str, Any], reading: Analysis, question: str) -> bool:
    """Is the concept only the word of one of the question's roles, as the question writes it in lower
    case ("the river that flows through X": the river is what X leads to, not a subject)?"""
    phrase = str(concept.get("phrase") or "")
    roles = {singular(h.relation) for h in reading.hops}
    return len(tokens(phrase)) == 1 and singular(tokens(phrase)[0]) in roles and phrase.islower() and phrase in question
