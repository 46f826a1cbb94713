"""Build the multi-hop set (eval/data/multihop.json) from public multi-hop datasets' *train* splits, kept
to the questions whose two hops the offline encyclopedia holds.

    python eval/multihop_build.py --musique FILE.jsonl [--hotpotqa FILE ...] [--2wikimultihopqa FILE ...] \\
        [--cwq FILE ...] [--keep-apart FILE ...] [--commit [DATASET=]SHA ...] [--where DATASET=OWNER/REPO:PATH ...] \\
        [--per-dataset 400] [--out FILE]

The datasets (docs/evaluation-public.md says where each comes from and under which licence):
  --musique          MuSiQue-Ans v1.0's train split as question and answer strings, one JSON object a line
                     ({"question", "answer": [the answer and its aliases]}): the 19,938 questions of
                     `musique_ans_v1.0_train.jsonl`, as Trustworthy-Information-Access/
                     Annotation-Efficient-Universal-Honesty-Alignment keeps them in data/musique/train.jsonl.
  --hotpotqa         HotpotQA's train split in its own form (a JSON list, or JSON lines: {"_id" or "id",
                     "question", "answer", "supporting_facts"}, the facts as [[title, sentence], ...] or
                     {"title": [...], "sent_id": [...]}); the context paragraphs are not needed. Or a sample
                     of it as {"split": "train", "examples": [{"dataset_index", "question", "answer",
                     "gold_source_indices", "sources": [{"title", "is_gold", ...}]}]} (citeprobe/citeprobe's
                     data/hotpotqa/train.json): the gold sources are the supporting articles.
  --2wikimultihopqa  2WikiMultihopQA's train split, in the same form.
  --cwq              ComplexWebQuestions v1.1's train split in its own form (a JSON list, or JSON lines:
                     {"ID", "question", "answers": [{"answer", "aliases", ...}], "composition_answer",
                     "compositionality_type"}; or the answers column-wise, {"answer": [...], "aliases":
                     [[...]]}): its composition questions, whose `composition_answer` is the bridge (a
                     file named for its dev or test split is refused).
Only train splits are read: HotpotQA's dev split holds multi-hop questions kept apart from the project
and stays out of the repository. `--keep-apart` names files of questions that must stay out (JSON or
JSON lines, each row a question string or an object with "question"): a row asking one of them is
dropped and counted, whatever its file says it is (a copy named "train" may hold dev questions).

A question is kept when it is a two-hop question here, by eval/public_build.py's Finder (the same
rules for what an entry, a name and a specific answer are):
  1. it names an encyclopedia entry by name (the first hop's article: a name such as "Florida" or
     "Louis XVI", not a word such as "Currency" or "Musician");
  2. no entry it names holds an answer string in its summary (else it is a one-hop question here);
  3. an entry that first summary names holds an answer string in its own summary (the second hop's
     article);
  4. the answer strings are specific (public_build's rule).
Where the dataset gives the question's supporting articles (HotpotQA, 2WikiMultihopQA), the two hops are
those two articles: both in the encyclopedia, the first named by the question, the second not named
by it and named by the first's summary. Where it gives the bridge (ComplexWebQuestions'
composition_answer), the second hop is the entry of that name, not named by the question and named by
the summary of an entry the question names (the first hop). Where it gives neither (MuSiQue as
reached), the second hop is inferred: an entry the first's summary names holds the answer in a sentence that shares a word with
the question besides the named entries' own, and at most three such entries do.
The first hop's article is `via`, the second's `gold`.

Then at most --per-dataset questions of each dataset, those whose question hashes lowest (a draw no one
chose), each with its half ('dev': develop on it; 'heldout': report it, never tune on it) by
eval/public.py's hash. Reads the corpus only, through eval/generate.py's mention finder: no research
code of the project.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402 - eval/generate.py: the corpus and its mention finder
import multihop_cwq  # noqa: E402
import public  # noqa: E402
import public_build  # noqa: E402

MULTIHOP = Path(__file__).resolve().parent / "data" / "multihop.json"
SOURCES = {
    "musique": {
        "name": "MuSiQue-Ans v1.0 (Trivedi et al., 2022), the train split: questions and answer strings",
        "repository": "Trustworthy-Information-Access/Annotation-Efficient-Universal-Honesty-Alignment",
        "path": "data/musique/train.jsonl",
        "original": "StonyBrookNLP/musique (musique_ans_v1.0_train.jsonl)",
        "licence": "CC BY 4.0",
    },
    "hotpotqa": {
        "name": "HotpotQA (Yang et al., 2018), the train split: questions, answers and supporting articles",
        "original": "hotpotqa/hotpot (hotpot_train_v1.1.json)",
        "licence": "CC BY-SA 4.0",
    },
    "2wikimultihopqa": {
        "name": "2WikiMultihopQA (Ho et al., 2020), the train split: questions, answers and supporting articles",
        "original": "Alab-NII/2wikimultihop (train.json)",
        "licence": "Apache-2.0",
    },
    "cwq": multihop_cwq.SOURCE,
}
SHORT = {
    "musique": "MuSiQue",
    "hotpotqa": "HotpotQA",
    "2wikimultihopqa": "2WikiMultihopQA",
    "cwq": "ComplexWebQuestions",
}


def read_musique(path: Path) -> list[dict]:
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if line.strip():
            row = json.loads(line)
            answers = row["answer"] if isinstance(row["answer"], list) else [row["answer"]]
            out.append({"dataset": "musique", "id": f"musique:train:{i}", "q": row["question"], "answers": answers})
    return out


def _rows(path: Path) -> list:
    """A JSON list, a sample file ({"split", "examples": [...]}; any split but "train" refused), or one JSON
    value a line."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return list(json.loads(text))
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("examples"), list):
        if whole.get("split", "train") != "train":
            raise ValueError(f"holds the {whole['split']!r} split; only train splits are read")
        return list(whole["examples"])
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def supporting_titles(facts: object) -> list[str]:
    """The articles a row's supporting facts stand in, in order, once each: [[title, sentence], ...] (the
    datasets' own files) or {"title": [...], "sent_id": [...]} (their column-wise copies)."""
    if isinstance(facts, dict):
        titles = list(facts.get("title") or [])
    else:
        titles = [f[0] for f in facts or [] if isinstance(f, list | tuple) and f]
    return list(dict.fromkeys(t for t in titles if isinstance(t, str) and t))


