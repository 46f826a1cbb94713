"""Report templates: parsing, the deep outline from a template, the report keeping the
template's headings in order (model, per-source and extractive writers), and
`deepresearch template` on Markdown and HTML samples."""

import re
import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.cli import main
from deepresearch.config import Context
from deepresearch.graphs import deep, iterative
from deepresearch.llm.budget import recursion_limit
from deepresearch.templates import TemplateError, conform, parse_template, place
from tests.clarify_helpers import prompts
from tests.deep_helpers import citations_resolve, deep_responder, run_deep
from tests.fakes import first_sentence, researcher, sources_in

TEMPLATE = """# Tower report

## Design
Who designed the tower, and how.

### Engineers
The people whose firm built it.

## Purpose
Why it was built, and for which event.
"""
PARTS = [("##", "Design"), ("###", "Engineers"), ("##", "Purpose")]


def bodies(report):
    """{heading text: the text under it}."""
    parts = re.split(r"^#{1,6} (.+)$", report.split("## Sources")[0], flags=re.M)
    return {h: b.strip() for h, b in zip(parts[1::2], parts[2::2])}


def headings(report):
    return re.findall(r"^(#{1,6}) (.+)$", report.split("## Sources")[0], re.MULTILINE)


def setup(graph_module, fake_model, respond, **ctx):
    spec, model = fake_model(respond)
    c = Context(model=spec, max_iterations=1, template=TEMPLATE, **ctx)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": recursion_limit(c) + 20}
    return graph_module.build(checkpointer=InMemorySaver()), c, config, model


def test_parse():
    t = parse_template(TEMPLATE)
    assert t["title"] == "Tower report"
    assert [(s["title"], s["level"], s["purpose"]) for s in t["sections"]] == [
        ("Design", 2, "Who designed the tower, and how."),
        ("Engineers", 3, "The people whose firm built it."),
        ("Purpose", 2, "Why it was built, and for which event."),
    ]
    # no lone title: every heading is a part; the shallowest level becomes ##
    t = parse_template("# One\ntext *one*\n# Two\n## Two b\n#### deeper: text of Two b\n")
    assert t["title"] is None
    assert [(s["title"], s["level"], s["purpose"]) for s in t["sections"]] == [
        ("One", 2, "text one"),
        ("Two", 2, ""),
        ("Two b", 3, "deeper: text of Two b"),
    ]
    for bad, why in [("just text", "no headings"), ("\n".join(f"## P{i}" for i in range(21)), "at most 20")]:
        with pytest.raises(TemplateError, match=why):
            parse_template(bad)
    assert Context(template="\n".join(f"## P{i}" for i in range(8))).max_sections == 8  # every part is a section


def test_conform_keeps_the_headings_in_order_and_all_text():
    t = parse_template(TEMPLATE)
    draft = (
        "# Whatever\n\nLead [1].\n\n## Purpose\nFor the fair [2].\n\n## Extra\nMore [3].\n\n## design\nBy Eiffel [1]."
    )
    out = conform(draft, t, "# Tower report")
    assert headings(out) == [("#", "Tower report")] + PARTS
    body = bodies(out)
    assert body["Design"] == "By Eiffel [1]." and body["Purpose"] == "For the fair [2].\n\nMore [3]."
    assert body["Engineers"].startswith("> **Not covered:**")
    assert "Lead [1]." in out.split("## Design")[0]
    assert conform(out, t, "# Tower report") == out  # conforming twice changes nothing


def test_place_puts_each_unit_under_the_part_it_is_about():
    t = parse_template("## Design\nWho designed the tower.\n## Materials\nIron and steel.\n## Visitors\nTourism today.")
    units = [
        ("Gustave Eiffel designed the tower [1].", "a"),
        ("It was made of puddled iron [1].", "a"),
        ("The sky is blue [2].", "b"),
        ("Clouds are white [2].", "b"),
        ("Rain falls [3].", "c"),
    ]
    out = bodies(place(units, t, "# T"))
    assert out.pop("T") == ""  # the title
    assert out == {
        "Design": "Gustave Eiffel designed the tower [1].",
        "Materials": "It was made of puddled iron [1].",
        "Visitors": "The sky is blue [2]. Clouds are white [2].",
    }  # the next source fills an empty part
    many = [(f"The tower was designed in step {i} [1].", "a") for i in range(5)]
    out = bodies(place(many, t, "# T", per_section=2))
    assert out["Design"].count("[1]") == 2  # at most per_section units a part


