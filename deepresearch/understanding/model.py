"""A capable model reads the question; the rules check what it proposes.

With any model but the embedded one, the model proposes the question's analysis in structured
output (`ConceptProposal`): the things the question is about, the things it points to without
naming (the author of a named book), what kind of answer it wants, what it compares, and the
aspects a report should cover. Nothing of it is taken on trust: each proposed thing is checked
against the search backend (linked to a title the backend has, or found mentioned in a result
for its name); a thing nothing retrieved mentions is not researched as a concept. The question's
own words add their concepts only when the question is English: the reading rules
(`concepts.extract`) are English rules, and a question in another language is read by the
model alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from deepresearch.events import emit
from deepresearch.language import detect
from deepresearch.llm.budget import Budget, BudgetExhausted
from deepresearch.llm.calls import structured
from deepresearch.llm.retries import ModelCallError
from deepresearch.state.analysis import ConceptData
from deepresearch.text.words import fold, keyed, tokens
from deepresearch.understanding.analysis import Analysis, Concept
from deepresearch.understanding.embedded.concepts import COHERENT, MAX_CONCEPTS, extract
from deepresearch.understanding.embedded.reader import rules_reading
from deepresearch.understanding.linking import concept, kinds_for, linker_for, own_kinds
from deepresearch.understanding.spelling import language_and_reading

PROMPT = """Question: {question}

Analyse the question for a researcher. List the things it is about, including any thing it
points to without naming it (for "the author of a book", name the author), each as a short
name the search sources would use as a title (for an English encyclopedia: its English title).
Say whether it asks for a short answer (a year, a name, a place, a number), a broad overview or
explanation, or a comparison; the things it compares; and the aspects a report should cover,
written in the question's language."""


class ConceptProposal(BaseModel):
    concepts: list[str] = Field(
        default_factory=list, max_length=6, description="Short names of the things the question is about or points to."
    )
    kind: Literal["short", "broad", "comparison"] | None = Field(
        default=None, description="short: a year, name, place or number; broad: an overview or explanation."
    )
    compared: list[str] = Field(default_factory=list, max_length=6, description="The things it compares, if any.")
    aspects: list[str] = Field(
        default_factory=list, max_length=6, description="Aspects a report should cover, in the question's language."
    )


def is_english(question: str) -> bool:
    return detect(question) == "en"


def verified(names: list[str], backend, question: str) -> list[dict]:
    """The proposed names that the backend confirms, as concepts of origin `model`: linked to
    the title whose words they are, or kept as a name when a result for it mentions it. A
    backend without titles (the web, MCP tools) is searched with every name as written."""
    linker = linker_for(backend) if backend is not None else None
    out: list[dict] = []
    seen: set[str] = set()
    for name in names:
        name = " ".join(str(name).split())[:80]
        words = tokens(name)
        if not words or fold(name) in seen:
            continue
        seen.add(fold(name))
        if linker is None:
            out.append(concept(name, " ".join(words), None, origin="model"))
            continue
        titles = linker.exact_titles(words)
        if titles:
            out.append(concept(titles[0], " ".join(words), titles[0], origin="model"))
            continue
        try:
            results = backend.search(name, 3)
        except Exception:  # noqa: BLE001 - an unconfirmed proposal is left out, not fatal
            results = []
        for r in results:
            if keyed(tokens(r.title)) == keyed(words) or fold(name) in fold(f"{r.title} {r.text}"):
                title = r.title if fold(name) in fold(r.title) else None
                out.append(concept(title or name, " ".join(words), title, origin="model"))
                break
    return out


def about_the_question(proposed: list[dict], rules: list[dict], question: str, backend) -> list[dict]:
    """The proposals that are about the question: they share a word with it (names travel
    between languages), or their document shares rare words with the question's and with the
    documents of what is already kept (the author of a book the question names)."""
    linker = linker_for(backend) if backend is not None else None
    asked = set(tokens(question))
    kept = [c for c in proposed if set(tokens(c["name"])) & asked or set(tokens(c.get("phrase") or "")) & asked]
    if linker is None:
        return kept + [c for c in proposed if c not in kept and not c.get("title")]

    def text(c: dict) -> str:
        return linker.text_of.get(c.get("title") or "", c["name"])

    changed = True
    while changed:
        changed = False
        context = question + " " + " ".join(text(c) for c in kept + rules)
        for c in proposed:
            if c not in kept and linker.relatedness(context, text(c)) >= COHERENT:
                kept.append(c)
                changed = True
    return [c for c in proposed if c in kept]


def merged_concepts(proposal: ConceptProposal | None, question: str, backend) -> list[dict]:
    """The concepts a run researches: the model's proposals the backend confirms (the things it
    compares first), then, for an English question, what the reading rules find that the model
    did not propose."""
    rules = extract(question, backend) if is_english(question) else []
    if proposal is None:
        return rules
    names = list(dict.fromkeys([*proposal.compared, *proposal.concepts]))
    found = about_the_question(verified(names, backend, question), rules, question, backend)
    have = {fold(c.get("title") or c["name"]) for c in found}
    for c in rules:
        if fold(c.get("title") or c["name"]) not in have:
            have.add(fold(c.get("title") or c["name"]))
            found.append(c)
    return found[: MAX_CONCEPTS + 2]


@dataclass
class ModelReader:
    """A capable model reads the question (one structured call, within the run's budget): the things
    it is about, its kind, what it compares, its aspects. The rules check each thing against the
    backend and add their own (an English question's); where the model said the kind or the things
    compared, its reading stands (`model_led`), the rest is the rules' reading with those concepts."""

    ctx: Any
    budget: Budget
    backend: Any
    node: str = "analyse"

    def read(
        self, question: str, brief: str, given: Sequence[ConceptData] | None = None
    ) -> tuple[Analysis, list[dict]]:
        language, spelled = language_and_reading(question, self.backend)
        if given:
            return rules_reading(question, given, language, spelled), []
        proposal, errors = None, []
        try:
            proposal = structured(
                self.ctx,
                self.budget,
                [HumanMessage(content=PROMPT.format(question=brief))],
                ConceptProposal,
                node=self.node,
                max_output=300,
            )
        except BudgetExhausted:
            pass
        except ModelCallError as e:
            emit("error", node=self.node, cause=e.cause)
            errors = [{"node": self.node, "cause": e.cause}]
        concepts = merged_concepts(proposal, spelled, self.backend)
        kinds = kinds_for(self.backend)
        analysis = rules_reading(question, concepts, language, spelled, kinds, own_kinds(concepts, self.backend))
        return (model_led(analysis, proposal, concepts) if proposal else analysis), errors


def model_led(analysis: Analysis, proposal: ConceptProposal, concepts: list[dict]) -> Analysis:
    """The rules' reading with the model's where the model said it: what kind of question it is, and
    the things it compares (each one the backend confirmed, so among `concepts`)."""
    by_name = {fold(c["name"]): c for c in concepts} | {fold(c.get("phrase") or ""): c for c in concepts}
    compared = [by_name[fold(n)] for n in proposal.compared if fold(n) in by_name]
    changes: dict = {}
    if proposal.kind is not None:
        changes["broad"] = proposal.kind == "broad"
        changes["comparison"] = proposal.kind == "comparison" or (analysis.comparison and proposal.kind != "short")
    if len(compared) >= 2:
        changes["compared"] = tuple(Concept.of(c) for c in compared)
    if proposal.aspects:
        changes["focus"] = replace(analysis.focus, aspects=tuple(a[:80] for a in proposal.aspects))
    return replace(analysis, **changes)
