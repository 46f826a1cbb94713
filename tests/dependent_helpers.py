"""Plans and event readers shared by the tests of dependent outlines."""

from tests.deep_helpers import plan_for

# A, B -> C -> D: Purpose builds on Design and Construction, Legacy on Purpose
DEPENDS = [[], [], [0, "Construction"], ["Purpose"]]
Q_OF = {t: q for t, q in ((s["title"], s["key_question"]) for s in plan_for(4)["sections"])}


def dep_plan(depends=DEPENDS, n=4):
    plan = plan_for(n)
    plan["sections"] = [{**s, "depends_on": d} for s, d in zip(plan["sections"], depends)]
    return plan


def own_question(title: str) -> str:
    """What a section's own prompts carry (its question "<key question> (in: <report title>)");
    the findings it passes on name its key question without the "(in: " part."""
    return f"{Q_OF[title]} (in: "


def positions(events, kind):
    """{section index: position in the event list} of the events of `kind`."""
    return {e["index"]: n for n, e in enumerate(events) if e["type"] == kind}


def prompts_of(model, title):
    return [c["prompt"] for c in model.calls if f"Question: {own_question(title)}" in c["prompt"]]
