"""what the CLI reads is bounded, and malformed input is refused
with one line.

- item 5: a docs folder nested 1,500 levels deep is searched (no RecursionError);
- item 6: every file the CLI reads (`edit --file`, `--template`, a `template` sample, `--mcp`,
  `.env`, docs files) is a regular file read up to its limit: /dev/zero and a FIFO nobody
  writes to are refused at once with one line (exit 2), never read to their end or waited on;
- item 7: `resume --answer` with a 5,000-digit integer or nesting past the parser's stack, and
  an `--mcp` config nested 50,000 levels, are bad input (exit 2, one line); an outline
  replacement whose `depends_on` holds integers past 64 bits has them dropped with
  `dependency_dropped` events;
- more of the same kind: the review and clarifying prompts read a bounded line at a time.

Item 11 (two edits of one thread at once) and `edit sync --file` are in test_edit_lock.py.

The CLI runs in subprocesses against the OpenAI stub on 127.0.0.1. A command that would hang
(reading a FIFO) is caught by the subprocess timeout: a failure, not a hung suite.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3

import pytest

from deepresearch.files import FileReadError, read_bytes, walk_files
from tests.fakes import researcher
from tests.helpers import QUESTION, citations_resolve, cli, one_line_error
from tests.stub_openai import StubOpenAI

KEY = "sk-test-bounded-0123456789abcdef"
HANG = 120  # seconds: only a command that waits on a FIFO ever gets near it


def stub_run(stub, db, *extra) -> list[str]:
    return [
        QUESTION,
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
        *map(str, extra),
    ]


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
    body = out["report"].split("\n## Sources")[0]
    assert "Gustave Eiffel" in body and "[1]" in body


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
    cases = [
        (["template", "/dev/zero"], "a device, not a regular file"),
        (["template", fifo], "a FIFO"),
        ([QUESTION, "--template", fifo, "--db", tmp_path / "runs.sqlite"], "a FIFO"),
        (["tools", "--mcp", fifo], "a FIFO"),
        (["tools", "--mcp", "/dev/zero"], "a device"),
        ([QUESTION, "--mcp", fifo, "--db", tmp_path / "runs.sqlite"], "a FIFO"),
    ]
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
        "pipe.md: a FIFO (named pipe), not a regular file",
        "zero.md: a device, not a regular file",
    ]


# --- item 7: malformed answers and configs --------------------------------------------------------


def test_answers_and_mcp_configs_past_the_parsers_limits_are_bad_input(tmp_path, capsys):
    from deepresearch.cli import main

    db = tmp_path / "none.sqlite"
    nested = tmp_path / "nested.json"
    nested.write_text('{"mcpServers": ' + "[" * 50_000 + "]" * 50_000 + "}")
    digits = tmp_path / "digits.json"
    digits.write_text('{"mcpServers": {"x": {"command": "true", "cwd": ' + "9" * 5000 + "}}}")
    cases = [
        (
            ["resume", "t", "--db", str(db), "--answer", '{"action": "accept", "round": ' + "7" * 5000 + "}"],
            "--answer holds a number with too many digits",
        ),
        (["resume", "t", "--db", str(db), "--answer", "[" * 50_000 + "]" * 50_000], "--answer is nested too deeply"),
        (
            [
                "resume",
                "t",
                "--db",
                str(db),
                "--answer",
                '{"action": "replace", "outline": ' + '{"a": ' * 200 + "1" + "}" * 201,
            ],
            "--answer is nested too deeply",
        ),
        (["tools", "--mcp", str(nested)], "is not usable JSON: nested too deeply"),
        ([QUESTION, "--db", str(db), "--mcp", str(nested)], "is not usable JSON: nested too deeply"),
        (["tools", "--mcp", str(digits)], "is not usable JSON: a number with too many digits"),
        ([QUESTION, "--db", str(db), "--mcp", str(digits)], "is not usable JSON: a number with too many digits"),
    ]
    for argv, words in cases:
        assert main(argv) == 2, argv[:2]
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err and "Traceback" not in err, (argv[:2], err[:300])
    assert not db.exists()  # refused before any work


def test_huge_integers_in_a_replacement_outlines_dependencies_are_dropped(fake_model, tmp_path):
    """`resume --answer` with `depends_on` integers past 64 bits: the checkpoint (msgpack)
    cannot store them as numbers; parsed at the CLI's boundary they are kept as their digits,
    and the outline review drops them with `dependency_dropped` events."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command

    from deepresearch.cli.resume import parse_json_answer
    from deepresearch.config import Context
    from deepresearch.graphs.deep import build
    from tests.deep_helpers import deep_responder, run_deep

    spec, _ = fake_model(deep_responder(2))
    with sqlite3.connect(str(tmp_path / "runs.sqlite"), check_same_thread=False) as conn:
        graph = build(checkpointer=SqliteSaver(conn))
        config = {"configurable": {"thread_id": "dep-1"}, "recursion_limit": 100}
        ctx = Context(model=spec, writer="single", max_iterations=1, outline_style="dependent", outline_review=True)
        _, _, asked = run_deep(graph, ctx, config, {"question": QUESTION})
        assert asked and asked[0]["type"] == "outline_review"
        huge = 10**40
        answer = parse_json_answer(
            json.dumps(
                {
                    "action": "replace",
                    "outline": {
                        "title": "My tower report",
                        "sections": [
                            {"title": "Engineer", "key_question": "Who was Gustave Eiffel?"},
                            {
                                "title": "Paris",
                                "key_question": "What is Paris known for?",
                                "depends_on": [huge, -huge, 0, 2**64],
                            },
                        ],
                    },
                }
            )
        )
        final, events, _ = run_deep(graph, ctx, config, Command(resume=answer), [{"action": "accept"}])
    assert [s["depends_on"] for s in final["plan"]["sections"]] == [[], [0]]
    dropped = [(e["index"], e["reason"], e["ref"]) for e in events if e["type"] == "dependency_dropped"]
    assert dropped == [(1, "unknown", str(huge)), (1, "unknown", str(-huge)), (1, "unknown", str(2**64))]
    assert final["report"] and citations_resolve(final)


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
    from deepresearch.cli.clarifying import ask_clarify
    from deepresearch.cli.review import ask
    from deepresearch.files import MAX_LINE_CHARS

    outline = {"title": "T", "sections": [{"title": "A", "key_question": "A?"}]}
    for prompt, value in (
        (ask, {"outline": outline, "round": 1, "max_rounds": 2}),
        (ask_clarify, {"questions": ["Which tower?"], "round": 1, "max_rounds": 2}),
    ):
        stdin = EndlessLine()
        assert prompt(value, stdin=stdin, stderr=io.StringIO()) is None  # as at the end of input: left waiting
        assert stdin.asked == [MAX_LINE_CHARS + 1]
    stdin, err = ManyRows(), io.StringIO()
    assert ask({"outline": outline, "round": 1, "max_rounds": 2}, stdin=stdin, stderr=err) is None
    assert "not used: an outline is at most 1,000,000 characters" in err.getvalue()
