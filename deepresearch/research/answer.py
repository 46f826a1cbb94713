"""The answer paragraph: the retrieved sentences that answer what the question asks.

A report opens with it. Each sentence is a retrieved source's own sentence, whole and cited. For
each thing the question asks (`analysis.parts`: "how many bridges ..., and who leads it?" asks two),
the answer is the retrieved sentence closest in meaning to that part of the question
(deepresearch.embeddings.similarity) among those that hold the kind of answer it wants: a year, a
number, a name it does not already say. The subject's name is left out of both when they are
compared (every sentence about it says it). A question that asks one thing also gets the runner-up
when it is about as close, and the subject's opening sentence (else its "Title (description)."
line) when that holds the kind of answer asked: closeness in meaning does not tell near sentences
apart, and the reader sees each, cited. The answer is looked for first in the sources of the thing
the question points at (the last hop, a described subject, the one thing it names), then in the rest.
For a question that reaches its subject through another thing, the sentence that names the hop
comes first, so the reader sees it; for a comparison, each compared thing's sentence on what the
question asks of them (deepresearch.research.asked_words: "the areas of" two deserts), else its
sentence closest to the question (a question that asks only how they differ). When no
retrieved sentence holds the kind of answer asked, the paragraph says so instead of guessing.
A broad question opens with an overview: what its subject is, and the sentences of its subject's
own source closest to the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from deepresearch.embeddings.similarity import Similarity
from deepresearch.report.grounding import cite, source_sentences
from deepresearch.report.subjects import antecedent_sentence, dangling, with_subject
from deepresearch.research.asked_words import asked_words, closest_to_asked
from deepresearch.research.aspects import is_lead
from deepresearch.research.coverage import sources_for
from deepresearch.research.sentences import of_its_own_subject, type_match
from deepresearch.text.sentences import STOP
from deepresearch.text.words import bare_title, tokens, without_words
from deepresearch.understanding.analysis import Analysis, Part

ANSWER_HEADING = "## Answer"
OVERVIEW_HEADING = "## Overview"
NOT_FOUND_NOTE = "> **Not found:**"
OVERVIEW_SENTENCES = 3
MAX_SOURCES = 6  # sources a part's answer is looked for in, from one pool
LEAD_PENALTY = 0.2  # a "Title (description)." line reads worse than a sentence: it answers when much closer
RUNNER_UP = 0.1  # a second sentence this much less close (a cosine) still answers a one-part question
KINDS = {"year": "a year", "place": "a place", "person": "a name", "number": "a number", "thing": "a name"}


@dataclass
class Pick:
    sentence: str
    source: dict
    score: float
    answers: bool  # holds the kind of answer asked for (or names the hop)


def sentences_of(source: dict, text_of) -> list[str]:
    """The source's sentences, its lead line ("Title (description).") included."""
    return source_sentences(text_of(source), 600)


def best_sentence(
    sources: list[dict],
    text_of,
    query: str,
    kind: str,
    asked: frozenset[str],
    sim: Similarity,
    avoid: AbstractSet[str] = frozenset(),
    mask: AbstractSet[str] = frozenset(),
    one: bool = False,
) -> Pick | None:
    found = closest_sentences(sources, text_of, query, kind, asked, sim, avoid, mask, one=one)
    return found[0] if found else None


