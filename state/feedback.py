"""State of the post-report editing loop (node `report_feedback`), shared by both graphs."""

from __future__ import annotations

from typing_extensions import TypedDict


class FeedbackState(TypedDict, total=False):
    editing: bool  # set by source_tracer (context `edit_after_report`) or `deepresearch edit`: report_feedback follows
    edits: int  # edits done (sync excluded), bounded by the context's max_edits
    chart_images: list[str]  # the report's chart images as written by `charts`: the only images a report keeps
    feedback_done: bool  # finished (or max_edits reached): the graph ends
    feedback_error: str | None  # why the last request was not used (shown with the next pause)
    last_change: dict | None  # the last edit: {action, start, end, new_end, ...}
    report_removed: list[dict]  # what the report's verification line counts as removed
