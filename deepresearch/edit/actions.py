"""Editing a finished report in place (node `report_feedback`): the parts that need no model.

A finished report is its body, then the tracer's `## Sources` list and verification line
(the tail). Edits change spans of the body; everything outside them stays byte-identical,
the citations outside keep their numbers, and the tail is rebuilt: the listed sources (new
ones get the next numbers), and the verification line from the citation records (kept for
unchanged sentences, scored afresh for new ones).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeGuard

from deepresearch.report.grounding import ground
from deepresearch.store import full_text
from deepresearch.text.citations import (
    CITE,
    SOURCES_HEADING,
    UNVERIFIED,
    cited_numbers,
    close_gaps,
    each_cited_sentence,
    normalize_citations,
    strip_sources_section,
)
from deepresearch.text.safe import defuse_body, echoed, reference_kind
from deepresearch.text.sentences import content_words, split_sentences
from deepresearch.text.urls import normalize_url, source_key

TAIL = "\n\n## Sources\n"
# a citation with its mark, or a mark alone: a span may not begin or end inside one
ATOM = re.compile(r"\[\d{1,4}(?:\s*[,;]\s*\d{1,4})*\](?:\^unverified\^)?|\^unverified\^")
_OWN_CITATIONS = re.compile(rf"((?:[ \t]*(?:{ATOM.pattern}))+)(?:[.!?](?=\s|$))?")
SPAN_ACTIONS = ("expand", "shorten", "polish", "supplementary_search", "fact_check")
ACTIONS = SPAN_ACTIONS + ("sync", "finish")
SCOPES = ("selected_only", "selected_and_related")
MAX_SYNC_RECORDS = 10
MAX_REPORT_CHARS = 1_000_000
MAX_QUERY_CHARS = 400


class EditError(ValueError):
    """An invalid edit request: the reason, asked again."""


def split_report(report: str) -> tuple[str, str]:
    """(body, tail): the tail is the tracer's `## Sources` list and what follows it."""
    at = report.rfind(TAIL)
    return (report, "") if at < 0 else (report[:at], report[at:])


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --- requests -------------------------------------------------------------------------------