def closest_sentences(
    sources: list[dict],
    text_of,
    query: str,
    kind: str,
    asked: frozenset[str],
    sim: Similarity,
    avoid: AbstractSet[str] = frozenset(),
    mask: AbstractSet[str] = frozenset(),
    within: float = -1.0,
    one: bool = False,
) -> list[Pick]:
    """The sentence of `sources` closest in meaning to `query` among those holding the kind of
    answer wanted (else the closest of all, marked as not answering). Earlier sources and earlier
    sentences win ties. The words of `mask` (the subject's name) are left out of the query and of
    each sentence when they are compared: every sentence about the subject says its name, and one
    that says it more fully (its definition) would seem closest whatever was asked of it. With
    `within`, the runner-up too when it holds the kind of answer and is as close, less `within`. A
    sentence is compared as its source's title and itself, unless the sources are `one` thing's."""
    found = [
        (sent, s, rank, i)
        for rank, s in enumerate(sources[:MAX_SOURCES])
        for i, sent in enumerate(sentences_of(s, text_of))
        if sent not in avoid
    ]
    if not found:
        return []
    # each sentence is read as being about its source: "it was accepted on 10 December 1948" is the
    # declaration's, which the question may name (sources of one thing compared are all about it)
    texts = [without_words(x[0] if lead_line(x[0], x[1]) or one else f"{x[1]['title']}: {x[0]}", mask) for x in found]
    ranked: list[tuple[tuple[bool, float], Pick]] = []
    for (sent, s, rank, i), score in zip(found, sim.scores(without_words(query, mask), texts)):
        lead = lead_line(sent, s)
        typed = _holds(kind, sent, s, asked)
        value = score - 0.005 * i - 0.01 * rank - (LEAD_PENALTY if lead else 0.0)
        ranked.append(((typed, value), Pick(sent, s, value, typed)))
    ranked.sort(key=lambda x: x[0], reverse=True)  # stable: earlier sources and sentences first among equals
    top = ranked[0][1]
    runners = [p for _, p in ranked[1:] if p.answers and top.answers and top.score - p.score <= within]
    return [top] + [p for p in runners if not lead_line(p.sentence, p.source)][:1]  # a lead line repeats


