"""Figures computed from cited figures: a ratio, margin, growth rate, sum, difference or
per-share figure that follows from figures the cited chunks state.

`numbers_verified` asks this where an answer figure is not itself in a cited chunk. A figure is
*derived* when a standard formula over one, two or three operands gives it, to the answer's
written precision (half a unit of its last written digit):

    share / margin   a / b x 100          (a percent)
    growth           (a - b) / b x 100    (a percent; the sign may be said in words: "fell 5%")
    change in points a - b                (percentages or points)
    ratio            a / b                (a bare number or a multiple, "0.54", "2.8x")
    turnover         a / ((b + c) / 2)    (a figure over an average balance)
    per share        a / b                (a currency figure per unit: EPS, dividends)
    sum, difference  a + b, a - b         (same kind as the figure)
    over periods     an average of 2 or 3 figures or of 2 or 3 shares / margins, a compound
                     annual growth rate over 2 to 10 years (of figures the answer states)

The operands are, first, the answer's own figures that the cited chunks state (a formula the
answer states: "Calculation: operating income / revenue, from 1,234 and 5,678"), then the
cited figures whose table row names something the question or the answer names
(`relevant_figures`: "Net sales" and "Operating income" for an operating margin; synonyms from
`assay.judge.meaning.SYNONYMS`), at most `MAX_OPERANDS` distinct values of each, so the search
stays small (pairs of a few dozen figures; a turnover's average balance is two figures side by
side in one row). A free search over every figure of a cited page finds a formula for a wrong
figure too often (16% of FinanceBench's computed reference figures moved by 7% or 50%); with
the row labels it is rare (tests/judge/test_derived.py measures it). Because many figures give
many chances for a coincidence, a figure with fewer than `MIN_DIGITS` significant digits ("5%")
is derived only from operands the answer itself states. The verdict names the formula and its
operands ("21.7% = 1,234 / 5,678 x 100 (share or margin)").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from assay.judge.meaning import analyse
from assay.judge.numbers import Kind, Quantity, _row_label, extract_with_units

__all__ = ["MAX_OPERANDS", "MIN_DIGITS", "Derivation", "Operand", "derive", "relevant_figures"]

MAX_OPERANDS = 60
"""Distinct operand values tried from each source (the answer's, the cited chunks')."""

CITED_FORMULAS = ("share or margin", "growth", "difference")
"""The formulas tried on cited figures the answer does not state: a share or margin (of a
revenue row, for a margin), a growth rate or a change between two periods of one row. A ratio,
a sum or a turnover of unstated figures finds a coincidence too often to vouch for a figure."""

MIN_DIGITS = 3
"""Significant digits a figure needs to be derived from cited figures the answer does not state."""


@dataclass(frozen=True, slots=True)
class Derivation:
    """How a figure follows from others: the formula's name and the arithmetic written out."""

    figure: str
    name: str
    shown: str
    stated: bool  # every operand is one the answer states

    def __str__(self) -> str:
        return f"{self.figure} = {self.shown} ({self.name})"


def _sig_digits(q: Quantity) -> int:
    return len(re.sub(r"\D", "", q.text).lstrip("0")) or 1


def _tolerance(q: Quantity) -> float:
    return q.written_half_ulp + 1e-9 * abs(q.value) + 1e-12


def _show(q: Quantity) -> str:
    """A figure as written, one line ("$\n38,655" -> "$38,655"; a bracket it opens dropped)."""
    t = "".join(q.text.split()) if "\n" in q.text else q.text.strip()
    if t.startswith("(") != t.endswith(")"):  # a bracket of the sentence, not a negative
        t = t.strip("()")
    return t or f"{q.value:g}"


_Formula = tuple[str, int, Callable[..., float | None], str]


