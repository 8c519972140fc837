"""Gold SQL entries for the warehouse, by construction: every question comes with its gold query
and with its expected result computed in Python from the warehouse's rows (not by running the
query), so `assay validate` running the gold query against the database checks one against the
other.

Categories (the `category` of each entry):

``aggregation``          counts, sums, averages and maxima over one company or a sector
``joins``                answers that need two or more tables (segments, covenants, amendments)
``time_window``          filings accepted in a window, customers who signed up or churned in a
                         calendar year, trailing four fiscal quarters
``business_definition``  terms from the versioned glossary: active customer, revenue (a bank's
                         is net interest income plus noninterest income), covenant breach
``fiscal_calendar``      June and September year ends: a calendar year is not a fiscal year, the
                         quarter that ended on a date, when a fiscal year began and ended
``restatement``          a figure as reported by the latest filing accepted by a date, as
                         originally reported, and including restatements
``as_of``                the most recent figure visible on a date (filings accepted later are
                         invisible); the entry's `as_of` is that date
``unanswerable``         a column or table the schema lacks (expected behaviour: refuse)

Each entry's `sql.database` is ``warehouse.duckdb`` (relative to the dataset file).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from assay.synth.warehouse import Warehouse

__all__ = ["CATEGORIES", "build_gold_entries"]

CATEGORIES = (
    "aggregation",
    "joins",
    "time_window",
    "business_definition",
    "fiscal_calendar",
    "restatement",
    "as_of",
    "unanswerable",
)

Row = list[Any]

_LATEST_AS_OF = """WITH visible AS (
  SELECT f.period_id, f.line_item_id, f.segment_id, f.value,
         ROW_NUMBER() OVER (PARTITION BY f.period_id, f.line_item_id, f.segment_id
                            ORDER BY fl.accepted_at DESC, fl.filing_id DESC) AS rn
  FROM facts AS f JOIN filings AS fl ON fl.filing_id = f.filing_id
  WHERE fl.accepted_at <= DATE '{date}')"""

# how the gold queries join the warehouse's tables (each written once)
_CF = (
    "FROM current_facts AS cf JOIN companies AS c ON c.company_id = cf.company_id "
    "JOIN fiscal_periods AS p ON p.period_id = cf.period_id "
    "JOIN line_items AS li ON li.line_item_id = cf.line_item_id"
)
"""Today's figures (the ``current_facts`` view) with their company, period and line item."""

_V_JOINS = (
    "JOIN fiscal_periods AS p ON p.period_id = v.period_id "
    "JOIN companies AS c ON c.company_id = p.company_id "
    "JOIN line_items AS li ON li.line_item_id = v.line_item_id"
)
"""A fact ``v`` (of ``visible``, ``ranked``, ``facts`` or ``current_facts``) with its period,
company and line item."""

_CU = "FROM customers AS cu JOIN companies AS c ON c.company_id = cu.company_id"
_FL = "FROM filings AS fl JOIN companies AS c ON c.company_id = fl.company_id"

_REVENUE = (
    "((c.industry = 'Software' AND li.code = 'revenue') "
    "OR (c.industry = 'Banking' AND li.code IN ('nii', 'nonint_inc')))"
)
"""The glossary's revenue (version 2): a software firm's total revenues, a bank's net interest
income plus noninterest income."""


def _visible_on(when: dt.date, select: str, where: str) -> str:
    """``SELECT select`` over the latest value of each fact accepted by ``when`` (``v``, joined
    to its period, company and line item), ``WHERE where``."""
    return (
        _LATEST_AS_OF.format(date=when.isoformat())
        + f" SELECT {select} FROM visible AS v {_V_JOINS} WHERE v.rn = 1 AND {where}"
    )


def _in_year(column: str, year: int) -> str:
    """``column`` (a date) falls in calendar year ``year``."""
    return f"{column} >= DATE '{year}-01-01' AND {column} < DATE '{year + 1}-01-01'"


def _entry(
    eid: str,
    category: str,
    query: str,
    sql: str | list[str] | None,
    columns: list[str],
    rows: list[Row],
    *,
    semantics: str = "bag",
    as_of: dt.date | None = None,
    meta: dict[str, Any] | None = None,
    missing: str | None = None,
    column_order: bool = False,
) -> dict[str, Any]:
    gold: dict[str, Any] = {
        "queries": [] if sql is None else ([sql] if isinstance(sql, str) else sql),
        "dialect": "duckdb",
        "database": "warehouse.duckdb",
        "semantics": semantics,
        "glossary_version": "2",
    }
    if sql is not None:
        gold["result"] = {"columns": columns, "rows": rows}
    if column_order:
        gold["column_order"] = True
    if missing:
        gold["missing"] = missing
    out: dict[str, Any] = {
        "id": eid,
        "query": query,
        "category": category,
        "source": "synthetic",
        "label_tier": "gold",  # the warehouse's answers are computed from the rows it wrote
        "sql": gold,
        "metadata": {"family": eid.split(":")[1], **(meta or {})},
    }
    if as_of is not None:
        out["as_of"] = as_of.isoformat()
    if sql is None:
        out["answerable"] = False
        out["expected_behavior"] = "refuse"
    return out


def _money(v: float | None) -> float | None:
    return None if v is None else float(v)


