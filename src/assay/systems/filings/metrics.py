"""Standard financial metrics from line items: each formula written once, with its evidence.

`ITEMS` names the line items a metric reads (revenue, COGS, operating income, net income, capex,
PP&E, total assets, current assets and liabilities, inventory, receivables, payables, cash from
operations, dividends, depreciation and amortization, ...): how a statement prints each one
(a pattern over the row label), the statement it lives on, and how a question names it.

`FORMULAS` are the metrics computed from them, one line each: margins (gross, operating, net,
EBITDA, COGS, capex as a share of revenue), turnover ratios (asset, fixed asset, inventory,
receivables), days (DSO, DIO, DPO), returns (ROA, ROE), liquidity (current, quick, operating
cash flow ratio), payout (dividend payout, retention), leverage (debt to equity, interest
coverage), free cash flow, EBITDA and per-share figures. A balance-sheet item inside a ratio
over a year is averaged over the year's two balance-sheet dates ("average PP&E between FY2018
and FY2019"), as FinanceBench and the standard definitions do.

`parse_metric_question(text)` reads what a question asks: a formula or a line item, the shape
(one fiscal year; a year-over-year change or a CAGR between two years; an N-year average), the
years, a quarter, and the unit and rounding asked for ("in USD millions", "round to two
decimal places", "in units of percents"). `evaluate(query, get)` computes it with `get(item,
fiscal_year)` returning a `Figure`, and keeps every figure it read: the answer cites their pages.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "FALLBACK",
    "FORMULAS",
    "HEALTHY_RATIO",
    "ITEMS",
    "Figure",
    "Formula",
    "Item",
    "JudgementQuery",
    "JudgementResult",
    "MetricQuery",
    "MetricResult",
    "Unit",
    "evaluate",
    "format_value",
    "judge_metric",
    "parse_judgement",
    "parse_metric_question",
]

Unit = Literal["money", "percent", "ratio", "days", "per_share", "count"]


@dataclass(frozen=True, slots=True)
class Item:
    """A line item: how statements print it, where it lives, how a question names it.

    `outflow` items (capex, dividends paid) are printed as negatives on the cash flow statement
    and asked for as amounts: their magnitude is used.
    """

    name: str
    label: str
    pattern: re.Pattern[str]
    statements: tuple[str, ...]
    question: re.Pattern[str]
    outflow: bool = False
    unit: Unit = "money"
    balance: bool = False  # a balance at a date (averaged in ratios over a year)


def _item(
    name: str,
    label: str,
    pattern: str,
    statements: tuple[str, ...],
    question: str,
    *,
    outflow: bool = False,
    unit: Unit = "money",
    balance: bool = False,
) -> Item:
    return Item(
        name, label, re.compile(pattern, re.I), statements, re.compile(question, re.I),
        outflow, unit, balance,
    )  # fmt: skip


_LOSS = r"(?:\s*\(loss\))?"
ITEMS: dict[str, Item] = {
    i.name: i
    for i in (
        _item("revenue", "revenue",
              r"^(?:total\s+)?(?:net\s+)?(?:operating\s+)?(?:revenues?|sales)(?:,\s*net)?$"
              r"|^total\s+net\s+(?:revenues?|sales)$|^total\s+revenues?(?:\s+and\s+other\s+income)?$"
              r"|^(?:net\s+)?sales\s+and\s+(?:other\s+)?(?:operating\s+)?revenues?$",
              ("income",), r"\b(?:total\s+|net\s+)?(?:revenues?|sales|top\s*line)\b(?!\s+per)"),
        _item("cogs", "cost of goods sold",
              r"^(?:total\s+)?cost\s+of\s+(?:goods\s+sold|sales|revenues?|products\s+sold|net\s+revenues?)"
              r"(?:\s*\(exclusive[^)]*\))?$|^cost\s+of\s+(?:sales|revenues?)$",
              ("income",), r"\bcogs\b|cost\s+of\s+(?:goods\s+sold|sales|revenues?)"),
        _item("gross_profit", "gross profit", r"^gross\s+(?:profit|margin)$", ("income",),
              r"gross\s+profit"),
        _item("operating_income", "operating income",
              rf"^(?:total\s+)?operating\s+(?:income|profit){_LOSS}$|^income{_LOSS}\s+from\s+operations$"
              r"|^operating\s+income\s*\(loss\)$|^earnings\s+from\s+operations$",
              ("income",), r"operating\s+(?:income|profit)|income\s+from\s+operations|\bebit\b(?!da)"),
        _item("net_income_attributable", "net income attributable to shareholders",
              rf"^net\s+(?:income|earnings){_LOSS}\s+attributable\s+to\s+"
              r"(?!.*(?:noncontrolling|non-controlling|minority|redeemable))[\w\s.,&'’-]+$",
              ("income",), r"net\s+(?:income|earnings)\s+attributable"),
        _item("net_income", "net income", rf"^net\s+(?:income|earnings){_LOSS}$",
              ("income", "cashflow"), r"net\s+(?:income|earnings|profit)|bottom\s+line|\bni\b"),
        _item("capex", "capital expenditure",
              r"^(?:purchases?|additions?|payments?\s+for|acquisitions?|expenditures?)\s+(?:of|to|for)\s+"
              r"(?:property|premises|fixed\s+assets|capital\s+assets)|^capital\s+expenditures?$",
              ("cashflow",), r"capex|capital\s+expenditures?|capital\s+spending", outflow=True),
        _item("ppe", "net PP&E",
              r"^(?:property|premises),?\s+(?:plant\s+)?(?:and|&)\s+equipment,?\s*(?:[-—–]\s*)?(?:,\s*)?net$"
              r"|^net\s+property(?:,\s*plant)?\s+and\s+equipment$|^property\s+and\s+equipment,\s+net$"
              r"|^property,\s+plant\s+and\s+equipment\s*[-—–]\s*net$",
              ("balance",), r"pp\s*&\s*e|ppne|property,?\s+plant|fixed\s+assets?", balance=True),
        _item("total_assets", "total assets", r"^total\s+assets$", ("balance",),
              r"total\s+assets|\bassets\b", balance=True),
        _item("current_assets", "total current assets", r"^total\s+current\s+assets$",
              ("balance",), r"current\s+assets", balance=True),
        _item("current_liabilities", "total current liabilities",
              r"^total\s+current\s+liabilities$", ("balance",), r"current\s+liabilities",
              balance=True),
        _item("total_liabilities", "total liabilities", r"^total\s+liabilities$", ("balance",),
              r"total\s+liabilities", balance=True),
        _item("inventory", "inventory",
              r"^(?:merchandise\s+)?inventor(?:y|ies)(?:,\s*net)?$|^total\s+inventor(?:y|ies)$",
              ("balance",), r"inventor(?:y|ies)", balance=True),
        _item("receivables", "accounts receivable",
              r"^(?:trade\s+)?(?:accounts\s+)?receivables?(?:,\s*net.*|\s+net.*|,\s*less.*)?$"
              r"|^accounts\s+(?:and\s+notes\s+)?receivable",
              ("balance",), r"receivables?|\bnet\s+ar\b|\bar\b", balance=True),
        _item("payables", "accounts payable", r"^(?:trade\s+)?accounts\s+payable(?:,\s*trade)?$",
              ("balance",), r"accounts\s+payables?|\bpayables\b", balance=True),
        _item("equity", "total shareholders' equity",
              r"^total\s+(?:share|stock)holders['’]?\s+equity(?:\s*\(deficit\))?$"
              r"|^total\s+(?:\w+\s+)?(?:share|stock)holders['’]?\s+equity$|^total\s+equity$",
              ("balance",), r"(?:share|stock)holders['’]?\s+equity|\bequity\b", balance=True),
        _item("long_term_debt", "long-term debt",
              r"^long[-\s]term\s+debt(?:,\s*(?:net|excluding|less).*)?$", ("balance",),
              r"long[-\s]term\s+debt|\bdebt\b", balance=True),
        _item("operating_cash_flow", "cash from operations",
              r"^net\s+cash\s+(?:provided\s+by|from|generated\s+(?:by|from))\s+"
              r"(?:\(used\s+(?:in|for)\)\s+)?operating\s+activities$"
              r"|^cash\s+(?:provided\s+by|from)\s+operat\w+(?:\s+activities)?$",
              ("cashflow",), r"cash\s+(?:flows?\s+)?from\s+operations|operating\s+cash\s+flows?"
              r"|cash\s+(?:provided\s+by|from)\s+operating"),
        _item("dividends", "cash dividends paid",
              r"^(?:cash\s+)?dividends\s+(?:paid|declared)|^dividends\s+paid|^payments?\s+(?:of|for)\s+"
              r"(?:cash\s+)?dividends|^dividends\s+to\s+(?:share|stock)holders",
              ("cashflow",), r"dividends?", outflow=True),
        _item("depreciation", "depreciation and amortization",
              r"^depreciation(?:,?\s+(?:depletion\s+)?(?:and|&)\s+amortization)?(?:\s+expense)?$"
              r"|^depreciation\s+and\s+amortization",
              ("cashflow", "income"), r"depreciation|amortization|d\s*&\s*a"),
        _item("interest_expense", "interest expense", r"^interest\s+expense(?:,\s*net)?$",
              ("income",), r"interest\s+expense"),
        _item("income_tax", "income tax expense",
              r"^(?:provision\s+for|benefit\s+from)?\s*income\s+tax(?:es)?(?:\s+expense)?"
              r"(?:\s*\(benefit\))?$|^(?:total\s+)?income\s+tax\s+(?:expense|provision)",
              ("income",), r"income\s+tax(?:es)?\b"),
        _item("pretax_income", "income before income taxes",
              r"^(?:income|earnings)(?:\s*\(loss\))?\s+before\s+(?:provision\s+for\s+)?income\s+tax",
              ("income",), r"(?:pre-?tax|before\s+(?:income\s+)?tax(?:es)?)\s+(?:income|earnings)"),
        _item("eps_diluted", "diluted earnings per share",
              r"^diluted(?:\s+earnings\s+per\s+(?:common\s+)?share)?$|diluted.*per\s+share"
              r"|per\s+share.*diluted",
              ("income",), r"\beps\b|earnings\s+per\s+share", unit="per_share"),
    )
}  # fmt: skip


FALLBACK: dict[str, str] = {"net_income_attributable": "net_income"}
"""An item a filing may not print separately: what stands for it (a company without
noncontrolling interests prints only net income)."""


@dataclass(frozen=True, slots=True)
class Figure:
    """One value of one line item for one fiscal year (or quarter), and where it is printed."""

    item: str
    fiscal_year: int
    value: float  # in units: USD, USD per share, a pure number
    label: str = ""
    fiscal_quarter: int | None = None
    chunk_id: str | None = None
    doc_id: str | None = None
    page: int | None = None
    statement: str | None = None
    source: str = "table"  # table | xbrl


Get = Callable[[str, int], "Figure | None"]


class _Missing(Exception):
    def __init__(self, item: str, year: int) -> None:
        super().__init__(f"{item} FY{year}")
        self.item, self.year = item, year


@dataclass
class _Reader:
    """What a formula reads, kept as evidence."""

    get: Get
    used: list[Figure] = field(default_factory=list)

    def __call__(self, item: str, year: int) -> float:
        f = self.get(item, year)
        if f is None and item in FALLBACK:
            f = self.get(FALLBACK[item], year)
        if f is None:
            raise _Missing(item, year)
        if f not in self.used:
            self.used.append(f)
        return abs(f.value) if ITEMS[item].outflow else f.value

    def avg(self, item: str, year: int) -> float:
        """The average of the balance at the end of `year` and of the year before."""
        return (self(item, year) + self(item, year - 1)) / 2.0


Compute = Callable[[_Reader, int], float]


@dataclass(frozen=True, slots=True)
class Formula:
    """A metric: its name, how a question names it, its unit, and its formula (written once)."""

    name: str
    label: str
    question: re.Pattern[str]
    unit: Unit
    compute: Compute
    text: str  # the formula in words, for the answer


def _ratio(a: float, b: float) -> float:
    if b == 0:
        raise ZeroDivisionError
    return a / b


def _f(name: str, label: str, question: str, unit: Unit, text: str, compute: Compute) -> Formula:
    return Formula(name, label, re.compile(question, re.I), unit, compute, text)


# order matters: the first whose pattern matches the question is the metric (specific first)
FORMULAS: tuple[Formula, ...] = (
    _f("fixed_asset_turnover", "fixed asset turnover ratio", r"fixed\s+asset\s+turnover", "ratio",
       "revenue / average net PP&E", lambda r, y: _ratio(r("revenue", y), r.avg("ppe", y))),
    _f("inventory_turnover", "inventory turnover ratio", r"inventory\s+turnover", "ratio",
       "COGS / average inventory", lambda r, y: _ratio(r("cogs", y), r.avg("inventory", y))),
    _f("receivables_turnover", "receivables turnover ratio",
       r"(?:accounts\s+)?receivables?\s+turnover", "ratio",
       "revenue / average accounts receivable",
       lambda r, y: _ratio(r("revenue", y), r.avg("receivables", y))),
    _f("asset_turnover", "asset turnover ratio", r"(?<!fixed\s)(?:total\s+)?asset\s+turnover",
       "ratio", "revenue / average total assets",
       lambda r, y: _ratio(r("revenue", y), r.avg("total_assets", y))),
    _f("dpo", "days payable outstanding", r"days\s+payables?\s+outstanding|\bdpo\b", "days",
       "365 x average accounts payable / (COGS + change in inventory)",
       lambda r, y: _ratio(365.0 * r.avg("payables", y),
                           r("cogs", y) + r("inventory", y) - r("inventory", y - 1))),
    _f("dso", "days sales outstanding", r"days\s+sales\s+outstanding|\bdso\b", "days",
       "365 x average accounts receivable / revenue",
       lambda r, y: _ratio(365.0 * r.avg("receivables", y), r("revenue", y))),
    _f("dio", "days inventory outstanding",
       r"days\s+(?:inventory|in\s+inventory|of\s+inventory)\s+outstanding|\bdio\b|days\s+inventory\b",
       "days", "365 x average inventory / COGS",
       lambda r, y: _ratio(365.0 * r.avg("inventory", y), r("cogs", y))),
    _f("roa", "return on assets", r"return\s+on\s+(?:total\s+)?assets|\broa\b", "ratio",
       "net income / average total assets",
       lambda r, y: _ratio(r("net_income", y), r.avg("total_assets", y))),
    _f("roe", "return on equity", r"return\s+on\s+(?:shareholders['’]?\s+)?equity|\broe\b", "ratio",
       "net income / average shareholders' equity",
       lambda r, y: _ratio(r("net_income", y), r.avg("equity", y))),
    _f("operating_cash_flow_ratio", "operating cash flow ratio",
       r"operating\s+cash\s+flow\s+ratio", "ratio", "cash from operations / current liabilities",
       lambda r, y: _ratio(r("operating_cash_flow", y), r("current_liabilities", y))),
    _f("quick_ratio", "quick ratio", r"quick\s+ratio|acid[\s-]+test", "ratio",
       "(current assets - inventory) / current liabilities",
       lambda r, y: _ratio(r("current_assets", y) - r("inventory", y), r("current_liabilities", y))),
    _f("current_ratio", "current ratio", r"current\s+ratio|working\s+capital\s+ratio", "ratio",
       "current assets / current liabilities",
       lambda r, y: _ratio(r("current_assets", y), r("current_liabilities", y))),
    _f("retention_ratio", "retention ratio", r"retention\s+ratio|plowback", "ratio",
       "(net income - dividends) / net income",
       lambda r, y: _ratio(_ni(r, y) - r("dividends", y), _ni(r, y))),
    _f("payout_ratio", "dividend payout ratio", r"(?:dividend\s+)?payout\s+ratio", "ratio",
       "dividends / net income", lambda r, y: _ratio(r("dividends", y), _ni(r, y))),
    _f("debt_to_equity", "debt to equity ratio", r"debt[\s-]+to[\s-]+equity", "ratio",
       "long-term debt / shareholders' equity",
       lambda r, y: _ratio(r("long_term_debt", y), r("equity", y))),
    _f("interest_coverage", "interest coverage ratio",
       r"interest\s+coverage|times\s+interest\s+earned", "ratio",
       "operating income / interest expense",
       lambda r, y: _ratio(r("operating_income", y), r("interest_expense", y))),
    _f("capex_to_revenue", "capex as a share of revenue",
       r"(?:capex|capital\s+expenditures?)\s+as\s+a\s+%\s+of\s+(?:revenue|sales)"
       r"|(?:capex|capital\s+expenditures?)\s*(?:to|/)\s*(?:revenue|sales)", "percent",
       "capex / revenue", lambda r, y: 100.0 * _ratio(r("capex", y), r("revenue", y))),
    _f("ebitda_margin", "EBITDA margin", r"ebitda\s*%?\s*margin", "percent",
       "(operating income + depreciation and amortization) / revenue",
       lambda r, y: 100.0 * _ratio(r("operating_income", y) + r("depreciation", y), r("revenue", y))),
    _f("cogs_margin", "COGS margin", r"cogs\s*%?\s*margin|cost\s+of\s+(?:goods\s+sold|sales)\s*%?\s*margin",
       "percent", "COGS / revenue", lambda r, y: 100.0 * _ratio(r("cogs", y), r("revenue", y))),
    _f("gross_margin", "gross margin", r"gross\s+(?:profit\s+)?%?\s*margin", "percent",
       "(revenue - COGS) / revenue",
       lambda r, y: 100.0 * _ratio(r("revenue", y) - r("cogs", y), r("revenue", y))),
    _f("effective_tax_rate", "effective tax rate", r"effective\s+tax\s+rate", "percent",
       "income tax expense / income before income taxes",
       lambda r, y: 100.0 * _ratio(r("income_tax", y), r("pretax_income", y))),
    _f("cash_conversion_cycle", "cash conversion cycle", r"cash\s+conversion\s+cycle|\bccc\b",
       "days", "DIO + DSO - DPO",
       lambda r, y: (_ratio(365.0 * r.avg("inventory", y), r("cogs", y))
                     + _ratio(365.0 * r.avg("receivables", y), r("revenue", y))
                     - _ratio(365.0 * r.avg("payables", y),
                              r("cogs", y) + r("inventory", y) - r("inventory", y - 1)))),
    _f("operating_margin", "operating margin",
       r"operating\s+(?:income\s+|profit\s+)?%?\s*margin|\bebit\s*%?\s*margin", "percent",
       "operating income / revenue",
       lambda r, y: 100.0 * _ratio(r("operating_income", y), r("revenue", y))),
    _f("net_margin", "net margin", r"net\s+(?:income\s+|profit\s+)?%?\s*margin|profit\s+margin",
       "percent", "net income / revenue",
       lambda r, y: 100.0 * _ratio(r("net_income", y), r("revenue", y))),
    _f("free_cash_flow", "free cash flow", r"free\s+cash\s+flows?|\bfcf\b", "money",
       "cash from operations - capex",
       lambda r, y: r("operating_cash_flow", y) - r("capex", y)),
    _f("ebitda", "EBITDA", r"\bebitda\b", "money",
       "operating income + depreciation and amortization",
       lambda r, y: r("operating_income", y) + r("depreciation", y)),
    _f("working_capital", "working capital", r"working\s+capital", "money",
       "current assets - current liabilities",
       lambda r, y: r("current_assets", y) - r("current_liabilities", y)),
)  # fmt: skip


def _ni(r: _Reader, y: int) -> float:
    """Net income attributable to the company's shareholders where printed, else net income."""
    try:
        return r("net_income_attributable", y)
    except _Missing:
        return r("net_income", y)


