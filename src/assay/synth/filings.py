"""Filings written from the ledger: 10-K, 10-Q, 10-K/A (Part III; restatement), 8-K, earnings releases.

Every number a filing shows is read from the ledger with `Ledger.value_as_of(fact, accepted_at)`,
so a filing accepted after a restatement shows the restated figure in its comparative column and a
filing accepted before it shows the original. Every sentence or table row that states a ledger fact
carries a `Mark` (its facts and its quote), which is how the golden set knows where each answer is.

Doc ids and acceptance dates come from the ledger's filing schedule (`ledger.doc_id_for`,
`ledger.accepted_date`): the ledger needs them to date its restatements, and this module only
lays documents out on that schedule.
"""

from __future__ import annotations

import datetime as dt

from assay.synth.facts_ledger import (
    CONCEPTS,
    Company,
    Ledger,
    accepted_date,
    doc_id_for,
    fact_id,
    jitter,
)
from assay.synth.layout import Block, Doc, Mark, Row

__all__ = [
    "build_filings",
    "fmt_cell",
    "fmt_prose",
    "period_phrase",
]

_PCT_DECIMALS = {"nim": 2, "cet1": 1, "nrr": 0}
_ORD = {1: "first", 2: "second", 3: "third", 4: "fourth"}


# ---------------------------------------------------------------------------------------------
# formatting


def fmt_cell(c: Company, concept: str, v: float | int) -> str:
    """A table cell: money in the company's unit (negatives in parentheses), ratios with %."""
    unit = CONCEPTS[concept].unit
    if unit == "USD":
        n = round(v / c.scale)
        s = f"{abs(n):,}"
        return f"({s})" if n < 0 else s
    if unit == "percent":
        return f"{v:.{_PCT_DECIMALS.get(concept, 1)}f}%"
    if unit == "USD/share":
        return f"({abs(v):.2f})" if v < 0 else f"{v:.2f}"
    return f"{int(v):,}"


def fmt_prose(c: Company, concept: str, v: float | int) -> str:
    """How prose states the value: money as "$X million" (one decimal for thousand-unit filers)."""
    unit = CONCEPTS[concept].unit
    if unit == "USD":
        m = v / 1_000_000
        return f"${m:,.0f} million" if c.unit == "millions" else f"${m:,.1f} million"
    if unit == "USD/share":
        return f"${v:.2f}"
    return fmt_cell(c, concept, v)


def _date(d: dt.date) -> str:
    return f"{d.strftime('%B')} {d.day}, {d.year}"


def _short(d: dt.date) -> str:
    return f"{d.strftime('%b')} {d.day}, {d.year}"


def period_phrase(c: Company, fy: int) -> str:
    return f"fiscal {fy}" if c.kind == "tech" else f"{fy}"


def _fy_head(c: Company, fy: int) -> str:
    return f"Fiscal {fy}" if c.kind == "tech" else f"{fy}"


def _unit_line(c: Company) -> str:
    return f"(in {c.unit}, except per share data)"


def _pct_change(a: float, b: float) -> str:
    if not b:
        return "n/m"
    return f"{(a - b) / abs(b) * 100:.0f}%"


# ---------------------------------------------------------------------------------------------
# builder


