"""The room's ledger as a warehouse: the same companies and figures, in tables an analyst queries.

Tables (the schema is `WAREHOUSE_SCHEMA`, written beside the databases as
``warehouse.schema.json``):

``companies``       one row per company: ticker, name, industry (Software or Banking), fiscal
                    year end month (December, June or September for software companies)
``fiscal_periods``  every fiscal quarter and fiscal year of every company, named as the company
                    names them: a fiscal year by the calendar year in which it ends
``line_items``      the concepts facts are reported for (revenue, net interest income, CET1, ...)
``filings``         10-K, 10-Q and 10-K/A filings with their acceptance dates; an amendment names
                    the filing it amends and its amendment number
``facts``           every figure every filing reports: a 10-Q its quarter, a 10-K its year, its
                    fourth quarter and the prior year as comparatives, a restating 10-K/A the
                    restated figures. A figure restated quietly shows its new value in the next
                    10-K's comparative column. One figure can therefore have several rows; the
                    latest accepted one is the current figure
``segments``        the operating segments of the software companies (segment revenue facts)
``covenants``       debt covenants: a line item, a threshold, min or max, the dates in force
                    (one covenant per company is amended: the old row ends, a new one begins)
``customers``       customers with a status code, a region, signup and churn dates and an
                    annual value; some customers still carry status 'A' after a churn date was
                    recorded (what the glossary's "active customer" is for)

and one view, ``current_facts``: the latest reported row of every figure, accepted at any time
(it ignores acceptance dates: a question asked as of a date needs ``facts`` and ``filings``).

Everything comes from the seeded ledger (`assay.synth.facts_ledger`) and one more generator seeded from
the same seed (customers and covenants), so the same seed gives the same warehouse. Figures come
from `Ledger.value_as_of(fact, accepted_at)`: a filing shows what was known when it was accepted.
`build_warehouse` holds the rows in memory (`Warehouse`); `assay.synth.warehouse_files.write_warehouse`
writes DuckDB and SQLite files, the schema, the golden SQL entries (`assay.synth.warehouse_gold`)
and the test-suite variants (`assay.sql.suite`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.sql.schema import (
    Column,
    DatabaseSchema,
    Glossary,
    GlossaryTerm,
    Table,
    View,
)
from assay.synth.facts_ledger import (
    CONCEPTS,
    Company,
    Ledger,
    accepted_date,
    doc_id_for,
    fact_id,
)

__all__ = [
    "GLOSSARY",
    "WAREHOUSE_SCHEMA",
    "WAREHOUSE_VERSION",
    "Warehouse",
    "build_warehouse",
    "clean_rows",
]

WAREHOUSE_VERSION = "assay-warehouse/1"

_STATUS = ("A", "I", "P", "S")  # active, inactive, pending onboarding, suspended
_REGIONS = ("NA", "EMEA", "APAC", "LATAM")
FORMS = ("10-K", "10-Q", "10-K/A")


def _col(name: str, typ: str, desc: str = "", role: str = "attribute", **kw: Any) -> Column:
    return Column(name, typ, desc, role, **kw)


WAREHOUSE_SCHEMA_TABLES: tuple[Table, ...] = (
    Table(
        "companies",
        (
            _col("company_id", "INTEGER", "", "key"),
            _col("ticker", "TEXT", "stock ticker", "label", nullable=False),
            _col("name", "TEXT", "legal name", "label", nullable=False),
            _col("industry", "TEXT", "Software or Banking", nullable=False),
            _col(
                "fiscal_year_end_month",
                "INTEGER",
                "month (1-12) in which the fiscal year ends",
                "month",
                nullable=False,
            ),
            _col("state", "TEXT", "state of incorporation"),
            _col("cik", "TEXT", "SEC central index key", "label"),
        ),
        "one row per company",
        entity="companies",
    ),
    Table(
        "fiscal_periods",
        (
            _col("period_id", "INTEGER", "", "key"),
            _col("company_id", "INTEGER", "", "ref", references="companies.company_id"),
            _col(
                "fiscal_year",
                "INTEGER",
                "the company's name for the fiscal year (the calendar year it ends in)",
                nullable=False,
            ),
            _col("fiscal_quarter", "INTEGER", "1-4; NULL for the whole fiscal year"),
            _col("period_start", "DATE", "first day", "date", nullable=False),
            _col("period_end", "DATE", "last day", "date", nullable=False),
        ),
        "every fiscal quarter and fiscal year of every company",
        entity="companies",
    ),
    Table(
        "line_items",
        (
            _col("line_item_id", "INTEGER", "", "key"),
            _col("code", "TEXT", "short code, e.g. revenue, nii, net_income", nullable=False),
            _col("label", "TEXT", "label as printed in filings", nullable=False),
            _col("unit", "TEXT", "USD, percent, USD/share or count", nullable=False),
            _col("period_type", "TEXT", "duration or instant (a balance at period end)"),
        ),
        "the concepts figures are reported for",
    ),
    Table(
        "filings",
        (
            _col("filing_id", "INTEGER", "", "key"),
            _col("company_id", "INTEGER", "", "ref", references="companies.company_id"),
            _col("accession", "TEXT", "document id", "label", nullable=False),
            _col("form", "TEXT", "10-K, 10-Q or 10-K/A", nullable=False),
            _col("fiscal_year", "INTEGER", "fiscal year the filing reports on", nullable=False),
            _col("fiscal_quarter", "INTEGER", "1-3 for a 10-Q; NULL for a 10-K or 10-K/A"),
            _col("period_end", "DATE", "end of the period reported on", "date", nullable=False),
            _col("accepted_at", "DATE", "date the filing became public", "date", nullable=False),
            _col(
                "amends_filing_id",
                "INTEGER",
                "for a 10-K/A: the filing it amends",
                "ref",
                references="filings.filing_id",
            ),
            _col("amendment_no", "INTEGER", "0 for an original filing, 1, 2, ... for amendments"),
        ),
        "10-K, 10-Q and 10-K/A filings",
        entity="companies",
        deletable=True,
    ),
    Table(
        "segments",
        (
            _col("segment_id", "INTEGER", "", "key"),
            _col("company_id", "INTEGER", "", "ref", references="companies.company_id"),
            _col("name", "TEXT", "segment name", nullable=False),
        ),
        "operating segments",
        entity="companies",
    ),
    Table(
        "facts",
        (
            _col("fact_id", "INTEGER", "", "key"),
            _col("filing_id", "INTEGER", "", "ref", references="filings.filing_id"),
            _col("period_id", "INTEGER", "", "ref", references="fiscal_periods.period_id"),
            _col("line_item_id", "INTEGER", "", "ref", references="line_items.line_item_id"),
            _col(
                "segment_id",
                "INTEGER",
                "NULL for a company-wide figure",
                "ref",
                references="segments.segment_id",
            ),
            _col("value", "DOUBLE", "USD in whole dollars, percent as 11.2, counts", "measure"),
        ),
        "every figure every filing reports (one figure may be reported by several filings)",
        entity="companies",
    ),
    Table(
        "covenants",
        (
            _col("covenant_id", "INTEGER", "", "key"),
            _col("company_id", "INTEGER", "", "ref", references="companies.company_id"),
            _col("name", "TEXT", "", nullable=False),
            _col("line_item_id", "INTEGER", "", "ref", references="line_items.line_item_id"),
            _col("direction", "TEXT", "min: value must be at least the threshold; max: at most"),
            _col("threshold", "DOUBLE", "in the line item's unit", "measure"),
            _col("effective_from", "DATE", "", "date", nullable=False),
            _col("effective_to", "DATE", "NULL while in force", "date"),
        ),
        "debt covenants, tested at each fiscal quarter end",
        entity="companies",
        deletable=True,
    ),
    Table(
        "customers",
        (
            _col("customer_id", "INTEGER", "", "key"),
            _col("company_id", "INTEGER", "", "ref", references="companies.company_id"),
            _col("name", "TEXT", "", "label", nullable=False),
            _col("status", "TEXT", "status code", "category", domain=_STATUS),
            _col("region", "TEXT", "", "category", domain=_REGIONS),
            _col("signup_date", "DATE", "", "date", nullable=False),
            _col("churn_date", "DATE", "date a churn was recorded; NULL if none", "date"),
            _col("annual_value_usd", "DOUBLE", "annual contract value", "measure"),
        ),
        "customers of each company",
        entity="companies",
        deletable=True,
    ),
)

CURRENT_FACTS_SQL = (
    "SELECT company_id, period_id, line_item_id, segment_id, value, filing_id, accepted_at "
    "FROM (SELECT fl.company_id, f.period_id, f.line_item_id, f.segment_id, f.value, "
    "f.filing_id, fl.accepted_at, ROW_NUMBER() OVER (PARTITION BY f.period_id, "
    "f.line_item_id, f.segment_id ORDER BY fl.accepted_at DESC, fl.filing_id DESC) AS rn "
    "FROM facts AS f JOIN filings AS fl ON fl.filing_id = f.filing_id) AS ranked WHERE rn = 1"
)

GLOSSARY = Glossary(
    "2",
    (
        GlossaryTerm(
            "active customer",
            "a customer whose status is 'A' and who has no recorded churn date",
            "customers.status = 'A' AND customers.churn_date IS NULL",
            since="2",
        ),
        GlossaryTerm(
            "revenue",
            "total revenues (line item 'revenue')",
            "line_items.code = 'revenue'",
            applies_to="Software",
        ),
        GlossaryTerm(
            "revenue",
            "net interest income plus noninterest income (line items 'nii' and 'nonint_inc', "
            "summed)",
            "line_items.code IN ('nii', 'nonint_inc')",
            applies_to="Banking",
        ),
        GlossaryTerm(
            "fiscal year",
            "the company's own name for the year: fiscal_periods.fiscal_year, the calendar year "
            "in which it ends; never derive it from dates",
            "fiscal_periods.fiscal_year = :year AND fiscal_periods.fiscal_quarter IS NULL",
        ),
        GlossaryTerm(
            "reported figure",
            "the value from the latest accepted filing that reports the figure (a restatement "
            "or a later comparative replaces earlier values); as of a date, only filings "
            "accepted on or before that date count",
            "ROW_NUMBER() OVER (PARTITION BY facts.period_id, facts.line_item_id, "
            "facts.segment_id ORDER BY filings.accepted_at DESC) = 1",
        ),
        GlossaryTerm(
            "covenant breach",
            "at a fiscal quarter end within the covenant's effective dates (effective_to NULL: "
            "still in force), the reported figure of the covenant's line item is below the "
            "threshold of a 'min' covenant or above the threshold of a 'max' covenant",
            "(direction = 'min' AND value < threshold) OR (direction = 'max' AND value > "
            "threshold)",
        ),
    ),
    history=(
        {
            "version": "1",
            "term": "active customer",
            "sql": "customers.status = 'A'",
            "replaced_because": "status lags churn: a recorded churn date means churned",
        },
    ),
)

WAREHOUSE_SCHEMA = DatabaseSchema(
    "warehouse",
    WAREHOUSE_SCHEMA_TABLES,
    (
        View(
            "current_facts",
            CURRENT_FACTS_SQL,
            "the latest reported row of every figure, accepted at any time",
            (
                "company_id",
                "period_id",
                "line_item_id",
                "segment_id",
                "value",
                "filing_id",
                "accepted_at",
            ),
        ),
    ),
    GLOSSARY,
    "duckdb",
    (
        "Money is in whole US dollars whatever unit the filings print.",
        "An instant (a balance) at a fiscal year end is reported for both the fourth quarter "
        "and the fiscal year period.",
    ),
)


# ------------------------------------------------------------------------------------ rows


@dataclass
class Warehouse:
    """Every table's rows (dicts keyed by column name), the ledger they came from, and the
    lookups the golden entries are computed with."""

    ledger: Ledger
    tables: dict[str, list[dict[str, Any]]]
    schema: DatabaseSchema = WAREHOUSE_SCHEMA

    def __post_init__(self) -> None:
        t = self.tables
        self.company_by_id = {c["company_id"]: c for c in t["companies"]}
        self.item_by_code = {i["code"]: i for i in t["line_items"]}
        self.item_by_id = {i["line_item_id"]: i for i in t["line_items"]}
        self.filing_by_id = {f["filing_id"]: f for f in t["filings"]}
        self.period_by_key = {
            (p["company_id"], p["fiscal_year"], p["fiscal_quarter"]): p for p in t["fiscal_periods"]
        }
        self.period_by_id = {p["period_id"]: p for p in t["fiscal_periods"]}
        self.segment_by_id = {s["segment_id"]: s for s in t["segments"]}
        self._reports: dict[tuple[int, int, int | None], list[dict[str, Any]]] = {}
        for f in t["facts"]:
            self._reports.setdefault(
                (f["period_id"], f["line_item_id"], f["segment_id"]), []
            ).append(f)

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.tables[table]

    def companies(self, industry: str | None = None) -> list[dict[str, Any]]:
        return [
            c for c in self.tables["companies"] if industry is None or c["industry"] == industry
        ]

    def period(self, company_id: int, fy: int, fq: int | None) -> dict[str, Any] | None:
        return self.period_by_key.get((company_id, fy, fq))

    def reports(
        self,
        period_id: int,
        code: str,
        segment_id: int | None = None,
        *,
        as_of: dt.date | None = None,
    ) -> list[tuple[dt.date, int, float]]:
        """(accepted_at, filing_id, value) of every filing reporting the figure, oldest first."""
        item = self.item_by_code[code]["line_item_id"]
        out = []
        for f in self._reports.get((period_id, item, segment_id), []):
            filing = self.filing_by_id[f["filing_id"]]
            if as_of is None or filing["accepted_at"] <= as_of:
                out.append((filing["accepted_at"], filing["filing_id"], f["value"]))
        return sorted(out)

    def latest(
        self,
        company_id: int,
        fy: int,
        fq: int | None,
        code: str,
        segment_id: int | None = None,
        *,
        as_of: dt.date | None = None,
    ) -> float | None:
        """The reported figure: the latest accepted filing's value (as of a date, if given)."""
        p = self.period(company_id, fy, fq)
        if p is None:
            return None
        r = self.reports(p["period_id"], code, segment_id, as_of=as_of)
        return r[-1][2] if r else None

    def first_reported(self, company_id: int, fy: int, fq: int | None, code: str) -> float | None:
        p = self.period(company_id, fy, fq)
        if p is None:
            return None
        r = self.reports(p["period_id"], code)
        return r[0][2] if r else None

    def revenue(self, company_id: int, fy: int, fq: int | None = None) -> float | None:
        """Revenue by the glossary: total revenues (Software) or NII + noninterest income."""
        c = self.company_by_id[company_id]
        if c["industry"] == "Software":
            return self.latest(company_id, fy, fq, "revenue")
        a = self.latest(company_id, fy, fq, "nii")
        b = self.latest(company_id, fy, fq, "nonint_inc")
        return None if a is None or b is None else a + b


