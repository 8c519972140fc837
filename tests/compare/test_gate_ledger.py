"""`gate --require-significance` judges the ledger-corrected p, so the ledger's promise covers
the gate; `--within-comparison` keeps Holm alone and says so."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from scipy.special import ndtr
from tests.conftest import write_case
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401
from assay.cli import app
from assay.compare import GatePolicy, gate_files
from assay.compare.ledger import append_ledger
from assay.stats.multiple import holm

# lookup: 10 broken, none fixed (McNemar p = 2/1024); trend unchanged
OUTCOMES = {"lookup": [(2, 2)] * 30 + [(2, 0)] * 10, "trend": [(2, 2)] * 20}
KW = {"k": 5, "n_resamples": 200, "n_permutations": 200}


def _policy(**kw: object) -> GatePolicy:
    return GatePolicy(max_drop=0.02, metric="complete@5", require_significance=True, **kw)  # type: ignore[arg-type]


def test_significance_is_judged_on_the_ledger_corrected_p(tmp_path: Path) -> None:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    for i in range(3):  # three earlier comparisons of this dataset
        append_ledger(ds, {"command": "compare", "earlier": i})
    res = gate_files(ds, base, cand, policy=_policy(), **KW)  # type: ignore[arg-type]
    row = next(r for r in res.rows if r.category == "lookup")
    mc = row.metric
    # Holm over (2 categories + overall) x 2 metrics: significant within the comparison ...
    assert mc.p_holm <= 0.05
    # ... but this is comparison #4: x 20 on the ledger, and the gate does not call it a regression
    assert res.comparison.ledger_t == 4 and mc.p_ledger == min(1.0, mc.p_holm * 20)
    assert mc.p_ledger is not None and mc.p_ledger > 0.05
    assert row.p_gate == mc.p_ledger and not row.failed and res.passed
    assert "ledger-corrected p <= 0.05" in res.to_markdown()
    assert "comparison #4" in res.to_markdown()
    assert json.loads(res.to_json())["rows"][0]["p_gate"] == mc.p_ledger


def test_within_comparison_keeps_holm_alone_and_says_so(tmp_path: Path) -> None:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    for i in range(3):
        append_ledger(ds, {"command": "compare", "earlier": i})
    res = gate_files(ds, base, cand, policy=_policy(within_comparison=True), **KW)  # type: ignore[arg-type]
    row = next(r for r in res.rows if r.category == "lookup")
    assert row.p_gate == row.metric.p_holm and row.failed and not res.passed
    assert "within this comparison only (--within-comparison)" in res.to_markdown()
    # the CLI flag
    cli = CliRunner().invoke(
        app,
        [
            "gate",
            str(ds),
            str(base),
            str(cand),
            "--require-significance",
            "--within-comparison",
            "--resamples",
            "200",
            "--permutations",
            "200",
            "-f",
            "json",
        ],
    )
    assert cli.exit_code == 1, cli.output
    data = json.loads(cli.output)
    assert data["within_comparison"] is True and "within this comparison" in data["significance"]
    default = CliRunner().invoke(
        app,
        ["gate", str(ds), str(base), str(cand), "--require-significance", "-f", "json"],
    )
    assert default.exit_code == 0, default.output
    assert "ledger-corrected" in json.loads(default.output)["significance"]


def test_a_comparison_kept_out_of_the_ledger_falls_back_to_holm_and_says_so(
    tmp_path: Path,
) -> None:
    ds, base, cand = write_case(tmp_path, OUTCOMES)
    res = gate_files(ds, base, cand, policy=_policy(), record=False, **KW)  # type: ignore[arg-type]
    row = next(r for r in res.rows if r.category == "lookup")
    assert row.metric.p_ledger is None and row.p_gate == row.metric.p_holm and row.failed
    assert "not recorded in the ledger" in res.to_markdown()


def _gate_life_fail_rate(*, ledger: bool, lives: int, seed: int) -> float:
    """Share of simulated dataset lives in which a harmless change fails the gate at least once
    over 8 comparisons: 6 categories and the overall row (Holm), a category failing when it
    dropped and its p (Holm, or Holm x t(t+1)) is at most alpha; margins of 0 (any drop)."""
    alpha, cats, t_max = 0.05, 6, 8
    rng = np.random.default_rng(seed)
    failed = np.zeros(lives, dtype=bool)
    for t in range(1, t_max + 1):
        z = rng.standard_normal((lives, cats))
        rows = np.column_stack([z, z.sum(axis=1) / math.sqrt(cats)])
        p = 2.0 * ndtr(-np.abs(rows))
        # Holm's adjusted p of each row, vectorised: only lives whose smallest p could pass
        maybe = np.flatnonzero(p.min(axis=1) * (cats + 1) <= alpha)
        for life in maybe:
            adj = holm(p[life])
            if ledger:
                adj = np.minimum(1.0, adj * t * (t + 1))
            failed[life] |= bool(np.any((adj[:cats] <= alpha) & (z[life] < 0)))
    return float(failed.mean())


def test_over_a_life_the_gate_fails_a_harmless_change_at_most_alpha() -> None:
    lives = 20_000
    mc = 3 * math.sqrt(0.05 * 0.95 / lives)  # 0.0046
    within = _gate_life_fail_rate(ledger=False, lives=lives, seed=3)
    corrected = _gate_life_fail_rate(ledger=True, lives=lives, seed=3)
    assert within > 0.05 + mc, within  # measured 0.158 (the issue measured 0.13 on its data)
    assert corrected + mc <= 0.05, corrected  # measured 0.019
