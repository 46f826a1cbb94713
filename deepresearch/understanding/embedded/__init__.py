"""The embedded reading: the question's words read by rules and linked to the search backend's titles,
with no model."""
