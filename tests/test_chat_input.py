"""LangGraph's chat input for both graphs, in-process with fake chat models:
the last human message is the question, earlier messages join the brief, the report comes
back as an AI message, `{"question": ...}` keeps working on a thread that chatted, and a chat
turn already researched is not researched again."""

import uuid

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs import deep, iterative
from deepresearch.llm.budget import recursion_limit
from tests.clarify_helpers import prompts
from tests.deep_helpers import run_deep
from tests.fakes import researcher

Q = "Who built the Eiffel Tower, and for which event?"
EARLIER = "I am writing a school essay about Paris landmarks."


def setup(graph_module, fake_model, respond, **ctx):
    spec, model = fake_model(respond)
    c = Context(model=spec, max_iterations=2, **ctx)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": recursion_limit(c) + 20}
    return graph_module.build(checkpointer=InMemorySaver()), c, config, model


def chat(question, *earlier):
    return {"messages": [*earlier, {"role": "human", "content": question}]}


def test_iterative_chat_turns(fake_model):
    graph, ctx, config, model = setup(iterative, fake_model, researcher())
    final, _, asked = run_deep(
        graph, ctx, config, chat(Q, {"role": "human", "content": EARLIER}, {"role": "ai", "content": "Happy to help."})
    )
    assert asked == []
    assert final["question"] == Q
    assert final["brief"].startswith(Q) and EARLIER in final["brief"]  # the conversation is context
    writer = [p for p in prompts(model, "text") if "Write the report" in p]
    assert writer and EARLIER in writer[0]
    messages = final["messages"]
    assert [type(m) for m in messages] == [HumanMessage, AIMessage, HumanMessage, AIMessage]
    assert messages[-1].content == final["report"] and "[1]" in final["report"]

    # a plain question on the same thread: researched as asked, not the old chat message
    second = "How tall is the Eiffel Tower?"
    final2, _, _ = run_deep(graph, ctx, config, {"question": second})
    assert final2["question"] == second and final2["brief"] == second
    # a second chat turn: the earlier turn (with its report) is context
    third = "Who was Gustave Eiffel?"
    final3, _, _ = run_deep(graph, ctx, config, {"messages": [{"role": "human", "content": third}]})
    assert final3["question"] == third and EARLIER in final3["brief"]
    assert [type(m) for m in final3["messages"]][-2:] == [HumanMessage, AIMessage]
    assert len(final3["messages"]) == 7  # 4, the report of the plain question, the new turn and its report


def test_deep_chat_turn(fake_model):
    graph, ctx, config, model = setup(deep, fake_model, researcher(), max_sections=2, planner="concepts")
    final, _, _ = run_deep(graph, ctx, config, chat("Compare the Eiffel Tower and the Statue of Liberty"))
    assert final["question"] == "Compare the Eiffel Tower and the Statue of Liberty"
    assert final["report"] and isinstance(final["messages"][-1], AIMessage)
    assert final["messages"][-1].content == final["report"]


def test_no_question_and_no_message_is_refused(fake_model):
    graph, ctx, config, _ = setup(iterative, fake_model, researcher())
    try:
        run_deep(graph, ctx, config, {"messages": []})
    except ValueError as e:
        assert "question" in str(e).lower()
    else:
        raise AssertionError("an empty input was researched")


def test_a_chat_turn_ended_at_the_clarifying_questions_is_not_asked_again(fake_model):
    """The last message stays a human one when the person finished at the questions: a later
    `{"question": ...}` is researched as asked, not that message again."""
    from langgraph.types import Command

    from tests.clarify_helpers import clarifier

    graph, ctx, config, model = setup(iterative, fake_model, clarifier([["Which tower do you mean?"]]), clarify=True)
    _, _, asked = run_deep(graph, ctx, config, chat(Q))
    assert asked and asked[0]["type"] == "clarify"
    final, _, _ = run_deep(graph, ctx, config, Command(resume={"action": "finish"}))
    assert final["stopped_by"] == "cancelled" and isinstance(final["messages"][-1], HumanMessage)
    other = "How tall is the Eiffel Tower?"
    final2, _, asked2 = run_deep(graph, ctx, config, {"question": other}, answers=[{"action": "skip"}])
    assert asked2 and final2["question"] == other and final2["report"]
