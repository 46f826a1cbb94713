"""The answer paragraph: the retrieved sentences that best answer the question's focus.

A report opens with it. Each sentence is a retrieved source's own sentence, cited; it is chosen
for what the question asks for (deepresearch.understanding.embedded.question): the kind of answer (a year, a
place, a person, a number), the focus words ("born", "commissioned"), and, for a question that
reaches its subject through another thing, the last hop's source. For a bridge the sentence
that names the bridge comes first, so the reader sees the hop. For a comparison, one sentence
per thing compared. When no retrieved sentence holds the kind of answer asked for and a focus
word, the paragraph says so instead of guessing.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from deepresearch.report.grounding import cite, extract_sentences, source_sentences, with_subject
from deepresearch.research.coverage import sources_for
from deepresearch.research.sentences import LIFESPAN, NUMBER, YEAR, focus_terms, prefix, prefixes, type_match
from deepresearch.text.citations import support
from deepresearch.text.sentences import STOP
from deepresearch.text.words import bare_title, stems, tokens
from deepresearch.understanding.analysis import Analysis, Focus

ANSWER_HEADING = "## Answer"
OVERVIEW_HEADING = "## Overview"
OVERVIEW_SENTENCES = 3
LIFE = {prefix(x) for x in stems(["born", "died", "birth", "death"])}


@dataclass
class Pick:
    sentence: str
    source: dict
    score: float
    answers: bool  # holds the kind of answer asked for and a focus word (or the hop's name)


def sentences_of(source: dict, text_of) -> list[str]:
    """The source's sentences, its lead line ("Title (description).") included."""
    return source_sentences(text_of(source), 600)


def score_sentence(
    sentence: str, asked: frozenset[str], focus: Focus, terms: set[str], qstems: set[str]
) -> tuple[float, bool]:
    """How well a sentence answers: it holds the kind of answer asked for (a name not among the
    question's words `asked`, a year, a number), the focus words, and the question's other words."""
    have = prefixes(sentence)
    typed = type_match(focus.kind, sentence, asked)
    hits = len(terms & have)
    if LIFESPAN.search(sentence) and terms & LIFE:
        hits += 2  # "(1547–1616)" states a birth and a death year
    related = len(qstems & have)
    score = 2.0 * typed + 1.5 * hits + 0.3 * related + (_near(sentence, focus.kind, terms) if typed and hits else 0)
    return score, typed and (hits > 0 or not terms)


def _near(sentence: str, kind: str, terms: set[str]) -> float:
    """Up to 1 when the year or number stands close to a focus word ("His discovery in 1928")."""
    if kind not in ("year", "number"):
        return 0.0
    words = sentence.split()
    marks = [i for i, w in enumerate(words) if (YEAR if kind == "year" else NUMBER).search(w)]
    hits = [i for i, w in enumerate(words) if prefixes(w) & terms]
    if not marks or not hits:
        return 0.0
    d = min(abs(a - b) for a in marks for b in hits)
    return 1.0 / (1 + d / 3)


def best_sentence(
    sources: list[dict],
    text_of,
    asked: frozenset[str],
    focus: Focus,
    terms: set[str],
    qstems: set[str],
    avoid: AbstractSet[str] = frozenset(),
) -> Pick | None:
    best = None
    for rank, s in enumerate(sources):
        for i, sent in enumerate(sentences_of(s, text_of)):
            if sent in avoid:
                continue
            score, answers = score_sentence(sent, asked, focus, terms, qstems)
            lifespan = bool(LIFESPAN.search(sent) and terms & LIFE)  # a lead line's dates answer "born", "died"
            score -= 0.01 * i + 0.02 * rank + (1.5 if _lead_line(sent, s) and not lifespan else 0.0)
            if best is None or (answers, score) > (best.answers, best.score):
                best = Pick(sent, s, score, answers)
    return best


