"""Room version 2: the documents of a deal room beside the filings, from the same ledger.

For each company and the room's last fiscal year `fy`, five documents are rendered:

- ``{cid}-{fy}-mgmt.xlsx`` management accounts (sheet "P&L": actual, budget and prior-year
  columns; tech companies add a "Segments" sheet), internal and unaudited;
- ``{cid}-{fy}-covenants.xlsx`` a covenant compliance schedule (covenant, threshold, actual,
  headroom);
- ``{cid}-{fy}-minutes.docx`` board minutes, which also mention a subsidiary's revenue;
- ``{cid}-{fy}-credit.docx`` the credit agreement (the facility, its margin, its covenants);
- ``{cid}-{fy}-email.eml`` the CFO's e-mail to the board with the covenant schedule attached.

Planted on purpose, and recorded so the gold can say which side is right:

- *conflicts*: the management accounts give net income before a late audit adjustment (the
  10-K, authority tier 1, decides), and the covenant schedule states a maximum leverage that
  differs from the credit agreement's (the agreement, tier 1, decides);
- *decoys*: a near-duplicate figure for the wrong scope (the budget column), the wrong period
  (the prior-year column, last quarter's headroom) or the wrong entity (a subsidiary's revenue).

The authority tier of a document type is `AUTHORITY` (1 is highest). Every draw comes from a
generator seeded by the room seed and the company, so the same seed gives the same bytes:
office files are zipped with fixed timestamps and the e-mail has a fixed MIME boundary.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

import numpy as np

from assay.synth.facts_ledger import Company, Ledger, fact_id
from assay.synth.filings import fmt_cell

__all__ = [
    "AUTHORITY",
    "DealBook",
    "DealDoc",
    "SheetRow",
    "deal_book",
    "deal_books",
    "deal_pages",
    "render_deal_doc",
]

# Which document type decides when two documents disagree (1 is the highest authority).
AUTHORITY = {
    "10-K": 1,
    "10-K/A": 1,
    "10-Q": 1,
    "credit_agreement": 1,
    "EARNINGS": 2,
    "8-K": 2,
    "board_minutes": 2,
    "management_accounts": 3,
    "covenant_compliance": 3,
    "email": 4,
}

_FIXED = dt.datetime(2000, 1, 1)


@dataclass(frozen=True, slots=True)
class SheetRow:
    """One row of a sheet: label and display values; `row` is its 1-based sheet row."""

    sheet: str
    page: int
    row: int
    label: str
    values: tuple[Any, ...]

    def cells(self, first_col: int = 1, upto: int | None = None) -> str:
        """A1 range from the label to the `upto`-th value (all values by default)."""
        from assay.corpus import col_letter

        n = len(self.values) if upto is None else upto
        return f"{col_letter(first_col)}{self.row}:{col_letter(first_col + n)}{self.row}"

    def quote(self, upto: int | None = None) -> str:
        from assay.corpus import cell_text

        vals = self.values if upto is None else self.values[:upto]
        return " ".join([self.label, *(cell_text(v) for v in vals)])


@dataclass
class DealDoc:
    doc_id: str
    kind: (
        str  # management_accounts | covenant_compliance | board_minutes | credit_agreement | email
    )
    fmt: str  # xlsx | docx | eml
    accepted: dt.date
    sheets: dict[str, list[list[Any]]] = field(default_factory=dict)  # xlsx
    paragraphs: list[str] = field(default_factory=list)  # docx, or the e-mail body
    attachment: str | None = None  # e-mail: doc id of the attached document

    @property
    def authority(self) -> int:
        return AUTHORITY[self.kind]


@dataclass
class DealBook:
    """One company's deal documents and the facts, conflicts and decoys planted in them."""

    c: Company
    fy: int
    docs: list[DealDoc]
    rows: dict[str, SheetRow]  # named rows of the sheets (for anchors)
    quotes: dict[str, tuple[str, int, str]]  # named sentences: (doc id, page, quote)
    facts: dict[str, Any]  # deal facts: facility, margin_bps, max_leverage, ...
    conflicts: list[dict[str, Any]]
    decoys: list[dict[str, Any]]


