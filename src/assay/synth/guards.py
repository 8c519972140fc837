"""Guards: read a generated room back as text and check its gold against what the filings say.

`check_room(room_dir)` rebuilds the ledger from the manifest's seed and scale, reads every filing
back (PDF with pypdfium2, HTML with its tags stripped) and returns a `RoomCheck` (a report) with a
`Problem` for each of:

- facts.jsonl disagrees with the ledger the manifest's seed rebuilds;
- a gold anchor's quote is not on the page the gold names (in the primary file or the other format);
- an entry's evidence uses a filing accepted after the entry's `as_of`;
- a filing of the company matches a pattern an unanswerable entry says no filing states, or the
  ledger holds the fact the entry says is absent;
- a restated figure is contradicted: a filing accepted after the restatement shows the superseded
  value on the figure's table row (other than the amendment that states both), or one accepted
  before it shows the restated value;
- a numeric reference answer disagrees with the ledger;
- the same two, turn by turn, for the conversations (conversations.jsonl);
- a numeric-lookup entry misses a page whose table row states its answer (incomplete evidence);
- a "latest quarter" / "last year end" entry answers a period other than the latest public by
  its `as_of`.

Anchor matching here is stricter than the 80% rule chunks are held by: every token of the quote
(normalised by `assay.gold.align.normalize_tokens`), contiguous, on the page.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._io import iter_jsonl, json_loads
from assay.corpus import read_file
from assay.dataset import Principal
from assay.errors import DataError, Problem
from assay.gold.align import TEXT_CONFIRM, containment, normalize_tokens
from assay.report import ReportMixin, Tabular
from assay.synth.conversations import turn_entries
from assay.synth.facts_ledger import CONCEPTS, Ledger, build_ledger
from assay.synth.filings import fmt_cell
from assay.synth.layout import Doc
from assay.synth.messy import DealBook, deal_books, deal_pages
from assay.synth.xbrl import text_facts

__all__ = [
    "LayoutText",
    "RoomCheck",
    "RoomText",
    "check_built",
    "check_conflicts",
    "check_decoys",
    "check_room",
    "norm_tokens",
    "read_room",
]


_READ_FORMATS = ("pdf", "html", "xlsx", "docx", "eml")


def norm_tokens(text: str) -> list[str]:
    """The anchor tokenizer of `assay.gold.align` (case, punctuation and numbers folded)."""
    return normalize_tokens(text)


def _contains(hay: list[str], needle: list[str]) -> bool:
    if not needle:
        return True
    n = len(needle)
    first = needle[0]
    return any(hay[i] == first and hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def _html_pages(raw: str) -> list[str]:
    parts = re.split(r'<div class="page"[^>]*>', raw)[1:]
    out = []
    for p in parts:
        p = re.sub(r"</(tr|p|h1|h2|caption|div)>", "\n", p)
        p = re.sub(r"</t[dh]>", " ", p)
        out.append(html.unescape(re.sub(r"<[^>]+>", " ", p)))
    return out


def _pdf_pages(path: Path, scanned: set[int] | None = None) -> list[str]:
    """Text of each page; a page with no text but an image (a scan) is read by OCR, when an
    engine is installed, and its number added to `scanned`."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    from assay.corpus import ocr

    pdf = pdfium.PdfDocument(str(path))
    try:
        out = []
        for i in range(len(pdf)):
            page = pdf[i]
            tp = page.get_textpage()
            text = tp.get_text_range().replace("\r\n", "\n").replace("\r", "\n")
            if not text.strip() and any(
                o.type == raw.FPDF_PAGEOBJ_IMAGE for o in page.get_objects()
            ):
                if scanned is not None:
                    scanned.add(i + 1)
                engine = ocr.ocr_engine("auto")
                text = "\n".join(engine(page)[0]) if engine is not None else ""
            out.append(text)
            tp.close()
            page.close()
        return out
    finally:
        pdf.close()