# ----------------------------------------------------------------------------- questions

Shape = Literal["single", "change", "cagr", "average"]

_YEAR_RE = re.compile(r"\b(?:FY\s?'?|fiscal\s+(?:year\s+)?'?)(\d{4}|\d{2})\b", re.I)
_BARE_YEAR_RE = re.compile(r"\b((?:19|20)\d{2})\b")
_CHANGE_RE = re.compile(
    r"(?:year[\s-]+over[\s-]+year|yoy|y/y|percent(?:age)?)\s+(?:change|growth|increase|decrease)"
    r"|(?:change|growth)\s+in\s+.+?\s+(?:from|between)\s+|\b(?:change|growth)\b.+\b(?:vs\.?|versus)\s",
    re.I,
)
_CAGR_RE = re.compile(r"\bcagr\b|compound(?:ed)?\s+annual\s+growth", re.I)
_AVERAGE_RE = re.compile(
    r"(\d+|two|three|four|five)[\s-]+years?\s+average|average\s+of\s+.+?\s+over", re.I
)
_SCALE_RE = re.compile(
    r"\bin\s+(?:USD\s+|US\$\s*|\$\s*|U\.S\.\s+dollars?\s+)?(thousands|millions|billions)\b", re.I
)
_DECIMALS_RE = re.compile(r"(one|two|three|four|zero|no|\d)\s+decimal\s+places?", re.I)
_WORDS = {"zero": 0, "no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_QUARTER_RE = re.compile(
    r"\bQ([1-4])\b|\b([1-4])Q\b|\b(first|second|third|fourth)\s+(?:fiscal\s+)?quarter", re.I
)


