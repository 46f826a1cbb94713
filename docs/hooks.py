"""MkDocs hook: a `|` inside a code span of a table cell is written `\\|` in the Markdown, as
GitHub needs it; Python-Markdown keeps the backslash in the code, so it is taken out here."""

from __future__ import annotations

import re

_CELL = re.compile(r"<t[dh]>.*?</t[dh]>", re.S)
_CODE = re.compile(r"<code>.*?</code>", re.S)


def on_page_content(html: str, **_) -> str:
    return _CELL.sub(lambda cell: _CODE.sub(lambda c: c.group(0).replace("\\|", "|"), cell.group(0)), html)
