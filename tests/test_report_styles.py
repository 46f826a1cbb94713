"""Report styles: presets built on templates. The structure holds whatever the model (the
extractive writer of the embedded model places the sources' sentences under the headings); a
capable model is also told the reader and the tone; the academic style says how the research
was done and the brief style gives five bullets; `deepresearch template --list` shows them."""

from __future__ import annotations

import re

import pytest

from deepresearch.choices.report_styles import PRESETS
from deepresearch.config import Context
from deepresearch.runtime.runner import research
from deepresearch.templates import parse_template
from tests.fakes import researcher
from tests.helpers import cli, one_line_error

QUESTION = "Who built the Eiffel Tower, and for which event?"


def headings(report: str) -> list[str]:
    return re.findall(r"^## (.+)$", report.split("\n## Sources\n")[0], re.M)


def test_academic_with_a_capable_model_structure_tone_and_methods(fake_model, warm):
    model, fake = fake_model(researcher())
    out = research(QUESTION, Context(model=model, max_iterations=1, style="academic"), mode="iterative")
    assert headings(out["report"]) == ["Abstract", "Methods of the research", "Findings", "Limitations"]
    writer = next(c["prompt"] for c in fake.calls if "Use exactly these section headings" in c["prompt"])
    assert "The report as a whole: Formal academic register for a specialist reader" in writer  # the tone
    methods = out["report"].split("## Methods of the research")[1].split("\n## ")[0]
    n = len(out["sources"])
    assert "search(es) of wiki retrieved" in methods and "every citation was then checked" in methods
    assert not re.search(r"\[\d+\]", methods) and n >= 1


def test_brief_with_the_extractive_writer_gives_the_answer_and_bullets(fake_model, warm):
    model, _ = fake_model(researcher())
    out = research(
        QUESTION, Context(model=model, max_iterations=1, style="brief", writer="extractive"), mode="iterative"
    )
    assert headings(out["report"]) == ["Answer", "Key points"]
    points = out["report"].split("## Key points")[1].split("\n## ")[0]
    bullets = [line for line in points.split("\n") if line.startswith("- ")]
    assert 1 <= len(bullets) <= 5 and all(re.search(r"\[\d+\]", b) for b in bullets)


def test_every_preset_is_a_template_with_a_tone():
    for name, (_, text) in PRESETS.items():
        t = parse_template(text)
        assert t["title"] is None and t["about"] and len(t["sections"]) >= 2, name


def test_styles_are_listed_and_bad_input_is_one_line(cli_env):
    r = cli(["template", "--list"], cli_env)
    assert r.returncode == 0 and all(re.search(rf"^{name}\s", r.stdout, re.M) for name in PRESETS)
    assert "Methods of the research" in r.stdout
    assert "not both" in one_line_error(cli(["Why?", "--style", "brief", "--template", "x.md"], cli_env))
    assert "invalid choice" in one_line_error(cli(["Why?", "--style", "poetic"], cli_env))
    with pytest.raises(ValueError, match="not both"):
        Context(style="news", template="## Mine")
    assert Context(style="news").template == PRESETS["news"][1]  # a stored run's context reads back
    assert Context(style="news", template=PRESETS["news"][1]).style == "news"