def _customer_name(rng: np.random.Generator, used: set[str]) -> str:
    first = ["Acme", "Blue", "Crest", "Delta", "Evergreen", "Falcon", "Granite", "Harbor", "Iris"]
    second = ["Foods", "Logistics", "Health", "Retail", "Energy", "Labs", "Partners", "Media"]
    third = ["Inc.", "LLC", "Group", "Co."]
    while True:
        name = (
            f"{first[int(rng.integers(len(first)))]} {second[int(rng.integers(len(second)))]} "
            f"{third[int(rng.integers(len(third)))]}"
        )
        if name not in used:
            used.add(name)
            return name
        name = f"{name} {int(rng.integers(2, 99))}"
        if name not in used:
            used.add(name)
            return name


def _filings_for(
    ledger: Ledger, c: Company
) -> list[tuple[str, str, int, int | None, dt.date, str | None, int]]:
    """(accession, form, fy, fq, accepted, amended accession, amendment number) per filing."""
    out: list[tuple[str, str, int, int | None, dt.date, str | None, int]] = []
    restating = {
        r.via
        for r in ledger.restatements.values()
        if not r.quiet and ledger.facts[r.fact_id].cid == c.cid
    }
    for fy in range(ledger.first_fy, ledger.last_fy + 1):
        ten_k = doc_id_for(c, "10-K", fy, None)
        out.append((ten_k, "10-K", fy, None, accepted_date(c, "10-K", fy, None), None, 0))
        for q in (1, 2, 3):
            out.append(
                (
                    doc_id_for(c, "10-Q", fy, q),
                    "10-Q",
                    fy,
                    q,
                    accepted_date(c, "10-Q", fy, q),
                    None,
                    0,
                )
            )
        if c.part3_by_amendment:
            did = doc_id_for(c, "10-K/A", fy, None, n=1)
            when = accepted_date(c, "10-K/A", fy, None, kind="part3")
            out.append((did, "10-K/A", fy, None, when, ten_k, 1))
        for n in (1, 2):
            did = doc_id_for(c, "10-K/A", fy, None, n=n)
            if did in restating:
                when = min(
                    r.effective
                    for r in ledger.restatements.values()
                    if r.via == did and not r.quiet
                )
                out.append((did, "10-K/A", fy, None, when, ten_k, n))
    return out


