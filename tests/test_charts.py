"""The `charts` node: points checked against the cited source's full text, rendering,
the vision critique loop (a stub of an OpenAI-compatible endpoint at the HTTP boundary),
failures as events, and the only images a report keeps."""

import json
import re
from pathlib import Path

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.memory import InMemoryStore

from deepresearch.charts.facts import candidates, checked
from deepresearch.config import Context
from deepresearch.nodes.charts import charts
from deepresearch.nodes.infer import infer
from deepresearch.state.iterative import IterativeState
from deepresearch.store import put_text
from deepresearch.text.safe import defuse_body
from deepresearch.text.urls import source_key
from tests.helpers import cli, one_line_error
from tests.stub_openai import StubOpenAI

URL = "https://en.wikipedia.org/wiki/French_Indochina"
TEXT = (
    "French Indochina, officially known as the Indochinese Union and after 1941 as the Indochinese Federation, "
    "was a group of French dependent territories in Southeast Asia from 1887 to 1954. It was initially a "
    "federation of French colonies (1887–1949), later a confederation of French associated states (1949–1954). "
    "It comprised Cambodia, Laos, Guangzhouwan (1898–1945), Cochinchina, and Vietnamese regions of Tonkin and "
    "Annam. It was established in 1887 and was dissolved in 1954."
)
REPORT = """# When was French Indochina established?

## French Indochina

French Indochina was a group of French dependent territories in Southeast Asia from 1887 to 1954 [1]. It was initially a federation of French colonies (1887–1949), later a confederation of French associated states (1949–1954) [1]. It was established in 1887 and was dissolved in 1956 [1].

## Sources

[1] French Indochina — https://en.wikipedia.org/wiki/French_Indochina

_Verification: 3 citations checked against the retrieved text: 3 supported, 0 partial, 0 unverified._
"""


def state(report=REPORT, title="French Indochina"):
    key = source_key(URL)
    put_text(key, TEXT)  # outside a run: the local text store, as a run without a store keeps texts
    source = {
        "id": 1,
        "key": key,
        "title": title,
        "url": URL,
        "backend": "wiki",
        "snippet": TEXT[:200],
        "query": "French Indochina",
        "round": 1,
        "gap": "",
    }
    return {
        "question": "When was French Indochina established?",
        "report": report,
        "evidence": [source],
        "sources": [{"id": 1, "title": title, "url": URL, "backend": "wiki"}],
        "citations": [],
        "concepts": [
            {
                "name": "French Indochina",
                "query": "French Indochina",
                "title": "French Indochina",
                "phrase": "french indochina",
                "origin": "question",
            }
        ],
        "covered": ["French Indochina"],
    }


def run(st, ctx, store=None):
    """The charts and infer nodes on a finished report; (final state, custom events)."""
    g = StateGraph(IterativeState, context_schema=Context)
    g.add_node("charts", charts)
    g.add_node("infer", infer)
    g.add_edge(START, "charts")
    g.add_edge("charts", "infer")
    g.add_edge("infer", END)
    events, final = [], None
    for mode, chunk in g.compile(store=store).stream(st, context=ctx, stream_mode=["custom", "values"]):
        if mode == "custom":
            events.append(chunk)
        else:
            final = chunk
    return final, events


def test_a_point_whose_value_is_not_in_its_source_is_dropped(tmp_path):
    found = candidates(REPORT)
    values = {p["value"]: p for p in found}
    assert {"1887 to 1954", "1887–1949", "1949–1954", "1887", "1956"} <= set(values)
    assert checked(values["1956"], {1: TEXT}) is None  # the source says 1954
    assert checked(values["1887"], {1: TEXT})["citation"] == 1
    # a label the source does not have is dropped too, even with a true value
    wrong_label = {**values["1887"], "label": "It was conquered by Spain"}
    assert checked(wrong_label, {1: TEXT}) is None

    final, events = run(state(), Context(charts=True, charts_dir=str(tmp_path / "c"), charts_href="c"))
    [chart] = final["charts"]
    assert chart["kind"] == "timeline" and chart["section"] == "French Indochina"
    assert set(chart) == {"title", "kind", "section", "points", "files", "iterations"}
    assert "1956" not in [p["value"] for p in chart["points"]] and len(chart["points"]) == 4
    flat = " ".join(TEXT.split())
    for p in chart["points"]:
        assert set(p) == {"label", "value", "unit", "citation"} and p["citation"] == 1
        assert p["label"] in flat and all(y in flat for y in re.findall(r"\d{4}", p["value"]))
    assert any(e["type"] == "chart" and e.get("dropped") == 1 for e in events)
    # the image: our own file, by a path relative to the report, after its section, with a caption
    svg, png = chart["files"]
    assert Path(svg).read_text().startswith("<?xml") and Path(png).read_bytes()[:4] == b"\x89PNG"
    name = Path(png).name
    body = final["report"].split("## Sources")[0]
    assert f"![Timeline: French Indochina](c/{name})" in body
    assert "*Figure 1: Timeline: French Indochina. Sources: [1].*" in body
    assert body.index("dissolved in 1956") < body.index("![Timeline")
    assert final["chart_images"] == [f"![Timeline: French Indochina](c/{name})"]