class _Builder:
    def __init__(self, ledger: Ledger, c: Company, doc_id: str, when: dt.date):
        self.L = ledger
        self.c = c
        self.doc_id = doc_id
        self.when = when
        self.blocks: list[Block] = []

    def fid(self, concept: str, fy: int, fq: int | None = None, seg: str | None = None) -> str:
        return fact_id(self.c.cid, concept, fy, fq, seg)

    def v(self, fid: str) -> float | int:
        return self.L.value_as_of(fid, self.when)

    def cell(self, fid: str) -> str:
        return fmt_cell(self.c, fid.split(":")[1], self.v(fid))

    def prose(self, fid: str) -> str:
        return fmt_prose(self.c, fid.split(":")[1], self.v(fid))

    # blocks
    def title(self, text: str) -> None:
        self.blocks.append(Block("title", text))

    def h(self, text: str) -> None:
        self.blocks.append(Block("h", text))

    def br(self) -> None:
        self.blocks.append(Block("break"))

    def p(self, *sentences: str | tuple[str, tuple[str, ...], str]) -> None:
        """A paragraph of sentences; a (sentence, facts, role) tuple marks the sentence."""
        texts: list[str] = []
        marks: list[Mark] = []
        for s in sentences:
            if isinstance(s, tuple):
                text, facts, role = s
                marks.append(Mark(facts, text, role))
                texts.append(text)
            else:
                texts.append(s)
        self.blocks.append(Block("p", " ".join(texts), marks=marks))

    def table(
        self, title: str, header: list[str], rows: list[Row], unit_line: str | None = None
    ) -> None:
        self.blocks.append(
            Block(
                "table",
                title,
                header=header,
                unit_line=_unit_line(self.c) if unit_line is None else unit_line,
                rows=rows,
            )
        )

    def yoy(
        self,
        label: str,
        concept: str,
        fy: int,
        fq: int | None = None,
        seg: str | None = None,
        *,
        style: str = "",
        change: bool = False,
    ) -> Row:
        """A row of `concept` in fiscal year `fy` (quarter `fq`) beside a year earlier."""
        fids = [self.fid(concept, fy, fq, seg), self.fid(concept, fy - 1, fq, seg)]
        return self.row(label, fids, style=style, change=change)

    def row(
        self,
        label: str,
        fids: list[str],
        *,
        style: str = "",
        change: bool = False,
        role: str = "value",
    ) -> Row:
        cells = [self.cell(f) for f in fids]
        if change and len(fids) == 2:
            cells.append(_pct_change(float(self.v(fids[0])), float(self.v(fids[1]))))
        return Row(label, cells, style, tuple(fids), role)  # type: ignore[arg-type]

    def cover(self, form: str, period: str) -> None:
        c = self.c
        self.title("UNITED STATES SECURITIES AND EXCHANGE COMMISSION")
        self.p("Washington, D.C. 20549")
        self.title(f"FORM {form}")
        self.p(period)
        self.p(
            (f"Commission File Number: {c.file_number}", (f"{c.cid}:id:file_number",), "identifier")
        )
        self.title(c.name)
        self.p("(Exact name of registrant as specified in its charter)")
        self.p(
            f"State of incorporation: {c.state}.",
            (f"I.R.S. Employer Identification No. {c.ein}", (f"{c.cid}:id:ein",), "identifier"),
        )
        self.p(f"Principal executive offices: {c.hq_city}.")
        self.p(
            (
                f"Trading symbol: {c.ticker}. Name of exchange: {c.exchange}.",
                (f"{c.cid}:id:ticker",),
                "identifier",
            ),
            f"Central Index Key: {c.cik}.",
        )

    def doc(self, meta: dict[str, object]) -> Doc:
        return Doc(meta=meta, blocks=self.blocks)


def _meta(
    c: Company,
    doc_id: str,
    form: str,
    fy: int,
    fq: int | None,
    period_end: dt.date,
    accepted: dt.date,
    *,
    items: list[str] | None = None,
) -> dict[str, object]:
    """A filing's metadata; ``items`` are the items an amendment (of the year's 10-K) restates."""
    return {
        "doc_id": doc_id,
        "company": c.name,
        "ticker": c.ticker,
        "aliases": list(c.aliases),
        "sector": c.sector,
        "form": form,
        "fiscal_year": fy,
        "fiscal_quarter": fq,
        "period_end": period_end.isoformat(),
        "fiscal_year_end": c.calendar.fye,
        "accepted_at": accepted.isoformat(),
        "amends": doc_id_for(c, "10-K", fy, None) if items else None,
        "amended_items": items or [],
        "file": "",
        "version_date": accepted.isoformat(),
    }


# ---------------------------------------------------------------------------------------------
# 10-K


