"""The reference text-to-SQL baseline: templates over the warehouse schema and its glossary, no
network, no model.

`TemplateSqlSystem.sql(question, schema=..., as_of=...)` matches the question against a fixed
list of question patterns (the wordings of the warehouse's gold questions) and fills the pattern's
SQL template; a question no pattern matches is declined. It uses the glossary it is handed for
"active customer" and for a company's "revenue" (by industry), so business definitions written in
the glossary come out right. Elsewhere it is deliberately naive, the way a first text-to-SQL
system is: it reads every figure from the ``current_facts`` view (ignoring acceptance dates and
the entry's `as_of`, so restatements and "as of" questions fall into the trap), takes a calendar
year for a fiscal year and a calendar quarter for a fiscal quarter, reads "trailing four quarters"
as the fiscal year to date, ranks revenue by the software definition only, ignores covenant
effective dates, and counts customers with an inner join. Measured per category, that shows where
such a system fails (docs/sql.md).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from assay.sql.schema import DatabaseSchema

__all__ = ["TemplateSqlSystem"]

_CF = (
    "FROM current_facts AS cf JOIN companies AS c ON c.company_id = cf.company_id "
    "JOIN fiscal_periods AS p ON p.period_id = cf.period_id "
    "JOIN line_items AS li ON li.line_item_id = cf.line_item_id"
)


def _q(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _by_name(name: str) -> str:
    return f"c.name = {_q(name)}"


_LABELS = {
    "net income": "net_income",
    "income from operations": "op_income",
    "provision for credit losses": "provision",
    "diluted earnings per share": "eps",
    "remaining performance obligations": "rpo",
    "total deposits": "deposits",
    "net interest income": "nii",
    "total revenues": "revenue",
}


def _code_of(label: str) -> str:
    return _LABELS.get(label.lower(), label.lower().replace(" ", "_"))


def _glossary_sql(schema: DatabaseSchema, term: str, applies_to: str | None = None) -> str:
    if schema.glossary is None:
        raise KeyError(term)
    return schema.glossary.lookup(term, applies_to).sql


def _active(schema: DatabaseSchema) -> str:
    try:
        cond = _glossary_sql(schema, "active customer")
    except KeyError:
        cond = "customers.status = 'A'"
    return cond.replace("customers.", "cu.")


def _revenue_condition(schema: DatabaseSchema) -> str:
    parts = []
    for industry in ("Software", "Banking"):
        try:
            cond = _glossary_sql(schema, "revenue", industry).replace("line_items.", "li.")
        except KeyError:
            continue
        parts.append(f"(c.industry = {_q(industry)} AND {cond})")
    return "(" + " OR ".join(parts) + ")" if parts else "li.code = 'revenue'"


Template = Callable[[re.Match[str], DatabaseSchema], str]
_TEMPLATES: list[tuple[re.Pattern[str], Template]] = []

_CU = "FROM customers AS cu JOIN companies AS c ON c.company_id = cu.company_id"
_FL = "FROM filings AS fl JOIN companies AS c ON c.company_id = fl.company_id"
_ANNUAL = "p.fiscal_quarter IS NULL AND cf.segment_id IS NULL"
"""A fiscal year's company-wide figure (no quarter, no segment)."""


def _t(pattern: str) -> Callable[[Template], Template]:
    def deco(fn: Template) -> Template:
        _TEMPLATES.append((re.compile(pattern, re.IGNORECASE), fn))
        return fn

    return deco


def _sql(pattern: str, text: str) -> None:
    """A template whose SQL is `text` with the question's fields put in: each named group of
    `pattern` as written (years, quarters), ``{who}`` the company the question names,
    ``{active}`` the glossary's active customer, ``{revenue}`` its revenue, ``{annual}`` a
    fiscal year's company-wide figure, and the joins ``{CF}``, ``{CU}``, ``{FL}``."""

    def fill(m: re.Match[str], s: DatabaseSchema) -> str:
        fields = m.groupdict()
        if "name" in fields:
            fields["who"] = _by_name(fields["name"])
        if "{active}" in text:
            fields["active"] = _active(s)
        if "{revenue}" in text:
            fields["revenue"] = _revenue_condition(s)
        return text.format(CF=_CF, CU=_CU, FL=_FL, annual=_ANNUAL, **fields)

    _t(pattern)(fill)


