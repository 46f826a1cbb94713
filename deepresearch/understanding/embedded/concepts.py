"""The question's concepts: the things and topics a report must cover.

Worked out without trusting the model alone: the question's key phrases, linked to the
search backend's own titles where it has them (the encyclopedia's article titles, a docs
folder's file names and headings), plus what a capable model proposes. A concept is a dict:

    {"name": "Galileo Galilei", "query": "Galileo Galilei", "title": "Galileo Galilei",
     "phrase": "galileo", "origin": "question" | "model"}

`title` is set when the concept was linked to a document of the backend; coverage of such a
concept means that document was retrieved. An unlinked concept is covered when a retrieved
source mentions all of its words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from deepresearch.embeddings.similarity import similarity_for
from deepresearch.text.safe import markup_free
from deepresearch.text.sentences import STOP
from deepresearch.text.words import TOKEN, bare_title, fold, qualifier, singular, stems, tokens
from deepresearch.understanding.embedded.question import is_person_text
from deepresearch.understanding.embedded.subjects import plain, refine
from deepresearch.understanding.linking import MAX_NGRAM, SCAFFOLD, Linker, concept, linker_for, name_flags

MAX_CONCEPTS = 5
# a lone word's document less close in meaning to the question than this share of the closest one's is
# no topic of it (cosine; "Vacuum tube" 0.13 beside "Digestion" 0.48 for a question on digestion)
FAR_IN_MEANING = 0.4
COHERENT = 1.0  # relatedness a lone common word's document needs to the rest of a question that names things


def _choose(
    candidates: Sequence[str], question_words: set[str], describe, asked: AbstractSet[str] = frozenset(), closeness=None
) -> str:
    """The candidate title whose words and description best match the question; among those its
    words match equally, the closest to it in meaning (`closeness`: texts to scores), when there
    is a measure of it: "the Orinoco beside the Amazon" is the river, not the company."""
    if len(candidates) == 1:
        return candidates[0]

    def score(title: str) -> tuple:
        text = tokens(title + " " + (describe(title) if describe else ""))
        words = set(stems(text))
        # the question's own word forms first ("directed" is a film's, "direction" anything's)
        exact = len(set(text) & asked) if asked else 0
        return (len(words & question_words), exact)

    scored = {t: score(t) for t in candidates}
    best = max(scored.values())
    tied = [t for t in candidates if scored[t] == best]
    if len(tied) > 1 and closeness is not None:
        close = closeness([f"{t}. {describe(t) if describe else ''}" for t in tied])
        return tied[max(range(len(tied)), key=lambda i: (close[i], -len(tied[i])))]
    return min(tied, key=len)


NAMED_MARGIN = 0.05  # how much closer to the question a longer title must be than the word's own article


def _named_by_its_form(chosen: str, surface: str, linker: Linker, describe, closeness) -> str:
    """A word linked to its own article, or to a longer title that holds the word as written and is
    clearly closer to the whole question in meaning ("develops Windows": *Microsoft Windows*, not
    *Window*, whose title has the word in another form)."""
    form = fold(surface)
    if form in tokens(chosen):
        return chosen  # the article is the word as written
    longer = [
        t
        for t in linker.partial_titles([form])
        if form in tokens(t) and t != chosen and 1 < len(tokens(bare_title(t))) <= 3
    ][:12]
    if not longer:
        return chosen
    texts = [f"{t}. {describe(t) if describe else ''}" for t in [chosen, *longer]]
    scores = closeness(texts)
    best = max(range(1, len(texts)), key=scores.__getitem__)
    return longer[best - 1] if scores[best] > scores[0] + NAMED_MARGIN else chosen


def _overlap(title: str, question_words: set[str], describe) -> int:
    """How many of the question's other words the title and its description use."""
    words = set(stems(tokens(title + " " + (describe(title) if describe else ""))))
    return len(words & question_words) - len(set(stems(tokens(bare_title(title)))) & question_words)


def _content(word: str, linker: Linker | None) -> bool:
    if word in STOP or word in SCAFFOLD or len(word) < 2 or word.isdigit() and len(word) < 3:
        return False
    return True