def _ten_k(L: Ledger, c: Company, fy: int) -> Doc:
    did = doc_id_for(c, "10-K", fy, None)
    when = accepted_date(c, "10-K", fy, None)
    b = _Builder(L, c, did, when)
    fye = c.calendar.year_end(fy)
    pfy = fy - 1
    b.cover(
        "10-K",
        f"ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT "
        f"OF 1934 for the fiscal year ended {_date(fye)}",
    )
    b.br()
    b.h("PART I")
    b.h("Item 1. Business")
    emp = b.fid("employees", fy)
    if c.kind == "tech":
        b.p(
            f"{c.name} provides cloud software that helps organizations manage and analyze their "
            f"operations. Our flagship {c.product} platform is sold on a subscription basis, "
            "generally under contracts with terms of one to three years.",
            f"We are headquartered in {c.hq_city}.",
        )
        b.p(
            (
                f"We manage our business in two operating segments, {c.segments[0]} and "
                f"{c.segments[1]}.",
                (f"{c.cid}:text:segments",),
                "narrative",
            ),
            "Our chief operating decision maker reviews segment revenue to allocate resources.",
        )
    else:
        bank = c.aliases[0]
        b.p(
            f"{c.name} is a bank holding company headquartered in {c.hq_city}. Through its "
            f"subsidiary bank, {bank} Bank, N.A., it provides deposit, lending and treasury "
            "services to businesses and consumers.",
            (f"Our lending is focused on {c.product}.", (f"{c.cid}:text:focus",), "narrative"),
        )
    b.p((f"As of {_date(fye)}, we had {b.cell(emp)} full-time employees.", (emp,), "value"))
    b.h("Item 1A. Risk Factors")
    b.p(
        "Our business is subject to numerous risks. The risks described below could materially "
        "and adversely affect our business, financial condition and results of operations."
    )
    b.p(
        (
            "A risk specific to our business is that " + c.risk + ".",
            (f"{c.cid}:text:risk",),
            "narrative",
        )
    )
    b.p(
        "Economic uncertainty, including inflation and changes in interest rates, may reduce "
        "demand for our products and services or increase our costs."
    )
    b.p(
        "We may be unable to attract and retain key personnel, and the loss of members of our "
        "management team could disrupt our business."
    )
    b.br()
    b.h("PART II")
    b.h(
        "Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations"
    )
    if c.kind == "tech":
        _tech_mdna(b, fy, pfy, fye)
    else:
        _bank_mdna(b, fy, pfy, fye)
    if fy == L.last_fy:
        lo, hi = L.guidance[c.cid]
        what = "total revenues" if c.kind == "tech" else "net interest income"
        b.h("Outlook")
        b.p(
            (
                f"For {period_phrase(c, fy + 1)}, we expect {what} of ${lo / 1e6:,.0f} million to "
                f"${hi / 1e6:,.0f} million.",
                (f"{c.cid}:text:guidance",),
                "narrative",
            ),
            "These expectations are forward-looking statements and actual results may differ.",
        )
    else:
        b.h("Outlook")
        b.p(
            "We expect continued investment in our business in the coming year. Forward-looking "
            "statements are subject to risks and uncertainties described in Item 1A."
        )
    b.br()
    b.h("Item 8. Financial Statements and Supplementary Data")
    if c.kind == "tech":
        _tech_statements(b, fy, pfy, fye)
    else:
        _bank_statements(b, fy, pfy, fye)
    b.h("PART III")
    if c.part3_by_amendment:
        b.p(
            "The information required by Items 10 through 14 of Part III will be filed by "
            "amendment to this Annual Report on Form 10-K within 120 days after the end of the "
            "fiscal year covered by this report."
        )
    else:
        b.p(
            "The information required by Items 10 through 14 of Part III is incorporated by "
            "reference to our definitive proxy statement for the annual meeting of stockholders."
        )
    return b.doc(_meta(c, did, "10-K", fy, None, fye, when))


def _tech_mdna(b: _Builder, fy: int, pfy: int, fye: dt.date) -> None:
    c = b.c
    b.h("Key Business Metrics")
    nrr, nrr0 = b.fid("nrr", fy), b.fid("nrr", pfy)
    lc = b.fid("large_cust", fy)
    b.p(
        (
            f"Our dollar-based net revenue retention rate was {b.cell(nrr)} as of {_date(fye)}, "
            f"compared with {b.cell(nrr0)} a year earlier.",
            (nrr, nrr0),
            "value",
        ),
        (
            f"We had {b.cell(lc)} customers with annual recurring revenue over $100,000 as of "
            f"{_date(fye)}.",
            (lc,),
            "value",
        ),
    )
    rpo = b.fid("rpo", fy)
    b.p(
        (
            f"Remaining performance obligations were {b.prose(rpo)} as of {_date(fye)}.",
            (rpo,),
            "value",
        ),
        "We expect to recognize approximately 60% of this amount as revenue over the next "
        "twelve months.",
    )
    b.h("Results of Operations")
    rows = [
        b.yoy("Subscription and support", "sub_rev", fy, change=True),
        b.yoy("Professional services and other", "svc_rev", fy, change=True),
        b.yoy("Total revenues", "revenue", fy, style="total", change=True),
        b.yoy("Income from operations", "op_income", fy, change=True),
        b.yoy("Net income", "net_income", fy, change=True),
    ]
    b.table("Selected results", [_fy_head(c, fy), _fy_head(c, pfy), "% change"], rows)
    s, s0 = b.fid("sub_rev", fy), b.fid("sub_rev", pfy)
    b.p(
        (
            f"Subscription and support revenue was {b.prose(s)} in {period_phrase(c, fy)}, "
            f"compared with {b.prose(s0)} in {period_phrase(c, pfy)}.",
            (s, s0),
            "value",
        ),
        "The increase was driven primarily by new customers and expansion within existing "
        "customers.",
    )
    seg_rows = [b.yoy(seg, "seg_rev", fy, None, seg) for seg in c.segments]
    seg_rows.append(
        Row(
            "Total reportable segments",
            [
                fmt_cell(c, "revenue", sum(b.v(b.fid("seg_rev", y, None, s_)) for s_ in c.segments))
                for y in (fy, pfy)
            ],
            "subtotal",
            # the segments sum to total revenues, so the subtotal row states them too
            (b.fid("revenue", fy), b.fid("revenue", pfy)),
        )
    )
    seg_rows.append(b.yoy("Total revenues", "revenue", fy, style="total"))
    b.table("Revenue by segment", [_fy_head(c, fy), _fy_head(c, pfy)], seg_rows)


