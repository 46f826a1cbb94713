"""Exports of a finished report: Markdown, a standalone HTML file, a Word document, a PDF; and
its bibliography: BibTeX, RIS, CSL-JSON.

Each holds the report's text (its tables as tables), its Sources list (a web source's URL a
link) and the verification line, and the run's charts when it has some. Headings keep their
levels: the report's title is the document's title, its sections and the Sources list are
the headings below it. The libraries are pure-Python wheels needing nothing from the
system: python-docx writes the .docx, reportlab the PDF (with the TrueType font it ships, so
no system font is needed; its own chart drawing embeds the charts; a numbered citation links
to its entry in the Sources list).
"""

from __future__ import annotations

import io
import re
from xml.sax.saxutils import escape as xml_escape

from deepresearch.report.documents import reference_text
from deepresearch.text.safe import one_line, render_reference, web_url
from deepresearch.web.render import _MD, chart_points, split_report, standalone_html, title_text

FORMATS = {
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pdf": "application/pdf",
    # the bibliography of the cited sources (deepresearch.report.bibliography)
    "bibtex": "application/x-bibtex; charset=utf-8",
    "ris": "application/x-research-info-systems; charset=utf-8",
    "csljson": "application/vnd.citationstyles.csl+json; charset=utf-8",
}
EXTENSIONS = {"bibtex": "bib", "csljson": "json"}  # a file's extension, when not the format's name


class ExportError(ValueError):
    """Nothing to export (no report yet) or an unknown format."""


def _inline_text(token) -> str:
    out = []
    for child in token.children or []:
        if child.type in ("text", "code_inline", "html_inline"):
            out.append(child.content)
        elif child.type == "softbreak":
            out.append(" ")
        elif child.type == "hardbreak":
            out.append("\n")
    return "".join(out)


def blocks(markdown: str) -> list[tuple[str, int, str | list[list[str]]]]:
    """The Markdown's blocks as (kind, level, text): heading, para, item, code; and a table as
    ("table", 0, rows), each row a list of its cells' texts (the header row first)."""
    out: list[tuple[str, int, str | list[list[str]]]] = []
    in_item = level = 0
    table: list[list[str]] | None = None
    for t in _MD.parse(markdown or ""):
        if t.type == "table_open":
            table = []
        elif t.type == "table_close":
            out.append(("table", 0, table or []))
            table = None
        elif t.type == "tr_open" and table is not None:
            table.append([])
        elif t.type == "heading_open":
            level = int(t.tag[1])
        elif t.type == "list_item_open":
            in_item += 1
        elif t.type == "list_item_close":
            in_item -= 1
        elif t.type == "inline" and table is not None:
            table[-1].append(_inline_text(t))
        elif t.type == "inline":
            kind = "heading" if level else "item" if in_item else "para"
            out.append((kind, level, _inline_text(t)))
        elif t.type == "heading_close":
            level = 0
        elif t.type in ("fence", "code_block"):
            out.append(("code", 0, t.content.rstrip("\n")))
    return out


def _source_lines(values: dict) -> list[tuple[int, str, str, bool]]:
    """(id, title, reference, a web link?) of each source: the reference is its URL, a file
    path or text."""
    out = []
    for s in values.get("sources") or []:
        if isinstance(s, dict):
            url = str(s.get("url") or "")
            ref = (
                render_reference(url, "web")
                if web_url(url)
                else reference_text(s)
                if url.lower().startswith("file:")
                else one_line(render_reference(url), 300).replace("\\", "")
            )
            out.append((int(s.get("id", 0) or 0), title_text(s.get("title")), ref, web_url(url)))
    return out


def _report_parts(values: dict) -> tuple[str, list[tuple[int, str, str, bool]], list[str]]:
    """The report as delivered in its citation style, in parts: (the body, the Sources list's
    entries as (source id, entry text, reference, a web link?), the lines after the list)."""
    from deepresearch.report.citation_style import styled_parts

    report = values["report"]
    sources = {str(s.get("id")): s for s in values.get("sources") or [] if isinstance(s, dict)}
    parts = styled_parts(report, list(sources.values()), values.get("citation_style"))
    if parts is None:
        body, tail = split_report(report)
        return body, [(sid, f"[{sid}] {title}", ref, link) for sid, title, ref, link in _source_lines(values)], tail
    body, entries, tail = parts
    listed = {str(sid): (ref, link) for sid, _, ref, link in _source_lines(values)}
    out = []
    for key, label, text in entries:
        plain = " ".join(t for _, _, t in blocks(text) if isinstance(t, str)) or text  # the entry's Markdown read
        ref, link = listed.get(key, ("", False))
        out.append((int(key), f"{label} {plain}".strip(), ref, link))
    return body, out, tail