def answer_picks(
    analysis: Analysis, concepts: list[dict], evidence: list[dict], text_of, sim: Similarity
) -> list[Pick]:
    """The sentences of the answer paragraph, in reading order."""
    asked = frozenset(analysis.words)
    parts = analysis.parts or ()
    kind = parts[0].kind if parts else analysis.focus.kind
    things: list[dict] = [dict(c.data()) for c in analysis.compared]
    if things:  # a fact of each thing compared: what the question asks of them, where it says what
        words = asked_words(analysis.read, [c.get(k) or "" for c in things for k in ("name", "phrase")])
        out: list[Pick] = []
        for c in things:
            its = sources_for(c, evidence, text_of)
            out += _asked_of(its, text_of, words, kind, asked, sim) or [
                p for p in [best_sentence(its, text_of, analysis.read, kind, asked, sim, one=True)] if p
            ]
        return out
    bridges = [c for c in concepts if c.get("origin") == "bridge"]
    described = [c for c in concepts if c.get("origin") == "described"]
    named = [c for c in concepts if c.get("origin") in ("question", "model")]
    # the answer is about the thing the question points at: its hop, its described subject, or
    # the one thing it names
    last = bridges[-1:] or described[-1:] or (named[:1] if len(named) == 1 else [])
    pool: list[dict] = []
    for c in last + [c for c in concepts if c not in last]:
        pool += [s for s in sources_for(c, evidence, text_of) if s not in pool]
    pool += [s for s in evidence if s not in pool][:3]  # a search may hold the answer under another title
    picks: list[Pick] = []
    for led in (c for c in concepts if c.get("origin") == "lead"):  # what led the research on, as said
        via = [s for s in evidence if led.get("sentence") in sentences_of(s, text_of)]
        picks += [Pick(led["sentence"], via[0], 0.0, True)] if via else []
    for b in bridges:  # the hop, as the source states it
        via = [s for s in evidence if s.get("key") == b.get("source")]
        if via and b.get("sentence") in sentences_of(via[0], text_of):
            picks.append(Pick(b["sentence"], via[0], 0.0, True))
    for d in described[-1:]:  # a described subject: the sentence that matched its description names it
        picks += _described(d, evidence, text_of)
    if picks and described and len(parts) <= 1:
        return picks  # the described thing's own sentences answer "which instrument ..."
    final = sources_for(last[0], evidence, text_of) if last else []
    # through a hop, the answer is asked of the thing it leads to: the words that reach it are left out
    # ("when was the potter the Brannock Vase is named for born" -> "when was born Ada Brannock"),
    # else the sentences naming the first thing would seem closest
    passed = {w for c in named for w in tokens(c["name"])} | {w for h in analysis.hops for w in tokens(h.phrase)}
    # the subject's name, said by nearly every sentence about it, tells none of them apart
    mask = frozenset(tokens(last[0]["name"]) + tokens(bare_title(last[0].get("title") or ""))) if last else frozenset()
    for part in parts or [_whole(analysis)]:
        text = " ".join(w for w in part.text.split() if not set(tokens(w)) & passed) if bridges else part.text
        # a part that does not name the subject ("... and who leads it?") is asked as it stands: its
        # candidates are the subject's own sentences first, which all name it
        query = text
        avoid = {x.sentence for x in picks}
        # one part: a runner-up about as close goes with it, since closeness in meaning does not
        # tell two near sentences apart; the reader sees both, each cited
        within = RUNNER_UP if len(parts) <= 1 else -1.0
        closest = closest_sentences(final, text_of, query, part.kind, asked, sim, avoid, mask, within) if final else []
        if not closest or not closest[0].answers:
            # elsewhere, only a sentence that names the thing asked about speaks of it, once that thing
            # is known (its own source found, or a text named it): another composer's birthplace is no
            # answer for the one the question reaches. A name no source has may be misspelt: any stands
            known = bool(last) and (bool(final) or last[0].get("origin") == "bridge")
            elsewhere = avoid | (_not_naming(last[0], final, pool, text_of) if known else set())
            closest = closest_sentences(pool, text_of, query, part.kind, asked, sim, elsewhere, mask, within) or closest
        picks += closest
    if final and len(parts) <= 1 and picks and picks[-1].answers:
        # and what the subject is: its source's opening sentence, when it holds the kind of answer
        # asked ("a stringed instrument of the Varn valley" says where the harp comes from), else, or
        # when the opening is picked already, its "Title (description)." line when that holds it (the
        # encyclopedia states life dates there: "(1911–1995)" beside "raced from 1950 to 1958")
        own = final[0]
        sents = sentences_of(own, text_of)
        lead = sents[:1] if sents and lead_line(sents[0], own) else []
        heads = sents[len(lead) :][:1] + lead
        said = {p.sentence for p in picks}
        opening = next((x for x in heads if _holds(kind, x, own, asked) and x not in said), None)
        if opening:
            picks.append(Pick(opening, own, 0.0, True))
    return picks


def _asked_of(
    sources: list[dict], text_of, words: list[str], kind: str, asked: frozenset[str], sim: Similarity
) -> list[Pick]:
    """A compared thing's sentence closest to what the question asks of it (`words`: "areas";
    deepresearch.research.asked_words) among its sources' sentences that hold the kind of answer
    asked, and a runner-up as close less `RUNNER_UP` (two prizes won: closeness does not tell them
    apart), in their source's order; none when the question asks nothing of it but how the things
    differ, or no sentence is what it asks. A "Title (description)." line is no candidate."""
    found = [
        (sent, s)
        for s in sources[:MAX_SOURCES]
        for sent in sentences_of(s, text_of)
        if not lead_line(sent, s) and _holds(kind, sent, s, asked)
    ]
    best = closest_to_asked(words, [sent for sent, _ in found], sim, RUNNER_UP)[:2]
    return [Pick(found[i][0], found[i][1], 1.0, True) for i in sorted(best)]


