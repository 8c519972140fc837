"""The facts table: figures read from the filings' tables at corpus build.

`extract_facts(chunk_rows, page_texts)` reads every table chunk whose header names fiscal years
("(Millions) 2018 2017 2016", "January 28, 2023 January 29, 2022") and turns each row that
carries one figure per year column into one `Fact` per column:

    company, doc_id, fiscal_year (of the column), fiscal_quarter (of the filing), statement
    (balance | income | cashflow | equity, when the page is a primary statement; else None),
    line_item (the row's label), value (as printed: parentheses are negative, a dash is 0),
    unit (USD, USD per share, percent, shares) and scale (1e3 / 1e6 / 1e9 from "in millions",
    "(thousands)"; None when the table does not say), page, chunk_id, column (0 = first).

A column's fiscal year is its printed year moved by the filing's own convention: when the
latest printed year is one off the filing's fiscal year (Foot Locker's "fiscal 2022" ends on
28 January 2023) every column moves by that offset. Rows whose figures do not match the year
columns one for one (a note column, a subtotal across the page) are not read: the table holds
what the filing states unambiguously, not everything a table contains.

`corpus build` writes it as ``facts.jsonl`` beside ``chunks.jsonl``. `detect_statement` (is
this page a primary statement?) lives here because the facts table and the retriever both use
it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "STATEMENT_TITLES",
    "Fact",
    "detect_statement",
    "extract_facts",
    "parse_table",
    "split_joined_rows",
]

STATEMENT_TITLES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("balance", re.compile(r"balance\s+sheets?|statements?\s+of\s+financial\s+(?:position|condition)", re.I)),
    ("income", re.compile(r"statements?\s+of\s+(?:consolidated\s+)?(?:income|operations|earnings)(?!\s+and\s+comprehensive)|income\s+statements?", re.I)),
    ("cashflow", re.compile(r"statements?\s+of\s+(?:consolidated\s+)?cash\s+flows?", re.I)),
    ("equity", re.compile(r"statements?\s+of\s+(?:changes\s+in\s+)?(?:shareholders|stockholders|share\s*owners)['’]?\s+equity", re.I)),
)  # fmt: skip


def detect_statement(text: str) -> str | None:
    """'balance' | 'income' | 'cashflow' | 'equity' when `text` is a primary statement page.

    A statement page carries the title on a short line near its top and is mostly figures.
    """
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    head = lines[:12]
    digits = sum(c.isdigit() for c in text)
    if not head or digits < 0.12 * max(len(text), 1):
        return None
    for name, pattern in STATEMENT_TITLES:
        for line in head:
            if len(line) <= 90 and pattern.search(line):
                return name
    return None


@dataclass(frozen=True, slots=True)
class Fact:
    """One figure of one table row for one fiscal-year column."""

    company: str | None
    doc_id: str
    fiscal_year: int
    fiscal_quarter: int | None
    statement: str | None
    line_item: str
    value: float
    unit: str | None
    scale: float | None
    page: int | None
    chunk_id: str
    column: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def amount(self) -> float:
        """The value in units (scale applied; as printed when the scale is unknown)."""
        return self.value * (self.scale or 1.0)

    def figure(self) -> str:
        """'$1,577 million' / '8.89 USD per share' / '91%': the value with its unit."""
        word = {1e3: " thousand", 1e6: " million", 1e9: " billion"}.get(self.scale or 0.0, "")
        num = f"{self.value:,.2f}".rstrip("0").rstrip(".")
        if self.unit == "percent":
            return f"{num}%"
        if self.unit == "USD":
            sign = "-" if self.value < 0 else ""
            return f"{sign}${num.lstrip('-')}{word}"
        if self.unit == "USD per share":
            return f"${num} per share"
        return f"{num}{word}" + (f" {self.unit}" if self.unit else "")


_YEAR = r"(?:19[5-9]\d|20[0-4]\d)"
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_YEAR_RE = re.compile(rf"(?<![\d,.$]){_YEAR}(?![\d,.%])")
# what a header line may hold besides its years
_HEADER_FILLER = re.compile(
    rf"{_MONTH}\s+\d{{1,2}},?|\b(?:fiscal|years?|quarters?|months?|weeks?|three|six|nine|twelve"
    r"|ended|ending|as\s+of|at|and|in|of|the|dollars|millions?|thousands?|billions?|except|per"
    r"|share|amounts?|data|\$|usd|unaudited|restated|\*)\b|[()$,*:\-–—]",
    re.I,
)
_SCALE_RE = (
    (1e9, re.compile(r"\bin\s+billions\b|\(\s*billions\s*\)|\$\s*billions\b|\bbillions\s+of\b", re.I)),
    (1e6, re.compile(r"\bin\s+millions\b|\(\s*(?:dollars\s+in\s+)?millions\b|\$\s*millions\b|\bmillions\s+of\b|\$\s*in\s+millions", re.I)),
    (1e3, re.compile(r"\bin\s+thousands\b|\(\s*(?:dollars\s+in\s+)?thousands\b|\$\s*thousands\b|\bthousands\s+of\b|\$\s*in\s+thousands", re.I)),
)  # fmt: skip
_VALUE_TOKEN = re.compile(r"^\(?\$?\(?-?\d[\d,]*(?:\.\d+)?\)?%?\)?$")
_DASH = {"—", "–", "-", "—%", "-%"}


def _header_years(line: str) -> list[int] | None:
    years = [int(y) for y in _YEAR_RE.findall(line)]
    if not years:
        return None
    rest = _HEADER_FILLER.sub(" ", _YEAR_RE.sub(" ", line))
    if re.search(r"\d", rest) or len(re.findall(r"[A-Za-z]{3,}", rest)) > 1:
        return None
    return years


def _scale(text: str) -> float | None:
    for factor, pattern in _SCALE_RE:
        if pattern.search(text):
            return factor
    return None


def _split_row(line: str) -> tuple[str, list[tuple[float, bool]]] | None:
    """(label, [(value, is_percent)]) for a row that ends in figures, else None."""
    tokens = line.split()
    values: list[tuple[float, bool]] = []
    i = len(tokens)
    while i > 0:
        tok = tokens[i - 1]
        if tok in {"$", "%", ")"}:
            if tok == "%" and values:
                values[-1] = (values[-1][0], True)
            i -= 1
            continue
        if tok in _DASH:
            values.append((0.0, tok.endswith("%")))
        elif _VALUE_TOKEN.match(tok):
            neg = tok.startswith("(") or tok.startswith("$(") or tok.endswith(")")
            pct = tok.endswith("%") or tok.endswith("%)")
            digits = re.sub(r"[^\d.\-]", "", tok)
            try:
                num = float(digits)
            except ValueError:
                break
            values.append((-abs(num) if neg else num, pct))
        else:
            break
        i -= 1
    label = " ".join(tokens[:i]).strip(" .:$")
    if not values or not re.search(r"[A-Za-z]{2,}", label):
        return None
    values.reverse()
    return label, values


# a heading that ends in a colon before the row it introduces ("... activities: Depreciation")
_COLON_BREAK = re.compile(r"(?<=[a-z)]):\s+(?=[A-Z])")


def split_joined_rows(line: str) -> list[str]:
    """A line of PDF text that holds several table rows, split into one row each.

    PDF text often joins a statement's rows on one line ("Purchases of treasury stock (876.8)
    (301.4) Dividends paid (1,244.5) (1,246.4)"): a new row starts at a word with a capital
    letter that follows a figure, and after a heading that ends in a colon. Years in a header
    ("2022 2021 2020 Cash Flows - Operating Activities") stay a header row of their own.
    """
    if _header_years(line) is not None:
        return [line]  # "Fiscal 2022 Fiscal 2021 % change" is one header
    parts: list[str] = []
    for piece in _COLON_BREAK.split(line):
        tokens = piece.split()
        current: list[str] = []
        prev_figure = False
        for tok in tokens:
            figure = tok in _DASH or tok in {"$", "%", ")"} or bool(_VALUE_TOKEN.match(tok))
            if (
                current
                and prev_figure
                and not figure
                and tok[:1].isupper()
                and not re.fullmatch(_MONTH + r",?", tok, re.I)  # "January 28, 2023 January 29"
            ):
                parts.append(" ".join(current))
                current = []
            current.append(tok)
            prev_figure = figure
        if current:
            parts.append(" ".join(current))
    return parts


def parse_table(
    text: str, *, unit_line: str | None = None
) -> Iterator[tuple[str, int, float, str | None, float | None]]:
    """(line_item, printed year, value, unit, scale) for every figure of `text` that sits in a
    year column (see the module docs)."""
    scale = _scale(f"{unit_line or ''}\n{text}")
    dollars = "$" in text or scale is not None
    years: list[int] | None = None
    pending = ""  # a label that wraps onto the next line
    for line in (seg for raw in text.splitlines() for seg in split_joined_rows(raw.strip())):
        if not line:
            continue
        head = _header_years(line)
        if head is not None:
            years, pending = head, ""
            continue
        row = _split_row(line)
        if row is None:
            pending = "" if line.endswith(":") else line
            continue
        label, values = row
        if pending and label[:1].islower():
            label = f"{pending} {label}"
        pending = ""
        if years is None or len(values) != len(years):
            continue
        lowered = label.lower()
        for year, (value, pct) in zip(years, values, strict=True):
            unit: str | None
            sc: float | None
            if pct:
                unit, sc = "percent", None
            elif "per share" in lowered or "per common share" in lowered:
                unit, sc = "USD per share", None
            elif re.search(r"\bshares\b|\bnumber\s+of\b|\bemployees\b", lowered):
                unit, sc = ("shares" if "share" in lowered else None), scale
            else:
                unit, sc = ("USD" if dollars else None), scale
            yield label, year, value, unit, sc


def extract_facts(
    chunk_rows: Iterable[Mapping[str, Any]],
    page_texts: Mapping[tuple[str, int], str] | None = None,
) -> list[Fact]:
    """Facts of every table chunk (`chunks.jsonl` rows carrying the filing's fields)."""
    statements: dict[tuple[str, int], str | None] = {}
    out: list[Fact] = []
    for row in chunk_rows:
        if row.get("kind") != "table":
            continue
        doc_id = str(row["doc_id"])
        pages = list(row.get("pages") or ([row["page"]] if row.get("page") is not None else []))
        page = int(pages[0]) if pages else None
        statement = None
        if page is not None:
            key = (doc_id, page)
            if key not in statements:
                text = (page_texts or {}).get(key)
                statements[key] = detect_statement(text if text is not None else str(row["text"]))
            statement = statements[key]
        fy = row.get("fiscal_year")
        fq = row.get("fiscal_quarter")
        parsed = list(parse_table(str(row["text"]), unit_line=row.get("unit")))
        if not parsed:
            continue
        latest = max(y for _, y, _, _, _ in parsed)
        offset = int(fy) - latest if fy is not None and abs(int(fy) - latest) <= 1 else 0
        columns: dict[str, int] = {}
        for label, year, value, unit, scale in parsed:
            col = columns.get(label, 0)
            columns[label] = col + 1
            out.append(
                Fact(
                    company=row.get("company"), doc_id=doc_id, fiscal_year=year + offset,
                    fiscal_quarter=None if fq is None else int(fq), statement=statement,
                    line_item=label, value=value, unit=unit, scale=scale, page=page,
                    chunk_id=str(row["chunk_id"]), column=col,
                )
            )  # fmt: skip
    return out