def key_phrases(question: str, backend=None) -> list[dict]:
    """Concepts from the question's own words, linked to the backend's titles where possible.
    The question's text is read, not its markup (`<img onerror=alert(1)>` names no concept)."""
    question = markup_free(question)
    matches = list(TOKEN.finditer(question))  # the words as written, where they stand
    raw = [m.group(0) for m in matches]
    words = tokens(question)
    if len(raw) != len(words):  # keep the two lists aligned
        raw, matches = words, []
    linker = linker_for(backend) if backend is not None else None
    capital = name_flags(raw, linker)  # names by the documents' usage, else by their capitals
    # a name does not run across punctuation ("Freddie Mercury, Brian May" are two)
    breaks = {
        i for i in range(1, len(matches)) if re.search(r"[,;:()/]", question[matches[i - 1].end() : matches[i].start()])
    }
    describe = getattr(backend, "describe", None)
    qstems = {s for s in stems(words) if s not in STOP}
    embedder = getattr(backend, "embedder", None)
    closeness = (lambda texts: similarity_for(embedder).scores(question, texts)) if embedder is not None else None
    used = [False] * len(words)
    found: list[tuple[int, dict]] = []
    spans: list[tuple[int, int]] = []  # (start, end) word numbers of the titles linked so far

    # a name of several capitalized words is one thing: no single word of it is linked alone
    # ("Project Heron" is not the bird Heron)
    runs = _capital_runs(capital, breaks)
    unsure: list[int] = []  # one capitalized word whose readings the question's words do not support

    # 1. the longest runs of words that are a title of the backend ("Treaty of Versailles")
    if linker is not None:
        for n in range(min(MAX_NGRAM, len(words)), 0, -1):
            for i in range(len(words) - n + 1):
                span = words[i : i + n]
                if n == 1 and any(a <= i < b and b - a > 1 for a, b in runs):
                    continue
                inside = any(a <= i and i + n <= b for a, b in spans)
                # a title may open with a stop word when the question capitalizes it ("On the Origin of
                # Species"), or with the article before a name it holds ("the Washington post" typed
                # without capitals and truecased: The Washington Post, not George Washington; "in a
                # christmas carol": the novella A Christmas Carol, not the song)
                titled = n > 1 and (
                    capital[i]
                    or (i == 0 and raw[i][:1].isupper())
                    or (span[0] in ("the", "a", "an") and any(capital[i + 1 : i + n]))
                    # typed in lower case, a title of three words or more with two of content is one
                    # all the same ("the grapes of wrath"): ordinary words rarely run as a whole title
                    or (
                        span[0] in ("the", "a", "an")
                        and n >= 3
                        and sum(w not in STOP for w in span) >= 2
                        and bool(linker.exact_titles(span))
                    )
                )
                if (
                    inside
                    or (any(used[i : i + n]) and not all(capital[i : i + n]))
                    or (span[0] in STOP and not titled)
                    or span[-1] in STOP
                ):
                    continue
                if n == 1 and (not _content(span[0], linker) or (linker.generic(span[0]) and not capital[i])):
                    continue
                if (
                    n == 1
                    and capital[i]
                    and all(t != bare_title(t) for t in linker.exact_titles(span))
                    and not any(_overlap(t, qstems, describe) for t in linker.exact_titles(span))
                ):
                    unsure.append(i)
                    continue  # "Newton" with only "Newton (unit)": the question says nothing of units
                if all(w in STOP or w in SCAFFOLD for w in span):
                    continue
                exact = list(linker.exact_titles(span) or (linker.qualified_titles(span) if n > 1 else ()))
                if not exact and n >= 3 and sum(w not in STOP for w in span) >= 2:
                    exact = list(linker.exact_titles(["the", *span]))  # typed without its article
                if exact and n == 1 and all(fold(bare_title(t)) != span[0] or t != bare_title(t) for t in exact):
                    # no article is the word itself ("Amazon (company)", "Amazons"): those it heads or
                    # ends are readings too ("Amazon River", a person's surname), chosen among by the question
                    exact += [
                        t
                        for t in linker.partial_titles(span)
                        if fold(t).startswith(span[0] + " ") or fold(bare_title(t)).endswith(" " + span[0])
                    ]
                if exact:
                    chosen = _choose(exact, qstems, describe, set(words) - STOP, closeness)
                    if n == 1 and closeness is not None:
                        chosen = _named_by_its_form(chosen, raw[i], linker, describe, closeness)
                    found.append((i, concept(chosen, " ".join(span), chosen) | {"at": [i, i + n]}))
                    used[i : i + n] = [True] * n
                    spans.append((i, i + n))

    # 2. proper names and remaining topic words
    i = 0
    while i < len(words):
        if used[i] or not _content(words[i], linker):
            i += 1
            continue
        if capital[i]:  # a run of capitalized words: a name ("Galileo", "Rosalind Franklin")
            j = i
            while (
                j + 1 < len(words)
                and capital[j + 1]
                and not used[j + 1]
                and _content(words[j + 1], linker)
                and j + 1 not in breaks
            ):
                j += 1
            span = words[i : j + 1]
            title = None
            if linker is not None:
                titles = list(linker.partial_titles(span))
                if len(span) == 1:  # one word names a longer title it opens or ends ("Everest", "Maradona"),
                    # not one it is a middle part of ("Century" of "20th-century classical music")
                    titles = [t for t in titles if span[0] in (tokens(bare_title(t))[:1] + tokens(bare_title(t))[-1:])]
                if titles:
                    title = _choose(titles, qstems, describe, set(words) - STOP, closeness)
                else:  # a name no title holds: the document that gives it as another name ("UK")
                    title = _alias(" ".join(raw[i : j + 1]), backend)
                apart = [linker.exact_titles([w]) for w in span] if not titles and not title and j > i else []
                if apart and all(any(t == bare_title(t) for t in ts) for ts in apart):
                    # names side by side that no title holds together, each a title alone ("Facebook
                    # Wikipedia"): each is a thing of its own
                    for k, ts in enumerate(apart):
                        own = next(t for t in ts if t == bare_title(t))
                        found.append((i + k, concept(own, span[k], own) | {"at": [i + k, i + k + 1]}))
                    used[i : j + 1] = [True] * (j + 1 - i)
                    i = j + 1
                    continue
                if (
                    len(span) == 1
                    and len(titles) > 1
                    and _overlap(title or "", qstems - set(stems(sorted(SCAFFOLD | {"name"}))), describe) < 2
                ):
                    # one word with many readings and none the question supports: a person's
                    # surname if one of them is a person ("Newton"), else no subject ("American")
                    people = [
                        t
                        for t in titles
                        if describe
                        and is_person_text(describe(t))
                        and fold(bare_title(t)).split()[-1] == span[0]
                        and fold(bare_title(t)).split()[-2:-1] != ["of"]  # "Ida of Vell": Vell is a place
                    ]
                    if not people:
                        unsure.append(i)
                        used[i] = True
                        i += 1
                        continue
                    title = people[0]
            name = title or " ".join(r for r in raw[i : j + 1])
            found.append((i, concept(name, " ".join(span), title) | {"at": [i, j + 1]}))
            used[i : j + 1] = [True] * (j + 1 - i)
            i = j + 1
            continue
        if linker is None:  # no titles to link to: runs of content words are the key phrases
            j = i
            while j + 1 < len(words) and not used[j + 1] and _content(words[j + 1], linker) and not capital[j + 1]:
                j += 1
            phrase = " ".join(words[i : j + 1])
            found.append((i, concept(phrase, phrase, None) | {"at": [i, j + 1]}))
            used[i : j + 1] = [True] * (j + 1 - i)
            i = j + 1
            continue
        word = words[i]
        if not linker.generic(word) and not word.endswith(("ed", "ing")):
            alias = _alias(raw[i], backend, cased=any(r[:1].isupper() for r in raw[1:]))
            if alias:  # an unlinked common word is no topic where the backend has titles
                found.append((i, concept(alias, word, alias) | {"at": [i, i + 1]}))
        used[i] = True
        i += 1

    # such a word takes the reading of the kind another name of the question has ("Tit and
    # Rail": Tit is a bird, so is Rail (bird), not Rail transport)
    # or, failing that, the reading whose document says most about the other names' ("Compare
    # Mercury and Venus": the planet), as entity linkers weigh a link by its context
    kinds = {qualifier(c["title"]) for _, c in found if c.get("title")} - {""}
    if linker is None:
        unsure = []
    context = (
        " ".join(linker.text_of.get(c["title"], "") for _, c in found if c.get("title")) if unsure and linker else ""
    )
    for i in unsure:
        assert linker is not None  # only a backend with titles leaves a word unsure
        readings = [t for t in linker.partial_titles([words[i]]) if tokens(bare_title(t)) == [words[i]]]
        kind = [t for t in readings if qualifier(t) in kinds]
        if len(kind) != 1 and context.strip():
            scored = sorted(
                ((linker.relatedness(context, linker.text_of.get(t, t)), t) for t in readings), reverse=True
            )
            kind = [scored[0][1]] if scored and scored[0][0] >= COHERENT else []
        if len(kind) == 1:
            found.append((i, concept(kind[0], words[i], kind[0]) | {"at": [i, i + 1]}))

    out, seen = [], set()
    for _, c in sorted(found, key=lambda x: x[0]):
        key = (c["title"] or c["name"]).lower()
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _capital_runs(capital: list[bool], breaks: AbstractSet[int] = frozenset()) -> list[tuple[int, int]]:
    out, i = [], 0
    while i < len(capital):
        if capital[i]:
            j = i
            while j + 1 < len(capital) and capital[j + 1] and j + 1 not in breaks:
                j += 1
            out.append((i, j + 1))
            i = j + 1
        else:
            i += 1
    return out


