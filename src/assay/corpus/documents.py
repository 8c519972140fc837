"""Filing metadata: the `Document` model of documents.jsonl, its loader, and the FinanceBench converter.

One line of documents.jsonl describes one filing::

    {"doc_id": "acme-2023-10k", "company": "Acme Corp", "ticker": "ACME", "aliases": ["Acme"],
     "sector": "Information Technology", "form": "10-K", "fiscal_year": 2023, "fiscal_quarter": null,
     "period_end": "2023-06-30", "fiscal_year_end": "06-30", "accepted_at": "2023-08-25",
     "amends": null, "amended_items": [], "file": "acme-2023-10k.pdf", "version_date": "2023-08-25"}

`fiscal_year` and `fiscal_quarter` are in the company's own calendar (Microsoft's fiscal 2024 ends
in June 2024). `accepted_at` is the day the filing became public; when it could not be read from
the filing itself it is derived conservatively (late) from the period end and
`accepted_at_estimated` is true, so an `as_of` filter never shows a filing before it was public.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay._io import iter_jsonl
from assay.corpus.access import AccessLabel
from assay.corpus.fiscal import FiscalCalendar
from assay.errors import DataError, Problem

__all__ = [
    "FINANCEBENCH_COMPANIES",
    "FORMS",
    "CompanyInfo",
    "Document",
    "detect_amendment",
    "enrich_from_text",
    "from_financebench",
    "is_financebench_record",
    "link_amendments",
    "load_documents",
    "load_documents_any",
    "parse_date_phrase",
]

# Base forms; each SEC form may also appear amended with "/A" (10-K/A, 8-K/A, ...).
FORMS = (
    "10-K",
    "10-KT",
    "10-Q",
    "8-K",
    "20-F",
    "40-F",
    "6-K",
    "S-1",
    "DEF 14A",
    "EARNINGS",
    "ANNUAL-REPORT",
    "OTHER",
)
_NOT_AMENDABLE = frozenset({"EARNINGS", "ANNUAL-REPORT", "OTHER"})

_MMDD = re.compile(r"^(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")


class Document(BaseModel):
    """One filing. Unknown fields are an error; put free data under `metadata`."""

    model_config = ConfigDict(extra="forbid")

    doc_id: str = Field(
        min_length=1, pattern=r"^[^/\s]+$", description="no '/' or spaces: chunk ids are doc/page/n"
    )
    company: str = Field(min_length=1)
    ticker: str | None = None
    aliases: list[str] = Field(default_factory=list)
    sector: str | None = None
    form: str = Field(min_length=1, description="10-K, 10-K/A, 10-Q, 10-Q/A, 8-K, EARNINGS, ...")
    fiscal_year: int | None = Field(default=None, ge=1900, le=2200)
    fiscal_quarter: int | None = Field(default=None, ge=1, le=4)
    period_end: dt.date | None = None
    fiscal_year_end: str | None = Field(
        default=None, description="MM-DD of the usual fiscal year end"
    )
    accepted_at: dt.date | None = None
    accepted_at_estimated: bool = False
    amends: str | None = None
    amended_items: list[str] = Field(default_factory=list)
    file: str | None = None
    version_date: dt.date | None = None
    access: AccessLabel | None = Field(
        default=None,
        description="who may see the document (assay.corpus.access); none: public",
    )
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("form")
    @classmethod
    def _known_form(cls, v: str) -> str:
        base = v[:-2] if v.endswith("/A") else v
        if base not in FORMS or (base != v and base in _NOT_AMENDABLE):
            raise ValueError(
                f"unknown form {v!r}; expected one of {', '.join(FORMS)} (SEC forms may end in '/A')"
            )
        return v

    @field_validator("fiscal_year_end")
    @classmethod
    def _mmdd(cls, v: str | None) -> str | None:
        if v is not None and not _MMDD.match(v):
            raise ValueError(f"fiscal_year_end must be MM-DD, got {v!r}")
        return v

    @property
    def is_amendment(self) -> bool:
        return self.form.endswith("/A") or self.amends is not None

    def chunk_fields(self) -> dict[str, Any]:
        """The metadata every chunk of this document carries (JSON-ready)."""
        return {
            "company": self.company,
            "ticker": self.ticker,
            "form": self.form,
            "fiscal_year": self.fiscal_year,
            "fiscal_quarter": self.fiscal_quarter,
            "period_end": self.period_end.isoformat() if self.period_end else None,
            "accepted_at": self.accepted_at.isoformat() if self.accepted_at else None,
        } | ({} if self.access is None else {"access": self.access.to_json_dict()})

    def to_json_dict(self) -> dict[str, Any]:
        out = self.model_dump(mode="json")
        if self.access is None:
            del out["access"]  # public: the line reads as it did before labels existed
        else:
            out["access"] = self.access.to_json_dict()
        return out


def _problems_from_validation(path: str, line: int | None, exc: ValidationError) -> list[Problem]:
    out = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or None
        out.append(Problem(path, line, field, err["msg"]))
    return out


def load_documents(path: str | Path) -> list[Document]:
    """Read documents.jsonl; every bad line/field is reported (all problems, not just the first)."""
    path = Path(path)
    problems: list[Problem] = []
    docs: list[Document] = []
    seen: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path):
        if not isinstance(obj, dict):
            problems.append(Problem(str(path), lineno, None, "expected a JSON object"))
            continue
        try:
            doc = Document.model_validate(obj)
        except ValidationError as exc:
            problems.extend(_problems_from_validation(str(path), lineno, exc))
            continue
        if doc.doc_id in seen:
            problems.append(
                Problem(
                    str(path),
                    lineno,
                    "doc_id",
                    f"duplicate doc_id {doc.doc_id!r} (first on line {seen[doc.doc_id]})",
                )
            )
            continue
        seen[doc.doc_id] = lineno
        docs.append(doc)
    for doc in docs:
        if doc.amends is not None and doc.amends not in seen:
            problems.append(
                Problem(
                    str(path), seen[doc.doc_id], "amends", f"amends unknown doc_id {doc.amends!r}"
                )
            )
    if problems:
        raise DataError(problems)
    return docs


# --------------------------------------------------------------------------------------------
# FinanceBench


@dataclass(frozen=True, slots=True)
class CompanyInfo:
    """Entity facts FinanceBench's metadata lacks.

    `fiscal_year_end` is the usual MM-DD (52/53-week years end near it). `fy_named_by` says which
    calendar year names a fiscal year that does not end in December: "end" (Walmart's fiscal 2020
    ends January 2020) or "start" (Foot Locker's fiscal 2022 ends January 2023).
    """

    ticker: str
    aliases: tuple[str, ...]
    fiscal_year_end: str = "12-31"
    fy_named_by: Literal["end", "start"] = "end"

    @property
    def calendar(self) -> FiscalCalendar:
        """The company's `FiscalCalendar` (a year ending December 31 is named by its end)."""
        naming = self.fy_named_by if self.fiscal_year_end != "12-31" else "end"
        return FiscalCalendar.parse(self.fiscal_year_end, naming=naming)


# Fiscal year ends checked against the cover pages of the FinanceBench filings where present.
FINANCEBENCH_COMPANIES: dict[str, CompanyInfo] = {
    "3M": CompanyInfo("MMM", ("3M Company", "Minnesota Mining and Manufacturing")),
    "AES Corporation": CompanyInfo("AES", ("AES", "The AES Corporation")),
    "AMD": CompanyInfo("AMD", ("Advanced Micro Devices",)),
    "Activision Blizzard": CompanyInfo("ATVI", ("Activision", "Blizzard")),
    "Adobe": CompanyInfo("ADBE", ("Adobe Inc.", "Adobe Systems"), "11-30"),
    "Amazon": CompanyInfo("AMZN", ("Amazon.com", "Amazon.com, Inc.")),
    "Amcor": CompanyInfo("AMCR", ("Amcor plc",), "06-30"),
    "American Express": CompanyInfo("AXP", ("Amex", "American Express Company")),
    "American Water Works": CompanyInfo("AWK", ("American Water", "American Water Works Company")),
    "Apple": CompanyInfo("AAPL", ("Apple Inc.",), "09-30"),
    "Best Buy": CompanyInfo("BBY", ("Best Buy Co.", "BestBuy"), "01-31"),
    "Block": CompanyInfo("SQ", ("Block, Inc.", "Square", "Square, Inc.")),
    "Boeing": CompanyInfo("BA", ("The Boeing Company",)),
    "CVS Health": CompanyInfo("CVS", ("CVS", "CVS Health Corporation")),
    "Coca-Cola": CompanyInfo("KO", ("Coke", "Coca Cola", "The Coca-Cola Company")),
    "Corning": CompanyInfo("GLW", ("Corning Incorporated",)),
    "Costco": CompanyInfo("COST", ("Costco Wholesale",), "08-31"),
    "FedEx": CompanyInfo("FDX", ("FedEx Corporation", "Federal Express"), "05-31"),
    "Foot Locker": CompanyInfo("FL", ("Foot Locker, Inc.", "FootLocker"), "01-31", "start"),
    "General Mills": CompanyInfo("GIS", ("General Mills, Inc.",), "05-31"),
    "Intel": CompanyInfo("INTC", ("Intel Corporation",)),
    "JPMorgan": CompanyInfo(
        "JPM", ("JPMorgan Chase", "JP Morgan", "JPMorgan Chase & Co.", "Chase")
    ),
    "Johnson & Johnson": CompanyInfo("JNJ", ("J&J", "Johnson and Johnson", "JnJ")),
    "Kraft Heinz": CompanyInfo("KHC", ("The Kraft Heinz Company", "Kraft", "Heinz")),
    "Lockheed Martin": CompanyInfo("LMT", ("Lockheed", "Lockheed Martin Corporation")),
    "MGM Resorts": CompanyInfo("MGM", ("MGM", "MGM Resorts International")),
    "McDonalds": CompanyInfo("MCD", ("McDonald's", "McDonald's Corporation", "McD")),
    "Microsoft": CompanyInfo("MSFT", ("Microsoft Corporation", "MS"), "06-30"),
    "Netflix": CompanyInfo("NFLX", ("Netflix, Inc.",)),
    "Nike": CompanyInfo("NKE", ("NIKE, Inc.", "NIKE"), "05-31"),
    "Oracle": CompanyInfo("ORCL", ("Oracle Corporation",), "05-31"),
    "PG&E Corporation": CompanyInfo("PCG", ("PG&E", "Pacific Gas and Electric")),
    "Paypal": CompanyInfo("PYPL", ("PayPal", "PayPal Holdings")),
    "PepsiCo": CompanyInfo("PEP", ("Pepsi", "PepsiCo, Inc.")),
    "Pfizer": CompanyInfo("PFE", ("Pfizer Inc.",)),
    "Salesforce": CompanyInfo("CRM", ("salesforce.com", "Salesforce, Inc."), "01-31"),
    "Ulta Beauty": CompanyInfo(
        "ULTA", ("Ulta", "Ulta Beauty, Inc.", "Ulta Salon"), "01-31", "start"
    ),
    "Verizon": CompanyInfo("VZ", ("Verizon Communications",)),
    "Walmart": CompanyInfo("WMT", ("Wal-Mart", "Wal-Mart Stores", "Walmart Inc."), "01-31"),
    "eBay": CompanyInfo("EBAY", ("eBay Inc.",)),
}

_FB_FORMS = {
    "10k": "10-K",
    "10q": "10-Q",
    "8k": "8-K",
    "earnings": "EARNINGS",
    "10k_annualreport": "10-K",
}
_FB_FIELDS = frozenset({"doc_name", "company", "doc_type", "doc_period"})
_QUARTER_RE = re.compile(r"_(\d{4})Q([1-4])_")
_DATED_RE = re.compile(r"dated[-_](\d{4}-\d{2}-\d{2})")

# Conservative (late) filing lags used when the filing text gives no date: the SEC deadlines for
# the slowest filer category plus a margin, so a derived `accepted_at` is never too early.
_LAG_DAYS = {"10-K": 95, "10-Q": 50, "8-K": 7, "EARNINGS": 75, "ANNUAL-REPORT": 120}


def is_financebench_record(obj: dict[str, Any]) -> bool:
    return obj.keys() >= _FB_FIELDS and "doc_id" not in obj


def from_financebench(obj: dict[str, Any], *, where: tuple[str, int] | None = None) -> Document:
    """Convert one record of FinanceBench's documents.jsonl into a `Document`.

    Period end and acceptance date are first derived from the company calendar (and marked
    estimated); `enrich_from_text` refines them from the filing's own text when it is parsed.
    """
    file, line = where if where else ("<financebench>", 0)
    name = str(obj["doc_name"])
    company = str(obj["company"])
    info = FINANCEBENCH_COMPANIES.get(company)
    if info is None:
        info = CompanyInfo(ticker="", aliases=())
    raw_type = str(obj["doc_type"]).lower()
    form = _FB_FORMS.get(raw_type)
    if form is None:
        raise DataError(
            f"unknown FinanceBench doc_type {obj['doc_type']!r}",
            file=file,
            line=line or None,
            field="doc_type",
        )
    try:
        fiscal_year = int(obj["doc_period"])
    except (TypeError, ValueError):
        raise DataError(
            f"not a year: {obj['doc_period']!r}", file=file, line=line or None, field="doc_period"
        ) from None
    qm = _QUARTER_RE.search(name + "_")
    quarter = int(qm.group(2)) if qm else None
    if qm:
        fiscal_year = int(qm.group(1))
    dated = _DATED_RE.search(name)
    period_end: dt.date | None
    if dated:
        period_end = dt.date.fromisoformat(dated.group(1))
    elif quarter is not None:
        period_end = info.calendar.quarter_end(fiscal_year, quarter)
    else:
        period_end = info.calendar.year_end(fiscal_year)
    if form == "10-K" or (form == "EARNINGS" and quarter == 4):
        fiscal_quarter = None if form == "10-K" else 4
    else:
        fiscal_quarter = quarter
    accepted = period_end + dt.timedelta(days=_LAG_DAYS.get(form, 95))
    meta: dict[str, Any] = {"source": "financebench", "period_end_estimated": not dated}
    if obj.get("doc_link"):
        meta["doc_link"] = obj["doc_link"]
    if raw_type == "10k_annualreport":
        meta["financebench_doc_type"] = raw_type
    return Document(
        doc_id=name,
        company=company,
        ticker=info.ticker or None,
        aliases=list(info.aliases),
        sector=obj.get("gics_sector"),
        form=form,
        fiscal_year=fiscal_year,
        fiscal_quarter=fiscal_quarter,
        period_end=period_end,
        fiscal_year_end=info.fiscal_year_end if info.ticker else None,
        accepted_at=accepted,
        accepted_at_estimated=True,
        file=f"{name}.pdf",
        version_date=accepted,
        metadata=meta,
    )


def load_documents_any(path: str | Path, *, only_in_corpus: bool = False) -> list[Document]:
    """Load documents.jsonl in assay's format, or FinanceBench's (detected by its fields).

    With `only_in_corpus`, FinanceBench records whose `pdf_in_corpus` is false are skipped.
    """
    path = Path(path)
    rows = list(iter_jsonl(path))
    if rows and isinstance(rows[0][1], dict) and is_financebench_record(rows[0][1]):
        problems: list[Problem] = []
        docs: list[Document] = []
        for lineno, obj in rows:
            if not isinstance(obj, dict) or not is_financebench_record(obj):
                problems.append(
                    Problem(str(path), lineno, None, "not a FinanceBench document record")
                )
                continue
            if only_in_corpus and obj.get("pdf_in_corpus") is False:
                continue
            try:
                docs.append(from_financebench(obj, where=(str(path), lineno)))
            except DataError as exc:
                problems.extend(exc.problems)
            except ValidationError as exc:
                problems.extend(_problems_from_validation(str(path), lineno, exc))
        if problems:
            raise DataError(problems)
        return docs
    return load_documents(path)


# --------------------------------------------------------------------------------------------
# Reading dates out of the filing text

_MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for m in names
}
_DATE_RE = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?\s+(\d{1,2})\s*,\s*(\d{4})\b",
    re.IGNORECASE,
)
_PERIOD_RE = re.compile(
    r"for\s+the\s+(?:fiscal\s+year|year|quarterly\s+period|quarter|period|fiscal\s+quarter|"
    r"thirteen\s+weeks|transition\s+period)\s+ended\s*:?\s*"
    # two-column cover pages interleave a few words ("ended Commission file March 31, 2021")
    r"(?:[A-Za-z]+\s+){0,3}?" + _DATE_RE.pattern,
    re.IGNORECASE,
)
_SIGNATURE_RE = re.compile(
    r"pursuant to the requirements of (?:section 13 or 15\(d\)|the securities exchange act)", re.I
)
_REPORT_DATE_RE = re.compile(
    r"date of report[^\n]{0,60}?:?\s*\n?\s*" + _DATE_RE.pattern, re.IGNORECASE
)


