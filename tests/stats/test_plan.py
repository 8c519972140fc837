"""Sample-size planning for the exact McNemar test, checked by simulation."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401
from assay.cli import app
from assay.stats.plan import (
    independence_discordance,
    mcnemar_power,
    observed_discordance,
    plan_mcnemar,
)


def _simulated_power(n: int, delta: float, psi: float, alpha: float, reps: int, seed: int) -> float:
    from scipy.stats import binom

    rng = np.random.default_rng(seed)
    p10, p01 = (psi + delta) / 2, (psi - delta) / 2
    counts = rng.multinomial(n, [p10, p01, 1 - psi], size=reps)
    f, b = counts[:, 0], counts[:, 1]
    m = f + b
    k = np.minimum(f, b)
    p = np.where(m > 0, np.minimum(1.0, 2 * binom.cdf(k, m, 0.5)), 1.0)
    p = np.where(2 * k == m, 1.0, p)
    return float(np.mean(p <= alpha))


@pytest.mark.parametrize(("delta", "psi"), [(0.03, 0.06), (0.05, 0.15), (-0.04, 0.10)])
def test_planned_n_reaches_power_by_simulation(delta: float, psi: float) -> None:
    plan = plan_mcnemar(delta=delta, discordant=psi, power=0.8)
    # one category and the overall row, two metrics: four tests under Holm
    assert plan.family == 4 and plan.alpha_per_test == pytest.approx(0.05 / 4)
    a = plan.alpha_per_test
    sim = _simulated_power(plan.n, delta, psi, a, 20_000, 1)
    assert sim == pytest.approx(plan.power, abs=0.015)
    assert sim >= 0.78
    smaller = _simulated_power(int(plan.n * 0.7), delta, psi, a, 20_000, 2)
    assert smaller < 0.75
    assert plan.n_normal_approx == pytest.approx(plan.n, rel=0.15)


def test_exact_power_matches_simulation_small_n() -> None:
    for n in (30, 200):
        exact = mcnemar_power(n, delta=0.03, discordant=0.03)
        assert _simulated_power(n, 0.03, 0.03, 0.05, 20_000, n) == pytest.approx(exact, abs=0.015)


def test_more_discordance_needs_more_entries_and_categories_split_alpha() -> None:
    a = plan_mcnemar(delta=0.03, discordant=0.06).n
    b = plan_mcnemar(delta=0.03, discordant=0.20).n
    c = plan_mcnemar(delta=0.03, discordant=0.06, categories=5)
    # (5 categories + overall) x 2 metrics = 12 tests, as compare adjusts them
    assert a < b and c.n > a and c.alpha_per_test == pytest.approx(0.05 / 12)
    indep = plan_mcnemar(delta=0.03, rate=0.8)
    assert indep.discordant == pytest.approx(independence_discordance(0.8, 0.03))


def test_impossible_inputs_rejected() -> None:
    with pytest.raises(ValueError, match="too small"):
        plan_mcnemar(delta=0.1, discordant=0.05)
    with pytest.raises(ValueError, match="impossible"):
        plan_mcnemar(delta=0.02, discordant=0.5, rate=0.1)
    assert observed_discordance([0, 1, 1, 0], [1, 1, 0, 0]) == (0.5, 0.0)


def test_plan_cli(make_case) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    res = runner.invoke(
        app, ["plan", "--rate", "0.80", "--delta", "0.03", "--discordant", "0.06", "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    row = json.loads(res.output)["rows"][0]
    # planned for the next comparison: the first recorded one already doubles p
    assert (
        row["n_needed"]
        == plan_mcnemar(delta=0.03, discordant=0.06, rate=0.8, lifetime_comparisons=1).n
    )
    ds, base, cand = make_case(
        {"a": [(2, 2)] * 40 + [(0, 2)] * 4 + [(2, 0)] * 2, "b": [(2, 2)] * 30 + [(0, 2)] * 3}
    )
    res = runner.invoke(
        app,
        [
            "plan",
            "--delta",
            "0.05",
            "--dataset",
            str(ds),
            "--base",
            str(base),
            "--cand",
            str(cand),
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = {r["category"]: r for r in json.loads(res.output)["rows"]}
    assert rows["a"]["discordant"] == pytest.approx(6 / 46) and rows["a"]["n_now"] == 46
    assert (
        rows["b"]["n_needed"]
        == plan_mcnemar(delta=0.05, discordant=3 / 33, categories=2, lifetime_comparisons=1).n
    )
    assert runner.invoke(app, ["plan", "--delta", "0.03"]).exit_code == 2


def test_plan_sample_is_the_library_call_behind_the_command() -> None:
    runner = CliRunner()
    from assay.compare import SamplePlan, plan_sample

    plan = plan_sample(delta=0.03, rate=0.80, discordant=0.06, categories=6)
    assert isinstance(plan, SamplePlan) and plan.rows[0]["category"] == "(each)"
    assert "= 14 tests" in plan.family  # (6 categories + overall) x 2 metrics
    cli = runner.invoke(
        app,
        ["plan", "--rate", "0.80", "--delta", "0.03", "--discordant", "0.06", "--categories", "6", "-f", "json"],
    )  # fmt: skip
    assert cli.exit_code == 0 and json.loads(cli.stdout) == json.loads(plan.to_json())
    md = runner.invoke(app, ["plan", "--rate", "0.8", "--delta", "0.03", "-f", "markdown"])
    assert md.exit_code == 0 and "n_needed" in md.stdout and "(ledger x2): alpha" in md.stdout


def test_the_plan_is_for_the_ledger_factor_of_the_next_comparison() -> None:
    from assay.compare import plan_sample
    from assay.stats.paired import mcnemar_exact

    plan = plan_sample(delta=0.03, rate=0.80, discordant=0.06, categories=6)
    row = plan.rows[0]
    assert "comparison #1 (ledger x2)" in plan.family
    first = plan_mcnemar(
        delta=0.03, discordant=0.06, rate=0.8, categories=6, lifetime_comparisons=1
    )
    assert row["n_needed"] == first.n
    unledgered = plan_sample(
        delta=0.03, rate=0.80, discordant=0.06, categories=6, lifetime_comparisons=0
    )
    assert unledgered.rows[0]["n_needed"] < row["n_needed"] and "ledger" not in unledgered.family
    # the printed power, checked by simulation at that n under Holm's first step and the factor
    rng = np.random.default_rng(12)
    n, reps = int(row["n_needed"]), 3000
    p_fix, p_break = (0.06 + 0.03) / 2, (0.06 - 0.03) / 2
    draws = rng.multinomial(n, [p_fix, p_break, 1 - p_fix - p_break], size=reps)
    level = 0.05 / (14 * 2)
    hits = sum(mcnemar_exact(int(f), int(b)).pvalue <= level for f, b, _ in draws)
    se = math.sqrt(row["power"] * (1 - row["power"]) / reps)
    print(f"planned power {row['power']:.3f}, simulated {hits / reps:.3f} (MC error {se:.3f})")
    assert abs(hits / reps - row["power"]) < 3 * se


def test_the_plan_with_an_icc_plans_clusters_and_entries_per_cluster() -> None:
    from assay.compare import plan_sample
    from assay.stats.clusters import icc_oneway

    flat = plan_sample(delta=0.04, rate=0.80, discordant=0.10, categories=6)
    plan = plan_sample(delta=0.04, rate=0.80, discordant=0.10, categories=6, icc=0.2, per_cluster=4)
    row = plan.rows[0]
    assert row["deff"] == pytest.approx(1.6)
    assert row["n_needed"] == math.ceil(flat.rows[0]["n_needed"] * 1.6)
    assert row["clusters_needed"] == math.ceil(row["n_needed"] / 4)
    assert "4 entries per cluster at ICC 0.2: design effect 1.6" in plan.family
    # the ICC estimator recovers a known one: cluster effect variance 0.3, noise 0.7
    rng = np.random.default_rng(5)
    k, m = 400, 6
    cl = np.repeat(np.arange(k), m)
    x = rng.normal(0, math.sqrt(0.3), k)[cl] + rng.normal(0, math.sqrt(0.7), k * m)
    assert icc_oneway(x, cl) == pytest.approx(0.3, abs=0.05)
    assert icc_oneway(rng.normal(size=k * m), cl) < 0.05
    assert icc_oneway([1.0, 2.0], ["a", "b"]) == 0.0  # no cluster with two entries
