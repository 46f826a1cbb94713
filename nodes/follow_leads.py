"""`follow_leads`: what the retrieved texts lead to, added to the research's concepts.

- A question that reaches its subject through another thing ("the author of X") gets a bridge
  concept once X's text is retrieved (deepresearch.research.bridges): the name X's text gives for
  the relation (`analysis.hops`), researched like any other concept.
- A broad question (an overview, not a comparison) of a whole run gets its subject's related
  topics once the subject's own text is retrieved (deepresearch.research.explore): the things
  that text names that say most about the subject.

Runs before `knowledge_gap` in every round, so the gaps it judges include what the leads add.
No model call.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from deepresearch.config import Context, get_context
from deepresearch.embeddings.registry import embedder_of
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.events import emit
from deepresearch.research.bridges import bridges
from deepresearch.research.explore import explore
from deepresearch.research.leads import leads as next_leads
from deepresearch.state.iterative import IterativeState
from deepresearch.store import full_text, reads_texts_once
from deepresearch.understanding.linking import linking_backend
from deepresearch.understanding.reader import analysis_of


@reads_texts_once
def follow_leads(state: IterativeState, runtime: Runtime[Context] | None = None) -> IterativeState:
    if state.get("iteration", 0) == 0 or not state.get("evidence"):
        return {}  # nothing retrieved yet
    ctx = get_context(runtime)
    analysis = analysis_of(state)
    concepts = list(state.get("concepts") or [])
    backend = linking_backend(ctx)
    sim = similarity_for(embedder_of(ctx))
    # a role no sentence states is followed by description once a round has searched for it
    later = state.get("iteration", 0) >= 2
    leads = bridges(analysis, concepts, state.get("evidence", []), full_text, sim, backend, by_description=later)
    for b in leads:  # the question points through a retrieved thing at another: research that one too
        emit(
            "concepts",
            concepts=[b["name"]],
            linked=[b["title"]] if b.get("title") else [],
            origin="bridge",
            via=b["via"],
            sentence=b["sentence"],
            section=state.get("section"),
        )
    concepts += leads
    if not leads and state.get("unanswered"):
        # an asked thing no sentence answers: the thing named by the sentence that came closest
        found = next_leads(
            state["unanswered"], concepts, state.get("evidence", []), full_text, sim, backend, analysis.read
        )
        for c in found:
            emit(
                "concepts",
                concepts=[c["name"]],
                linked=[c["title"]],
                origin="lead",
                via=c["via"],
                sentence=c["sentence"],
                section=state.get("section"),
            )
        concepts += found
        leads += found
    if not state.get("section") and analysis.broad and not analysis.compared:
        related = explore(analysis.read, concepts, state.get("evidence", []), full_text, backend, sim)
        if related:  # an overview reads past the main article: the things it names
            concepts += related
            leads += related
            emit(
                "concepts",
                concepts=[c["name"] for c in related],
                linked=[c["title"] for c in related],
                origin="related",
                via=related[0]["via"],
                section=state.get("section"),
            )
    return {"concepts": concepts} if leads else {}