def gold_titles(row: dict) -> list[str]:
    """The supporting articles of a sample file's row: its sources marked gold, in the order its
    gold_source_indices ([[source, sentence], ...]) name them, else in the sources' order."""
    sources = [s for s in row.get("sources") or [] if isinstance(s, dict)]
    order = [i[0] for i in row.get("gold_source_indices") or [] if isinstance(i, list | tuple) and i]
    picked = [sources[i] for i in order if isinstance(i, int) and 0 <= i < len(sources)]
    picked += [s for s in sources if s.get("is_gold")]
    return list(dict.fromkeys(s["title"] for s in picked if isinstance(s.get("title"), str)))


def read_titled(path: Path, dataset: str) -> list[dict]:
    """HotpotQA's or 2WikiMultihopQA's rows: question, answer and the supporting articles' titles."""
    out = []
    for i, row in enumerate(_rows(path)):
        answers = row["answer"] if isinstance(row["answer"], list) else [row["answer"]]
        key = row.get("_id") or row.get("id") or row.get("dataset_index", i)
        out.append(
            {
                "dataset": dataset,
                "id": f"{dataset}:train:{key}",
                "q": row["question"],
                "answers": [str(a) for a in answers],
                "titles": supporting_titles(row["supporting_facts"]) if "supporting_facts" in row else gold_titles(row),
            }
        )
    return out