@dataclass(frozen=True, slots=True)
class MetricQuery:
    """What a question asks for, read from its words."""

    target: str  # a formula name or an item name
    is_formula: bool
    shape: Shape
    years: tuple[int, ...]  # single: (y,); change/cagr: (from, to); average: (first, ..., last)
    quarter: int | None = None
    scale: float | None = None  # the unit asked for: 1e6 for "in USD millions"
    decimals: int | None = None
    percent: bool = False  # "in units of percents"

    @property
    def unit(self) -> Unit:
        return "percent" if self.shape in ("change", "cagr") else self.target_unit

    @property
    def target_unit(self) -> Unit:
        """The unit of the formula or item asked about, whatever the shape."""
        if self.is_formula:
            return next(f.unit for f in FORMULAS if f.name == self.target)
        return ITEMS[self.target].unit


def _years(text: str) -> list[int]:
    found: list[tuple[int, int]] = []
    for m in _YEAR_RE.finditer(text):
        y = int(m.group(1))
        found.append((m.start(), y + 2000 if y < 100 else y))
    taken = {pos for pos, _ in found}
    for m in _BARE_YEAR_RE.finditer(text):
        if not any(abs(m.start() - p) <= 8 for p in taken):
            found.append((m.start(), int(m.group(1))))
    return [y for _, y in sorted(found)]