def test_charts_off_by_default_and_nothing_chartable_is_information(tmp_path):
    final, _ = run(state(), Context(charts_dir=str(tmp_path / "c")))
    assert "charts" not in final and final["report"] == REPORT and not (tmp_path / "c").exists()
    plain = REPORT.replace(" from 1887 to 1954", "").replace(" (1887–1949)", "").replace(" (1949–1954)", "")
    final, events = run(state(plain), Context(charts=True, charts_dir=str(tmp_path / "c")))
    assert final["charts"] == [] and final["report"] == plain
    # nothing to chart is no failure: an info event and the reason in the result, no error
    assert final["charts_skipped"].startswith("nothing chartable: ")
    assert [e for e in events if e.get("skipped")] == [{"type": "chart", "skipped": final["charts_skipped"]}]
    assert not [e for e in events if e["type"] == "error"]
    drawn, _ = run(state(), Context(charts=True, charts_dir=str(tmp_path / "d")))
    assert drawn["charts"] and drawn.get("charts_skipped") is None
    # the terminal shows it as progress, not as an error; `--json` has one line on it
    from deepresearch.cli.progress import describe_event
    from deepresearch.runtime.runner import result_of

    line = describe_event({"type": "chart", "skipped": final["charts_skipped"]})
    assert line.startswith("charts: none drawn (nothing chartable") and "error" not in line
    assert result_of(final, question="q", mode="iterative", thread_id="t")["charts_skipped"] == final["charts_skipped"]
    assert "charts_skipped" not in result_of(drawn, question="q", mode="iterative", thread_id="t")