def _not_naming(subject: dict, own: list[dict], pool: list[dict], text_of) -> set[str]:
    """The sentences of `pool`'s sources other than the subject's own (`own`) that do not name it, or
    that name it but speak of their own source's subject (`of_its_own_subject`).
    A name is said whole, or, for a name the research found in a text (a role's filler: "Mara
    Lindqvist"), by its last word as a person's surname is."""
    name = [w for w in tokens(bare_title(subject.get("title") or subject["name"])) if w not in STOP]
    if not name:
        return set()
    keys = {s.get("key") for s in own}
    out: set[str] = set()
    for s in pool:
        if s.get("key") in keys:
            continue
        text = text_of(s)
        for sent in sentences_of(s, text_of):
            said = set(tokens(sent))
            if not (set(name) <= said or (subject.get("origin") == "bridge" and len(name) > 1 and name[-1] in said)):
                out.add(sent)
            elif of_its_own_subject(sent, s.get("title", ""), text):
                out.add(sent)  # it names the subject, but speaks of its own source's ("The city is ...")
    return out


def with_antecedents(picks: list[Pick], text_of) -> list[Pick]:
    """The picks, each sentence whose opening pronoun the report cannot name ("He was born near
    ...", where its source calls him by a longer name) preceded by its source's sentence that says
    whom it speaks of; when that sentence is quoted already, the sentence goes right after it (and a
    sentence quoted so is not quoted again). After another source's sentence, "he" would read as
    that source's subject."""
    out: list[Pick] = []
    for p in picks:
        if any(_same(q, p.source, p.sentence) for q in out):
            continue  # quoted already, before a sentence that continues it
        text = text_of(p.source)
        head = antecedent_sentence(p.sentence, text) if dangling(p.sentence, p.source.get("title", ""), text) else None
        at = next((i for i, q in enumerate(out) if head and _same(q, p.source, head)), None)
        if at is not None:
            out.insert(at + 1, p)  # right after the sentence it continues, quoted already
            continue
        if head:
            out.append(Pick(head, p.source, p.score, p.answers))
        out.append(p)
    return out


def _same(pick: Pick, source: dict, sentence: str) -> bool:
    return pick.sentence == sentence and pick.source.get("key", id(pick.source)) == source.get("key", id(source))


def _whole(analysis: Analysis) -> Part:
    return Part(analysis.read, analysis.focus.kind)


def _described(d: dict, evidence: list[dict], text_of) -> list[Pick]:
    own = sources_for(d, evidence, text_of)
    said = (d.get("sentence") or "")[:80]
    sents = sentences_of(own[0], text_of) if own else []
    whole = next((x for x in sents if said and said in x), None)
    if not whole:
        return []
    if lead_line(whole, own[0]):
        # matched by its description line ("Title (Russian composer (1839–1881))."): that line names
        # the answer as its title does and holds what the question said of it; the definition follows
        definition = next((x for x in sents if not lead_line(x, own[0])), None)
        return [Pick(x, own[0], 0.0, True) for x in (whole, definition) if x]
    out = []
    name = tokens(bare_title(own[0]["title"]))
    first = next((x for x in sents if not lead_line(x, own[0])), None)
    if name and not set(name) <= set(tokens(whole)) and first and first != whole:
        out.append(Pick(first, own[0], 0.0, True))  # the sentence says "it": say first what it is
    out.append(Pick(whole, own[0], 0.0, True))
    return out


def overview_picks(question: str, concepts: list[dict], evidence: list[dict], text_of, sim: Similarity) -> list[Pick]:
    """A broad question's opening: what its subject is (the first sentence of the subject's own
    source) and the sentences of that source closest to the question, in their order; then what each
    other thing the question names is, by the first sentence of its own source."""
    subjects = [c for c in concepts if c.get("origin") not in ("related", "bridge")]
    source = next((own[0] for c in subjects if (own := sources_for(c, evidence, text_of))), None)
    if source is None:
        if not evidence:
            return []
        texts = [f"{s['title']}. {text_of(s)[:600]}" for s in evidence]
        source = evidence[max(range(len(evidence)), key=sim.scores(question, texts).__getitem__)]
    sents = [x for x in sentences_of(source, text_of) if not lead_line(x, source)]
    if not sents:
        return []
    scores = sim.scores(question, sents[1:])
    best = sorted(sorted(range(len(scores)), key=lambda i: -scores[i])[: OVERVIEW_SENTENCES - 1])
    picks = [Pick(x, source, 1.0, True) for x in [sents[0]] + [sents[1 + i] for i in best]]
    # each other thing the question names: what it is, in its own source's words
    for c in subjects:
        own = sources_for(c, evidence, text_of)
        if own and all(p.source["key"] != own[0]["key"] for p in picks):
            first = [x for x in sentences_of(own[0], text_of) if not lead_line(x, own[0])][:1]
            picks += [Pick(x, own[0], 1.0, True) for x in first]
    return picks


