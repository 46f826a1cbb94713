"""The CLI through a subprocess: --json output, the OpenAI path via a local stub, bad input."""

import json
import re
import subprocess
import sys

import pytest

from tests.fakes import researcher
from tests.stub_openai import StubOpenAI

QUESTION = "Who designed the Eiffel Tower, and why was it built?"


def cli(args, env, input=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "deepresearch.cli", *args], env=env, input=input,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def stub():
    with StubOpenAI(researcher(complete_after=1)) as s:
        yield s


def test_json_output_through_the_openai_path(stub, cli_env, tmp_path):
    cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
    r = cli([QUESTION, "--mode", "iterative", "--model", "openai:stub", "--base-url", stub.base_url,
             "--json", "--db", str(tmp_path / "runs.sqlite")], cli_env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) >= {"question", "mode", "report", "sources", "usage", "stopped_by", "citations"}
    assert out["question"] == QUESTION and out["mode"] == "iterative"
    assert out["stopped_by"] == "complete"
    ids = {s["id"] for s in out["sources"]}
    assert set(map(int, re.findall(r"\[(\d+)\]", out["report"]))) <= ids
    assert out["usage"]["llm_calls"] == len(stub.requests)  # counted from the server's usage figures
    assert out["usage"]["total_tokens"] > 0
    assert "thread" in r.stderr  # progress and the thread id go to stderr
    # structured outputs went through strict json_schema first
    assert any(req["body"].get("response_format", {}).get("type") == "json_schema" for req in stub.requests)
    assert "sk-test-0123456789abcdef" not in r.stdout + r.stderr


def test_report_to_a_file(stub, cli_env, tmp_path):
    cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
    out = tmp_path / "report.md"
    r = cli([QUESTION, "--mode", "iterative", "--model", "openai:stub", "--base-url", stub.base_url, "-o", str(out),
             "--quiet", "--db", str(tmp_path / "runs.sqlite")], cli_env)
    assert r.returncode == 0, r.stderr
    assert out.read_text().count("## Sources") == 1
    assert r.stdout == ""


@pytest.mark.parametrize("args,message", [
    (["", "--mode", "iterative"], "the question is empty"),
    (["   \n  ", "--mode", "iterative"], "the question is empty"),
    (["q", "--model", "gpt9"], "unknown model 'gpt9'; valid: local, openai:<model>"),
    (["q", "--search", "bing"], "unknown search backend 'bing'; valid: wiki, docs:<folder>, tavily"),
    (["q", "--search", "docs:/no/such/folder"], "docs folder not found"),
    (["q", "--model", "openai:gpt-4o-mini"], "needs OPENAI_API_KEY"),
    (["q", "--search", "tavily"], "needs TAVILY_API_KEY"),
    (["q", "--output", "/no/such/dir/report.md"], "does not exist"),
    (["q", "--max-iterations", "0"], "must be positive"),
    (["q", "--mode", "sideways"], "invalid choice"),
])
def test_bad_input_gets_one_line_and_exit_2(args, message, cli_env):
    r = cli(args, cli_env)
    assert r.returncode == 2
    assert message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr


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