def test_a_failing_renderer_leaves_the_report_without_a_chart_and_an_event(tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the chart folder should be")
    final, events = run(state(), Context(charts=True, charts_dir=str(blocked)))
    assert final["charts"] == [] and final["report"] == REPORT and "![" not in final["report"]
    assert any(e["type"] == "error" and e["node"] == "charts" and "chart not drawn" in e["cause"] for e in events)
    assert final["provenance"]["sentences"]  # the run goes on: infer still ran


# --- the critique loop, at the HTTP boundary ---------------------------------------------


def chat_requests(stub):
    return [r for r in stub.requests if r["path"].endswith("/chat/completions")]


def critique_ctx(stub, tmp_path, **kw):
    return Context(
        charts=True,
        charts_dir=str(tmp_path / "c"),
        chart_model="openai:vision-stub",
        chart_base_url=stub.base_url,
        **kw,
    )


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-chart-critique-0000")


@pytest.mark.parametrize("rounds", [0, 2])
def test_max_chart_iterations_bounds_the_model_calls(tmp_path, key, rounds):
    # a critic that always asks for a change: the loop stops at the bound
    replies = iter(range(100))
    with StubOpenAI(
        respond=lambda kind, prompt, n: {"ok": False, "problems": ["labels small"], "font_size": 8 + next(replies) % 5}
    ) as stub:
        final, _ = run(state(), critique_ctx(stub, tmp_path, max_chart_iterations=rounds))
    assert len(chat_requests(stub)) == rounds
    assert final["charts"][0]["iterations"] == rounds
    if rounds:  # the model saw the rendered PNG
        content = chat_requests(stub)[0]["body"]["messages"][-1]["content"]
        image = next(part for part in content if part["type"] == "image_url")["image_url"]["url"]
        assert image.startswith("data:image/png;base64,")


def test_a_critique_changes_the_presentation_and_never_the_data(tmp_path, key):
    with StubOpenAI(respond=lambda kind, prompt, n: {"ok": True}) as stub:
        before, _ = run(state(), critique_ctx(stub, tmp_path / "a", max_chart_iterations=2))
    fixed = before["charts"][0]["points"]
    assert len(chat_requests(stub)) == 1 and before["charts"][0]["iterations"] == 0  # ok: no change, no more calls

    def restyle(kind, prompt, n):
        return (
            {
                "ok": False,
                "problems": ["the labels are hard to read"],
                "font_size": 12,
                "height": 5,
                "title": "French Indochina, 1887 to 1954",
            }
            if n == 0
            else {"ok": True}
        )

    with StubOpenAI(respond=restyle) as stub:
        after, _ = run(state(), critique_ctx(stub, tmp_path / "b", max_chart_iterations=2))
    chart = after["charts"][0]
    assert chart["iterations"] == 1 and len(chat_requests(stub)) == 2
    assert chart["title"] == "French Indochina, 1887 to 1954" and chart["points"] == fixed
    assert "![French Indochina, 1887 to 1954](" in after["report"]


def test_a_critique_that_changes_a_value_is_refused(tmp_path, key):
    with StubOpenAI(respond=lambda kind, prompt, n: {"ok": True}) as stub:
        honest, _ = run(state(), critique_ctx(stub, tmp_path / "a", max_chart_iterations=2))
    points = honest["charts"][0]["points"]
    forged = [
        {"label": p["label"], "value": "1999" if i == 0 else p["value"], "citation": p["citation"]}
        for i, p in enumerate(points)
    ]
    with StubOpenAI(
        respond=lambda kind, prompt, n: {"ok": False, "problems": ["wrong year"], "font_size": 12, "points": forged}
    ) as stub:
        final, events = run(state(), critique_ctx(stub, tmp_path / "b", max_chart_iterations=2))
    chart = final["charts"][0]
    assert chart["points"] == points and chart["iterations"] == 0 and len(chat_requests(stub)) == 1
    assert any(e["type"] == "error" and "refused" in e["cause"] for e in events)
    assert "1999" not in final["report"]


def test_a_hostile_chart_title_from_the_model_never_reaches_the_report(tmp_path, key):
    title = (
        "<img src=x onerror=alert(1)> see [here](https://evil.example/x) ![p](https://evil.example/p.png) "
        "<script>alert(2)</script>"
    )
    with StubOpenAI(respond=lambda kind, prompt, n: {"ok": False, "title": title, "font_size": 10}) as stub:
        final, _ = run(state(), critique_ctx(stub, tmp_path, max_chart_iterations=1))
    body = final["report"].split("## Sources")[0]
    for bad in ("<img", "<script", "evil.example", "](https", "![p]"):
        assert bad not in body and bad not in json.dumps(final["charts"])
    assert len(re.findall(r"!\[", body)) == 1  # our chart, and nothing else


def test_the_sanitizer_keeps_exactly_the_reports_own_chart_images():
    ours = "![Timeline: French Indochina](r_charts/chart-1-0123abcd.png)"
    body = (
        f"Text [1].\n\n{ours}\n\n![Timeline: French Indochina](r_charts/chart-2-0123abcd.png) "
        "![x](https://evil.example/p.png) ![y](file:///etc/passwd)"
    )
    text, removed = defuse_body(body, {}, lambda u: u, keep_images=[ours])
    assert ours in text and text.count("![") == 1
    assert sum(1 for r in removed if r["reason"] == "image removed") == 3
    assert defuse_body(body, {}, lambda u: u)[0].count("![") == 0  # without the list: no image at all


def test_quantities_of_one_unit_make_a_bar_chart_kept_in_the_runs_store(tmp_path):
    texts = {
        "https://en.wikipedia.org/wiki/Eiffel_Tower": "The Eiffel Tower is 330 metres tall.",
        "https://en.wikipedia.org/wiki/Tower_Bridge": "The Tower Bridge is 244 metres long.",
        "https://en.wikipedia.org/wiki/Statue_of_Liberty": "The Statue of Liberty is 305 feet tall.",
    }
    evidence = []
    for i, (url, text) in enumerate(texts.items(), 1):
        put_text(source_key(url), text)
        evidence.append(
            {
                "id": i,
                "key": source_key(url),
                "title": url.rsplit("/", 1)[1],
                "url": url,
                "backend": "wiki",
                "snippet": text,
                "query": "towers",
                "round": 1,
                "gap": "",
            }
        )
    report = (
        "# Heights\n\n## Heights\n\nThe Eiffel Tower is 330 metres tall [1]. The Tower Bridge is 244 metres "
        "long [2]. The Statue of Liberty is 305 feet tall [3].\n\n## Sources\n\n[1] a\n"
    )
    st = {
        "question": "How tall are they?",
        "report": report,
        "evidence": evidence,
        "citations": [],
        "sources": [{k: e[k] for k in ("id", "title", "url", "backend")} for e in evidence],
    }
    store = InMemoryStore()
    final, _ = run(st, Context(charts=True, charts_dir=str(tmp_path / "c")), store=store)
    [chart] = final["charts"]
    assert chart["kind"] == "bar" and {p["unit"] for p in chart["points"]} == {"m"}  # feet never on a metres axis
    assert [(p["label"], p["value"], p["citation"]) for p in chart["points"]] == [
        ("Eiffel Tower", 330.0, 1),
        ("Tower Bridge", 244.0, 2),
    ]
    [item] = store.search(("deepresearch", "charts"))
    assert item.key == Path(chart["files"][0]).stem and item.value["points"] == chart["points"]
    assert item.value["svg"].startswith("<?xml") and item.value["png"]


def test_bad_chart_options_are_one_line_errors(cli_env, tmp_path):
    db = str(tmp_path / "runs.sqlite")
    line = one_line_error(cli(["q", "--charts", "--chart-model", "nope", "--db", db], cli_env))
    assert "--chart-model" in line
    line = one_line_error(cli(["q", "--charts", "--max-chart-iterations", "-1", "--db", db], cli_env))
    assert "--max-chart-iterations" in line
    (tmp_path / "f").write_text("x")
    line = one_line_error(cli(["q", "--charts", "--charts-dir", tmp_path / "f", "--db", db], cli_env))
    assert "not a folder" in line


def test_an_edit_by_hand_keeps_the_chart_and_drops_a_look_alike(tmp_path):
    from deepresearch.edit.session import EditRun

    charted, _ = run(state(), Context(charts=True, charts_dir=str(tmp_path / "c"), charts_href="c"))
    [ours] = charted["chart_images"]
    fake = ours.replace("chart-1-", "chart-9-")
    edited = charted["report"].replace("It was established", f"{fake}\n\nIt was established", 1)
    update = EditRun(Context(), charted, None).sync({"action": "sync", "report": edited})
    assert update["report"].count(ours) == 1 and fake not in update["report"]
    assert any(r["reason"] == "image removed" for r in update["report_removed"])


def test_the_graphs_load_without_matplotlib_and_the_first_chart_loads_it(tmp_path):
    """Importing the graphs (every CLI run, every server) does not pay for matplotlib; the
    first chart loads it with the settings that make one chart one file."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "import deepresearch.graphs.deep, deepresearch.graphs.iterative\n"
        "print('loaded' if 'matplotlib' in sys.modules else 'not loaded')\n"
        "from pathlib import Path\n"
        "from deepresearch.charts import render as chart_render\n"
        "from deepresearch.charts.facts import DEFAULT_STYLE\n"
        "spec = {'kind': 'bar', 'title': 'Heights', 'x_label': 'm', 'y_label': '', 'unit': 'm',\n"
        "        'style': dict(DEFAULT_STYLE), 'points': [\n"
        "            {'label': 'Eiffel Tower', 'x': 330.0, 'value': 330.0, 'citation': 1},\n"
        "            {'label': 'Tower Bridge', 'x': 244.0, 'value': 244.0, 'citation': 2}]}\n"
        "a, _ = chart_render.render(spec, Path(sys.argv[1]), 'a')\n"
        "b, _ = chart_render.render(spec, Path(sys.argv[1]), 'b')\n"
        "print('loaded' if 'matplotlib' in sys.modules else 'not loaded')\n"
        "print(Path(a[0]).read_bytes() == Path(b[0]).read_bytes(), Path(a[1]).stat().st_size > 0)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(Path(__file__).resolve().parent.parent),
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split("\n")[:3] == ["not loaded", "loaded", "True True"]