def _offset(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def parse_request(value, report: str) -> dict:
    """The resume value as a checked request; EditError says what is wrong with it."""
    if not isinstance(value, dict):
        raise EditError('the answer must be an object with an "action"')
    action = value.get("action")
    if action not in ACTIONS:
        raise EditError(f"unknown action {echoed(action)}; valid: {', '.join(ACTIONS)}")
    if action == "finish":
        return {"action": "finish"}
    if action == "sync":
        text = value.get("report")
        if not isinstance(text, str) or not text.strip():
            raise EditError('sync needs "report": the whole report as edited')
        if len(text) > MAX_REPORT_CHARS:
            raise EditError(f"the edited report is {len(text):,} characters long; the limit is {MAX_REPORT_CHARS:,}")
        return {"action": "sync", "report": text}
    body, _ = split_report(report)
    start, end, selected = value.get("start"), value.get("end"), value.get("selected_text")
    if not (_offset(start) and _offset(end)):
        raise EditError('"start" and "end" must be character offsets (integers) into the report')
    if not isinstance(selected, str):
        raise EditError('"selected_text" must be the selected text')
    if not 0 <= start < end <= len(report):
        raise EditError(f"the span {start}-{end} is empty or outside the report (0-{len(report)})")
    if end > len(body):
        raise EditError("the span reaches into the Sources list; select text of the report's body")
    if report[start:end] != selected:
        raise EditError(f'"selected_text" is not the report\'s text at {start}-{end}')
    if not content_words(CITE.sub("", selected).replace(UNVERIFIED, "")):
        raise EditError("the selection has no words to work on")
    for m in ATOM.finditer(body):
        if m.start() < start < m.end() or m.start() < end < m.end():
            raise EditError(f"the span cuts the citation {m.group(0)!r}; include all of it or none")
    end = own_citations_end(body, end)  # "... New York" of "... New York [2].": its " [2]." too
    selected = report[start:end]
    out = {"action": action, "selected_text": selected, "start": start, "end": end}
    if action != "fact_check" and re.search(r"(?m)^\s{0,3}#", selected):
        raise EditError("the selection includes a heading; select text within a section")
    if action == "supplementary_search":
        scope = value.get("scope", "selected_only")
        if scope not in SCOPES:
            raise EditError(f"unknown scope {echoed(scope)}; valid: {', '.join(SCOPES)}")
        query = value.get("query")
        if query is not None and (not isinstance(query, str) or not query.strip()):
            raise EditError('"query" must be a non-empty string when given')
        out["scope"] = scope
        if query:
            out["query"] = " ".join(query.split())[:MAX_QUERY_CHARS]
    return out


def own_citations_end(body: str, end: int) -> int:
    """The end of a span stopping right before its sentence's citations (and the full stop
    after them), moved past them: a rewrite cites and ends its sentences itself, so a span
    without them would leave "... New York [2]. [2].". Any other end stays."""
    m = _OWN_CITATIONS.match(body, end)
    return m.end() if m and m.group(1) else end


def find_span(report: str, text: str) -> tuple[int, int]:
    """The offsets of `text` in the report's body; EditError when it is not there exactly once."""
    body, _ = split_report(report)
    first = body.find(text) if text else -1
    if first < 0:
        raise EditError("the selected text is not in the report")
    if body.find(text, first + 1) >= 0:
        raise EditError("the selected text is in the report more than once; give --start and --end")
    return first, first + len(text)


# --- sources --------------------------------------------------------------------------------


def numbered(state: Mapping[str, Any]) -> dict[int, dict]:
    """The report's sources by their number in the report, as evidence records (full texts
    are read through the evidence key) with `id` set to that number."""
    by_url = {normalize_url(s["url"]): s for s in state.get("evidence") or []}
    out = {}
    for s in state.get("sources") or []:
        ev = by_url.get(normalize_url(s["url"]))
        base = (
            dict(ev)
            if ev
            else {
                "key": source_key(s["url"]),
                "title": s["title"],
                "url": s["url"],
                "backend": s.get("backend"),
                "snippet": "",
            }
        )
        out[int(s["id"])] = base | {"id": int(s["id"])}
    return out


def offer(state: Mapping[str, Any], focus: str, *, extra: Sequence[dict] = (), limit: int = 6) -> list[dict]:
    """Sources to show the model for a passage about `focus`, numbered as the report would
    cite them: the report's sources the passage cites, then new ones (`extra`: just found),
    then the report's and the run's other sources most relevant to it. Sources not yet in the
    report get the next free numbers."""
    from deepresearch.text.citations import support

    cited = numbered(state)
    next_n = max(cited, default=0) + 1
    in_report = {s["key"] for s in cited.values()}
    chosen: list[dict] = [cited[n] for n in dict.fromkeys(cited_numbers(focus)) if n in cited]
    fresh = [s for s in extra if s["key"] not in in_report]
    others = [s for s in cited.values() if s not in chosen]
    others += [s for s in state.get("evidence") or [] if s["key"] not in in_report and s not in fresh]
    plain = CITE.sub("", focus)
    others.sort(key=lambda s: -support(plain, f"{s['title']}. {full_text(s)}")[0])
    out: list[dict] = []
    for s in chosen + fresh + others:
        if len(out) >= limit and s not in fresh:
            continue
        if s["key"] in in_report:
            out.append(s)
        else:
            out.append(dict(s) | {"id": next_n})
            next_n += 1
    return out


# --- rewritten text -------------------------------------------------------------------------


def sentence_list(text: str) -> list[str]:
    """The sentences of `text`, without citations, marks, case or spacing (to spot repeats)."""
    return [
        " ".join(CITE.sub("", s).replace(UNVERIFIED, "").lower().split()).rstrip(".!? ")
        for line in text.split("\n")
        for s in split_sentences(line.strip())
    ]


def sentence_keys(text: str) -> set[str]:
    return set(sentence_list(text))


def repeated(old_body: str, new_body: str) -> list[str]:
    """Sentences of the body that an edit would make appear more often than before (headings
    and notes left out): a rewrite or a fallback that repeats the report's own text."""

    def counts(body: str) -> Counter:
        return Counter(
            k
            for line in body.split("\n")
            if not line.lstrip().startswith(("#", ">"))
            for k in sentence_list(line)
            if content_words(k)
        )

    before, after = counts(old_body), counts(new_body)
    return [k for k, n in after.items() if n > max(before[k], 1)]


def clean_rewrite(
    text: str, old: str, offered: list[dict], threshold: float, elsewhere: str = "", frame: str = ""
) -> tuple[str, list[dict]]:
    """Model text fit to replace `old`: no link, image, HTML, heading or Sources list; only
    citations of `offered` sources; every sentence grounded in them (else dropped or
    re-cited), none repeating a sentence of `elsewhere` (the rest of the report); the old
    span's surrounding whitespace kept; none of `frame` (the prompt's own words, see
    `grounding.prompt_frame`) repeated. Returns (text, removed)."""
    text = re.sub(r"^\s*```[a-zA-Z]*\s*$", "", text, flags=re.MULTILINE)
    text = strip_sources_section(text)
    text = SOURCES_HEADING.sub("", text)
    id_of_url = {
        normalize_url(s["url"]): s["id"] for s in offered if reference_kind(s["url"], s.get("backend")) == "web"
    }
    text, removed = defuse_body(text, id_of_url, normalize_url)
    text, more = normalize_citations(text, id_of_url)
    removed += more
    known = {int(s["id"]) for s in offered}

    def keep_known(m: re.Match) -> str:
        nums = [int(n) for n in re.split(r"[,;]", m.group(1))]
        for n in nums:
            if n not in known:
                removed.append({"kind": "citation", "value": f"[{n}]", "reason": f"no source {n} was offered"})
        return "".join(f"[{n}]" for n in nums if n in known)

    text = close_gaps(CITE.sub(keep_known, text.replace(UNVERIFIED, "")))
    text = re.sub(r"(?m)^\s{0,3}#{1,6}\s*", "", text)  # the span had no heading: neither has its rewrite
    if "\n" not in old.strip():  # a passage inside one paragraph stays one paragraph
        text = " ".join(text.split())
    text, _dropped = ground(text, offered, full_text, threshold=threshold, frame=frame)
    seen = sentence_keys(elsewhere) - {""}
    lines = []
    for line in text.split("\n"):
        kept = []
        for x in split_sentences(line.strip()):
            keys = sentence_keys(x) - {""}
            if keys & seen:
                continue  # said elsewhere in the report, or earlier in this text
            seen |= keys
            kept.append(x.strip())
        lines.append(" ".join(kept) if line.strip() else line)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines))
    text = text.strip()
    if not content_words(CITE.sub("", text)):
        return "", removed
    lead = old[: len(old) - len(old.lstrip())]
    trail = old[len(old.rstrip()) :]
    return lead + text + trail, removed


