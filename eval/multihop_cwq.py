"""ComplexWebQuestions (Talmor and Berant, 2018) for the multi-hop set (eval/multihop_build.py): its
composition questions, whose `composition_answer` is the bridge, and the two hops through that bridge.

A row of the dataset's own files (a JSON list, or one object a line):
    {"ID", "question", "answers": [{"answer", "aliases", "answer_id"}], "composition_answer",
     "compositionality_type", "machine_question", "sparql", "webqsp_ID", "webqsp_question", ...}
or with its answers column-wise ({"answer": [...], "aliases": [[...], ...]}, the Hugging Face copies).
Only "composition" questions are read ("What state is home to the university that is represented in
sports by X?": X's entry names the university's, which holds the state); conjunctions, comparatives and
superlatives are not two hops through one entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import generate
import public
import public_build

SOURCE = {
    "name": "ComplexWebQuestions v1.1 (Talmor and Berant, 2018), the train split: composition questions, "
    "answers and bridges",
    "original": "alontalmor/WebAsKB (ComplexWebQuestions_train.json)",
    "licence": "GPL-2.0-or-later (the dataset's README); Apache-2.0 on its Hugging Face card",
}
MAX_ANSWERS = 3  # a question of more answers is a list question (the public set's WebQuestions rule)


def answers_of(answers: object) -> list[list[str]]:
    """Each answer of a row with its aliases, the answer first."""
    if isinstance(answers, dict):
        names, aliases = list(answers.get("answer") or []), list(answers.get("aliases") or [])
        answers = [{"answer": n, "aliases": aliases[i] if i < len(aliases) else []} for i, n in enumerate(names)]
    out = []
    for a in answers if isinstance(answers, list) else []:
        names = [a.get("answer"), *(a.get("aliases") or [])] if isinstance(a, dict) else [a]
        out.append(list(dict.fromkeys(str(n).strip() for n in names if isinstance(n, str | int) and str(n).strip())))
    return [names for names in out if names]


def composition_rows(rows: Iterable[dict]) -> list[dict]:
    """The composition questions of at most MAX_ANSWERS answers, each with its bridge; the id is the
    dataset's ("cwq:train:WebQTrn-3513_7c41...")."""
    out = []
    for i, row in enumerate(rows):
        answers = answers_of(row.get("answers"))
        if row.get("compositionality_type") != "composition" or not str(row.get("composition_answer") or "").strip():
            continue
        if 0 < len(answers) <= MAX_ANSWERS:
            out.append(
                {
                    "dataset": "cwq",
                    "id": f"cwq:train:{row.get('ID') or i}",
                    "q": row["question"],
                    "answers": [n for names in answers for n in names],
                    "bridge": " ".join(str(row["composition_answer"]).split()),
                }
            )
    return out


@cache
def _by_name(finder: public_build.Finder) -> dict[str, list[str]]:
    """The entries by their name (qualifier aside), folded."""
    out: dict[str, list[str]] = {}
    for title in finder.corpus.by_title:
        out.setdefault(public.fold(generate.name(title)).strip(), []).append(title)
    return out


def bridge_entry(bridge: str, finder: public_build.Finder) -> str | None:
    """The one entry the bridge names ("george washington university"): the entry of that name without
    a qualifier when several share it; None when no entry, or several qualified ones, do."""
    found = _by_name(finder).get(public.fold(bridge).strip(), [])
    plain = [t for t in found if t == generate.name(t)]
    return (plain or found)[0] if len(plain or found) == 1 else None


def two_hop(item: dict, finder: public_build.Finder) -> dict | None:
    """The item's two hops through its bridge: the bridge's entry (`gold`) not named by the question and
    holding an answer string; the entries the question names by name whose summaries name it (`via`);
    no named entry holding an answer string. None when the encyclopedia does not hold it so."""
    gold = bridge_entry(item["bridge"], finder)
    named = finder.named(item["q"])
    if gold is None or gold in named:
        return None
    via = [t for t in named if finder.proper(t) and gold in finder.links(t)]
    aliases = list(dict.fromkeys(" ".join(str(a).split()) for a in item["answers"] if str(a).strip()))
    aliases = [a for a in aliases if finder.specific(a, item["q"])]
    if not via or not aliases or any(finder.holds(t, a) for t in named for a in aliases):
        return None
    if not any(finder.holds(gold, a) for a in aliases):
        return None
    return {
        "id": item["id"],
        "dataset": item["dataset"],
        "q": item["q"],
        "answers": aliases,
        "gold": [gold],
        "named": named,
        "hop": 1,
        "via": via,
        "bridge": item["bridge"],
    }
