"""An MCP tool's answer as search results.

Structured content holding records (`title`, `url`, `text`…) gives one result per record;
otherwise each text block is one result (a JSON text of records is read as records). A
result keeps the http(s) URL it gives; without one it gets a stable reference,
`mcp://server/tool/<hash of its text>`, which the report shows as text, never as a link.
"""

from __future__ import annotations

import hashlib
import json
import re
from urllib.parse import quote

from deepresearch.tools.base import SearchResult

_URL = re.compile(r"https?://[^\s<>\"'\])]+")

TEXT_KEYS = ("text", "content", "snippet", "abstract", "summary", "body", "description")
URL_KEYS = ("url", "link", "uri", "href")


def reference(server: str, tool: str, text: str) -> str:
    """A stable reference for a result that gives no URL (shown as text, never a link)."""
    digest = hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]
    return f"mcp://{quote(server, safe='')}/{quote(tool, safe='')}/{digest}"


def _records(value) -> list[dict] | None:
    """A list of result records found in a structured value, if it holds one: under a key that says
    so ("results", "items", …), else the first list of records it holds (a knowledge graph's
    "entities"). An empty list is no records."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return value
    if isinstance(value, dict):
        if any(k in value for k in TEXT_KEYS) and any(k in value for k in ("title", *URL_KEYS)):
            return [value]
        for k in ("results", "result", "items", "documents", "hits", "data"):
            found = _records(value.get(k))
            if found:
                return found
        for v in value.values():
            if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                return v
    return None


def _empty(value) -> bool:
    """A structured answer that holds no text at all ({"entities": [], "relations": []})."""
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, dict):
        return all(_empty(v) for v in value.values())
    if isinstance(value, list):
        return all(_empty(v) for v in value)
    return value is None


def _prose(rec: dict) -> str:
    """A record without a text field as sentences: each string it holds (a list's too: a knowledge
    graph's "observations"), ended with a full stop where it has none."""
    lines: list[str] = []
    for key, value in rec.items():
        if key in ("title", "name", *URL_KEYS, "type", "entityType"):
            continue
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and v.strip():
                v = " ".join(v.split())
                lines.append(v if v[-1] in ".!?" else v + ".")
    return " ".join(lines)


def _title_of(text: str) -> str:
    first = next((line.strip().lstrip("#").strip() for line in text.splitlines() if line.strip()), "")
    return (first[:117] + "…") if len(first) > 120 else first


def _from_record(server: str, tool: str, rec: dict, backend: str) -> SearchResult | None:
    text = next(
        (str(rec[k]) for k in TEXT_KEYS if isinstance(rec.get(k), (str, int, float)) and str(rec[k]).strip()), ""
    )
    if not text:
        text = _prose(rec) or json.dumps(rec, ensure_ascii=False)[:4000]
    url = next(
        (str(rec[k]) for k in URL_KEYS if isinstance(rec.get(k), str) and rec[k].startswith(("http://", "https://"))),
        None,
    )
    title = str(rec.get("title") or rec.get("name") or "").strip() or _title_of(text)
    return SearchResult(title=title[:200] or tool, url=url or reference(server, tool, text), text=text, backend=backend)


def _from_text(server: str, tool: str, text: str, backend: str) -> list[SearchResult]:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if value is not None and _empty(value):  # nothing found, said as JSON
        return []
    records = _records(value) if value is not None else None
    if records:
        return [r for r in (_from_record(server, tool, rec, backend) for rec in records) if r]
    m = _URL.search(text)
    url = m.group(0).rstrip(".,;:") if m else reference(server, tool, text)
    return [SearchResult(title=_title_of(text) or tool, url=url, text=text, backend=backend)]


def to_results(server: str, tool: str, content, artifact, k: int) -> list[SearchResult]:
    """An MCP tool's answer (LangChain content blocks and the structured-content artifact)
    as search results: structured records when there are some, else one per text block."""
    backend = f"{server}/{tool}"
    structured = artifact.get("structured_content") if isinstance(artifact, dict) else None
    records = _records(structured)
    if records:
        out = [r for r in (_from_record(server, tool, rec, backend) for rec in records) if r]
    else:
        blocks = [content] if isinstance(content, str) else content if isinstance(content, list) else []
        texts = [
            b if isinstance(b, str) else b.get("text", "")
            for b in blocks
            if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
        ]
        out = [r for t in texts if t.strip() for r in _from_text(server, tool, t.strip(), backend)]
    return out[:k]
