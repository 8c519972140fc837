"""Does a system's result match the gold result? Execution match with the entry's semantics.

Rows compare as a multiset (`bag`), as a set (`set`: duplicates ignored) or as a sequence
(`ordered`). Two values are equal when they are the same JSON scalar, or when both are numbers
(booleans are not numbers here) within the tolerance: ``|a - b| <= tol * max(1, |a|, |b|)``.
Column names never matter (engines name unnamed expressions differently). When `column_order` is
False, the system's columns may come in any order: a permutation of its columns that makes the
rows match is looked for, as Spider's evaluation does; the number of columns must agree.

`diff_results` says what differs, for a reader: the rows only in the gold result and the rows only
in the system's, with the system's columns put in the gold's order where a permutation of them
shares the most rows with the gold.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.sql.engine import QueryResult

__all__ = ["MatchVerdict", "ResultDiff", "diff_results", "match_results", "values_equal"]

_MAX_PERMUTATIONS = 40_320  # 8 columns; beyond that columns are paired by their values first


@dataclass(frozen=True)
class MatchVerdict:
    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def values_equal(a: Any, b: Any, tol: float) -> bool:
    """Equal JSON scalars, or numbers within the relative tolerance `tol` (floor `tol`)."""
    if _is_number(a) and _is_number(b):
        fa, fb = float(a), float(b)
        return abs(fa - fb) <= tol * max(1.0, abs(fa), abs(fb))
    if type(a) is not type(b) and not (a is None or b is None):
        return False
    return bool(a == b)


def _key(v: Any, tol: float) -> tuple[int, Any]:
    """A sort key that puts equal values next to each other (numbers rounded to the tolerance)."""
    if v is None:
        return (0, 0)
    if _is_number(v):
        f = float(v)
        if tol <= 0:
            return (1, f)
        return (1, round(f, 6))
    if isinstance(v, bool):
        return (2, int(v))
    return (3, str(v))


def _row_key(r: Sequence[Any], tol: float) -> tuple[tuple[int, Any], ...]:
    return tuple(_key(v, tol) for v in r)


def _rows_equal(a: Sequence[Any], b: Sequence[Any], tol: float) -> bool:
    return len(a) == len(b) and all(values_equal(x, y, tol) for x, y in zip(a, b, strict=True))


def _dedupe(rows: Sequence[Sequence[Any]], tol: float) -> list[Sequence[Any]]:
    out: list[Sequence[Any]] = []
    for r in rows:
        if not any(_rows_equal(r, o, tol) for o in out):
            out.append(r)
    return out


def _bag_equal(gold: Sequence[Sequence[Any]], pred: Sequence[Sequence[Any]], tol: float) -> bool:
    if len(gold) != len(pred):
        return False
    g = sorted(gold, key=lambda r: _row_key(r, tol))
    p = sorted(pred, key=lambda r: _row_key(r, tol))
    if all(_rows_equal(a, b, tol) for a, b in zip(g, p, strict=True)):
        return True
    # values near a rounding boundary can sort apart: pair the rest greedily
    left = list(p)
    for r in g:
        for i, cand in enumerate(left):
            if _rows_equal(r, cand, tol):
                del left[i]
                break
        else:
            return False
    return not left


def _rows_match(
    gold: Sequence[Sequence[Any]], pred: Sequence[Sequence[Any]], semantics: str, tol: float
) -> bool:
    if semantics == "ordered":
        return len(gold) == len(pred) and all(
            _rows_equal(a, b, tol) for a, b in zip(gold, pred, strict=True)
        )
    if semantics == "set":
        return _bag_equal(_dedupe(gold, tol), _dedupe(pred, tol), tol)
    return _bag_equal(gold, pred, tol)


def _candidate_orders(
    gold: Sequence[Sequence[Any]], pred: Sequence[Sequence[Any]], width: int, tol: float
) -> list[tuple[int, ...]]:
    """Permutations of the system's columns worth trying: column j may stand for gold column i
    only when their sorted values agree (a cheap necessary condition under bag and ordered
    semantics; under set semantics every pairing is allowed)."""
    identity = tuple(range(width))
    perms = (
        itertools.permutations(range(width))
        if width <= 8
        else iter([identity])  # too many to try: keep the system's order
    )
    out: list[tuple[int, ...]] = [identity]
    for n, perm in enumerate(perms):
        if n >= _MAX_PERMUTATIONS:
            break
        if perm != identity:
            out.append(perm)
    return out


def _column_values_agree(
    gold: Sequence[Sequence[Any]], pred: Sequence[Sequence[Any]], gi: int, pj: int, tol: float
) -> bool:
    g = sorted((r[gi] for r in gold), key=lambda v: _key(v, tol))
    p = sorted((r[pj] for r in pred), key=lambda v: _key(v, tol))
    return len(g) == len(p) and all(values_equal(a, b, tol) for a, b in zip(g, p, strict=True))


def match_results(
    gold: QueryResult,
    pred: QueryResult,
    *,
    semantics: str = "bag",
    tolerance: float = 1e-6,
    column_order: bool = False,
) -> MatchVerdict:
    """Does `pred` match `gold` under the semantics (see the module docs)?"""
    if semantics not in ("bag", "set", "ordered"):
        raise ValueError(f"unknown semantics {semantics!r}; one of bag, set, ordered")
    width = len(gold.columns)
    if len(pred.columns) != width:
        return MatchVerdict(False, f"{len(pred.columns)} columns, gold has {width}")
    if semantics != "set" and len(pred.rows) != len(gold.rows):
        return MatchVerdict(False, f"{len(pred.rows)} rows, gold has {len(gold.rows)}")
    if _rows_match(gold.rows, pred.rows, semantics, tolerance):
        return MatchVerdict(True)
    if column_order or width < 2:
        return MatchVerdict(False, "rows differ")
    paired = semantics != "set"
    for perm in _candidate_orders(gold.rows, pred.rows, width, tolerance)[1:]:
        if paired and not all(
            _column_values_agree(gold.rows, pred.rows, i, j, tolerance) for i, j in enumerate(perm)
        ):
            continue
        moved = [[r[j] for j in perm] for r in pred.rows]
        if _rows_match(gold.rows, moved, semantics, tolerance):
            return MatchVerdict(True, "columns in another order")
    return MatchVerdict(False, "rows differ")


@dataclass(frozen=True)
class ResultDiff:
    """What differs between a gold result and a system's (`diff_results`).

    ``order`` is the system's columns in the gold's order (``order[i]`` is the system's column
    shown under gold column ``i``), or None when the two results are not as wide;
    ``only_gold`` and ``only_system`` are the unmatched rows (the system's in that order), and
    ``common`` the number of rows paired."""

    verdict: MatchVerdict
    order: tuple[int, ...] | None
    only_gold: tuple[tuple[Any, ...], ...]
    only_system: tuple[tuple[Any, ...], ...]
    common: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "match": self.verdict.ok,
            "reason": self.verdict.reason,
            "order": None if self.order is None else list(self.order),
            "only_gold": [list(r) for r in self.only_gold],
            "only_system": [list(r) for r in self.only_system],
            "common": self.common,
        }


def _pair_rows(
    gold: Sequence[Sequence[Any]], pred: Sequence[Sequence[Any]], tol: float
) -> tuple[list[Sequence[Any]], list[Sequence[Any]], int]:
    """Each gold row paired with an equal unpaired system row: (gold rows left over, system rows
    left over, pairs), in the order the rows came. Rows are bucketed by their sort key first;
    rows a rounding boundary put in other buckets are paired one by one afterwards."""
    buckets: dict[Any, list[int]] = {}
    for i, r in enumerate(pred):
        buckets.setdefault(_row_key(r, tol), []).append(i)
    taken: set[int] = set()
    rest: list[Sequence[Any]] = []
    for r in gold:
        for n, i in enumerate(buckets.get(_row_key(r, tol), [])):
            if _rows_equal(r, pred[i], tol):
                del buckets[_row_key(r, tol)][n]
                taken.add(i)
                break
        else:
            rest.append(r)
    left = [i for i in range(len(pred)) if i not in taken]
    only_gold: list[Sequence[Any]] = []
    common = len(taken)
    for r in rest:
        for n, i in enumerate(left if len(rest) * len(left) <= 1_000_000 else []):
            if _rows_equal(r, pred[i], tol):
                del left[n]
                common += 1
                break
        else:
            only_gold.append(r)
    return only_gold, [pred[i] for i in left], common


def diff_results(
    gold: QueryResult,
    pred: QueryResult,
    *,
    semantics: str = "bag",
    tolerance: float = 1e-6,
    column_order: bool = False,
) -> ResultDiff:
    """The rows only in `gold` and only in `pred`, beside `match_results`' verdict.

    Rows pair as a multiset (under ``set`` semantics duplicates are dropped first; under
    ``ordered`` the rows pair regardless of order and the verdict says whether the order
    differs). Without `column_order`, the system's columns are shown in the permutation that
    pairs the most rows (the first such, the system's own order on ties; up to 5 columns, or the
    permutation that matches when there is one)."""
    verdict = match_results(
        gold, pred, semantics=semantics, tolerance=tolerance, column_order=column_order
    )
    width = len(gold.columns)
    g_rows: Sequence[Sequence[Any]] = gold.rows
    p_rows: Sequence[Sequence[Any]] = pred.rows
    if semantics == "set":
        g_rows, p_rows = _dedupe(g_rows, tolerance), _dedupe(p_rows, tolerance)
    if len(pred.columns) != width:
        return ResultDiff(
            verdict,
            None,
            tuple(tuple(r) for r in g_rows),
            tuple(tuple(r) for r in p_rows),
            0,
        )
    perms: list[tuple[int, ...]] = [tuple(range(width))]
    if not column_order and width >= 2 and (width <= 5 or verdict.ok):
        perms = _candidate_orders(g_rows, p_rows, width, tolerance)
    best: tuple[int, tuple[int, ...], list[Sequence[Any]], list[Sequence[Any]]] | None = None
    for perm in perms:
        moved = [[r[j] for j in perm] for r in p_rows]
        og, op, common = _pair_rows(g_rows, moved, tolerance)
        if best is None or common > best[0]:
            best = (common, perm, og, op)
        if not og and not op:
            break
    assert best is not None
    common, perm, og, op = best
    return ResultDiff(
        verdict, perm, tuple(tuple(r) for r in og), tuple(tuple(r) for r in op), common
    )
