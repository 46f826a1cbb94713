"""`deepresearch edit` end to end: a run made by the CLI (without
`edit_after_report`) is edited through the graph's report_feedback node and checkpointed on
the same thread; bad requests exit 2 with one line; an edit cut off by a kill is finished
by `deepresearch resume`. The model is the OpenAI stub over HTTP."""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.fakes import editor, paragraph_writer
from tests.helpers import Running, citations_resolve, cli, copy_database, finished_cli_run, one_line_error
from tests.stub_openai import StubOpenAI

KEY = "sk-test-0123456789abcdef"


@pytest.fixture(scope="module")
def module_stub():
    slow = {"seconds": 0.0}
    with StubOpenAI(editor(paragraph_writer()), latency=lambda n: slow["seconds"]) as s:
        s.slow = slow
        yield s


@pytest.fixture
def stub(module_stub):
    """The module's stub, answering as it did for the finished run, and at once (a test before
    this one may have changed both)."""
    module_stub.respond = editor(paragraph_writer())
    module_stub.slow["seconds"] = 0.0
    return module_stub


@pytest.fixture(scope="module")
def finished_once(module_stub, tmp_path_factory):
    """One finished CLI run on thread ed-1, for the module: (db, report)."""
    return finished_cli_run(module_stub, tmp_path_factory.mktemp("finished"), KEY, "ed-1")


@pytest.fixture
def finished(finished_once, stub, cli_env, tmp_path):
    """The finished run on a copy of its database for one test: (env, db, report)."""
    cli_env["OPENAI_API_KEY"] = KEY
    source, report = finished_once
    return cli_env, copy_database(source, str(tmp_path / "runs.sqlite")), report


def body(report: str) -> str:
    return report[: report.rindex("\n\n## Sources\n")]


def first_cited_sentence(report: str, k: int = 0) -> str:
    para = [p for p in body(report).split("\n\n") if "[" in p and not p.startswith("#")][k]
    return re.split(r"(?<=\]\.)\s+", para)[0]


def threads(env, db) -> dict:
    r = cli(["threads", "--db", db, "--json"], env)
    assert r.returncode == 0, r.stderr
    return {t["thread_id"]: t["status"] for t in json.loads(r.stdout)}