def build_warehouse(ledger: Ledger) -> Warehouse:
    """Every table of the warehouse from the ledger (see the module docs)."""
    rng = np.random.default_rng([ledger.seed, 27])
    t: dict[str, list[dict[str, Any]]] = {
        n: []
        for n in (
            "companies",
            "fiscal_periods",
            "line_items",
            "filings",
            "segments",
            "facts",
            "covenants",
            "customers",
        )
    }
    codes = list(CONCEPTS)
    for i, code in enumerate(codes, start=1):
        con = CONCEPTS[code]
        t["line_items"].append(
            {
                "line_item_id": i,
                "code": code,
                "label": con.label,
                "unit": con.unit,
                "period_type": con.period_type,
            }
        )
    item_id = {code: i for i, code in enumerate(codes, start=1)}
    period_id: dict[tuple[int, int, int | None], int] = {}
    seg_id: dict[tuple[int, str], int] = {}
    pending: list[tuple[str, int, str, int, int | None, str | None, float, dt.date]] = []
    filing_rows: list[dict[str, Any]] = []
    for n, c in enumerate(ledger.companies, start=1):
        t["companies"].append(
            {
                "company_id": n,
                "ticker": c.ticker,
                "name": c.name,
                "industry": "Software" if c.kind == "tech" else "Banking",
                "fiscal_year_end_month": c.calendar.fye_month,
                "state": c.state,
                "cik": c.cik,
                "cid": c.cid,  # not a column: the ledger's id, for lookups
            }
        )
        cal = c.calendar
        for fy in range(ledger.first_fy - 1, ledger.last_fy + 1):
            for fq in (1, 2, 3, 4, None):
                pid = len(t["fiscal_periods"]) + 1
                period_id[(n, fy, fq)] = pid
                t["fiscal_periods"].append(
                    {
                        "period_id": pid,
                        "company_id": n,
                        "fiscal_year": fy,
                        "fiscal_quarter": fq,
                        "period_start": cal.year_start(fy)
                        if fq is None
                        else cal.quarter_start(fy, fq),
                        "period_end": cal.year_end(fy) if fq is None else cal.quarter_end(fy, fq),
                    }
                )
        for s in c.segments:
            sid = len(t["segments"]) + 1
            seg_id[(n, s)] = sid
            t["segments"].append({"segment_id": sid, "company_id": n, "name": s})
        for acc, form, fy, fq, when, amends, amend_no in _filings_for(ledger, c):
            filing_rows.append(
                {
                    "company_id": n,
                    "accession": acc,
                    "form": form,
                    "fiscal_year": fy,
                    "fiscal_quarter": fq,
                    "period_end": cal.year_end(fy) if fq is None else cal.quarter_end(fy, fq),
                    "accepted_at": when,
                    "amends": amends,
                    "amendment_no": amend_no,
                }
            )
            # which facts this filing reports
            wanted: list[tuple[int, int | None]] = []
            if form == "10-Q":
                assert fq is not None
                wanted = [(fy, fq)]
            elif form == "10-K":
                wanted = [(fy, None), (fy, 4), (fy - 1, None)]
            for f in ledger.facts.values():
                if f.cid != c.cid:
                    continue
                if form == "10-K/A":
                    rs = ledger.restatements.get(f.fact_id)
                    if rs is None or rs.via != acc or rs.quiet:
                        continue
                elif (f.fy, f.fq) not in wanted:
                    continue
                value = ledger.value_as_of(f.fact_id, when)
                pending.append((acc, n, f.concept, f.fy, f.fq, f.segment, float(value), when))
    filing_rows.sort(key=lambda r: (r["company_id"], r["accepted_at"], r["accession"]))
    by_acc: dict[str, int] = {}
    for i, r in enumerate(filing_rows, start=1):
        by_acc[r["accession"]] = i
    for i, r in enumerate(filing_rows, start=1):
        amends = r.pop("amends")
        t["filings"].append(
            {
                "filing_id": i,
                **{k: r[k] for k in ("company_id", "accession", "form", "fiscal_year")},
                "fiscal_quarter": r["fiscal_quarter"],
                "period_end": r["period_end"],
                "accepted_at": r["accepted_at"],
                "amends_filing_id": None if amends is None else by_acc[amends],
                "amendment_no": r["amendment_no"],
            }
        )
    pending.sort(key=lambda p: (by_acc[p[0]], p[2], p[3], p[4] or 0, p[5] or ""))
    for acc, n, concept, fy, fq, seg, value, _when in pending:
        t["facts"].append(
            {
                "fact_id": len(t["facts"]) + 1,
                "filing_id": by_acc[acc],
                "period_id": period_id[(n, fy, fq)],
                "line_item_id": item_id[concept],
                "segment_id": None if seg is None else seg_id[(n, seg)],
                "value": value,
            }
        )
    _covenants(ledger, t, item_id, period_id, rng)
    _customers(ledger, t, rng)
    return Warehouse(ledger, t)