def read_cwq(path: Path) -> list[dict]:
    """ComplexWebQuestions' composition questions (eval/multihop_cwq.py)."""
    if any(split in path.name.lower() for split in ("dev", "test", "valid")):
        raise ValueError(f"{path.name} names a split other than train; only train splits are read")
    return multihop_cwq.composition_rows(_rows(path))


def read_apart(path: Path) -> set[str]:
    """The questions a file holds (strings, or objects with "question"), folded."""
    out = set()
    for row in _rows(path):
        q = row if isinstance(row, str) else row["question"] if isinstance(row, dict) else row[0]
        out.add(key_of(q))
    return out


def key_of(question: str) -> str:
    return public.fold(question).rstrip("?. ")


def two_hop(item: dict, finder: public_build.Finder) -> dict | None:
    """The item with its two articles (`via`: the one it names; `gold`: the one holding the answer), or
    None when the encyclopedia does not hold it as two hops. The dataset's supporting articles when it
    gives them, else the second hop inferred from the encyclopedia."""
    if item.get("titles"):
        return _two_hop_given(item, finder)
    if item.get("bridge"):
        return multihop_cwq.two_hop(item, finder)
    row = public_build.keep(item, finder)
    if row is None or row["hop"] != 1:
        return None
    via = [t for t in row["via"] if finder.proper(t)]
    # the second hop reached from a name the question says; its holders only those that name reaches
    gold = sorted({g for g in row["gold"] if any(g in finder.links(v) for v in via)})
    if not gold:
        return None
    return {**row, "via": via, "gold": gold}


def _two_hop_given(item: dict, finder: public_build.Finder) -> dict | None:
    """Two hops read from the dataset's two supporting articles (module docstring)."""
    titles = item["titles"]
    if len(titles) != 2 or not all(t in finder.corpus.by_title for t in titles):
        return None
    named = finder.named(item["q"])
    first = [t for t in titles if t in named]
    if len(first) != 1 or not finder.proper(first[0]):
        return None  # neither named (nothing to start from) or both (a comparison, or one hop)
    via, gold = first[0], next(t for t in titles if t != first[0])
    aliases = list(dict.fromkeys(" ".join(str(a).split()) for a in item["answers"] if str(a).strip()))
    aliases = [a for a in aliases if finder.specific(a, item["q"])]
    if not aliases or any(finder.holds(t, a) for t in named for a in aliases):
        return None
    if gold not in finder.links(via) or not any(finder.holds(gold, a) for a in aliases):
        return None
    return {
        "id": item["id"],
        "dataset": item["dataset"],
        "q": item["q"],
        "answers": aliases,
        "gold": [gold],
        "named": named,
        "hop": 1,
        "via": [via],
    }


def _draw(x: dict, salt: str) -> str:
    return hashlib.sha256((salt + public.fold(x["q"])).encode("utf-8")).hexdigest()


def build(
    raw: list[dict],
    per_dataset: int,
    commits: dict[str, str],
    apart: set[str] | None = None,
    where: dict[str, dict[str, str]] | None = None,
) -> dict:
    finder = public_build.Finder(generate.Corpus(generate.load()))
    datasets = list(dict.fromkeys(x["dataset"] for x in raw))
    seen: set[str] = set()
    kept, read, kept_apart = [], dict.fromkeys(datasets, 0), dict.fromkeys(datasets, 0)
    for item in raw:
        read[item["dataset"]] += 1
        key = key_of(item["q"])
        if apart and key in apart:
            kept_apart[item["dataset"]] += 1
            continue
        if key in seen:
            continue
        seen.add(key)
        if row := two_hop(item, finder):
            kept.append(row)
    chosen = []
    for ds in datasets:
        chosen += sorted((x for x in kept if x["dataset"] == ds), key=lambda x: _draw(x, "draw:"))[:per_dataset]
    for x in chosen:
        x["typo"] = public.typo(x["q"])
        x["half"] = public.half_of(x["q"])
    chosen.sort(key=lambda x: (x["half"], _draw(x, "order:")))
    names = " and ".join(SHORT[ds] + "'s" for ds in datasets)
    data = {
        "about": f"Two-hop questions of {names} train split{'s' if len(datasets) > 1 else ''} that the offline "
        "encyclopedia answers in two hops (docs/evaluation-public.md): each with its answer strings (any one "
        "answers), the entry it names (`via`, the first hop), the entries holding the answer (`gold`, the "
        "second hop), a copy with two typos, and its half ('dev': develop on it; 'heldout': report it, never "
        "tune on it). Built by eval/multihop_build.py; the questions and answers are the datasets' own, under "
        "their licences below.",
        "sources": {ds: {**SOURCES[ds], **(where or {}).get(ds, {}), "commit": commits.get(ds, "")} for ds in datasets},
        "typo_seed": public.TYPO_SEED,
        "read": read,
        **({"kept_apart": kept_apart} if apart else {}),
        "answerable": {ds: sum(1 for x in kept if x["dataset"] == ds) for ds in datasets},
        "counts": {
            f"{ds}, {h}": sum(1 for x in chosen if x["dataset"] == ds and x["half"] == h)
            for ds in datasets
            for h in public.HALVES
        },
        "questions": chosen,
    }
    return data


