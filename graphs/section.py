"""One section of a deep report as a graph of its own: the iterative loop from the section's
brief to its cited draft (`iterative.build(section=True)`). A deep run with
`section_execution: server` sends each section to the server as a run of this graph
(deepresearch/sections/remote.py), so any worker takes it."""

from __future__ import annotations

from deepresearch.graphs import iterative

graph = iterative.build(section=True)