class _Gen:
    """Helpers shared by the families: the warehouse, the years, the companies."""

    def __init__(self, wh: Warehouse, rng: np.random.Generator):
        self.wh = wh
        self.rng = rng
        self.first = wh.ledger.first_fy
        self.last = wh.ledger.last_fy
        self.years = list(range(self.first, self.last + 1))

    def companies(self, industry: str | None = None) -> list[dict[str, Any]]:
        return self.wh.companies(industry)

    def off_calendar(self) -> list[dict[str, Any]]:
        return [c for c in self.wh.companies() if c["fiscal_year_end_month"] != 12]


# ------------------------------------------------------------------------------ aggregation


def _aggregation(g: _Gen) -> Iterator[dict[str, Any]]:
    wh = g.wh
    for c in g.companies():
        forms = Counter(f["form"] for f in wh.rows("filings") if f["company_id"] == c["company_id"])
        yield _entry(
            f"sql:filings_by_form:{c['ticker']}",
            "aggregation",
            f"How many filings of each form has {c['name']} made?",
            f"SELECT fl.form AS form, COUNT(*) AS filings {_FL} "
            f"WHERE c.ticker = '{c['ticker']}' GROUP BY fl.form",
            ["form", "filings"],
            [[k, v] for k, v in sorted(forms.items())],
            meta={"ticker": c["ticker"]},
        )
        regions = Counter(
            r["region"] for r in wh.rows("customers") if r["company_id"] == c["company_id"]
        )
        yield _entry(
            f"sql:customers_by_region:{c['ticker']}",
            "aggregation",
            f"How many customers, whatever their status, does {c['name']} have in each region?",
            f"SELECT cu.region AS region, COUNT(*) AS customers {_CU} "
            f"WHERE c.ticker = '{c['ticker']}' GROUP BY cu.region",
            ["region", "customers"],
            [[k, v] for k, v in sorted(regions.items())],
            meta={"ticker": c["ticker"]},
        )
        by_status: dict[str, float] = {}
        for r in wh.rows("customers"):
            if r["company_id"] == c["company_id"]:
                by_status[r["status"]] = by_status.get(r["status"], 0.0) + r["annual_value_usd"]
        yield _entry(
            f"sql:value_by_status:{c['ticker']}",
            "aggregation",
            f"What is the total annual value of {c['name']}'s customers for each status code?",
            "SELECT cu.status AS status, SUM(cu.annual_value_usd) AS total_value "
            f"{_CU} "
            f"WHERE c.ticker = '{c['ticker']}' GROUP BY cu.status",
            ["status", "total_value"],
            [[k, v] for k, v in sorted(by_status.items())],
            meta={"ticker": c["ticker"]},
        )
    for fy in g.years:
        total = 0.0
        for c in g.companies("Banking"):
            v = wh.latest(c["company_id"], fy, None, "net_income")
            total += v or 0.0
        yield _entry(
            f"sql:bank_net_income:{fy}",
            "aggregation",
            f"What was the combined fiscal {fy} net income of all the banks?",
            f"SELECT SUM(cf.value) AS net_income {_CF} "
            "WHERE c.industry = 'Banking' AND li.code = 'net_income' "
            f"AND p.fiscal_year = {fy} AND p.fiscal_quarter IS NULL AND cf.segment_id IS NULL",
            ["net_income"],
            [[total]],
            meta={"fiscal_year": fy},
        )
    for c in g.companies("Banking"):
        for fy in g.years:
            vals = [wh.latest(c["company_id"], fy, q, "nim") for q in (1, 2, 3, 4)]
            avg = sum(v for v in vals if v is not None) / len(vals)
            yield _entry(
                f"sql:avg_nim:{c['ticker']}:{fy}",
                "aggregation",
                f"What was {c['name']}'s average quarterly net interest margin over the four "
                f"quarters of fiscal {fy}?",
                f"SELECT AVG(cf.value) AS avg_nim {_CF} "
                f"WHERE c.ticker = '{c['ticker']}' AND li.code = 'nim' "
                f"AND p.fiscal_year = {fy} AND p.fiscal_quarter IS NOT NULL",
                ["avg_nim"],
                [[avg]],
                meta={"ticker": c["ticker"], "fiscal_year": fy},
            )
    for c in g.companies("Software"):
        for fy in g.years:
            vals = [wh.latest(c["company_id"], fy, q, "revenue") for q in (1, 2, 3, 4)]
            yield _entry(
                f"sql:max_quarter_revenue:{c['ticker']}:{fy}",
                "aggregation",
                f"What was {c['name']}'s highest quarterly total revenue in fiscal {fy}?",
                f"SELECT MAX(cf.value) AS max_revenue {_CF} "
                f"WHERE c.ticker = '{c['ticker']}' AND li.code = 'revenue' "
                f"AND p.fiscal_year = {fy} AND p.fiscal_quarter IS NOT NULL",
                ["max_revenue"],
                [[max(v for v in vals if v is not None)]],
                meta={"ticker": c["ticker"], "fiscal_year": fy},
            )


# ------------------------------------------------------------------------------ joins