def test_deep_outline_from_the_template(fake_model):
    kqs = [
        "Who was the engineer behind the Eiffel Tower?",
        "Which engineers built the Eiffel Tower?",
        "Why was the Eiffel Tower built?",
    ]
    plan = {"title": "Model title", "sections": [{"title": t, "key_question": q} for (_, t), q in zip(PARTS, kqs)]}
    graph, ctx, config, model = setup(
        deep, fake_model, deep_responder(plans=[plan]), outline_review=True, writer="single"
    )
    final, events, asked = run_deep(
        graph, ctx, config, {"question": "Tell me about the Eiffel Tower"}, [{"action": "accept"}]
    )
    # the outline review shows the template's parts with the key questions the planner wrote
    assert asked[0]["outline"] == {
        "title": "Tower report",
        "sections": [{"title": t, "key_question": q} for (_, t), q in zip(PARTS, kqs)],
    }
    planner = prompts(model, "ReportPlan")
    assert len(planner) == 1
    assert (
        "1. Design — Who designed the tower, and how." in planner[0] and "3. Purpose — Why it was built" in planner[0]
    )
    assert headings(final["report"]) == [("#", "Tower report")] + PARTS  # no introduction or conclusion added
    assert prompts(model, "Synthesis") == []
    assert [s["title"] for s in final["sections"]] == [t for _, t in PARTS]
    assert citations_resolve(final)


def test_deep_template_without_model_planning(fake_model):
    graph, ctx, config, model = setup(deep, fake_model, deep_responder(), planner="concepts", writer="extractive")
    final, events, asked = run_deep(graph, ctx, config, {"question": "Who was the engineer behind the Eiffel Tower?"})
    assert prompts(model, "ReportPlan") == []
    assert [s["title"] for s in final["outline"]["sections"]] == [t for _, t in PARTS]
    assert (
        "'Engineers' of a report on 'Who was the engineer behind the Eiffel Tower'"
        in final["outline"]["sections"][1]["key_question"]
    )
    assert headings(final["report"]) == [("#", "Tower report")] + PARTS


def test_iterative_model_writer_follows_the_headings(fake_model):
    base = researcher(complete_after=1)

    def respond(kind, prompt, n):
        if kind == "text" and "Use exactly these section headings" in prompt:
            ids = sources_in(prompt)
            # out of order, an extra heading, the sub-part missing
            return (
                f"# Report\n\n## Purpose\n\n{first_sentence(prompt, ids[1])} [{ids[1]}].\n\n## Other\n\n"
                f"{first_sentence(prompt, ids[2])} [{ids[2]}].\n\n## Design\n\n{first_sentence(prompt, ids[0])} [{ids[0]}]."
            )
        return base(kind, prompt, n)

    graph, ctx, config, model = setup(iterative, fake_model, respond, writer="single")
    final, events, asked = run_deep(
        graph, ctx, config, {"question": "Who was the engineer behind the Eiffel Tower, and to what end?"}
    )
    writer = [p for p in prompts(model, "text") if "Use exactly these section headings" in p]
    assert len(writer) == 1 and "### Engineers  (covers: The people whose firm built it.)" in writer[0]
    assert headings(final["report"]) == [("#", "Tower report")] + PARTS
    engineers = final["report"].split("### Engineers")[1].split("## Purpose")[0]
    assert "Not covered" in engineers
    assert len(re.findall(r"\[\d+\]", final["report"].split("## Sources")[0])) == 3  # no text was lost
    assert citations_resolve(final)