_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1": 1, "2": 2, "3": 3, "4": 4}
_FISCAL_Q_RE = re.compile(
    r"\b(?:(first|second|third|fourth)\s+quarter(?:\s+of)?|q([1-4]))\s+(?:fiscal\s+(?:year\s+)?|fy\s*)'?(\d{4})\b",
    re.IGNORECASE,
)
_ENDED_RE = re.compile(
    r"(?:quarter|period|year|weeks)\W{0,3}(?:\([^)]{0,40}\)\s*)?ended\s+" + _DATE_RE.pattern,
    re.IGNORECASE,
)


def parse_date_phrase(m: re.Match[str], offset: int = 0) -> dt.date | None:
    """Build a date from a match whose groups offset+1..offset+3 are month, day, year."""
    month = _MONTHS.get(m.group(offset + 1).lower().rstrip("."))
    try:
        return dt.date(int(m.group(offset + 3)), month or 0, int(m.group(offset + 2)))
    except ValueError:
        return None


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _dates(text: str) -> list[dt.date]:
    return [d for m in _DATE_RE.finditer(text) if (d := parse_date_phrase(m)) is not None]


def enrich_from_text(doc: Document, pages: Sequence[str]) -> Document:
    """Refine `period_end` and `accepted_at` from the filing's own text.

    - period end: the cover page's "For the fiscal year/quarterly period ended <date>" (10-K, 10-Q);
    - acceptance: the signature date ("Pursuant to the requirements of Section 13 or 15(d) ...",
      the latest date on that page within 200 days after the period end) for 10-K/10-Q; the
      "Date of Report" plus the four business days the rules allow for an 8-K; the first date on
      the first page of an earnings release. A date read from the text clears
      `accepted_at_estimated`; nothing found leaves the derived values untouched.

    Amendments are recognised first (`detect_amendment`).
    """
    doc = detect_amendment(doc, pages)
    updates: dict[str, Any] = {}
    meta = dict(doc.metadata)
    head = _squash(" ".join(pages[:3]))
    period_end = doc.period_end

    def read_period_end(m: re.Match[str] | None, source: str) -> dt.date | None:
        found = parse_date_phrase(m) if m else None
        if found is None:
            return period_end
        updates["period_end"] = found
        meta["period_end_estimated"] = False
        meta["period_end_source"] = source
        return found

    if doc.form in ("10-K", "10-K/A", "10-Q", "10-Q/A"):
        period_end = read_period_end(_PERIOD_RE.search(head), "cover page")
        if period_end is not None:
            for i, page in enumerate(pages):
                if _SIGNATURE_RE.search(_squash(page)):
                    window = _squash(" ".join(pages[i : i + 2]))
                    cands = [
                        d
                        for d in _dates(window)
                        if period_end < d <= period_end + dt.timedelta(days=200)
                    ]
                    if cands:
                        updates["accepted_at"] = max(cands)
                        meta["accepted_at_source"] = "signature date"
                        break
    elif doc.form.startswith("8-K"):
        m = _REPORT_DATE_RE.search(" ".join(pages[:2]))
        if m:
            event = parse_date_phrase(m, 0)
            if event is not None:
                updates["accepted_at"] = event + dt.timedelta(days=6)  # <= 4 business days
                meta["accepted_at_source"] = "date of report + 4 business days"
                meta["event_date"] = event.isoformat()
    elif doc.form == "EARNINGS" and pages:
        first = _squash(pages[0])
        fm = _FISCAL_Q_RE.search(first)
        if fm:
            q = _ORDINAL[(fm.group(1) or fm.group(2)).lower()]
            fy = int(fm.group(3))
            if (fy, q) != (doc.fiscal_year, doc.fiscal_quarter):
                meta["fiscal_period_from_name"] = [doc.fiscal_year, doc.fiscal_quarter]
                updates["fiscal_year"], updates["fiscal_quarter"] = fy, q
            meta["fiscal_period_source"] = "release headline"
        period_end = read_period_end(_ENDED_RE.search(first), "release text")
        lo = period_end or dt.date.min
        hi = (period_end + dt.timedelta(days=150)) if period_end else dt.date.max
        cands = [d for d in _dates(_squash(pages[0])) if lo < d <= hi]
        if cands:
            updates["accepted_at"] = cands[0]
            meta["accepted_at_source"] = "release date"
    if "accepted_at" in updates:
        updates["accepted_at_estimated"] = False
        if doc.version_date is None or doc.version_date == doc.accepted_at:
            updates["version_date"] = updates["accepted_at"]
    if not updates:
        return doc
    updates["metadata"] = meta
    return doc.model_copy(update=updates)