def _joins(g: _Gen) -> Iterator[dict[str, Any]]:
    wh = g.wh
    for c in g.companies("Software"):
        segs = [s for s in wh.rows("segments") if s["company_id"] == c["company_id"]]
        for fy in g.years:
            rows = [
                [s["name"], wh.latest(c["company_id"], fy, None, "seg_rev", s["segment_id"])]
                for s in segs
            ]
            yield _entry(
                f"sql:segment_revenue:{c['ticker']}:{fy}",
                "joins",
                f"List {c['name']}'s operating segments with their fiscal {fy} segment revenue.",
                "SELECT s.name AS segment, cf.value AS revenue FROM segments AS s "
                "JOIN companies AS c ON c.company_id = s.company_id "
                "JOIN current_facts AS cf ON cf.segment_id = s.segment_id "
                "JOIN fiscal_periods AS p ON p.period_id = cf.period_id "
                "JOIN line_items AS li ON li.line_item_id = cf.line_item_id "
                f"WHERE c.ticker = '{c['ticker']}' AND li.code = 'seg_rev' "
                f"AND p.fiscal_year = {fy} AND p.fiscal_quarter IS NULL",
                ["segment", "revenue"],
                rows,
                meta={"ticker": c["ticker"], "fiscal_year": fy},
            )
    for fy in g.years:
        rows = [
            [c["ticker"], wh.latest(c["company_id"], fy, None, "net_income")] for c in g.companies()
        ]
        yield _entry(
            f"sql:net_income_all:{fy}",
            "joins",
            f"List every company's ticker with its fiscal {fy} net income.",
            "SELECT c.ticker AS ticker, cf.value AS net_income FROM companies AS c "
            "JOIN current_facts AS cf ON cf.company_id = c.company_id "
            "JOIN fiscal_periods AS p ON p.period_id = cf.period_id "
            "JOIN line_items AS li ON li.line_item_id = cf.line_item_id "
            f"WHERE li.code = 'net_income' AND p.fiscal_year = {fy} "
            "AND p.fiscal_quarter IS NULL AND cf.segment_id IS NULL",
            ["ticker", "net_income"],
            rows,
            meta={"fiscal_year": fy},
        )
    for c in g.companies():
        rows = [
            [f["accession"], wh.filing_by_id[f["amends_filing_id"]]["accession"]]
            for f in wh.rows("filings")
            if f["company_id"] == c["company_id"] and f["amends_filing_id"] is not None
        ]
        if not rows:
            continue
        yield _entry(
            f"sql:amendments:{c['ticker']}",
            "joins",
            f"List {c['name']}'s 10-K/A filings with the accession number of the filing each "
            "one amends.",
            "SELECT a.accession AS amendment, o.accession AS amends FROM filings AS a "
            "JOIN filings AS o ON o.filing_id = a.amends_filing_id "
            "JOIN companies AS c ON c.company_id = a.company_id "
            f"WHERE c.ticker = '{c['ticker']}' AND a.form = '10-K/A'",
            ["amendment", "amends"],
            rows,
            meta={"ticker": c["ticker"]},
        )
    for c in g.companies():
        rows = [
            [k["name"], wh.item_by_id[k["line_item_id"]]["label"], k["threshold"]]
            for k in wh.rows("covenants")
            if k["company_id"] == c["company_id"]
        ]
        yield _entry(
            f"sql:covenant_items:{c['ticker']}",
            "joins",
            f"List {c['name']}'s covenants with the label of the line item each one tests and "
            "its threshold.",
            "SELECT k.name AS covenant, li.label AS line_item, k.threshold AS threshold "
            "FROM covenants AS k JOIN companies AS c ON c.company_id = k.company_id "
            "JOIN line_items AS li ON li.line_item_id = k.line_item_id "
            f"WHERE c.ticker = '{c['ticker']}'",
            ["covenant", "line_item", "threshold"],
            rows,
            meta={"ticker": c["ticker"]},
        )
    for code in sorted({wh.item_by_id[k["line_item_id"]]["code"] for k in wh.rows("covenants")}):
        item = wh.item_by_code[code]
        rows = [
            [wh.company_by_id[k["company_id"]]["ticker"], k["name"], k["threshold"]]
            for k in wh.rows("covenants")
            if k["line_item_id"] == item["line_item_id"] and k["effective_to"] is None
        ]
        yield _entry(
            f"sql:covenants_on:{code}",
            "joins",
            f"Which companies have a covenant in force today on {item['label'].lower()}, and "
            "what is each one's threshold?",
            "SELECT c.ticker AS ticker, k.name AS covenant, k.threshold AS threshold "
            "FROM covenants AS k JOIN companies AS c ON c.company_id = k.company_id "
            "JOIN line_items AS li ON li.line_item_id = k.line_item_id "
            f"WHERE li.code = '{code}' AND k.effective_to IS NULL",
            ["ticker", "covenant", "threshold"],
            rows,
            meta={"line_item": code},
        )
    rows = []
    for c in g.companies():
        n = sum(
            1
            for r in wh.rows("customers")
            if r["company_id"] == c["company_id"] and r["status"] == "A" and r["churn_date"] is None
        )
        rows.append([c["ticker"], n])
    yield _entry(
        "sql:active_per_company:all",
        "joins",
        "For every company, how many active customers does it have? Include companies that "
        "have none.",
        "SELECT c.ticker AS ticker, COUNT(cu.customer_id) AS active_customers "
        "FROM companies AS c LEFT JOIN customers AS cu ON cu.company_id = c.company_id "
        "AND cu.status = 'A' AND cu.churn_date IS NULL GROUP BY c.ticker",
        ["ticker", "active_customers"],
        rows,
    )


# ------------------------------------------------------------------------------ time windows


