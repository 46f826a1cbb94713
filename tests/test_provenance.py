"""The `infer` node: each report sentence's chain, the views of it (text, HTML page,
Mermaid), hostile data kept inert, and a deep run with a dependent outline."""

import re
import uuid

from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build as build_deep
from deepresearch.provenance.chains import build
from deepresearch.provenance.views import SCRIPT, as_html, as_mermaid, as_text
from deepresearch.store import put_text
from deepresearch.text.urls import source_key
from tests.deep_helpers import deep_responder, run_deep
from tests.dependent_helpers import dep_plan
from tests.fakes import first_sentence
from tests.page_helpers import parse

HOSTILE = (
    "<script>alert(1)</script><img src=x onerror=alert(2)>[click](javascript:alert(3))"
    '<a href="https://evil.example/">win</a>'
)


def hostile_state():
    url = "https://en.wikipedia.org/wiki/Hostile"
    text = f"The tower was built in 1889 by Gustave Eiffel. {HOSTILE} It is 330 metres tall."
    key = source_key(url)
    put_text(key, text)
    src = {
        "id": 1,
        "key": key,
        "title": HOSTILE,
        "url": url,
        "backend": "wiki",
        "snippet": text[:200],
        "query": f"tower {HOSTILE}",
        "round": 1,
        "gap": HOSTILE,
    }
    other = {
        "id": 2,
        "key": source_key(url + "2"),
        "title": "Banana",
        "url": url + "2",
        "backend": "wiki",
        "snippet": "Bananas are yellow fruit.",
        "query": "bananas",
        "round": 2,
        "gap": "",
    }
    report = (
        "# Q\n\n## Built\n\nThe tower was built in 1889 by Gustave Eiffel [1].\n\n## Sources\n\n"
        "[1] x — https://en.wikipedia.org/wiki/Hostile\n"
    )
    return {
        "question": f"Who built the tower? {HOSTILE}",
        "report": report,
        "evidence": [src, other],
        "sources": [{"id": 1, "title": HOSTILE, "url": url, "backend": "wiki"}],
        "citations": [
            {
                "sentence": "The tower was built in 1889 by Gustave Eiffel.",
                "source_id": 1,
                "score": 0.9,
                "verdict": "supported",
                "span": f"The tower was built in 1889. {HOSTILE}",
            }
        ],
        "concepts": [
            {
                "name": "Gustave Eiffel",
                "query": "Gustave Eiffel",
                "title": None,
                "phrase": "gustave eiffel",
                "origin": "bridge",
                "sentence": f"Named by {HOSTILE}",
            }
        ],
        "covered": ["Gustave Eiffel"],
    }


def test_the_chain_of_a_sentence_and_what_was_not_cited():
    prov = build(hostile_state())
    [s] = prov["sentences"]
    [chain] = s["chains"]
    assert [step["step"] for step in chain] == ["question", "concept", "search", "source", "passage", "sentence"]
    assert chain[1]["name"] == "Gustave Eiffel" and chain[1]["named_by"].startswith("Named by")  # a bridge
    assert chain[2]["round"] == 1 and chain[2]["backend"] == "wiki" and chain[3]["id"] == 1
    assert chain[4]["verdict"] == "supported" and chain[-1] == {"step": "sentence", "index": 1}
    assert s["text"] == "The tower was built in 1889 by Gustave Eiffel."
    assert prov["uncited"] == [
        {
            "title": "Banana",
            "url": "https://en.wikipedia.org/wiki/Hostile2",
            "backend": "wiki",
            "query": "bananas",
            "why": "off-topic",
        }
    ]
    assert {(x["query"], x["cited"]) for x in prov["searches"]} == {(f"tower {HOSTILE}", True), ("bananas", False)}