def coherent(found: list[dict], question: str, backend) -> list[dict]:
    """Without a lower-case single word linked to a title that has nothing to do with the rest
    of a question that names its subject ("leads" is not the metal Lead in "who leads Project
    Heron?"): the linked document must share rare words with the question's other words and
    the other concepts' documents (relatedness, as entity linkers check a link's context)."""
    linker = linker_for(backend) if backend is not None else None

    def lone_word(c: dict) -> bool:
        phrase = c.get("phrase") or ""
        return bool(c.get("title")) and " " not in phrase and not _capitalized_in(question, phrase, linker)

    if linker is None:
        return found
    if all(lone_word(c) for c in found):
        return _close_in_meaning(found, question, backend)
    out = []
    for c in found:
        if lone_word(c):
            others = [o for o in found if o is not c]
            context = question + " " + " ".join(linker.text_of.get(o.get("title") or "", o["name"]) for o in others)
            if linker.relatedness(context, linker.text_of.get(c["title"], c["title"])) < COHERENT:
                continue
        out.append(c)
    return out


def _close_in_meaning(found: list[dict], question: str, backend) -> list[dict]:
    """A question of common words only ("the digestive tube ... digestion of starch"): without a word's
    document far less close in meaning to the whole question than the closest one's (*Vacuum tube*
    beside *Digestion*): a word's document, not the question's topic."""
    embedder = getattr(backend, "embedder", None)
    describe = getattr(backend, "describe", None)
    linked = [c for c in found if c.get("title")]
    if embedder is None or describe is None or len(linked) < 2:
        return found
    scores = similarity_for(embedder).scores(question, [f"{c['title']}. {describe(c['title'])[:200]}" for c in linked])
    floor = max(scores) * FAR_IN_MEANING
    far = {id(c) for c, x in zip(linked, scores) if x < floor}
    return [c for c in found if id(c) not in far]


