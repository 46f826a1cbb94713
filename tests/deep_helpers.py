"""Responders and drivers shared by the deep-graph tests."""

import re
import threading
import time

from langgraph.types import Command

from tests.fakes import first_sentence, sources_in

TOPICS = [
    ("Design", "Who designed the Eiffel Tower?"),
    ("Construction", "How was the Eiffel Tower built?"),
    ("Purpose", "Why was the Eiffel Tower built for the World's Fair?"),
    ("Legacy", "How is the Eiffel Tower seen today?"),
    ("Statue", "Who designed the Statue of Liberty?"),
    ("Bridges", "What bridges did Gustave Eiffel build?"),
]


def plan_for(n, title="The Eiffel Tower"):
    return {"title": title, "background": "A tower in Paris.",
            "sections": [{"title": t, "key_question": q} for t, q in TOPICS[:n]]}


def deep_responder(sections=3, fail_on=None, slow=None, plans=None, complete=True):
    """Plans `sections` sections (or the plans in `plans`, one per planner call), searches
    with the key question, judges complete, writes citing every source it was shown.
    `fail_on`: a key-question substring whose section's calls raise.
    `slow`: {substring: seconds} extra latency for matching prompts."""
    state = {"plans": 0}
    lock = threading.Lock()

    def respond(kind, prompt, n):
        if fail_on and fail_on in prompt:
            return ConnectionError("provider unreachable")
        for key, secs in (slow or {}).items():
            if key in prompt:
                time.sleep(secs)
        if kind == "ReportPlan":
            with lock:
                i = state["plans"]
                state["plans"] += 1
            if plans:
                return plans[min(i, len(plans) - 1)]
            return plan_for(sections)
        if kind == "KnowledgeGapOutput":
            return {"research_complete": complete, "outstanding_gaps": [] if complete else ["more detail on the Eiffel Tower"]}
        if kind == "AgentSelectionPlan":
            return {"tasks": [{"gap": "more", "tool": "wiki", "query": "Gustave Eiffel"}]}
        if kind == "Synthesis":
            return {"introduction": "This report looks at the tower [1].", "conclusion": "That is the story."}
        ids = sources_in(prompt)
        if "In two to four sentences" in prompt:
            return "Notes."
        # a writer that states what its sources say: each one's first sentence, cited
        return " ".join(f"{first_sentence(prompt, i)} [{i}]." for i in ids[:3]) or "Nothing."

    return respond


def run_deep(graph, ctx, config, inp, answers=()):
    """Stream a deep run, answering each outline interrupt with the next answer."""
    answers = list(answers)
    events, requests = [], []
    while True:
        for mode, chunk in graph.stream(inp, config, context=ctx, stream_mode=["custom", "values"]):
            if mode == "custom":
                events.append(chunk)
        snap = graph.get_state(config)
        if not snap.interrupts:
            return snap.values, events, requests
        requests.append(snap.interrupts[0].value)
        if not answers:
            return snap.values, events, requests
        inp = Command(resume=answers.pop(0))


def citations_resolve(final):
    ids = {s["id"] for s in final["sources"]}
    body = final["report"].split("## Sources")[0]
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    return bool(cited) and cited == ids