def _target(text: str) -> tuple[str, bool] | None:
    """The formula or line item a question names (formulas first, specific ones first; among
    items, the one named earliest in the question)."""
    for f in FORMULAS:
        if f.question.search(text):
            return f.name, True
    best: tuple[int, int, str] | None = None
    for name, item in ITEMS.items():
        m = item.question.search(text)
        if m is None:
            continue
        key = (m.start(), -len(m.group(0)), name)
        if best is None or key < best:
            best = key
    return None if best is None else (best[2], False)


def _question_clause(text: str) -> str:
    """The part of a FinanceBench-style prompt that asks ("what is ...", "how much ..."),
    without the instructions about which statement to use."""
    m = re.search(r"(?:what|how\s+much|how\s+many)\b[^?]*\??", text, re.I)
    return m.group(0) if m else text


# qualifiers no formula here honours: the figure asked for is another one
_UNSUPPORTED = re.compile(
    r"\bexclud\w*|\borganic\b|constant\s+currency|\breal\s+(?:change|growth)|(?<!un)adjusted\b"
    r"|\bnon-?gaap\b|\bper\s+(?:employee|store|customer|unit)\b|\bsegment|\bforecast|\bexpect",
    re.I,
)
_ASKS = re.compile(
    r"\b(?:what\s+(?:is|was|were|are)|how\s+much|how\s+many|calculate|compute)\b", re.I
)
_YES_NO = re.compile(
    r"^\W*(?:is|are|was|were|does|do|did|has|have|can|could|will|would|should|which|who|why)\b",
    re.I,
)