def _bank_mdna(b: _Builder, fy: int, pfy: int, fye: dt.date) -> None:
    c = b.c
    b.h("Net Interest Income")
    rows = [
        b.yoy("Net interest income", "nii", fy, change=True),
        b.yoy("Net interest margin", "nim", fy),
        b.yoy("Noninterest income", "nonint_inc", fy, change=True),
        b.yoy("Provision for credit losses", "provision", fy, change=True),
        b.yoy("Net income", "net_income", fy, change=True),
    ]
    b.table("Summary of results", [_fy_head(c, fy), _fy_head(c, pfy), "% change"], rows)
    nim, nim0 = b.fid("nim", fy), b.fid("nim", pfy)
    b.p(
        (
            f"Net interest margin was {b.cell(nim)} for {fy}, compared with {b.cell(nim0)} for "
            f"{pfy}.",
            (nim, nim0),
            "value",
        ),
        "Changes in the margin reflected the repricing of loans and deposits.",
    )
    b.h("Credit Quality")
    pr, nco = b.fid("provision", fy), b.fid("nco", fy)
    crit = b.fid("criticized", fy)
    b.p(
        (f"The provision for credit losses was {b.prose(pr)} for {fy}.", (pr,), "value"),
        (f"Net charge-offs were {b.prose(nco)} for {fy}.", (nco,), "value"),
        (f"Criticized loans totaled {b.prose(crit)} as of {_date(fye)}.", (crit,), "value"),
    )
    b.h("Capital")
    cet, cet0 = b.fid("cet1", fy), b.fid("cet1", pfy)
    b.p(
        (
            f"Our Common Equity Tier 1 capital ratio was {b.cell(cet)} as of {_date(fye)}, "
            f"compared with {b.cell(cet0)} a year earlier.",
            (cet, cet0),
            "value",
        ),
        "We remain well capitalized under applicable regulatory requirements.",
    )


def _tech_statements(b: _Builder, fy: int, pfy: int, fye: dt.date) -> None:
    c = b.c
    costs = [
        Row(
            "Total costs and expenses",
            [
                fmt_cell(c, "revenue", b.v(b.fid("revenue", y)) - b.v(b.fid("op_income", y)))
                for y in (fy, pfy)
            ],
        )
    ]
    rows = [
        b.yoy("Subscription and support", "sub_rev", fy),
        b.yoy("Professional services and other", "svc_rev", fy),
        b.yoy("Total revenues", "revenue", fy, style="total"),
        *costs,
        b.yoy("Income from operations", "op_income", fy),
        b.yoy("Net income", "net_income", fy, style="total"),
        b.yoy("Diluted earnings per share", "eps", fy),
    ]
    b.table("Consolidated Statements of Operations", [_fy_head(c, fy), _fy_head(c, pfy)], rows)
    b.h("Note 3. Revenue")
    rpo_rows = [b.yoy("Remaining performance obligations", "rpo", fy)]
    b.table(
        "Remaining performance obligations",
        [_short(fye), _short(c.calendar.year_end(pfy))],
        rpo_rows,
        unit_line=f"(in {c.unit})",
    )
    b.h("Note 12. Segment Information")
    seg_rows = [
        b.row(f"{seg} revenue", [b.fid("seg_rev", fy, None, seg), b.fid("seg_rev", pfy, None, seg)])
        for seg in c.segments
    ]
    seg_rows.append(b.yoy("Total revenues", "revenue", fy, style="total"))
    b.table("Revenue by reportable segment", [_fy_head(c, fy), _fy_head(c, pfy)], seg_rows)