def _time_windows(g: _Gen) -> Iterator[dict[str, Any]]:
    wh = g.wh
    for c in g.companies():
        cid = c["company_id"]
        for year in (g.last - 1, g.last):
            d1, d2 = dt.date(year, 1, 1), dt.date(year, 6, 30)
            rows = [
                [f["accession"], f["form"]]
                for f in wh.rows("filings")
                if f["company_id"] == cid and d1 <= f["accepted_at"] <= d2
            ]
            yield _entry(
                f"sql:filings_window:{c['ticker']}:{year}H1",
                "time_window",
                f"Which filings did {c['name']} have accepted between {d1.isoformat()} and "
                f"{d2.isoformat()}, inclusive? Give the accession and the form.",
                f"SELECT fl.accession AS accession, fl.form AS form {_FL} "
                f"WHERE c.ticker = '{c['ticker']}' "
                f"AND fl.accepted_at BETWEEN DATE '{d1.isoformat()}' AND DATE '{d2.isoformat()}'",
                ["accession", "form"],
                rows,
                meta={"ticker": c["ticker"]},
            )
        for year in (g.last - 1, g.last):
            n = sum(
                1
                for r in wh.rows("customers")
                if r["company_id"] == cid and r["signup_date"].year == year
            )
            yield _entry(
                f"sql:signups:{c['ticker']}:{year}",
                "time_window",
                f"How many customers of {c['name']} signed up in calendar year {year}?",
                f"SELECT COUNT(*) AS signups {_CU} "
                f"WHERE c.ticker = '{c['ticker']}' AND {_in_year('cu.signup_date', year)}",
                ["signups"],
                [[n]],
                meta={"ticker": c["ticker"], "year": year},
            )
        year = g.last
        n = sum(
            1
            for r in wh.rows("customers")
            if r["company_id"] == cid
            and r["churn_date"] is not None
            and r["churn_date"].year == year
        )
        yield _entry(
            f"sql:churns:{c['ticker']}:{year}",
            "time_window",
            f"How many customers of {c['name']} had a churn recorded in calendar year {year}?",
            f"SELECT COUNT(*) AS churned {_CU} "
            f"WHERE c.ticker = '{c['ticker']}' AND {_in_year('cu.churn_date', year)}",
            ["churned"],
            [[n]],
            meta={"ticker": c["ticker"], "year": year},
        )
    for c in g.companies("Software"):
        cid = c["company_id"]
        for fy, q in ((g.last, 2), (g.last - 1, 3)):
            quarters = [(fy - 1, k) for k in range(q + 1, 5)] + [(fy, k) for k in range(1, q + 1)]
            total = sum(wh.latest(cid, y, k, "revenue") or 0.0 for y, k in quarters)
            end = wh.period(cid, fy, q)
            assert end is not None
            yield _entry(
                f"sql:ttm_revenue:{c['ticker']}:{fy}Q{q}",
                "time_window",
                f"What was {c['name']}'s total revenue over the four fiscal quarters ending with "
                f"the fiscal {fy} Q{q} quarter?",
                f"SELECT SUM(cf.value) AS revenue {_CF} "
                f"WHERE c.ticker = '{c['ticker']}' AND li.code = 'revenue' "
                "AND p.fiscal_quarter IS NOT NULL AND p.period_end <= ("
                "SELECT e.period_end FROM fiscal_periods AS e "
                f"WHERE e.company_id = c.company_id AND e.fiscal_year = {fy} "
                f"AND e.fiscal_quarter = {q}) AND p.period_end > ("
                "SELECT e.period_end FROM fiscal_periods AS e "
                f"WHERE e.company_id = c.company_id AND e.fiscal_year = {fy - 1} "
                f"AND e.fiscal_quarter = {q})",
                ["revenue"],
                [[total]],
                meta={"ticker": c["ticker"], "fiscal_year": fy, "quarter": q},
            )


# ------------------------------------------------------------------------------ business terms

_ACTIVE = "cu.status = 'A' AND cu.churn_date IS NULL"


def _revenue_sql(ticker: str, fy: int) -> str:
    return (
        f"SELECT SUM(cf.value) AS revenue {_CF} "
        f"WHERE c.ticker = '{ticker}' AND p.fiscal_year = {fy} AND p.fiscal_quarter IS NULL "
        f"AND cf.segment_id IS NULL AND {_REVENUE}"
    )


def _revenue_sql_case(ticker: str, fy: int) -> str:
    """The same revenue, written with the industry test inside the sum."""
    return (
        "SELECT SUM(CASE WHEN c.industry = 'Software' AND li.code = 'revenue' THEN cf.value "
        "WHEN c.industry = 'Banking' AND li.code IN ('nii', 'nonint_inc') THEN cf.value END) "
        "AS revenue FROM companies AS c JOIN current_facts AS cf ON cf.company_id = c.company_id "
        "JOIN fiscal_periods AS p ON p.period_id = cf.period_id "
        "JOIN line_items AS li ON li.line_item_id = cf.line_item_id "
        f"WHERE c.ticker = '{ticker}' AND p.fiscal_year = {fy} AND p.fiscal_quarter IS NULL "
        "AND cf.segment_id IS NULL"
    )


def _breaches(wh: Warehouse, company_id: int, fy: int) -> list[Row]:
    out: list[Row] = []
    for k in wh.rows("covenants"):
        if k["company_id"] != company_id:
            continue
        code = wh.item_by_id[k["line_item_id"]]["code"]
        for q in (1, 2, 3, 4):
            p = wh.period(company_id, fy, q)
            if p is None:
                continue
            end = p["period_end"]
            if end < k["effective_from"] or (
                k["effective_to"] is not None and end > k["effective_to"]
            ):
                continue
            v = wh.latest(company_id, fy, q, code)
            if v is None:
                continue
            if (k["direction"] == "min" and v < k["threshold"]) or (
                k["direction"] == "max" and v > k["threshold"]
            ):
                out.append([k["name"], q])
    return out