def parse_metric_question(text: str) -> MetricQuery | None:
    """The metric a question asks for, or None when it names none (see the module docs).

    Only a request for a figure ("what is ...", "how much ...", "calculate ...") is read; a
    yes/no, which/who or why question, or one qualifying the figure in a way no formula here
    honours ("excluding FX", "organic", "adjusted", "per employee", "segment", "forecast"),
    is not.
    """
    clause = _question_clause(text)
    if not _ASKS.search(text) or _YES_NO.match(clause) or _UNSUPPORTED.search(text):
        return None
    target = _target(clause) or _target(text)
    if target is None:
        return None
    name, is_formula = target
    years = _years(clause) or _years(text)
    if not years:
        return None
    shape: Shape = "single"
    if _CAGR_RE.search(text):
        shape = "cagr"
    elif _AVERAGE_RE.search(text):
        shape = "average"
    elif _CHANGE_RE.search(text) and len(set(years)) >= 2:
        shape = "change"
    uniq = sorted(set(years))
    if shape in ("change", "cagr"):
        if len(uniq) < 2:
            return None
        span: tuple[int, ...] = (uniq[0], uniq[-1])
    elif shape == "average":
        span = tuple(range(uniq[0], uniq[-1] + 1))
    else:
        span = (max(uniq),)
    scale = None
    m = _SCALE_RE.search(text)
    if m:
        scale = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}[m.group(1).lower()]
    decimals = None
    d = _DECIMALS_RE.search(text)
    if d:
        w = d.group(1).lower()
        decimals = _WORDS[w] if w in _WORDS else int(w)
    q = _QUARTER_RE.search(clause)
    quarter = None
    if q:
        g = next(x for x in q.groups() if x)
        quarter = {"first": 1, "second": 2, "third": 3, "fourth": 4}.get(g.lower()) or int(g)
    percent = bool(re.search(r"percent|%", text, re.I))
    return MetricQuery(name, is_formula, shape, span, quarter, scale, decimals, percent)