def _bank_statements(b: _Builder, fy: int, pfy: int, fye: dt.date) -> None:
    c = b.c
    rows = [
        b.yoy("Net interest income", "nii", fy),
        b.yoy("Provision for credit losses", "provision", fy),
        b.yoy("Noninterest income", "nonint_inc", fy),
        b.yoy("Net income", "net_income", fy, style="total"),
        b.yoy("Diluted earnings per share", "eps", fy),
    ]
    b.table("Consolidated Statements of Income", [_fy_head(c, fy), _fy_head(c, pfy)], rows)
    bs = [
        b.yoy("Loans held for investment", "loans", fy),
        b.yoy("Total deposits", "deposits", fy),
    ]
    b.table(
        "Consolidated Balance Sheets (selected)",
        [_short(fye), _short(c.calendar.year_end(pfy))],
        bs,
        unit_line=f"(in {c.unit})",
    )
    b.h("Note 5. Allowance for Credit Losses")
    al = [
        b.yoy("Provision for credit losses", "provision", fy),
        b.yoy("Net charge-offs", "nco", fy),
    ]
    b.table(
        "Allowance activity", [_fy_head(c, fy), _fy_head(c, pfy)], al, unit_line=f"(in {c.unit})"
    )
    cap = [b.yoy("Common equity tier 1 capital ratio", "cet1", fy)]
    b.table(
        "Note 14. Regulatory Capital",
        [_short(fye), _short(c.calendar.year_end(pfy))],
        cap,
        unit_line="",
    )


# ---------------------------------------------------------------------------------------------
# 10-Q and earnings release


def _ten_q(L: Ledger, c: Company, fy: int, q: int) -> Doc:
    did = doc_id_for(c, "10-Q", fy, q)
    when = accepted_date(c, "10-Q", fy, q)
    b = _Builder(L, c, did, when)
    qe = c.calendar.quarter_end(fy, q)
    pqe = c.calendar.quarter_end(fy - 1, q)
    pfye = c.calendar.year_end(fy - 1)
    b.cover(
        "10-Q",
        f"QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE "
        f"ACT OF 1934 for the quarterly period ended {_date(qe)}",
    )
    b.br()
    b.h("PART I. FINANCIAL INFORMATION")
    b.h("Item 1. Financial Statements")
    hdr = [_short(qe), _short(pqe)]
    if c.kind == "tech":
        rows = [
            b.yoy("Subscription and support", "sub_rev", fy, q),
            b.yoy("Professional services and other", "svc_rev", fy, q),
            b.yoy("Total revenues", "revenue", fy, q, style="total"),
            b.yoy("Income from operations", "op_income", fy, q),
            b.yoy("Net income", "net_income", fy, q),
            b.yoy("Diluted earnings per share", "eps", fy, q),
        ]
        b.table("Condensed Consolidated Statements of Operations - Three Months Ended", hdr, rows)
        seg = [b.yoy(s, "seg_rev", fy, q, s) for s in c.segments]
        seg.append(b.yoy("Total revenues", "revenue", fy, q, style="total"))
        b.table("Revenue by segment - Three Months Ended", hdr, seg)
        rpo_rows = [
            b.row("Remaining performance obligations", [b.fid("rpo", fy, q), b.fid("rpo", fy - 1)])
        ]
        b.table(
            "Remaining performance obligations",
            [_short(qe), _short(pfye)],
            rpo_rows,
            unit_line=f"(in {c.unit})",
        )
    else:
        rows = [
            b.yoy("Net interest income", "nii", fy, q),
            b.yoy("Provision for credit losses", "provision", fy, q),
            b.yoy("Noninterest income", "nonint_inc", fy, q),
            b.yoy("Net income", "net_income", fy, q),
            b.yoy("Diluted earnings per share", "eps", fy, q),
        ]
        b.table("Condensed Consolidated Statements of Income - Three Months Ended", hdr, rows)
        bs = [
            b.row("Loans held for investment", [b.fid("loans", fy, q), b.fid("loans", fy - 1)]),
            b.row("Total deposits", [b.fid("deposits", fy, q), b.fid("deposits", fy - 1)]),
        ]
        b.table(
            "Condensed Consolidated Balance Sheets (selected)",
            [_short(qe), _short(pfye)],
            bs,
            unit_line=f"(in {c.unit})",
        )
    b.br()
    b.h(
        "Item 2. Management's Discussion and Analysis of Financial Condition and Results of Operations"
    )
    ordq = f"the {_ORD[q]} quarter of {period_phrase(c, fy)}"
    if c.kind == "tech":
        r, r0 = b.fid("revenue", fy, q), b.fid("revenue", fy - 1, q)
        b.p(
            (
                f"Total revenues were {b.prose(r)} for {ordq}, compared with {b.prose(r0)} for the "
                "same quarter a year earlier.",
                (r, r0),
                "value",
            ),
            "Growth reflected subscription revenue from new and existing customers.",
        )
        if q == 2:
            lc = b.fid("large_cust", fy, 2)
            b.p(
                (
                    f"We had {b.cell(lc)} customers with annual recurring revenue over $100,000 as of "
                    f"{_date(qe)}.",
                    (lc,),
                    "value",
                )
            )
    else:
        nim = b.fid("nim", fy, q)
        b.p(
            (f"Net interest margin was {b.cell(nim)} for {ordq}.", (nim,), "value"),
            "The margin reflected changes in deposit costs and loan yields.",
        )
        nco = b.fid("nco", fy, q)
        b.p((f"Net charge-offs were {b.prose(nco)} for {ordq}.", (nco,), "value"))
        cet = b.fid("cet1", fy, q)
        b.p(
            (
                f"Our Common Equity Tier 1 capital ratio was {b.cell(cet)} as of {_date(qe)}.",
                (cet,),
                "value",
            )
        )
        if q == 2:
            cr = b.fid("criticized", fy, 2)
            b.p((f"Criticized loans totaled {b.prose(cr)} as of {_date(qe)}.", (cr,), "value"))
    b.h("Item 4. Controls and Procedures")
    b.p(
        "Our disclosure controls and procedures were effective as of the end of the period covered "
        "by this report."
    )
    return b.doc(_meta(c, did, "10-Q", fy, q, qe, when))