def answer_paragraph(
    analysis: Analysis,
    concepts: list[dict],
    evidence: list[dict],
    text_of,
    sim: Similarity,
    checked: Sequence[tuple[str, dict]] = (),
) -> tuple[str, list[Pick]]:
    """The report's opening answer (Markdown, each sentence cited) and the picks it quotes. A
    broad question opens with an overview instead: it has no short answer to miss. `checked`: the
    sentences (with their sources) the research's check took to answer what is asked
    (deepresearch.research.asked): each is quoted first, so the reader sees what ended the research."""
    if analysis.broad and not analysis.compared:
        picks = overview_picks(analysis.read, concepts, evidence, text_of, sim)
        if picks:
            return f"{OVERVIEW_HEADING}\n\n{quoted(picks, text_of)}", picks
    picks = answer_picks(analysis, concepts, evidence, text_of, sim)
    good = [p for p in picks if p.answers]
    kinds = [part.kind for part in analysis.parts] or [analysis.focus.kind]
    if not good and picks and set(kinds) == {"thing"}:
        good = picks[:1]  # a thing asked for need not be a name ("what method ..." "salt-cured"): the closest stands
    # what the research's check took for the answer opens the paragraph; the other picks follow
    first = [Pick(x, s, 0.0, True) for x, s in checked]
    # ... after what led the research to it, so that a chain reads in its order
    led = {c.get("sentence") for c in concepts if c.get("origin") == "lead"}
    first = [p for p in good if p.sentence in led] + [f for f in first if f.sentence not in led]
    good = first + [p for p in good if not any(_same(f, p.source, p.sentence) for f in first)]
    good = with_antecedents(good, text_of)
    if not good:
        what = " or ".join(dict.fromkeys(KINDS[k] for k in kinds if k in KINDS))
        return (
            f"{ANSWER_HEADING}\n\n{NOT_FOUND_NOTE} no retrieved sentence states {what + ' for ' if what else ''}what "
            f"the question asks ({_plain(analysis.question)}); the sections below give what was found."
        ), []
    return f"{ANSWER_HEADING}\n\n{quoted(good, text_of)}", good


def quoted(picks: list[Pick], text_of) -> str:
    """The picked sentences, each cited, naming its subject where its source's text does."""
    return " ".join(
        cite(with_subject(p.sentence, p.source["title"], text_of(p.source)), int(p.source["id"])) for p in picks
    )


def lead_line(sentence: str, source: dict) -> bool:
    """An encyclopedia text's "Title (description)." line: a sentence only when nothing else says it.
    A sentence that opens with the title and ends on a bracket ("X has an area of 14,000 km2 (5,400 sq
    mi).") is none (deepresearch.research.aspects.is_lead)."""
    return is_lead(sentence, source.get("title", "\0"))


def _holds(kind: str, sentence: str, source: dict, asked: frozenset[str]) -> bool:
    """Does the source's sentence hold the kind of answer asked (a lead line read as a sentence)?"""
    return type_match(kind, _described_as(sentence, source) if lead_line(sentence, source) else sentence, asked)


def _described_as(lead: str, source: dict) -> str:
    """A lead line as a sentence would say it: its description begins in lower case ("Autocracy (form
    of government)."), so that its capital is not taken for a name."""
    at = len(source.get("title", "")) + 2
    return lead[:at] + lead[at : at + 1].lower() + lead[at + 1 :] if lead[at - 1 : at] == "(" else lead


def _plain(text: str) -> str:
    return re.sub(r"[^\w\s'-]", "", text)[:120]
