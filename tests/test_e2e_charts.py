"""End to end, offline (the embedded model and the encyclopedia): a history question with
`--charts` gets a checked timeline, and `deepresearch provenance ID --html` writes a page on which
every report sentence has a chain ending in a passage of its cited source."""

import json
import re
from pathlib import Path

from deepresearch.config import Context
from deepresearch.tools.registry import backend_for
from tests.helpers import citations_resolve, cli
from tests.page_helpers import parse

QUESTION = "When was French Indochina established and dissolved?"


def flat(text: str) -> str:
    return " ".join(text.split())


def article(title: str) -> str:
    """The encyclopedia's text of `title`, as the wiki backend retrieves it."""
    [hit] = [r for r in backend_for(Context(), "wiki").search(title, 1) if r.title == title]
    return flat(hit.text)


def test_a_history_question_gets_a_checked_timeline_and_a_provenance_page(cli_env, tmp_path):
    db, out = tmp_path / "runs.sqlite", tmp_path / "report.md"
    r = cli(
        [QUESTION, "--mode", "iterative", "--charts", "--output", out, "--json", "--db", db, "--thread-id", "fi"],
        cli_env,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert citations_resolve(result)
    report = out.read_text()
    timelines = [c for c in result["charts"] if c["kind"] == "timeline"]
    assert timelines, (result["charts"], r.stderr[-2000:])
    by_id = {s["id"]: s for s in result["sources"]}
    for chart in timelines:
        assert len(chart["points"]) >= 2
        for p in chart["points"]:  # every point is in its cited source's text: label and value
            text = article(by_id[p["citation"]]["title"])
            assert flat(p["label"]) in text, (p, text)
            assert all(y in text for y in re.findall(r"\d{4}", p["value"])), (p, text)
        svg, png = (Path(f) for f in chart["files"])
        assert svg.parent == tmp_path / "report_charts" and png.read_bytes()[:4] == b"\x89PNG"
        # the report shows our own file by a path relative to it, after the section it draws from
        image = f"]({png.parent.name}/{png.name})"
        assert image in report and (out.parent / f"{png.parent.name}/{png.name}").is_file()
        section = report.index(f"## {chart['section']}")
        assert section < report.index(image) < report.index("## Sources")
    assert len(re.findall(r"!\[", report)) == len(result["charts"])  # no other image

    page = tmp_path / "page.html"
    r = cli(["provenance", "fi", "--html", page, "--db", db], cli_env, timeout=300)
    assert r.returncode == 0, r.stderr
    p = parse(page.read_text())
    body = report.split("## Sources")[0]
    sentences = [s for s in result["provenance"]["sentences"]]
    assert sentences and set(p.sentences) == {s["index"] for s in sentences if not s.get("same_as")}
    for s in [s for s in sentences if not s.get("same_as")]:
        cited = [
            int(n)
            for n in re.findall(
                r"\[(\d+)\]", next(line for line in body.splitlines() if s["text"].rstrip(".")[:60] in line)
            )
        ]
        assert cited, s
        steps = p.chains[s["index"]]
        sources = [text for kind, text in steps if kind == "source"]
        passages = [text for kind, text in steps if kind == "passage"]
        assert sources and len(sources) == len(passages)
        for shown, passage in zip(sources, passages):
            n = int(re.match(r"source \[(\d+)\]", shown).group(1))
            assert n in cited
            quote = flat(passage.split(")", 1)[-1])
            assert quote and quote in article(by_id[n]["title"]), (quote, by_id[n]["title"])
    r = cli(["trace", "fi", "--mermaid", "--db", db], cli_env, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("flowchart LR") and "-->" in r.stdout
    r = cli(["provenance", "nope", "--db", db], cli_env, timeout=300)
    assert r.returncode == 2 and "unknown thread id" in r.stderr and "Traceback" not in r.stderr