def _earnings(L: Ledger, c: Company, fy: int, q: int) -> Doc:
    did = doc_id_for(c, "EARNINGS", fy, q)
    when = accepted_date(c, "EARNINGS", fy, q)
    b = _Builder(L, c, did, when)
    qe = c.calendar.quarter_end(fy, q)
    pqe = c.calendar.quarter_end(fy - 1, q)
    what = f"{_ORD[q].capitalize()} Quarter" + (" and Full Year" if q == 4 else "")
    b.title(f"{c.name} Reports {what} {'Fiscal ' if c.kind == 'tech' else ''}{fy} Results")
    venue = "NYSE" if c.kind == "bank" else "Nasdaq"
    b.p(
        f"{c.hq_city} - {_date(when)} -",
        (
            f"{c.name} ({venue}: {c.ticker}) today announced financial results for the quarter ended "
            f"{_date(qe)}.",
            (f"{c.cid}:id:ticker",),
            "identifier",
        ),
    )
    main = "revenue" if c.kind == "tech" else "nii"
    m, m0 = b.fid(main, fy, q), b.fid(main, fy - 1, q)
    ni = b.fid("net_income", fy, q)
    word = "Total revenues" if c.kind == "tech" else "Net interest income"
    b.p(
        (
            f"{word} for the quarter were {b.prose(m)}, compared with {b.prose(m0)} a year ago.",
            (m, m0),
            "value",
        ),
        (f"Net income for the quarter was {b.prose(ni)}.", (ni,), "value"),
        f'"We executed well this quarter," said {c.ceo}, Chief Executive Officer.',
    )
    hdr = [_short(qe), _short(pqe)]
    if c.kind == "tech":
        rows = [
            b.yoy("Subscription and support", "sub_rev", fy, q),
            b.yoy("Total revenues", "revenue", fy, q, style="total"),
            b.yoy("Income from operations", "op_income", fy, q),
            b.yoy("Net income", "net_income", fy, q),
        ]
    else:
        rows = [
            b.yoy("Net interest income", "nii", fy, q),
            b.yoy("Net interest margin", "nim", fy, q),
            b.yoy("Provision for credit losses", "provision", fy, q),
            b.yoy("Net charge-offs", "nco", fy, q),
            b.yoy("Net income", "net_income", fy, q),
        ]
    b.table("Three Months Ended", hdr, rows)
    if q == 4:
        fr = [
            b.yoy(word, main, fy),
            b.yoy("Net income", "net_income", fy),
        ]
        b.table(
            "Fiscal Year Ended" if c.kind == "tech" else "Year Ended",
            [_fy_head(c, fy), _fy_head(c, fy - 1)],
            fr,
        )
    b.p(
        f"{c.name} will host a conference call to discuss these results. Investor contact: "
        f"investors@{c.cid}.example.com."
    )
    return b.doc(_meta(c, did, "EARNINGS", fy, q, qe, when))


def _eightk_cover(L: Ledger, c: Company, did: str, when: dt.date, item: str) -> _Builder:
    b = _Builder(L, c, did, when)
    b.title("UNITED STATES SECURITIES AND EXCHANGE COMMISSION")
    b.title("FORM 8-K")
    b.p(
        f"CURRENT REPORT Pursuant to Section 13 or 15(d) of the Securities Exchange Act of 1934. "
        f"Date of Report: {_date(when)}."
    )
    b.p(
        (f"{c.name} (trading symbol {c.ticker}).", (f"{c.cid}:id:ticker",), "identifier"),
        (f"Commission File Number: {c.file_number}.", (f"{c.cid}:id:file_number",), "identifier"),
    )
    b.h(item)
    return b