def _div(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


_PAIRS: tuple[_Formula, ...] = (
    ("share or margin", 2, lambda a, b: None if b == 0 else 100.0 * a / b, "{a} / {b} x 100"),
    ("growth", 2, lambda a, b: None if b == 0 else 100.0 * (a - b) / abs(b), "({a} - {b}) / {b}"
     " x 100"),
    ("ratio", 2, _div, "{a} / {b}"),
    ("sum", 2, lambda a, b: a + b, "{a} + {b}"),
    ("difference", 2, lambda a, b: a - b, "{a} - {b}"),
)  # fmt: skip


def _formulas_for(fig: Quantity) -> list[str]:
    if fig.kind in (Kind.percent,):
        return ["share or margin", "growth", "difference"]
    if fig.kind is Kind.points:
        return ["difference"]
    if fig.kind is Kind.currency:
        return ["per share", "sum", "difference"]
    return ["ratio", "sum", "difference"]


def _operand_ok(name: str, fig: Quantity, a: Quantity, b: Quantity) -> bool:
    """Operand kinds a formula accepts for a figure of `fig`'s kind."""
    money = (Kind.currency, Kind.number)
    if name in ("share or margin", "growth", "ratio"):
        return a.kind in money and b.kind in money
    if name == "per share":
        return a.kind in money and b.kind is Kind.number
    if fig.kind in (Kind.percent, Kind.points):  # a change in points, a sum of percentages
        return a.kind in (Kind.percent, Kind.points) and b.kind in (Kind.percent, Kind.points)
    return a.kind in money and b.kind in money


def _close(value: float, fig: Quantity, *, signless: bool = False) -> bool:
    want = abs(fig.value) if signless else fig.value
    got = abs(value) if signless else value
    return abs(got - want) <= _tolerance(fig)


@dataclass(frozen=True, slots=True)
class Operand:
    """A figure that may enter a formula: from the answer (`row` None) or from a cited table
    row (`row`: which one, so a growth rate's two periods come from one row)."""

    q: Quantity
    row: tuple[int, int, int] | None = None
    keys: frozenset[str] = field(default_factory=frozenset)
    margin: bool = False  # the question or answer names a margin: its base is revenue


def _distinct(ops: Sequence[Operand]) -> list[Operand]:
    seen: set[tuple[float, tuple[int, int, int] | None]] = set()
    out: list[Operand] = []
    for o in ops:
        if o.q.is_year or (o.q.value, o.row) in seen:
            continue
        seen.add((o.q.value, o.row))
        out.append(o)
        if len(out) >= MAX_OPERANDS:
            break
    return out


def _pair_ok(name: str, a: Operand, b: Operand) -> bool:
    """Cited operands must fit the formula: a growth rate, a change or an average balance reads
    two periods of one row; a share, ratio or sum reads two rows."""
    if a.row is None or b.row is None:
        return a.row is None and b.row is None
    if name in ("growth", "difference", "turnover"):
        return a.row == b.row
    return a.row != b.row


def derive(
    fig: Quantity, stated: Sequence[Quantity], cited: Sequence[Operand] = ()
) -> Derivation | None:
    """How `fig` follows from figures: `stated` (the answer's own figures the cited chunks state)
    first, then `cited` (cited figures, `relevant_figures`); None when no formula of the module
    docs gives it. A bare table figure is taken at its value as printed; a ratio of two figures
    of one table is the same at any scale."""
    if fig.kind is Kind.number and fig.value == 0:
        return None
    own = _distinct([Operand(q) for q in stated if q is not fig and q.value != fig.value])
    pools: list[tuple[list[Operand], bool]] = [(own, True)]
    if _sig_digits(fig) >= MIN_DIGITS and cited:
        pools.append((_distinct(cited), False))
    for pool, from_answer in pools:
        for name in _formulas_for(fig):
            if not from_answer and name not in CITED_FORMULAS:
                continue
            found = _search(fig, name, pool)
            if found is not None:
                return Derivation(fig.text.strip(), name, found, from_answer)
    # formulas over several periods, of figures the answer states (a handful: the search is
    # small): an average, an average of shares or margins, a compound annual growth rate
    stated_ops = [o.q for o in own]
    for name, shown in _over_periods(fig, stated_ops):
        return Derivation(fig.text.strip(), name, shown, True)
    return None


def _over_periods(fig: Quantity, qs: Sequence[Quantity]) -> Iterator[tuple[str, str]]:
    money = [q for q in qs if q.kind in (Kind.currency, Kind.number)][:8]
    pct = fig.kind is Kind.percent
    for n in (2, 3):
        for figs in itertools.combinations(qs[:8], n):
            if len({q.kind for q in figs}) == 1 and _close(sum(q.value for q in figs) / n, fig):
                yield "average", "(" + " + ".join(_show(q) for q in figs) + f") / {n}"
    if pct or fig.kind is Kind.number:
        ratios: list[tuple[Quantity, Quantity, float]] = [
            (a, b, (100.0 if pct else 1.0) * a.value / b.value)
            for a, b in itertools.permutations(money, 2)
            if b.value and a is not b
        ]
        for n in (2, 3):
            for group in itertools.combinations(ratios, n):
                used = [q for a, b, _ in group for q in (a, b)]
                if len({id(q) for q in used}) != 2 * n:
                    continue  # each period's pair of its own figures
                if _close(sum(r for _, _, r in group) / n, fig):
                    parts = " + ".join(f"{_show(a)} / {_show(b)}" for a, b, _ in group)
                    yield (
                        "average of shares or margins",
                        f"({parts}) / {n}" + (" x 100" if pct else ""),
                    )
    if pct:
        for a, b in itertools.permutations(money, 2):
            if a.value > 0 and b.value > 0:
                for years in range(2, 11):
                    rate = 100.0 * ((a.value / b.value) ** (1.0 / years) - 1.0)
                    if _close(rate, fig, signless=True):
                        yield (
                            "compound annual growth",
                            (f"({_show(a)} / {_show(b)})^(1/{years}) - 1"),
                        )


def _search(fig: Quantity, name: str, pool: Sequence[Operand]) -> str | None:
    formula = _PAIRS[2] if name == "per share" else next(f for f in _PAIRS if f[0] == name)
    _, _, fn, shape = formula
    for oa, ob in itertools.permutations(pool, 2):
        a, b = oa.q, ob.q
        if not _operand_ok(name, fig, a, b) or not _pair_ok(name, oa, ob):
            continue
        if name == "share or margin" and ob.margin and _REVENUE not in ob.keys:
            continue  # a margin is a share of revenue
        if name in ("share or margin", "ratio", "per share", "growth"):
            values = [(a.value, b.value)]
        else:
            # a sum or difference of figures of one scale: bare table figures may carry any
            values = [(a.value / a.scale, b.value / b.scale), (a.value, b.value)]
        for x, y in values:
            got = fn(x, y)
            if got is None:
                continue
            if name in ("sum", "difference") and fig.kind in (Kind.currency, Kind.number):
                ok = any(_close(got * s, fig) for s in (1.0, 1e3, 1e6, 1e9))
            else:
                ok = _close(got, fig, signless=name in ("growth", "difference"))
            if ok:
                return shape.format(a=_show(a), b=_show(b))
    if name == "ratio" and len(pool) >= 3:
        # a turnover: a figure over the average of two balances, opening and closing, which a
        # table prints side by side (adjacent figures of one row)
        money = [o for o in pool if o.q.kind in (Kind.currency, Kind.number)]
        for ob, oc in itertools.pairwise(money):
            if not _pair_ok("turnover", ob, oc):
                continue
            avg = (ob.q.value + oc.q.value) / 2
            for oa in money:
                if oa.row is not None and oa.row == ob.row:
                    continue
                if avg and oa is not ob and oa is not oc and _close(oa.q.value / avg, fig):
                    return f"{_show(oa.q)} / (({_show(ob.q)} + {_show(oc.q)}) / 2)"
    return None


_REVENUE = "syn:revenu"
# what a metric's name implies its formula reads beyond the words it says
_IMPLIED = {"margin": "revenue", "turnover": "revenue", "share": "shares", "ratio": ""}


def relevant_figures(texts: Sequence[str], topic: str) -> list[Operand]:
    """The figures of `texts` whose table row names a concept `topic` names (lemmas and synonym
    groups of `assay.judge.meaning`; a margin or turnover implies revenue), with their row."""
    low = topic.lower()
    extra = " ".join(v for k, v in _IMPLIED.items() if k in low)
    margin = "margin" in low
    # lower case: a capitalised table label ("Net Operating Revenues") is vocabulary, not a name
    want = {t.key for t in analyse(f"{topic} {extra}".lower())}
    out: list[Operand] = []
    for i, text in enumerate(texts):
        for q in extract_with_units(text):
            if q.is_year:
                continue
            label = _row_label(text, q.start)
            keys = frozenset(t.key for t in analyse(label.lower())) if label else frozenset()
            if want & keys:
                start = text.find(label)
                out.append(Operand(q, (i, start, start + len(label)), keys, margin))
    return out
