"""The codebase checks itself: ruff (lint and format) and mypy report nothing on it.

Each runs as `make lint` runs it, from the virtualenv running the tests; a finding fails the test
with the checker's own output. mypy runs through tests/typecheck.py (the package laid out as
Python imports it) and is strict in nodes/ and graphs/: a node declared `state: dict` is a finding.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.typecheck import ROOT
from tests.typecheck import run as run_mypy

pytestmark = pytest.mark.no_index  # searches nothing: runs while the session builds the index (tests/conftest.py)

BIN = Path(sys.executable).parent


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, (
        f"{' '.join(map(str, done.args))} (exit {done.returncode}):\n{done.stdout}{done.stderr}"
    )


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "ruff"), *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_lint_finds_nothing():
    _clean(_ruff("check", "."))


def test_ruff_format_changes_nothing():
    _clean(_ruff("format", "--check", "."))


def test_mypy_finds_nothing():
    done = run_mypy([])
    _clean(done)
    assert "Success: no issues found" in done.stdout
