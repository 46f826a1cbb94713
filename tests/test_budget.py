"""Budget accounting and model-call guards."""

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from deepresearch.config import Context
from deepresearch.llm import calls as llm
from deepresearch.llm.budget import MIN_COMPLETION, Budget, BudgetExhausted
from deepresearch.llm.models import register_model, unregister_model
from tests.fakes import ScriptedModel, count_tokens


def test_reserve_caps_the_completion_to_what_is_left():
    b = Budget(max_tokens=1000, max_seconds=100, max_iterations=3)
    b.record(500, 100)
    assert b.reserve(100, 5000, for_writer=True) == 300
    b.release(100, 300)
    with pytest.raises(BudgetExhausted) as e:
        b.reserve(400 - MIN_COMPLETION + 1, 100, for_writer=True)
    assert e.value.reason == "max_tokens"
    # the loop leaves the writer its share
    assert b.exhausted() == "max_tokens" and b.exhausted(for_writer=True) is None


def test_time_and_iterations_stop_the_loop():
    b = Budget(max_tokens=10**6, max_seconds=10, max_iterations=2, usage={"seconds": 9.5, "iterations": 0})
    assert b.exhausted() == "max_seconds"
    b = Budget(max_tokens=10**6, max_seconds=100, max_iterations=2, usage={"seconds": 0, "iterations": 2})
    assert b.exhausted() == "max_iterations"


def test_usage_from_the_provider_and_calibration_of_estimates():
    """Usage is the provider's own count; once a provider counts more than the estimate,
    later estimates cover what it counts: a call that would not fit is not made."""
    reply = AIMessage(content="hello", usage_metadata={"input_tokens": 5000, "output_tokens": 3, "total_tokens": 5003})
    fake = GenericFakeChatModel(messages=iter([reply, AIMessage(content="again"), AIMessage(content="third")]))
    register_model("calib-fake", fake)
    try:
        ctx = Context(model="calib-fake", max_tokens=100000)
        b = Budget.of(ctx, {})
        msgs = [HumanMessage(content="short prompt")]
        assert llm.chat(ctx, b, msgs, node="t") == "hello"
        assert b.usage["input_tokens"] == 5000 and b.usage["llm_calls"] == 1  # the provider's own figures
        # a reply with no usage: an estimate is counted, as large as the provider counted before
        assert llm.chat(ctx, b, msgs, node="t") == "again"
        assert b.usage["llm_calls"] == 2 and b.usage["input_tokens"] >= 5000 + 4000
        # the same short prompt with 4,000 tokens left (the writer's call: no share kept back):
        # it would cost about 5,000 again, so it is refused before the call is made
        tight = Budget(max_tokens=b.usage["total_tokens"] + 4000, max_seconds=100, max_iterations=3, usage=b.usage)
        with pytest.raises(BudgetExhausted) as e:
            llm.chat(ctx, tight, msgs, node="t", for_writer=True, max_output=200)
        assert e.value.reason == "max_tokens" and tight.held == 0
        assert next(fake.messages).content == "third"  # not consumed: no call was made
    finally:
        unregister_model("calib-fake")


def test_a_prompt_that_does_not_fit_is_never_sent():
    """The estimate before a call must cover what the provider will count: a prompt of about
    1,000 provider tokens (the fake counts four characters a token) with 1,000 tokens left
    is refused, not sent and charged past the limit."""
    model = ScriptedModel(respond=lambda kind, prompt, n: "a short reply")
    register_model("fits-fake", model)
    try:
        ctx = Context(model="fits-fake", max_tokens=1000)
        prompt = " ".join(f"word{i:04d}" for i in range(444))  # 3,995 characters
        assert 990 <= count_tokens(prompt) <= 1000
        b = Budget.of(ctx, {})
        with pytest.raises(BudgetExhausted) as e:
            llm.chat(ctx, b, [HumanMessage(content=prompt)], node="t", for_writer=True)
        assert e.value.reason == "max_tokens"
        assert model.calls == [] and b.usage["total_tokens"] == 0 and b.held == 0
        # half of it fits, with its completion capped to what is left
        b = Budget.of(ctx, {})
        llm.chat(ctx, b, [HumanMessage(content=prompt[:2000])], node="t", for_writer=True, max_output=600)
        assert len(model.calls) == 1 and b.usage["total_tokens"] <= 1000
        assert model.calls[0]["kwargs"]["max_tokens"] + count_tokens(prompt[:2000]) <= 1000
    finally:
        unregister_model("fits-fake")


def test_calls_in_flight_hold_their_reservation():
    b = Budget(max_tokens=1000, max_seconds=100, max_iterations=3)
    caps = [b.reserve(100, 400, for_writer=True) for _ in range(2)]  # two calls at once
    assert caps == [400, 400]
    with pytest.raises(BudgetExhausted) as e:
        b.reserve(100, 400, for_writer=True)  # nothing left while both are in flight
    assert e.value.reason == "max_tokens"
    b.record(100, 50)
    b.release(100, 400)
    assert b.reserve(100, 400, for_writer=True) == 250  # 1000 - 150 spent - 500 held - 100 prompt


def test_a_local_model_call_is_cut_to_the_time_left(monkeypatch):
    from deepresearch.llm.models import LocalChatModel, local_model_path

    model = LocalChatModel(model_path=str(local_model_path()))
    model._time(elapsed=5.0, prompt=0, completion=100)  # 0.05 s a token
    assert model.tokens_within(1.0, 0) == 16  # 0.8 x 1.0 / 0.05
    register_model("local-timed", model)
    try:
        ctx = Context(model="local-timed", max_tokens=10**6, max_seconds=100)
        b = Budget.of(ctx, {"usage": {"seconds": 97.0}})  # 2 s for the writer's call: about 32 tokens
        with pytest.raises(BudgetExhausted) as e:
            llm.chat(ctx, b, [HumanMessage(content="hi")], node="t", for_writer=True)
        assert e.value.reason == "max_seconds" and b.held == 0
    finally:
        unregister_model("local-timed")


def test_one_slow_local_call_does_not_refuse_the_later_ones():
    from deepresearch.llm.models import LocalChatModel, local_model_path

    model = LocalChatModel(model_path=str(local_model_path()))
    for _ in range(3):
        model._time(elapsed=1.0, prompt=0, completion=100)  # 0.01 s a token
    model._time(elapsed=100.0, prompt=0, completion=100)  # one call on a busy machine: 1 s a token
    assert model.tokens_within(1.0, 0) == 80  # still 0.8 x 1.0 / 0.01
    for _ in range(3):
        model._time(elapsed=100.0, prompt=0, completion=100)  # the machine stays slow
    assert model.tokens_within(1.0, 0) == 0


def test_a_slow_spell_is_forgotten_once_no_call_was_timed_for_a_while():
    import time

    from deepresearch.llm.models import LocalChatModel, local_model_path

    model = LocalChatModel(model_path=str(local_model_path()), speed_memory=0.0)
    for _ in range(5):
        model._time(elapsed=100.0, prompt=0, completion=100)  # every call slow: later ones refused ...
    timed = time.monotonic()
    while time.monotonic() == timed:
        pass
    assert model.tokens_within(1.0, 0) is None  # ... until the speeds are older than speed_memory
    model.speed_memory = 300.0
    assert model.tokens_within(1.0, 0) == 0
