"""A docs folder's first index says how far it has got: each file read (of those to read, with the
pages so far), the vectors encoded chunk by chunk, the CLI's live line drawn as a bar; the
embedded model runs a few texts at a time (its activations are what encoding a folder holds).

The memory figure itself (the LaTeX manuals' folder under 500 MB) is measured, not asserted:
docs/documents.md gives it and how it was taken.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from rich.console import Console

from deepresearch.cli.progress import Progress, counted, describe_event, shown
from deepresearch.events import forwarded_to
from deepresearch.tools.docs import DocsSearch
from deepresearch.tools.docs_index import ENCODE_BATCH, ENCODE_CHUNK
from tests.document_files import pdf

PAGES = ["Quokkas live on Rottnest Island.", "The axolotl regrows a lost limb.", "Lighthouses guide ships."]


@pytest.fixture
def folder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    return docs


class CountingEmbedder:
    """An embedder that says what it was asked: the texts of each call and the batch size it was
    told to run them in (as the embedded model takes one). Its vectors: a text's length, one-hot."""

    model_id = "counting-test-embedder"

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def encode(self, texts: list[str], batch: int = 64) -> np.ndarray:
        self.calls.append((len(texts), batch))
        out = np.zeros((len(texts), 8), np.float32)
        out[np.arange(len(texts)), [len(t) % 8 for t in texts]] = 1.0
        return out


def indexing(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "indexing"]


def test_a_folders_first_index_says_each_file_it_reads_and_its_vectors(folder):
    """Each file read is said in order, counted against the files to read, with the pages read so
    far; then the vectors: building, encoded, built. A second search of the same folder reads
    nothing again and says nothing."""
    from deepresearch.embeddings.registry import embedder_for

    pdf(folder / "Report.pdf", PAGES, title="Annual Report on Animals")
    (folder / "notes.md").write_text("Tomatoes need sun.\n")
    events: list[dict] = []
    with forwarded_to(events.append):
        DocsSearch(folder, embedder=embedder_for("local")).search("axolotl", 1)
    said = [(e["status"], e.get("files"), e.get("of"), e.get("pages"), e.get("file")) for e in indexing(events)]
    assert said[:2] == [("reading", 1, 2, 3, "Report.pdf"), ("reading", 2, 2, 4, "notes.md")]
    vectors = [(e["status"], e.get("done"), e["items"]) for e in indexing(events)[2:]]
    assert vectors == [("building", None, 4), ("encoding", 4, 4), ("built", None, 4)]  # three pages and a passage
    again: list[dict] = []
    with forwarded_to(again.append):
        DocsSearch(folder, embedder=embedder_for("local")).search("axolotl", 1)
    assert indexing(again) == []


def test_only_the_files_that_changed_are_counted(folder):
    for name in ("a", "b", "c"):
        (folder / f"{name}.md").write_text(f"Notes {name}: tomatoes need sun.\n")
    DocsSearch(folder)
    (folder / "b.md").write_text("Notes b, changed: peppers need sun too.\n")
    events: list[dict] = []
    with forwarded_to(events.append):
        DocsSearch(folder)
    assert [(e["files"], e["of"], e["file"]) for e in indexing(events)] == [(1, 1, "b.md")]


def test_vectors_are_encoded_a_chunk_at_a_time_in_small_batches(folder):
    """Hundreds of passages: encoded ENCODE_CHUNK at a time (an event after each, counting up to
    the total), each chunk run through the model ENCODE_BATCH texts at once."""
    paragraph = "Harbour pilots guide ferries past the granite reef at dawn. " * 15  # about 900 characters
    for f in range(3):
        (folder / f"log{f}.txt").write_text("\n\n".join(f"Entry {f}.{n}. {paragraph}" for n in range(200)))
    embedder = CountingEmbedder()
    events: list[dict] = []
    with forwarded_to(events.append):
        search = DocsSearch(folder, embedder=embedder)
        search.search("granite reef", 1)
    units = search.index.size
    assert units == 600
    encoded = [e["done"] for e in indexing(events) if e["status"] == "encoding"]
    assert encoded == [*range(ENCODE_CHUNK, units, ENCODE_CHUNK), units]
    assert {e["items"] for e in indexing(events) if e["status"] != "reading"} == {units}
    assert sum(n for n, _ in embedder.calls[:-1]) == units  # the last call: the query's vector
    assert all(n <= ENCODE_CHUNK and batch == ENCODE_BATCH for n, batch in embedder.calls[:-1])


def test_an_embedder_that_takes_no_batch_size_is_called_as_it_is(folder):
    class Plain:
        model_id = "plain-test-embedder"

        def encode(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 4), np.float32) / 2

    (folder / "notes.md").write_text("Tomatoes need sun.\n")
    assert DocsSearch(folder, embedder=Plain()).search("tomatoes", 1)[0].meta["file"] == "notes.md"


def test_the_cli_says_how_far_indexing_got_and_draws_it_as_a_bar():
    reading = {
        "type": "indexing",
        "index": "the documents in base",
        "status": "reading",
        "files": 12,
        "of": 89,
        "pages": 340,
        "file": "fntguide.pdf",
    }
    encoding = {"type": "indexing", "index": "the vectors of the documents in base", "status": "encoding"}
    encoding |= {"done": 512, "items": 2048}
    assert describe_event(reading) == "reading the documents in base: 12/89 files, 340 pages"
    assert describe_event(encoding) == "encoding the vectors of the documents in base: 512/2048 texts"
    assert counted(reading) == (12, 89) and counted(encoding) == (512, 2048)
    assert counted({"type": "indexing", "status": "built", "items": 3}) is None
    assert counted({"type": "searching", "files": 1, "of": 2}) is None

    def drawn(event: dict) -> str:
        console = Console(file=io.StringIO(), width=120, color_system=None, legacy_windows=False)
        console.print(shown(describe_event(event), event))
        return console.file.getvalue()  # type: ignore[attr-defined]

    bar = drawn(encoding).split(" encoding")[0].strip()
    assert bar and set(bar) <= set("━╸╺") and "1/4" not in bar  # a quarter of the bar drawn
    assert len(bar.rstrip("╸")) in range(5, 8)  # 24 cells wide: a quarter is 6
    assert drawn({**encoding, "done": 2048}).count("━") == 24
    assert "━" not in drawn({"type": "started", "question": "[bold]x"})
    assert "[bold]x" in drawn({"type": "started", "question": "[bold]x"})  # as written: no markup


def test_lines_without_a_terminal_carry_the_counts(folder):
    """Piped (no terminal): a plain line per event, each with its counts."""
    (folder / "a.md").write_text("Tomatoes need sun.\n")
    (folder / "b.md").write_text("Peppers need sun.\n")
    out = io.StringIO()
    progress = Progress(stream=out)
    with forwarded_to(progress):
        DocsSearch(folder)
    lines = out.getvalue().splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == [
        "reading the documents in docs: 1/2 files, 1 pages",
        "reading the documents in docs: 2/2 files, 2 pages",
    ]