def _money(c: Company, v: float | int) -> int:
    return round(v / c.scale)


def deal_book(ledger: Ledger, c: Company) -> DealBook:
    """The deal documents of company `c` for the ledger's last fiscal year."""
    idx = [x.cid for x in ledger.companies].index(c.cid)
    rng = np.random.default_rng([ledger.seed, 16, idx])
    fy = ledger.last_fy
    fye = c.calendar.year_end(fy)
    main = "revenue" if c.kind == "tech" else "nii"
    lines = (
        ["revenue", "op_income", "net_income"]
        if c.kind == "tech"
        else ["nii", "provision", "net_income"]
    )
    labels = {
        "revenue": "Total revenues",
        "op_income": "Operating income",
        "net_income": "Net income",
        "nii": "Net interest income",
        "provision": "Provision for credit losses",
    }
    mgmt_date = fye + dt.timedelta(days=20)
    unit = f"USD {c.unit}"
    pl: list[list[Any]] = [
        [f"{c.name} management accounts, fiscal {fy} ({unit}, unaudited)"],
        [],
        ["Line item", f"FY{fy} actual", f"FY{fy} budget", f"FY{fy - 1} actual"],
    ]
    rows: dict[str, SheetRow] = {}
    conflicts: list[dict[str, Any]] = []
    decoys: list[dict[str, Any]] = []
    for concept in lines:
        fid = fact_id(c.cid, concept, fy)
        actual = _money(c, ledger.value_as_of(fid, mgmt_date))
        prior = _money(c, ledger.value_as_of(fact_id(c.cid, concept, fy - 1), mgmt_date))
        budget = round(actual * (1 + float(rng.uniform(0.04, 0.09))))
        if concept == "net_income":
            # before the audit adjustment the 10-K carries: a planted conflict
            delta = max(1, round(abs(actual) * float(rng.uniform(0.03, 0.06))))
            shown = actual + delta
        else:
            shown = actual
        r = SheetRow("P&L", 1, len(pl) + 1, labels[concept], (shown, budget, prior))
        pl.append([r.label, *r.values])
        rows[f"pl:{concept}"] = r
        if concept == main:
            decoys.append(
                {
                    "kind": "scope",
                    "fact": fid,
                    "value": actual,
                    "decoy_value": budget,
                    "doc": f"{c.cid}-{fy}-mgmt",
                    "why": "the budget column, not the actual",
                }
            )
        if concept == "net_income":
            conflicts.append(
                {
                    "fact": fid,
                    "value": fmt_cell(c, "net_income", ledger.current_value(fid)),
                    "authority": {"doc": f"{c.cid}-{fy}-10k", "kind": "10-K", "tier": 1},
                    "superseded": {
                        "doc": f"{c.cid}-{fy}-mgmt",
                        "kind": "management_accounts",
                        "tier": 3,
                        "value": f"{shown:,}",
                    },
                    "label": labels[concept],
                }
            )
    sheets = {"P&L": pl}
    if c.kind == "tech":
        seg: list[list[Any]] = [["Segment", f"FY{fy} revenue", f"FY{fy - 1} revenue"]]
        for s in c.segments:
            cur = _money(c, ledger.value_as_of(fact_id(c.cid, "seg_rev", fy, None, s), mgmt_date))
            old = _money(
                c, ledger.value_as_of(fact_id(c.cid, "seg_rev", fy - 1, None, s), mgmt_date)
            )
            r = SheetRow("Segments", 2, len(seg) + 1, s, (cur, old))
            seg.append([s, cur, old])
            rows[f"seg:{s}"] = r
        sheets["Segments"] = seg
    mgmt = DealDoc(f"{c.cid}-{fy}-mgmt", "management_accounts", "xlsx", mgmt_date, sheets=sheets)

    # the credit agreement and the covenant schedule
    facility = int(rng.integers(4, 16)) * 50  # USD millions
    margin = int(rng.integers(10, 30)) * 5  # bps over SOFR
    max_lev = round(float(rng.choice([3.0, 3.25, 3.5, 3.75, 4.0])), 2)
    min_cov = round(float(rng.choice([2.5, 3.0, 3.5, 4.0])), 2)
    lev = round(float(rng.uniform(1.2, max_lev - 0.6)), 2)
    lev_q3 = round(lev + float(rng.uniform(0.15, 0.4)), 2)
    cov = round(float(rng.uniform(min_cov + 1.0, min_cov + 6.0)), 2)
    lender = str(
        rng.choice(["First Meridian Bank, N.A.", "Harbor Trust Company", "Summit Capital Bank"])
    )
    maturity = fye.replace(year=fye.year + int(rng.integers(3, 6)))
    agreement_date = fye - dt.timedelta(days=int(rng.integers(150, 300)))
    credit_q = {
        "facility": (
            f"The Lenders agree to make available to {c.name} a revolving credit facility in an "
            f"aggregate principal amount of ${facility} million, maturing on {maturity.isoformat()}."
        ),
        "margin": f"Loans bear interest at Term SOFR plus an applicable margin of {margin} basis points.",
        "leverage": (
            f"Maximum Net Leverage Ratio. The Borrower shall not permit the Net Leverage Ratio as "
            f"of the last day of any fiscal quarter to exceed {max_lev:.2f} to 1.00."
        ),
        "coverage": (
            f"Minimum Interest Coverage Ratio. The Borrower shall not permit the Interest Coverage "
            f"Ratio to be less than {min_cov:.2f} to 1.00."
        ),
    }
    credit = DealDoc(
        f"{c.cid}-{fy}-credit",
        "credit_agreement",
        "docx",
        agreement_date,
        paragraphs=[
            "REVOLVING CREDIT AGREEMENT",
            f"dated as of {agreement_date.isoformat()} among {c.name}, as Borrower, and {lender}, "
            "as Administrative Agent.",
            "ARTICLE II. THE CREDIT FACILITY",
            credit_q["facility"],
            credit_q["margin"],
            "ARTICLE VI. FINANCIAL COVENANTS",
            credit_q["leverage"],
            credit_q["coverage"],
        ],
    )
    schedule_lev = round(max_lev + 0.25, 2)  # the schedule misstates the threshold: a conflict
    q3_end = c.calendar.quarter_end(fy, 3)
    cov_rows: list[list[Any]] = [
        ["Covenant", "Threshold", "Actual", "Headroom", "Test date"],
        [
            "Net leverage ratio (max)",
            schedule_lev,
            lev,
            round(schedule_lev - lev, 2),
            fye.isoformat(),
        ],
        ["Interest coverage ratio (min)", min_cov, cov, round(cov - min_cov, 2), fye.isoformat()],
        [
            "Net leverage ratio (max)",
            schedule_lev,
            lev_q3,
            round(schedule_lev - lev_q3, 2),
            q3_end.isoformat(),
        ],
    ]
    cov_doc = DealDoc(
        f"{c.cid}-{fy}-covenants",
        "covenant_compliance",
        "xlsx",
        fye + dt.timedelta(days=25),
        sheets={"Compliance": cov_rows},
    )
    rows["cov:leverage"] = SheetRow("Compliance", 1, 2, cov_rows[1][0], tuple(cov_rows[1][1:]))
    rows["cov:coverage"] = SheetRow("Compliance", 1, 3, cov_rows[2][0], tuple(cov_rows[2][1:]))
    rows["cov:leverage_q3"] = SheetRow("Compliance", 1, 4, cov_rows[3][0], tuple(cov_rows[3][1:]))
    conflicts.append(
        {
            "fact": f"{c.cid}:deal:max_leverage",
            "value": f"{max_lev:.2f}",
            "authority": {"doc": credit.doc_id, "kind": "credit_agreement", "tier": 1},
            "superseded": {
                "doc": cov_doc.doc_id,
                "kind": "covenant_compliance",
                "tier": 3,
                "value": f"{schedule_lev:g}",
            },
            "label": "Net leverage",
        }
    )
    decoys.append(
        {
            "kind": "period",
            "fact": f"{c.cid}:deal:leverage",
            "value": lev,
            "decoy_value": lev_q3,
            "doc": cov_doc.doc_id,
            "why": f"the test at {q3_end.isoformat()}, not at fiscal year end",
        }
    )

    # board minutes: the audited result, and a subsidiary's revenue (a wrong-entity decoy)
    ni = fmt_cell(c, "net_income", ledger.current_value(fact_id(c.cid, "net_income", fy)))
    rev_fid = fact_id(c.cid, main, fy)
    rev = _money(c, ledger.current_value(rev_fid))
    sub_rev = round(rev * float(rng.uniform(0.2, 0.35)))
    sub_name = f"{c.name.split(',')[0].split(' ')[0]} Holdings Europe Limited"
    minutes_date = c.calendar.year_end(fy) + dt.timedelta(days=75)
    min_q = {
        "dividend": (
            f"The Board declared a quarterly cash dividend of ${float(rng.integers(10, 60)) / 100:.2f} "
            "per share."
        ),
        "subsidiary": (
            f"The Board noted that {sub_name}, a wholly owned subsidiary, reported {labels[main].lower()} "
            f"of ${sub_rev:,} {c.unit} for fiscal {fy}."
        ),
        "audit": (
            f"The Audit Committee reported that the audited net income for fiscal {fy} was "
            f"${ni} {c.unit}, after the year-end audit adjustments."
        ),
    }
    minutes = DealDoc(
        f"{c.cid}-{fy}-minutes",
        "board_minutes",
        "docx",
        minutes_date,
        paragraphs=[
            f"{c.name}",
            f"Minutes of a Meeting of the Board of Directors held on {minutes_date.isoformat()}",
            f"Present: {', '.join(c.directors[:3])}; {c.ceo} (Chief Executive Officer); {c.cfo} "
            "(Chief Financial Officer).",
            min_q["audit"],
            min_q["subsidiary"],
            min_q["dividend"],
            "There being no further business, the meeting was adjourned.",
        ],
    )
    decoys.append(
        {
            "kind": "entity",
            "fact": rev_fid,
            "value": rev,
            "decoy_value": sub_rev,
            "doc": minutes.doc_id,
            "why": f"{sub_name}, a subsidiary, not the group",
        }
    )
    mail_q = (
        f"Net leverage at fiscal year end was {lev:.2f}x against the covenant maximum, and "
        f"interest coverage was {cov:.2f}x."
    )
    email = DealDoc(
        f"{c.cid}-{fy}-email",
        "email",
        "eml",
        fye + dt.timedelta(days=26),
        paragraphs=[
            "Dear members of the Board,",
            f"Please find attached the covenant compliance schedule for fiscal {fy}.",
            mail_q,
            f"Kind regards, {c.cfo}",
        ],
        attachment=cov_doc.doc_id,
    )
    conflicts[-1]["superseded"]["also_in"] = [email.doc_id]  # the schedule rides along
    quotes = {
        "credit:facility": (credit.doc_id, 1, credit_q["facility"]),
        "credit:margin": (credit.doc_id, 1, credit_q["margin"]),
        "credit:leverage": (credit.doc_id, 1, credit_q["leverage"]),
        "minutes:audit": (minutes.doc_id, 1, min_q["audit"]),
        "minutes:subsidiary": (minutes.doc_id, 1, min_q["subsidiary"]),
        "email:leverage": (email.doc_id, 1, mail_q),
    }
    facts = {
        "facility": facility,
        "margin_bps": margin,
        "max_leverage": max_lev,
        "min_coverage": min_cov,
        "leverage": lev,
        "coverage": cov,
        "maturity": maturity.isoformat(),
        "subsidiary": sub_name,
    }
    return DealBook(
        c,
        fy,
        [mgmt, cov_doc, minutes, credit, email],
        rows,
        quotes,
        facts,
        conflicts,
        decoys,
    )


