"""input, storage and exit statuses a script can trust.

The CLI runs in subprocesses against a stub of the OpenAI API on 127.0.0.1; the stub's
request log shows whether any work was done before a refusal.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakes import researcher
from tests.stub_openai import StubOpenAI

QUESTION = "Who built the Eiffel Tower, and for which event?"
KEY = "sk-test-input-0123456789abcdef"
CLI = [sys.executable, "-m", "deepresearch.cli"]


def cli(args, env, *, input="", timeout=300, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, *args],
        env=env,
        cwd=env["HOME"],
        input=input,
        capture_output=True,
        timeout=timeout,
        text=not any(isinstance(a, bytes) for a in args),
        **kw,
    )


def one_line(r, status=2) -> str:
    err = r.stderr if isinstance(r.stderr, str) else r.stderr.decode("utf-8", "replace")
    assert r.returncode == status, (r.returncode, r.stdout, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def stub_args(stub, db, *extra) -> list[str]:
    return [
        "--mode",
        "iterative",
        "--model",
        "openai:stub",
        "--base-url",
        stub.base_url,
        "--max-iterations",
        "1",
        "--db",
        str(db),
        *extra,
    ]


@pytest.fixture
def env(cli_env):
    cli_env["OPENAI_API_KEY"] = KEY
    return cli_env


@pytest.fixture
def stub():
    with StubOpenAI(researcher()) as s:
        yield s


# --- item 8: text that is not UTF-8 ---------------------------------------------------


def test_a_question_that_is_not_utf8_is_bad_input_before_any_work(env, stub, tmp_path):
    db = tmp_path / "runs.sqlite"
    r = cli([b"bees \xff navigate?", *stub_args(stub, db)], env)
    assert "the question is not valid UTF-8 text" in one_line(r)
    assert stub.requests == [] and not db.exists()  # no model call, no search, no database
    r = cli([QUESTION, *stub_args(stub, db, "--thread-id", "two\nlines")], env)
    assert "--thread-id must not contain control characters" in one_line(r)
    assert stub.requests == [] and not db.exists()


def test_a_docs_file_whose_name_is_not_utf8_is_read_and_shown_safely(env, stub, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for raw, text in (
        (b"a\xe9.md", "The Eiffel Tower was designed by the engineer Gustave Eiffel."),
        (b"a\xe8.md", "The Eiffel Tower was built for the World's Fair of 1889."),
    ):
        with open(os.path.join(os.fsencode(docs), raw), "w", encoding="utf-8") as f:
            f.write(text + "\n")
    r = cli([QUESTION, *stub_args(stub, tmp_path / "runs.sqlite", "--search", f"docs:{docs}", "--json")], env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    by_title = {s["title"]: s for s in out["sources"]}
    assert {"a\\xe9.md", "a\\xe8.md"} <= set(by_title), out["sources"]
    # two files, two sources: their references keep the names' bytes (lossless)
    assert by_title["a\\xe9.md"]["url"].endswith("/a%E9.md") and by_title["a\\xe8.md"]["url"].endswith("/a%E8.md")
    assert by_title["a\\xe9.md"]["file"].endswith("docs/a\\xe9.md")
    # shown as inert text (a code span holding its `file` field); never a file: link
    shown = by_title["a\\xe9.md"]["file"]
    assert f"file `{shown}`" in out["report"] and "file:" not in out["report"]


# --- item 9: budgets are finite positive numbers ---------------------------------------


@pytest.mark.parametrize(
    "option,value,message",
    [
        ("--max-seconds", "nan", "must be a finite number"),
        ("--max-seconds", "inf", "must be a finite number"),
        ("--max-seconds", "-inf", "must be a finite number"),
        ("--max-seconds", "1e999", "must be a finite number"),
        ("--max-tokens", "inf", "not a number"),
        ("--max-seconds", "0", "must be positive"),
    ],
)
def test_budgets_must_be_finite_positive_numbers(env, stub, tmp_path, option, value, message):
    r = cli([QUESTION, *stub_args(stub, tmp_path / "runs.sqlite", f"{option}={value}")], env)
    assert message in one_line(r)
    assert stub.requests == []


def set_stored_setting(db: Path, thread_id: str, **changes) -> None:
    """Edit the run settings stored with a thread's checkpoints (as an older version, or a
    hand-edited database, might have left them)."""
    conn = sqlite3.connect(db)
    with conn:
        rows = conn.execute(
            "SELECT checkpoint_id, metadata FROM checkpoints WHERE thread_id = ?", (thread_id,)
        ).fetchall()
        for cid, raw in rows:
            meta = json.loads(raw)
            if "dr_context" in meta:
                meta["dr_context"] = json.dumps({**json.loads(meta["dr_context"]), **changes})
                conn.execute(
                    "UPDATE checkpoints SET metadata = ? WHERE thread_id = ? AND checkpoint_id = ?",
                    (json.dumps(meta).encode(), thread_id, cid),
                )
    conn.close()


def deep_plan_responder(kind, prompt, n):
    if kind == "ReportPlan":
        return {
            "title": "The Eiffel Tower",
            "background": "",
            "sections": [{"title": "Design", "key_question": "Who built the Eiffel Tower?"}],
        }
    return researcher()(kind, prompt, n)


def test_resume_refuses_a_stored_budget_that_is_not_finite(env, tmp_path):
    db = tmp_path / "runs.sqlite"
    with StubOpenAI(deep_plan_responder) as stub:
        r = cli(
            [
                QUESTION,
                "--mode",
                "deep",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--review",
                "--db",
                str(db),
                "--thread-id",
                "inf-1",
                "--quiet",
            ],
            env,
        )
        assert r.returncode == 0 and "waiting for an outline review" in r.stderr, r.stderr
        set_stored_setting(db, "inf-1", max_seconds=float("inf"))
        n = len(stub.requests)
        r = cli(["resume", "inf-1", "--db", str(db), "--answer", '{"action": "accept"}'], env)
        line = one_line(r)
        assert "stored settings cannot be read" in line and "max_seconds must be a finite number" in line
        assert len(stub.requests) == n


# --- item 10: a read-only database ------------------------------------------------------


@pytest.fixture
def read_only(tmp_path):
    """Make a file read-only for this process, root included (chattr +i when root)."""
    made = []

    def make(path: Path):
        if os.geteuid() == 0:
            if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
                pytest.skip("running as root without chattr: a file cannot be made read-only")
        else:
            path.chmod(0o444)
        made.append(path)

    yield make
    for p in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(p)], capture_output=True)
        p.chmod(0o644)


def test_a_read_only_database_is_refused_before_any_work(env, stub, tmp_path, read_only):
    from deepresearch.runtime.checkpoint import open_checkpointer

    db = tmp_path / "runs.sqlite"
    with open_checkpointer(str(db)):  # a healthy database (tables made, WAL mode)
        pass
    read_only(db)
    line = one_line(cli([QUESTION, *stub_args(stub, db)], env))
    assert f"checkpoint file {db} is read-only" in line and "damaged" not in line, line
    assert stub.requests == []  # refused before any model call
    r = cli(["threads", "--db", str(db)], env)  # listing only reads: that works
    assert r.returncode == 0 and r.stdout.strip() == "no runs yet", r.stderr


# --- item 11: one thread id, two processes ----------------------------------------------


def _opened(pid: int, path: Path) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see open files")
def test_the_same_thread_id_started_twice_at_once_is_refused_atomically(env, stub, tmp_path):
    """Both processes open the database while the test holds its write lock, so both pass any
    check made before their first write; when the lock goes, exactly one may start the thread."""
    from deepresearch.runtime.checkpoint import open_checkpointer

    db = tmp_path / "runs.sqlite"
    with open_checkpointer(str(db)):
        pass
    lock = sqlite3.connect(db, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    questions = ["Who built the Eiffel Tower?", "Why was the Eiffel Tower built?"]
    procs, logs = [], []
    try:
        for q in questions:
            log = open(tmp_path / f"err-{len(procs)}.txt", "w+")  # noqa: SIM115
            logs.append(log)
            procs.append(
                subprocess.Popen(
                    [*CLI, q, *stub_args(stub, db, "--thread-id", "same-1", "--json")],
                    env=env,
                    cwd=env["HOME"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    text=True,
                )
            )
        deadline = time.monotonic() + 60
        while not all(_opened(p.pid, db) for p in procs):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "a process ended early"
            time.sleep(0.05)
        # give each the time to reach its first write (the old check-then-write passed here)
        until = time.monotonic() + 3
        while time.monotonic() < until and not all("same-1 (" in Path(x.name).read_text() for x in logs):
            time.sleep(0.05)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    results = [(p.wait(timeout=120), p.stdout.read()) for p in procs]
    errs = [Path(x.name).read_text() for x in logs]
    for p, x in zip(procs, logs):
        p.stdout.close()
        x.close()
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], (results, errs)
    winner = next(i for i, (code, _) in enumerate(results) if code == 0)
    loser = 1 - winner
    assert "thread same-1 already exists" in errs[loser] and "Traceback" not in errs[loser]
    assert json.loads(results[winner][1])["question"] == questions[winner]
    listed = json.loads(cli(["threads", "--db", str(db), "--json"], env).stdout)
    assert [(t["thread_id"], t["question"], t["status"]) for t in listed] == [("same-1", questions[winner], "editable")]
    r = cli(["resume", "same-1", "--db", str(db), "--json"], env)
    assert r.returncode == 0 and json.loads(r.stdout)["question"] == questions[winner]


def test_claiming_a_thread_id_succeeds_once_across_connections(tmp_path):
    """The claim the CLI makes before starting a thread: of many savers (as many processes)
    racing for the same ids, exactly one gets each id."""
    from concurrent.futures import ThreadPoolExecutor
    from contextlib import ExitStack

    from deepresearch.runtime.checkpoint import claim_thread, open_checkpointer

    db = str(tmp_path / "runs.sqlite")
    with ExitStack() as stack:
        savers = [stack.enter_context(open_checkpointer(db)) for _ in range(4)]
        ids = [f"t-{i}" for i in range(10)]
        with ThreadPoolExecutor(8) as pool:
            got = list(
                pool.map(
                    lambda job: (job[1], claim_thread(savers[job[0]], job[1])), [(k, t) for t in ids for k in range(4)]
                )
            )
    assert sorted(t for t, ok in got if ok) == sorted(ids)  # each id claimed exactly once


# --- item 12: resume creates no database ------------------------------------------------


def test_resume_with_a_database_that_does_not_exist_creates_nothing(env, tmp_path):
    db = tmp_path / "nowhere" / "runs.sqlite"
    assert f"no such database: {db}" in one_line(cli(["resume", "abc", "--db", str(db)], env))
    assert not db.exists() and not db.parent.exists()
    r = cli(["threads", "--db", str(db)], env)
    assert r.returncode == 0 and r.stdout.strip() == "no runs yet"
    assert not db.parent.exists()


# --- item 13: exit 1 when no model call succeeded ---------------------------------------

PROVIDER_TEXT = "Incorrect API key provided: sk-test-i*****cdef, PROVIDER-SAYS-THIS"


def failing(status: int, good=None):
    """Every call answered with `status`, until `good` (a responder) is set on the result."""

    def respond(kind, prompt, n):
        if respond.good:
            return respond.good(kind, prompt, n)
        return status, {"error": {"message": PROVIDER_TEXT, "type": "invalid_request_error"}}

    respond.good = good
    return respond


def test_every_model_call_failing_exits_1_and_the_thread_can_run_again(env, tmp_path):
    db = tmp_path / "runs.sqlite"
    respond = failing(401)
    with StubOpenAI(respond) as stub:
        r = cli([QUESTION, *stub_args(stub, db, "--thread-id", "key-1", "--quiet")], env)
        assert r.returncode == 1, r.stderr
        assert r.stdout == ""  # no report
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 2 and lines[0].startswith("thread key-1 "), r.stderr  # the resume line, the cause
        assert lines[1].startswith("deepresearch: no model call succeeded (OpenAIAuthenticationError (HTTP 401)")
        assert "'deepresearch resume key-1 --db" in lines[1] and "Traceback" not in r.stderr
        assert KEY not in r.stderr
        assert len(stub.requests) >= 2
        # checkpointed: listed, and `resume` with a working provider researches it again
        listed = json.loads(cli(["threads", "--db", str(db), "--json"], env).stdout)
        assert [(t["thread_id"], t["status"]) for t in listed] == [("key-1", "failed")]
        respond.good = researcher()
        n = len(stub.requests)
        r = cli(["resume", "key-1", "--db", str(db), "--json"], env)
        assert r.returncode == 0, r.stderr
        assert "ended without any model reply; researching it again" in r.stderr
        out = json.loads(r.stdout)
        assert out["usage"]["llm_calls"] == len(stub.requests) - n > 0
        assert out["stopped_by"] != "error" and "## Sources" in out["report"]
        assert "PROVIDER-SAYS-THIS" not in out["report"]
        listed = json.loads(cli(["threads", "--db", str(db), "--json"], env).stdout)
        assert [(t["thread_id"], t["status"]) for t in listed] == [("key-1", "editable")]


def test_a_server_error_on_every_call_exits_1(env, tmp_path):
    with StubOpenAI(failing(500), retry_after=0.01) as stub:
        r = cli([QUESTION, *stub_args(stub, tmp_path / "runs.sqlite", "--quiet")], env)
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("deepresearch: no model call succeeded (OpenAIAPIError")


def test_a_budget_stop_before_any_call_still_exits_0(env, stub, tmp_path):
    r = cli([QUESTION, *stub_args(stub, tmp_path / "runs.sqlite", "--max-tokens", "150", "--json")], env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["stopped_by"] == "max_tokens" and out["usage"]["llm_calls"] == 0 and out["report"]


def test_a_failed_section_keeps_the_provider_text_out_of_the_report(env, tmp_path):
    from tests.test_durable import deep_responder

    topics = [("Design", "Who built the Eiffel Tower?"), ("Purpose", "Why was the Eiffel Tower built?")]
    good = deep_responder(topics)

    def respond(kind, prompt, n):
        if "Why was the Eiffel Tower built? (in: " in prompt:  # every call of the second section fails
            return 401, {"error": {"message": PROVIDER_TEXT, "type": "invalid_request_error"}}
        return good(kind, prompt, n)

    with StubOpenAI(respond) as stub:
        r = cli(
            [
                QUESTION,
                "--mode",
                "deep",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--max-iterations",
                "1",
                "--db",
                str(tmp_path / "runs.sqlite"),
                "--json",
            ],
            env,
        )
    assert r.returncode == 0, r.stderr  # some model calls succeeded: a report was researched
    out = json.loads(r.stdout)
    assert [s["status"] for s in out["sections"]] == ["done", "failed"]
    assert "PROVIDER-SAYS-THIS" in r.stderr  # said where it belongs (redacted) ...
    assert "PROVIDER-SAYS-THIS" not in out["report"] and "401" not in out["report"]  # ... not in the report
    assert "could not be researched" in out["report"]


# --- item 14: stdout closed or broken ---------------------------------------------------


def test_a_closed_stdout_is_reported_in_one_line(env, stub, tmp_path):
    db = tmp_path / "runs.sqlite"
    r = subprocess.run(
        [*CLI, QUESTION, *stub_args(stub, db, "--quiet", "--thread-id", "closed-1")],
        env=env,
        cwd=env["HOME"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        preexec_fn=lambda: os.close(1),
    )
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert "Traceback" not in r.stderr and len(lines) == 2, r.stderr
    assert lines[1].startswith("deepresearch: cannot write the report to stdout (closed or broken pipe)")
    assert "'deepresearch resume closed-1 --db" in lines[1]
    # with --output the report reached a file: that is a delivered report
    out = tmp_path / "report.md"
    r = subprocess.run(
        [*CLI, QUESTION, *stub_args(stub, db, "--quiet", "-o", str(out))],
        env=env,
        cwd=env["HOME"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        preexec_fn=lambda: os.close(1),
    )
    assert r.returncode == 0, r.stderr
    assert "## Sources" in out.read_text()


def test_a_broken_pipe_is_reported_in_one_line(env, stub, tmp_path):
    p = subprocess.Popen(
        [*CLI, QUESTION, *stub_args(stub, tmp_path / "runs.sqlite", "--quiet")],
        env=env,
        cwd=env["HOME"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    p.stdout.close()  # the reader went away (`deepresearch … | head -0`)
    err = p.stderr.read()
    p.stderr.close()
    assert p.wait(timeout=300) == 1, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err.strip().splitlines()[-1].startswith("deepresearch: cannot write the report to stdout")
    assert len(err.strip().splitlines()) == 2, err


# --- item 15: --quiet and the resume line -----------------------------------------------


def test_quiet_prints_only_the_resume_line_and_it_is_shell_quoted(env, tmp_path):
    folder = tmp_path / "my runs"
    folder.mkdir()
    db = folder / "it's.sqlite"
    thread = "bee's run; echo x"
    with StubOpenAI(researcher(), rate_429=0.3, retry_after=0.01, seed=4) as stub:
        r = cli([QUESTION, *stub_args(stub, db, "--quiet", "--thread-id", thread)], env)
        assert r.returncode == 0, r.stderr
        assert stub.faults > 0  # retried errors happened, and quiet said nothing of them
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    prefix = f"thread {thread} (iterative mode); resume with: "
    assert lines[0].startswith(prefix), lines
    command = shlex.split(lines[0][len(prefix) :])
    assert command == ["deepresearch", "resume", thread, "--db", str(db)]
    again = cli([*command[1:], "--quiet"], env)  # the printed command works as printed
    assert again.returncode == 0 and "had already finished" in again.stderr and "## Sources" in again.stdout


# --- item 16: an unusable review answer -------------------------------------------------


def test_an_invalid_outline_answer_is_bad_input_and_uses_no_review_round(env, tmp_path):
    db = tmp_path / "runs.sqlite"
    with StubOpenAI(deep_plan_responder) as stub:
        r = cli(
            [
                QUESTION,
                "--mode",
                "deep",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--review",
                "--max-iterations",
                "1",
                "--db",
                str(db),
                "--thread-id",
                "rev-2",
            ],
            env,
        )
        assert r.returncode == 0 and "(round 1/3)" in r.stderr, r.stderr
        for bad, why in [
            (
                {"action": "replace", "outline": {"title": "No sections", "sections": []}},
                "replace needs an outline with a title and sections",
            ),
            ({"action": "replace", "outline": "not an outline"}, "replace needs an outline"),
            ({"action": "revise", "comment": "  "}, 'revise needs a non-empty "comment"'),
        ]:
            line = one_line(cli(["resume", "rev-2", "--db", str(db), "--answer", json.dumps(bad)], env))
            assert f"--answer not used: {why}" in line and "still waiting for an outline review (round 1/3)" in line
        # asked again at the same round: no round was used
        r = cli(["resume", "rev-2", "--db", str(db), "--json"], env)
        assert r.returncode == 0 and json.loads(r.stdout)["waiting"][0]["round"] == 1, r.stdout
        r = cli(["resume", "rev-2", "--db", str(db), "--answer", '{"action": "accept"}', "--json"], env)
        assert r.returncode == 0, r.stderr
        assert [s["title"] for s in json.loads(r.stdout)["sections"]] == ["Design"]


# --- item 17: what `usage` counts after a crash -----------------------------------------


def test_usage_after_a_crash_counts_what_the_readme_says(env, tmp_path):
    """README, "Budgets": a model call made by a step that a crash cut short is made again
    when the run resumes, and only that repeat is counted (its first attempt's reply was
    never received by the run). Here: killed while the writer's call is in flight."""
    import signal
    import threading

    db = tmp_path / "runs.sqlite"
    writing = threading.Event()
    base = researcher()

    def respond(kind, prompt, n):
        if kind == "text" and "In two to four sentences" not in prompt and not writing.is_set():
            writing.set()
            time.sleep(5)  # the writer's first call: the process is killed meanwhile
        return base(kind, prompt, n)

    with StubOpenAI(respond) as stub:
        p = subprocess.Popen(
            [*CLI, QUESTION, *stub_args(stub, db, "--thread-id", "crash-1", "--quiet")],
            env=env,
            cwd=env["HOME"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert writing.wait(timeout=120)
            time.sleep(0.5)  # the steps before the writer are checkpointed
        finally:
            p.send_signal(signal.SIGKILL)
            p.wait(timeout=30)
        before = len(stub.requests)
        r = cli(["resume", "crash-1", "--db", str(db), "--json"], env)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
    assert "resuming thread crash-1 at writer" in r.stderr
    assert len(stub.requests) == before + 1  # the writer's call, made again
    assert out["usage"]["llm_calls"] == len(stub.requests) - 1  # every call but the one the crash cut
