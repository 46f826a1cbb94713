"""Model calls with budgets, pacing and structured outputs that survive weak servers.

`chat()` returns text, `structured()` returns a validated pydantic object. Both check the
budget before the call (BudgetExhausted when nothing fits), cap the completion to what is
left, go through the shared pacer, and count usage from the provider's `usage_metadata`
(a generous estimate only when a provider reports none).

Transient failures (429 honouring Retry-After, 5xx, timeouts, dropped connections) are
retried with exponential backoff and jitter (tenacity's wait), at most `max_retries` times
and never past the time budget.

Replies of OpenAI-compatible servers are streamed (deepresearch.llm.streaming) and read only
up to the completion cap and the call's deadline, whatever the server does. The cap is sent
under the names the server reads, and a reply cut at it is used when it parses or holds a
complete sentence (deepresearch.llm.compat); it counts in `usage.cut_replies` and costs the
tokens received (the provider's figures when the stream ended with them).
A call cut by the time budget's deadline is a budget stop (BudgetExhausted("max_seconds")),
never a provider failure.

Structured outputs try, in order, the methods the model supports:
  local model  -> JSON-schema-constrained decoding (llama.cpp grammar)
  ChatOpenAI   -> strict json_schema, then function calling, then json mode, then the
                  schema in the prompt only (servers that support none of them)
  other models -> JSON in the reply text
The JSON is read from the reply as small models write it (deepresearch.llm.structured: fenced,
with text around it, cut short, known wrong field names, near types). Each method gets one
retry with the validation error shown to the model. A server that rejects a method (HTTP
400/404/415/422, or a 5xx whose body is a validation error naming the request's field:
deepresearch.llm.compat) moves on to the next. The method that worked is remembered per model and
server for the rest of the process (a `model_mode` event says which, once, when it is not
the first). When all fail:
StructuredOutputError.

A reasoning model's reasoning (a `<think>` block, or the `reasoning_content` / `reasoning`
fields the transport folds into one) is taken off every reply before it is read
(deepresearch.llm.reasoning): it is counted in `usage` (`reasoning_tokens`, and in the output
tokens) but never parsed, returned, shown or stored. A text reply from a server's model that
is empty or only repeats the prompt is a failed call (deepresearch.llm.replies).
Transport failures (after the client's own retries) raise ModelCallError. Both carry only
redacted text: no key ever reaches a message, an event or a checkpoint.
"""

from __future__ import annotations

import json
import math
import threading
from typing import TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ValidationError

from deepresearch.config import Context
from deepresearch.events import emit
from deepresearch.llm import compat
from deepresearch.llm.budget import MIN_COMPLETION, Budget, BudgetExhausted, estimate_tokens
from deepresearch.llm.context_fit import fit as fit_window
from deepresearch.llm.models import LocalChatModel, get_model
from deepresearch.llm.reasoning import split as split_reasoning
from deepresearch.llm.replies import no_answer
from deepresearch.llm.retries import ModelCallError, StructuredOutputError, call_with_retries, describe
from deepresearch.llm.streaming import Reply, read_reply
from deepresearch.llm.structured import (  # noqa: F401 - re-exported
    field_guide,
    parse,
    parse_json_object,
    schema_forms,
    schema_instructions,
    strict_schema,
    validate,
)
from deepresearch.pacing import pacer

T = TypeVar("T", bound=BaseModel)


def model_for(ctx: Context):
    return get_model(ctx.model, base_url=ctx.base_url, timeout=ctx.request_timeout, max_retries=ctx.max_retries)


def _is_openai(model) -> bool:
    return type(model).__name__ in ("ChatOpenAI", "AzureChatOpenAI")


# Per model spec, the largest ratio seen of the provider's prompt-token count to our
# estimate: if a tokenizer ever counts more than the estimate, later estimates grow with it.
_calibration: dict[str, float] = {}


def _prompt_tokens(ctx, model, messages: list[BaseMessage]) -> int:
    if isinstance(model, LocalChatModel):
        return model.count_tokens(messages)
    estimate = sum(estimate_tokens(str(m.content)) + 4 for m in messages)
    return int(estimate * _calibration.get(ctx.model, 1.0)) + 1


def _calibrate(ctx, estimate: int, actual: int) -> None:
    if estimate > 0 and actual > estimate:
        _calibration[ctx.model] = max(_calibration.get(ctx.model, 1.0), actual / estimate * 1.1)


def _text(msg: BaseMessage) -> str:
    c = msg.content
    if isinstance(c, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in c)
    return str(c or "")