def quoted(sentence: str, n: int) -> str:
    """A source's own sentence fit for the report, cited to `n`: the source's text is data, so
    its links, images, URLs, HTML, bracketed numbers (which would read as citations) and
    heading or quote markers are removed or escaped first ("" when nothing is left)."""
    text = re.sub(r"\[\s*\d[\d,;\s\-–]*\]", "", " ".join(sentence.split()))
    text, _removed = defuse_body(text, {}, normalize_url)
    text = " ".join(re.sub(r"^[\s#>*+\-]+", "", text).replace(UNVERIFIED, "").split())
    if not content_words(text):
        return ""
    return f"{text[:-1].rstrip()} [{n}]{text[-1]}" if text[-1:] in ".!?" else f"{text} [{n}]"


def plain_length(text: str) -> int:
    return len(" ".join(CITE.sub("", text).replace(UNVERIFIED, "").split()))


# --- applying changes -----------------------------------------------------------------------


def splice(body: str, changes: list[tuple[int, int, str]]) -> tuple[str, list[dict]]:
    """`body` with each (start, end, new text) applied (spans must not overlap); returns the
    new body and, per change in the given order, {start, end, new_start, new_end}."""
    order = sorted(range(len(changes)), key=lambda i: changes[i][0])
    out, at, shift = [], 0, 0
    spans: dict[int, dict] = {}
    for i in order:
        start, end, new = changes[i]
        if start < at:
            raise ValueError("overlapping changes")
        out += [body[at:start], new]
        spans[i] = {"start": start, "end": end, "new_start": start + shift, "new_end": start + shift + len(new)}
        shift += len(new) - (end - start)
        at = end
    out.append(body[at:])
    return "".join(out), [spans[i] for i in range(len(changes))]