_AMEND_FORM_RE = re.compile(r"\bFORM\s+(10-K|10-Q|8-K)\s*/\s*A\b", re.IGNORECASE)
_EXPLANATORY_RE = re.compile(
    r"explanatory\s+note|purpose\s+of\s+(?:this\s+)?amendment", re.IGNORECASE
)
_PART_RE = re.compile(r"\bPart\s+(IV|III|II|I)\b")
_ITEM_RE = re.compile(
    r"\bItems?\s+(\d{1,2}[ABC]?(?:\s*(?:,|and|through|to|-|–)\s*\d{1,2}[ABC]?\b)*)"
)


def _item_labels(spec: str) -> list[str]:
    """'10, 11 and 12' -> Item 10, Item 11, Item 12; '10 through 14' expands the range."""
    out: list[str] = []
    prev: str | None = None
    op = ","
    for tok in re.split(r"\s*(,|and|through|to|-|–)\s*", spec):
        if tok in (",", "and", "through", "to", "-", "–"):
            op = tok
            continue
        if not tok:
            continue
        if op not in (",", "and") and prev is not None and prev.isdigit() and tok.isdigit():
            out.extend(f"Item {n}" for n in range(int(prev) + 1, int(tok) + 1))
        else:
            out.append(f"Item {tok}")
        prev = tok
    return out


