"""A failed rewrite never repeats the report's own text: every edit action whose model reply
is unusable (cut at its cap, a fragment, a copy of text the report has) leaves the report as
it was and says so, or falls back to sentences the report does not have yet."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tests.fakes import editor, first_sentence, paragraph_writer, passage_of
from tests.hostile_stub import Flood, HostileStub
from tests.test_report_feedback import Session, body, cited_line, first_sentence_of

KEY = "sk-FAKE-edit-0123456789abcdef"


def sentence_counts(report: str) -> Counter:
    """The body's sentences (citations, marks, case and spacing aside), counted; headings and
    notes left out. The test's own reading, not the product's."""
    out = Counter()
    for line in body(report).split("\n"):
        if line.startswith(("#", ">")) or not line.strip():
            continue
        for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", line.strip()):
            plain = " ".join(re.sub(r"\[\d+\]|\^unverified\^", "", s).lower().split()).rstrip(".!? ")
            if plain:
                out[plain] += 1
    return out


def more_often(old: str, new: str) -> list[str]:
    before, after = sentence_counts(old), sentence_counts(new)
    return [s for s, n in after.items() if n > max(before[s], 1)]


@pytest.mark.parametrize("action", ["expand", "shorten", "polish", "supplementary_search", "fact_check"])
def test_a_failed_rewrite_repeats_nothing(fake_model, action):
    """The model answers every rewrite with the passage cut short (as a server that ignores
    the cap is cut): the report is left unchanged with the reason, or changed by a fallback
    that adds only sentences it did not have."""
    s = Session(fake_model, editor(paragraph_writer(), rewrite=lambda instruction, passage, ids: passage[:15]))
    old = s.values["report"]
    paragraph = cited_line(old)
    text = paragraph if action == "shorten" else first_sentence_of(paragraph)
    extra = {"query": "Statue of Liberty copper framework"} if action == "supplementary_search" else {}
    answer = s.send(s.span(text, action, **extra))
    new = s.values["report"]
    assert more_often(old, new) == []
    if answer.get("error"):
        assert "unchanged" in answer["error"] and new == old
    if action in ("expand", "supplementary_search"):  # the sources' own sentences stand in, said so
        change = answer["last_change"]
        added = set(sentence_counts(new)) - set(sentence_counts(old))
        assert "error" not in answer and added, answer
        assert "instead" in change["fallback"]


def test_related_paragraphs_do_not_repeat_the_selections_new_text(fake_model):
    """selected_and_related: a model that adds the same new finding to every paragraph it
    revises gets it into one of them only."""

    def same_everywhere(kind, prompt, n):
        passage = passage_of(prompt) if kind == "text" else None
        if passage is None:
            return base(kind, prompt, n)
        m = re.search(r'<source id="(\d+)" title="Statue of Liberty">', prompt)
        return passage + (f" {first_sentence(prompt, int(m.group(1)))} [{m.group(1)}]." if m else "")

    base = editor(paragraph_writer())
    s = Session(fake_model, same_everywhere)
    old = s.values["report"]
    answer = s.send(
        s.span(
            first_sentence_of(cited_line(old)),
            "supplementary_search",
            scope="selected_and_related",
            query="Statue of Liberty copper framework by Gustave Eiffel",
        )
    )
    new = s.values["report"]
    assert "error" not in answer, answer
    assert new.count("The Statue of Liberty is a colossal neoclassical sculpture") == 1
    assert more_often(old, new) == []


def test_the_repeat_check_counts_sentences_not_characters():
    """The last guard (any producer of new text): a sentence the body has is not said again,
    whatever its citation, mark or case; repeats the body had already are not new repeats."""
    from deepresearch.edit.actions import repeated

    old = "# T\n\nThe tower is tall [1]. It is iron [2].\n\nA note. A note."
    assert repeated(old, old.replace("It is iron [2].", "It is iron [2]. The TOWER is tall [3]^unverified^.")) == [
        "the tower is tall"
    ]
    assert repeated(old, old.replace("It is iron [2].", "It is iron [2]. It rusts [2].")) == []
    assert repeated(old, old + " Something new.") == []


def test_a_reply_cut_at_its_cap_is_not_used_as_the_rewrite(fake_model, monkeypatch):
    """A server that ignores the completion cap and repeats its reply: the reply is cut (a
    `model_mode` line says the server ignores the cap), the rewrite is not used, and expand falls back to new sentences, saying
    why; nothing of the report is repeated."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def plan(kind, n, request):
        prompt = "\n".join(str(m.get("content") or "") for m in request.get("messages", []))
        return Flood(200_000, repeat=True) if "\nPassage:\n" in prompt else None

    with HostileStub(editor(paragraph_writer()), plan) as stub:
        s = Session(fake_model, spec="openai:stub", base_url=stub.base_url)
        old = s.values["report"]
        answer = s.send(s.span(first_sentence_of(cited_line(old)), "expand"))
    new = s.values["report"]
    # the server ignores the cap: said once as a model_mode line (the reply up to the cap is kept,
    # but a rewrite cut short is not used)
    assert any(e["type"] == "model_mode" and "cap" in str(e.get("mode", "")) for e in s.events), [
        e for e in s.events if e["type"] in ("error", "model_mode")
    ]
    assert "error" not in answer, answer
    assert answer["last_change"]["fallback"].startswith("the model's reply was cut at its cap")
    assert more_often(old, new) == [] and new != old
    assert KEY not in str(s.values)


def test_expand_of_a_sentence_without_its_citation_cites_it_once(fake_model):
    """A selection of a sentence's words without its trailing " [n]." is widened over them
    (the rewrite cites and ends its sentences itself: "… New York [2]. [2]." otherwise)."""
    s = Session(fake_model)
    old = s.values["report"]
    paragraph = cited_line(old)
    sentence = first_sentence_of(paragraph)
    words = re.sub(r"\s*(?:\[\d+\])+[.!?]$", "", sentence)
    assert words != sentence  # the sentence ends with its citation
    answer = s.send(s.span(words, "expand"))
    new = s.values["report"]
    change = answer["last_change"]
    assert "error" not in answer, answer
    assert (change["start"], change["end"]) == (old.index(sentence), old.index(sentence) + len(sentence))
    rewritten = body(new)[change["start"] : change["new_end"]]
    assert not re.search(r"\]\s*[.!?]\s*(?:\[\d+\])+\s*[.!?]", body(new)), rewritten