def deal_books(ledger: Ledger) -> list[DealBook]:
    return [deal_book(ledger, c) for c in ledger.companies]


# ------------------------------------------------------------------------------- rendering


def _stable_zip(data: bytes) -> bytes:
    """Rewrite a zip with fixed timestamps and order, so the same content gives the same bytes."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in src.namelist():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            body = src.read(name)
            if name == "docProps/core.xml":  # writers stamp the save time here
                body = re.sub(
                    rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*(</dcterms:)",
                    rb"\g<1>2000-01-01T00:00:00Z\g<2>",
                    body,
                )
            dst.writestr(info, body)
    return out.getvalue()


def _xlsx(d: DealDoc) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.properties.created = _FIXED
    wb.properties.modified = _FIXED
    wb.properties.creator = "assay synth"
    first = True
    for name, rows in d.sheets.items():
        if first:
            ws = wb.active
            assert ws is not None
            ws.title = name
            first = False
        else:
            ws = wb.create_sheet(name)
        for r in rows:
            ws.append(r)
    buf = io.BytesIO()
    wb.save(buf)
    return _stable_zip(buf.getvalue())


def _docx(d: DealDoc) -> bytes:
    import docx

    doc = docx.Document()
    doc.core_properties.created = _FIXED
    doc.core_properties.modified = _FIXED
    doc.core_properties.last_printed = _FIXED
    doc.core_properties.author = "assay synth"
    for i, p in enumerate(d.paragraphs):
        if i == 0:
            doc.add_heading(p, 1)
        else:
            doc.add_paragraph(p)
    buf = io.BytesIO()
    doc.save(buf)
    return _stable_zip(buf.getvalue())


def render_deal_doc(d: DealDoc, book: DealBook, rendered: dict[str, bytes]) -> bytes:
    """The file bytes of `d` (an e-mail embeds its attachment, rendered first into `rendered`)."""
    if d.fmt == "xlsx":
        return _xlsx(d)
    if d.fmt == "docx":
        return _docx(d)
    c = book.c
    m = EmailMessage()
    m["From"] = f"{c.cfo} <cfo@{c.cid}.example>"
    m["To"] = f"Board of Directors <board@{c.cid}.example>"
    m["Date"] = f"{d.accepted.strftime('%a, %d %b %Y')} 09:00:00 +0000"
    m["Subject"] = f"{c.name}: covenant compliance, fiscal {book.fy}"
    m["Message-ID"] = f"<{d.doc_id}@{c.cid}.example>"
    m.set_content("\n\n".join(d.paragraphs) + "\n")
    assert d.attachment is not None
    m.add_attachment(
        rendered[d.attachment],
        maintype="application",
        subtype="vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        filename=f"{d.attachment}.xlsx",
    )
    m.set_boundary(f"=={d.doc_id}==")
    return bytes(m)


def deal_pages(d: DealDoc, book: DealBook) -> list[str]:
    """The pages a reader gets back from `d` (sheets: non-empty rows of cell texts), in memory."""
    from assay.corpus import cell_text

    if d.fmt == "xlsx":
        return [
            "\n".join(
                " ".join(t for t in (cell_text(v) for v in row) if t)
                for row in rows
                if any(cell_text(v) for v in row)
            )
            for rows in d.sheets.values()
        ]
    if d.fmt == "docx":
        return ["\n".join(d.paragraphs)]
    attached = next(x for x in book.docs if x.doc_id == d.attachment)
    return ["\n".join(d.paragraphs), *deal_pages(attached, book)]
