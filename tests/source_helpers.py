"""A run whose sources are of every kind a bibliography files (journal articles, preprints, web
pages, a document), for the metadata, citation-style and export tests: the scholarly backends
against tests/stub_sources.py, a docs folder and the encyclopedia, with a fake model that
cites every source it is shown."""

from __future__ import annotations

import os
from pathlib import Path

from deepresearch.config import Context
from tests.fakes import first_sentence, sources_in

QUESTION = "Does aspirin prevent heart attacks?"
SCHOLARLY = ("pubmed", "clinicaltrials", "europepmc", "arxiv")


def cite_all(judge=None):
    """Judges the research complete at once, plans no searches of its own (the question goes to
    every backend) and writes one sentence per source, each citing it."""

    def respond(kind: str, prompt: str, n: int):
        if kind == "KnowledgeGapOutput":
            return {"research_complete": True, "outstanding_gaps": []}
        if kind == "AgentSelectionPlan":
            return {"tasks": []}
        if kind == "SupportJudgement":
            return {"verdict": "supported", "span": ""}
        if kind == "ConceptProposal":
            return {"concepts": []}
        if kind == "Synthesis":
            return {"introduction": "Intro.", "conclusion": "End."}
        if "In two to four sentences" in prompt:
            return "Notes."
        return "# Report\n\n" + (
            " ".join(f"{first_sentence(prompt, i)} [{i}]." for i in sources_in(prompt)) or "Nothing."
        )

    return respond


def docs_folder(root: Path) -> Path:
    folder = root / "notes"
    folder.mkdir(exist_ok=True)
    (folder / "aspirin-notes.md").write_text(
        "Aspirin heart attacks: my notes say aspirin prevents heart attacks in some adults.", encoding="utf-8"
    )
    os.utime(folder / "aspirin-notes.md", (1700000000, 1700000000))
    return folder


def mixed_context(model: str, stub, folder: Path, **kw) -> Context:
    urls = {n: stub.base(n) for n in SCHOLARLY}
    return Context(
        model=model,
        search=f"docs:{folder},pubmed,arxiv,clinicaltrials",
        search_base_urls=urls,
        max_iterations=1,
        results_per_query=2,
        **kw,
    )