class RoomText:
    """Pages of every filing of a room as text, per format, read lazily and cached."""

    def __init__(self, room: Path):
        self.room = room
        self.docs: dict[str, dict[str, Any]] = {}
        for _, row in iter_jsonl(room / "documents.jsonl"):
            self.docs[str(row["doc_id"])] = row
        self._cache: dict[tuple[str, str], list[str]] = {}
        self._tokens: dict[tuple[str, str, int], list[str]] = {}
        self.scanned: set[tuple[str, int]] = set()  # (doc, page) read by OCR

    def formats(self, doc_id: str) -> list[str]:
        stem = self.room / "docs" / doc_id
        return [f for f in _READ_FORMATS if stem.with_suffix(f".{f}").exists()]

    def share(self, other: RoomText, *, except_docs: Iterable[str] = ()) -> RoomText:
        """Reuse pages `other` has read (for a copy of its room), except those of `except_docs`."""
        skip = set(except_docs)
        self._cache.update({k: v for k, v in other._cache.items() if k[0] not in skip})
        self.scanned.update(k for k in other.scanned if k[0] not in skip)
        self._tokens.update({k: v for k, v in other._tokens.items() if k[0] not in skip})
        return self

    def tokens(self, doc_id: str, fmt: str, page: int) -> list[str]:
        """`norm_tokens` of a 1-based page (cached)."""
        key = (doc_id, fmt, page)
        if key not in self._tokens:
            self._tokens[key] = norm_tokens(self.pages(doc_id, fmt)[page - 1])
        return self._tokens[key]

    def pages(self, doc_id: str, fmt: str | None = None) -> list[str]:
        if fmt is None:
            fmt = str(self.docs[doc_id]["file"]).rsplit(".", 1)[1]
        key = (doc_id, fmt)
        if key not in self._cache:
            path = self.room / "docs" / f"{doc_id}.{fmt}"
            if fmt == "pdf":
                scanned: set[int] = set()
                self._cache[key] = _pdf_pages(path, scanned)
                self.scanned.update((doc_id, p) for p in scanned)
            elif fmt == "html":
                self._cache[key] = _html_pages(path.read_text(encoding="utf-8"))
            else:  # spreadsheets (cell values), Word, e-mail with its attachments
                self._cache[key] = read_file(path).pages
        return self._cache[key]


class LayoutText(RoomText):
    """Pages of an in-memory room as the layout lays them out (no rendering, no files).

    Lets the generator's own output be checked quickly for many seeds; `check_room` is the
    authority, since it reads what the renderers wrote.
    """

    def __init__(self, docs: Iterable[Doc], deals: Iterable[DealBook] = ()):
        self.room = Path("<memory>")
        self.docs = {}
        self._cache = {}
        self._tokens = {}
        self.scanned = set()
        for d in docs:
            row = dict(d.meta)
            row["file"] = f"docs/{d.doc_id}.layout"
            self.docs[d.doc_id] = row
            self._cache[(d.doc_id, "layout")] = [
                "\n".join(text for b in page for _, text in b.lines()) for page in d.pages
            ]
        for book in deals:
            c = book.c
            for dd in book.docs:
                self.docs[dd.doc_id] = {
                    "doc_id": dd.doc_id,
                    "ticker": c.ticker,
                    "form": "OTHER",
                    "fiscal_year": book.fy,
                    "fiscal_quarter": None,
                    "accepted_at": dd.accepted.isoformat(),
                    "file": f"docs/{dd.doc_id}.layout",
                }
                self._cache[(dd.doc_id, "layout")] = deal_pages(dd, book)

    def formats(self, doc_id: str) -> list[str]:
        return ["layout"]


def check_built(ledger: Ledger, docs: list[Doc], golden: list[dict[str, Any]]) -> list[Problem]:
    """The text-level guards over an in-memory room (see `LayoutText`)."""
    room = Path("<memory>")
    text = LayoutText(docs, deal_books(ledger))
    facts = {fid: {"kind": "numeric", "value": ledger.current_value(fid)} for fid in ledger.facts}
    return (
        check_anchors(room, golden, text)
        + check_unanswerable(room, golden, text, ledger, facts)
        + check_restatements(room, ledger, text)
        + check_reference_answers(room, golden, ledger)
        + check_completeness(room, golden, ledger, text)
        + check_temporal(room, golden, ledger, text)
        + check_conflicts(room, golden, text)
        + check_decoys(room, golden)
    )