def test_edit_a_finished_run_from_the_cli(finished, tmp_path):
    env, db, report = finished
    assert threads(env, db) == {"ed-1": "editable"}
    text = first_cited_sentence(report)
    r = cli(["edit", "ed-1", "polish", "--select", text, "--db", db, "--json"], env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    change = out["last_change"]
    start = report.index(text)
    assert (change["action"], change["start"], change["end"]) == ("polish", start, start + len(text))
    assert body(out["report"])[:start] == body(report)[:start]
    assert body(out["report"])[change["new_end"] :] == body(report)[start + len(text) :]
    assert "In short, " in out["report"] and citations_resolve(out)
    assert [h["action"] for h in out["rewrite_history"]] == ["polish"]
    assert KEY not in r.stdout + r.stderr

    # the second edit by offsets, on the report as the first edit left it; written to a file
    new = out["report"]
    text2 = first_cited_sentence(new, 1)
    s2 = new.index(text2)
    target = tmp_path / "edited.md"
    r = cli(["edit", "ed-1", "fact_check", "--start", s2, "--end", s2 + len(text2), "--db", db, "-o", target], env)
    assert r.returncode == 0, r.stderr and r.stdout == ""
    checked = target.read_text()
    assert checked == new  # a supported sentence: the text is unchanged

    # the person's own edit (sync): their file becomes the report, citations traced again
    mine = tmp_path / "mine.md"
    mine.write_text(checked.replace(text2, "", 1).replace("# Report", "# My report", 1))
    r = cli(["edit", "ed-1", "sync", "--file", mine, "--db", db, "--json"], env)
    assert r.returncode == 0, r.stderr
    synced = json.loads(r.stdout)
    assert synced["report"].startswith("# My report\n") and text2 not in synced["report"]
    assert citations_resolve(synced)
    assert [h["action"] for h in synced["rewrite_history"]] == ["polish", "fact_check", "sync"]

    # finish: the run ends, still listed and still editable later (edits left)
    r = cli(["edit", "ed-1", "finish", "--db", db, "--quiet"], env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# My report\n")
    assert threads(env, db) == {"ed-1": "editable"}
    r = cli(["resume", "ed-1", "--db", db, "--json"], env)
    assert r.returncode == 0 and json.loads(r.stdout)["report"] == synced["report"]


def test_bad_edit_requests_exit_2_with_one_line(finished, tmp_path):
    env, db, report = finished
    cases = [
        (["edit", "ed-1", "polish", "--select", "words that are not in the report"], "not in the report"),
        (["edit", "ed-1", "polish", "--select", "Tower"], "more than once"),
        (["edit", "ed-1", "sync", "--file", str(tmp_path / "missing.md")], "missing.md"),
        (["edit", "no-such-thread", "finish"], "unknown thread"),
    ]
    for args, words in cases:
        r = cli(args + ["--db", db], env)
        assert words in one_line_error(r), (args, r.stderr)
        assert r.stdout == ""
    r = cli(["resume", "ed-1", "--db", db, "--json"], env)
    assert json.loads(r.stdout)["report"] == report and "rewrite_history" not in json.loads(r.stdout)


def test_a_failed_rewrite_says_so_and_repeats_nothing(finished, stub):
    """A model whose rewrites are no use: expand falls back to sentences the report does not
    have (exit 0, a notice says so), polish is refused (exit 1, the report unchanged)."""
    env, db, report = finished
    stub.respond = editor(
        paragraph_writer(),
        rewrite=lambda instruction, passage, ids: (
            passage[:15] if "twice as long" in instruction else "The moon is made of cheese."
        ),
    )
    text = first_cited_sentence(report)
    r = cli(["edit", "ed-1", "expand", "--select", text, "--db", db, "--json"], env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    # the notice says why the rewrite was not used (the fragment, once checked, added nothing usable)
    assert re.search(r"expand: [^\n]+: the sources' own sentences were added instead", r.stderr), r.stderr
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", re.sub(r"\[\d+\]", "", body(out["report"]))) if s.strip()]
    assert len(sentences) == len(set(sentences)) and len(body(out["report"])) > len(body(report))
    r = cli(["edit", "ed-1", "polish", "--select", first_cited_sentence(out["report"], 1), "--db", db, "--json"], env)
    assert r.returncode == 1 and r.stdout == ""
    assert "polish not done: " in r.stderr and "the report is unchanged" in r.stderr


def test_an_edit_survives_a_kill_and_resume(finished, stub):
    env, db, report = finished
    text = first_cited_sentence(report)
    stub.slow["seconds"] = 60.0  # the rewrite call hangs until the process is killed
    n = len(stub.requests)
    p = Running(["edit", "ed-1", "expand", "--select", text, "--db", db], env)
    try:
        p.wait_for(r"editing: expand")
        deadline = time.monotonic() + 60
        while len(stub.requests) == n and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(stub.requests) == n + 1  # the rewrite call is in flight
        p.kill()
    finally:
        p.close()
    stub.slow["seconds"] = 0.0
    r = cli(["resume", "ed-1", "--db", db, "--json"], env)
    assert r.returncode == 0, r.stderr
    assert "finishing the edit" in r.stderr
    out = json.loads(r.stdout)
    assert [h["action"] for h in out["rewrite_history"]] == ["expand"]
    change = out["rewrite_history"][0]
    assert body(out["report"])[: change["start"]] == body(report)[: change["start"]]
    assert body(out["report"])[change["new_end"] :] == body(report)[change["end"] :]
    assert len(body(out["report"])) > len(body(report)) and citations_resolve(out)
    assert len(stub.requests) == n + 2  # the cut-off call, and the one that made the edit