_sql(
    r"^How many filings of each form has (?P<name>.+) made\?$",
    "SELECT fl.form, COUNT(*) {FL} WHERE {who} GROUP BY fl.form",
)
_sql(
    r"^How many customers, whatever their status, does (?P<name>.+) have in each region\?$",
    "SELECT cu.region, COUNT(*) {CU} WHERE {who} GROUP BY cu.region",
)
_sql(
    r"^What is the total annual value of (?P<name>.+)'s customers for each status code\?$",
    "SELECT cu.status, SUM(cu.annual_value_usd) {CU} WHERE {who} GROUP BY cu.status",
)
_sql(
    r"^What was the combined fiscal (?P<fy>\d{4}) net income of all the banks\?$",
    "SELECT SUM(cf.value) {CF} WHERE c.industry = 'Banking' AND li.code = 'net_income' "
    "AND p.fiscal_year = {fy} AND {annual}",
)
_sql(
    r"^What was (?P<name>.+)'s average quarterly net interest margin over the four quarters "
    r"of fiscal (?P<fy>\d{4})\?$",
    "SELECT AVG(cf.value) {CF} WHERE {who} AND li.code = 'nim' "
    "AND p.fiscal_year = {fy} AND p.fiscal_quarter IS NOT NULL",
)
_sql(
    r"^What was (?P<name>.+)'s highest quarterly total revenue in fiscal (?P<fy>\d{4})\?$",
    "SELECT MAX(cf.value) {CF} WHERE {who} AND li.code = 'revenue' "
    "AND p.fiscal_year = {fy} AND p.fiscal_quarter IS NOT NULL",
)
_sql(
    r"^List (?P<name>.+)'s operating segments with their fiscal (?P<fy>\d{4}) segment revenue\.$",
    "SELECT sg.name, cf.value FROM segments AS sg JOIN current_facts AS cf "
    "ON cf.segment_id = sg.segment_id JOIN companies AS c ON c.company_id = sg.company_id "
    "JOIN fiscal_periods AS p ON p.period_id = cf.period_id "
    "WHERE {who} AND p.fiscal_year = {fy} AND p.fiscal_quarter IS NULL",
)
_sql(
    r"^List every company's ticker with its fiscal (?P<fy>\d{4}) net income\.$",
    "SELECT c.ticker, cf.value {CF} WHERE li.code = 'net_income' "
    "AND p.fiscal_year = {fy} AND {annual}",
)
_sql(
    r"^List (?P<name>.+)'s 10-K/A filings with the accession number of the filing each one "
    r"amends\.$",
    "SELECT a.accession, o.accession FROM filings AS a JOIN filings AS o "
    "ON o.filing_id = a.amends_filing_id JOIN companies AS c ON c.company_id = a.company_id "
    "WHERE {who}",
)
_sql(
    r"^List (?P<name>.+)'s covenants with the label of the line item each one tests and its "
    r"threshold\.$",
    "SELECT k.name, li.label, k.threshold FROM covenants AS k JOIN companies AS c "
    "ON c.company_id = k.company_id JOIN line_items AS li "
    "ON li.line_item_id = k.line_item_id WHERE {who}",
)


@_t(
    r"^Which companies have a covenant in force today on (?P<label>.+), and what is each "
    r"one's threshold\?$"
)
def _covenants_on(m: re.Match[str], s: DatabaseSchema) -> str:
    return (
        "SELECT c.ticker, k.name, k.threshold FROM covenants AS k JOIN companies AS c "
        "ON c.company_id = k.company_id JOIN line_items AS li "
        f"ON li.line_item_id = k.line_item_id WHERE LOWER(li.label) = {_q(m['label'].lower())}"
    )


_sql(
    r"^For every company, how many active customers does it have\? Include companies that "
    r"have none\.$",
    "SELECT c.ticker, COUNT(*) FROM companies AS c JOIN customers AS cu "
    "ON cu.company_id = c.company_id WHERE {active} GROUP BY c.ticker",
)