def detect_amendment(doc: Document, pages: Sequence[str]) -> Document:
    """Recognise an amendment from its cover ("FORM 10-K/A") and read the items it amends.

    The form becomes ``10-K/A`` (``10-Q/A``, ``8-K/A``) when the cover says so; `amended_items`
    lists the parts and items named in the explanatory note ("Part III", "Item 8"), in order of
    first mention. Values already present in the metadata are kept.
    """
    cover = _squash(" ".join(pages[:2]))[:4000]
    m = _AMEND_FORM_RE.search(cover)
    if m is None:
        return doc
    updates: dict[str, Any] = {}
    meta = dict(doc.metadata)
    form = f"{m.group(1).upper()}/A"
    if not doc.form.endswith("/A"):
        updates["form"] = form
        meta["form_source"] = "cover page"
    if not doc.amended_items:
        text = _squash(" ".join(pages[:4]))
        note = _EXPLANATORY_RE.search(text)
        if note is not None:
            window = text[note.end() : note.end() + 1500]
            found: list[str] = []
            hits = [(x.start(), [f"Part {x.group(1)}"]) for x in _PART_RE.finditer(window)]
            hits += [(x.start(), _item_labels(x.group(1))) for x in _ITEM_RE.finditer(window)]
            for _, labels in sorted(hits, key=lambda t: t[0]):
                found.extend(label for label in labels if label not in found)
            if found:
                updates["amended_items"] = found
                meta["amended_items_source"] = "explanatory note"
    if not updates:
        return doc
    updates["metadata"] = meta
    return doc.model_copy(update=updates)


def link_amendments(docs: Sequence[Document]) -> list[Document]:
    """Fill `amends` of amendments that lack it: the one original filing of the same company,
    base form, fiscal year and quarter (left empty when there is none or more than one)."""
    out: list[Document] = []
    for d in docs:
        if not d.form.endswith("/A") or d.amends is not None:
            out.append(d)
            continue
        base = d.form[:-2]
        cands = [
            o
            for o in docs
            if o.form == base
            and o.company == d.company
            and o.fiscal_year == d.fiscal_year
            and o.fiscal_quarter == d.fiscal_quarter
        ]
        out.append(d.model_copy(update={"amends": cands[0].doc_id}) if len(cands) == 1 else d)
    return out
