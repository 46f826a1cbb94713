"""The question's analysis: what it asks, read once by the `analyse` node and read by every node after.

Frozen and typed; state keeps it as plain data (deepresearch.state.analysis), so `Analysis.of(state)`
gives it back. What is in it:

- `subjects`: the things and topics the question names or describes (typed `Concept`s);
- `focus`: the kind of answer it wants (a year, a place, a person, a number, a thing), the words the
  answer sentence should use, the noun after "which", its role word, its aspects, a description of
  a subject it does not name;
- `hops`: the relations through which it reaches a subject ("the author of X"), each a typed `Hop`
  followed once X's text is retrieved (deepresearch.research.bridges);
- `broad`, `comparison` and `compared`: whether it wants an overview, a comparison, and of what;
- `language` and `words` (the question's words, folded).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from deepresearch.state.analysis import AnalysisData, ConceptData, FocusData, HopData, PartData

AnswerKind = Literal["year", "place", "person", "number", "thing", "other"]


@dataclass(frozen=True)
class Concept:
    name: str
    query: str
    title: str | None
    phrase: str
    origin: str = "question"
    description: str | None = None  # a described subject: the description it was found by
    sentence: str | None = None  # ... and the sentence of its text that matched it
    asked_of: bool = False  # ... and what is asked is asked of it (it is not the answer itself)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Concept:
        return cls(
            name=data["name"],
            query=data.get("query") or data["name"],
            title=data.get("title"),
            phrase=data.get("phrase") or "",
            origin=data.get("origin") or "question",
            description=data.get("description"),
            sentence=data.get("sentence"),
            asked_of=bool(data.get("asked_of")),
        )

    def data(self) -> ConceptData:
        out: ConceptData = {
            "name": self.name,
            "query": self.query,
            "title": self.title,
            "phrase": self.phrase,
            "origin": self.origin,
        }
        if self.description is not None:
            out["description"] = self.description
        if self.sentence is not None:
            out["sentence"] = self.sentence
        if self.asked_of:
            out["asked_of"] = True
        return out


@dataclass(frozen=True)
class Focus:
    """What the question asks for."""

    kind: str  # an AnswerKind
    words: tuple[str, ...]  # the question's words the answer sentence should use (folded)
    noun: str | None = None  # the noun after which/what ("planet" in "which planet ...")
    relation: str | None = None  # the role through which it reaches a subject ("author")
    aspects: tuple[str, ...] = ()
    description: str | None = None  # a subject described rather than named

    def data(self) -> FocusData:
        return {
            "kind": self.kind,
            "words": list(self.words),
            "noun": self.noun,
            "relation": self.relation,
            "aspects": list(self.aspects),
            "description": self.description,
        }

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Focus:
        return cls(
            kind=data["kind"],
            words=tuple(data["words"]),
            noun=data.get("noun"),
            relation=data.get("relation"),
            aspects=tuple(data.get("aspects") or ()),
            description=data.get("description"),
        )


@dataclass(frozen=True)
class Hop:
    """A relation to follow: the role word ("engineer"), the question's words that say it (`phrase`:
    "potter the brannock vase is named for"), and whether the role asks for a person."""

    relation: str
    phrase: str
    person: bool

    def data(self) -> HopData:
        return {"relation": self.relation, "phrase": self.phrase, "person": self.person}

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Hop:
        return cls(
            relation=data["relation"], phrase=data.get("phrase") or data["relation"], person=bool(data["person"])
        )


@dataclass(frozen=True)
class Part:
    """One thing the question asks (a question may ask two: "How many bridges did it inspect, and who
    leads it?"): its words, and the kind of answer it wants."""

    text: str
    kind: str  # an AnswerKind

    def data(self) -> PartData:
        return {"text": self.text, "kind": self.kind}

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Part:
        return cls(text=data["text"], kind=data["kind"])


@dataclass(frozen=True)
class Analysis:
    question: str
    language: str
    subjects: tuple[Concept, ...]
    focus: Focus
    broad: bool
    comparison: bool
    compared: tuple[Concept, ...]
    hops: tuple[Hop, ...]
    words: tuple[str, ...]
    parts: tuple[Part, ...] = ()
    spelled: str = ""  # the question with its typing errors corrected (deepresearch.understanding.spelling)

    @property
    def read(self) -> str:
        """The question as it is read and searched: corrected where it was mistyped."""
        return self.spelled or self.question

    @property
    def english(self) -> bool:
        return self.language == "en"

    def data(self) -> AnalysisData:
        return {
            "question": self.question,
            "language": self.language,
            "subjects": [c.data() for c in self.subjects],
            "focus": self.focus.data(),
            "broad": self.broad,
            "comparison": self.comparison,
            "compared": [c.data() for c in self.compared],
            "hops": [h.data() for h in self.hops],
            "words": list(self.words),
            "parts": [p.data() for p in self.parts],
            "spelled": self.spelled,
        }

    @classmethod
    def of_data(cls, data: Mapping[str, Any]) -> Analysis:
        return cls(
            question=data["question"],
            language=data["language"],
            subjects=tuple(Concept.of(c) for c in data["subjects"]),
            focus=Focus.of(data["focus"]),
            broad=bool(data["broad"]),
            comparison=bool(data["comparison"]),
            compared=tuple(Concept.of(c) for c in data["compared"]),
            hops=tuple(Hop.of(h) for h in data["hops"]),
            words=tuple(data["words"]),
            parts=tuple(Part.of(p) for p in data.get("parts") or ()),
            spelled=data.get("spelled") or "",
        )