# ----------------------------------------------------------------------------- evaluation


@dataclass(frozen=True, slots=True)
class MetricResult:
    """A computed answer: the value, how it was computed, and the figures it read."""

    query: MetricQuery
    value: float
    label: str
    formula: str
    figures: tuple[Figure, ...]
    per_year: tuple[tuple[int, float], ...] = ()

    @property
    def unit(self) -> Unit:
        return self.query.unit


def _one(q: MetricQuery, reader: _Reader, year: int) -> float:
    if q.is_formula:
        f = next(f for f in FORMULAS if f.name == q.target)
        return f.compute(reader, year)
    return reader(q.target, year)


def evaluate(q: MetricQuery, get: Get) -> MetricResult | None:
    """Compute the metric `q` asks for from the figures `get` finds; None when one is missing
    (or a division by zero)."""
    reader = _Reader(get)
    try:
        if q.shape == "single":
            value = _one(q, reader, q.years[0])
            per_year: tuple[tuple[int, float], ...] = ((q.years[0], value),)
        elif q.shape == "average":
            vals = [(y, _one(q, reader, y)) for y in q.years]
            per_year = tuple(vals)
            value = sum(v for _, v in vals) / len(vals)
        else:
            a, b = q.years
            va, vb = _one(q, reader, a), _one(q, reader, b)
            per_year = ((a, va), (b, vb))
            if q.shape == "change":
                value = 100.0 * _ratio(vb - va, abs(va))
            else:
                if va <= 0 or vb <= 0:
                    return None
                value = 100.0 * ((vb / va) ** (1.0 / (b - a)) - 1.0)
    except (_Missing, ZeroDivisionError):
        return None
    if not math.isfinite(value):
        return None
    if q.is_formula:
        f = next(f for f in FORMULAS if f.name == q.target)
        label, text = f.label, f.text
    else:
        label, text = ITEMS[q.target].label, ITEMS[q.target].label
    if q.shape == "change":
        label, text = (
            f"year-over-year change in {label}",
            f"({label} {q.years[1]} / {q.years[0]} - 1)",
        )
    elif q.shape == "cagr":
        label, text = f"{q.years[1] - q.years[0]}-year CAGR of {label}", "compound annual growth"
    elif q.shape == "average":
        label, text = f"{len(q.years)}-year average {label}", f"average of {text}"
    return MetricResult(q, value, label, text, tuple(reader.used), per_year)


