"""The agreement panel: how far experts agree on judging verdicts, per criterion and per pair.

Per criterion: Krippendorff's alpha (nominal) over every judging task with at least two labels,
plus raw percent agreement. Per annotator pair and criterion: Cohen's kappa over the tasks both
labelled. Confidence intervals are percentile bootstraps over tasks (units) with a fixed seed.
The statistics come from `assay.stats.agreement` when it is installed, else from the small
implementations below (checked against krippendorff and scikit-learn in the tests).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

import numpy as np
from sqlalchemy import select

from assay.workbench.db import Database
from assay.workbench.models import Label, Task, User
from assay.workbench.payloads import CRITERIA

__all__ = ["agreement_panel", "cohen_kappa", "krippendorff_alpha_nominal"]

NAN = float("nan")


def krippendorff_alpha_nominal(units: list[list[Any]]) -> float:
    """Krippendorff's alpha for nominal data; each unit is the list of values it received
    (units with fewer than two values are not pairable and are ignored)."""
    cats = sorted({v for u in units for v in u}, key=str)
    if len(cats) < 2:
        return 1.0 if any(len(u) >= 2 for u in units) else NAN
    idx = {c: i for i, c in enumerate(cats)}
    o = np.zeros((len(cats), len(cats)))
    for u in units:
        m = len(u)
        if m < 2:
            continue
        counts = np.zeros(len(cats))
        for v in u:
            counts[idx[v]] += 1
        o += (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n <= 1:
        return NAN
    d_o = o.sum() - np.trace(o)
    d_e = (n * n - (n_c**2).sum()) / (n - 1)
    return NAN if d_e == 0 else float(1.0 - d_o / d_e)


def cohen_kappa(a: list[Any], b: list[Any]) -> float:
    """Cohen's kappa of two raters over the same units (NaN when undefined)."""
    if not a or len(a) != len(b):
        return NAN
    cats = sorted(set(a) | set(b), key=str)
    n = len(a)
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    p_e = sum((a.count(c) / n) * (b.count(c) / n) for c in cats)
    if p_e == 1.0:
        return 1.0 if p_o == 1.0 else NAN
    return (p_o - p_e) / (1.0 - p_e)


def _bootstrap(
    stat: Any, n_units: int, *, reps: int = 500, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile CI of stat(indices) over units resampled with replacement (NaNs dropped)."""
    if n_units < 2:
        return (NAN, NAN)
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(reps):
        v = stat(rng.integers(0, n_units, n_units))
        if v == v:  # not NaN
            vals.append(v)
    if not vals:
        return (NAN, NAN)
    lo, hi = np.quantile(vals, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


def _backend() -> tuple[Any, Any]:
    """The alpha and kappa functions: the shared statistics library's when present."""
    try:
        from assay.stats import agreement as lib  # type: ignore[attr-defined]

        alpha = getattr(lib, "krippendorff_alpha", None)
        kappa = getattr(lib, "cohen_kappa", None)
        if callable(alpha) and callable(kappa):
            return _wrap_alpha(alpha), _wrap_kappa(kappa)
    except ImportError:
        pass
    return krippendorff_alpha_nominal, cohen_kappa


def _wrap_alpha(fn: Any) -> Any:
    def alpha(units: list[list[Any]]) -> float:
        try:
            return float(_scalar(fn(units, level="nominal")))
        except TypeError:
            return krippendorff_alpha_nominal(units)

    return alpha


def _wrap_kappa(fn: Any) -> Any:
    def kappa(a: list[Any], b: list[Any]) -> float:
        try:
            return float(_scalar(fn(a, b)))
        except (TypeError, ValueError):
            return cohen_kappa(a, b)

    return kappa


def _scalar(v: Any) -> float:
    for attr in ("estimate", "value", "alpha", "kappa"):
        if hasattr(v, attr):
            return float(getattr(v, attr))
    return float(v)


def agreement_panel(db: Database, *, reps: int = 500, seed: int = 0) -> dict[str, Any]:
    """Agreement on judging verdicts; recomputed from the store on every call."""
    alpha_fn, kappa_fn = _backend()
    with db.read() as s:
        users = {u.id: u.username for u in s.scalars(select(User))}
        rows = s.execute(
            select(Label.task_id, Label.user_id, Label.payload)
            .join(Task, Task.id == Label.task_id)
            .where(Task.kind == "judge", Task.calibration.is_(False))
            .order_by(Label.task_id, Label.user_id)
        ).all()
    by_task: dict[int, dict[int, dict[str, str]]] = defaultdict(dict)
    for task_id, user_id, payload in rows:
        by_task[task_id][user_id] = payload["verdicts"]
    multi = {t: v for t, v in by_task.items() if len(v) >= 2}
    tasks = sorted(multi)
    per_criterion = []
    for c in CRITERIA:
        units = [[multi[t][u][c] for u in sorted(multi[t])] for t in tasks]
        pct = [len(set(u)) == 1 for u in units]
        lo, hi = _bootstrap(
            lambda ix, units=units: alpha_fn([units[i] for i in ix]), len(units), reps=reps, seed=seed
        )
        per_criterion.append(
            {
                "criterion": c,
                "n_items": len(units),
                "alpha": alpha_fn(units) if units else NAN,
                "alpha_ci": [lo, hi],
                "percent_agreement": float(np.mean(pct)) if pct else NAN,
                "pass_rate": float(np.mean([v == "pass" for u in units for v in u]))
                if units
                else NAN,
            }
        )
    pairs = []
    raters = sorted({u for v in multi.values() for u in v})
    for a, b in itertools.combinations(raters, 2):
        shared = [t for t in tasks if a in multi[t] and b in multi[t]]
        if not shared:
            continue
        row: dict[str, Any] = {"a": users.get(a, str(a)), "b": users.get(b, str(b)), "n": len(shared)}
        for c in CRITERIA:
            xa = [multi[t][a][c] for t in shared]
            xb = [multi[t][b][c] for t in shared]
            k = kappa_fn(xa, xb)
            lo, hi = _bootstrap(
                lambda ix, xa=xa, xb=xb: kappa_fn([xa[i] for i in ix], [xb[i] for i in ix]),
                len(shared),
                reps=reps,
                seed=seed,
            )
            row[c] = {
                "kappa": k,
                "ci": [lo, hi],
                "agree": float(np.mean([x == y for x, y in zip(xa, xb, strict=True)])),
            }
        pairs.append(row)
    return {
        "n_tasks": len(tasks),
        "criteria": per_criterion,
        "pairs": pairs,
        "ci_level": 0.95,
        "bootstrap_reps": reps,
        "seed": seed,
    }