def _business(g: _Gen) -> Iterator[dict[str, Any]]:
    wh = g.wh
    for c in g.companies():
        cid = c["company_id"]
        active = [
            r
            for r in wh.rows("customers")
            if r["company_id"] == cid and r["status"] == "A" and r["churn_date"] is None
        ]
        yield _entry(
            f"sql:active_customers:{c['ticker']}",
            "business_definition",
            f"How many active customers does {c['name']} have?",
            [
                f"SELECT COUNT(*) AS active_customers {_CU} "
                f"WHERE c.ticker = '{c['ticker']}' AND {_ACTIVE}",
                f"SELECT COUNT(*) FILTER (WHERE {_ACTIVE}) AS active_customers "
                "FROM customers AS cu WHERE cu.company_id = "
                f"(SELECT company_id FROM companies WHERE ticker = '{c['ticker']}')",
            ],
            ["active_customers"],
            [[len(active)]],
            meta={"ticker": c["ticker"], "glossary": "active customer"},
        )
        yield _entry(
            f"sql:active_value:{c['ticker']}",
            "business_definition",
            f"What is the total annual value of {c['name']}'s active customers?",
            f"SELECT SUM(cu.annual_value_usd) AS active_value {_CU} "
            f"WHERE c.ticker = '{c['ticker']}' AND {_ACTIVE}",
            ["active_value"],
            [[sum(r["annual_value_usd"] for r in active) if active else None]],
            meta={"ticker": c["ticker"], "glossary": "active customer"},
        )
        for fy in g.years:
            yield _entry(
                f"sql:revenue:{c['ticker']}:{fy}",
                "business_definition",
                f"What was {c['name']}'s revenue in fiscal {fy}?",
                [_revenue_sql(c["ticker"], fy), _revenue_sql_case(c["ticker"], fy)],
                ["revenue"],
                [[wh.revenue(cid, fy)]],
                meta={"ticker": c["ticker"], "fiscal_year": fy, "glossary": "revenue"},
            )
            rows = _breaches(wh, cid, fy)
            if rows:
                yield _entry(
                    f"sql:breaches:{c['ticker']}:{fy}",
                    "business_definition",
                    f"In which fiscal quarters of fiscal {fy} did {c['name']} breach a covenant? "
                    "List the covenant and the quarter.",
                    "SELECT k.name AS covenant, p.fiscal_quarter AS quarter FROM covenants AS k "
                    "JOIN companies AS c ON c.company_id = k.company_id "
                    "JOIN fiscal_periods AS p ON p.company_id = k.company_id "
                    "JOIN current_facts AS cf ON cf.period_id = p.period_id "
                    "AND cf.line_item_id = k.line_item_id AND cf.segment_id IS NULL "
                    f"WHERE c.ticker = '{c['ticker']}' AND p.fiscal_year = {fy} "
                    "AND p.fiscal_quarter IS NOT NULL AND p.period_end >= k.effective_from "
                    "AND (k.effective_to IS NULL OR p.period_end <= k.effective_to) "
                    "AND ((k.direction = 'min' AND cf.value < k.threshold) "
                    "OR (k.direction = 'max' AND cf.value > k.threshold))",
                    ["covenant", "quarter"],
                    rows,
                    meta={"ticker": c["ticker"], "fiscal_year": fy, "glossary": "covenant breach"},
                )
    for fy in g.years:
        best = max(g.companies(), key=lambda c: wh.revenue(c["company_id"], fy) or 0.0)
        yield _entry(
            f"sql:top_revenue:{fy}",
            "business_definition",
            f"Which company had the highest revenue in fiscal {fy}, and how much was it?",
            f"WITH rev AS (SELECT c.ticker AS ticker, SUM(cf.value) AS revenue {_CF} "
            f"WHERE p.fiscal_year = {fy} AND p.fiscal_quarter IS NULL AND cf.segment_id IS NULL "
            f"AND {_REVENUE} "
            "GROUP BY c.ticker) SELECT ticker, revenue FROM rev ORDER BY revenue DESC LIMIT 1",
            ["ticker", "revenue"],
            [[best["ticker"], wh.revenue(best["company_id"], fy)]],
            meta={"fiscal_year": fy, "glossary": "revenue"},
        )


# ------------------------------------------------------------------------------ fiscal calendar


