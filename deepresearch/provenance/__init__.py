"""Provenance: for each sentence of a report, the chain that produced it (question, concept or gap,
search, source, passage, verdict), as data and as views a person can follow."""
