"""Durable CLI runs: kill -9 and resume, a review answered later, `threads`, bad input.

The CLI runs in subprocesses against a local stub of the OpenAI API (the HTTP boundary);
the stub counts the model requests of each section, so a resumed run that researched a
finished section again would show up as extra requests.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime, timedelta

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build
from tests.deep_helpers import DEEP_QUESTION as QUESTION
from tests.deep_helpers import (
    TITLE,
    deep_args,
    deep_responder,
    kill_after_a_section_and_resume,
    plan_requests,
    section_calls,
)
from tests.deep_helpers import TOPICS as ALL_TOPICS
from tests.helpers import citations_resolve, cli, copy_database, finished_cli_run, one_line_error
from tests.stub_openai import StubOpenAI

TOPICS = ALL_TOPICS[:3]
FAKE_KEY = "sk-test-durable-0123456789"


@pytest.fixture
def env(cli_env):
    cli_env["OPENAI_API_KEY"] = FAKE_KEY
    return cli_env


@pytest.fixture(scope="module")
def finished_once(tmp_path_factory):
    """One finished iterative CLI run (one iteration) on thread it-1, for the module, with the day
    it started: (db, day). Its stub stays up for the module. Each test uses a copy of the database."""
    with StubOpenAI(deep_responder(3)) as stub:
        day = datetime.now(UTC).date()
        db, _ = finished_cli_run(stub, tmp_path_factory.mktemp("finished"), FAKE_KEY, "it-1", question=QUESTION)
        yield db, day


def test_killed_deep_run_resumes_without_researching_finished_sections_again(env, tmp_path):
    db = str(tmp_path / "runs.sqlite")
    done, before, resumed, out, r, stub = kill_after_a_section_and_resume(env, db, "killed-1")
    assert "resuming thread killed-1 at section_research" in r.stderr
    for title in done:  # finished before the kill: not one more model call
        assert before[title] == 3 and resumed[title] == 0, (done, before, resumed)
    for title, _ in TOPICS:
        if before[title] == 0:  # not started before the kill: researched by the resumed run
            assert resumed[title] == 3, (done, before, resumed)
        # 3 calls a section; a call in flight at the kill (or whose checkpoint was not yet
        # written) may be made again, nothing more
        assert 3 <= before[title] + resumed[title] <= 3 + 1, (done, before, resumed)
    assert out["thread_id"] == "killed-1" and out["mode"] == "deep"
    assert [s["title"] for s in out["outline"]["sections"]] == [t for t, _ in TOPICS]
    assert [s["title"] for s in out["sections"]] == [t for t, _ in TOPICS]
    assert all(s["status"] == "done" for s in out["sections"])
    headings = re.findall(r"^## (.+)$", out["report"], re.M)
    assert [h for h in headings if h in dict(TOPICS)] == [t for t, _ in TOPICS]
    assert citations_resolve(out["report"], out["sources"])
    assert len(plan_requests(stub)) == 1  # nor is the outline planned again

    # threads: the run is listed as finished (editable) with its question and date
    listed = json.loads(cli(["threads", "--db", db, "--json"], env).stdout)
    row = next(t for t in listed if t["thread_id"] == "killed-1")
    assert row["status"] == "editable" and row["question"] == QUESTION and row["mode"] == "deep"
    assert re.match(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", row["started"])

    # resuming a finished run prints its report again without model calls
    n = len(stub.requests)
    again = cli(["resume", "killed-1", "--db", db, "--quiet"], env)
    assert again.returncode == 0 and again.stdout.startswith(f"# {TITLE}")
    assert "already finished" in again.stderr and len(stub.requests) == n


def test_review_left_waiting_is_answered_later_with_resume(env, tmp_path):
    db = str(tmp_path / "runs.sqlite")
    mine = [("Engineer", "Who was Gustave Eiffel?"), ("World's Fair", "What was the 1889 World's Fair?")]
    with StubOpenAI(deep_responder(3)) as stub:
        # --review with nobody at stdin: the run stops at the outline and says how to answer
        r = cli(deep_args(stub, db, "--sections", "3", "--review", "--thread-id", "rev-1"), env)
        assert r.returncode == 0, r.stderr
        assert r.stdout == ""  # no report
        assert "thread rev-1 is waiting for an outline review (round 1/3)" in r.stderr
        assert f"deepresearch resume rev-1 --db {db} --answer" in r.stderr
        assert "- Design :: Who was the engineer behind the Eiffel Tower?" in r.stderr  # the outline was shown
        assert sum(section_calls(stub.requests).values()) == 0  # nothing researched yet
        listed = json.loads(cli(["threads", "--db", db, "--json"], env).stdout)
        assert [(t["thread_id"], t["status"]) for t in listed] == [("rev-1", "waiting for review")]

        # the same with --json: a machine-readable waiting status
        r = cli(["resume", "rev-1", "--db", db, "--json"], env)
        assert r.returncode == 0, r.stderr
        waiting = json.loads(r.stdout)
        assert waiting["status"] == "waiting" and waiting["thread_id"] == "rev-1"
        assert waiting["waiting"][0]["outline"] == {
            "title": TITLE,
            "sections": [{"title": t, "key_question": q} for t, q in TOPICS],
        }

        # an outline without sections is not used: bad input, and the
        # review is still waiting at the same round
        bad = {"action": "replace", "outline": {"title": "No sections", "sections": []}}
        r = cli(["resume", "rev-1", "--db", db, "--answer", json.dumps(bad)], env)
        assert "replace needs an outline with a title and sections" in one_line_error(r)
        assert r.stdout == "" and "still waiting for an outline review (round 1/3)" in r.stderr

        # replace the outline: the node asks again with the new one
        answer = {
            "action": "replace",
            "outline": {"title": "Eiffel and the Fair", "sections": [{"title": t, "key_question": q} for t, q in mine]},
        }
        r = cli(["resume", "rev-1", "--db", db, "--answer", json.dumps(answer)], env)
        assert r.returncode == 0, r.stderr
        assert r.stdout == "" and "waiting for an outline review (round 2/3)" in r.stderr
        assert sum(section_calls(stub.requests).values()) == 0

        # accept it: the sections follow the replaced outline
        r = cli(["resume", "rev-1", "--db", db, "--answer", '{"action": "accept"}', "--json"], env)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert [s["title"] for s in out["sections"]] == [t for t, _ in mine]
        assert out["report"].startswith("# Eiffel and the Fair")
        assert citations_resolve(out["report"], out["sources"])
        counts = section_calls(stub.requests, mine)
        assert all(c >= 2 for c in counts.values()), counts
        assert sum(section_calls(stub.requests).values()) == 0  # the planner's sections were never researched
        assert len(plan_requests(stub)) == 1  # resuming does not plan again

        listed = json.loads(cli(["threads", "--db", db, "--json"], env).stdout)
        assert [(t["thread_id"], t["status"]) for t in listed] == [("rev-1", "editable")]


def test_resume_after_a_step_whose_checkpoint_was_lost(env, tmp_path):
    """Checkpoints are written in the background: a kill can land after a step's writes were
    saved but before the checkpoint that follows them. The thread's `next` is then empty
    although the run is not finished; resume must continue it, not call it finished."""
    import sqlite3

    db = tmp_path / "runs.sqlite"
    with StubOpenAI(deep_responder(3)) as stub:
        r = cli(
            [
                QUESTION,
                "--mode",
                "iterative",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--max-iterations",
                "2",
                "--db",
                str(db),
                "--thread-id",
                "lost-1",
                "--json",
            ],
            env,
        )
        assert r.returncode == 0, r.stderr
        first = json.loads(r.stdout)
        conn = sqlite3.connect(db)
        with conn:
            # keep the checkpoint before the last `thinking` step (a model call, made after the
            # search) with that step's saved writes; lose every checkpoint after it
            keep = conn.execute(
                "SELECT max(checkpoint_id) FROM writes WHERE thread_id = 'lost-1' AND channel = 'observations'"
            ).fetchone()[0]
            conn.execute("DELETE FROM checkpoints WHERE thread_id = 'lost-1' AND checkpoint_id > ?", (keep,))
            conn.execute("DELETE FROM writes WHERE thread_id = 'lost-1' AND checkpoint_id > ?", (keep,))
        conn.close()
        n = len(stub.requests)
        r = cli(["resume", "lost-1", "--db", str(db), "--json"], env)
        assert r.returncode == 0, r.stderr
        assert "resuming thread lost-1 at thinking" in r.stderr and "already finished" not in r.stderr
        out = json.loads(r.stdout)
        assert out["report"] == first["report"]

        # the saved step was not redone: `thinking`'s notes came from its writes
        def is_thinking(q):
            return any("In two to four sentences" in (m.get("content") or "") for m in q["body"]["messages"])

        assert sum(map(is_thinking, stub.requests[:n])) == 1  # the run thought once with sources
        assert len(stub.requests) - n == 2  # only what follows the saved step: the judgement and the writer
        assert not any(map(is_thinking, stub.requests[n:]))


def test_review_answered_on_piped_stdin(env, tmp_path):
    with StubOpenAI(deep_responder(2)) as stub:
        r = cli(deep_args(stub, tmp_path / "runs.sqlite", "--review", "--quiet"), env, input="a\n")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"# {TITLE}") and "## Sources" in r.stdout
        assert "[a]ccept" in r.stderr


def test_threads_lists_question_status_and_date(env, tmp_path, finished_once):
    db = str(tmp_path / "runs.sqlite")
    r = cli(["threads", "--db", db], env)
    assert r.returncode == 0 and r.stdout.strip() == "no runs yet"
    source, first_day = finished_once  # an iterative run, it-1
    copy_database(source, db)
    with StubOpenAI(deep_responder(3)) as stub:
        r = cli(deep_args(stub, db, "--review", "--thread-id", "dp-2", "--quiet"), env)
        assert r.returncode == 0, r.stderr
    r = cli(["threads", "--db", db], env)
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line for line in r.stdout.splitlines()}
    assert set(rows) == {"it-1", "dp-2"}
    last_day = datetime.now(UTC).date()
    days = {(first_day + timedelta(days=i)).isoformat() for i in range((last_day - first_day).days + 1)}
    assert "editable" in rows["it-1"] and "iterative" in rows["it-1"] and QUESTION[:60] in rows["it-1"]
    assert "waiting for review" in rows["dp-2"] and "deep" in rows["dp-2"]
    for line in rows.values():  # started on a day the test ran (midnight may pass meanwhile)
        assert set(re.findall(r"\d{4}-\d{2}-\d{2}", line)) & days, (line, days)


def test_resume_errors_are_one_line_with_exit_2(env, tmp_path, finished_once):
    db = str(tmp_path / "runs.sqlite")
    assert "no such database" in one_line_error(cli(["resume", "nope", "--db", db], env))
    for bad, message in [
        ("{not json", "--answer is not valid JSON"),
        ('"accept"', '--answer must be an object with "action"'),
        ('{"action": "maybe"}', '--answer must be an object with "action"'),
        ("[]", '--answer must be an object with "action"'),
    ]:
        assert message in one_line_error(cli(["resume", "nope", "--db", db, "--answer", bad], env))
    assert "required" in one_line_error(cli(["resume"], env))

    copy_database(finished_once[0], db)  # a finished iterative run, it-1
    assert "unknown thread id 'nope'" in one_line_error(cli(["resume", "nope", "--db", db], env))
    # an answer for a run that is not waiting for one
    assert "not waiting for an outline review" in one_line_error(
        cli(["resume", "it-1", "--db", db, "--answer", '{"action": "accept"}'], env)
    )
    # a thread id that exists already
    assert "already exists" in one_line_error(cli([QUESTION, "--db", db, "--thread-id", "it-1"], env))
    # a key that is gone when resuming
    env.pop("OPENAI_API_KEY")
    assert "needs OPENAI_API_KEY" in one_line_error(cli(["resume", "it-1", "--db", db], env))


def test_corrupt_checkpoint_file_gives_a_clear_message(env, tmp_path):
    bad = tmp_path / "runs.sqlite"
    bad.write_bytes(os.urandom(64 * 1024))
    for args in (
        ["threads", "--db", str(bad)],
        ["resume", "x", "--db", str(bad)],
        ["a question", "--mode", "iterative", "--db", str(bad)],
    ):
        line = one_line_error(cli(args, env))
        assert f"cannot use checkpoint file {bad}" in line and "not a database" in line, line


def test_damaged_checkpoint_database_gives_a_clear_message(env, tmp_path, finished_once):
    """A file with a valid SQLite header whose pages are garbage."""
    import sqlite3

    db = tmp_path / "runs.sqlite"
    copy_database(finished_once[0], str(db))  # a finished iterative run, it-1
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    assert len(data) > 8192
    data[4096:] = os.urandom(len(data) - 4096)  # keep the header page, ruin the rest
    db.write_bytes(bytes(data))
    for args in (["threads", "--db", str(db)], ["resume", "it-1", "--db", str(db)]):
        line = one_line_error(cli(args, env))
        assert "checkpoint" in line and ("cannot be read" in line or "cannot use" in line), line


class LosesSectionResults(InMemorySaver):
    """A checkpointer that never receives the parent's record of a finished section: what a run
    killed between a section's end and that write (made in the background) leaves behind."""

    def put_writes(self, config, writes, task_id, task_path=""):
        if any(channel == "section_results" for channel, _ in writes):
            return None
        return super().put_writes(config, writes, task_id, task_path)