def read_room(
    room: str | Path,
) -> tuple[dict[str, Any], Ledger, list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """(manifest, rebuilt ledger, golden entries, facts by id) of a room directory."""
    room = Path(room)
    mpath = room / "manifest.json"
    if not mpath.exists():
        raise DataError("not a synthetic room (no manifest.json)", file=mpath)
    manifest = json_loads(mpath.read_text(encoding="utf-8"), mpath)
    scale = manifest["scale"]
    ledger = build_ledger(
        int(manifest["seed"]),
        companies=int(scale["companies"]),
        years=int(scale["years"]),
        last_fy=int(scale["last_fiscal_year"]),
    )
    golden = [row for _, row in iter_jsonl(room / "golden.jsonl")]
    facts = {str(row["fact_id"]): row for _, row in iter_jsonl(room / "facts.jsonl")}
    return manifest, ledger, golden, facts


def _anchors(entry: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for path in entry.get("evidence_paths", []):
        for piece in path:
            for alt in piece:
                if isinstance(alt, dict):
                    yield alt
    for kf in entry.get("key_facts", []):
        for alt in kf.get("supporting", []):
            if isinstance(alt, dict):
                yield alt


@dataclass
class RoomCheck(ReportMixin):
    """What `check_room` found: every problem with a room's gold (none: the room is consistent)."""

    room: Path
    documents: int
    entries: int
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "room": str(self.room),
            "ok": self.ok,
            "documents": self.documents,
            "entries": self.entries,
            "problems": [dataclasses.asdict(p) for p in self.problems],
        }

    def tabular(self) -> Tabular:
        where = [p.file if p.line is None else f"{p.file}:{p.line}" for p in self.problems]
        return Tabular(
            f"{self.room}: {self._verdict()}",
            ["where", "field", "problem"],
            [[w, p.field or "", p.message] for w, p in zip(where, self.problems, strict=True)],
            footer=[f"{self.documents} filings, {self.entries} golden entries checked"],
            emphasis=set(),
        )

    def to_table(self) -> Any:
        """One line per problem (messages are long; a table would cut them)."""
        from rich.console import Group
        from rich.text import Text

        lines = [Text(str(p)) for p in self.problems]
        style = "green" if self.ok else "bold red"
        summary = (
            f"{self.room}: {self._verdict()} ({self.documents} filings, {self.entries} entries)"
        )
        return Group(*lines, Text(summary, style=style))

    def to_markdown(self) -> str:
        if self.ok:  # no empty table
            t = self.tabular()
            return f"**{t.title}**\n\n" + "\n".join(t.footer) + "\n"
        return super().to_markdown()

    def _verdict(self) -> str:
        return "consistent" if self.ok else f"{len(self.problems)} problem(s)"


def check_room(
    room: str | Path,
    *,
    text: RoomText | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RoomCheck:
    """Every guard over a room directory; `RoomCheck.ok` when the room is consistent.

    `text` lets a caller reuse pages already read (a `RoomText` of the same room); `progress(done,
    total)` is called as the filings are read (every rendering of each, before the checks).
    """
    room = Path(room)
    _manifest, ledger, golden, facts = read_room(room)
    text = text or RoomText(room)
    result = RoomCheck(room, len(text.docs), len(golden))
    problems: list[Problem] = check_facts(room, ledger, facts)
    if not problems:  # the text checks below need the ledger the room was generated from
        if progress is not None:  # read every rendering up front, reporting as it goes
            docs = sorted(text.docs)
            for i, doc in enumerate(docs, start=1):
                for f in text.formats(doc):
                    text.pages(doc, f)
                progress(i, len(docs))
        problems += check_anchors(room, golden, text)
        problems += check_unanswerable(room, golden, text, ledger, facts)
        problems += check_restatements(room, ledger, text)
        problems += check_reference_answers(room, golden, ledger)
        problems += check_completeness(room, golden, ledger, text)
        problems += check_temporal(room, golden, ledger, text)
        problems += check_conflicts(room, golden, text)
        problems += check_decoys(room, golden)
        problems += check_conversations(room, ledger, text)
    problems += check_policy(room, golden, text.docs)
    result.problems = problems
    return result


def check_conversations(room: Path, ledger: Ledger, text: RoomText) -> list[Problem]:
    """The conversations' gold, turn by turn, as the golden set's: every anchor's quote on its
    page, every reference answer stating the ledger's figures (problems name
    conversations.jsonl and the conversation's line)."""
    path = room / "conversations.jsonl"
    if not path.exists():
        return []
    turns: list[dict[str, Any]] = []
    lines: list[int] = []
    for line, conv in iter_jsonl(path):
        for e in turn_entries(conv):
            turns.append(e)
            lines.append(line)
    found = check_anchors(room, turns, text) + check_reference_answers(room, turns, ledger)
    return [
        dataclasses.replace(p, file=str(path), line=lines[p.line - 1] if p.line else None)
        for p in found
    ]


def _period_key(row: dict[str, Any]) -> tuple[int, int]:
    q = row["fiscal_quarter"]
    return int(row["fiscal_year"]), 4 if q is None else int(q)


def check_temporal(
    room: Path, golden: list[dict[str, Any]], ledger: Ledger, text: RoomText
) -> list[Problem]:
    """A "latest" entry's period is the latest the company had reported by `as_of`, and the
    evidence is in filings public by then (the anchors check covers the second half)."""
    f = str(room / "golden.jsonl")
    out: list[Problem] = []
    for line, e in enumerate(golden, start=1):
        template = str(e.get("metadata", {}).get("template", ""))
        if not template.startswith("temporal:") or not e.get("as_of"):
            continue
        as_of = e["as_of"]
        fact = ledger.facts[e["metadata"]["fact_ids"][0]]
        ticker = ledger.company(fact.cid).ticker
        public = [
            text.docs[d]
            for d in _company_docs(text, ticker)
            if text.docs[d]["accepted_at"] <= as_of
        ]
        if template.startswith("temporal:latest_quarter"):
            periodic = [r for r in public if r["form"] in ("10-Q", "10-K", "EARNINGS")]
            latest = max((_period_key(r) for r in periodic), default=None)
            if latest != (fact.fy, fact.fq):
                out.append(
                    Problem(
                        f,
                        line,
                        "as_of",
                        f"{e['id']}: latest quarter public by {as_of} is "
                        f"{latest}, the entry answers {(fact.fy, fact.fq)}",
                    )
                )
        else:
            annual = [int(r["fiscal_year"]) for r in public if r["form"] == "10-K"]
            if max(annual, default=None) != fact.fy:
                out.append(
                    Problem(
                        f,
                        line,
                        "as_of",
                        f"{e['id']}: latest 10-K public by {as_of} is for "
                        f"fiscal {max(annual, default=None)}, the entry answers {fact.fy}",
                    )
                )
    return out


def check_facts(room: Path, ledger: Ledger, facts: dict[str, dict[str, Any]]) -> list[Problem]:
    f = str(room / "facts.jsonl")
    out: list[Problem] = []
    numeric = {k for k, row in facts.items() if row.get("kind") == "numeric"}
    if numeric != set(ledger.facts):
        extra, missing = sorted(numeric - set(ledger.facts)), sorted(set(ledger.facts) - numeric)
        return [
            Problem(
                f,
                None,
                "fact_id",
                f"facts.jsonl does not match the ledger its manifest's seed and scale rebuild "
                f"({len(extra)} unknown, {len(missing)} missing, e.g. {(extra or missing)[0]}); "
                "was the room written by another generator version?",
            )
        ]
    for fid in ledger.facts:
        row = facts.get(fid)
        if row is None:
            out.append(
                Problem(f, None, "fact_id", f"{fid} is in the ledger but not in facts.jsonl")
            )
        elif row["value"] != ledger.current_value(fid):
            out.append(
                Problem(
                    f, None, "value", f"{fid}: {row['value']} != ledger {ledger.current_value(fid)}"
                )
            )
    return out


def check_anchors(room: Path, golden: list[dict[str, Any]], text: RoomText) -> list[Problem]:
    f = str(room / "golden.jsonl")
    out: list[Problem] = []
    for line, e in enumerate(golden, start=1):
        as_of = dt.date.fromisoformat(e["as_of"]) if e.get("as_of") else None
        for a in _anchors(e):
            doc = a["doc"]
            if doc not in text.docs:
                out.append(Problem(f, line, "evidence_paths", f"{e['id']}: unknown doc {doc}"))
                continue
            dated = text.docs[doc]["accepted_at"] or text.docs[doc]["version_date"]
            if as_of is not None and dt.date.fromisoformat(dated) > as_of:
                out.append(
                    Problem(
                        f,
                        line,
                        "evidence_paths",
                        f"{e['id']}: {doc} was accepted after as_of {as_of}",
                    )
                )
            quote = norm_tokens(a["quote"])
            for fmt in text.formats(doc):
                pages = text.pages(doc, fmt)
                page = int(a["page"])
                if fmt == "pdf" and (doc, page) in text.scanned:
                    # OCR misreads some tokens: the box carries this gold (assay.gold.align)
                    if not a.get("box") or containment(a["quote"], pages[page - 1]) < TEXT_CONFIRM:
                        out.append(
                            Problem(
                                f,
                                line,
                                "evidence_paths",
                                f"{e['id']}: quote {a['quote']!r} on scanned {doc} page {page} "
                                + ("has no box" if not a.get("box") else "is not in its OCR text"),
                            )
                        )
                    continue
                if not 1 <= page <= len(pages) or not _contains(text.tokens(doc, fmt, page), quote):
                    out.append(
                        Problem(
                            f,
                            line,
                            "evidence_paths",
                            f"{e['id']}: quote {a['quote']!r} not on {doc} page {page} ({fmt})",
                        )
                    )
    return out


def _company_docs(text: RoomText, ticker: str) -> list[str]:
    return sorted(d for d, row in text.docs.items() if row["ticker"] == ticker)


def check_unanswerable(
    room: Path,
    golden: list[dict[str, Any]],
    text: RoomText,
    ledger: Ledger,
    facts: dict[str, dict[str, Any]],
) -> list[Problem]:
    f = str(room / "golden.jsonl")
    out: list[Problem] = []
    last = max(int(r["fiscal_year"]) for r in text.docs.values())
    if last != ledger.last_fy:
        out.append(
            Problem(
                str(room / "documents.jsonl"),
                None,
                "fiscal_year",
                f"a filing covers fiscal {last}, after the room's last fiscal year {ledger.last_fy}",
            )
        )
    for line, e in enumerate(golden, start=1):
        if e.get("answerable", True) is not False:
            continue
        if e.get("expected_behavior") in ("refuse", "escalate"):
            # a boundary, not a gap: the answer exists, behind an access label (check_policy)
            continue
        absent = e.get("metadata", {}).get("absent")
        if not absent:
            out.append(
                Problem(
                    f,
                    line,
                    "metadata.absent",
                    f"{e['id']}: unanswerable entry without absent facts",
                )
            )
            continue
        if e.get("evidence_paths"):
            out.append(
                Problem(f, line, "evidence_paths", f"{e['id']}: unanswerable entry has evidence")
            )
        for fid in absent.get("facts", []):
            if fid in ledger.facts or fid in facts:
                out.append(Problem(f, line, "metadata.absent", f"{e['id']}: the ledger has {fid}"))
        cid = e["metadata"]["company"]
        ticker = ledger.company(cid).ticker
        pats = [re.compile(p) for p in absent.get("patterns", [])]
        for doc in _company_docs(text, ticker):
            for fmt in text.formats(doc):
                body = re.sub(r"\s+", " ", " ".join(text.pages(doc, fmt))).lower()
                for p in pats:
                    if p.search(body):
                        out.append(
                            Problem(
                                f,
                                line,
                                "answerable",
                                f"{e['id']}: {doc} ({fmt}) matches {p.pattern!r}, so it answers",
                            )
                        )
    return out


def _row_values(page: str, label: str) -> list[list[str]]:
    """Number tokens of every line of the page that is the table row `label`.

    Every table the filings print has the period's own column first and the comparative period
    second, so callers read column 0 for a filing's own fiscal year and column 1 for the prior.
    """
    rows = []
    for ln in page.split("\n"):
        s = " ".join(ln.split())
        if s.startswith(label + " "):
            rest = s[len(label) + 1 :]
            toks = rest.split(" ")
            if toks and all(re.fullmatch(r"\(?[\d,.]+\)?%?|n/m", t) for t in toks):
                rows.append(toks)
    return rows


def _may_show(row: dict[str, Any], fy: int, fq: int | None, concept: str) -> bool:
    """Whether a filing's tables can hold the period (its own or the comparative column).

    Narrowing the scan to these filings keeps a coincidentally equal number of another period
    (two quarters with the same provision, say) from being read as the fact.
    """
    if row["form"] == "OTHER":  # deal documents are not filings (check_conflicts reads them)
        return False
    if int(row["fiscal_year"]) not in (fy, fy + 1):
        return False
    q = row["fiscal_quarter"]
    if fq is None:
        instant = CONCEPTS[concept].period_type == "instant"
        return bool(
            q is None
            or (q == 4 and row["form"] == "EARNINGS")
            or (instant and int(row["fiscal_year"]) == fy + 1 and row["form"] == "10-Q")
        )
    return bool(q == fq)


def _label_for(concept: str, segment: str | None) -> list[str]:
    if concept == "seg_rev" and segment:
        return [segment, f"{segment} revenue"]
    if concept == "revenue":
        return [CONCEPTS[concept].label, "Total reportable segments"]
    return [CONCEPTS[concept].label]


def check_restatements(room: Path, ledger: Ledger, text: RoomText) -> list[Problem]:
    out: list[Problem] = []
    for fid, r in sorted(ledger.restatements.items()):
        fact = ledger.facts[fid]
        c = ledger.company(fact.cid)
        old, new = fmt_cell(c, fact.concept, r.old), fmt_cell(c, fact.concept, r.new)
        if old == new:
            out.append(
                Problem(
                    str(room), None, fid, f"restatement does not change the shown figure ({old})"
                )
            )
            continue
        seen_new = False
        for doc in _company_docs(text, c.ticker):
            row = text.docs[doc]
            if not _may_show(row, fact.fy, fact.fq, fact.concept):
                continue
            acc = dt.date.fromisoformat(row["accepted_at"])
            for fmt in text.formats(doc):
                for pno, page in enumerate(text.pages(doc, fmt), start=1):
                    col = 0 if int(row["fiscal_year"]) == fact.fy else 1
                    for label in _label_for(fact.concept, fact.segment):
                        for vals in _row_values(page, label):
                            if (doc == r.via and not r.quiet) or len(vals) <= col:
                                continue
                            shown = vals[col]
                            if acc >= r.effective and shown == old:
                                out.append(
                                    Problem(
                                        str(room / "docs" / f"{doc}.{fmt}"),
                                        pno,
                                        label,
                                        f"shows superseded {fid} = {old} after its restatement to {new}",
                                    )
                                )
                            if acc < r.effective and shown == new:
                                out.append(
                                    Problem(
                                        str(room / "docs" / f"{doc}.{fmt}"),
                                        pno,
                                        label,
                                        f"shows restated {fid} = {new} before the restatement",
                                    )
                                )
                            seen_new = seen_new or (acc >= r.effective and shown == new)
        if not seen_new and fact.fq is None:
            out.append(
                Problem(str(room), None, fid, f"the restated value {new} appears in no filing")
            )
    return out


def _expected(ledger: Ledger, e: dict[str, Any], fid: str) -> float | int:
    r = ledger.restatements.get(fid)
    template = str(e.get("metadata", {}).get("template", ""))
    if ":original:" in template and r is not None:
        return r.old
    if e.get("as_of"):
        return ledger.value_as_of(fid, dt.date.fromisoformat(e["as_of"]))
    return ledger.current_value(fid)


def _text_forms(fid: str, value: str) -> list[str]:
    """How a reference answer states a text fact."""
    kind = fid.split(":")[2]
    if kind == "ceo_pay":
        return [f"${int(value):,}"]
    if kind == "guidance":
        return [f"${int(v) / 1e6:,.0f} million" for v in value.split("-")]
    if kind == "segments":
        return value.split("; ")
    return [value]


def check_reference_answers(
    room: Path, golden: list[dict[str, Any]], ledger: Ledger
) -> list[Problem]:
    f = str(room / "golden.jsonl")
    out: list[Problem] = []
    texts = text_facts(ledger)
    for line, e in enumerate(golden, start=1):
        ans = str(e.get("reference_answer") or "")
        template = str(e.get("metadata", {}).get("template", ""))
        nums: dict[str, float | int] = {}
        for fid in e.get("metadata", {}).get("fact_ids", []):
            if fid not in ledger.facts:
                continue
            fact = ledger.facts[fid]
            c = ledger.company(fact.cid)
            v = _expected(ledger, e, fid)
            nums[fact.concept] = v
            want = fmt_cell(c, fact.concept, v)
            if want not in ans:
                out.append(
                    Problem(
                        f,
                        line,
                        "reference_answer",
                        f"{e['id']}: does not state {fid} = {want} (ledger)",
                    )
                )
        for fid in e.get("metadata", {}).get("fact_ids", []):
            if fid in texts:
                for want in _text_forms(fid, texts[fid]):
                    if want not in ans:
                        out.append(
                            Problem(
                                f,
                                line,
                                "reference_answer",
                                f"{e['id']}: does not state {fid} = {want!r}",
                            )
                        )
        if template.startswith("comparison:") and template != "comparison:reserve_build":
            fids = sorted(e["metadata"]["fact_ids"])  # old year sorts first
            vo, vn = (float(_expected(ledger, e, x)) for x in fids)
            con = ledger.facts[fids[0]].concept
            want = (
                f"{round((vn - vo) * 100):+d} basis points"
                if CONCEPTS[con].unit == "percent"
                else f"{(vn - vo) / abs(vo) * 100:+.1f}%"
            )
            if want not in ans:
                out.append(
                    Problem(f, line, "reference_answer", f"{e['id']}: change should be {want}")
                )
        if template == "comparison:reserve_build":
            fid = e["metadata"]["fact_ids"][0]
            c = ledger.company(ledger.facts[fid].cid)
            build = int(nums["provision"]) - int(nums["nco"])
            want = fmt_cell(c, "provision", abs(build))
            word = "build" if build > 0 else "release"
            if want not in ans or (build and word not in ans):
                out.append(
                    Problem(
                        f, line, "reference_answer", f"{e['id']}: reserve {word} should be {want}"
                    )
                )
    return out


def check_completeness(
    room: Path, golden: list[dict[str, Any]], ledger: Ledger, text: RoomText
) -> list[Problem]:
    """Every page whose table row states a numeric-lookup answer is among the entry's anchors."""
    f = str(room / "golden.jsonl")
    out: list[Problem] = []
    by_company: dict[str, list[str]] = defaultdict(list)
    for doc, row in text.docs.items():
        by_company[row["ticker"]].append(doc)
    for line, e in enumerate(golden, start=1):
        if e["category"] != "numeric_lookup":
            continue
        (fid,) = e["metadata"]["fact_ids"]
        fact = ledger.facts[fid]
        if fid in ledger.restatements:
            continue
        c = ledger.company(fact.cid)
        want = fmt_cell(c, fact.concept, ledger.current_value(fid))
        listed = {(a["doc"], int(a["page"])) for a in _anchors(e)}
        for doc in sorted(by_company[c.ticker]):
            if not _may_show(text.docs[doc], fact.fy, fact.fq, fact.concept):
                continue
            col = 0 if int(text.docs[doc]["fiscal_year"]) == fact.fy else 1
            for pno, page in enumerate(text.pages(doc), start=1):
                if (doc, pno) in listed:
                    continue
                for label in _label_for(fact.concept, fact.segment):
                    if any(len(v) > col and v[col] == want for v in _row_values(page, label)):
                        out.append(
                            Problem(
                                f,
                                line,
                                "evidence_paths",
                                f"{e['id']}: {doc} page {pno} states {fid} = {want} "
                                f"on a '{label}' row but is not in the gold",
                            )
                        )
    return out


def _labelled_numbers(pages: list[str], label: str) -> list[str]:
    """Normalised number tokens on every line of `pages` that mentions `label`."""
    want = norm_tokens(label)
    out: list[str] = []
    for page in pages:
        for ln in page.split("\n"):
            toks = norm_tokens(ln)
            if _contains(toks, want):
                out.extend(t for t in toks if t[0].isdigit())
    return out


def check_conflicts(room: Path, golden: list[dict[str, Any]], text: RoomText) -> list[Problem]:
    """A planted conflict holds in every rendered format: the authoritative document states the
    gold value, the superseded one its own value, and no other document of the company states
    the superseded value on the fact's line (which would make the conflict undecidable)."""
    f = str(room / "golden.jsonl")
    out: list[Problem] = []
    for line, e in enumerate(golden, start=1):
        conf = e.get("metadata", {}).get("conflict")
        if e["category"] == "conflict" and not conf:
            out.append(
                Problem(f, line, "metadata.conflict", f"{e['id']}: conflict entry without it")
            )
        if not conf:
            continue
        label = str(conf["label"])
        good = norm_tokens(str(conf["value"]))
        bad = norm_tokens(str(conf["superseded"]["value"]))
        adoc, sdoc = conf["authority"]["doc"], conf["superseded"]["doc"]
        for doc, want, role in ((adoc, good, "authority"), (sdoc, bad, "superseded")):
            if doc not in text.docs:
                out.append(Problem(f, line, "metadata.conflict", f"{e['id']}: unknown doc {doc}"))
                continue
            for fmt in text.formats(doc):
                if not set(want) <= set(_labelled_numbers(text.pages(doc, fmt), label)):
                    out.append(
                        Problem(
                            f,
                            line,
                            "metadata.conflict",
                            f"{e['id']}: the {role} document {doc} ({fmt}) does not state "
                            f"{label} = {' '.join(want)}",
                        )
                    )
        ticker = text.docs[adoc]["ticker"] if adoc in text.docs else None
        for doc in _company_docs(text, str(ticker)):
            if (
                doc == sdoc
                or doc in conf["superseded"].get("also_in", [])
                or int(text.docs[doc]["fiscal_year"])
                != int(text.docs[sdoc]["fiscal_year"] if sdoc in text.docs else 0)
            ):
                continue
            for fmt in text.formats(doc):
                if bad and set(bad) <= set(_labelled_numbers(text.pages(doc, fmt), label)):
                    out.append(
                        Problem(
                            str(room / "docs" / f"{doc}.{fmt}"),
                            None,
                            label,
                            f"{e['id']}: {doc} states the superseded {label} = {' '.join(bad)}, "
                            f"contradicting the planted conflict ({adoc} decides)",
                        )
                    )
    return out


def check_decoys(room: Path, golden: list[dict[str, Any]]) -> list[Problem]:
    """A decoy is near the answer but not it: its figure differs from the gold value."""
    f = str(room / "golden.jsonl")
    out: list[Problem] = []
    for line, e in enumerate(golden, start=1):
        d = e.get("metadata", {}).get("decoy")
        if e["category"] == "decoy" and not d:
            out.append(Problem(f, line, "metadata.decoy", f"{e['id']}: decoy entry without it"))
        if d and norm_tokens(str(d["value"])) == norm_tokens(str(d["decoy_value"])):
            out.append(
                Problem(
                    f,
                    line,
                    "metadata.decoy",
                    f"{e['id']}: the decoy equals the answer ({d['value']})",
                )
            )
    return out


def check_policy(
    room: Path, golden: list[dict[str, Any]], docs: Mapping[str, Mapping[str, Any]]
) -> list[Problem]:
    """The room's boundaries hold: no entry's gold points at a document its principal may not see
    at its `as_of` (an outsider's gold never names a restricted chunk), and every entry asked
    about a labelled document expects what the label decides for its principal
    (`assay.corpus.access.decision`)."""
    from assay.corpus import decision, parse_access

    f = str(room / "golden.jsonl")
    out: list[Problem] = []
    for line, e in enumerate(golden, start=1):
        who = Principal.model_validate(e["principal"]) if e.get("principal") else None
        as_of = dt.date.fromisoformat(e["as_of"]) if e.get("as_of") else None
        for a in _anchors(e):
            row = docs.get(str(a["doc"]))
            label = parse_access((row or {}).get("access"), file=f, line=line)
            if decision([label], who, as_of)[0] != "answer":
                role = "the public" if who is None else f"the {who.role}"
                out.append(
                    Problem(
                        f, line, "evidence_paths",
                        f"{e['id']}: gold points at {a['doc']}, which {role} may not see "
                        f"({label.label if label else ''})",
                    )
                )  # fmt: skip
        pol = (e.get("metadata") or {}).get("policy")
        if isinstance(pol, dict) and pol.get("doc") in docs:
            label = parse_access(docs[pol["doc"]].get("access"), file=f, line=line)
            want, _ = decision([label], who, as_of)
            got = e.get("expected_behavior", "answer")
            if want != got:
                out.append(
                    Problem(
                        f, line, "expected_behavior",
                        f"{e['id']}: expects {got}, but {pol['doc']}'s label says {want}",
                    )
                )  # fmt: skip
    return out
