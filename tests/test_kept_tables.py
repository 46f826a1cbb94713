"""The tables the reading derives from a backend's documents (spelling vocabulary, title linker,
postings) are derived once per corpus and read back from the index folder: what is read back is what
a fresh derivation gives, and a damaged, changed or unwritable store derives them again."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from deepresearch.embeddings.index_dir import INDEX_DIR_ENV
from deepresearch.understanding import cooccurrence, linking, spelling, tables

pytestmark = pytest.mark.no_index

NAMES = ["Mercury", "Venus", "Pietà", "Cortés", "Kraków", "O'Brien", "Saint-Malo", "Obama", "NASA", "McCartney"]


class Corpus:
    """A backend with titles and linked texts, big enough (MIN_KEPT texts) for its tables to be kept."""

    def __init__(self, texts: dict[str, str]):
        self._texts = texts

    def titles(self) -> list[str]:
        return list(self._texts)

    def link_texts(self) -> list[str]:
        return [f"{t} {x}" for t, x in self._texts.items()]


def corpus(extra: str = "") -> Corpus:
    texts = {}
    for i in range(tables.MIN_KEPT + 20):
        name = NAMES[i % len(NAMES)]
        title = f"{name} ({'planet' if i % 3 else 'element'} {i})" if i % 4 else f"{name} tower {i}"
        texts[title] = (
            f"The {name} tower of {NAMES[(i * 7) % len(NAMES)]} was designed in {1800 + i}. "
            f"Engineers visited {name} often; its keepers' tales are told by {NAMES[(i * 3) % len(NAMES)]}. "
            f"Word{i % 50} and spire{i % 13} stand beside the harbour.{extra}"
        )
    return Corpus(texts)


@pytest.fixture
def index(monkeypatch, tmp_path):
    monkeypatch.setenv(INDEX_DIR_ENV, str(tmp_path / "indexes"))
    return tmp_path / "indexes" / "tables"


def derived_now(backend) -> dict:
    """Every table, derived afresh (nothing read from disk)."""
    titles, texts = backend.titles(), backend.link_texts()
    return {
        "spelling": spelling._derived(texts, titles),
        "linker": linking.link_tables(titles, texts),
        "postings": cooccurrence._derived(texts),
    }


def read(backend) -> dict:
    """Every table as the reading gets it (from the store when kept there)."""
    spelling.vocabulary(backend)
    linker = linking.linker_for(backend)
    assert linker is not None
    return {
        "spelling": {
            "counts": spelling._vocabularies[id(backend)][0],
            "words": spelling._vocabularies[id(backend)][1],
            "stems": spelling._stems[id(backend)],
            "cases": spelling._cases[id(backend)],
        },
        "linker": {k: getattr(linker, k) for k in ("exact", "by_word", "qualified", "named", "common", "df", "docs")},
        "postings": cooccurrence.postings(backend),
    }


def same(got: dict, fresh: dict) -> None:
    """Equal tables of equal types (tuples stay tuples, counters counters, sets frozen)."""
    s, f = got["spelling"], fresh["spelling"]
    assert s["counts"] == f["counts"] and isinstance(s["counts"], Counter)
    assert sorted(s["words"]) == sorted(f["words"]) and len(s["words"]) == len(f["words"])
    assert s["stems"] == f["stems"] and isinstance(s["stems"], frozenset)
    assert s["cases"] == f["cases"] and all(isinstance(c, Counter) for c in s["cases"])
    for name, table in fresh["linker"].items():
        assert got["linker"][name] == table, name
        assert type(got["linker"][name]) is type(table), name
    for name in ("exact", "qualified", "by_word"):
        assert all(type(v) is tuple for v in got["linker"][name].values()), name
    assert list(got["linker"]["exact"]) == list(fresh["linker"]["exact"])  # titles' order kept
    assert all(type(k) is tuple for k in got["linker"]["exact"])
    assert got["postings"] == fresh["postings"]
    assert {type(ids).__name__ + ids.typecode for ids in got["postings"][1].values()} == {"arrayI"}


def no_derivation(monkeypatch) -> None:
    """From here on, deriving a table fails the test: they must be read back."""

    def refuse(*args, **kwargs):
        raise AssertionError("derived again instead of read back")

    monkeypatch.setattr(spelling, "_derived", refuse)
    monkeypatch.setattr(linking, "link_tables", refuse)
    monkeypatch.setattr(cooccurrence, "_derived", refuse)


def test_tables_read_back_are_the_tables_derived_afresh(index, monkeypatch):
    fresh = derived_now(corpus())
    first = read(corpus())  # derived and kept
    assert sorted(p.name.split("-")[0] for p in index.iterdir()) == ["linker", "postings", "spelling"]
    same(first, fresh)
    no_derivation(monkeypatch)
    same(read(corpus()), fresh)  # another backend of the same texts (a later process): read back
    # the reading reads them as it did: a slip corrected, a name linked
    assert spelling.corrected("Who designed the Mercurry tower?", corpus()) == "Who designed the Mercury tower?"
    assert linking.mentions("Engineers visited Kraków.", linking.linker_for(corpus()) or linking.Linker([]))


def test_the_encyclopedias_tables_read_back_are_those_derived_afresh(index, monkeypatch):
    """The real corpus (accents, quotes, every script its titles use) round-trips too."""
    from deepresearch.tools.wiki import WikiSearch

    fresh = read(WikiSearch(cache_root=index.parent))  # derived (none kept yet) and kept
    assert len(list(index.iterdir())) == 3
    no_derivation(monkeypatch)
    same(read(WikiSearch(cache_root=index.parent)), fresh)


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[: len(raw) // 2],  # cut short
        lambda raw: raw[:-40] + b"0" + raw[-39:],  # one byte changed
        lambda raw: b"",  # empty
        lambda raw: b"\x00\xff not json at all",
        # whole, with its checksum, but not the tables' layout
        lambda raw: __import__("hashlib").sha1(b"[1, 2]").hexdigest().encode() + b"\n[1, 2]",
    ],
    ids=["cut-short", "byte-changed", "empty", "garbage", "other-layout"],
)
def test_a_damaged_table_file_is_derived_again_and_rewritten(index, monkeypatch, damage):
    fresh = derived_now(corpus())
    read(corpus())
    files = sorted(index.iterdir())
    for path in files:
        path.write_bytes(damage(path.read_bytes()))
    same(read(corpus()), fresh)  # derived again, never read wrong, never fatal
    assert sorted(index.iterdir()) == files  # rewritten in place of the damaged ones
    no_derivation(monkeypatch)
    same(read(corpus()), fresh)  # and read back after


def test_a_changed_corpus_derives_its_tables_anew(index):
    read(corpus())
    before = sorted(p.name for p in index.iterdir())
    changed = corpus(extra=" Lighthouses glimmer.")
    got = read(changed)
    assert "lighthouses" in got["spelling"]["counts"] and "lighthouses" in got["postings"][1]
    after = sorted(p.name for p in index.iterdir())
    assert len(after) == 3 and not set(after) & set(before)  # new keys; the stale files removed
    same(got, derived_now(changed))


def test_a_changed_program_derives_its_tables_anew(index, monkeypatch, tmp_path):
    rule = tmp_path / "rule.py"
    rule.write_text("LIMIT = 1\n")
    module = type(json)("rule")
    module.__file__ = str(rule)
    built = []

    def kept():
        return tables.kept_table(corpus(), "rule", lambda: built.append(1) or [1], list, list, (module,))

    monkeypatch.setattr(tables, "_programs", {})
    assert kept() == [1] and kept() == [1] and len(built) == 1
    rule.write_text("LIMIT = 2\n")
    monkeypatch.setattr(tables, "_programs", {})  # a new process
    assert kept() == [1] and len(built) == 2


def test_a_small_backend_keeps_nothing_and_an_unwritable_folder_is_no_failure(monkeypatch, tmp_path):
    small = Corpus({"Mercury (planet)": "The planet Mercury.", "Venus": "The planet Venus."})
    monkeypatch.setenv(INDEX_DIR_ENV, str(tmp_path / "indexes"))
    same(read(small), derived_now(small))
    assert not (tmp_path / "indexes").exists()  # derived in a blink: nothing kept
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(INDEX_DIR_ENV, str(blocked))
    big = corpus()
    same(read(big), derived_now(big))  # derived, used, not kept
    assert blocked.read_text() == "not a folder" and not list(tmp_path.glob("**/.*.tmp"))
