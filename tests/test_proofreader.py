"""The proofreader's repetition pass (nodes.proofreader.dedupe) on a report with a table."""

from __future__ import annotations

from nodes.proofreader import dedupe

SAID = "The reading room was paid for through the Mara J. Orlen Trust in 1931"


def test_a_table_row_repeating_an_earlier_sentence_stays_whole():
    """A row is one unit: a full stop in a cell ("Mara J. Orlen") does not split it, and a cell
    saying again what the prose said costs the row neither its start nor itself (the table
    stays a table)."""
    plain = "The hall beside the reading room opened to readers in 1932"
    rows = [f"| a | {SAID}. [1] |", f"| b | {plain}. [2] |"]
    report = f"## Rooms\n\n{SAID} [1]. {plain} [2].\n\n## Comparison\n\n| x | y |\n|---|---|\n" + "\n".join(rows)
    out, dropped = dedupe(report)
    assert out.splitlines()[-2:] == rows and dropped == 0


def test_a_sentence_said_again_in_prose_is_still_dropped():
    said = "The reading room was paid for by the town council in 1931"
    report = f"## Rooms\n\n{said} [1].\n\n## More\n\nThe hall opened in 1932 [2]. {said} [3].\n"
    out, dropped = dedupe(report)
    assert dropped == 1 and out.count(said) == 1 and "[3]" in out.split("## More")[0]


def test_a_repeated_sentence_with_an_initial_is_dropped_whole():
    """Split at "Mara J." the repeat would leave "Orlen Trust in 1931 [2]." behind in the prose."""
    report = f"## Rooms\n\n{SAID} [1].\n\n## More\n\nThe hall opened in 1932 [3]. {SAID} [2].\n"
    out, dropped = dedupe(report)
    assert dropped == 1 and out.split("## More")[1].strip() == "The hall opened in 1932 [3]."