def format_value(
    value: float,
    unit: Unit,
    *,
    scale: float | None = None,
    decimals: int | None = None,
    percent_ratio: bool = False,
) -> str:
    """A value as the question asks for it: "$1,577 million", "24.26", "30.8%", "93.86 days".

    Money is given in the scale asked for (else millions above a million); a ratio or a
    number of days to `decimals` places (default two); a percent to `decimals` (default one).
    `percent_ratio`: a ratio asked "in units of percents" (ROA) is written as a percent.
    """  # fmt: skip
    if unit == "money":
        sc = scale or (1e6 if abs(value) >= 1e6 else 1.0)
        word = {1e3: " thousand", 1e6: " million", 1e9: " billion"}.get(sc, "")
        d = (
            decimals
            if decimals is not None
            else (2 if sc >= 1e9 else 0 if abs(value / sc) >= 100 else 2)
        )
        sign = "-" if value < 0 else ""
        return f"{sign}${abs(value) / sc:,.{d}f}{word}"
    if unit == "per_share":
        return f"${value:,.{2 if decimals is None else decimals}f}"
    if unit == "percent" or percent_ratio:
        v = value * (100.0 if percent_ratio and unit != "percent" else 1.0)
        return f"{v:.{1 if decimals is None else decimals}f}%"
    if unit == "days":
        return f"{value:,.{2 if decimals is None else decimals}f} days"
    return f"{value:,.{2 if decimals is None else decimals}f}"