def _invoke(
    ctx,
    budget: Budget,
    messages,
    *,
    node,
    max_output,
    for_writer,
    runnable=None,
    extra_prompt: int = 0,
    need_full: bool = False,
    **kwargs,
) -> AIMessage:
    """One call. `extra_prompt`: tokens sent besides the messages (a tool or response schema);
    `need_full`: a reply cut short is useless (JSON), so a call that cannot get `max_output`
    tokens is not made."""
    budget.check_time(for_writer=for_writer)  # before making the model: that may take a while
    model = model_for(ctx)
    if ctx.context_window:  # the prompt and its cap fit the model's window (deepresearch.llm.context_fit)
        messages, max_output = fit_window(
            messages,
            window=ctx.context_window,
            max_output=max_output,
            count=lambda ms: _prompt_tokens(ctx, model, ms) + extra_prompt,
            need_full=need_full,
        )
    prompt = _prompt_tokens(ctx, model, messages) + extra_prompt
    cap = budget.reserve(prompt, max_output, for_writer=for_writer)
    cut_by_time = False
    if isinstance(model, LocalChatModel):  # it cannot be interrupted: its time is bounded by its length
        fits = model.tokens_within(budget.timeout(for_writer=for_writer), prompt)
        if fits is not None and fits < cap:
            budget.release(0, cap - max(fits, 0))  # keep holding only what the call may use
            cap = max(fits, 0)
            cut_by_time = True
            if cap < MIN_COMPLETION:
                budget.release(prompt, cap)
                raise BudgetExhausted("max_seconds")
    if need_full and cap < max_output:
        budget.release(prompt, cap)
        raise BudgetExhausted("max_seconds" if cut_by_time else "max_tokens")
    streamed = _is_openai(model)
    if not streamed:  # a streamed call's cap goes under the names its server reads (compat.request_kwargs)
        kwargs["max_tokens"] = cap
    attempts = {"n": 0}

    def call(timeout: float):
        attempts["n"] += 1
        if attempts["n"] > 1 and budget.tokens_left() < 0:  # a failed attempt's partial reply used the room
            raise BudgetExhausted("max_tokens")
        with pacer("model", ctx.model, ctx.model_concurrency, ctx.model_rpm).slot():
            timeout = min(timeout, budget.timeout(for_writer=for_writer))  # the slot may have waited
            try:
                if streamed:
                    try:
                        return read_reply(
                            runnable or model,
                            messages,
                            compat.request_kwargs(ctx, model, cap, kwargs),
                            cap=cap,
                            timeout=timeout,
                        )
                    except Exception as e:
                        if not compat.drop_refused(ctx, model, e):  # a field it refused: ask again without
                            raise
                        return read_reply(
                            runnable or model,
                            messages,
                            compat.request_kwargs(ctx, model, cap, kwargs),
                            cap=cap,
                            timeout=min(timeout, budget.timeout(for_writer=for_writer)),
                        )
                return (runnable or model).invoke(messages, **kwargs, timeout=timeout)
            except Exception as e:
                if received := getattr(e, "received", 0):  # part of a reply arrived: the provider billed it
                    budget.record(prompt, received)
                raise

    try:
        try:
            out = call_with_retries(ctx, budget, call, node=node, for_writer=for_writer)
        except BudgetExhausted:
            raise
        except Exception as e:  # noqa: BLE001 - every provider failure is contained here
            raise ModelCallError(node, describe(e), getattr(e, "status_code", None), compat.refused(e)) from None
        msg = out.message if isinstance(out, Reply) else out
        msg, reasoning = (msg, 0) if isinstance(model, LocalChatModel) else _without_reasoning(msg)
        usage = getattr(msg, "usage_metadata", None) or {}
        if isinstance(out, Reply) and out.cut:  # the caller uses what came if it can (chat, structured)
            budget.record(prompt, out.received, cut=True, reasoning=reasoning)
            msg.response_metadata["cut"] = compat.cap_ignored(ctx, cap, out.cut)
        elif usage.get("total_tokens"):
            budget.record(
                usage.get("input_tokens", 0),
                usage.get("output_tokens", 0),
                reasoning=reasoning,
                cached=(usage.get("input_token_details") or {}).get("cache_read", 0) or 0,
            )
            _calibrate(ctx, prompt, usage.get("input_tokens", 0))
        elif isinstance(out, Reply):  # streamed without usage figures: our count of what was read
            budget.record(prompt, out.received, reasoning=reasoning)
        else:  # the provider reported nothing: count a generous estimate so budgets still hold
            budget.record(prompt, estimate_tokens(_text(msg)) + reasoning, reasoning=reasoning)
    finally:
        budget.release(prompt, cap)  # after recording, so the tokens are never counted as free
    return msg


def _without_reasoning(msg: AIMessage) -> tuple[AIMessage, int]:
    """The reply without its reasoning (deepresearch.llm.reasoning), and the reasoning's tokens:
    the provider's figure when it gives one, else our count (4 bytes a token)."""
    reasoning, answer = split_reasoning(_text(msg))
    if reasoning is None:
        return msg, 0
    details = (getattr(msg, "usage_metadata", None) or {}).get("output_token_details") or {}
    n = details.get("reasoning") or math.ceil(len(f"<think>{reasoning}</think>".encode()) / 4)
    return msg.model_copy(update={"content": answer}), n


