"""Numbers in answers: extraction with currency, scale, percent and basis points, and comparison.

`extract_quantities(text)` finds every figure in a text and reads it the way an analyst would:
"$4.2 billion", "4,213 million", "USD 4.21bn", "(1,577)" (a negative), "30.8%", "40 bp",
"0.40 percentage points", "2.7x". Calendar years ("FY2022", "in 2023"), quarters ("Q2") and the
day of a written date ("December 31, 2018") are recognised and marked `is_year`/skipped so that
they are never mistaken for amounts.

`compare(reference, answer)` decides whether two quantities state the same figure.

Rounding tolerance (documented rule)
------------------------------------
A reference written with `d` decimals at scale `s` has a last-digit unit `ulp = 10**-d * s`. An
answer figure agrees with it when its magnitude rounds *or truncates* to the reference's last
digit:

    |reference| - ulp  <=  |answer|  <  |reference| + ulp / 2

("3.45" agrees with "3.46", since 3.456 truncates to 3.45; "0.45%" does not agree with "0.4%",
since 0.45 rounds half-up to 0.5). The truncation side reaches beyond half an ulp only while a
whole ulp is at most 1% of |reference|: a one-digit reference ("0.4") is not widened to "0.3",
because there one unit of the last digit is a quarter of the value. The band is widened on both sides to the answer's own half ulp,
capped at 1% of |reference|, so an answer may round more coarsely than the reference but
"about $4 billion" does not pass for $4,213 million. So "$4.2 billion" (+-0.05bn), "4,213 million"
and "USD 4.21bn" all agree, while "31.0%" does not agree with "30.8%". Trailing zeros after a decimal point ("$1577.00", "0.40") are treated as
formatting in a reference, but as stated precision in an answer ("31.0%" claims a tenth). Signs are compared by magnitude: "a loss of $546 million" and
"-546" agree; a sign stated in words is common and a wrong sign is rare in practice.

Units: currency amounts are compared in currency units; percent, percentage points and basis points
are compared in percentage points (40 bp = 0.40 pp); a bare number may stand for a percent
("30.8" for 30.8%) or for its fraction ("0.308" for 30.8%); a bare number without a scale word may
carry the reference's scale ("1,577" for "$1,577 million"), because answers routinely drop the
unit the question already set. A figure that agrees only after multiplying or dividing by
1,000, 1,000,000 or 1,000,000,000 is a likely scale error (thousands read as millions), and is
reported as such.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Literal

from assay._numfmt import SCALE_ABBREVIATIONS, currency_code, number_value

__all__ = [
    "Kind",
    "MatchResult",
    "Quantity",
    "apply_hint",
    "compare",
    "compare_range",
    "extract_quantities",
    "extract_with_units",
    "find_match",
    "parse_quantity",
    "scale_hint",
    "table_rows",
]


class Kind(StrEnum):
    """What a figure measures. Percent, percentage points and basis points share one axis (pp)."""

    number = "number"
    currency = "currency"
    percent = "percent"
    points = "points"  # percentage points or basis points, value in percentage points


_SCALES: dict[str, float] = {
    "thousand": 1e3,
    "thousands": 1e3,
    "k": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "mn": 1e6,
    "mm": 1e6,
    "mil": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
    "trillions": 1e12,
    "tn": 1e12,
    "t": 1e12,
    **SCALE_ABBREVIATIONS,
}

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)

# what may follow a European numeral: a currency or a scale abbreviation
_EURO = r"(?:Kč|Kc\b|CZK|EUR|€|korun|(?:mil|tis|mld|mio|mrd)\.|(?:mil|tis|mld|mio|mrd)\b)"
_NUMBER_RE = re.compile(
    r"""
    (?P<pre>
        (?P<lparen>\()?\s*
        (?P<sign>[-−–](?=\s?(?:[$€£]|Kč|CZK)?\s?\d|\s?(?:USD|US\$)))?\s*
        (?P<cur>US\$|USD|\$|€|£|EUR|GBP|CZK|Kč|CHF)?\s*
        (?P<sign2>[-−–])?\s*
        (?P<lparen2>\()?
    )
    (?<![\w.,])
    (?P<num>
        \d{1,3}(?:\.\d{3})+,\d+                           # 1.234,50
        |\d{1,3}(?:\.\d{3}){2,}(?![.,]?\d)                 # 1.234.567
        |\d{1,3}(?:[\u00a0\u202f\u2009]\d{3})+(?:,\d+)?    # 1 234 with typographic spaces
        |\d{1,3}(?:\x20\d{3})+,\d+                          # 1 234,50
        |\d{1,3}(?:\x20\d{3})+(?=\s?{EURO})                 # 1 234 Kč, 1 234 mil.
        |\d{1,3}(?:,\d{3})+(?:\.\d+)?                        # 1,234.50
        |\d+,\d{1,2}(?=\s?(?:%|{EURO}))                      # 234,5 mil. / 12,5 %
        |\d+(?:\.\d+)?|\.\d+
    )
    (?![\d])
    (?P<post>
        \)?
        (?:\s*(?P<scale>trillions?|billions?|millions?|thousands?|bn|mn|mm|
            (?:mil|tis|mld|mio|mrd)\.?|tn|[kKmMbBtT])(?![A-Za-z\u00c0-\u024f]))?
        (?:\s*(?P<cur2>USD|dollars|EUR|euros?|€|GBP|£|CZK|Kč|Kc\b|korun[ay]?|CHF))?
        (?:\s*(?P<unit>%|percent(?:age)?\s+points?|per\s?cent|percent|pct|pp|p\.p\.|basis\s+points?|bps|bp|x|times)(?![A-Za-z]))?
        (?P<rparen>\))?
        (?:\s*\((?P<pscale>thousands|millions|billions)\))?
    )
    """.replace("{EURO}", _EURO),
    re.VERBOSE,
)

# calendar dates written with digits only: ISO "2022-12-31" (or "2022/12/31") and US "12/31/2022"
_DATE_RE = re.compile(
    r"(?<![\w.,/-])(?:(?:19|20)\d{2}(?P<s>[-/])(?:0?[1-9]|1[0-2])(?P=s)(?:0?[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])/(?:19|20)?\d{2})(?![\w/-])"
)
# identifiers: a word that starts with a letter and joins parts with "-", "/" or "~", one of them
# with a digit -- chunk and document ids ("aver-2022-10k/3/1~5f0c9a2e"), "COVID-19", "Tier-1"
_IDENT_RE = re.compile(r"(?<![\w./~-])[A-Za-z][\w.]*(?:[-/~][\w.]*)+")
_HAS_DIGIT_AFTER_SEP = re.compile(r"[-/~][\w.]*\d")
# a content-addressed chunk id whatever its document id starts with ("3M_2018_10K/60/2~1f0c9a2e")
_CHUNK_ID_RE = re.compile(r"(?<![\w./~-])[\w.&-]+(?:/\d+)+~[0-9a-f]{8}(?![\w])")

_YEAR_PREFIX_RE = re.compile(r"(?:\bFY|\bfy|\bQ[1-4]\s*(?:FY)?|\bH[12]\s*|\bCY|')\s*$")
_FISCAL_PREFIX_RE = re.compile(r"\b(?:fiscal(?: year)?|FY|CY|year)\s*$", re.IGNORECASE)
_DATE_PREFIX_RE = re.compile(rf"\b(?:{_MONTHS})\.?\s*$", re.IGNORECASE)
# a number joined by a hyphen to a span of time names a thing ("a 3-year average", "the 364-day
# credit agreement", "10-year notes"); "3 years" or "45 days" alone is still a figure
_TERM_RE = re.compile(r"[-‐‑](?:years?|months?|weeks?|days?|quarters?)\b", re.IGNORECASE)
_QUARTER_PREFIX_RE = re.compile(
    r"\b(?:Q|H|Item|Note|Part|Rule|Section|Form|page|p\.|Tier|Level|Stage|Exhibit|Schedule|"
    r"Article|Pillar|Basel)\s*$",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Quantity:
    """One figure read from text. `value` is in base units (currency units, or percentage points)."""

    value: float
    kind: Kind
    scale: float = 1.0
    scale_stated: bool = False
    decimals: int = 0
    written_decimals: int = 0
    text: str = ""
    start: int = 0
    end: int = 0
    is_year: bool = False
    currency: str | None = None  # ISO code when the figure names its currency ("$": USD)

    @property
    def half_ulp(self) -> float:
        """Half a unit of the last significant digit (trailing decimal zeros are formatting)."""
        unit = 1.0 if self.kind in (Kind.percent, Kind.points) else self.scale
        return 0.5 * (10.0**-self.decimals) * unit

    @property
    def written_half_ulp(self) -> float:
        """Half a unit of the last written digit ("31.0%": 0.05), for a figure as an answer."""
        unit = 1.0 if self.kind in (Kind.percent, Kind.points) else self.scale
        return 0.5 * (10.0**-self.written_decimals) * unit


@dataclass(frozen=True, slots=True)
class MatchResult:
    """How an answer figure relates to a reference figure."""

    status: Literal["match", "scale_error", "mismatch"]
    reference: Quantity
    answer: Quantity | None = None
    note: str = ""
    factor: float | None = None
    candidates: tuple[Quantity, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.status == "match"


def _decimals(num: str, *, strip: bool = True) -> int:
    if "." not in num:
        return 0
    frac = num.split(".", 1)[1]
    return len(frac.rstrip("0") if strip else frac)


def _unit_kind(unit: str | None) -> tuple[Kind | None, float]:
    """Kind and multiplier to percentage points for a unit word."""
    if not unit:
        return None, 1.0
    u = re.sub(r"\s+", " ", unit.lower())
    if u in ("%", "percent", "per cent", "percent", "pct", "percentage"):
        return Kind.percent, 1.0
    if u.startswith("percent") or u in ("pp", "p.p."):
        return Kind.points, 1.0
    if u.startswith("basis") or u in ("bp", "bps"):
        return Kind.points, 0.01
    if u in ("x", "times"):
        return Kind.number, 1.0
    return None, 1.0


def extract_quantities(text: str, *, keep_years: bool = False) -> list[Quantity]:
    """Every figure in `text`, in order of appearance.

    Years, quarters, dates (also "2022-12-31", "12/31/2022"), item/note numbers and list markers
    are dropped (or, with `keep_years=True`, kept with `is_year=True`); the digits of identifiers
    ("[aver-2022-10k/3/1]", "COVID-19") are never figures.

    A text is read once: the checks of one entry read the same answer, its sentences and its
    key facts several times over (the answer's figures, the conclusion, each key fact's
    reading), so the (immutable) figures of recent texts are kept.
    """
    return list(_extract(text, keep_years))


_DIGIT_RE = re.compile(r"\d")


@lru_cache(maxsize=4096)
def _extract(text: str, keep_years: bool) -> tuple[Quantity, ...]:
    if not _DIGIT_RE.search(text):
        return ()  # every figure has a digit: a text without one is not scanned
    out: list[Quantity] = []
    dates = [(m.start(), m.end()) for m in _DATE_RE.finditer(text)]
    idents = [
        (m.start(), m.end())
        for m in _IDENT_RE.finditer(text)
        if _HAS_DIGIT_AFTER_SEP.search(m.group(0).rstrip("."))
    ] + [(m.start(), m.end()) for m in _CHUNK_ID_RE.finditer(text)]
    for m in _NUMBER_RE.finditer(text):
        num = m.group("num")
        start, end = m.start("num"), m.end("num")
        if any(a <= start < b for a, b in idents):
            continue
        in_date = any(a <= start < b for a, b in dates)
        before = text[max(0, start - 12) : start]
        after = text[end : end + 3]
        cur = m.group("cur") or m.group("cur2")
        scale_word = m.group("scale") or m.group("pscale")
        unit = m.group("unit")
        # single-letter scales only when glued to the number or after a currency sign
        if scale_word and len(scale_word) == 1:
            glued = m.group("post").lstrip(")").startswith(scale_word)
            if not (glued or cur) or (scale_word in ("t", "T") and not cur):
                scale_word = None
        try:
            raw, digits = number_value(num)
        except ValueError:  # pragma: no cover - regex guarantees digits
            continue
        plain_int = int(raw) if raw.is_integer() and num.isdigit() else -1
        is_year = False
        if in_date:
            is_year = True  # a part of a date written with digits
        # years: 1900-2100 written without separators and without currency/unit/scale
        elif 1900 <= plain_int <= 2100 and not cur and not unit and not scale_word:
            is_year = True
        elif 1900 <= plain_int <= 2100 and not cur and _FISCAL_PREFIX_RE.search(before):
            is_year = True  # "Fiscal 2022 % change": a column header, not 2,022%
        elif _YEAR_PREFIX_RE.search(before) and plain_int >= 0 and not cur and not unit:
            is_year = True  # FY22, Q2, '23
        elif _QUARTER_PREFIX_RE.search(before) and plain_int >= 0 and not cur and not unit:
            is_year = True
        elif (
            _DATE_PREFIX_RE.search(before)
            and 1 <= plain_int <= 31
            and not cur
            and not unit
            and not scale_word
        ):
            is_year = True  # day of month
        elif after.startswith(("st ", "nd ", "rd ", "th ")) and plain_int >= 0:
            is_year = True  # ordinals
        elif re.match(r"-[KQ]\b", text[end : end + 3]) and plain_int >= 0:
            is_year = True  # form names: 10-K, 10-Q, 8-K
        elif _TERM_RE.match(text, end) and plain_int >= 0 and not cur and not unit:
            is_year = True  # a term that names a thing: "3-year average", "364-day facility"
        # list markers: "1." or "1)" at the start of a line
        line_start = text.rfind("\n", 0, start) + 1
        if (
            not is_year
            and plain_int >= 0
            and plain_int < 100
            and text[line_start:start].strip() in ("", "-", "*", "•")
            and (text[end : end + 1] in (".", ")") and not text[end + 1 : end + 2].isdigit())
            and not cur
            and not unit
        ):
            continue
        if is_year and not keep_years:
            continue
        kind_u, to_pp = _unit_kind(unit)
        scale = _SCALES.get(scale_word.lower().rstrip("."), 1.0) if scale_word else 1.0
        if scale_word in ("M",):
            scale = 1e6
        negative = bool(m.group("sign") or m.group("sign2"))
        if (m.group("lparen") or m.group("lparen2")) and m.group("rparen") is None:
            # "(1,577)" closes right after the number, before any scale/unit
            post = m.group("post")
            if post.startswith(")"):
                negative = True
        elif (m.group("lparen") or m.group("lparen2")) and m.group("post").startswith(")"):
            negative = True
        kind: Kind
        if kind_u in (Kind.percent, Kind.points):
            kind = kind_u
            value = raw * to_pp
            decimals = _decimals(digits) + (2 if to_pp == 0.01 else 0)
            written = _decimals(digits, strip=False) + (2 if to_pp == 0.01 else 0)
            scale = 1.0
        elif cur:
            kind = Kind.currency
            value = raw * scale
            decimals, written = _decimals(digits), _decimals(digits, strip=False)
        else:
            kind = Kind.number
            value = raw * scale
            decimals, written = _decimals(digits), _decimals(digits, strip=False)
        if negative:
            value = -value
        out.append(
            Quantity(
                value=value,
                kind=kind,
                scale=scale,
                scale_stated=scale_word is not None,
                decimals=decimals,
                written_decimals=written,
                text=m.group(0).strip(),
                start=m.start(),
                end=m.end(),
                is_year=is_year,
                currency=currency_code(cur) if kind is Kind.currency else None,
            )
        )
    return tuple(out)


_HINT_RE = re.compile(
    r"\b(?:in|answer in|expressed in|in units of)\s+(?:(?:USD|US\$|\$|U\.S\.\s+dollars?)\s+)?"
    r"(?P<scale>thousands?|millions?|billions?|trillions?)\b",
    re.IGNORECASE,
)
_PCT_HINT_RE = re.compile(
    r"\b(?:in\s+units\s+of\s+percents?|as\s+a\s+percent(?:age)?|%\s*margin)\b", re.I
)


def scale_hint(question: str) -> tuple[Kind | None, float | None]:
    """The unit a question asks for: ("in USD millions") -> (currency, 1e6); percents -> percent."""
    m = _HINT_RE.search(question)
    if m:
        word = m.group("scale").lower()
        return Kind.currency, _SCALES[word]
    if _PCT_HINT_RE.search(question):
        return Kind.percent, None
    return None, None


def parse_quantity(
    text: str, *, kind: Kind | None = None, scale: float | None = None
) -> Quantity | None:
    """The single figure a short reference answer states ("$1577.00", "30.8%", "0.83").

    `kind`/`scale` (from `scale_hint` on the question) apply when the text does not state them.
    Returns None when the text holds no figure.
    """
    qs = extract_quantities(text)
    if not qs:
        return None
    q = qs[0]
    return apply_hint(q, kind=kind, scale=scale)


def apply_hint(q: Quantity, *, kind: Kind | None, scale: float | None) -> Quantity:
    """Give a figure the kind and scale a question sets, where the figure leaves them unstated."""
    new_kind = q.kind
    if kind is Kind.currency and q.kind is Kind.number:
        new_kind = Kind.currency
    if kind is Kind.percent and q.kind is Kind.number:
        new_kind = Kind.percent
    new_scale, value = q.scale, q.value
    if scale is not None and not q.scale_stated and new_kind in (Kind.currency, Kind.number):
        new_scale, value = scale, q.value * scale
    return Quantity(
        value=value,
        kind=new_kind,
        scale=new_scale,
        scale_stated=q.scale_stated or (scale is not None and new_scale == scale),
        decimals=q.decimals,
        written_decimals=q.written_decimals,
        text=q.text,
        start=q.start,
        end=q.end,
        is_year=q.is_year,
        currency=q.currency,
    )


# a unit line of a table: "(in thousands)", "(In millions, except per share data)", "(Millions)",
# "(Dollars in millions)", "($ in thousands)", "(in millions of U.S. dollars)"
_UNIT_LINE_RE = re.compile(
    r"\(\s*(?:(?:in|dollars\s+in|amounts\s+in|\$\s*in|US\$\s*in|USD\s+in|USD)\s+)?"
    r"(?P<scale>thousands|millions|billions)(?:\s+of\s+(?:U\.S\.\s+)?dollars)?(?P<rest>[,;…][^)]*|\.\.\.[^)]*)?\)",
    re.IGNORECASE,
)
# the same, written as a line of its own without parentheses: "In millions, except per share data"
_UNIT_LINE_BARE_RE = re.compile(
    r"^[ \t]*(?:\$|US\$|dollars|amounts)?[ \t]*in[ \t]+(?P<scale>thousands|millions|billions)\b"
    r"(?P<rest>[,;][^\n]*)?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_PER_SHARE_RE = re.compile(r"\bper[\s-]share\b|\bEPS\b", re.IGNORECASE)
_LABEL_RE = re.compile(r"[A-Za-z]{3,}")


# a token of a table's figure columns: "66,608", "(1,577)", "$", "—", "13%", "$(12.5)"
_CELL_RE = re.compile(r"^[$(]*[-−–—]?\$?\(?(?:\d[\d,.]*%?|[-−–—]+)\)?%?\)?[,;.]?$|^[$%)(]$")
_TOKEN_RE = re.compile(r"\S+")


def table_rows(text: str) -> list[tuple[int, int]]:
    """Spans (start, end) of the rows of the tables in `text`: a label followed by its figures.

    A row starts at a line that has a label (PDF text often puts each cell of a row on its own
    line: "Net sales", "$", "5,363", "4,869" is one row), and also, within a line, at a word
    starting with a capital letter that follows a figure: chunk text joined with spaces reads
    "(Dollars in millions) Total revenues 66,608 63,110 Cost of revenues 27,374 25,123" as two
    rows after the header. Prose is unaffected: after a figure it goes on in lower case ("$2,534
    million in fiscal 2023, compared with $2,249 million" stays one row), and a sentence ends
    at a capital letter anyway.
    """
    return list(_table_rows(text))


@lru_cache(maxsize=512)
def _table_rows(text: str) -> tuple[tuple[int, int], ...]:
    rows: list[list[int]] = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        labelled_line = bool(_LABEL_RE.search(line))
        prev_cell = False
        for i, m in enumerate(_TOKEN_RE.finditer(line)):
            tok = m.group(0)
            cell = bool(_CELL_RE.match(tok))
            start, end = pos + m.start(), pos + m.end()
            new_row = (
                not rows
                or (i == 0 and labelled_line)
                or (prev_cell and not cell and tok[:1].isupper())
            )
            if new_row:
                rows.append([start, end])
            else:
                rows[-1][1] = end
            prev_cell = cell
        pos += len(raw)
    return tuple((a, b) for a, b in rows)


def _row_label(text: str, pos: int) -> str:
    """The table row holding `pos` (see `table_rows`)."""
    for start, end in table_rows(text):
        if start <= pos < end:
            return text[start:end]
    return ""


def extract_with_units(text: str) -> list[Quantity]:
    """`extract_quantities`, where a table's unit line sets the scale of the bare figures after it.

    A unit line -- "(in thousands)", "(In millions, except per share data)", "(Millions)",
    "(Dollars in millions)" -- gives every figure that states no scale, up to the next unit line,
    that scale ("Total revenues 948,627" under "(in thousands)" is $948,627 thousand). A line
    naming "per share" under a unit line that excepts per-share data keeps scale 1, as do percent
    figures and multiples ("2.7x"). The figures so read state their scale (`scale_stated`).
    """
    units = sorted(
        (
            m.end(),
            _SCALES[m.group("scale").lower()],
            bool(_PER_SHARE_RE.search(m.group("rest") or "")),
        )
        for rx in (_UNIT_LINE_RE, _UNIT_LINE_BARE_RE)
        for m in rx.finditer(text)
    )
    if not units:
        return extract_quantities(text)
    out: list[Quantity] = []
    for q in extract_quantities(text):
        unit = None
        for end, scale, except_per_share in units:
            if end <= q.start:
                unit = (scale, except_per_share)
        if (
            unit is None
            or q.scale_stated
            or q.is_year
            or q.kind not in (Kind.number, Kind.currency)
            or q.text.lower().rstrip(")").endswith(("x", "times"))
        ):
            out.append(q)
            continue
        scale, except_per_share = unit
        if except_per_share and _PER_SHARE_RE.search(_row_label(text, q.start)):
            scale = 1.0
        out.append(apply_hint(q, kind=None, scale=scale))
    return out


def _readings(ref: Quantity, ans: Quantity) -> list[tuple[float, float, str]]:
    """Comparable (answer value, answer half-ulp, note) readings of `ans` on `ref`'s axis."""
    pct_axis = ref.kind in (Kind.percent, Kind.points)
    h = ans.written_half_ulp
    ans_pct = ans.kind in (Kind.percent, Kind.points)
    out: list[tuple[float, float, str]] = []
    if pct_axis:
        if ans_pct:
            out.append((ans.value, h, ""))
        elif ans.kind is Kind.number and not ans.scale_stated:
            out.append((ans.value, h, "bare number read as percent"))
            out.append((ans.value * 100.0, h * 100.0, "fraction read as percent"))
        return out
    if ans_pct:
        if ref.kind is Kind.number and not ref.scale_stated:
            # reference is a fraction (0.308) or a bare percent figure (30.8)
            out.append((ans.value / 100.0, h / 100.0, "percent read as fraction"))
            out.append((ans.value, h, "percent read as bare number"))
        return out
    if (
        ref.kind is Kind.currency
        and ans.kind is Kind.number
        and ans.text.lower().endswith(("x", "times"))
    ):
        return out
    out.append((ans.value, h, ""))
    if not ans.scale_stated and ref.scale != 1.0:
        out.append((ans.value * ref.scale, h * ref.scale, "unit taken from reference"))
    return out


def _close(ref_value: float, ref_half: float, value: float, half: float) -> bool:
    """Magnitudes agree: `value` rounds or truncates to the reference's last digit.

    Band: [|ref| - 1 ulp, |ref| + 1/2 ulp) on the reference's digit, where the truncation side
    (beyond half an ulp) reaches at most 1% of |ref|; widened on both sides to the answer's own
    half ulp capped at 1% of |ref|.
    """
    ref, ans = abs(ref_value), abs(value)
    eps = 1e-9 * max(ref_half, half) + 8 * math.ulp(max(1.0, ref))
    own = min(half, 0.01 * ref)
    truncation = max(ref_half, min(2.0 * ref_half, 0.01 * ref))
    low = ref - max(truncation, own)
    high = ref + max(ref_half, own)
    return low - eps <= ans < high - eps or abs(ans - ref) <= eps


def compare(reference: Quantity, answer: Quantity) -> MatchResult:
    """Does `answer` state the `reference` figure? match, scale_error (off by 10^3k) or mismatch.

    Two figures that both name their currency must name the same one ("1,234.5 million CZK" is
    not "$1,234.5 million").
    """
    if reference.currency and answer.currency and reference.currency != answer.currency:
        return MatchResult(
            "mismatch",
            reference,
            answer,
            f"another currency: {answer.currency}, not {reference.currency}",
        )
    readings = _readings(reference, answer)
    for value, half, note in readings:
        if _close(reference.value, reference.half_ulp, value, half):
            return MatchResult("match", reference, answer, note)
    for value, half, _ in readings:
        if value == 0 or reference.value == 0:
            continue
        for factor in (1e3, 1e6, 1e9, 1e-3, 1e-6, 1e-9):
            if _close(reference.value, reference.half_ulp, value / factor, half / factor):
                return MatchResult(
                    "scale_error",
                    reference,
                    answer,
                    f"off by a factor of {_factor_name(factor)}: looks like a scale error",
                    factor,
                )
    return MatchResult("mismatch", reference, answer)


def compare_range(reference: Quantity, low: Quantity, high: Quantity) -> MatchResult:
    """Does the range `low` to `high` state the `reference` figure?

    A range states a figure when it contains it and neither end is more than one unit of the
    reference's last digit from it: "0.3% to 0.5%" states a CAGR of 0.4%, "10.2%-10.4%" a margin
    of 10.3%; "0% to 1%" states neither, nor does "between 5% and 10.3%" although one end agrees.
    Both ends are read the same way (as percent, or as a fraction read as percent, ...).
    """
    ulp = 2.0 * reference.half_ulp
    ref = abs(reference.value)
    eps = 1e-9 * max(ulp, ref) + 8 * math.ulp(max(1.0, ref))
    for lv, _, note in _readings(reference, low):
        for hv, _, note_h in _readings(reference, high):
            if note_h != note:
                continue
            a, b = sorted((abs(lv), abs(hv)))
            if a - eps <= ref <= b + eps and ref - a <= ulp + eps and b - ref <= ulp + eps:
                why = f"the range {low.text} to {high.text.lstrip('-–—‐')} contains it"
                return MatchResult("match", reference, high, f"{why}; {note}" if note else why)
    return MatchResult("mismatch", reference, None, "", None, (low, high))


def _factor_name(factor: float) -> str:
    exp = round(math.log10(factor))
    names = {3: "1,000", 6: "1,000,000", 9: "1,000,000,000"}
    return ("1/" if exp < 0 else "") + names[abs(exp)]


def find_match(reference: Quantity, answers: Iterable[Quantity]) -> MatchResult:
    """The best relation of any answer figure to the reference: a match beats a scale error."""
    cands = tuple(a for a in answers if not a.is_year)
    best: MatchResult | None = None
    for a in cands:
        r = compare(reference, a)
        if r.status == "match":
            return MatchResult("match", reference, a, r.note, None, cands)
        if r.status == "scale_error" and best is None:
            best = r
    if best is not None:
        return MatchResult(best.status, reference, best.answer, best.note, best.factor, cands)
    return MatchResult("mismatch", reference, None, "", None, cands)
