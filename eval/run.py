"""`make eval`: deepresearch's own evaluation, offline, on the embedded defaults.

For each question of eval/questions.json it runs the graph and measures:
  recall      share of the gold articles among the report's cited sources
  bm25@5/@10  the same share among one query of the raw question in the encyclopedia's own search
              (a search box: BM25 and meaning fused, as the agent searches)
  supported   share of citations the verifier marks supported
  cited       share of report sentences (headings, notes and the Sources list aside) with a citation
  meta        sentences that talk about a source instead of the world
  compare     deep comparison questions whose report cites every thing compared
  seconds     median wall time per question
and, on the `answers` set (eval/answers.py), whether the report states the answer, by kind of
question, beside a search box (the first sentences of the search's top articles) and the reports' length.

Then the public set (eval/data/public.json, built by eval/public_build.py; measured by eval/public_eval.py): questions of public QA datasets
the encyclopedia can answer, per half (development; held out, never tuned on) and with two typos, the
agent beside one BM25 query and the hybrid search's top 3 (docs/evaluation-public.md).

Then the multi-hop set (eval/data/multihop.json, built by eval/multihop_build.py from MuSiQue's train
split): two-hop questions whose both articles the encyclopedia holds, per half, measured as the public
set is.

The deep graph's rows and the generated broad questions also get a table of the reports' shape
(eval/report_shape.py): median sections, words and sources; sections named after one article the
question does not name; sentences in two sections; sections citing fewer than two sources; reports
with "Not found" and with an empty section.

Every table also says how the loop ran: the iterations a run used (mean) and the runs that stopped
with an asked thing unanswered (eval/answers.py's `loop`).

Then generated questions (eval/generate.py, measured by eval/generated.py): for each seed, questions
drawn from random encyclopedia entries, all on the iterative graph and a subset of the comparisons
and broad questions on the deep graph. The test seed's questions are never printed or stored: its
rows carry only their kind and figures, so nobody tunes the research to them.

    python eval/run.py [--limit N] [--deep-limit N] [--answers-limit N]
                       [--only answers|coverage|generated|public|multihop]
                       [--seed N ...] [--generated-count N] [--generated-deep N] [--public-limit N]
                       [--public-set FILE] [--public-half dev|heldout] [--public-no-typos] [--public-baselines-only]
                       [--multihop-set FILE] [--multihop-limit N] [--multihop-half dev|heldout] [--multihop-typos]
                       [--model local] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import answers as answer_eval  # noqa: E402 - eval/answers.py, beside this file
import generate  # noqa: E402
import generated as generated_eval  # noqa: E402
import multihop_build  # noqa: E402
import public  # noqa: E402
import public_eval  # noqa: E402
import report_shape  # noqa: E402
import subject_check  # noqa: E402
from report_shape import body_sentences  # noqa: E402

from deepresearch.report.grounding import is_meta
from deepresearch.text.citations import CITE
from deepresearch.tools import get_search

QUESTIONS = Path(__file__).with_name("questions.json")
# Chosen once, before any research work looked at generated questions; its questions stay unseen.
TEST_SEED = 246826
# The seeds to develop on: look at their questions and reports freely.
DEV_SEEDS = (1001, 1002, 1003)


def score(result: dict, gold: list[str], search, question: str) -> dict:
    cited = {s["title"] for s in result.get("sources", [])}
    top = [r.title for r in search.search(question, 10)]
    sents = body_sentences(result.get("report", ""))
    citations = result.get("citations", [])
    return {
        "recall": sum(g in cited for g in gold) / len(gold),
        "bm25_5": sum(g in top[:5] for g in gold) / len(gold),
        "bm25_10": sum(g in top[:10] for g in gold) / len(gold),
        "citations": len(citations),
        "supported": sum(c["verdict"] == "supported" for c in citations),
        "sentences": len(sents),
        "cited_sentences": sum(bool(CITE.search(s)) for s in sents),
        "meta": [s for s in sents if is_meta(s)],
        "stopped_by": result.get("stopped_by"),
        **answer_eval.loop(result),
        **report_shape.shape(result, question),
    }


def timed(question: str, context: dict, mode: str) -> tuple[dict, str | None, float]:
    """One research run: its result (empty when it failed), the failure, and its seconds."""
    started = time.monotonic()
    try:
        result, error = subject_check.research(question, context, mode=mode), None
    except Exception as e:  # noqa: BLE001 - a failed question counts as not answered, and is shown
        result, error = {}, f"{type(e).__name__}: {e}"
    return result, error, round(time.monotonic() - started, 1)


def run(items: list[dict], mode: str, context: dict, *, log=sys.stderr) -> list[dict]:
    search = get_search("wiki")
    rows = []
    for i, item in enumerate(items, 1):
        result, error, seconds = timed(item["q"], context, mode)
        row = {"q": item["q"], "seconds": seconds, "error": error, **score(result, item["gold"], search, item["q"])}
        row.update(subject_check.row_fields(result))
        if item.get("compare"):
            cited = {s["title"] for s in result.get("sources", [])}
            row["compare_ok"] = all(c in cited for c in item["compare"])
        rows.append(row)
        print(
            f"[{mode} {i}/{len(items)}] {row['seconds']:5.1f}s recall {row['recall']:.2f} "
            f"(bm25@10 {row['bm25_10']:.2f}) {item['q'][:70]}" + (f"  ERROR {error}" if error else ""),
            file=log,
        )
    return rows


def run_answers(items: list[dict], mode: str, context: dict, *, log=sys.stderr) -> list[dict]:
    search = get_search("wiki")
    rows = []
    for i, item in enumerate(items, 1):
        result, error, seconds = timed(item["q"], context, mode)
        row = {
            "q": item["q"],
            "kind": item["kind"],
            "seconds": seconds,
            "error": error,
            **answer_eval.score(result, item, search),
            **subject_check.row_fields(result),
        }
        rows.append(row)
        print(
            f"[answers {mode} {i}/{len(items)}] {row['seconds']:5.1f}s {item['kind']:10s} "
            f"{'ANSWERED' if row['answered'] else 'missed  '} {row['words']:4d}w {item['q'][:70]}"
            + (f"  ERROR {error}" if error else ""),
            file=log,
        )
    return rows


def run_generated(
    items: list[dict], mode: str, context: dict, *, hidden: bool, log=sys.stderr, sink=None
) -> list[dict]:
    """Each generated question on the `mode` graph; a hidden (test) seed's questions are not kept."""
    search = get_search("wiki")
    rows = []
    for i, item in enumerate(items, 1):
        result, error, seconds = timed(item["q"], context, mode)
        row = {
            "kind": item["kind"],
            "seconds": seconds,
            # a test question's error message could quote it: only the exception's type is kept
            "error": error and (error.split(":")[0] if hidden else error),
            **generated_eval.score(result, item, search),
            **subject_check.row_fields(result, hidden=hidden),
        }
        if not hidden:
            row["q"] = item["q"]
        rows.append(row)
        if sink:
            sink({"graph": mode, "seed": item["seed"], **row})
        shown = "(test question)" if hidden else item["q"][:70]
        verdict = (
            ("ANSWERED" if row.get("answered") else "missed  ")
            if "answered" in row
            else (f"related {row['related']:.2f}" if "related" in row else f"cited all {row.get('cited_all')}")
        )
        print(
            f"[seed {item['seed']} {mode} {i}/{len(items)}] {row['seconds']:5.1f}s {item['kind']:9s} {verdict} "
            f"{row['words']:4d}w {shown}" + (f"  ERROR {row['error']}" if error else ""),
            file=log,
        )
    return rows


