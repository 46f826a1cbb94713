"""deepresearch: a deep-research workflow on LangGraph.

from deepresearch.graphs.iterative import build   # or deepresearch.graphs.deep
graph = build(checkpointer=InMemorySaver())
graph.invoke({"question": "..."}, context=Context(model="local"))
"""

from deepresearch.config import Context

__all__ = ["Context"]
__version__ = "0.1.0"