def _fiscal(g: _Gen) -> Iterator[dict[str, Any]]:
    wh = g.wh
    for c in g.companies("Software"):
        cid = c["company_id"]
        if c["fiscal_year_end_month"] == 12:
            continue
        for year in (g.last - 1, g.last):
            quarters = [
                p
                for p in wh.rows("fiscal_periods")
                if p["company_id"] == cid
                and p["fiscal_quarter"] is not None
                and p["period_end"].year == year
            ]
            vals = [
                wh.latest(cid, p["fiscal_year"], p["fiscal_quarter"], "revenue") for p in quarters
            ]
            if len(quarters) != 4 or any(v is None for v in vals):
                continue
            yield _entry(
                f"sql:calendar_revenue:{c['ticker']}:{year}",
                "fiscal_calendar",
                f"What was {c['name']}'s total revenue for calendar year {year}, January through "
                "December?",
                f"SELECT SUM(cf.value) AS revenue {_CF} "
                f"WHERE c.ticker = '{c['ticker']}' AND li.code = 'revenue' "
                "AND p.fiscal_quarter IS NOT NULL "
                f"AND p.period_end BETWEEN DATE '{year}-01-01' AND DATE '{year}-12-31'",
                ["revenue"],
                [[sum(v for v in vals if v is not None)]],
                meta={"ticker": c["ticker"], "year": year},
            )
    for c in g.off_calendar():
        cid = c["company_id"]
        for fy in g.years:
            for q in (1, 3):
                p = wh.period(cid, fy, q)
                assert p is not None
                end = p["period_end"]
                yield _entry(
                    f"sql:quarter_ended:{c['ticker']}:{fy}Q{q}",
                    "fiscal_calendar",
                    f"What was {c['name']}'s net income for the fiscal quarter that ended on "
                    f"{end.isoformat()}?",
                    f"SELECT cf.value AS net_income {_CF} "
                    f"WHERE c.ticker = '{c['ticker']}' AND li.code = 'net_income' "
                    f"AND p.fiscal_quarter IS NOT NULL AND p.period_end = DATE '{end.isoformat()}'",
                    ["net_income"],
                    [[wh.latest(cid, fy, q, "net_income")]],
                    meta={"ticker": c["ticker"], "fiscal_year": fy, "quarter": q},
                )
            yield _entry(
                f"sql:q1_net_income:{c['ticker']}:{fy}",
                "fiscal_calendar",
                f"What was {c['name']}'s net income in the first quarter of fiscal {fy}?",
                f"SELECT cf.value AS net_income {_CF} "
                f"WHERE c.ticker = '{c['ticker']}' AND li.code = 'net_income' "
                f"AND p.fiscal_year = {fy} AND p.fiscal_quarter = 1",
                ["net_income"],
                [[wh.latest(cid, fy, 1, "net_income")]],
                meta={"ticker": c["ticker"], "fiscal_year": fy},
            )
    for c in g.companies():
        cid = c["company_id"]
        for fy in g.years:
            p = wh.period(cid, fy, None)
            assert p is not None
            yield _entry(
                f"sql:fiscal_year_dates:{c['ticker']}:{fy}",
                "fiscal_calendar",
                f"On what dates did {c['name']}'s fiscal {fy} begin and end?",
                "SELECT p.period_start AS fiscal_year_start, p.period_end AS fiscal_year_end "
                "FROM fiscal_periods AS p JOIN companies AS c ON c.company_id = p.company_id "
                f"WHERE c.ticker = '{c['ticker']}' AND p.fiscal_year = {fy} "
                "AND p.fiscal_quarter IS NULL",
                ["fiscal_year_start", "fiscal_year_end"],
                [[p["period_start"].isoformat(), p["period_end"].isoformat()]],
                meta={"ticker": c["ticker"], "fiscal_year": fy},
                column_order=True,
            )
    for c in g.companies():
        cid = c["company_id"]
        day = dt.date(g.last, 2, 14)
        hits = [
            [p["fiscal_year"], p["fiscal_quarter"]]
            for p in wh.rows("fiscal_periods")
            if p["company_id"] == cid
            and p["fiscal_quarter"] is not None
            and p["period_start"] <= day <= p["period_end"]
        ]
        yield _entry(
            f"sql:period_of_date:{c['ticker']}:{day.isoformat()}",
            "fiscal_calendar",
            f"Which fiscal year and fiscal quarter of {c['name']} include {day.isoformat()}?",
            "SELECT p.fiscal_year AS fiscal_year, p.fiscal_quarter AS fiscal_quarter "
            "FROM fiscal_periods AS p JOIN companies AS c ON c.company_id = p.company_id "
            f"WHERE c.ticker = '{c['ticker']}' AND p.fiscal_quarter IS NOT NULL "
            f"AND DATE '{day.isoformat()}' BETWEEN p.period_start AND p.period_end",
            ["fiscal_year", "fiscal_quarter"],
            hits,
            meta={"ticker": c["ticker"]},
            column_order=True,
        )


# ------------------------------------------------------------------------------ restatements


def _restated(g: _Gen) -> list[tuple[dict[str, Any], str, int, dt.date, dt.date]]:
    """(company, code, fy, first reported, restated) for every fiscal-year figure reported
    with more than one value."""
    wh = g.wh
    out = []
    for c in g.companies():
        cid = c["company_id"]
        for fy in range(g.first - 1, g.last + 1):
            p = wh.period(cid, fy, None)
            if p is None:
                continue
            for item in wh.rows("line_items"):
                reps = wh.reports(p["period_id"], item["code"])
                values = [v for _, _, v in reps]
                if len(set(values)) > 1:
                    changed = next(a for a, _, v in reps if v != values[0])
                    out.append((c, item["code"], fy, reps[0][0], changed))
    return out