# ----------------------------------------------------------------------------- yes/no on a metric

Judgement = Literal["positive", "negative", "increase", "decrease", "improve", "healthy"]

_JUDGEMENTS: tuple[tuple[Judgement, re.Pattern[str]], ...] = (
    ("positive", re.compile(r"\bpositive\b", re.I)),
    ("negative", re.compile(r"\bnegative\b", re.I)),
    ("improve", re.compile(r"\bimprov\w*", re.I)),
    ("healthy", re.compile(r"\bhealthy\b|\bsound\b|\bstrong\b", re.I)),
    ("increase", re.compile(r"\bincreas\w*|\bgr[eo]w\w*|\brais\w*|\brose\b|\brisen\b", re.I)),
    ("decrease", re.compile(r"\bdecreas\w*|\breduc\w*|\bdeclin\w*|\bfell\b|\blower\w*", re.I)),
)
HEALTHY_RATIO = 1.0
"""A liquidity ratio (current, quick, operating cash flow) at or above this is read as healthy:
the textbook rule of thumb (current assets, or liquid ones, cover current liabilities)."""


@dataclass(frozen=True, slots=True)
class JudgementQuery:
    """A yes/no question about a metric: positive? increased? improving? healthy?"""

    kind: Judgement
    metric: MetricQuery


def parse_judgement(text: str) -> JudgementQuery | None:
    """A yes/no question that turns on one metric ("Does Corning have positive working capital
    based on FY2022 data?", "Has Verizon increased its debt between 2021 and 2022?", "a healthy
    liquidity profile based on its quick ratio"), or None."""
    clause = re.split(r"(?<=\?)\s", text.strip(), maxsplit=1)[0]
    if not _YES_NO.match(clause) or _UNSUPPORTED.search(clause):
        return None
    kind = next((k for k, p in _JUDGEMENTS if p.search(clause)), None)
    target = _target(clause)
    years = sorted(set(_years(clause)))
    if kind is None or target is None or not years:
        return None
    name, is_formula = target
    span: tuple[int, ...]
    if kind in ("increase", "decrease"):
        span = (years[0], years[-1]) if len(years) > 1 else (years[0] - 1, years[0])
        shape: Shape = "change"
    elif kind == "improve":
        span = (years[-1] - 2, years[-1])
        shape = "change"
    else:
        span, shape = (years[-1],), "single"
    q = MetricQuery(name, is_formula, shape, span)
    return JudgementQuery(kind, q)


@dataclass(frozen=True, slots=True)
class JudgementResult:
    """The verdict on a yes/no metric question, with the values it rests on."""

    query: JudgementQuery
    verdict: bool
    values: tuple[tuple[int, float], ...]
    label: str
    figures: tuple[Figure, ...]


def judge_metric(jq: JudgementQuery, get: Get) -> JudgementResult | None:
    """Decide a yes/no metric question from the figures `get` finds (None when one is missing)."""
    q = jq.metric
    reader = _Reader(get)
    try:
        vals = tuple((y, _one(q, reader, y)) for y in q.years)
    except (_Missing, ZeroDivisionError):
        return None
    first, last = vals[0][1], vals[-1][1]
    if jq.kind == "positive":
        verdict = last > 0
    elif jq.kind == "negative":
        verdict = last < 0
    elif jq.kind in ("increase", "improve"):
        verdict = last > first
    elif jq.kind == "decrease":
        verdict = last < first
    else:  # healthy: a liquidity ratio at or above the rule of thumb, else a positive figure
        verdict = last >= HEALTHY_RATIO if q.target_unit == "ratio" else last > 0
    label = next((f.label for f in FORMULAS if f.name == q.target), None) or ITEMS[q.target].label
    return JudgementResult(jq, verdict, vals, label, tuple(reader.used))
