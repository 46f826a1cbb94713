"""The CLI through a subprocess: --json output, the OpenAI path via a local stub, bad input."""

import json
import os
import re
from pathlib import Path

import pytest

from tests.deep_helpers import deep_responder
from tests.fakes import researcher
from tests.helpers import QUESTION, Running, citations_resolve, cli, one_line_error
from tests.stub_openai import StubOpenAI

BROAD = "Compare the bicycle with the automobile"
FOCUSED = "Who built the Eiffel Tower?"


@pytest.fixture
def stub():
    with StubOpenAI(researcher(complete_after=1)) as s:
        yield s


def test_json_output_through_the_openai_path(stub, cli_env, tmp_path):
    cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
    r = cli(
        [
            QUESTION,
            "--mode",
            "iterative",
            "--model",
            "openai:stub",
            "--base-url",
            stub.base_url,
            "--json",
            "--db",
            str(tmp_path / "runs.sqlite"),
        ],
        cli_env,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) >= {"question", "mode", "report", "sources", "usage", "stopped_by", "citations"}
    assert out["question"] == QUESTION and out["mode"] == "iterative"
    assert out["stopped_by"] == "complete"
    assert citations_resolve(out)
    assert out["usage"]["llm_calls"] == len(stub.requests)  # counted from the server's usage figures
    assert out["usage"]["total_tokens"] > 0
    assert "thread" in r.stderr  # progress and the thread id go to stderr
    # structured outputs went through strict json_schema first
    assert any(req["body"].get("response_format", {}).get("type") == "json_schema" for req in stub.requests)
    assert "sk-test-0123456789abcdef" not in r.stdout + r.stderr


def test_report_to_a_file(stub, cli_env, tmp_path):
    cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
    out = tmp_path / "report.md"
    r = cli(
        [
            QUESTION,
            "--mode",
            "iterative",
            "--model",
            "openai:stub",
            "--base-url",
            stub.base_url,
            "-o",
            str(out),
            "--quiet",
            "--db",
            str(tmp_path / "runs.sqlite"),
        ],
        cli_env,
    )
    assert r.returncode == 0, r.stderr
    assert out.read_text().count("## Sources") == 1
    assert r.stdout == ""


def test_a_report_that_cannot_be_written_goes_to_stdout(stub, cli_env, tmp_path):
    """--output that passes the checks but fails at the end (a full disk): the report is not
    lost, it is printed instead, and the run ends normally."""
    cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
    r = cli(
        [
            QUESTION,
            "--mode",
            "iterative",
            "--model",
            "openai:stub",
            "--base-url",
            stub.base_url,
            "-o",
            "/dev/full",
            "--db",
            str(tmp_path / "runs.sqlite"),
        ],
        cli_env,
    )
    assert r.returncode == 0, r.stderr
    assert "cannot write /dev/full" in r.stderr and "printing the report instead" in r.stderr
    assert r.stdout.startswith("#") and "## Sources" in r.stdout