def _eightk_earnings(L: Ledger, c: Company, fy: int, q: int) -> Doc:
    did = doc_id_for(c, "8-K", fy, q, kind="earnings")
    when = accepted_date(c, "8-K", fy, q, kind="earnings")
    qe = c.calendar.quarter_end(fy, q)
    b = _eightk_cover(L, c, did, when, "Item 2.02 Results of Operations and Financial Condition")
    b.p(
        f"On {_date(when)}, {c.name} issued a press release announcing its financial results for "
        f"the quarter ended {_date(qe)}. A copy of the press release is furnished as Exhibit 99.1."
    )
    b.h("Item 9.01 Financial Statements and Exhibits")
    b.p(f"Exhibit 99.1: Press release of {c.name} dated {_date(when)}.")
    return b.doc(_meta(c, did, "8-K", fy, q, qe, when))


def _eightk_officer(L: Ledger, c: Company) -> Doc:
    fy, when = L.officer_change[c.cid]
    did = doc_id_for(c, "8-K", fy, None, kind="officer")
    b = _eightk_cover(L, c, did, when, "Item 5.02 Departure of Directors or Certain Officers")
    b.p(
        (
            f"On {_date(when)}, {c.cfo} informed the Board of Directors of the decision to resign as "
            "Chief Financial Officer.",
            (f"{c.cid}:text:cfo_out",),
            "narrative",
        ),
        (
            f"The Board appointed {c.new_cfo} as Chief Financial Officer, effective immediately.",
            (f"{c.cid}:text:cfo_in",),
            "narrative",
        ),
        f"{c.new_cfo} previously served as the company's Corporate Controller.",
    )
    return b.doc(_meta(c, did, "8-K", fy, None, when, when))


def _eightk_meeting(L: Ledger, c: Company, fy: int) -> Doc:
    did = doc_id_for(c, "8-K", fy, None, kind="meeting")
    when = accepted_date(c, "8-K", fy, None, kind="meeting")
    b = _eightk_cover(
        L, c, did, when, "Item 5.07 Submission of Matters to a Vote of Security Holders"
    )
    b.p(
        f"At the annual meeting of stockholders held on {_date(when - dt.timedelta(days=2))}, "
        "stockholders elected each nominee to the Board of Directors and approved, on an advisory "
        "basis, the compensation of the named executive officers."
    )
    rows = [
        Row(
            d,
            [f"{jitter(did + d, 40, 90) * 1_000_000:,}", f"{jitter(d + did, 1, 9) * 100_000:,}"],
        )
        for d in c.directors
    ]
    b.table("Election of directors", ["For", "Withheld"], rows, unit_line="(votes)")
    return b.doc(_meta(c, did, "8-K", fy, None, when, when))


def _eightk_capital(L: Ledger, c: Company, fy: int) -> Doc:
    kind = "dividend" if c.kind == "bank" else "buyback"
    did = doc_id_for(c, "8-K", fy, None, kind=kind)
    when = accepted_date(c, "8-K", fy, None, kind=kind)
    b = _eightk_cover(L, c, did, when, "Item 8.01 Other Events")
    if kind == "dividend":
        d = L.dividend[(c.cid, fy)]
        b.p(
            (
                f"On {_date(when)}, the Board of Directors declared a quarterly cash dividend of "
                f"${d:.2f} per common share.",
                (f"{c.cid}:text:dividend:FY{fy}",),
                "value",
            ),
            f"The dividend is payable to holders of record at the close of business on {_date(when + dt.timedelta(days=14))}.",
        )
    else:
        amt = L.buyback[(c.cid, fy)]
        b.p(
            (
                f"On {_date(when)}, the Board of Directors authorized the repurchase of up to "
                f"${amt / 1e6:,.0f} million of common stock.",
                (f"{c.cid}:text:buyback:FY{fy}",),
                "value",
            ),
            "Repurchases may be made in the open market or in privately negotiated transactions.",
        )
    return b.doc(_meta(c, did, "8-K", fy, None, when, when))


# ---------------------------------------------------------------------------------------------
# 10-K/A