def _restatements(g: _Gen) -> Iterator[dict[str, Any]]:
    wh = g.wh
    for c, code, fy, first, changed in _restated(g):
        cid = c["company_id"]
        label = wh.item_by_code[code]["label"].lower()
        tag = f"{c['ticker']}:{code}:{fy}"
        where = (
            f"c.ticker = '{c['ticker']}' AND li.code = '{code}' AND p.fiscal_year = {fy} "
            "AND p.fiscal_quarter IS NULL AND v.segment_id IS NULL"
        )
        for when, name in (
            (changed - dt.timedelta(days=1), "before"),
            (changed + dt.timedelta(days=10), "after"),
        ):
            if when < first:
                continue
            value = wh.latest(cid, fy, None, code, as_of=when)
            yield _entry(
                f"sql:restated_{name}:{tag}",
                "restatement",
                f"What was {c['name']}'s fiscal {fy} {label} as reported in the latest filing "
                f"accepted on or before {when.isoformat()}?",
                [
                    _visible_on(when, "v.value AS value", where),
                    "SELECT v.value AS value FROM facts AS v "
                    "JOIN filings AS fl ON fl.filing_id = v.filing_id "
                    f"{_V_JOINS} "
                    f"WHERE fl.accepted_at <= DATE '{when.isoformat()}' AND {where} "
                    "QUALIFY ROW_NUMBER() OVER (ORDER BY fl.accepted_at DESC, "
                    "fl.filing_id DESC) = 1",
                ],
                ["value"],
                [[value]],
                as_of=when,
                meta={"ticker": c["ticker"], "fiscal_year": fy, "line_item": code},
            )
        yield _entry(
            f"sql:original:{tag}",
            "restatement",
            f"What was {c['name']}'s fiscal {fy} {label} as originally reported, before any "
            "restatement?",
            "WITH ranked AS (SELECT f.period_id, f.line_item_id, f.segment_id, f.value, "
            "ROW_NUMBER() OVER (PARTITION BY f.period_id, f.line_item_id, f.segment_id "
            "ORDER BY fl.accepted_at ASC, fl.filing_id ASC) AS rn "
            "FROM facts AS f JOIN filings AS fl ON fl.filing_id = f.filing_id) "
            "SELECT v.value AS value FROM ranked AS v "
            f"{_V_JOINS} "
            f"WHERE v.rn = 1 AND {where}",
            ["value"],
            [[wh.first_reported(cid, fy, None, code)]],
            meta={"ticker": c["ticker"], "fiscal_year": fy, "line_item": code},
        )
        yield _entry(
            f"sql:current:{tag}",
            "restatement",
            f"What is {c['name']}'s fiscal {fy} {label} today, including any restatement?",
            f"SELECT v.value AS value FROM current_facts AS v {_V_JOINS} WHERE {where}",
            ["value"],
            [[wh.latest(cid, fy, None, code)]],
            meta={"ticker": c["ticker"], "fiscal_year": fy, "line_item": code},
        )


# ------------------------------------------------------------------------------ as of a date


def _as_of(g: _Gen) -> Iterator[dict[str, Any]]:
    wh = g.wh
    for c in g.companies():
        cid = c["company_id"]
        tenks = sorted(
            f["accepted_at"]
            for f in wh.rows("filings")
            if f["company_id"] == cid and f["form"] == "10-K"
        )
        for k, accepted in enumerate(tenks):
            if k == 0:
                continue
            when = accepted - dt.timedelta(days=1)
            best: tuple[int, float] | None = None
            for fy in range(g.first - 1, g.last + 1):
                v = wh.latest(cid, fy, None, "net_income", as_of=when)
                if v is not None:
                    best = (fy, v)
            assert best is not None
            yield _entry(
                f"sql:latest_annual:{c['ticker']}:{when.isoformat()}",
                "as_of",
                f"As of {when.isoformat()}, what was {c['name']}'s most recently reported "
                "fiscal-year net income, and for which fiscal year?",
                _visible_on(
                    when,
                    "p.fiscal_year AS fiscal_year, v.value AS net_income",
                    f"c.ticker = '{c['ticker']}' AND li.code = 'net_income' "
                    "AND p.fiscal_quarter IS NULL AND v.segment_id IS NULL "
                    "ORDER BY p.fiscal_year DESC LIMIT 1",
                ),
                ["fiscal_year", "net_income"],
                [[best[0], best[1]]],
                as_of=when,
                meta={"ticker": c["ticker"]},
            )
        for fy in (g.last,):
            qs = sorted(
                f["accepted_at"]
                for f in wh.rows("filings")
                if f["company_id"] == cid and f["form"] == "10-Q" and f["fiscal_year"] == fy
            )
            when = qs[1] + dt.timedelta(days=3)
            n = sum(1 for a in qs if a <= when)
            yield _entry(
                f"sql:tenq_count:{c['ticker']}:{when.isoformat()}",
                "as_of",
                f"As of {when.isoformat()}, how many 10-Q filings for fiscal {fy} had "
                f"{c['name']} made?",
                f"SELECT COUNT(*) AS filings {_FL} "
                f"WHERE c.ticker = '{c['ticker']}' AND fl.form = '10-Q' "
                f"AND fl.fiscal_year = {fy} AND fl.accepted_at <= DATE '{when.isoformat()}'",
                ["filings"],
                [[n]],
                as_of=when,
                meta={"ticker": c["ticker"], "fiscal_year": fy},
            )
        for when in (dt.date(g.last, 3, 1),):
            rows = []
            for q in (1, 2, 3, 4):
                for fy in (g.last - 1,):
                    v = wh.latest(cid, fy, q, "net_income", as_of=when)
                    if v is not None:
                        rows.append([q, v])
            yield _entry(
                f"sql:quarters_known:{c['ticker']}:{when.isoformat()}",
                "as_of",
                f"As of {when.isoformat()}, which fiscal {g.last - 1} quarterly net income "
                f"figures had {c['name']} reported, and what were they?",
                _visible_on(
                    when,
                    "p.fiscal_quarter AS quarter, v.value AS net_income",
                    f"c.ticker = '{c['ticker']}' AND li.code = 'net_income' "
                    f"AND p.fiscal_year = {g.last - 1} AND p.fiscal_quarter IS NOT NULL "
                    "AND v.segment_id IS NULL",
                ),
                ["quarter", "net_income"],
                rows,
                as_of=when,
                meta={"ticker": c["ticker"]},
            )