def _charts(values: dict) -> list[dict]:
    return (
        [c for c in values.get("charts") or [] if isinstance(c, dict)] if isinstance(values.get("charts"), list) else []
    )


def _require_report(values: dict) -> None:
    if not (values or {}).get("report"):
        raise ExportError("this run has no report yet")


def to_markdown(values: dict) -> bytes:
    from deepresearch.report.citation_style import delivered

    _require_report(values)
    return delivered(values).encode("utf-8")  # in the run's citation style


def to_html(values: dict) -> bytes:
    _require_report(values)
    return standalone_html(values).encode("utf-8")  # in the run's citation style too


def _docx_link(paragraph, url: str, text: str) -> None:
    """A clickable link at the end of `paragraph` (python-docx has no call for one: its XML)."""
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True))
    run, props = OxmlElement("w:r"), OxmlElement("w:rPr")
    for tag, value in (("w:color", "1F4E99"), ("w:u", "single")):
        prop = OxmlElement(tag)
        prop.set(qn("w:val"), value)
        props.append(prop)
    words = OxmlElement("w:t")
    words.text = text
    run.append(props)
    run.append(words)
    link.append(run)
    paragraph._p.append(link)


def _docx_table(doc, rows: list[list[str]]) -> None:
    width = max((len(r) for r in rows), default=0)
    if not width:
        return
    table = doc.add_table(rows=len(rows), cols=width)
    table.style = "Table Grid"
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
            if r == 0:  # the header row
                for run in table.cell(r, c).paragraphs[0].runs:
                    run.bold = True