def _covenants(
    ledger: Ledger,
    t: dict[str, list[dict[str, Any]]],
    item_id: dict[str, int],
    period_id: dict[tuple[int, int, int | None], int],
    rng: np.random.Generator,
) -> None:
    """Two covenants per company with thresholds inside the range of its quarterly figures (so
    some quarters breach); the second covenant is amended once (a new threshold from a date)."""
    for n, c in enumerate(ledger.companies, start=1):
        specs = (
            [
                ("Minimum remaining performance obligations", "rpo", "min", 0.25),
                ("Minimum quarterly income from operations", "op_income", "min", 0.2),
            ]
            if c.kind == "tech"
            else [
                ("Minimum CET1 capital ratio", "cet1", "min", 0.3),
                ("Maximum quarterly net charge-offs", "nco", "max", 0.75),
            ]
        )
        start = c.calendar.year_start(ledger.first_fy)
        for k, (name, code, direction, q) in enumerate(specs):
            values = [
                float(ledger.current_value(fact_id(c.cid, code, fy, fq)))
                for fy in range(ledger.first_fy, ledger.last_fy + 1)
                for fq in (1, 2, 3, 4)
                if fact_id(c.cid, code, fy, fq) in ledger.facts
            ]
            precision = 1 if CONCEPTS[code].unit == "percent" else -6
            threshold = round(float(np.quantile(values, q)), precision)
            row = {
                "company_id": n,
                "name": name,
                "line_item_id": item_id[code],
                "direction": direction,
                "threshold": threshold,
                "effective_from": start,
                "effective_to": None,
            }
            if k == 1 and ledger.last_fy > ledger.first_fy:
                change = c.calendar.year_end(ledger.first_fy + 1) + dt.timedelta(
                    days=int(rng.integers(20, 60))
                )
                tighter = threshold * (1.05 if direction == "min" else 0.95)
                old = {**row, "effective_to": change - dt.timedelta(days=1)}
                new = {
                    **row,
                    "name": name + " (amended)",
                    "threshold": round(tighter, precision),
                    "effective_from": change,
                }
                rows = [old, new]
            else:
                rows = [row]
            for r in rows:
                t["covenants"].append({"covenant_id": len(t["covenants"]) + 1, **r})