def _pairs(values: list[str], flag: str, default: str | None = None) -> dict[str, str]:
    out = {}
    for v in values:
        ds, sep, rest = v.partition("=")
        if not sep and default:
            ds, rest = default, v
        elif not sep or ds not in SOURCES:
            raise ValueError(f"{flag} {v!r}: expected DATASET=VALUE, DATASET one of {', '.join(SOURCES)}")
        out[ds] = rest
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--musique", type=Path, help="MuSiQue-Ans train as .jsonl")
    p.add_argument("--hotpotqa", type=Path, nargs="+", default=[], help="HotpotQA train files (.json or .jsonl)")
    p.add_argument("--2wikimultihopqa", dest="twowiki", type=Path, nargs="+", default=[], help="2WikiMultihopQA train")
    p.add_argument("--cwq", type=Path, nargs="+", default=[], help="ComplexWebQuestions train (.json or .jsonl)")
    p.add_argument("--keep-apart", type=Path, nargs="+", default=[], help="files of questions that must stay out")
    p.add_argument(
        "--commit",
        action="append",
        default=[],
        metavar="[DATASET=]SHA",
        help="the commit a dataset's file was read at (no DATASET: MuSiQue's), recorded in the set",
    )
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="DATASET=OWNER/REPO:PATH",
        help="the repository and path a dataset's file was read from, recorded in the set",
    )
    p.add_argument("--per-dataset", type=int, default=400)
    p.add_argument("--out", type=Path, default=MULTIHOP)
    args = p.parse_args(argv)
    raw: list[dict] = []
    apart: set[str] = set()
    try:
        commits = _pairs(args.commit, "--commit", default="musique")
        places = _pairs(args.where, "--where")
    except ValueError as e:
        print(f"multihop_build: {e}", file=sys.stderr)
        return 2
    where = {ds: dict(zip(("repository", "path"), w.split(":", 1), strict=False)) for ds, w in places.items()}
    reading = args.musique
    try:
        if args.musique:
            raw += read_musique(args.musique)
        for ds, paths in (("hotpotqa", args.hotpotqa), ("2wikimultihopqa", args.twowiki)):
            for reading in paths:
                raw += read_titled(reading, ds)
        for reading in args.cwq:
            raw += read_cwq(reading)
        for reading in args.keep_apart:
            apart |= read_apart(reading)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        print(f"multihop_build: cannot read {reading}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    if not raw:
        print("multihop_build: no dataset given (--musique, --hotpotqa, --2wikimultihopqa, --cwq)", file=sys.stderr)
        return 2
    data = build(raw, args.per_dataset, commits, apart, where)
    args.out.write_text(public_build.dumps(data), encoding="utf-8")
    print(f"read {data['read']}, answerable {data['answerable']}, kept {data['counts']} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
