"""`--review` at the terminal: comment, edit, accept; and the $EDITOR path."""

import io
import json
import re
import sys

import pytest

from deepresearch.cli.review import ask, outline_to_text, text_to_outline
from tests.deep_helpers import deep_responder
from tests.helpers import citations_resolve, cli
from tests.stub_openai import StubOpenAI

OUTLINE = {"title": "The Eiffel Tower", "sections": [{"title": "Design", "key_question": "Who designed it?"}]}


def test_review_by_typing_answers(cli_env, tmp_path):
    answers = (
        "c Please focus on the engineer\n"
        "e\n# Tower report\n- Engineer :: Who was Gustave Eiffel?\n- Purpose :: Why was the tower built?\n\n"
        "a\n"
    )
    with StubOpenAI(deep_responder(3)) as stub:
        cli_env["OPENAI_API_KEY"] = "sk-test-review-0123456789"
        r = cli(
            [
                "Tell me about the Eiffel Tower",
                "--mode",
                "deep",
                "--review",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--max-iterations",
                "1",
                "--json",
                "--db",
                str(tmp_path / "r.sqlite"),
            ],
            cli_env,
            input=answers,
        )
    assert r.returncode == 0, r.stderr
    assert "review round 1/3" in r.stderr and "review round 2/3" in r.stderr and "review round 3/3" in r.stderr
    planner_prompts = [
        q["body"]["messages"] for q in stub.requests if "Plan a report" in json.dumps(q["body"]["messages"])
    ]
    assert len(planner_prompts) == 2 and "Please focus on the engineer" in json.dumps(planner_prompts[1])
    out = json.loads(r.stdout)
    assert out["outline"] == {
        "title": "Tower report",
        "sections": [
            {"title": "Engineer", "key_question": "Who was Gustave Eiffel?"},
            {"title": "Purpose", "key_question": "Why was the tower built?"},
        ],
    }
    assert re.findall(r"^## (.+)$", out["report"].split("## Sources")[0], re.M) == ["Engineer", "Purpose"]
    assert citations_resolve(out)


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_edit_in_editor(tmp_path, monkeypatch):
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys\nopen(sys.argv[1], 'w').write('# New title\\n- One :: First?\\n- Two :: Second?\\n')\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    answer = ask({"outline": OUTLINE, "round": 1, "max_rounds": 3}, stdin=Tty("e\n"), stderr=io.StringIO())
    assert answer == {
        "action": "replace",
        "outline": {
            "title": "New title",
            "sections": [{"title": "One", "key_question": "First?"}, {"title": "Two", "key_question": "Second?"}],
        },
    }


def test_outline_text_round_trip_and_errors():
    assert text_to_outline(outline_to_text(OUTLINE)) == OUTLINE
    for bad, message in [("- A :: q", "needs a '# title'"), ("# T", "at least one"), ("# T\nwhat", "lines start with")]:
        with pytest.raises(ValueError, match=message):
            text_to_outline(bad)
