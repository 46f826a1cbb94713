"""Bibliography exports of a run with sources of every kind (journal articles, preprints, web
pages, a document): BibTeX, RIS and CSL-JSON, each parsed back with an independent reader
(bibtexparser, rispy, json) and compared with the run's sources, entry by entry."""

from __future__ import annotations

import json
import uuid

import pytest

from deepresearch.report.bibliography import to_bibtex
from deepresearch.runtime.checkpoint import open_checkpointer, open_store
from deepresearch.runtime.runner import research
from deepresearch.web.export import ExportError, export
from tests.helpers import cli, one_line_error
from tests.source_helpers import QUESTION, cite_all, docs_folder, mixed_context
from tests.stub_sources import StubSources


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run in a SQLite database, with sources of every kind: (db, thread, result)."""
    from deepresearch.llm.models import register_model, unregister_model
    from tests.fakes import ScriptedModel

    root = tmp_path_factory.mktemp("bib")
    name = f"fake-{uuid.uuid4().hex[:8]}"
    register_model(name, ScriptedModel(respond=cite_all()))
    db, tid = str(root / "runs.sqlite"), uuid.uuid4().hex
    try:
        with StubSources() as stub, open_checkpointer(db) as saver, open_store(db) as store:
            out = research(
                QUESTION,
                mixed_context(name, stub, docs_folder(root)),
                mode="iterative",
                checkpointer=saver,
                store=store,
                thread_id=tid,
            )
    finally:
        unregister_model(name)
    kinds = {(s.get("meta") or {}).get("type") for s in out["sources"]}
    assert kinds == {"article", "preprint", "webpage", "document"}, out["sources"]
    return db, tid, out


def authors(s: dict) -> list[str]:
    return [
        a.get("literal") or a["family"] + (f", {a['given']}" if a.get("given") else "")
        for a in (s.get("meta") or {}).get("authors", [])
    ]


def test_csljson_parses_back_with_every_source(finished):
    _, _, out = finished
    items = {i["id"]: i for i in json.loads(export(out, "csljson"))}
    assert set(items) == {str(s["id"]) for s in out["sources"]}
    types = {"article": "article-journal", "preprint": "article", "webpage": "webpage", "document": "document"}
    for s in out["sources"]:
        item, meta = items[str(s["id"])], s.get("meta") or {}
        assert item["title"] == s["title"] and item["type"] == types[meta["type"]]
        assert [a.get("literal") or a["family"] for a in item.get("author", [])] == [
            a.get("literal") or a["family"] for a in meta.get("authors", [])
        ]
        assert item.get("DOI") == (s.get("ids") or {}).get("DOI")
        assert ("URL" in item) == s["url"].startswith("https://")  # a file is never a link
    pubmed = next(i for i in items.values() if i.get("PMID") == "39000001")
    assert (
        pubmed["issued"] == {"date-parts": [[2024, 7]]}
        and pubmed["container-title"] == "Journal of Cardiovascular Prevention"
    )


def test_bibtex_parses_back_with_every_source(finished):
    import bibtexparser

    _, _, out = finished
    library = bibtexparser.parse_string(export(out, "bibtex").decode())
    assert not library.failed_blocks
    entries = library.entries
    assert len(entries) == len(out["sources"]) and len({e.key for e in entries}) == len(entries)
    by_title = {e.fields_dict["title"].value: e for e in entries}
    types = {"article": "article", "preprint": "misc", "webpage": "online", "document": "misc"}
    for s in out["sources"]:
        e = by_title[s["title"]]
        assert e.entry_type == types[s["meta"]["type"]]
        got = e.fields_dict.get("author")
        assert (got.value.replace("{", "").replace("}", "").split(" and ") if got else []) == authors(s)
        for key, field in (("DOI", "doi"), ("arXiv", "eprint"), ("PMID", "pmid")):
            if (s.get("ids") or {}).get(key):
                assert e.fields_dict[field].value == s["ids"][key]
    article = by_title[next(s["title"] for s in out["sources"] if (s.get("ids") or {}).get("PMID") == "39000001")]
    assert {k: article.fields_dict[k].value for k in ("journal", "year", "volume", "number", "pages")} == {
        "journal": "Journal of Cardiovascular Prevention",
        "year": "2024",
        "volume": "12",
        "number": "4",
        "pages": "201-210",
    }


def test_ris_parses_back_with_every_source(finished):
    import rispy

    _, _, out = finished
    entries = rispy.loads(export(out, "ris").decode())
    assert len(entries) == len(out["sources"])
    by_title = {e["title"]: e for e in entries}
    types = {"article": "JOUR", "preprint": "UNPB", "webpage": "ELEC", "document": "GEN"}
    for s in out["sources"]:
        e = by_title[s["title"]]
        assert e["type_of_reference"] == types[s["meta"]["type"]]
        assert e.get("authors", []) == authors(s)
        assert e.get("doi") == (s.get("ids") or {}).get("DOI")
        assert e.get("urls", []) == ([s["url"]] if s["url"].startswith("https://") else [])
        assert e.get("year") == (s["meta"].get("year") or None)
    doc = next(e for e in entries if e["type_of_reference"] == "GEN")
    assert "File: aspirin-notes.md" in doc["notes"]


def test_hostile_fields_stay_fields():
    """A title with braces, backslashes and line breaks cannot close an entry or start a tag."""
    import bibtexparser
    import rispy

    source = {
        "id": 1,
        "title": "Evil} @misc{x, title={pwned\nER  - \nTY  - JOUR",
        "url": "https://e.example/a",
        "meta": {"type": "article", "authors": [{"family": "O\\'Brien}", "given": "A"}]},
    }
    [entry] = bibtexparser.parse_string(to_bibtex([source])).entries
    assert entry.fields_dict["title"].value.startswith("Evil) @misc(x")
    [ris] = rispy.loads(export({"report": "x", "sources": [source]}, "ris").decode())
    assert ris["title"].startswith("Evil} @misc{x") and ris["type_of_reference"] == "JOUR"
    with pytest.raises(ExportError):
        export({"sources": [source]}, "bibtex")  # no report yet: nothing was cited


def test_cli_exports_a_bibliography_and_refuses_an_unknown_format(finished, cli_env, tmp_path):
    import rispy

    db, tid, out = finished
    r = cli(["export", tid, "--format", "ris", "--db", db, "-o", tmp_path / "refs.ris"], cli_env)
    assert r.returncode == 0, r.stderr
    assert len(rispy.loads((tmp_path / "refs.ris").read_text(encoding="utf-8"))) == len(out["sources"])
    assert "invalid choice" in one_line_error(cli(["export", tid, "--format", "endnote", "--db", db], cli_env))


def test_the_web_pages_export_route_serves_each_bibliography(finished):
    from starlette.testclient import TestClient

    from deepresearch.web.app import app

    _, _, out = finished
    client = TestClient(app)
    for fmt, ext in (("bibtex", "bib"), ("ris", "ris"), ("csljson", "json")):
        r = client.post(f"/ui/api/export?format={fmt}", json=out)
        assert r.status_code == 200 and f'filename="report.{ext}"' in r.headers["content-disposition"]
        assert r.content == export(out, fmt)


def test_ris_entries_start_at_their_type_tag(finished):
    _, _, out = finished
    text = export(out, "ris").decode()
    assert text.startswith("TY  - ") and text.count("\nTY  - ") == len(out["sources"]) - 1