def to_docx(values: dict) -> bytes:
    from docx import Document

    _require_report(values)
    body, listed, tail = _report_parts(values)
    doc = Document()
    doc.core_properties.author = "deepresearch"
    doc.core_properties.title = one_line(values.get("question") or "Research report", 200)
    doc.core_properties.comments = "A research report written by deepresearch"
    for kind, level, text in blocks(body):
        if isinstance(text, list):  # a table's rows
            _docx_table(doc, text)
        elif kind == "heading":  # the report's title is the document's; its sections Heading 1, ...
            doc.add_heading(text, level=min(level - 1, 9))
        elif kind == "item":
            doc.add_paragraph(text, style="List Bullet")
        else:
            doc.add_paragraph(text)
    charts = _charts(values)
    if charts:
        doc.add_heading("Charts", level=1)
    for chart in charts:
        doc.add_heading(one_line(chart.get("title") or "Chart", 200), level=2)
        points = chart_points(chart)
        _docx_table(doc, [["label", "value"]] + [[label, f"{v:g}"] for label, v in points])
    doc.add_heading("Sources", level=1)  # a section of the report, as `## Sources` is
    for _, entry, ref, link in listed:
        paragraph = doc.add_paragraph(f"{entry} — ")
        if link:
            _docx_link(paragraph, ref, ref)
        else:
            paragraph.add_run(ref)
    for line in tail:
        doc.add_paragraph(" ".join(text for _, _, text in blocks(line) if isinstance(text, str)) or line)
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def _pdf_font() -> tuple[str, str]:
    """reportlab's own TrueType font (Bitstream Vera, shipped in its wheel): more than Latin-1."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    try:
        pdfmetrics.getFont("DRVera")
    except KeyError:
        pdfmetrics.registerFont(TTFont("DRVera", "Vera.ttf"))
        pdfmetrics.registerFont(TTFont("DRVeraBd", "VeraBd.ttf"))
    return "DRVera", "DRVeraBd"


def _chart_drawing(chart: dict):
    from reportlab.graphics.charts.barcharts import VerticalBarChart
    from reportlab.graphics.shapes import Drawing

    points = chart_points(chart)
    if not points:
        return None
    d = Drawing(440, 180)
    bc = VerticalBarChart()
    bc.x, bc.y, bc.width, bc.height = 40, 30, 380, 130
    bc.data = [[v for _, v in points]]
    bc.categoryAxis.categoryNames = [label[:12] for label, _ in points]
    bc.categoryAxis.labels.fontName = bc.valueAxis.labels.fontName = _pdf_font()[0]
    bc.categoryAxis.labels.fontSize = 7
    d.add(bc)
    return d


_PDF_CITE = re.compile(r"\[(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\]")


def _pdf_table(rows: list[list[str]], style, bold: str):
    from reportlab.lib import colors
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph, Table, TableStyle

    width = max((len(r) for r in rows), default=1)
    head = ParagraphStyle("dr-th", parent=style, fontName=bold)
    cells = [
        [Paragraph(xml_escape(c), head if r == 0 else style) for c in row] + [""] * (width - len(row))
        for r, row in enumerate(rows)
    ]
    table = Table(cells, colWidths=[480 / width] * width, repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("GRID", (0, 0), (-1, -1), 0.5, colors.grey),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eeeeee")),
            ]
        )
    )
    return table


def to_pdf(values: dict) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
    from reportlab.platypus import Paragraph, Preformatted, SimpleDocTemplate, Spacer

    _require_report(values)
    regular, bold = _pdf_font()
    base = getSampleStyleSheet()
    para = ParagraphStyle("dr", parent=base["BodyText"], fontName=regular, fontSize=10, leading=14)
    item = ParagraphStyle("dr-item", parent=para, leftIndent=14, bulletIndent=4)
    heads = {n: ParagraphStyle(f"dr-h{n}", parent=base[f"Heading{min(n, 4)}"], fontName=bold) for n in range(1, 7)}
    body, listed, tail = _report_parts(values)

    numbered = values.get("citation_style") in (None, "", "numeric")

    def p(
        text: str, style, cites: bool = False, **kw
    ):  # reportlab's Paragraph reads a little markup: escaped text only
        markup = xml_escape(text).replace("\n", "<br/>")
        if cites and numbered:  # a numbered citation links to its entry in the Sources list
            markup = _PDF_CITE.sub(
                lambda m: (
                    "["
                    + ", ".join(
                        f'<a href="#src-{n}" color="#1f4e99">{n}</a>' for n in re.split(r"\s*[,;]\s*", m.group(1))
                    )
                    + "]"
                ),
                markup,
            )
        return Paragraph(markup, style, **kw)

    story = []
    for kind, level, text in blocks(body):
        if isinstance(text, list):  # a table's rows
            story.append(_pdf_table(text, para, bold))
        elif kind == "heading":
            story.append(p(text, heads[level]))
        elif kind == "item":
            story.append(p(text, item, cites=True, bulletText="•"))
        elif kind == "code":
            story.append(Preformatted(text, para))
        else:
            story.append(p(text, para, cites=True))
    for chart in _charts(values):
        story.append(p(one_line(chart.get("title") or "Chart", 200), heads[3]))
        drawing = _chart_drawing(chart)
        story.append(drawing if drawing is not None else p("(no numeric points)", para))
    story += [Spacer(1, 8), p("Sources", heads[2])]
    for sid, entry, ref, link in listed:
        anchor = f'<a name="src-{sid}"/>'
        where = (
            f'<a href="{xml_escape(ref, {chr(34): "&quot;"})}" color="#1f4e99">{xml_escape(ref)}</a>'
            if link
            else xml_escape(ref)
        )
        story.append(Paragraph(f"{anchor}{xml_escape(entry)} — {where}", para))
    for line in tail:
        story.append(p(" ".join(text for _, _, text in blocks(line) if isinstance(text, str)) or line, para))
    buf = io.BytesIO()
    title = one_line(values.get("question") or "Research report", 200)
    SimpleDocTemplate(buf, pagesize=A4, title=title, author="deepresearch").build(story)
    return buf.getvalue()


def _bibliography(write):
    def make(values: dict) -> bytes:
        _require_report(values)
        return write([s for s in values.get("sources") or [] if isinstance(s, dict)]).encode("utf-8")

    return make


def export(values: dict, fmt: str) -> bytes:
    """The report of a run's output `values` in format `fmt` (md, html, docx or pdf), or its
    cited sources as a bibliography (bibtex, ris, csljson)."""
    from deepresearch.report.bibliography import to_bibtex, to_csljson, to_ris

    makers = {
        "md": to_markdown,
        "html": to_html,
        "docx": to_docx,
        "pdf": to_pdf,
        "bibtex": _bibliography(to_bibtex),
        "ris": _bibliography(to_ris),
        "csljson": _bibliography(to_csljson),
    }
    if fmt not in makers:
        raise ExportError(f"unknown format {fmt!r}; use one of {', '.join(makers)}")
    return makers[fmt](values)