def generated_runs(
    seeds: list[int], count: int, deep_count: int, context: dict, graphs=("iterative", "deep"), sink=None
) -> dict[str, list]:
    out = {}
    for seed in seeds:
        items = generate.generate(seed, count)
        label = f"seed {seed}" + (" (test)" if seed == TEST_SEED else "")
        hidden = seed == TEST_SEED
        if "iterative" in graphs:
            out[f"iterative, {label}"] = run_generated(items, "iterative", context, hidden=hidden, sink=sink)
        deep = [x for k in ("compare", "broad") for x in [y for y in items if y["kind"] == k][:deep_count]]
        if deep and "deep" in graphs:
            out[f"deep, {label}"] = run_generated(deep, "deep", context, hidden=hidden, sink=sink)
    return out


def appender(path: Path):
    """A function that adds a row to `path` as a JSON line: a cut-short run keeps the rows it measured."""
    path.write_text("", encoding="utf-8")

    def add(row: dict) -> None:
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")

    return add


def summarize(rows: list[dict]) -> dict:
    n = max(1, len(rows))
    citations = sum(r["citations"] for r in rows)
    sentences = sum(r["sentences"] for r in rows)
    out = {
        "questions": len(rows),
        "recall": sum(r["recall"] for r in rows) / n,
        "bm25_5": sum(r["bm25_5"] for r in rows) / n,
        "bm25_10": sum(r["bm25_10"] for r in rows) / n,
        "supported": sum(r["supported"] for r in rows) / max(1, citations),
        "cited": sum(r["cited_sentences"] for r in rows) / max(1, sentences),
        "meta": sum(len(r["meta"]) for r in rows),
        "median_s": statistics.median([r["seconds"] for r in rows]) if rows else 0.0,
        "errors": sum(1 for r in rows if r["error"]),
        **answer_eval.loop_summary(rows),
    }
    out["shape"] = report_shape.summarize(rows)
    compared = [r for r in rows if "compare_ok" in r]
    out["compare"] = f"{sum(r['compare_ok'] for r in compared)}/{len(compared)}" if compared else "-"
    return out


