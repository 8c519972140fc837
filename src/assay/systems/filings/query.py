"""Query understanding: what a filings question asks for, before anything is ranked.

`plan_query(text, resolver)` returns a `QueryPlan`: the companies (entity resolution), the
period phrases (`fiscal.parse_periods`), the forms named ("10-K", "quarterly report", "earnings
release"), the financial metrics named (with the statement each lives on: capex -> cash flow
statement, net PP&E -> balance sheet), whether the question looks forward ("forecast",
"expect"), and the text to rank with: the query minus instruction boilerplate ("round your answer
to two decimal places") plus the standard wording of each metric it names ("capex" -> "capital
expenditures purchases of property plant and equipment").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assay.systems.filings.entities import EntityMatch, EntityResolver
from assay.systems.filings.fiscal import PeriodRef, parse_periods

__all__ = ["CONCEPTS", "METRICS", "STATEMENTS", "Metric", "QueryPlan", "plan_query"]

STATEMENTS = ("balance", "income", "cashflow", "equity")


@dataclass(frozen=True, slots=True)
class Metric:
    """A financial concept: the phrases that name it, its filing wording, and its statements."""

    name: str
    pattern: str
    expansion: str
    statements: tuple[str, ...] = ()


# Standard financial vocabulary; `statements` says where the figure is reported.
METRICS: tuple[Metric, ...] = (
    Metric("balance_sheet", r"balance\s+sheets?|statements?\s+of\s+financial\s+position",
           "consolidated balance sheets total assets total liabilities equity", ("balance",)),
    Metric("income_statement",
           r"income\s+statements?|statements?\s+of\s+(?:income|operations|earnings)|p\s*&\s*l"
           r"|profit\s+and\s+loss",
           "consolidated statements of operations income net revenues", ("income",)),
    Metric("cash_flow_statement", r"cash\s+flows?\s+statements?|statements?\s+of\s+cash\s+flows?",
           "consolidated statements of cash flows operating investing financing activities",
           ("cashflow",)),
    Metric("capex", r"capex|capital\s+expenditures?|capital\s+spending",
           "capital expenditures purchases of property plant and equipment", ("cashflow",)),
    Metric("ppe", r"pp\s*&\s*e|ppne|property,?\s+plant,?\s+(?:and|&)\s+equipment|fixed\s+assets?",
           "property plant and equipment net", ("balance",)),
    Metric("cogs", r"cogs|cost\s+of\s+(?:goods\s+)?(?:sold|sales|revenues?)",
           "cost of sales cost of goods sold cost of revenue", ("income",)),
    Metric("revenue", r"revenues?|net\s+sales|top\s*line|sales",
           "total revenues net sales", ("income",)),
    Metric("operating_income", r"operating\s+(?:income|profit|margin)|ebit\b",
           "operating income", ("income",)),
    Metric("gross_margin", r"gross\s+(?:margin|profit)", "gross margin gross profit", ("income",)),
    Metric("net_income", r"net\s+(?:income|earnings|profit)|bottom\s+line",
           "net income attributable", ("income",)),
    Metric("ebitda", r"ebitda", "operating income depreciation and amortization",
           ("income", "cashflow")),
    Metric("depreciation", r"depreciation|amortization|d\s*&\s*a",
           "depreciation and amortization", ("cashflow",)),
    Metric("dividends", r"dividends?", "cash dividends paid", ("cashflow",)),
    Metric("operating_cash_flow",
           r"(?:cash\s+(?:flows?\s+)?from|cash\s+provided\s+by)\s+operati\w+|operating\s+cash\s+flows?",
           "net cash provided by operating activities", ("cashflow",)),
    Metric("free_cash_flow", r"free\s+cash\s+flows?",
           "net cash provided by operating activities capital expenditures", ("cashflow",)),
    Metric("inventory", r"inventor(?:y|ies)", "inventories", ("balance",)),
    Metric("receivables", r"accounts\s+receivables?|\bnet\s+ar\b|receivables",
           "accounts receivable net", ("balance",)),
    Metric("payables", r"accounts\s+payables?|\bdpo\b|days\s+payables?",
           "accounts payable", ("balance",)),
    Metric("total_assets", r"total\s+assets|return\s+on\s+assets|\broa\b|asset\s+turnover",
           "total assets", ("balance",)),
    Metric("current", r"current\s+(?:assets|liabilities)|working\s+capital|quick\s+ratio"
           r"|current\s+ratio|liquidity",
           "total current assets total current liabilities", ("balance",)),
    Metric("debt", r"\bdebt\b|borrowings?|leverage", "long-term debt borrowings", ("balance",)),
    Metric("equity_total", r"shareholders['’]?\s+equity|stockholders['’]?\s+equity|\broe\b"
           r"|return\s+on\s+equity", "total shareholders equity", ("balance",)),
    Metric("effective_tax", r"effective\s+tax\s+rate|income\s+tax(?:es)?",
           "effective tax rate provision for income taxes", ()),
    Metric("interest_expense", r"interest\s+expense|interest\s+coverage",
           "interest expense", ("income",)),
    Metric("capital_intensity", r"capital[\s-]+intensive|capital\s+intensity",
           "capital expenditures property plant and equipment net total assets",
           ("balance", "cashflow")),
    Metric("geography", r"geograph\w*|regions?|countries",
           "geographic information United States international revenues by region", ()),
    Metric("growth", r"(?:high|revenue|sales)[\s-]+growth|growth\s+(?:company|rate)",
           "sales increase percent change compared to prior year", ("income",)),
    Metric("restructuring", r"restructuring", "restructuring charges", ()),
    Metric("eps", r"\beps\b|earnings\s+per\s+share", "earnings per share diluted", ("income",)),
    Metric("segments", r"segments?", "segment results operating segments", ()),
    Metric("legal", r"legal\s+(?:battles?|proceedings?|matters?)|litigation|lawsuits?",
           "legal proceedings litigation", ()),
    Metric("var", r"\bvar\b|value[\s-]at[\s-]risk", "value-at-risk VaR", ()),
)  # fmt: skip

# Analyst concepts (`plan_query(..., concepts=True)`): judgement words an analyst uses that a
# filing never prints, mapped to the line items, statements and passages that answer them. A
# concept adds its wording to the ranking text and its statements to the plan; a question that
# needs several statements ("is it capital-intensive": capex on the cash flow statement, PP&E
# and total assets on the balance sheet, revenue on the income statement) then gets one page of
# each in its top k (`RetrievalConfig.statement_cover`). Written from the standard definitions
# (capital intensity = capex or fixed assets over revenue or total assets; a margin = a profit
# line over revenue), not from any question's gold pages.
CONCEPTS: tuple[Metric, ...] = (
    Metric("capital_intensity", r"capital[\s-]+intensive|capital\s+intensity",
           "capital expenditures purchases of property plant and equipment net total assets "
           "total revenues", ("balance", "cashflow", "income")),
    Metric("margin", r"(?:gross|operating|profit|net|ebitda)?\s*margins?",
           "gross profit total revenues net sales cost of sales as a percent to sales",
           ("income",)),
    Metric("drivers", r"what\s+(?:drove|drives|caused|explains?)|drivers?\s+(?:of|behind)"
           r"|driven\s+by|reasons?\s+(?:for|behind)|why\s+(?:did|has|have|was|were)",
           "driven by primarily due to increase decrease compared to prior year", ()),
    Metric("liquidity_profile", r"liquidity\s+profile|(?:short|long)[\s-]+term\s+liquidity"
           r"|solven\w+",
           "total current assets total current liabilities cash and cash equivalents",
           ("balance",)),
    Metric("retention", r"retain(?:s|ing)?|retention|churn|attrition|loyalty",
           "retention retain attrition renewal", ()),
    Metric("customers", r"(?:primary|main|major|largest|key|principal|biggest)\s+customers?"
           r"|customer\s+concentration|who\s+(?:are|is)\s+\w*\s*customers?",
           "customers principal customers major customers percent of revenues sales to", ()),
    Metric("spin_off", r"spin(?:ning)?[\s-]*offs?|spun[\s-]+off|divest\w*|separation",
           "spin-off separation separate company divestiture distribution to shareholders", ()),
    Metric("retirement_benefits", r"retirees?|pensions?|post[\s-]?retirement"
           r"|retirement\s+(?:plans?|benefits?)",
           "pension and postretirement benefit plans estimated future benefit payments "
           "retirees", ()),
    Metric("listed_securities", r"securities\s+registered|registered\s+(?:to\s+trade\s+)?on"
           r"|(?:listed|traded|trade)\s+on\s+(?:a|the|any)\s+(?:national\s+)?"
           r"(?:securities\s+)?(?:stock\s+)?exchange|trading\s+symbols?",
           "securities registered pursuant to section 12(b) of the act title of each class "
           "trading symbol name of each exchange on which registered", ()),
)  # fmt: skip

_CONCEPT_RES = [(m, re.compile(rf"(?<![\w&])(?:{m.pattern})(?![\w&])", re.I)) for m in CONCEPTS]

_METRIC_RES = [(m, re.compile(rf"(?<![\w&])(?:{m.pattern})(?![\w&])", re.I)) for m in METRICS]

_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("10-K", re.compile(r"\b10-?k\b|\bannual\s+report\b", re.I)),
    ("10-Q", re.compile(r"\b10-?q\b|\bquarterly\s+report\b", re.I)),
    ("8-K", re.compile(r"\b8-?k\b|\bcurrent\s+report\b", re.I)),
    ("EARNINGS", re.compile(r"\bearnings\s+(?:release|report|call)\b|\bpress\s+release\b", re.I)),
)

_FORWARD = re.compile(
    r"\b(?:forecast\w*|expect\w*|guidance|outlook|project(?:ed|ion|s)?|anticipat\w*|plan(?:s|ned)?"
    r"|will|future|next\s+year)\b",
    re.I,
)

# instruction boilerplate that says how to answer, not what to find
_BOILERPLATE = [
    re.compile(p, re.I)
    for p in (
        r"assume\s+(?:that\s+)?you\s+are\s+an?\s+[\w\s]+?analyst[.,]?",
        r"(?:please\s+)?(?:give|provide|calculate|compute|address|answer|respond)[\w\s,]*?"
        r"(?:question|answer|response|metric)\b",
        r"round\s+(?:your\s+)?(?:answer\s+)?to\s+(?:one|two|three|\d+)\s+decimal\s+places?",
        r"answer\s+in\s+(?:units\s+of\s+)?[\w\s]+?(?:millions|billions|percents?|thousands)",
        r"\(?in\s+(?:units\s+of\s+)?(?:usd\s+)?(?:millions|billions|thousands|percents?)\)?",
        r"(?:by\s+)?(?:primarily\s+)?(?:relying|basing|using|utilizing|referencing|drawing)"
        r"[\w\s,]*?(?:details|information|line\s+items|data)",
        r"(?:shown|outlined|provided|stated|found|presented)\s+(?:plainly\s+|clearly\s+|only\s+)?"
        r"(?:in|within)",
        r"we\s+(?:want|need)\s+to\s+calculate\s+a[\w\s()]*?metric\.?",
        r"here['’]s\s+the\s+question:?",
        r"if\s+[\w\s]+?is\s+not\s+(?:a\s+)?(?:useful|relevant|meaningful)[^.?]*[.?]?",
        r"(?:state|explain)\s+(?:that\s+)?(?:and\s+explain\s+)?why\.?",
    )
]


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """What a query asks for: companies, periods, forms, metrics and the text to rank with."""

    text: str
    entities: tuple[EntityMatch, ...] = ()
    periods: tuple[PeriodRef, ...] = ()
    forms: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    statements: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    statements_named: bool = False
    forward_looking: bool = False
    search_text: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def entity_keys(self) -> tuple[str, ...]:
        return tuple(e.key for e in self.entities)

    def to_dict(self) -> dict[str, object]:
        return {
            "entities": [e.company for e in self.entities],
            "periods": [p.text for p in self.periods],
            "forms": list(self.forms),
            "metrics": list(self.metrics),
            "statements": list(self.statements),
            "concepts": list(self.concepts),
            "statements_named": self.statements_named,
            "forward_looking": self.forward_looking,
            "search_text": self.search_text,
        }


def strip_boilerplate(text: str) -> str:
    """The query without instructions about answer format (units, rounding, persona)."""
    for pattern in _BOILERPLATE:
        text = pattern.sub(" ", text)
    text = re.sub(r"\s+", " ", text)
    text = re.sub(
        r"\(\s*\)|\s+(?=[.,;:?!])", "", text
    )  # emptied brackets, space before punctuation
    text = re.sub(r"([.,;:?!])(?:\s*[.,;:])+", r"\1", text)  # punctuation left doubled
    return re.sub(r"^[\s.,;:]+", "", text).strip()


def plan_query(
    text: str,
    resolver: EntityResolver | None = None,
    *,
    drop_scope: bool = False,
    concepts: bool = False,
) -> QueryPlan:
    """Parse `text` into a QueryPlan (deterministic; no model calls).

    `concepts`: also read the analyst concepts of `CONCEPTS` (their wording joins the ranking
    text, their statements join the plan's statements unless a statement is named outright).
    """
    entities = tuple(resolver.resolve(text)) if resolver is not None else ()
    periods = tuple(parse_periods(text))
    forms = tuple(form for form, pattern in _FORMS if pattern.search(text))
    core = strip_boilerplate(text)
    metrics: list[Metric] = []
    for metric, pattern in _METRIC_RES:
        if pattern.search(text) and metric not in metrics:
            metrics.append(metric)
    # a statement named outright overrides the statements implied by metrics
    named = [m for m in metrics if m.name.endswith(("_sheet", "_statement"))]
    source = named or metrics
    statements: list[str] = []
    for m in source:
        for s in m.statements:
            if s not in statements:
                statements.append(s)
    found: list[Metric] = []
    if concepts:
        found = [c for c, pattern in _CONCEPT_RES if pattern.search(core)]
        if not named:
            for c in found:
                for s in c.statements:
                    if s not in statements:
                        statements.append(s)
    expansions = " ".join(m.expansion for m in [*metrics, *found])
    if drop_scope:
        # company and period are handled by filters; their words only favour cover pages
        for phrase in [*(e.text for e in entities), *(e.company for e in entities)]:
            for word in phrase.split():
                core = re.sub(rf"(?<!\w){re.escape(word)}(?:['’]s)?(?!\w)", " ", core, flags=re.I)
    search_text = re.sub(r"\s+", " ", f"{core} {expansions}").strip()
    return QueryPlan(
        text=text,
        entities=entities,
        periods=periods,
        forms=forms,
        metrics=tuple(m.name for m in metrics),
        statements=tuple(statements),
        concepts=tuple(c.name for c in found),
        statements_named=bool(named),
        forward_looking=bool(_FORWARD.search(core)),
        search_text=search_text,
    )
