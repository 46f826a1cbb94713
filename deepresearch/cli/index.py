"""`deepresearch index`: encode the offline encyclopedia's summaries once, at set-up (`make install`
and `make demo` run it), so that a first question does not wait for them. Until they exist a run
searches the encyclopedia by its words alone and says so.

`build_index(progress=True)` is the routine itself, for other set-up commands to call."""

from __future__ import annotations

import argparse
import sys
import time

from deepresearch.cli.common import EXIT_FAILED, EXIT_OK, _Parser


def index_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="deepresearch index",
        description="Encode the offline encyclopedia's summaries for search by meaning (once; later runs reuse them).",
    )
    p.add_argument(
        "--embeddings",
        default="auto",
        help="the embedder: auto or local (default), local-int8 (int8 weights: faster, ranks a little "
        "differently), or openai:<model>, ...",
    )
    p.add_argument("--embeddings-base-url", metavar="URL", help="an OpenAI-compatible /embeddings server")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def build_index(progress: bool = True, embeddings: str = "auto", base_url: str | None = None) -> dict:
    """Build the encyclopedia's vectors by the embedder `embeddings` (the local model by default),
    with a progress bar on stderr when `progress`. Returns {"status": "built" | "present" |
    "unavailable", "items", "seconds", "reason"}; never raises for a missing model."""
    from deepresearch.embeddings import minilm
    from deepresearch.embeddings.registry import embedder_for
    from deepresearch.tools.wiki import WikiSearch

    try:
        embedder = embedder_for(embeddings, base_url)
    except (ValueError, minilm.EmbeddingsUnavailable) as e:
        return {"status": "unavailable", "reason": str(e)}
    if embedder is None:
        reason = "--embeddings none ranks by words alone" if embeddings == "none" else minilm.MISSING
        return {"status": "unavailable", "reason": reason}
    wiki = WikiSearch(embedder=embedder)
    if wiki.vectors_ready():
        return {"status": "present", "items": len(wiki.articles), "path": str(wiki.vectors_path())}
    started = time.monotonic()
    if not progress:
        wiki.build_vectors()
    else:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
            task = bar.add_task("encoding the encyclopedia", total=len(wiki.articles))
            wiki.build_vectors(on_progress=lambda done, total: bar.update(task, completed=done, total=total))
    return {"status": "built", "items": len(wiki.articles), "seconds": round(time.monotonic() - started, 1)}


def cmd_index(argv: list[str]) -> int:
    args = index_parser().parse_args(argv)
    done = build_index(progress=not args.quiet, embeddings=args.embeddings, base_url=args.embeddings_base_url)
    if done["status"] == "unavailable":
        print(f"deepresearch: nothing encoded: {done['reason']}", file=sys.stderr)
        return EXIT_FAILED
    if done["status"] == "present":
        print(f"the encyclopedia's vectors are built already ({done['items']:,} summaries)", file=sys.stderr)
    else:
        print(f"encoded the encyclopedia: {done['items']:,} summaries in {done['seconds']} s", file=sys.stderr)
    return EXIT_OK
