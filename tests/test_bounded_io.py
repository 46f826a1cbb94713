"""Issue 27, items 5, 6, 7 and 11: what the CLI reads is bounded, malformed input is refused
with one line, and two commands on one thread do not lose each other's work.

- item 5: a docs folder nested 1,500 levels deep is searched (no RecursionError);
- item 6: every file the CLI reads (`edit --file`, `--template`, a `template` sample, `--mcp`,
  `.env`, docs files) is a regular file read up to its limit: /dev/zero and a FIFO nobody
  writes to are refused at once with one line (exit 2), never read to their end or waited on;
- item 7: `resume --answer` with a 5,000-digit integer or nesting past the parser's stack, and
  an `--mcp` config nested 50,000 levels, are bad input (exit 2, one line); an outline
  replacement whose `depends_on` holds integers past 64 bits has them dropped with
  `dependency_dropped` events;
- item 11: two `deepresearch edit` of one thread at once both land, in turn.

The CLI runs in subprocesses against the OpenAI stub on 127.0.0.1. A command that would hang
(reading a FIFO) is caught by the subprocess timeout: a failure, not a hung suite.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import time

import pytest

from deepresearch.files import FileReadError, read_bytes, walk_files
from tests.fakes import editor, paragraph_writer, researcher
from tests.helpers import QUESTION, Running, citations_resolve, cli, one_line_error
from tests.stub_openai import StubOpenAI

KEY = "sk-test-bounded-0123456789abcdef"
HANG = 120  # seconds: only a command that waits on a FIFO ever gets near it


def stub_run(stub, db, *extra) -> list[str]:
    return [QUESTION, "--mode", "iterative", "--model", "openai:stub", "--base-url", stub.base_url,
            "--max-iterations", "1", "--db", str(db), *map(str, extra)]


@pytest.fixture
def env(cli_env):
    cli_env["OPENAI_API_KEY"] = KEY
    return cli_env


@pytest.fixture
def fifo(tmp_path):
    """A named pipe nobody writes to: opening it to read blocks, reading it never ends."""
    path = tmp_path / "pipe.md"
    os.mkfifo(path)
    return path


# --- item 5: a folder nested 1,500 levels deep --------------------------------------------------

def deep_folder(root, levels: int):
    """root/d/d/.../d (levels deep) with a document at the bottom; made with relative mkdir
    calls (the whole path is long, each step is short)."""
    here = os.getcwd()
    os.makedirs(root, exist_ok=True)
    os.chdir(root)
    try:
        for _ in range(levels):
            os.mkdir("d")
            os.chdir("d")
        with open("eiffel.md", "w", encoding="utf-8") as f:
            f.write("The Eiffel Tower was designed by the engineer Gustave Eiffel for the World's Fair of 1889.\n")
    finally:
        os.chdir(here)


def remove_deep_folder(root, levels: int):
    """Remove what deep_folder made, bottom up, without recursion (pytest's own clean-up of
    old temporary folders, shutil.rmtree, recurses and would fail on it)."""
    here = os.getcwd()
    os.chdir(root)
    try:
        for _ in range(levels):
            os.chdir("d")
        for name in os.listdir("."):
            os.unlink(name)
        for _ in range(levels):
            os.chdir("..")
            os.rmdir("d")
    finally:
        os.chdir(here)


@pytest.fixture
def deep_docs(tmp_path):
    docs = tmp_path / "docs"
    deep_folder(docs, 1500)
    yield docs
    remove_deep_folder(docs, 1500)


def test_a_docs_folder_nested_1500_levels_deep_is_searched(env, tmp_path, deep_docs):
    docs = deep_docs
    found = list(walk_files(docs))  # no recursion: no depth fails it
    assert len(found) == 1 and found[0].relative_to(docs).parts == ("d",) * 1500 + ("eiffel.md",)
    with StubOpenAI(researcher()) as stub:
        r = cli(stub_run(stub, tmp_path / "runs.sqlite", "--search", f"docs:{docs}", "--json"), env)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    # the one document at the bottom is the report's source (its URI and title are cut at the
    # documented 2,048 and 300 characters)
    assert [(s["backend"], s["url"][:7]) for s in out["sources"]] == [("docs", "file://")]
    assert "Gustave Eiffel" in body(out["report"]) and "[1]" in body(out["report"])


# --- item 6: bounded reads, special files refused -------------------------------------------------

def test_the_reader_refuses_special_files_and_bounds_regular_ones(tmp_path, fifo):
    for special, kind in (("/dev/zero", "a device"), (fifo, "a FIFO"), (tmp_path, "a directory")):
        with pytest.raises(FileReadError, match=kind):
            read_bytes(special, 1000)
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * 1001)
    with pytest.raises(FileReadError, match="larger than 1,000 bytes"):
        read_bytes(big, 1000)
    assert read_bytes(big, 1000, truncate=True) == b"x" * 1000
    assert read_bytes(big, 1001) == b"x" * 1001
    # a file whose size the system reports as 0 is bounded all the same
    assert len(read_bytes("/proc/self/maps", 10, truncate=True)) == 10


def test_template_sample_and_mcp_config_that_are_special_files_are_refused(env, tmp_path, fifo):
    cases = [(["template", "/dev/zero"], "a device, not a regular file"),
             (["template", fifo], "a FIFO"),
             ([QUESTION, "--template", fifo, "--db", tmp_path / "runs.sqlite"], "a FIFO"),
             (["tools", "--mcp", fifo], "a FIFO"),
             (["tools", "--mcp", "/dev/zero"], "a device"),
             ([QUESTION, "--mcp", fifo, "--db", tmp_path / "runs.sqlite"], "a FIFO")]
    for args, words in cases:
        r = cli(args, env, timeout=HANG)
        assert words in one_line_error(r), (args, r.stderr)
    assert not (tmp_path / "runs.sqlite").exists()  # refused before any work
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"mcpServers": {"x": {"command": "true", "args": ["a" * 1_000_000]}}}))
    assert "larger than 1 MB" in one_line_error(cli(["tools", "--mcp", big], env))


def test_a_dotenv_that_is_a_fifo_is_refused_not_waited_on(env, tmp_path):
    os.mkfifo(tmp_path / ".env")  # the CLI reads ./.env of its working directory (HOME here)
    r = cli(["threads", "--db", tmp_path / "none.sqlite"], env, timeout=HANG)
    assert "./.env cannot be read (a FIFO (named pipe), not a regular file)" in one_line_error(r)
    os.unlink(tmp_path / ".env")
    (tmp_path / ".env").write_text("DEEPRESEARCH_PROBE=1\n")  # a regular one is read as before
    r = cli(["threads", "--db", tmp_path / "none.sqlite"], env)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_docs_files_that_are_special_are_skipped(tmp_path, fifo):
    from deepresearch.tools.docs import DocsSearch

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "eiffel.md").write_text("The Eiffel Tower was designed by Gustave Eiffel.\n")
    os.symlink("/dev/zero", docs / "zero.md")
    os.rename(fifo, docs / "pipe.md")
    search = DocsSearch(docs)
    assert [p.name for p in search.files] == ["eiffel.md"]
    assert sorted(s.rsplit("/", 1)[1] for s in search.skipped) == [
        "pipe.md: a FIFO (named pipe), not a regular file", "zero.md: a device, not a regular file"]


# --- the edit tests share one finished run ---------------------------------------------------------

class Hold:
    """The stub's latency: the request numbered `at` (the first edit's model call) is held until
    `release` is set or another request arrives (a second edit running alongside); others go
    at once."""

    def __init__(self):
        self.at = None
        self.release = threading.Event()
        self.stub = None

    def __call__(self, n: int) -> float:
        if n == self.at:
            for _ in range(2400):  # a cap (120 s) only for a broken run; released long before
                if self.release.is_set() or len(self.stub.requests) > n + 1:
                    break
                time.sleep(0.05)
        return 0.0


@pytest.fixture
def edit_stub():
    hold = Hold()
    with StubOpenAI(editor(paragraph_writer()), latency=hold) as s:
        hold.stub = s
        s.hold = hold
        yield s


@pytest.fixture
def finished(edit_stub, env, tmp_path):
    """A finished CLI run on thread io-1: (db, report)."""
    db = str(tmp_path / "runs.sqlite")
    r = cli(stub_run(edit_stub, db, "--thread-id", "io-1"), env)
    assert r.returncode == 0, r.stderr
    return db, r.stdout


def body(report: str) -> str:
    return report[: report.rindex("\n\n## Sources\n")]


def cited_sentence(report: str, k: int) -> str:
    para = [p for p in body(report).split("\n\n") if "[" in p and not p.startswith("#")][k]
    return re.split(r"(?<=\]\.)\s+", para)[0]


def stored(env, db) -> dict:
    r = cli(["resume", "io-1", "--db", db, "--json"], env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_edit_sync_file_that_is_a_device_a_fifo_or_too_large_is_refused(env, finished, tmp_path, fifo):
    db, report = finished
    big = tmp_path / "big.md"
    big.write_bytes(b"a" * 4_000_001)
    for path, words in (("/dev/zero", "a device, not a regular file"), (fifo, "a FIFO (named pipe)"),
                        (big, "larger than 4 MB")):
        r = cli(["edit", "io-1", "sync", "--file", path, "--db", db], env, timeout=HANG)
        assert words in one_line_error(r), r.stderr
        assert r.stdout == ""
    assert stored(env, db)["report"] == report  # nothing was written


# --- item 7: malformed answers and configs --------------------------------------------------------

def test_answers_and_mcp_configs_past_the_parsers_limits_are_bad_input(env, tmp_path):
    db = tmp_path / "none.sqlite"
    cases = [('{"action": "accept", "round": ' + "7" * 5000 + "}", "a number with too many digits"),
             ("[" * 30_000 + "]" * 30_000, "nested too deeply"),
             ('{"action": "replace", "outline": ' + '{"a": ' * 200 + "1" + "}" * 201, "nested too deeply")]
    for answer, words in cases:
        r = cli(["resume", "some-thread", "--answer", answer, "--db", db], env)
        assert words in one_line_error(r), r.stderr[-500:]
    nested = tmp_path / "nested.json"
    nested.write_text('{"mcpServers": ' + "[" * 50_000 + "]" * 50_000 + "}")
    digits = tmp_path / "digits.json"
    digits.write_text('{"mcpServers": {"x": {"command": "true", "cwd": ' + "9" * 5000 + "}}}")
    for config, words in ((nested, "nested too deeply"), (digits, "a number with too many digits")):
        for args in (["tools", "--mcp", config], [QUESTION, "--mcp", config, "--db", db]):
            assert words in one_line_error(cli(args, env)), args
    assert not db.exists()


def test_huge_integers_in_a_replacement_outlines_dependencies_are_dropped(env, tmp_path):
    from tests.deep_helpers import deep_args, deep_responder

    db = tmp_path / "runs.sqlite"
    with StubOpenAI(deep_responder(2)) as stub:
        r = cli(deep_args(stub, db, "--outline", "dependent", "--review", "--sections", "2", "--thread-id", "dep-1",
                          "--max-iterations", "1"), env, input="")
        assert r.returncode == 0, r.stderr[-2000:]
        assert "resume" in r.stderr and r.stdout == ""  # left waiting for the review
        huge = 10 ** 40
        answer = {"action": "replace", "outline": {"title": "My tower report", "sections": [
            {"title": "Engineer", "key_question": "Who was Gustave Eiffel?"},
            {"title": "Paris", "key_question": "What is Paris known for?", "depends_on": [huge, -huge, 0, 2 ** 64]}]}}
        r = cli(["resume", "dep-1", "--db", db, "--answer", json.dumps(answer), "--json"], env, input="a\n")
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert [s["title"] for s in out["outline"]["sections"]] == ["Engineer", "Paris"]
    assert out["outline"]["sections"][1]["depends_on"] == [0]
    dropped = [line for line in r.stderr.splitlines() if "no such section; dropped" in line]
    assert len(dropped) == 3 and str(huge) in dropped[0], r.stderr[-2000:]


# --- item 11: two edits of one thread at once ------------------------------------------------------

def test_two_edits_of_one_thread_at_once_both_land(env, finished, edit_stub):
    db, report = finished
    first, second = cited_sentence(report, 0), cited_sentence(report, 1)
    edit_stub.hold.at = len(edit_stub.requests)  # the first edit's model call waits for the second edit
    a = Running(["edit", "io-1", "expand", "--select", first, "--db", db, "--json"], env)
    b = None
    try:
        a.wait_for(r"editing thread io-1: expand")
        while len(edit_stub.requests) <= edit_stub.hold.at:  # a's rewrite call is in flight
            a._drain(0.05)
        b = Running(["edit", "io-1", "expand", "--select", second, "--db", db, "--json"], env)
        b.wait_for(r"waiting for it to finish|editing thread io-1")  # b waits, or (unserialized) edits too
        edit_stub.hold.release.set()
        assert a.wait() == 0, a.text
        assert b.wait() == 0, b.text
        out_a, out_b = json.loads(a.proc.stdout.read()), json.loads(b.proc.stdout.read())
    finally:
        edit_stub.hold.release.set()
        a.close()
        if b is not None:
            b.close()
    final = stored(env, db)
    assert [h["action"] for h in final["rewrite_history"]] == ["expand", "expand"]
    assert "is being changed by another command; waiting for it to finish" in b.text
    assert [h["action"] for h in out_a["rewrite_history"]] == ["expand"]
    assert out_b["report"] == final["report"]  # the report printed as edited is the one stored
    # the second edit was made on the report as the first left it: both expansions are there
    assert len(body(final["report"])) > len(body(out_a["report"])) > len(body(report))
    kept = body(out_a["report"])[: out_a["rewrite_history"][0]["new_end"]]
    assert body(final["report"]).startswith(kept) and citations_resolve(final)


def test_a_resume_or_an_offsets_edit_during_an_edit_waits_for_it(env, finished, edit_stub):
    """`resume` of a thread whose edit is in progress waits instead of making the saved edit a
    second time; an edit given only offsets is refused after the wait (they may point elsewhere)."""
    db, report = finished
    first, second = cited_sentence(report, 0), cited_sentence(report, 1)
    start = report.index(second)
    n = edit_stub.hold.at = len(edit_stub.requests)
    a = Running(["edit", "io-1", "expand", "--select", first, "--db", db, "--json"], env)
    others = []
    try:
        a.wait_for(r"editing thread io-1: expand")
        while len(edit_stub.requests) <= n:
            a._drain(0.05)
        others = [Running(["resume", "io-1", "--db", db, "--json"], env),
                  Running(["edit", "io-1", "shorten", "--start", start, "--end", start + len(second), "--db", db],
                          env)]
        for p in others:  # each waits, or (unserialized) goes on at once
            p.wait_for(r"waiting for it to finish|finishing the edit|editing thread io-1|the run failed")
        edit_stub.hold.release.set()
        assert a.wait() == 0, a.text
        statuses = [p.wait() for p in others]
        out_a, out_resume = json.loads(a.proc.stdout.read()), json.loads(others[0].proc.stdout.read())
    finally:
        edit_stub.hold.release.set()
        for p in (a, *others):
            p.close()
    assert statuses == [0, 2], [p.text for p in others]
    assert len(edit_stub.requests) == n + 1  # the edit's one model call: made once
    assert "waiting for it to finish" in others[0].text and "waiting for it to finish" in others[1].text
    assert "edited by another command while this one waited" in others[1].text.strip().splitlines()[-1]
    assert [h["action"] for h in out_resume["rewrite_history"]] == ["expand"]
    assert out_resume["report"] == out_a["report"] == stored(env, db)["report"]


# --- more of the same kind: prompts read their input a bounded line at a time ---------------------

class EndlessLine:
    """stdin that never sends a newline (`/dev/zero`, `tr -d '\\n' < big`): a read without a
    bound would never return."""

    def __init__(self):
        self.asked: list[int] = []

    def readline(self, size: int = -1) -> str:
        assert size >= 0, "an unbounded readline"
        self.asked.append(size)
        return "a" * size


class ManyRows(io.StringIO):
    """stdin that answers `e` (edit the outline) and then types 40,000 outline rows (1.4 MB)."""

    def __init__(self):
        super().__init__("e\n# My outline\n")
        self.rows = 0

    def readline(self, size: int = -1) -> str:
        line = super().readline(size)
        if line or self.rows == 40_000:
            return line
        self.rows += 1
        return f"- Section {self.rows:05} :: what is it?\n"


def test_review_and_clarify_prompts_read_bounded_lines():
    from deepresearch.clarifying import ask_clarify
    from deepresearch.files import MAX_LINE_CHARS
    from deepresearch.review import ask

    outline = {"title": "T", "sections": [{"title": "A", "key_question": "A?"}]}
    for prompt, value in ((ask, {"outline": outline, "round": 1, "max_rounds": 2}),
                          (ask_clarify, {"questions": ["Which tower?"], "round": 1, "max_rounds": 2})):
        stdin = EndlessLine()
        assert prompt(value, stdin=stdin, stderr=io.StringIO()) is None  # as at the end of input: left waiting
        assert stdin.asked == [MAX_LINE_CHARS + 1]
    stdin, err = ManyRows(), io.StringIO()
    assert ask({"outline": outline, "round": 1, "max_rounds": 2}, stdin=stdin, stderr=err) is None
    assert "not used: an outline is at most 1,000,000 characters" in err.getvalue()


def test_edits_of_one_thread_on_postgres_serialize_across_machines(postgres_url, tmp_path):
    """On PostgreSQL the lock is the server's (an advisory lock): two commands that share no
    cache directory (two machines) still take turns."""
    import queue

    from deepresearch.thread_lock import thread_lock

    holder_env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "machine-a")}
    code = ("import sys\nfrom deepresearch.thread_lock import thread_lock\n"
            "with thread_lock(sys.argv[1], 'pg-edit-1'):\n    print('held', flush=True)\n    sys.stdin.read()\n")
    holder = subprocess.Popen([sys.executable, "-c", code, postgres_url], env=holder_env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=str(tmp_path))
    events: queue.Queue = queue.Queue()
    try:
        assert holder.stdout.readline() == "held\n"
        os.environ["XDG_CACHE_HOME"], before = str(tmp_path / "machine-b"), os.environ["XDG_CACHE_HOME"]
        try:
            def second():
                with thread_lock(postgres_url, "pg-edit-1", on_wait=lambda: events.put("waiting")):
                    events.put("acquired")

            t = threading.Thread(target=second)
            t.start()
            assert events.get(timeout=60) == "waiting"
            holder.stdin.close()  # the first command ends: its session, and the lock, go
            assert holder.wait(timeout=60) == 0
            assert events.get(timeout=60) == "acquired"
            t.join(timeout=60)
        finally:
            os.environ["XDG_CACHE_HOME"] = before
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=30)