def table(summaries: dict[str, dict]) -> str:
    head = (
        "| graph | questions | gold recall (cited) | search top 5 | search top 10 | citations supported "
        "| sentences cited | about a source | comparisons covered | iterations (mean) | stopped unanswered | median s |"
    )
    lines = [head, "|" + "---|" * 12]
    for name, s in summaries.items():
        lines.append(
            f"| {name} | {s['questions']} | {s['recall']:.2f} | {s['bm25_5']:.2f} | {s['bm25_10']:.2f} | "
            f"{s['supported']:.2f} | {s['cited']:.2f} | {s['meta']} | {s['compare']} | {answer_eval.loop_cells(s)} "
            f"| {s['median_s']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--limit", type=int, help="iterative questions at most")
    p.add_argument("--deep-limit", type=int, help="deep questions at most")
    p.add_argument("--answers-limit", type=int, help="answer questions at most")
    p.add_argument(
        "--only", choices=("answers", "coverage", "generated", "public", "multihop"), help="run one of the sets"
    )
    p.add_argument(
        "--seed",
        type=int,
        action="append",
        help=f"a seed of generated questions (repeatable; default the test seed; develop on {DEV_SEEDS})",
    )
    p.add_argument("--generated-count", type=int, default=300, help="generated questions per seed (default 300)")
    p.add_argument(
        "--generated-deep",
        type=int,
        default=20,
        help="generated comparisons and broad questions, each, run on the deep graph too (default 20)",
    )
    p.add_argument(
        "--generated-graph",
        choices=("iterative", "deep"),
        action="append",
        help="run the generated questions on this graph only (repeatable; default both)",
    )
    p.add_argument(
        "--public-set",
        type=Path,
        default=public.PUBLIC,
        help="the public set's file (default eval/data/public.json, or DEEPRESEARCH_PUBLIC_SET)",
    )
    p.add_argument("--public-limit", type=int, help="public questions at most per half and spelling")
    p.add_argument(
        "--public-half",
        choices=public.HALVES,
        action="append",
        help="the public set's half to run (repeatable; default both)",
    )
    p.add_argument("--public-no-typos", action="store_true", help="leave out the public questions' typo'd copies")
    p.add_argument(
        "--public-baselines-only",
        action="store_true",
        help="the public set's baselines alone (no model: seconds for the whole set)",
    )
    p.add_argument(
        "--multihop-set",
        type=Path,
        default=multihop_build.MULTIHOP,
        help="the multi-hop set's file (default eval/data/multihop.json)",
    )
    p.add_argument("--multihop-limit", type=int, help="multi-hop questions at most per half")
    p.add_argument(
        "--multihop-half",
        choices=public.HALVES,
        action="append",
        help="the multi-hop set's half to run (repeatable; default both)",
    )
    p.add_argument("--multihop-typos", action="store_true", help="also run the multi-hop questions' typo'd copies")
    p.add_argument("--model", default="local")
    p.add_argument(
        "--sections",
        type=int,
        default=None,
        help="deep mode: sections at most (default the product's own, as a user runs it)",
    )
    p.add_argument("--writer", default="auto", help="the context's writer style (default auto)")
    p.add_argument(
        "--json",
        metavar="FILE",
        help="also write every row and the summary as JSON (and each generated row, as it comes, to FILE.rows.jsonl)",
    )
    args = p.parse_args(argv)
    data = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    public_set = None
    if args.only in (None, "public"):  # read first: a bad file stops the run before any question
        try:
            public_set = public.load(args.public_set)
        except (OSError, ValueError) as e:
            p.error(f"--public-set {args.public_set}: {type(e).__name__}: {e}")
    multihop_set = None
    if args.only in (None, "multihop"):
        try:
            multihop_set = public.load(args.multihop_set)
        except (OSError, ValueError) as e:
            p.error(f"--multihop-set {args.multihop_set}: {type(e).__name__}: {e}")
    context = {"model": args.model, "search": "wiki", "writer": args.writer}
    if args.sections:
        context["max_sections"] = args.sections
    rows: dict[str, list] = {}
    answer_rows: dict[str, list] = {}
    generated_rows: dict[str, list] = {}
    if args.only in (None, "coverage"):
        rows = {
            "iterative": run(data["iterative"][: args.limit], "iterative", context),
            "deep": run(data["deep"][: args.deep_limit], "deep", context),
        }
    if args.only in (None, "answers"):
        items = data["answers"][: args.answers_limit]
        answer_rows = {
            "iterative": run_answers(items, "iterative", context),
            "deep": run_answers([x for x in items if x["kind"] == "compare"][: args.deep_limit], "deep", context),
        }
    if args.only in (None, "generated"):
        sink = appender(Path(f"{args.json}.rows.jsonl")) if args.json else None
        generated_rows = generated_runs(
            args.seed or [TEST_SEED],
            args.generated_count,
            args.generated_deep,
            context,
            tuple(args.generated_graph or ("iterative", "deep")),
            sink,
        )
    public_rows: list[dict] = []
    if public_set is not None:
        sink = appender(Path(f"{args.json}.public.jsonl")) if args.json else None
        public_rows = public_eval.run_all(
            public_set,
            None if args.public_baselines_only else context,
            halves=tuple(args.public_half or public.HALVES),
            typos=not args.public_no_typos,
            limit=args.public_limit,
            sink=sink,
        )
    multihop_rows: list[dict] = []
    if multihop_set is not None:
        sink = appender(Path(f"{args.json}.multihop.jsonl")) if args.json else None
        multihop_rows = public_eval.run_all(
            multihop_set,
            None if args.public_baselines_only else context,
            halves=tuple(args.multihop_half or public.HALVES),
            typos=args.multihop_typos,
            limit=args.multihop_limit,
            sink=sink,
            label="multihop",
        )
    summaries = {k: summarize(v) for k, v in rows.items() if v}
    answer_summaries = {k: answer_eval.summarize(v) for k, v in answer_rows.items() if v}
    if summaries:
        print(table(summaries))
        if "deep" in summaries:  # the hand-written set's broad questions and comparisons, on the deep graph
            print()
            print(report_shape.table([("deep", "hand-written", summaries["deep"]["shape"])]))
    if answer_summaries:
        print()
        print(answer_eval.table(answer_summaries))
    generated_summaries = {k: generated_eval.summarize(v) for k, v in generated_rows.items() if v}
    if generated_summaries:
        print()
        print(generated_eval.table(generated_summaries))
        if shapes := generated_eval.shape_table(generated_summaries):
            print()
            print(shapes)
    public_summaries = public_eval.summarize(public_rows)
    if public_summaries:
        print()
        print(public_eval.table(public_summaries))
    multihop_summaries = public_eval.summarize(multihop_rows)
    if multihop_summaries:
        print()
        print(public_eval.table(multihop_summaries, name="multi-hop set"))
    for name, rs in rows.items():
        for r in rs:
            for m in r["meta"]:
                print(f"about a source ({name}): {m}")
    every = [*rows.values(), *answer_rows.values(), *generated_rows.values(), public_rows, multihop_rows]
    changed = subject_check.total(every)
    print()
    print(subject_check.LINE.format(n=changed))
    for line in subject_check.shown(every):
        print(line)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "summary": summaries,
                    "rows": rows,
                    "answers": answer_summaries,
                    "answer_rows": answer_rows,
                    "generated": generated_summaries,
                    "generated_rows": generated_rows,
                    "public": public_summaries,
                    "public_rows": public_rows,
                    "multihop": multihop_summaries,
                    "multihop_rows": multihop_rows,
                    "changed_subjects": changed,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
