"""Citation styles: one run with sources of every kind (journal articles, preprints, web pages, a
document) rendered in each style; the in-text citations and the Sources list follow the style,
the checks of the citations do not change, and the numbered report stays the run's own."""

from __future__ import annotations

import re
import uuid

import pytest

from deepresearch.choices.citation_styles import STYLES
from deepresearch.config import Context
from deepresearch.report.citation_style import styled
from deepresearch.runtime.runner import research
from deepresearch.web.export import export
from tests.helpers import cli, one_line_error
from tests.source_helpers import QUESTION, cite_all, docs_folder, mixed_context
from tests.stub_sources import StubSources


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same research twice, numbered and in APA: (numbered result, APA result)."""
    from deepresearch.llm.models import register_model, unregister_model
    from tests.fakes import ScriptedModel

    root = tmp_path_factory.mktemp("styles")
    name = f"fake-{uuid.uuid4().hex[:8]}"
    register_model(name, ScriptedModel(respond=cite_all()))
    try:
        with StubSources() as stub:
            numbered = research(QUESTION, mixed_context(name, stub, docs_folder(root)), mode="iterative")
            apa = research(
                QUESTION, mixed_context(name, stub, docs_folder(root), citation_style="apa"), mode="iterative"
            )
    finally:
        unregister_model(name)
    return numbered, apa


def sources_list(report: str) -> list[str]:
    return [
        line for line in report.split("\n## Sources\n", 1)[1].split("\n") if line.strip() and not line.startswith("_")
    ]


EXPECTED = {  # the in-text citation of the PubMed article (Moreau and Okafor, 2024) and its list entry
    "apa": ("(Moreau & Okafor, 2024)", "Moreau, C., & Okafor, D. (2024). Low-dose aspirin"),
    "chicago": ("(Moreau and Okafor 2024)", "Moreau, C., and D. Okafor. 2024. “Low-dose Aspirin"),
    "mla": ("(Moreau and Okafor, “Low-dose Aspirin", "Moreau, C., and D. Okafor. “Low-dose Aspirin"),
    "ieee": (None, "C. Moreau and D. Okafor, “Low-dose aspirin"),
    "vancouver": (None, "Moreau C, Okafor D. Low-dose aspirin"),
}


@pytest.mark.parametrize("style", list(STYLES))
def test_each_style_renders_citations_and_the_sources_list(runs, style):
    numbered, _ = runs
    text = styled(numbered["report"], numbered["sources"], style)
    body = text.split("\n## Sources\n")[0]
    cite, entry = EXPECTED[style]
    entries = sources_list(text)
    assert len(entries) == len(numbered["sources"])  # one entry per cited source, of every kind
    moreau = next(e for e in entries if "Okafor" in e)
    assert entry in moreau and "https://pubmed.ncbi.nlm.nih.gov/39000001/" in moreau
    assert any("file " in e and "aspirin-notes.md" in e for e in entries)  # the document, not a link
    if cite:  # author-date: no number is left in the body
        assert cite in body and not re.search(r"\[\d+\]", body)
    else:  # numbered styles number in order of first citation, as the run did
        mark = "[3]" if style == "ieee" else "(3)"
        n = next(s["id"] for s in numbered["sources"] if (s.get("ids") or {}).get("PMID") == "39000001")
        assert mark.replace("3", str(n)) in body
        assert moreau.startswith(f"[{n}] " if style == "ieee" else f"{n}. ")
    assert text.rstrip().endswith(numbered["report"].rstrip().rsplit("\n", 1)[1])  # the verification line


def test_a_styled_run_checks_the_same_citations_and_keeps_its_numbered_report(runs):
    numbered, apa = runs
    assert apa["citation_style"] == "apa" and "citation_style" not in numbered  # the default is unchanged
    assert [(c["source_id"], c["verdict"]) for c in apa["citations"]] == [
        (c["source_id"], c["verdict"]) for c in numbered["citations"]
    ]
    assert apa["report"] == styled(numbered["report"], numbered["sources"], "apa")
    assert "(Moreau & Okafor, 2024)" in apa["report"]
    values = {**numbered, "citation_style": "apa"}  # what the thread keeps: the numbered report and the style
    assert export(values, "md").decode() == apa["report"]  # the exports are styled
    assert "[1]" in numbered["report"]


def test_unverified_marks_and_hostile_names_stay_in_place():
    report = (
        "# R\n\nA claim [1]^unverified^[2]. Another [2].\n\n## Sources\n\n[1] a — https://a.example\n"
        "[2] b — https://b.example\n\n_Verification: 3 citations._\n"
    )
    sources = [
        {
            "id": 1,
            "title": "A",
            "url": "https://a.example",
            "meta": {
                "type": "webpage",
                "authors": [{"family": "[Evil](https://x.example) <b>", "given": "Z"}],
                "year": "2020",
            },
        },
        {"id": 2, "title": "B", "url": "https://b.example", "meta": {"type": "webpage", "year": "2021"}},
    ]
    text = styled(report, sources, "apa")
    assert "^unverified^ (B, 2021)" in text and "x.example" not in text and "<b>" not in text
    assert text.count("^unverified^") == 1


def test_an_unknown_style_is_refused_in_one_line(cli_env):
    with pytest.raises(ValueError, match="unknown citation style"):
        Context(citation_style="harvard")
    assert "invalid choice" in one_line_error(cli(["Why?", "--citation-style", "harvard"], cli_env))