# ------------------------------------------------------------------------------ unanswerable

_UNANSWERABLE: tuple[tuple[str, str, str], ...] = (
    ("credit_rating", "What is {name}'s current credit rating?", "companies.credit_rating"),
    (
        "customer_age",
        "What is the average age of {name}'s customers?",
        "customers.birth_date (no age or birth date is recorded)",
    ),
    (
        "office_headcount",
        "How many employees does {name} have in each office?",
        "an offices table (employees are reported company-wide only)",
    ),
    (
        "share_price",
        "What was {name}'s closing share price at the end of fiscal {fy}?",
        "a prices table (no market data)",
    ),
)


def _unanswerable(g: _Gen) -> Iterator[dict[str, Any]]:
    for i, c in enumerate(g.companies()):
        for j in range(3):
            key, text, missing = _UNANSWERABLE[(i + j) % len(_UNANSWERABLE)]
            yield _entry(
                f"sql:{key}:{c['ticker']}",
                "unanswerable",
                text.format(name=c["name"], fy=g.last),
                None,
                [],
                [],
                missing=missing,
                meta={"ticker": c["ticker"]},
            )


_FAMILIES: tuple[Callable[[_Gen], Iterator[dict[str, Any]]], ...] = (
    _aggregation,
    _joins,
    _time_windows,
    _business,
    _fiscal,
    _restatements,
    _as_of,
    _unanswerable,
)


def build_gold_entries(wh: Warehouse, *, seed: int = 7) -> list[dict[str, Any]]:
    """Every gold SQL entry over the warehouse (raw entry dicts, ids unique, in family order)."""
    g = _Gen(wh, np.random.default_rng([seed, 2727]))
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for fam in _FAMILIES:
        for e in fam(g):
            if e["id"] in seen:
                raise AssertionError(f"duplicate gold SQL id {e['id']}")
            seen.add(e["id"])
            out.append(e)
    return out


# ------------------------------------------------------------------------------ near misses


def near_misses(wh: Warehouse) -> list[tuple[str, str, str, str]]:
    """Planted wrong queries that agree with the gold on the original warehouse:
    (entry id, query, kind, what is wrong). `assay sql near-miss` runs them through exec_match
    and test_suite_match (`assay.sql.evaluate.near_miss_study`)."""
    out: list[tuple[str, str, str, str]] = []
    first, last = wh.ledger.first_fy, wh.ledger.last_fy
    out.append(
        (
            "sql:active_per_company:all",
            "SELECT c.ticker AS ticker, COUNT(*) AS active_customers FROM companies AS c "
            "JOIN customers AS cu ON cu.company_id = c.company_id "
            "WHERE cu.status = 'A' AND cu.churn_date IS NULL GROUP BY c.ticker",
            "wrong join",
            "an inner join drops companies without active customers",
        )
    )
    names = Counter(s["name"] for s in wh.rows("segments"))
    for c in wh.companies("Software"):
        own = [s["name"] for s in wh.rows("segments") if s["company_id"] == c["company_id"]]
        if any(names[n] > 1 for n in own):
            continue  # the wrong join already fails on the original: not a near miss
        for fy in range(first, last + 1):
            out.append(
                (
                    f"sql:segment_revenue:{c['ticker']}:{fy}",
                    "SELECT s.name AS segment, cf.value AS revenue FROM segments AS s "
                    "JOIN current_facts AS cf ON cf.segment_id = s.segment_id "
                    "JOIN fiscal_periods AS p ON p.period_id = cf.period_id "
                    "WHERE s.name IN (SELECT s2.name FROM segments AS s2 JOIN companies AS c "
                    f"ON c.company_id = s2.company_id WHERE c.ticker = '{c['ticker']}') "
                    f"AND p.fiscal_year = {fy} AND p.fiscal_quarter IS NULL",
                    "wrong join",
                    "segments matched by name, not by key: another company's segment of the "
                    "same name joins in",
                )
            )
    for c in wh.companies():
        t = c["ticker"]
        out.append(
            (
                f"sql:active_customers:{t}",
                f"SELECT COUNT(*) AS active_customers {_CU} WHERE c.ticker = '{t}' "
                "AND cu.churn_date IS NULL",
                "missing filter",
                "no status filter: pending and suspended customers (codes absent from the "
                "data) would count as active",
            )
        )
        out.append(
            (
                f"sql:active_value:{t}",
                f"SELECT SUM(cu.annual_value_usd) AS active_value {_CU} WHERE c.ticker = '{t}' "
                "AND cu.churn_date IS NULL",
                "missing filter",
                "no status filter: pending and suspended customers would count as active",
            )
        )
        for fy in range(first, last + 1):
            out.append(
                (
                    f"sql:revenue:{t}:{fy}",
                    f"SELECT SUM(cf.value) AS revenue {_CF} "
                    f"WHERE c.ticker = '{t}' AND p.fiscal_quarter IS NULL "
                    f"AND p.period_end BETWEEN DATE '{fy}-01-01' AND DATE '{fy}-12-31' "
                    f"AND cf.segment_id IS NULL AND {_REVENUE}",
                    "wrong fiscal year",
                    "the fiscal year taken as the calendar year its end falls in",
                )
            )
    return out