def chat(
    ctx: Context,
    budget: Budget,
    messages: list[BaseMessage],
    *,
    node: str,
    max_output: int = 600,
    for_writer: bool = False,
) -> str:
    """One text completion. From a server's model, an empty reply or one that only repeats the
    prompt is a failed call (ModelCallError), not content; so is a reply cut at its cap with
    no complete sentence (one with some is kept up to its last)."""
    msg = _invoke(ctx, budget, messages, node=node, max_output=max_output, for_writer=for_writer)
    text = _text(msg).strip()
    cut = msg.response_metadata.get("cut")
    if cut:
        text = compat.complete_part(text)
    if not isinstance(model_for(ctx), LocalChatModel):  # (the embedded model's path is unchanged)
        failed = no_answer(text, messages)
        if failed:  # the node reports it and falls back
            raise ModelCallError(node, f"{cut}; {failed}" if cut else failed)
    return text


SENDS_SCHEMA = ("json_schema", "function_calling")  # the schema travels in the request, not the messages


def _methods(model) -> list[str]:
    if isinstance(model, LocalChatModel):
        return ["grammar"]
    if _is_openai(model):  # "text": the schema in the prompt only, for servers that support none of the others
        return ["json_schema", "function_calling", "json_mode", "text"]
    return ["text"]


def _parse(method: str, msg: AIMessage, schema: type[T]) -> T:
    if method == "function_calling":
        calls = getattr(msg, "tool_calls", None) or []
        if not calls:
            raise ValueError("the reply made no tool call")
        return validate(calls[0]["args"], schema)
    if method == "grammar":  # the embedded model: constrained decoding, read as it always was
        return schema.model_validate(parse_json_object(_text(msg)))
    return parse(_text(msg), schema)


# Per model and server: the structured-output method that worked, tried first from then on
# (a server's support is discovered once per run, not on every call).
_mode: dict[tuple, str] = {}
_mode_lock = threading.Lock()


def _remember(ctx, method: str, note: str, first: str) -> None:
    """Keep `method` for this model and server; say so once when it is not the first choice
    (`first`): the server did not take the better ones."""
    key = (ctx.model, ctx.base_url)
    with _mode_lock:
        if _mode.get(key) == method:
            return
        _mode[key] = method
    if method != first:
        emit("model_mode", model=ctx.model, mode=method, note=note)


def structured(
    ctx: Context,
    budget: Budget,
    messages: list[BaseMessage],
    schema: type[T],
    *,
    node: str,
    max_output: int = 400,
    for_writer: bool = False,
) -> T:
    """One structured completion, validated against `schema`."""
    budget.check_time(for_writer=for_writer)
    model = model_for(ctx)
    forms = schema_forms(schema)
    schema_tokens = estimate_tokens(forms["plain"])
    last = "no attempt"
    methods = _methods(model)
    known = _mode.get((ctx.model, ctx.base_url))
    if known in methods:
        methods = methods[methods.index(known) :]
    for method in methods:
        guide = field_guide(schema) if method == "grammar" else schema_instructions(schema)
        base = list(messages) + [HumanMessage(content=guide)]
        kwargs: dict = {}
        runnable = None
        if method == "grammar":
            kwargs["response_format"] = {"type": "json_object", "schema": json.loads(forms["grammar"])}
        elif method == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": json.loads(forms["strict"]), "strict": True},
            }
        elif method == "json_mode":
            kwargs["response_format"] = {"type": "json_object"}
        elif method == "function_calling":
            runnable = model.bind_tools([schema], tool_choice=schema.__name__)
        if "response_format" in kwargs and _is_openai(model):
            # the same request body, but through the SDK's plain streaming call: given a
            # `response_format`, ChatOpenAI streams through the SDK's beta helper instead,
            # which builds and parses a snapshot of the whole reply at every chunk (we parse
            # the reply ourselves, once)
            kwargs["extra_body"] = {"response_format": kwargs.pop("response_format")}
        msgs = list(base)
        for _attempt in range(2):
            try:
                msg = _invoke(
                    ctx,
                    budget,
                    msgs,
                    node=node,
                    max_output=max_output,
                    for_writer=for_writer,
                    runnable=runnable,
                    extra_prompt=schema_tokens if method in SENDS_SCHEMA else 0,
                    need_full=True,
                    **kwargs,
                )
            except ModelCallError as e:
                if e.refused and method != methods[-1]:
                    last = f"{method} rejected by the server: {e.cause}"
                    break  # the server does not support this method: try the next one
                raise
            try:
                out = _parse(method, msg, schema)
            except (ValidationError, ValueError) as e:
                if msg.response_metadata.get("cut"):  # asked again, it would be cut again
                    raise ModelCallError(node, f"{msg.response_metadata['cut']}; {describe(e)}") from None
                last = f"{method}: {describe(e)}"
                shown = _text(msg) or json.dumps([c.get("args") for c in getattr(msg, "tool_calls", [])])
                msgs = msgs + [
                    AIMessage(content=shown[:1500]),
                    HumanMessage(
                        content=f"That reply was not valid ({str(e)[:300]}). Reply again with only the JSON object."
                    ),
                ]
                continue
            if len(_methods(model)) > 1:  # the way that works with this server, tried first from now on
                _remember(ctx, method, last if method != methods[0] else "", _methods(model)[0])
            return out
    raise StructuredOutputError(node, f"no valid structured output ({last})")
