"""The state of either graph, for the nodes both graphs run (clarify, source_tracer, charts,
infer, report_feedback).

`GraphState` is a type variable restricted to the two graphs' states: the type checker checks
such a node once as a node of the iterative graph and once as one of the deep graph, and its
update has the type of the state it was given. LangGraph reads no input schema from a type
variable, so the node is handed its graph's whole state, as a node annotated with that state is.
"""

from __future__ import annotations

from typing import TypeVar

from deepresearch.state.deep import DeepState
from deepresearch.state.iterative import IterativeState

GraphState = TypeVar("GraphState", IterativeState, DeepState)