def renumber_new(text: str, first_new: int, used: dict[str, int], offered: list[dict]) -> str:
    """Citations of sources new to the report get consecutive numbers from `first_new`, in
    order of first citation (`used`: source key -> number, filled in as they are met)."""
    by_id = {int(s["id"]): s for s in offered}

    def sub(m: re.Match) -> str:
        out = []
        for n in (int(x) for x in re.split(r"[,;]", m.group(1))):
            if n >= first_new and n in by_id:
                key = by_id[n]["key"]
                if key not in used:
                    used[key] = first_new + len(used)
                n = used[key]
            out.append(f"[{n}]")
        return "".join(out)

    return CITE.sub(sub, text)


def record_key(sentence: str, n: int) -> tuple[str, int]:
    return " ".join(CITE.sub("", sentence).replace(UNVERIFIED, "").split()), int(n)


def citation_records(body: str, sources: dict[int, dict], old: list[dict], score) -> list[dict]:
    """One record per citation of `body` (as the tracer reads it: line by line, sentence by
    sentence, headings skipped): the old record of the same sentence and source when there is
    one, else `score(sentence, n, source)`."""
    kept = {record_key(r["sentence"], r["source_id"]): r for r in old}
    out = []
    for line in body.split("\n"):
        if line.lstrip().startswith("#") or not CITE.search(line):
            continue
        for sent in split_sentences(line.strip()):
            for n in dict.fromkeys(cited_numbers(sent)):
                if n not in sources:
                    continue
                k = record_key(sent, n)
                out.append(kept[k] if k in kept else score(sent.replace(UNVERIFIED, ""), n, sources[n]))
    return out


def mark_unsupported(text: str, records: list[dict]) -> str:
    """New text with the unverified mark after each citation its record says is unsupported
    (as the tracer marks them); the text's surrounding whitespace is kept."""
    bad = {record_key(r["sentence"], r["source_id"]) for r in records if r["verdict"] == "unsupported"}
    if not bad:
        return text

    def mark(sent: str) -> str:
        for n in dict.fromkeys(cited_numbers(sent)):
            if record_key(sent, n) in bad:
                sent = re.sub(rf"\[{n}\](?!\^)", f"[{n}]{UNVERIFIED}", sent, count=1)
        return sent

    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    return lead + each_cited_sentence(text.strip(), mark) + trail


def changed_region(old: str, new: str) -> tuple[int, int, int]:
    """(start, end, new_end): the smallest span of `old` that, replaced by new[start:new_end],
    gives `new` (common prefix and suffix left out)."""
    p = 0
    limit = min(len(old), len(new))
    while p < limit and old[p] == new[p]:
        p += 1
    s = 0
    while s < limit - p and old[-1 - s] == new[-1 - s]:
        s += 1
    return p, len(old) - s, len(new) - s


def add_history(history: list[dict], record: dict) -> list[dict]:
    """The history with `record` added; only the latest MAX_SYNC_RECORDS sync records stay."""
    out = list(history) + [record]
    syncs = [i for i, r in enumerate(out) if r["action"] == "sync"]
    drop = set(syncs[:-MAX_SYNC_RECORDS]) if len(syncs) > MAX_SYNC_RECORDS else set()
    return [r for i, r in enumerate(out) if i not in drop]


def claims_of(text: str) -> list[tuple[int, int, str]]:
    """The sentences of `text` that state something, with their offsets in `text`."""
    out, at = [], 0
    for line in text.split("\n"):
        base = at
        at += len(line) + 1
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pos = 0
        for sent in split_sentences(line.strip()):
            s = sent.strip()
            i = line.find(s, pos)
            if i < 0:
                continue
            pos = i + len(s)
            plain = " ".join(CITE.sub("", s).replace(UNVERIFIED, "").split())
            if content_words(plain):
                out.append((base + i, base + i + len(s), plain))
    return out
