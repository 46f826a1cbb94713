"""Research logic that is not a node: charts (charts, chart_render, chart_critique) and
provenance (provenance, provenance_view)."""