def _capitalized_in(question: str, phrase: str, linker: Linker | None) -> bool:
    """Is the phrase's first word a name in the question (name_flags)?"""
    m = re.search(r"\b" + re.escape(phrase.split()[0]) + r"\b", fold(question)) if phrase else None
    if m is None:
        return False
    raw = TOKEN.findall(question[: m.end()])
    return name_flags(raw, linker)[-1] if raw else False


def _alias(word: str, backend, cased: bool = False) -> str | None:
    """A document whose opening names `word` ("A car, or an automobile, is ..."). `cased`: the
    question writes its names with capitals, so a word it writes in lower case is not a name the
    document capitalizes ("to the west" does not name "the West")."""
    try:
        results = backend.search(word, 8)
    except Exception:  # noqa: BLE001 - linking is best effort
        return None
    # the word given as another name of what the document is: "A car, or an automobile, is ..."
    w = re.escape(fold(word))
    named = re.compile(
        rf"(?:\bor|\b(?:also|commonly) (?:called|known as)|,|\()\s*(?:an?\s+|the\s+)?{w}\b\s*(?:,|\)|;|$)"
    )
    for r in results:
        first = fold(r.text[:300])
        if first.startswith(fold(r.title)):  # the title's own qualifier ("Marta (footballer)") is no other name
            first = first[len(fold(r.title)) :]
        head = re.split(r"\b(?:is|are|was|were)\b", first, maxsplit=1)[0].strip()
        said = named.search(head)
        if len(tokens(bare_title(r.title))) <= 3 and said:
            written = [m.group(0) for m in re.finditer(rf"\b{w}\b", r.text[:400], re.IGNORECASE)]
            if cased and word.islower() and written and not any(x.islower() for x in written):
                continue  # the document writes it only as a name
            return r.title
    # or a sentence of its opening that defines the word as a kind of what the document is ("A
    # hurricane is a strong tropical cyclone ...": hurricanes are Tropical cyclone's)
    one = re.escape(singular(fold(word)))
    for r in results:
        what = re.escape(fold(bare_title(r.title)))
        kind_of = rf"(?:^|[.;]\s+)(?:an?|the)\s+{one}s?\s+(?:is|are)\s+(?:an?\s+)?(?:[\w-]+\s+){{0,3}}{what}s?\b"
        if " " in what and re.search(kind_of, fold(r.text[:800])):
            return r.title
    return None


def extract(question: str, backend=None, *, limit: int = MAX_CONCEPTS) -> list[dict]:
    """The question's concepts, linked to `backend`'s titles where it has them. Names first
    (multi-word and capitalized), then topic words, in question order within each group."""
    found = refine(question, coherent(key_phrases(question, backend), question, backend), backend)
    named = [
        c
        for c in found
        if c["title"] or " " in c["phrase"] or c["name"][:1].isupper() or c.get("origin") == "described"
    ]
    topics = [c for c in found if c not in named]
    keep = (named + topics)[:limit]
    return plain([c for c in found if c in keep])