def test_hostile_titles_passages_and_questions_stay_inert_in_every_view():
    prov = build(hostile_state())
    page = as_html(prov)
    p = parse(page)
    names = [t for t, _ in p.tags]
    assert names.count("script") == 1 and p.scripts == [SCRIPT]
    assert "img" not in names and "a" not in names  # no image or link is live
    assert not any(k.startswith("on") or "javascript" in (v or "") for _, a in p.tags for k, v in a.items())
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown as text
    # the passage of the sentence's chain is highlighted (marks only around shared words)
    assert "<mark>tower</mark>" in page and "<mark>1889</mark>" in page
    text = as_text(prov)
    assert all("\x1b" not in line for line in text.splitlines()) and "<script>" in text  # one line, as text
    assert len(text.splitlines()) == len(as_text(build({**hostile_state(), "question": "q"})).splitlines())
    mermaid = as_mermaid(prov)
    for line in mermaid.splitlines()[1:]:
        label = re.search(r'\["(.*)"\]', line)
        assert label is None or not re.search(r'["\[\]<>`]', label.group(1)), line


def purpose_cites_what_design_found():
    """The deep responder, but Purpose searches something else and writes from the Eiffel Tower
    article, which only the sections it depends on retrieved (a sentence Design does not write)."""
    base = deep_responder(plans=[dep_plan()], write=lambda prompt, ids: write(prompt, ids))

    def write(prompt, ids):
        m = re.search(r'<source id="(\d+)" title="Eiffel Tower">\n(.*?)\n</source>', prompt, re.S)
        g = re.search(r'<source id="(\d+)" title="Gustave Eiffel">\n(.*?)\n</source>', prompt, re.S)
        if "Why was the Eiffel Tower built" in prompt and m and g:
            # (not the sentence the report's answer paragraph quotes: the proofreader keeps its first occurrence)
            return (
                f"{m.group(2).split('. ')[1].rstrip('.')} [{m.group(1)}]. "
                f"{g.group(2).split('. ')[1].rstrip('.')} [{g.group(1)}]."
            )
        return " ".join(f"{first_sentence(prompt, i)} [{i}]." for i in ids[:3]) or "Nothing."

    def respond(kind, prompt, n):
        if kind == "AgentSelectionPlan" and "Why was the Eiffel Tower built" in prompt:
            return {"tasks": [{"gap": "fruit", "tool": "wiki", "query": "Banana"}]}
        return base(kind, prompt, n)

    return respond


def test_a_dependent_deep_run_names_the_section_a_borrowed_source_came_from(fake_model):
    spec, _model = fake_model(purpose_cites_what_design_found())
    graph = build_deep(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 100}
    ctx = Context(model=spec, writer="single", max_iterations=2, outline_style="dependent")
    final, _events, _ = run_deep(
        graph, ctx, config, {"question": "Give an overview of the Eiffel Tower: its design, construction and purpose"}
    )
    prov = final["provenance"]
    cited = [s for s in prov["sentences"] if s["citations"]]
    assert cited and all(len(s["chains"]) == len(s["citations"]) for s in cited)
    [purpose, own] = [s for s in prov["sentences"] if s["section"] == "Purpose"]
    [chain] = purpose["chains"]
    source = next(step for step in chain if step["step"] == "source")
    assert source["title"] == "Eiffel Tower" and source["borrowed_from"] == "Design"
    search = next(step for step in chain if step["step"] == "search")
    assert search["section"] == "Design" and search["query"] != "Banana"
    # a source a section found itself is not called borrowed
    design = [
        step
        for s in prov["sentences"]
        if s["section"] == "Design"
        for c in s["chains"]
        for step in c
        if step["step"] == "source"
    ]
    assert design and not any(step.get("borrowed_from") for step in design)
    # Purpose also cites Gustave Eiffel, which Design retrieved first (borrowed only if Purpose did not find it too)
    [chain] = own["chains"]
    source = next(step for step in chain if step["step"] == "source")
    assert source["title"] == "Gustave Eiffel" and source.get("borrowed_from") in (None, "Design")
    assert "borrowed from section Design" in as_text(prov) and "borrowed from section Design" in as_html(prov)