@_t(
    r"^Which filings did (?P<name>.+) have accepted between (?P<d1>\d{4}-\d\d-\d\d) and "
    r"(?P<d2>\d{4}-\d\d-\d\d), inclusive\? Give the accession and the form\.$"
)
def _filings_window(m: re.Match[str], s: DatabaseSchema) -> str:
    return (
        f"SELECT fl.accession, fl.form {_FL} WHERE {_by_name(m['name'])} "
        f"AND fl.accepted_at BETWEEN DATE {_q(m['d1'])} AND DATE {_q(m['d2'])}"
    )


_sql(
    r"^How many customers of (?P<name>.+) signed up in calendar year (?P<y>\d{4})\?$",
    "SELECT COUNT(*) {CU} WHERE {who} "
    "AND cu.signup_date BETWEEN DATE '{y}-01-01' AND DATE '{y}-12-31'",
)
_sql(
    r"^How many customers of (?P<name>.+) had a churn recorded in calendar year (?P<y>\d{4})\?$",
    "SELECT COUNT(*) {CU} WHERE {who} "
    "AND cu.churn_date BETWEEN DATE '{y}-01-01' AND DATE '{y}-12-31'",
)


# naive: the fiscal year to date, not the trailing four quarters
_sql(
    r"^What was (?P<name>.+)'s total revenue over the four fiscal quarters ending with the "
    r"fiscal (?P<fy>\d{4}) Q(?P<q>\d) quarter\?$",
    "SELECT SUM(cf.value) {CF} WHERE {who} AND li.code = 'revenue' "
    "AND p.fiscal_year = {fy} AND p.fiscal_quarter BETWEEN 1 AND {q}",
)
_sql(
    r"^How many active customers does (?P<name>.+) have\?$",
    "SELECT COUNT(*) {CU} WHERE {who} AND {active}",
)
_sql(
    r"^What is the total annual value of (?P<name>.+)'s active customers\?$",
    "SELECT SUM(cu.annual_value_usd) {CU} WHERE {who} AND {active}",
)
_sql(
    r"^What was (?P<name>.+)'s revenue in fiscal (?P<fy>\d{4})\?$",
    "SELECT SUM(cf.value) {CF} WHERE {who} AND p.fiscal_year = {fy} AND {annual} AND {revenue}",
)
# naive: every covenant row, whatever its effective dates
_sql(
    r"^In which fiscal quarters of fiscal (?P<fy>\d{4}) did (?P<name>.+) breach a covenant\? "
    r"List the covenant and the quarter\.$",
    "SELECT k.name, p.fiscal_quarter FROM covenants AS k JOIN companies AS c "
    "ON c.company_id = k.company_id JOIN fiscal_periods AS p ON p.company_id = c.company_id "
    "JOIN current_facts AS cf ON cf.period_id = p.period_id "
    "AND cf.line_item_id = k.line_item_id AND cf.segment_id IS NULL "
    "WHERE {who} AND p.fiscal_year = {fy} "
    "AND p.fiscal_quarter IS NOT NULL AND ((k.direction = 'min' AND cf.value < k.threshold) "
    "OR (k.direction = 'max' AND cf.value > k.threshold))",
)
# naive: the software definition of revenue only
_sql(
    r"^Which company had the highest revenue in fiscal (?P<fy>\d{4}), and how much was it\?$",
    "SELECT c.ticker, cf.value {CF} WHERE li.code = 'revenue' AND p.fiscal_year = {fy} "
    "AND {annual} ORDER BY cf.value DESC LIMIT 1",
)
# naive: the fiscal year of the same number
_sql(
    r"^What was (?P<name>.+)'s total revenue for calendar year (?P<y>\d{4}), January through "
    r"December\?$",
    "SELECT cf.value {CF} WHERE {who} AND li.code = 'revenue' "
    "AND p.fiscal_year = {y} AND p.fiscal_quarter IS NULL",
)


def _calendar_quarter(d: dt.date) -> int:
    return (d.month - 1) // 3 + 1


@_t(
    r"^What was (?P<name>.+)'s net income for the fiscal quarter that ended on "
    r"(?P<d>\d{4}-\d\d-\d\d)\?$"
)
def _quarter_ended(m: re.Match[str], s: DatabaseSchema) -> str:
    d = dt.date.fromisoformat(m["d"])
    # naive: the calendar quarter of the date, in the fiscal year of the date's year
    return (
        f"SELECT cf.value {_CF} WHERE {_by_name(m['name'])} AND li.code = 'net_income' "
        f"AND p.fiscal_year = {d.year} AND p.fiscal_quarter = {_calendar_quarter(d)}"
    )


