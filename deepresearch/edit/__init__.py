"""Editing a finished report: the actions that need no model (`actions`) and one edit of a stored run (`session`)."""
