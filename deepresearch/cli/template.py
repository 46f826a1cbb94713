"""`deepresearch template SAMPLE -o TEMPLATE.md`: a report template from a sample report;
`deepresearch template --list`: the report styles (`--style`), each a template of its own.

The sample is Markdown or HTML (by its extension, else by its content). HTML is turned into
Markdown by html2text; the Markdown's headings are read by markdown-it-py. The template keeps
the sample's `#` to `###` headings, in order, each with a one-line purpose taken from the
sample's text under it (its first sentence). No model is involved.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from deepresearch.cli.common import UsageError, _Parser, check_output
from deepresearch.files import FileReadError
from deepresearch.files import read_text as read_bounded
from deepresearch.text.safe import decode_entities, strip_bidi, strip_urls

MARKDOWN = (".md", ".markdown", ".mdown", ".mkd")
HTML = (".html", ".htm", ".xhtml")
MAX_SAMPLE_BYTES = 5_000_000
PURPOSE_CHARS = 160


def template_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="deepresearch template",
        description="Derive a report template (Markdown headings, each with what it covers) from a sample "
        "report in Markdown or HTML. Use it with --template.",
    )
    p.add_argument("sample", nargs="?", help="a sample report: .md or .html")
    p.add_argument("--list", action="store_true", help="list the report styles (--style): each a template of its own")
    p.add_argument("--output", "-o", metavar="FILE", help="write the template to FILE (default: stdout)")
    return p


def read_text(path: str, label: str) -> str:
    """A text file's contents; UsageError (one line) when it cannot be read as text."""
    target = Path(path).expanduser()
    label = f"{label} {path}" if label else path
    if not target.exists():
        raise UsageError(f"{label}: no such file")
    try:  # a regular file of at most 5 MB: a FIFO or a device is refused, never read to its end
        return read_bounded(target, MAX_SAMPLE_BYTES, encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"{label}: unknown format (not UTF-8 text; use Markdown or HTML)") from None
    except FileReadError as e:
        raise UsageError(f"{label}: cannot be read ({e.reason})") from None


def sample_format(path: str, text: str) -> str:
    """ "markdown" or "html"; UsageError for anything else."""
    ext = Path(path).suffix.lower()
    if ext in MARKDOWN:
        return "markdown"
    if ext in HTML:
        return "html"
    if ext in ("", ".txt"):
        if re.search(r"<(?:html|body|h[1-6])\b", text, re.IGNORECASE):
            return "html"
        if re.search(r"^#{1,3}\s+\S", text, re.MULTILINE):
            return "markdown"
    raise UsageError(f"{path}: unknown format; give a Markdown (.md) or HTML (.html) sample")


def to_markdown(html: str) -> str:
    import html2text

    h = html2text.HTML2Text()
    h.body_width = 0  # no wrapping: a heading stays on one line
    h.ignore_images = True
    h.ignore_links = True
    h.ignore_emphasis = True
    return h.handle(html)


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return ""
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    if len(sentence) > PURPOSE_CHARS:
        sentence = sentence[: PURPOSE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return sentence


def _plain(text: str, limit: int) -> str:
    """Sample text fit for one line of the template: no URL-like text (it would be a link in
    every report that uses the template), no bidirectional control, capped, with the
    characters that would make emphasis, links or HTML escaped."""
    text = " ".join(strip_urls(strip_bidi(decode_entities(text))).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return re.sub(r"([\\`*_\[\]<>|])", r"\\\1", text).rstrip("#").rstrip()


def derive(markdown: str) -> tuple[str, int]:
    """(template text, number of headings)."""
    from deepresearch.templates import MAX_TEMPLATE_SECTIONS, headings_of, parse_template

    heads = headings_of(markdown)
    if len(heads) > MAX_TEMPLATE_SECTIONS + 1:  # too many parts: keep the two upper levels
        heads = [h for h in heads if h["level"] < 3]
    heads = heads[: MAX_TEMPLATE_SECTIONS + 1]
    blocks = []
    for h in heads:
        said = first_sentence(h["text"])
        purpose = f"In the sample: {said}" if said else "In the sample: a heading for the parts below it."
        blocks.append(f"{'#' * h['level']} {_plain(h['title'], 100)}\n\n{_plain(purpose, PURPOSE_CHARS + 20)}")
    text = "\n\n".join(blocks) + "\n"
    parse_template(text)  # what `--template` will read: fails here rather than in a run
    return text, len(heads)


def cmd_template(argv: list[str]) -> int:
    from deepresearch.templates import TemplateError

    args = template_parser().parse_args(argv)
    if args.list:
        from deepresearch.choices.report_styles import list_text

        sys.stdout.write(list_text())
        return 0
    if not args.sample:
        raise UsageError("the following arguments are required: sample (or --list: the report styles)")
    check_output(args.output)
    text = read_text(args.sample, "")  # noqa: the sample's own path names it
    fmt = sample_format(args.sample, text)
    markdown = to_markdown(text) if fmt == "html" else text
    try:
        template, n = derive(markdown)
    except TemplateError:
        raise UsageError(
            f"{args.sample}: no headings found (the sample needs '#'..'###' headings"
            + (" or <h1>..<h3> elements)" if fmt == "html" else ")")
        ) from None
    if args.output:
        try:
            Path(args.output).expanduser().write_text(template, encoding="utf-8")
        except OSError as e:
            raise UsageError(f"--output {args.output}: cannot write ({e.strerror})") from None
        print(f"template with {n} heading(s) written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(template)
    return 0
