"""Build the public set (eval/data/public.json, read by eval/public.py) from public question-answering
datasets, kept to the questions the offline encyclopedia can answer.

    python eval/public_build.py --nq-open FILE.jsonl [...] --webquestions FILE.json [...] \\
        [--per-dataset 200] [--out FILE]

The datasets (their raw files are not committed; the built set is, with their licences in eval/data/;
docs/evaluation-public.md says where each comes from):
  --nq-open       NQ-open JSON lines ({"question", "answer": [aliases]}), google-research-datasets/
                  natural-questions, nq_open/: the original dev set and the EfficientQA dev and test sets
  --webquestions  WebQuestions as brmson/dataset-factoid-webquestions gives it (main/*.json:
                  [{"qId", "qText", "answers"}])

A question is kept when
  1. it names an encyclopedia entry: the entry's title (its qualifier aside) among its words, case and
     accents ignored, and not an entry that more than 1% of all entries name (a word such as "Song");
  2. one of its answer strings stands, as whole words, in that entry's summary (hop 0; in a sentence
     that shares a word with the question when the entry is a word, such as "Spider", not a name) or,
     failing that,
     in the summary of an entry that summary names (hop 1), in a sentence that shares a word with the
     question besides the named entry's own (at most three such entries, else the answer is too common
     to say which entry gives it);
  3. its answer strings are specific: an alias the question says (all its words), of one character, a
     number below 100 ("14" is in any report citing fourteen sources: "[14]"), or standing in more than
     1% of the summaries (a common year, "English") is dropped, and a question with no specific alias
     left is dropped.
The entries a question names are names ("Italy", "Roman Empire") or words ("Party", "Currency"); when
names among them hold the answer, they alone are its gold articles.
WebQuestions' lists ("what movies did X play in", more than three answers) are left out. A question
asked twice (by two datasets) is kept once. The gold articles are the entries that hold the answer.

Then at most --per-dataset questions of each dataset, chosen by a hash of the question (no
judgement of ours), each with its typo'd copy and its half (eval/public.py). Reads the corpus only,
through eval/generate.py's mention finder: no research code of the project.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402 - eval/generate.py: the corpus and its mention finder
import public  # noqa: E402

SOURCES = {
    "nq_open": {
        "name": "Natural Questions, open-domain version (NQ-open): the original dev set and the EfficientQA "
        "dev and test sets",
        "repository": "google-research-datasets/natural-questions",
        "path": "nq_open/",
        "licence": "CC BY-SA 3.0",
    },
    "webquestions": {
        "name": "WebQuestions (Berant et al., 2013), every split as brmson/dataset-factoid-webquestions keeps it",
        "repository": "brmson/dataset-factoid-webquestions",
        "path": "main/",
        "licence": "CC BY 4.0",
    },
}
MAX_HOPS_HOLDING = 3
MAX_WQ_ANSWERS = 3
COMMON_SHARE = 0.01


def read_nq_open(path: Path) -> list[dict]:
    split = path.name.removeprefix("NQ-open.").removesuffix(".jsonl")
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if line.strip():
            row = json.loads(line)
            out.append(
                {
                    "dataset": "nq_open",
                    "id": f"nq_open:{split}:{i}",
                    "q": row["question"],
                    "answers": list(row["answer"]),
                }
            )
    return out


def read_webquestions(path: Path) -> list[dict]:
    split = path.stem.removeprefix("wq-")
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [
        {
            "dataset": "webquestions",
            "id": f"webquestions:{split}:{r['qId']}",
            "q": r["qText"],
            "answers": list(r["answers"]),
        }
        for r in rows
        if 0 < len(r["answers"]) <= MAX_WQ_ANSWERS
    ]


class Finder:
    """Where an answer stands in the encyclopedia (whole words, case and accents folded)."""

    def __init__(self, corpus: generate.Corpus):
        self.corpus = corpus
        self.text = {e["title"]: public.fold(e.get("extract", "")) for e in corpus.entries}
        self.all_text = "\n".join(self.text.values())
        # how the summaries write each word inside a sentence: capitalised (a name) or not (a word)
        self.capitalised: Counter[str] = Counter()
        self.lower: Counter[str] = Counter()
        for e in corpus.entries:
            for m in re.finditer(r"(?<=[a-z,;] )([A-Za-z]+)", e.get("extract", "")):
                word = m.group(1)
                (self.capitalised if word[0].isupper() else self.lower)[word.lower()] += 1

    def proper(self, title: str) -> bool:
        """An entry the question names as a name: a title of several words, or one word the summaries
        write capitalised inside sentences ("Italy", not "Song" or "Party")."""
        words = generate.name(title).split()
        if len(words) != 1:
            return True
        w = words[0].lower()
        return self.capitalised[w] > self.lower[w]

    def named(self, question: str) -> list[str]:
        """The entries a question names: not a common word ("Year"), a common name ("Italy") is a name."""
        found = {t for _, _, t in self.corpus.mentions(question)}
        return sorted(t for t in found if self.proper(t) or not self.corpus.common(t))

    @staticmethod
    def pattern(alias: str) -> re.Pattern:
        return re.compile(r"(?<!\w)" + re.escape(public.fold(alias)) + r"(?!\w)")

    def holds(self, title: str, alias: str) -> bool:
        return bool(self.pattern(alias).search(self.text[title]))

    def holds_in_context(self, title: str, alias: str, question: str, named: list[str]) -> bool:
        """A linked entry holds the answer in a sentence that shares a word with the question (its stem,
        the first five letters), besides the named entries' own words: "Wales" in *England*'s sentence
        on its borders does not answer where a rugby cup was held."""
        own = {w[:5] for t in named for w in re.findall(r"\w{4,}", public.fold(t))}
        asked = {w[:5] for w in re.findall(r"\w{4,}", public.fold(question)) if w not in public.FUNCTION_WORDS} - own
        p = self.pattern(alias)
        for sentence in re.split(r"(?<=[.!?])\s+", self.text[title]):
            if p.search(sentence) and asked & {w[:5] for w in re.findall(r"\w{4,}", sentence)}:
                return True
        return False

    @cache  # noqa: B019 - one Finder a build, alive for the whole build
    def share(self, alias: str) -> float:
        """The share of summaries that state the alias."""
        p = self.pattern(alias)
        return sum(1 for t in self.text.values() if p.search(t)) / len(self.text)

    def specific(self, alias: str, question: str) -> bool:
        a = public.fold(alias)
        if len(a) <= 1 or re.fullmatch(r"\d{1,2}", a) or given(alias, question):
            return False
        # the plain count bounds the summaries that state it: the regex scan only when it could be common
        return self.all_text.count(a) <= COMMON_SHARE * len(self.text) or self.share(alias) <= COMMON_SHARE

    @cache  # noqa: B019 - one Finder a build, alive for the whole build
    def links(self, title: str) -> tuple[str, ...]:
        """The entries a summary names (not itself, not the common ones)."""
        e = self.corpus.by_title[title]
        found = {t for _, _, t in self.corpus.mentions(e.get("extract", ""))}
        return tuple(sorted(t for t in found if t != title and (self.proper(t) or not self.corpus.common(t))))


def given(alias: str, question: str) -> bool:
    """Whether the question says the answer already: every word of it ("The Alhambra" for a question
    on a shop in Alhambra), articles and "of" aside."""
    words = set(re.findall(r"\w+", public.fold(alias))) - {"the", "a", "an", "of"}
    return not words or words <= set(re.findall(r"\w+", public.fold(question)))


def _prefer_names(holders: list[str], finder: Finder) -> list[str]:
    """The entries that hold the answer, the named things among them when there are any (the answer
    in *Italy* rather than in *Currency* for the currency of Italy)."""
    names = [t for t in holders if finder.proper(t)]
    return sorted(set(names or holders))


def keep(item: dict, finder: Finder) -> dict | None:
    """The item with its gold articles, hop and specific aliases, or None when the encyclopedia
    cannot answer it (the filter of the module's docstring)."""
    named = finder.named(item["q"])
    if not named:
        return None
    aliases = list(dict.fromkeys(" ".join(a.split()) for a in item["answers"] if a.strip()))
    found = [
        a for a in aliases if any(finder.holds(t, a) or any(finder.holds(x, a) for x in finder.links(t)) for t in named)
    ]
    if not any(finder.specific(a, item["q"]) for a in found):  # the costly test last
        return None
    aliases = [a for a in aliases if finder.specific(a, item["q"])]
    # a word the question says ("Spider", "Currency") holds the answer only in a sentence on what was asked
    gold = [
        t
        for t in named
        if any(
            finder.holds(t, a) if finder.proper(t) else finder.holds_in_context(t, a, item["q"], named) for a in aliases
        )
    ]
    hop, via = 0, []
    if not gold:
        hop = 1
        for t in named:
            for linked in finder.links(t):
                if linked not in named and any(finder.holds_in_context(linked, a, item["q"], named) for a in aliases):
                    gold.append(linked)
                    via.append(t)
        if not gold or len(set(gold)) > MAX_HOPS_HOLDING:
            return None
    return {
        "id": item["id"],
        "dataset": item["dataset"],
        "q": item["q"],
        "answers": aliases,
        "gold": _prefer_names(gold, finder),
        "named": named,
        "hop": hop,
        **({"via": sorted(set(via))} if via else {}),
    }


def choose(kept: list[dict], per_dataset: int) -> list[dict]:
    """At most `per_dataset` of each dataset, the ones whose question hashes lowest (a fixed draw)."""
    out = []
    for ds in SOURCES:
        rows = sorted(
            (x for x in kept if x["dataset"] == ds),
            key=lambda x: hashlib.sha256(("draw:" + public.fold(x["q"])).encode("utf-8")).hexdigest(),
        )
        out += rows[:per_dataset]
    return out


def build(raw: list[dict], per_dataset: int, commits: dict[str, str]) -> dict:
    corpus = generate.Corpus(generate.load())
    finder = Finder(corpus)
    seen: set[str] = set()
    kept, read = [], {ds: 0 for ds in SOURCES}
    for item in raw:
        read[item["dataset"]] += 1
        key = public.fold(item["q"]).rstrip("?. ")
        if key in seen:
            continue
        seen.add(key)
        if row := keep(item, finder):
            kept.append(row)
    chosen = choose(kept, per_dataset)
    for x in chosen:
        x["typo"] = public.typo(x["q"])
        x["half"] = public.half_of(x["q"])
    # each half in the order of a hash: the first questions of a cut-short run (--public-limit) mix the datasets
    chosen.sort(key=lambda x: (x["half"], hashlib.sha256(("order:" + public.fold(x["q"])).encode("utf-8")).hexdigest()))
    counts = {
        f"{ds}, {h}": sum(1 for x in chosen if x["dataset"] == ds and x["half"] == h)
        for ds in SOURCES
        for h in public.HALVES
    }
    return {
        "about": "Public questions the offline encyclopedia can answer (docs/evaluation-public.md): each with "
        "its dataset, its answer strings (any one answers), its gold articles (the entries holding "
        "the answer), the entries it names, its hop (0: the named entry holds the answer; 1: an "
        "entry the named one names), a copy with two typos, and its half ('dev': develop on it; "
        "'heldout': report it, never tune on it). Built by eval/public_build.py; the questions and "
        "answers are the datasets' own, under their licences below.",
        "sources": {ds: {**meta, "commit": commits.get(ds, "")} for ds, meta in SOURCES.items()},
        "typo_seed": public.TYPO_SEED,
        "read": read,
        "answerable": {ds: sum(1 for x in kept if x["dataset"] == ds) for ds in SOURCES},
        "counts": counts,
        "questions": chosen,
    }


def dumps(data: dict) -> str:
    """The set as JSON, one question a line (a diff shows which questions changed)."""
    head = json.dumps({k: v for k, v in data.items() if k != "questions"}, indent=1, ensure_ascii=False)
    rows = ",\n".join("  " + json.dumps(x, ensure_ascii=False) for x in data["questions"])
    return head[:-2] + ',\n "questions": [\n' + rows + "\n ]\n}\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nq-open", type=Path, nargs="+", default=[], help="NQ-open .jsonl files")
    p.add_argument("--webquestions", type=Path, nargs="+", default=[], help="WebQuestions .json files")
    p.add_argument(
        "--commit",
        action="append",
        default=[],
        metavar="DATASET=SHA",
        help="the commit each dataset was read at, recorded in the file (repeatable)",
    )
    p.add_argument("--per-dataset", type=int, default=200)
    p.add_argument("--out", type=Path, default=public.PUBLIC)
    args = p.parse_args(argv)
    raw: list[dict] = []
    try:
        for path in args.nq_open:
            raw += read_nq_open(path)
        for path in args.webquestions:
            raw += read_webquestions(path)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"public_build: cannot read a dataset: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    if not raw:
        print("public_build: no dataset given (--nq-open, --webquestions)", file=sys.stderr)
        return 2
    data = build(raw, args.per_dataset, dict(c.split("=", 1) for c in args.commit if "=" in c))
    args.out.write_text(dumps(data), encoding="utf-8")
    print(f"read {data['read']}, answerable {data['answerable']}, kept {data['counts']} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
