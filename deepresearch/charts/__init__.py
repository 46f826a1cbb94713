"""Charts of a finished report's cited facts: found in its sentences, checked against their sources,
rendered with matplotlib, and (with a vision model) critiqued and redrawn."""
