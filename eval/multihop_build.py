"""Build the multi-hop set (eval/data/multihop.json) from MuSiQue's *train* split, kept to the questions
whose two hops the offline encyclopedia holds.

    python eval/multihop_build.py --musique FILE.jsonl [--per-dataset 400] [--commit SHA] [--out FILE]

The dataset (docs/evaluation-public.md says where it comes from and under which licence):
  --musique   MuSiQue-Ans v1.0's train split as question and answer strings, one JSON object a line
              ({"question", "answer": [the answer and its aliases]}): the 19,938 questions of
              `musique_ans_v1.0_train.jsonl`, as Trustworthy-Information-Access/
              Annotation-Efficient-Universal-Honesty-Alignment keeps them in data/musique/train.jsonl.

A question is kept when it is a two-hop question here, by eval/public_build.py's filter (the same
Finder, so the two sets agree on what an entry, a name and a specific answer are):
  1. it names an encyclopedia entry by name (the first hop's article: a name such as "Florida" or
     "Louis XVI", not a word such as "Currency" or "Musician", whose summary names things the question
     never reaches);
  2. no entry it names holds an answer string in its summary (else it is a one-hop question here);
  3. an entry that first summary names holds an answer string in its own summary (the second hop's
     article), in a sentence that shares a word with the question besides the named entries' own,
     and at most three such entries do;
  4. the answer strings are specific (public_build's rule).
The first hop's article is `via`, the second's `gold`. Only the train split is read: MuSiQue's dev
and test questions, and every HotpotQA question, stay out of the repository.

Then at most --per-dataset questions, those whose question hashes lowest (a draw no one chose), each
with its half ('dev': develop on it; 'heldout': report it, never tune on it) by eval/public.py's hash.
Reads the corpus only, through eval/generate.py's mention finder: no research code of the project.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402 - eval/generate.py: the corpus and its mention finder
import public  # noqa: E402
import public_build  # noqa: E402

MULTIHOP = Path(__file__).resolve().parent / "data" / "multihop.json"
SOURCE = {
    "name": "MuSiQue-Ans v1.0 (Trivedi et al., 2022), the train split: questions and answer strings",
    "repository": "Trustworthy-Information-Access/Annotation-Efficient-Universal-Honesty-Alignment",
    "path": "data/musique/train.jsonl",
    "original": "StonyBrookNLP/musique (musique_ans_v1.0_train.jsonl)",
    "licence": "CC BY 4.0",
}


def read_musique(path: Path) -> list[dict]:
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if line.strip():
            row = json.loads(line)
            answers = row["answer"] if isinstance(row["answer"], list) else [row["answer"]]
            out.append({"dataset": "musique", "id": f"musique:train:{i}", "q": row["question"], "answers": answers})
    return out


def two_hop(item: dict, finder: public_build.Finder) -> dict | None:
    """The item with its two articles (`via`: the one it names; `gold`: the one holding the answer), or
    None when the encyclopedia does not hold it as two hops."""
    row = public_build.keep(item, finder)
    if row is None or row["hop"] != 1:
        return None
    via = [t for t in row["via"] if finder.proper(t)]
    # the second hop reached from a name the question says; its holders only those that name reaches
    gold = sorted({g for g in row["gold"] if any(g in finder.links(v) for v in via)})
    if not gold:
        return None
    return {**row, "via": via, "gold": gold}


def build(raw: list[dict], per_dataset: int, commit: str) -> dict:
    finder = public_build.Finder(generate.Corpus(generate.load()))
    seen: set[str] = set()
    kept = []
    for item in raw:
        key = public.fold(item["q"]).rstrip("?. ")
        if key in seen:
            continue
        seen.add(key)
        if row := two_hop(item, finder):
            kept.append(row)
    chosen = sorted(kept, key=lambda x: hashlib.sha256(("draw:" + public.fold(x["q"])).encode("utf-8")).hexdigest())
    chosen = chosen[:per_dataset]
    for x in chosen:
        x["typo"] = public.typo(x["q"])
        x["half"] = public.half_of(x["q"])
    chosen.sort(key=lambda x: (x["half"], hashlib.sha256(("order:" + public.fold(x["q"])).encode("utf-8")).hexdigest()))
    return {
        "about": "Two-hop questions of MuSiQue's train split that the offline encyclopedia answers in two hops "
        "(docs/evaluation-public.md): each with its answer strings (any one answers), the entry it names "
        "(`via`, the first hop), the entries holding the answer (`gold`, the second hop), a copy with two "
        "typos, and its half ('dev': develop on it; 'heldout': report it, never tune on it). Built by "
        "eval/multihop_build.py; the questions and answers are MuSiQue's own, under its licence below.",
        "sources": {"musique": {**SOURCE, "commit": commit}},
        "typo_seed": public.TYPO_SEED,
        "read": {"musique": len(raw)},
        "answerable": {"musique": len(kept)},
        "counts": {f"musique, {h}": sum(1 for x in chosen if x["half"] == h) for h in public.HALVES},
        "questions": chosen,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--musique", type=Path, required=True, help="MuSiQue-Ans train as .jsonl")
    p.add_argument("--commit", default="", help="the commit the file was read at, recorded in the set")
    p.add_argument("--per-dataset", type=int, default=400)
    p.add_argument("--out", type=Path, default=MULTIHOP)
    args = p.parse_args(argv)
    try:
        raw = read_musique(args.musique)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"multihop_build: cannot read {args.musique}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    data = build(raw, args.per_dataset, args.commit)
    args.out.write_text(public_build.dumps(data), encoding="utf-8")
    print(f"read {data['read']}, answerable {data['answerable']}, kept {data['counts']} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