@pytest.mark.parametrize("style", ["extractive", "per_source"])
def test_iterative_writers_place_sentences_under_the_headings(fake_model, style):
    base = researcher(complete_after=1)

    def respond(kind, prompt, n):  # a per-source writer that states its source's first sentence
        if kind == "text" and "what this source tells us" in prompt:
            return first_sentence(prompt, sources_in(prompt)[0]) + "."
        return base(kind, prompt, n)

    graph, ctx, config, model = setup(iterative, fake_model, respond, writer=style)
    final, events, asked = run_deep(
        graph, ctx, config, {"question": "Who was the engineer behind the Eiffel Tower, and to what end?"}
    )
    assert headings(final["report"]) == [("#", "Tower report")] + PARTS
    body = final["report"].split("## Sources")[0]
    parts = re.split(r"^#{2,3} .+$", body, flags=re.M)[1:]
    assert len(parts) == 3 and all(re.search(r"\[\d+\]", p) or "Not covered" in p for p in parts)
    assert sum(bool(re.search(r"\[\d+\]", p)) for p in parts) >= 2
    assert citations_resolve(final)


# --- deepresearch template ------------------------------------------------------------

SAMPLE_MD = """# Annual report 2023

This report covers the year. It has three parts.

## Market overview

The market grew by 5% in Europe. Growth was slower elsewhere.

### Risks

Supply chains remain *fragile* and [costly](https://example.com).

## Outlook
"""

SAMPLE_HTML = """<html><head><title>T</title><style>h1 {color: red}</style><script>var x = "<h2>no</h2>";</script>
</head><body><h1>Annual <a href="https://example.com">report</a> 2023</h1><p>This report covers the year.</p>
<h2>Market <em>overview</em></h2><p>The market grew by 5% in Europe.</p><h3>Risks</h3>
<ul><li>Supply chains remain fragile.</li></ul><h2>Outlook</h2><h4>Detail</h4><p>Growth will return.</p></body></html>"""


@pytest.mark.parametrize("name,sample", [("sample.md", SAMPLE_MD), ("sample.html", SAMPLE_HTML)])
def test_template_command(tmp_path, capsys, name, sample):
    src = tmp_path / name
    src.write_text(sample)
    out = tmp_path / "TEMPLATE.md"
    assert main(["template", str(src), "-o", str(out)]) == 0
    assert "4 heading(s) written" in capsys.readouterr().err
    text = out.read_text()
    t = parse_template(text)
    assert t["title"] == "Annual report 2023"
    assert [(s["title"], s["level"]) for s in t["sections"]] == [("Market overview", 2), ("Risks", 3), ("Outlook", 2)]
    purposes = [s["purpose"] for s in t["sections"]]
    assert purposes[0] == "In the sample: The market grew by 5% in Europe."
    assert purposes[1].startswith("In the sample: Supply chains remain fragile")
    assert "example.com" not in text and "var x" not in text and "color" not in text
    assert Context(template=text).max_sections == 5  # usable as it is


def test_template_bad_input(tmp_path, capsys):
    (tmp_path / "plain.md").write_text("No headings at all.\n")
    (tmp_path / "notes.txt").write_text("just words\n")
    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.4 \xff\xfe")
    (tmp_path / "bin.md").write_bytes(b"\xff\xfe\x00#")
    cases = [
        (["template", str(tmp_path / "missing.md")], "no such file"),
        (["template", str(tmp_path / "plain.md")], "no headings"),
        (["template", str(tmp_path / "notes.txt")], "unknown format"),
        (["template", str(tmp_path / "report.pdf")], "unknown format"),
        (["template", str(tmp_path / "bin.md")], "unknown format"),
        (["template"], "required"),
        (["Who was the engineer behind the Eiffel Tower?", "--template", str(tmp_path / "missing.md")], "no such file"),
        (["Who was the engineer behind the Eiffel Tower?", "--template", str(tmp_path / "plain.md")], "no headings"),
        (["Who was the engineer behind the Eiffel Tower?", "--language", "Klingon"], "unknown language"),
    ]
    for argv, why in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and why in err and "Traceback" not in err, (argv, err)