def test_finished_sections_whose_results_were_not_saved_yet_are_not_researched_again(fake_model):
    # A section's loop keeps no checkpoint while it runs (issue 31); its final state is saved
    # once, before it reports done, so the crash window after `section_complete` loses nothing.
    spec, model = fake_model(deep_responder(3))
    saver = LosesSectionResults()
    ctx = Context(model=spec, writer="single", max_iterations=2, section_concurrency=1)
    config = {"configurable": {"thread_id": "lost-writes"}, "recursion_limit": 60}
    done = 0
    for event in build(checkpointer=saver).stream({"question": QUESTION}, config, context=ctx, stream_mode="custom"):
        if event.get("type") == "section_complete":
            done += 1
            if done == 3:
                break  # the kill: every section reported done, no record of any in the parent
    assert done == 3
    assert build(checkpointer=saver).get_state(config).next == ("section_research",) * 3
    before = len(model.calls)

    final = None
    for final in build(checkpointer=saver).stream(None, config, context=ctx, stream_mode="values"):  # noqa: B007 - the last one
        pass
    resumed = [c["prompt"] for c in model.calls[before:]]
    for title, q in TOPICS:
        assert not [p for p in resumed if f"{q} (in: " in p], (title, len(resumed))
    assert [s["status"] for s in final["sections"]] == ["done"] * 3
    assert re.findall(r"^## (.+)$", final["report"].split("## Sources")[0], re.M) == [t for t, _ in TOPICS]
