"""Exports of a finished report: Markdown, a standalone HTML file, a Word document, a PDF; and
its bibliography: BibTeX, RIS, CSL-JSON.

Each holds the report's text, its Sources list and the verification line, and the run's
charts when it has some. The libraries are pure-Python wheels needing nothing from the
system: python-docx writes the .docx, reportlab the PDF (with the TrueType font it ships, so
no system font is needed; its own chart drawing embeds the charts).
"""

from __future__ import annotations

import io
from xml.sax.saxutils import escape as xml_escape

from deepresearch.report.documents import reference_text
from deepresearch.text.safe import one_line, render_reference, web_url
from deepresearch.web.render import _MD, chart_points, split_report, standalone_html, title_text

FORMATS = {"md": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8",
           "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
           "pdf": "application/pdf",
           # the bibliography of the cited sources (deepresearch.report.bibliography)
           "bibtex": "application/x-bibtex; charset=utf-8", "ris": "application/x-research-info-systems; charset=utf-8",
           "csljson": "application/vnd.citationstyles.csl+json; charset=utf-8"}
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


def blocks(markdown: str) -> list[tuple[str, int, str]]:
    """The Markdown's blocks as (kind, level, text): heading, para, item, code."""
    out, in_item, level = [], 0, 0
    for t in _MD.parse(markdown or ""):
        if t.type == "heading_open":
            level = int(t.tag[1])
        elif t.type == "list_item_open":
            in_item += 1
        elif t.type == "list_item_close":
            in_item -= 1
        elif t.type == "inline":
            kind = "heading" if level else "item" if in_item else "para"
            out.append((kind, level, _inline_text(t)))
        elif t.type == "heading_close":
            level = 0
        elif t.type in ("fence", "code_block"):
            out.append(("code", 0, t.content.rstrip("\n")))
    return out


def _source_lines(values: dict) -> list[tuple[int, str, str]]:
    """(id, title, reference) of each source: the reference is its URL, a file path or text."""
    out = []
    for s in values.get("sources") or []:
        if isinstance(s, dict):
            url = str(s.get("url") or "")
            ref = render_reference(url, "web") if web_url(url) else reference_text(s) if url.lower().startswith("file:") \
                else one_line(render_reference(url), 300).replace("\\", "")
            out.append((int(s.get("id", 0) or 0), title_text(s.get("title")), ref))
    return out


def _charts(values: dict) -> list[dict]:
    return [c for c in values.get("charts") or [] if isinstance(c, dict)] if isinstance(values.get("charts"), list) else []


def _require_report(values: dict) -> None:
    if not (values or {}).get("report"):
        raise ExportError("this run has no report yet")


def to_markdown(values: dict) -> bytes:
    _require_report(values)
    return values["report"].encode("utf-8")


def to_html(values: dict) -> bytes:
    _require_report(values)
    return standalone_html(values).encode("utf-8")


def to_docx(values: dict) -> bytes:
    from docx import Document

    _require_report(values)
    body, tail = split_report(values["report"])
    doc = Document()
    for kind, level, text in blocks(body):
        if kind == "heading":
            doc.add_heading(text, level=min(level, 9) if level > 1 else 0 if level == 1 else 1)
        elif kind == "item":
            doc.add_paragraph(text, style="List Bullet")
        else:
            doc.add_paragraph(text)
    for chart in _charts(values):
        doc.add_heading(one_line(chart.get("title") or "Chart", 200), level=2)
        points = chart_points(chart)
        table = doc.add_table(rows=1 + len(points), cols=2)
        table.rows[0].cells[0].text, table.rows[0].cells[1].text = "label", "value"
        for row, (label, v) in zip(table.rows[1:], points):
            row.cells[0].text, row.cells[1].text = label, f"{v:g}"
    doc.add_heading("Sources", level=1)
    for sid, title, ref in _source_lines(values):
        doc.add_paragraph(f"[{sid}] {title} — {ref}")
    for line in tail:
        doc.add_paragraph(" ".join(text for _, _, text in blocks(line)) or line)
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
    body, tail = split_report(values["report"])

    def p(text: str, style):  # reportlab's Paragraph reads a little markup: give it escaped text only
        return Paragraph(xml_escape(text).replace("\n", "<br/>"), style)

    story = []
    for kind, level, text in blocks(body):
        if kind == "heading":
            story.append(p(text, heads[level]))
        elif kind == "item":
            story.append(Paragraph(xml_escape(text), item, bulletText="•"))
        elif kind == "code":
            story.append(Preformatted(text, para))
        else:
            story.append(p(text, para))
    for chart in _charts(values):
        story.append(p(one_line(chart.get("title") or "Chart", 200), heads[3]))
        drawing = _chart_drawing(chart)
        story.append(drawing if drawing is not None else p("(no numeric points)", para))
    story += [Spacer(1, 8), p("Sources", heads[2])]
    for sid, title, ref in _source_lines(values):
        story.append(p(f"[{sid}] {title} — {ref}", para))
    for line in tail:
        story.append(p(" ".join(text for _, _, text in blocks(line)) or line, para))
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

    from deepresearch.report.citation_style import delivered

    if (values or {}).get("report") and values.get("citation_style"):  # in the run's citation style
        values = {**values, "report": delivered(values)}
    makers = {"md": to_markdown, "html": to_html, "docx": to_docx, "pdf": to_pdf, "bibtex": _bibliography(to_bibtex),
              "ris": _bibliography(to_ris), "csljson": _bibliography(to_csljson)}
    if fmt not in makers:
        raise ExportError(f"unknown format {fmt!r}; use one of {', '.join(makers)}")
    return makers[fmt](values)
