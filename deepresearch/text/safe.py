"""Text from sources and models is data: what may reach the report, and how.

- `markup_free`: what a reader sees of text that may hold HTML (a question typed with tags).
- `title_line`: a title as one line of plain words (markup-like runs dropped, not escaped).
- `inline_text`: a source field (title, identifier, file path) fit for one line of
  Markdown: HTML entities decoded, control characters dropped, URL-like text removed,
  the characters that make links, emphasis or HTML escaped, length capped.
- `reference_kind`: which results may become sources: http(s) URLs with a host; the docs
  backend's `file:` references and MCP results' `mcp://` references (shown as text).
- `render_reference`: a source's reference in the Sources list: the URL of a web source
  (the only links of a report), the path of a file as a code span, an MCP reference as text.
- `defuse_body`: the model-written body of a report with no link, autolink, image, raw
  HTML or URL-like text left, case-insensitively and after HTML-entity decoding; a link to
  a retrieved source becomes a citation of it.
- `one_line`: text fit for one line of a terminal (the progress display); `echoed`: a value
  someone gave, cut, for an error line.
- `strip_bidi`: text without bidirectional controls (U+202E and kin), which reorder what a
  reader sees: every search result's title and text lose them as they arrive.
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote, unquote_to_bytes, urlsplit

# Bidirectional controls (overrides, embeddings, isolates, marks: Unicode's Bidi_Control): they
# reorder what a reader sees.
_BIDI = dict.fromkeys(map(ord, "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))
# Unicode category Cc is exactly U+0000-U+001F and U+007F-U+009F (fixed by Unicode's stability
# policy): one translate or regex pass instead of a category lookup per character
_CONTROL_TO_SPACE = {cp: " " for cp in [*range(0x20), *range(0x7F, 0xA0)]}
_CONTROL_BUT_LINE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # Cc but a newline or a tab

# Schemes a browser, a Markdown renderer or a reader takes for a link even without `//`
# (`https:evil.example` opens https://evil.example/ from an href)
LINK_SCHEMES = (
    "https?|s?ftps?|wss?|ssh|git|svn|ircs?|news|nntp|telnet|gopher|ldaps?|smb|nfs|rtsp|rtmp|"
    "webcal|feed|magnet|xmpp|sips?|callto|skype|facetime|ipfs|ipns|intent|view-source|jar|"
    "javascript|vbscript|livescript|data|file|mailto|blob|about|tel|sms"
)

# URL-like text, in every form a renderer may turn into a link (matched case-insensitively)
URL_LIKE = re.compile(
    r"""(?ix)
    (?:\b[a-z][a-z0-9+.\-]{0,30}:\\?/\\?/[^\s<>"'`]*)                  # scheme://… (http, ftp, file, HTTPS…)
    | (?:\b(?:"""
    + LINK_SCHEMES
    + r"""):[^\s<>"'`]+)                    # a link's scheme:… without //
    | (?:\b[a-z][a-z0-9+.\-]{1,30}:(?:[a-z0-9\-]+\.)+[a-z]{2,}\b[^\s<>"'`]*)  # any scheme:host.tld…
    | (?:(?<![\w/:\\])//[a-z0-9\-]+(?:\.[a-z0-9\-]+)+[^\s<>"'`]*)     # //host… (protocol-relative)
    | (?:\bwww\.[a-z0-9\-]+(?:\.[a-z0-9\-]+)*[^\s<>"'`]*)              # www.host…
    | (?:\b(?:[a-z0-9\-]+\.)+[a-z]{2,}(?::\d+)?/[^\s<>"'`]*)          # host.tld/path
    | (?:\b[\w.+\-]+@[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.[a-z]{2,}\b)       # e-mail (an autolink)
    """
)
_TRAILING = ".,;:!?)]}>'\"*_~\\"


def strip_bidi(text: str) -> str:
    """`text` without bidirectional controls."""
    return text.translate(_BIDI)


def decode_entities(text: str) -> str:
    """`text` with HTML entities decoded until none is left (`&amp;#58;` is `:` too)."""
    while True:  # each round that decodes something makes the text shorter
        decoded = html.unescape(text)
        if decoded == text:
            return text
        text = decoded


def _printable(text: str) -> str:
    """Control characters (newlines included) become spaces; bidi overrides go; lone
    surrogates (a file name that is not UTF-8) are shown as `\\xNN`."""
    if any("\ud800" <= c <= "\udfff" for c in text):
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "surrogatepass")
        text = raw.decode("utf-8", "backslashreplace")
    return text.translate(_BIDI).translate(_CONTROL_TO_SPACE)


def one_line(text, limit: int = 200) -> str:
    """Text fit for one terminal line: no control characters, whitespace collapsed, capped."""
    text = " ".join(_printable(str(text)).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def echoed(value, limit: int = 80) -> str:
    """A value someone gave, fit to quote in a one-line error: on one line, cut to `limit`
    characters with an ellipsis, quoted (`repr`). An error never echoes a long value whole."""
    return repr(one_line(str(value), limit))


# What every alternative of URL_LIKE needs: a ':' (a scheme), a '/' (//host, host.tld/path),
# an '@' (an e-mail) or 'www.' (in any case). A text with none of them holds no match, and this
# search costs a twentieth of URL_LIKE's.
_URL_MARK = re.compile(r"[:/@]|www\.", re.IGNORECASE)


def strip_urls(text: str, replacement: str = "(link removed)") -> str:
    def sub(m: re.Match) -> str:
        url = m.group(0).rstrip(_TRAILING)
        return replacement + m.group(0)[len(url) :]

    return URL_LIKE.sub(sub, text) if _URL_MARK.search(text) else text


_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]>|])")


def inline_text(text, limit: int = 200) -> str:
    """A source field for one line of Markdown: no link, no URL, no HTML, no line break."""
    text = one_line(decode_entities(str(text)), 10 * limit)
    text = " ".join(strip_urls(text).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return _escape(text)


# Markup-like runs of a title: a link or image (its words stay), what is left of one whose URL
# was removed, `[n]` list entries and citations, heading and quote marks, HTML tags,
# emphasis and table marks, brackets
_TITLE_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^()]*\)")
_TITLE_RUNS = re.compile(r"\[\s*\d[\d,;\s\-–]*\]|<[^<>]*>|\(\s*\)|#+|[\[\]<>*`|~^]")
_TITLE_EDGES = " \t-–—:;,|"


def title_line(text, limit: int = 200) -> str:
    """A title (a search result's, a file's name) as one line of plain words: entities
    decoded, control characters and URL-like text gone, markup-like runs dropped (not
    escaped: an escaped `## Sources [1] Fake` still reads as a Sources list), capped at
    `limit` characters. The caller escapes it for its format."""
    text = one_line(decode_entities(str(text)), 10 * limit)
    text = strip_urls(text, "")
    text = _TITLE_LINK.sub(r"\1", text)
    text = " ".join(_TITLE_RUNS.sub(" ", text).split())
    text = re.sub(r"\s+([.,;:!?])", r"\1", text).strip(_TITLE_EDGES)
    text = re.sub(r"([-–—])(\s+[-–—])+", r"\1", text)  # dashes left between removed runs
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


_SCRIPT = re.compile(r"(?is)<(script|style)\b[^>]*>.*?(?:</\1\s*>|$)")
_TAG = re.compile(r"</?[a-z][^<>]*>|<!--.*?-->", re.IGNORECASE | re.DOTALL)


def markup_free(text: str) -> str:
    """What a reader of `text` sees of it: HTML tags (and the contents of script and style
    elements) dropped, entities decoded. `3 < 5` is no tag and stays."""
    return " ".join(_TAG.sub(" ", _SCRIPT.sub(" ", decode_entities(str(text)))).split())


def _escape(text: str) -> str:
    """Markdown's specials escaped; `<` as `&lt;`, so no tag or autolink can start."""
    return _INLINE_SPECIAL.sub(r"\\\1", text).replace("<", "&lt;")


# --- references ------------------------------------------------------------------------

# Whitespace (what str.isspace() calls so: sre's \s is the same test) or a control character
# (Unicode category Cc is exactly U+0000-U+001F and U+007F-U+009F).
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


def web_url(url: str) -> bool:
    """An http(s) URL with a host: the only kind of source a report links to."""
    try:
        text = str(url).strip()
        parts = urlsplit(text)
        return (
            parts.scheme.lower() in ("http", "https")
            and bool(parts.hostname)
            and _SPACE_OR_CONTROL.search(text) is None
        )
    except ValueError:
        return False


def reference_kind(url: str, backend: str | None = None) -> str | None:
    """ "web", "file" (the docs backend's files), "mcp" (an MCP result without a URL), or
    None: a result with any other URL (javascript:, data:, ftp:, no host…) is no source."""
    if web_url(url):
        return "web"
    low = str(url).lower()
    if backend == "docs" and low.startswith("file:///"):
        return "file"
    if backend and "/" in backend and low.startswith("mcp://"):
        return "mcp"
    return None


def file_path(url: str) -> str:
    """The path of a `file:` reference, undone losslessly (bytes that are not UTF-8 come
    back as surrogate escapes, as Python names such files)."""
    return unquote_to_bytes(urlsplit(url).path).decode("utf-8", "surrogateescape")


def display_path(path: str) -> str:
    """A file name fit to show: bytes that are not UTF-8 as `\\xNN`, control characters as spaces."""
    return _printable(str(path))


_BACKTICKS = re.compile(r"`+")


def code_span(text: str) -> str:
    """`text` (one line) as a Markdown code span, shown as it is whatever it holds (no link, no
    emphasis, no HTML inside one): fenced by more backticks than any run of them inside, padded
    with a space when it starts or ends with a backtick or a space."""
    fence = "`" * (max((len(m) for m in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_MCP_REF = re.compile(r"mcp://[A-Za-z0-9_.~%\-]+/[A-Za-z0-9_.~%\-]+/[0-9a-f]+")
_URL_UNSAFE = re.compile(r"[\s<>\"`\[\]\\{}|^\x00-\x1f\x7f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")  # bidi too


def web_form(url: str) -> str:
    """The one form of a web URL that every output carries (the report, `sources`, provenance,
    the page, the exports): the characters that could break out of a line or into Markdown,
    or reorder what a reader sees (bidirectional controls), percent-encoded. A search result's
    URL takes this form as it arrives (tools/base.py); it is the same URL to a browser."""
    return _URL_UNSAFE.sub(lambda m: quote(m.group(0), safe=""), str(url).strip())


def render_reference(url: str, kind: str | None = None) -> str:
    """A source's reference for the Sources list: a web URL in its one form (`web_form`),
    else plain, escaped text."""
    kind = kind or reference_kind(
        url,
        "docs" if str(url).lower().startswith("file:") else "mcp/x" if str(url).lower().startswith("mcp:") else None,
    )
    if kind == "web":
        return web_form(url)
    if kind == "file":  # the real path, as inert text (never rewritten: deepresearch.report.documents)
        return "file " + code_span(display_path(file_path(url)))
    if kind == "mcp":
        # tools.mcp_results builds it from quoted names and a hash: nothing in it is Markdown
        return url if _MCP_REF.fullmatch(url) else _escape(one_line(url, 300))
    return "(no link)"


# --- the report body -------------------------------------------------------------------

_DEST = r"(?:<[^<>\n]*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))*)"
_TITLE = r"""(?:\s+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?"""
_LABEL = r"(?:[^\[\]]|\[[^\[\]]*\])*"  # one level of nested brackets
IMAGE = re.compile(rf"!\[{_LABEL}\](?:\(\s*{_DEST}{_TITLE}\s*\)|\[[^\[\]]*\])")
LINK = re.compile(rf"(?<!\\)\[({_LABEL})\]\(\s*({_DEST}){_TITLE}\s*\)")
REF_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*\S.*$", re.MULTILINE)
REF_LINK = re.compile(r"(?<!\\)\[([^\[\]\n]+)\]\[[^\[\]\n]*\]")
CITATION_RUN = re.compile(r"\[\d{1,4}(?:[,;] ?\d{1,4})*\]\[\d{1,4}(?:[,;] ?\d{1,4})*\]")
HTML_TAG = re.compile(r"<")


def defuse_body(body: str, id_of_url: dict[str, int], normalize, keep_images=()) -> tuple[str, list[dict]]:
    """`body` with no image, link, autolink, raw HTML or URL-like text. A link to a retrieved
    source keeps its text and cites the source (`text [n]`); a bare retrieved URL becomes
    `[n]`; anything else is removed and listed in the returned records. `keep_images`: the
    report's own chart images, exactly as the `charts` node wrote them (nodes/charts.py): the
    only images kept."""
    removed: list[dict] = []
    kept: list[str] = []
    keep = set(keep_images)

    def record(value: str, reason: str = "not a retrieved source") -> None:
        removed.append({"kind": "url", "value": one_line(value, 300), "reason": reason})

    def cite_of(dest: str) -> int | None:
        dest = dest.strip().strip("<>")
        return id_of_url.get(normalize(dest)) if web_url(dest) else None

    text = decode_entities(body)
    text = _CONTROL_BUT_LINE.sub(" ", text.translate(_BIDI))
    text = re.sub(r"\\([:/.@])", r"\1", text)  # `http\://…` renders as `http://…`

    def image(m: re.Match) -> str:
        if m.group(0) in keep:  # held aside until the end: no later pass may touch it
            kept.append(m.group(0))
            return f"\ue000{len(kept) - 1}\ue001"
        record(m.group(0), "image removed")
        return ""

    text = IMAGE.sub(image, text)

    def link(m: re.Match) -> str:
        label, dest = m.group(1).strip(), m.group(2)
        n = cite_of(dest)
        if n is None:
            record(dest)
            return label if not label.isdigit() else ""
        return f"[{n}]" if label.isdigit() or not label else f"{label} [{n}]"

    text = LINK.sub(link, text)

    def definition(m: re.Match) -> str:
        record(m.group(0), "link definition removed")
        return ""

    text = REF_DEFINITION.sub(definition, text)
    # a reference link's text stays; a run of citations ("[1][3]") is no reference link
    text = REF_LINK.sub(lambda m: m.group(0) if CITATION_RUN.fullmatch(m.group(0)) else m.group(1), text)

    def bare(m: re.Match) -> str:
        found = m.group(0)
        url = found.rstrip(_TRAILING)
        tail = found[len(url) :]
        n = cite_of(url)
        if n is not None:
            return f"[{n}]{tail}"
        record(url)
        return "[link removed]" + tail

    text = URL_LIKE.sub(bare, text)
    text = HTML_TAG.sub("&lt;", text)  # raw HTML (and autolinks' brackets) shows as text
    text = re.sub("\ue000(\\d+)\ue001", lambda m: kept[int(m.group(1))], text)
    return text, removed


def quote_text(text: str) -> str:
    """A retrieved (or model-written) sentence as Markdown body text: its words as they stand, the
    characters that would make emphasis, code, a link, a citation (`[3]`), HTML or a table cell
    escaped, so a quoted "Sagittarius A*" or "group,[note 1]" reads as written."""
    return re.sub(r"([\\`*_\[\]<>|])", r"\\\1", text)


def md_text(text: str, limit: int = 200) -> str:
    """Retrieved or model text fit for one line of Markdown: one line, capped, with the
    characters that make links, emphasis, headings or HTML escaped."""
    text = " ".join(str(text).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    # `(` `)` `{` `}` `!` make nothing once `[` and `]` are escaped: left as they are, so no `\(`
    # shows where the Markdown is read as text (the Markdown export, a copy)
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", text)