def _part3(L: Ledger, c: Company, fy: int) -> Doc:
    did = doc_id_for(c, "10-K/A", fy, None, n=1)
    when = accepted_date(c, "10-K/A", fy, None, kind="part3")
    fye = c.calendar.year_end(fy)
    b = _Builder(L, c, did, when)
    b.cover("10-K/A (Amendment No. 1)", f"for the fiscal year ended {_date(fye)}")
    b.h("Explanatory Note")
    b.p(
        f"This Amendment No. 1 amends the Annual Report on Form 10-K for the fiscal year ended "
        f"{_date(fye)}.",
        (
            "It is filed solely to include the Part III information (Items 10 through 14).",
            (f"{c.cid}:text:amendment:{did}",),
            "narrative",
        ),
        "No other part of the original report is amended.",
    )
    b.h("Item 10. Directors, Executive Officers and Corporate Governance")
    rows = [Row(d, ["CEO, Director" if d == c.ceo else "Director"]) for d in c.directors]
    b.table("Board of Directors", ["Position"], rows, unit_line="")
    b.h("Item 11. Executive Compensation")
    pay = L.ceo_pay[(c.cid, fy)]
    b.p(
        (
            f"Total compensation of {c.ceo}, our Chief Executive Officer, was ${pay:,} for "
            f"{period_phrase(c, fy)}.",
            (f"{c.cid}:text:ceo_pay:FY{fy}",),
            "value",
        ),
        "Compensation consisted of base salary, an annual cash incentive and equity awards.",
    )
    b.h("Items 12 through 14")
    b.p(
        "Security ownership, related transactions and principal accountant fees are described in "
        "the tables that follow in the original proxy disclosures."
    )
    return b.doc(_meta(c, did, "10-K/A", fy, None, fye, when, items=["Part III"]))


def _restatement(L: Ledger, c: Company, fy: int, did: str) -> Doc:
    rs = [r for r in L.restatements.values() if r.via == did and not r.quiet]
    when = rs[0].effective
    n = int(did.rsplit("10ka", 1)[1])
    fye = c.calendar.year_end(fy)
    b = _Builder(L, c, did, when)
    b.cover(f"10-K/A (Amendment No. {n})", f"for the fiscal year ended {_date(fye)}")
    b.h("Explanatory Note")
    ni = fact_id(c.cid, "net_income", fy)
    old = fmt_prose(c, "net_income", L.facts[ni].value)
    b.p(
        (
            f"This Amendment No. {n} restates our consolidated financial statements for "
            f"{period_phrase(c, fy)} to correct an error in {c.restatement_cause}.",
            (f"{c.cid}:text:amendment:{did}",),
            "narrative",
        ),
        (
            f"As restated, net income for {period_phrase(c, fy)} was {b.prose(ni)}, compared with "
            f"{old} as previously reported.",
            (ni,),
            "restated",
        ),
    )
    b.h("Item 8. Financial Statements and Supplementary Data (As Restated)")
    concepts = (
        ["op_income", "net_income", "eps"]
        if c.kind == "tech"
        else ["provision", "net_income", "eps"]
    )
    rows: list[Row] = []
    for con in concepts:
        f = fact_id(c.cid, con, fy)
        r = L.restatements.get(f)
        if r is None:  # e.g. diluted EPS unchanged at the cent
            continue
        diff = r.new - r.old
        adj = fmt_cell(c, con, round(diff, 2) if con == "eps" else diff)
        rows.append(
            Row(
                CONCEPTS[con].label,
                [fmt_cell(c, con, r.old), adj, fmt_cell(c, con, r.new)],
                "",
                (f,),
                "restated",
            )
        )
    b.table(
        f"Restated amounts, {period_phrase(c, fy)}",
        ["As Reported", "Adjustment", "As Restated"],
        rows,
    )
    b.p("The restatement had no effect on total revenues or on cash flows.")
    return b.doc(_meta(c, did, "10-K/A", fy, None, fye, when, items=["Item 8"]))


# ---------------------------------------------------------------------------------------------


def build_filings(L: Ledger) -> list[Doc]:
    """Every filing of every company, ordered by (company, acceptance date, doc id)."""
    docs: list[Doc] = []
    restatement_docs = sorted(
        {
            (r.via, L.facts[r.fact_id].cid, L.facts[r.fact_id].fy)
            for r in L.restatements.values()
            if not r.quiet
        }
    )
    for c in L.companies:
        for fy in range(L.first_fy, L.last_fy + 1):
            docs.append(_ten_k(L, c, fy))
            for q in (1, 2, 3, 4):
                if q < 4:
                    docs.append(_ten_q(L, c, fy, q))
                docs.append(_earnings(L, c, fy, q))
                docs.append(_eightk_earnings(L, c, fy, q))
            docs.append(_eightk_meeting(L, c, fy))
            docs.append(_eightk_capital(L, c, fy))
            if c.part3_by_amendment:
                docs.append(_part3(L, c, fy))
        docs.append(_eightk_officer(L, c))
        for did, cid, fy in restatement_docs:
            if cid == c.cid:
                docs.append(_restatement(L, c, fy, did))
    docs.sort(key=lambda d: (str(d.meta["ticker"]), str(d.meta["accepted_at"]), d.doc_id))
    seen: set[str] = set()
    for d in docs:
        if d.doc_id in seen:
            raise AssertionError(f"duplicate doc id {d.doc_id}")
        seen.add(d.doc_id)
    return docs