_sql(
    r"^What was (?P<name>.+)'s net income in the first quarter of fiscal (?P<fy>\d{4})\?$",
    "SELECT cf.value {CF} WHERE {who} AND li.code = 'net_income' "
    "AND p.fiscal_year = {fy} AND p.fiscal_quarter = 1",
)
_sql(
    r"^On what dates did (?P<name>.+)'s fiscal (?P<fy>\d{4}) begin and end\?$",
    "SELECT p.period_start, p.period_end FROM fiscal_periods AS p JOIN companies AS c "
    "ON c.company_id = p.company_id WHERE {who} "
    "AND p.fiscal_year = {fy} AND p.fiscal_quarter IS NULL",
)


@_t(
    r"^Which fiscal year and fiscal quarter of (?P<name>.+) include "
    r"(?P<d>\d{4}-\d\d-\d\d)\?$"
)
def _period_of_date(m: re.Match[str], s: DatabaseSchema) -> str:
    d = dt.date.fromisoformat(m["d"])
    # naive: calendar year and calendar quarter
    return f"SELECT {d.year} AS fiscal_year, {_calendar_quarter(d)} AS fiscal_quarter"


def _current_figure(m: re.Match[str], s: DatabaseSchema) -> str:
    """Today's fiscal-year figure, whatever the question asks about (as reported on a date, as
    originally reported): the naive reading of the restatement questions."""
    return (
        f"SELECT cf.value {_CF} WHERE {_by_name(m['name'])} "
        f"AND li.code = {_q(_code_of(m['label']))} AND p.fiscal_year = {m['fy']} AND {_ANNUAL}"
    )


for _pattern in (
    r"^What was (?P<name>.+)'s fiscal (?P<fy>\d{4}) (?P<label>.+) as reported in the latest "
    r"filing accepted on or before (?P<d>\d{4}-\d\d-\d\d)\?$",
    r"^What was (?P<name>.+)'s fiscal (?P<fy>\d{4}) (?P<label>.+) as originally reported, before "
    r"any restatement\?$",
    r"^What is (?P<name>.+)'s fiscal (?P<fy>\d{4}) (?P<label>.+) today, including any "
    r"restatement\?$",
):
    _t(_pattern)(_current_figure)

# naive: the latest fiscal year in the database, whatever the date
_sql(
    r"^As of (?P<d>\d{4}-\d\d-\d\d), what was (?P<name>.+)'s most recently reported "
    r"fiscal-year net income, and for which fiscal year\?$",
    "SELECT p.fiscal_year, cf.value {CF} WHERE {who} "
    "AND li.code = 'net_income' AND {annual} ORDER BY p.fiscal_year DESC LIMIT 1",
)
_sql(
    r"^As of (?P<d>\d{4}-\d\d-\d\d), how many 10-Q filings for fiscal (?P<fy>\d{4}) had "
    r"(?P<name>.+) made\?$",
    "SELECT COUNT(*) {FL} WHERE {who} AND fl.form = '10-Q' AND fl.fiscal_year = {fy}",
)
_sql(
    r"^As of (?P<d>\d{4}-\d\d-\d\d), which fiscal (?P<fy>\d{4}) quarterly net income figures "
    r"had (?P<name>.+) reported, and what were they\?$",
    "SELECT p.fiscal_quarter, cf.value {CF} WHERE {who} "
    "AND li.code = 'net_income' AND p.fiscal_year = {fy} "
    "AND p.fiscal_quarter IS NOT NULL AND cf.segment_id IS NULL",
)


class TemplateSqlSystem:
    """Question templates over the warehouse schema and glossary (see the module docs)."""

    dialect = "duckdb"

    def identity(self) -> dict[str, Any]:
        return {"kind": "sql-template", "version": 1, "templates": len(_TEMPLATES)}

    def sql(
        self, question: str, *, schema: DatabaseSchema, as_of: dt.date | None = None
    ) -> str | None:
        """The filled template of the first pattern the question matches; None (declined)
        when none matches."""
        text = " ".join(question.split())
        for pattern, fill in _TEMPLATES:
            m = pattern.match(text)
            if m:
                return fill(m, schema)
        return None