def _customers(
    ledger: Ledger, t: dict[str, list[dict[str, Any]]], rng: np.random.Generator
) -> None:
    """Customers with status 'A' (active) or 'I' (inactive, churned). About one active customer
    in eight still has status 'A' after a churn date was recorded; statuses 'P' and 'S' are in
    the code list but no customer holds them."""
    used: set[str] = set()
    first = dt.date(ledger.first_fy - 2, 1, 1)
    last = dt.date(ledger.last_fy, 12, 31)
    span = (last - first).days
    for n, _c in enumerate(ledger.companies, start=1):
        for _ in range(int(rng.integers(24, 48))):
            signup = first + dt.timedelta(days=int(rng.integers(0, span - 60)))
            churned = rng.random() < 0.35
            churn = (
                signup + dt.timedelta(days=int(rng.integers(30, max(31, (last - signup).days))))
                if churned
                else None
            )
            status = "I" if churned else "A"
            if churned and rng.random() < 0.25:
                status = "A"  # the status lags the recorded churn
            t["customers"].append(
                {
                    "customer_id": len(t["customers"]) + 1,
                    "company_id": n,
                    "name": _customer_name(rng, used),
                    "status": status,
                    "region": _REGIONS[int(rng.integers(len(_REGIONS)))],
                    "signup_date": signup,
                    "churn_date": churn,
                    "annual_value_usd": float(int(rng.integers(5, 400)) * 1_000),
                }
            )


# ------------------------------------------------------------------------------------ files


def clean_rows(wh: Warehouse) -> dict[str, list[dict[str, Any]]]:
    """The tables as they are written (without the ledger ids kept for lookups)."""
    return {
        k: [{c: v for c, v in r.items() if c != "cid"} for r in rows]
        for k, rows in wh.tables.items()
    }


def fiscal_quarters(wh: Warehouse, company_id: int) -> Sequence[dict[str, Any]]:
    return [
        p
        for p in wh.rows("fiscal_periods")
        if p["company_id"] == company_id and p["fiscal_quarter"] is not None
    ]
