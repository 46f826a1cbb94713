"""`infer`: the provenance of every report sentence (context `infer`, on by default).

(The node keeps the reference design's id, its provenance inference; it records provenance and
infers nothing new. The records are deepresearch.provenance.)

After `charts` (both graphs). No model call: from what the run kept, each sentence's chain
question -> concept or gap -> search -> source -> passage (deepresearch.provenance.chains),
the concepts and whether something covered them, the searches, and the sources retrieved but
not cited with why. Output `provenance`; `deepresearch provenance THREAD_ID` shows it as text, as
one HTML page (`--html FILE`) or as a Mermaid flowchart (`--mermaid`).
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from deepresearch.config import Context, get_context
from deepresearch.provenance.chains import build
from deepresearch.state.shared import GraphState
from deepresearch.store import reads_texts_once


@reads_texts_once
def infer(state: GraphState, runtime: Runtime[Context] | None = None) -> GraphState:
    if not get_context(runtime).infer or not state.get("report"):
        return {}
    return {"provenance": build(state)}
