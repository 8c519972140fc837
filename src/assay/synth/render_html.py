"""HTML rendering: one `<div class="page" data-page="N">` per laid-out page, real `<table>`s.

Pages match the PDF rendering page for page (both come from `layout.paginate`), so an anchor's
1-based page is the same in either file. Each page div carries `page-break-after: always`.
"""

from __future__ import annotations

from html import escape

from assay.synth.layout import Block, Doc

__all__ = ["render_html"]

_CSS = (
    "body{font-family:Helvetica,Arial,sans-serif;font-size:10pt;max-width:46em;margin:auto}"
    ".page{page-break-after:always;border-bottom:1px solid #ccc;padding:1em 0}"
    "table{border-collapse:collapse;font-family:Courier,monospace;font-size:9pt}"
    "td,th{padding:0 .6em}td.n,th{text-align:right}tr.total td,tr.subtotal td{border-top:1px solid #000}"
    "tr.total td{font-weight:bold}caption{text-align:left;font-weight:bold}"
)


def _block(b: Block) -> str:
    if b.kind == "title":
        return f"<h1>{escape(b.text)}</h1>"
    if b.kind == "h":
        return f"<h2>{escape(b.text)}</h2>"
    if b.kind == "p":
        return f"<p>{escape(b.text)}</p>"
    if b.kind != "table":
        return ""
    ncols = 1 + max([len(b.header)] + [len(r.cells) for r in b.rows])
    out = ["<table>"]
    if b.text:
        out.append(f"<caption>{escape(b.text)}</caption>")
    if b.unit_line:
        out.append(f'<tr class="unit"><td colspan="{ncols}">{escape(b.unit_line)}</td></tr>')
    if b.header:
        out.append("<tr><th></th>" + "".join(f"<th>{escape(h)}</th>" for h in b.header) + "</tr>")
    for r in b.rows:
        cls = f' class="{r.style}"' if r.style else ""
        cells = "".join(f'<td class="n">{escape(x)}</td>' for x in r.cells)
        out.append(f"<tr{cls}><td>{escape(r.label)}</td>{cells}</tr>")
    out.append("</table>")
    return "\n".join(out)


def render_html(doc: Doc) -> str:
    """The document as a standalone HTML page (deterministic; no dates beyond the filing's own)."""
    m = doc.meta
    title = f"{m['company']} {m['form']} ({m['doc_id']})"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title>",
        f'<meta name="doc_id" content="{escape(str(m["doc_id"]))}">',
        f"<style>{_CSS}</style></head><body>",
    ]
    for pno, blocks in enumerate(doc.pages, start=1):
        parts.append(f'<div class="page" id="page-{pno}" data-page="{pno}">')
        parts.extend(_block(b) for b in blocks)
        parts.append("</div>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
