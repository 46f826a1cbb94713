"""`--clarify` from the CLI: questions answered at the terminal (typed answers, skip, finish,
together with `--review`), and the waiting path when nobody answers, answered later with
`deepresearch resume ID --answer`."""

import json
import subprocess
import sys

from tests.clarify_helpers import clarifier, deep_clarifier
from tests.stub_openai import StubOpenAI

QS = ["Do you mean the tower in Paris or a replica?", "Who is the report for?"]
Q = "Who built the Eiffel Tower, and for which event?"


def cli(args, env, tmp_path, stdin=""):
    return subprocess.run(
        [sys.executable, "-m", "deepresearch.cli", *args, "--db", str(tmp_path / "c.sqlite")],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def run_args(stub, *extra):
    return [
        Q,
        "--clarify",
        "--model",
        "openai:stub",
        "--base-url",
        stub.base_url,
        "--max-iterations",
        "1",
        "--mode",
        "iterative",
        *extra,
    ]


def stub_prompts(stub):
    return [json.dumps(r["body"].get("messages", []), ensure_ascii=False) for r in stub.requests]


def test_answers_typed_at_the_terminal(cli_env, tmp_path):
    cli_env["OPENAI_API_KEY"] = "sk-test-clarify-0123456789"
    with StubOpenAI(clarifier([QS])) as stub:
        r = cli(run_args(stub, "--json"), cli_env, tmp_path, stdin="x\na\nThe one in Paris\n\n")
    assert r.returncode == 0, r.stderr
    assert "Clarifying questions (round 1/1):" in r.stderr and f"1. {QS[0]}" in r.stderr
    out = json.loads(r.stdout)
    assert out["brief"] == f"{Q}\n\nWhat the person asking said when asked to clarify:\n- {QS[0]} The one in Paris"
    assert out["language"] == "en" and out["report"].count("## Sources") == 1
    later = stub_prompts(stub)[1:]
    assert later and all("The one in Paris" in p for p in later if "SupportJudgement" not in p)


def test_skip_and_finish_at_the_terminal(cli_env, tmp_path):
    cli_env["OPENAI_API_KEY"] = "sk-test-clarify-0123456789"
    with StubOpenAI(clarifier([QS])) as stub:
        skipped = cli(run_args(stub, "--json"), cli_env, tmp_path, stdin="s\n")
        n = len(stub.requests)
        finished = cli(run_args(stub), cli_env, tmp_path, stdin="f\n")
    assert skipped.returncode == 0, skipped.stderr
    assert json.loads(skipped.stdout)["brief"] == Q
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout == ""  # no report
    assert "finished at the clarifying questions" in finished.stderr
    assert len(stub.requests) == n + 1  # only the clarifying call


def test_clarify_then_review_at_the_terminal(cli_env, tmp_path):
    cli_env["OPENAI_API_KEY"] = "sk-test-clarify-0123456789"
    with StubOpenAI(deep_clarifier([QS])) as stub:
        r = cli(
            [
                "Tell me about the Eiffel Tower",
                "--mode",
                "deep",
                "--clarify",
                "--review",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--max-iterations",
                "1",
                "--sections",
                "2",
                "--json",
            ],
            cli_env,
            tmp_path,
            stdin="a\nParis\nStudents\na\n",
        )
    assert r.returncode == 0, r.stderr
    assert r.stderr.index("Clarifying questions (round 1/1)") < r.stderr.index("review round 1/3")
    out = json.loads(r.stdout)
    assert "Students" in out["brief"] and len(out["sections"]) == 2
    plans = [p for p in stub_prompts(stub) if "ReportPlan" in p]
    assert len(plans) == 1 and "Students" in plans[0]


def test_nobody_answers_then_resume_with_an_answer(cli_env, tmp_path):
    cli_env["OPENAI_API_KEY"] = "sk-test-clarify-0123456789"
    with StubOpenAI(clarifier([QS])) as stub:
        waiting = cli(run_args(stub, "--thread-id", "c1", "--json"), cli_env, tmp_path, stdin="")
        n = len(stub.requests)
        wrong = cli(["resume", "c1", "--answer", '{"action": "accept"}'], cli_env, tmp_path)
        bad = cli(["resume", "c1", "--answer", '{"action": "answer"'], cli_env, tmp_path)
        listed = cli(["threads"], cli_env, tmp_path)
        done = cli(
            ["resume", "c1", "--json", "--answer", json.dumps({"action": "answer", "answers": ["Paris", "Me"]})],
            cli_env,
            tmp_path,
        )
    assert waiting.returncode == 0, waiting.stderr
    out = json.loads(waiting.stdout)
    assert out["status"] == "waiting"
    assert out["waiting"] == [{"type": "clarify", "questions": QS, "round": 1, "max_rounds": 1}]
    assert "waiting for answers to clarifying questions (round 1/1)" in waiting.stderr
    assert "deepresearch resume c1 --db" in waiting.stderr and '"action": "answer"' in waiting.stderr
    assert n == 1  # nothing researched while waiting
    for r, why in ((wrong, "waiting for answers to clarifying questions"), (bad, "not valid JSON")):
        assert r.returncode == 2 and why in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert "c1" in listed.stdout
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout)
    assert final["brief"].endswith(f"- {QS[0]} Paris\n- {QS[1]} Me")
    assert final["report"].count("## Sources") == 1
    assert len(stub.requests) > n + 1
