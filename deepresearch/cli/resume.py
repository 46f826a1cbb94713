"""`deepresearch resume THREAD_ID`: continue an interrupted, crashed or waiting run."""

from __future__ import annotations

import argparse
import json
import os

from deepresearch.cli.common import (
    _CURRENT,
    UsageError,
    _output_options,
    _Parser,
    _review_callback,
    _thread_meta,
    check_output,
    check_text,
    finish,
)
from deepresearch.text.safe import echoed

ACTIONS = {"outline_review": ("accept", "revise", "replace"), "clarify": ("answer", "skip", "finish")}
WAITING = {"outline_review": "an outline review", "clarify": "answers to clarifying questions"}


def resume_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="deepresearch resume", description="Continue a run from its last checkpoint.")
    p.add_argument("thread_id")
    p.add_argument(
        "--answer",
        metavar="JSON",
        help='answer a waiting outline review, e.g. \'{"action": "accept"}\', '
        'or clarifying questions, e.g. \'{"action": "answer", "answers": "..."}\'',
    )
    _output_options(p)
    return p


MAX_ANSWER_DEPTH = 16  # an outline replacement is 5 levels deep


def _depth(value) -> int:
    """How deeply lists and objects nest in a parsed JSON value (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, d)
            if d <= MAX_ANSWER_DEPTH:
                stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def _stored_int(digits: str) -> int | str:
    """An integer of the answer as the checkpoint can store it (64 bits, as msgpack packs
    them); a larger one is kept as its digits, a string: no answer means it as a number, and
    where it is one (an outline's `depends_on`) it names no section and is dropped with a
    `dependency_dropped` event. Past Python's digits limit, int() raises ValueError."""
    value = int(digits)
    return value if -(2**63) <= value < 2**64 else digits


def parse_json_answer(text: str):
    """`--answer`'s JSON; UsageError (one line) for anything the parser or the checkpoint could
    not take: malformed JSON, an integer past Python's digits limit (ValueError), nesting past
    the parser's stack (RecursionError) or deeper than an answer ever is. Integers past 64
    bits are kept as strings (see _stored_int)."""
    try:
        value = json.loads(text, parse_int=_stored_int)
    except json.JSONDecodeError as e:
        raise UsageError(f"--answer is not valid JSON: {e.msg} at character {e.pos}") from None
    except RecursionError:
        raise UsageError(f"--answer is nested too deeply (an answer is at most {MAX_ANSWER_DEPTH} levels)") from None
    except ValueError:
        raise UsageError("--answer holds a number with too many digits") from None
    if _depth(value) > MAX_ANSWER_DEPTH:
        raise UsageError(f"--answer is nested too deeply (an answer is at most {MAX_ANSWER_DEPTH} levels)")
    return value


def check_settings(ctx) -> None:
    """A resumed run's model and search still work here (keys come from the environment)."""
    from deepresearch.llm.models import ModelConfigError, check_model_spec
    from deepresearch.tools import check_search_spec

    try:
        check_model_spec(ctx.model)
        from deepresearch.choices.servers import provider_of
        from deepresearch.llm.providers import check_served

        if provider_of(ctx.model):  # the local server still serves the model
            check_served(ctx.model, ctx.base_url)
        check_search_spec(ctx.search)
        if ctx.search == "tavily" and not os.environ.get("TAVILY_API_KEY"):
            raise ValueError("search 'tavily' needs TAVILY_API_KEY in the environment (or a .env file)")
    except (ModelConfigError, ValueError) as e:
        raise UsageError(f"cannot resume: {e}") from None


def check_answer(answer: dict, snapshot, thread_id: str) -> None:
    """An answer the review would not use (a replacement outline without sections…) is bad
    input: exit 2, and the review stays waiting at the same round."""
    from deepresearch.sections.tasks import parse_review_answer

    _action, _payload, error = parse_review_answer(answer)
    if error:
        request = snapshot.interrupts[0].value or {}
        raise UsageError(
            f"--answer not used: {error}; thread {thread_id} is still waiting for an outline "
            f"review (round {request.get('round')}/{request.get('max_rounds')})"
        )


def stored_run(meta: dict, thread_id: str):
    """(context, mode, question) of a checkpointed run, from its stored settings."""
    from deepresearch.config import CONTEXT_FIELDS, Context

    try:
        stored = json.loads(meta["dr_context"])
        ctx = Context(**{k: v for k, v in stored.items() if k in CONTEXT_FIELDS})
        return ctx, meta["dr_mode"], meta.get("dr_question", "")
    except (ValueError, TypeError, KeyError) as e:
        raise UsageError(f"thread {thread_id}: its stored settings cannot be read ({e})") from None


def cmd_resume(argv: list[str]) -> int:
    from langgraph.types import Command

    from deepresearch.cli.progress import Progress
    from deepresearch.runtime.checkpoint import default_db, open_checkpointer, open_store, sqlite_exists
    from deepresearch.runtime.runner import (
        answer_reviews,
        answer_saved,
        build_graph,
        drive,
        provider_failure,
        result_of,
        run_config,
    )
    from deepresearch.runtime.thread_lock import thread_lock

    args = resume_parser().parse_args(argv)
    check_text("the thread id", args.thread_id, one_line=True)
    check_text("--answer", args.answer)
    check_output(args.output)
    answer = None
    if args.answer is not None:
        answer = parse_json_answer(args.answer)
        if not isinstance(answer, dict) or answer.get("action") not in ACTIONS["outline_review"] + ACTIONS["clarify"]:
            raise UsageError(
                '--answer must be an object with "action": "accept", "revise" or "replace" (outline '
                'review), or "answer", "skip" or "finish" (clarifying questions)'
            )
    db = args.db or default_db()
    if not sqlite_exists(db):  # say so, and create nothing there
        raise UsageError(f"no such database: {db}" + ("" if args.db else " (no run was checkpointed yet)"))
    # one command at a time changes a thread: a resume waits for an edit in progress (which
    # would otherwise be made twice) or another resume of it, then goes on from where it left
    with (
        open_checkpointer(db) as saver,
        open_store(db) as store,
        Progress(quiet=args.quiet) as progress,
        thread_lock(
            db,
            args.thread_id,
            on_wait=lambda: progress.notice(
                f"thread {args.thread_id} is being changed by another command; waiting for it to finish"
            ),
        ),
    ):
        meta = _thread_meta(saver, args.thread_id)
        if meta is None:
            raise UsageError(f"unknown thread id {echoed(args.thread_id)} (see 'deepresearch threads')")
        _CURRENT.update(thread_id=args.thread_id, db=args.db)
        ctx, mode, question = stored_run(meta, args.thread_id)
        check_settings(ctx)  # keys are read again from the environment: say now if one is missing
        graph = build_graph(mode, saver, store)
        config = run_config(args.thread_id, ctx, mode, question)
        config["metadata"] = {k: v for k, v in meta.items() if k.startswith("dr_")}
        snapshot = graph.get_state(config)
        on_review = _review_callback(progress)  # a terminal or piped answers; end of input leaves it waiting
        start = None
        editing = snapshot.interrupts and snapshot.interrupts[0].value.get("type") == "report_feedback"
        if editing and answer is None and answer_saved(graph, config):  # an edit cut off by a crash: do it
            progress.notice(f"resuming thread {args.thread_id}: finishing the edit it was making")
            final = drive(graph, None, config, ctx, on_event=progress, on_review=on_review)
            return finish(result_of(final, question=question, mode=mode, thread_id=args.thread_id), args, progress)
        if editing:
            if answer is not None:
                raise UsageError(
                    f"thread {args.thread_id} has its report and is open for edits; edit it with "
                    f"'deepresearch edit {args.thread_id} ACTION', not --answer"
                )
            return finish(
                result_of(
                    {**snapshot.values, "waiting": [i.value for i in snapshot.interrupts]},
                    question=question,
                    mode=mode,
                    thread_id=args.thread_id,
                ),
                args,
                progress,
            )
        if snapshot.interrupts:
            kind = snapshot.interrupts[0].value.get("type", "outline_review")
            if answer is not None and answer["action"] not in ACTIONS.get(kind, ()):
                raise UsageError(
                    f"thread {args.thread_id} is waiting for {WAITING[kind]}; --answer's action must be "
                    + " or ".join(f'"{a}"' for a in ACTIONS[kind])
                )
            if answer is not None:
                if kind == "outline_review":  # an unusable outline answer uses no review round
                    check_answer(answer, snapshot, args.thread_id)
                inp: Command | None = Command(resume={i.id: answer for i in snapshot.interrupts})
            else:
                inp = answer_reviews(snapshot, on_review)
                if inp is None:
                    return finish(
                        result_of(
                            {**snapshot.values, "waiting": [i.value for i in snapshot.interrupts]},
                            question=question,
                            mode=mode,
                            thread_id=args.thread_id,
                        ),
                        args,
                        progress,
                    )
            progress.notice(f"resuming thread {args.thread_id} with the answer")
        elif answer is not None:
            raise UsageError(
                f"thread {args.thread_id} is not waiting for an outline review or clarifying answers; drop --answer"
            )
        elif not snapshot.tasks and provider_failure(snapshot.values):
            # it ended with no model call answered (a wrong key, a server down): run it again
            # from its first checkpoint, with the keys now in the environment
            inp, start = None, list(graph.get_state_history(config))[-1].config
            progress.notice(f"thread {args.thread_id} ended without any model reply; researching it again")
        elif not snapshot.tasks:
            # finished. (Not `not snapshot.next`: `next` leaves out tasks whose writes were
            # saved, so a run stopped after a step's writes but before its checkpoint has
            # an empty `next` and still work to do.)
            progress.notice(f"thread {args.thread_id} had already finished")
            return finish(
                result_of(snapshot.values, question=question, mode=mode, thread_id=args.thread_id), args, progress
            )
        else:
            inp = None
            at = sorted(set(snapshot.next)) or sorted({t.name for t in snapshot.tasks})
            progress.notice(f"resuming thread {args.thread_id} at {', '.join(at)}")
        final = drive(graph, inp, config, ctx, on_event=progress, on_review=on_review, start=start)
        return finish(result_of(final, question=question, mode=mode, thread_id=args.thread_id), args, progress)