def answer_picks(analysis: Analysis, concepts: list[dict], evidence: list[dict], text_of) -> tuple[list[Pick], Focus]:
    """The sentences of the answer paragraph, in reading order, and the question's focus."""
    focus = analysis.focus
    terms = focus_terms(focus)
    asked = frozenset(analysis.words)
    qstems = {prefix(s) for s in stems([w for w in analysis.words if w not in STOP])}
    things = [c.data() for c in analysis.compared]
    picks: list[Pick] = []
    if things:
        for c in things:
            p = best_sentence(sources_for(c, evidence, text_of), text_of, asked, focus, terms, qstems)
            if p:
                picks.append(p)
        return picks, focus
    bridges = [c for c in concepts if c.get("origin") == "bridge"]
    described = [c for c in concepts if c.get("origin") == "described"]
    named = [c for c in concepts if c.get("origin") in ("question", "model")]
    # the answer is about the thing the question points at: its hop, its described subject, or
    # the one thing it names
    last = bridges[-1:] or described[-1:] or (named[:1] if len(named) == 1 else [])
    pool = []
    for c in last + [c for c in concepts if c not in last]:
        pool += [s for s in sources_for(c, evidence, text_of) if s not in pool]
    pool += [s for s in evidence if s not in pool][:3]  # a search may hold the answer under another title
    for b in bridges:  # the hop, as the source states it
        via = [s for s in evidence if s.get("key") == b.get("source")]
        if via and b.get("sentence") in sentences_of(via[0], text_of):
            picks.append(Pick(b["sentence"], via[0], 0.0, True))
    for d in described[-1:]:  # a described subject: the sentence that matched its description names it
        own = sources_for(d, evidence, text_of)
        said = d.get("sentence", "")[:80]
        sents = sentences_of(own[0], text_of) if own else []
        whole = next((x for x in sents if said and said in x), None)
        if whole and _lead_line(whole, own[0]):  # matched by its description line: its definition names it
            whole = next((x for x in sents if not _lead_line(x, own[0])), whole)
        if whole:
            name = tokens(bare_title(own[0]["title"]))
            first = next((x for x in sents if not _lead_line(x, own[0])), None)
            if name and not set(name) <= set(tokens(whole)) and first and first != whole:
                picks.append(Pick(first, own[0], 0.0, True))  # the sentence says "it": say first what it is
            picks.append(Pick(whole, own[0], 0.0, True))
    final = sources_for(last[0], evidence, text_of) if last else []
    p = None
    if final:  # the answer is about the thing the question points at
        p = best_sentence(final, text_of, asked, focus, terms, qstems, {x.sentence for x in picks})
        if p and not p.answers:
            p = None
    if p is None:
        p = best_sentence(pool, text_of, asked, focus, terms, qstems, {x.sentence for x in picks})
    if p:
        picks.append(p)
    return picks, focus


def overview_picks(question: str, concepts: list[dict], evidence: list[dict], text_of) -> list[Pick]:
    """A broad question's opening: what its subject is (the subject's own source's first
    sentence) and the sentences of that source that best match the question's words."""
    subjects = [c for c in concepts if c.get("origin") not in ("related", "bridge")]
    source = None
    for c in subjects:
        own = sources_for(c, evidence, text_of)
        if own:
            source = own[0]
            break
    if source is None:
        if not evidence:
            return []
        source = max(evidence, key=lambda s: support(question, f"{s['title']}. {text_of(s)}")[0])
    sents = extract_sentences(text_of(source), question, limit=OVERVIEW_SENTENCES, skip_title=source["title"])
    return [Pick(x, source, 1.0, True) for x in sents]


def answer_paragraph(analysis: Analysis, concepts: list[dict], evidence: list[dict], text_of) -> tuple[str, list[Pick]]:
    """The report's opening answer (Markdown, each sentence cited) and the picks it quotes. A
    broad question opens with an overview instead: it has no short answer to miss."""
    if analysis.broad and not analysis.compared:
        picks = overview_picks(analysis.question, concepts, evidence, text_of)
        if picks:
            return f"{OVERVIEW_HEADING}\n\n{_quoted(picks)}", picks
    picks, focus = answer_picks(analysis, concepts, evidence, text_of)
    good = [p for p in picks if p.answers]
    if not good:
        asked = {"year": "a year", "place": "a place", "person": "a name", "number": "a number"}.get(focus.kind)
        what = f"{asked} for " if asked else ""
        words = " ".join(focus.words[:6]) or "the question"
        return (
            f"{ANSWER_HEADING}\n\n> **Not found:** no retrieved sentence states {what}what the question "
            f"asks ({_plain(words)}); the sections below give what was found."
        ), []
    return f"{ANSWER_HEADING}\n\n{_quoted(good)}", good


def _quoted(picks: list[Pick]) -> str:
    """The picked sentences, each naming its subject and cited."""
    return " ".join(cite(with_subject(p.sentence, p.source["title"]), int(p.source["id"])) for p in picks)


def _lead_line(sentence: str, source: dict) -> bool:
    """An encyclopedia text's "Title (description)." line: a sentence only when nothing else says it."""
    return sentence.startswith(source.get("title", "\0")) and sentence.endswith(").")


def _plain(text: str) -> str:
    import re

    return re.sub(r"[^\w\s'-]", "", text)[:120]
