"""Multiple-comparison control: Holm within one comparison, alpha-spending across a dataset's life.

Within one comparison (several categories and the overall row, several metrics) p-values are
adjusted with Holm's step-down procedure as one family (`holm_family`), which controls the
family-wise error rate at alpha under any dependence. The overall row belongs to the family: were
it a family of its own, one comparison would spend alpha twice (once on the categories, once on
the overall row) and the ledger's guarantee below would hold 2 alpha.

Across comparisons, a dataset that has been tested against many times makes each new p-value less
honest: somebody will eventually "win" by chance, and changes tuned until the set says yes overfit
it. The comparison ledger (`assay.compare.ledger`) numbers every comparison ever run against a
dataset. Comparison number ``t`` (1-based) is given the share

    gamma_t = 1 / (t * (t + 1))        (which sums to exactly 1 over t = 1, 2, ...)

of the overall error budget alpha: it is tested at level ``alpha * gamma_t``, equivalently its
(Holm-adjusted) p-values are multiplied by ``t * (t + 1)`` (capped at 1). By the union bound the
probability of *any* false positive over the dataset's whole, open-ended history stays at most
alpha, whatever the dependence between comparisons, and a decision once made is never revised by
later comparisons. This is online Bonferroni alpha-spending; `docs/statistics.md` explains the
choice and its price (the tenth comparison needs p < alpha / 110) and why the remedy for a
well-worn set is a fresh sample, not a gentler correction.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["holm", "holm_family", "ledger_adjust", "ledger_alpha", "ledger_factor"]


def holm(pvalues: ArrayLike) -> NDArray[np.float64]:
    """Holm step-down adjusted p-values, in the input order (matches statsmodels ``holm``).

    Ties in p are ordered by position (stable sort), which does not change the adjusted values.
    NaN entries are ignored (returned as NaN) and do not count toward the family size.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError("pvalues must be 1-D")
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    if np.any((q < 0) | (q > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    m = q.size
    if m == 0:
        return out
    order = np.argsort(q, kind="stable")
    scaled = (m - np.arange(m)) * q[order]
    adjusted = np.minimum(1.0, np.maximum.accumulate(scaled))
    res = np.empty(m)
    res[order] = adjusted
    out[ok] = res
    return out


def holm_family(rows: Sequence[ArrayLike]) -> list[NDArray[np.float64]]:
    """Holm over the p-values of every row as one family; returned split back by row.

    A comparison's rows are its categories and its overall row, each with one primary p-value
    per metric. NaN p-values (a row with no entries) are ignored, as in `holm`.
    """
    parts = [np.asarray(r, dtype=np.float64).reshape(-1) for r in rows]
    if not parts:
        return []
    adjusted = holm(np.concatenate(parts))
    out: list[NDArray[np.float64]] = []
    start = 0
    for part in parts:
        out.append(adjusted[start : start + part.size])
        start += part.size
    return out


def ledger_factor(t: int) -> int:
    """The multiplier ``t * (t + 1)`` applied to p-values of the dataset's ``t``-th comparison."""
    if t < 1:
        raise ValueError("comparison number t is 1-based")
    return t * (t + 1)


def ledger_alpha(t: int, alpha: float = 0.05) -> float:
    """The significance level spent on the ``t``-th comparison: ``alpha / (t * (t + 1))``."""
    return alpha / ledger_factor(t)


def ledger_adjust(pvalues: ArrayLike, t: int) -> NDArray[np.float64]:
    """P-values of the ``t``-th comparison corrected for the dataset's history: ``min(1, p*t*(t+1))``."""
    p = np.asarray(pvalues, dtype=np.float64)
    return np.minimum(1.0, p * ledger_factor(t))
