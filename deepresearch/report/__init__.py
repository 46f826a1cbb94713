"""The report and its checks: sentences and words, citations and their support scores, grounding, evidence blocks, safe text, and tracing a draft into the checked report."""