def test_an_unwritable_output_folder_is_refused_before_the_run(cli_env, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    # root may write anywhere, but not into a read-only /proc/sys
    folder = next((d for d in (locked, Path("/proc/sys")) if d.is_dir() and not os.access(d, os.W_OK)), None)
    assert folder is not None, "no unwritable folder to try"
    line = one_line_error(cli(["q", "--output", str(folder / "report.md")], cli_env))
    assert "not writable" in line


@pytest.mark.parametrize(
    "args,message",
    [
        (["", "--mode", "iterative"], "the question is empty"),
        (["   \n  ", "--mode", "iterative"], "the question is empty"),
        (["q", "--model", "gpt9"], "unknown model 'gpt9'; valid: local, none, openai:<model>"),
        (["q", "--search", "bing"], "unknown search backend 'bing'; valid: wiki, docs:<folder>, tavily"),
        (["q", "--search", "docs:/no/such/folder"], "docs folder not found"),
        (["q", "--model", "openai:gpt-4o-mini"], "needs OPENAI_API_KEY"),
        (["q", "--search", "tavily"], "needs TAVILY_API_KEY"),
        (["q", "--output", "/no/such/dir/report.md"], "does not exist"),
        (["q", "--max-iterations", "0"], "must be positive"),
        (["q", "--mode", "sideways"], "invalid choice"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(args, message, cli_env):
    assert message in one_line_error(cli(args, cli_env))


def test_output_path_that_cannot_be_a_file(cli_env, tmp_path):
    r = cli(["q", "--output", str(tmp_path)], cli_env)
    assert r.returncode == 2 and "is a directory" in r.stderr
    blocker = tmp_path / "plain-file"
    blocker.write_text("x")
    r = cli(["q", "--output", str(blocker / "report.md")], cli_env)
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_question_too_long(cli_env):
    r = cli(["x" * 100_000], cli_env)
    assert r.returncode == 2 and "limit is 4,000" in r.stderr


@pytest.mark.parametrize("question,mode", [(BROAD, "deep"), (FOCUSED, "iterative")])
def test_mode_auto_picks_deep_for_broad_questions_and_iterative_for_focused_ones(question, mode, cli_env, tmp_path):
    cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
    with StubOpenAI(deep_responder(2)) as stub:
        r = cli(
            [
                question,
                "--mode",
                "auto",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--sections",
                "2",
                "--max-iterations",
                "1",
                "--json",
                "--db",
                str(tmp_path / "runs.sqlite"),
            ],
            cli_env,
        )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["mode"] == mode and f"({mode} mode)" in r.stderr
    planned = any("ReportPlan" in json.dumps(q["body"]) for q in stub.requests)
    assert planned == (mode == "deep")  # only the deep graph plans an outline
    assert citations_resolve(out)


def auth(request: dict) -> str | None:
    return {k.lower(): v for k, v in request["headers"].items()}.get("authorization")


def test_dotenv_never_overrides_the_environment(cli_env, tmp_path):
    (tmp_path / ".env").write_text("OPENAI_API_KEY=from-the-dotenv-file-0001\n")  # in the CLI's working folder
    args = [
        FOCUSED,
        "--mode",
        "iterative",
        "--model",
        "openai:stub",
        "--max-iterations",
        "1",
        "--quiet",
        "--db",
        str(tmp_path / "runs.sqlite"),
    ]
    with StubOpenAI(researcher()) as stub:
        cli_env["OPENAI_API_KEY"] = "from-the-environment-0002"
        r = cli([*args, "--base-url", stub.base_url], cli_env)
        assert r.returncode == 0, r.stderr
        assert {auth(q) for q in stub.requests} == {"Bearer from-the-environment-0002"}
        n = len(stub.requests)
        cli_env.pop("OPENAI_API_KEY")  # not set: the .env file provides it
        r = cli([*args, "--base-url", stub.base_url], cli_env)
        assert r.returncode == 0, r.stderr
        assert {auth(q) for q in stub.requests[n:]} == {"Bearer from-the-dotenv-file-0001"}


def test_progress_on_a_terminal_is_a_live_status_line(cli_env, tmp_path):
    """stderr on a terminal: a status line redrawn in place (plus lasting lines for what
    matters); not a terminal: one plain line per event, no control sequences."""
    cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
    cli_env.update(TERM="xterm-256color", COLUMNS="120", LINES="40")
    cli_env.pop("NO_COLOR", None)
    with StubOpenAI(researcher(complete_after=2), latency=0.3) as stub:  # slow enough to see the line redrawn
        args = [
            QUESTION,
            "--mode",
            "iterative",
            "--model",
            "openai:stub",
            "--base-url",
            stub.base_url,
            "--db",
            str(tmp_path / "runs.sqlite"),
        ]
        run = Running(args, cli_env, terminal=True)
        try:
            status = run.wait()
        finally:
            run.close()
        plain = cli([*args[:-1], str(tmp_path / "plain.sqlite")], cli_env)
    assert status == 0 and plain.returncode == 0, plain.stderr
    tty = run.text
    assert "\x1b[2K" in tty and "\r" in tty  # drawn and redrawn in place
    # the status line shows the step in progress (a line the plain output has as an event)
    shown = set(re.findall(r"\] (judging|writing|found|searching|gaps)", tty))
    assert shown, tty[-2000:]
    assert re.search(r"done \(complete\): \d+ source\(s\) cited", tty)  # a lasting line
    assert "\x1b[" not in plain.stderr
    lines = plain.stderr.splitlines()
    searches = [line for line in lines if "searching (wiki)" in line]
    assert searches and len(searches) == sum(" found " in line for line in lines)  # one line per event
    assert any(re.search(r"done \(complete\)", line) for line in lines)


def test_help_names_every_command(capsys):
    """`deepresearch --help` lists the other commands from the table `main` dispatches by, and
    that table has every `cmd_NAME` of the cli package (a new command cannot be left out)."""
    from deepresearch.cli import HANDLERS, main

    defined = {
        m.group(1)
        for p in (Path(__file__).resolve().parent.parent / "deepresearch" / "cli").glob("*.py")
        for m in re.finditer(r"(?m)^def cmd_(\w+)\(", p.read_text())
    } - {"run"}
    assert (
        set(HANDLERS)
        == defined
        == {
            "resume",
            "edit",
            "threads",
            "provenance",
            "export",
            "template",
            "tools",
            "users",
            "index",
            "setup",
            "serve",
        }
    )
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    listed = capsys.readouterr().out.split("Other commands", 1)[1]
    assert re.findall(r"(?m)^  deepresearch (\w+)", listed) == list(HANDLERS)
