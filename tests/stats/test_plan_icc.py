"""The planner estimates the intraclass correlation from a dataset and two runs, plans clusters
and entries per cluster, and its printed power holds in a clustered simulation."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401
from assay.cli import app
from assay.compare import plan_sample
from assay.stats.clusters import cluster_sign_flip, icc_oneway
from assay.stats.plan import plan_mcnemar


def test_icc_oneway_against_a_hand_worked_example_and_statsmodels() -> None:
    # clusters A = 1, 2, 3; B = 4, 6; C = 5, 5, 8, 6 (n = 9, K = 3): cluster means 2, 5, 6,
    # grand mean 40/9; MSB = 2286/81 / 2, MSW = 10 / 6, m0 = (9 - 29/9) / 2 = 26/9
    msb, msw, m0 = Fraction(2286, 81) / 2, Fraction(10, 6), Fraction(26, 9)
    want = (msb - msw) / (msb + (m0 - 1) * msw)
    assert want == Fraction(1008, 1398)
    x = [1, 2, 3, 4, 6, 5, 5, 8, 6]
    cl = ["A"] * 3 + ["B"] * 2 + ["C"] * 4
    assert icc_oneway(x, cl) == pytest.approx(float(want), rel=1e-12)
    # balanced clusters: the ANOVA estimator is the REML variance-component ratio (statsmodels)
    import pandas as pd
    import statsmodels.formula.api as smf

    rng = np.random.default_rng(3)
    k, m = 12, 4
    g = np.repeat(np.arange(k), m)
    y = 0.8 * rng.normal(size=k)[g] + rng.normal(size=k * m)
    fit = smf.mixedlm("y ~ 1", pd.DataFrame({"y": y, "g": g}), groups="g").fit(reml=True)
    v = float(fit.cov_re.iloc[0, 0])
    assert icc_oneway(y, g) == pytest.approx(v / (v + fit.scale), abs=1e-5)


def _case(make_case):  # type: ignore[no-untyped-def]
    # 20 facts of 3 questions (metadata.fact_id): the candidate finds both pieces on every
    # question of facts 0-3 and 10 (the baseline one piece), misses on fact 12: changes move
    # whole facts, so they correlate within a fact
    pairs = []
    for i in range(60):
        fact = i // 3
        pairs.append((1, 2) if fact in (0, 1, 2, 3, 10) else (2, 1) if fact == 12 else (2, 2))
    return make_case({"a": pairs})


def test_the_plan_estimates_the_icc_and_cluster_size_from_the_runs(make_case) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = _case(make_case)
    kw = {"delta": 0.1, "dataset": ds, "base": base, "cand": cand, "lifetime_comparisons": 0}
    plan = plan_sample(**kw, cluster="metadata.fact_id")
    row = plan.rows[0]
    d = np.array([1.0 if i // 3 in (0, 1, 2, 3, 10) else -1.0 if i // 3 == 12 else 0.0
                  for i in range(60)])  # fmt: skip
    icc = icc_oneway(d, [i // 3 for i in range(60)])
    assert icc == pytest.approx(1.0)  # every change moves its whole fact
    assert row["icc"] == pytest.approx(icc) and row["per_cluster"] == pytest.approx(3.0)
    deff = 1 + 2 * icc
    flat = plan_mcnemar(delta=0.1, discordant=18 / 60, categories=1)
    assert row["deff"] == pytest.approx(deff)
    assert row["n_needed"] == math.ceil(flat.n * deff - 1e-9)
    assert row["clusters_needed"] == math.ceil(row["n_needed"] / 3)
    assert "clustered by metadata.fact_id: 60 entries in 20 clusters" in plan.family
    assert "ICC of the paired changes estimated" in plan.family
    # a given ICC is used as given, the cluster size still estimated
    given = plan_sample(**kw, cluster="metadata.fact_id", icc=0.25).rows[0]
    assert given["icc"] == 0.25 and given["deff"] == pytest.approx(1.5)
    # entries on their own documents: no clustering, the plan is the entry-level one
    assert "icc" not in plan_sample(**kw).rows[0]
    assert plan_sample(**kw).rows[0]["n_needed"] == flat.n
    res = CliRunner().invoke(
        app,
        ["plan", "--delta", "0.1", "--dataset", str(ds), "--base", str(base), "--cand",
         str(cand), "--lifetime-comparisons", "0", "--cluster", "metadata.fact_id", "-f", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["rows"][0] == json.loads(json.dumps(row))


def _draw(
    rng: np.random.Generator, k: int, m: int, p10: float, p01: float, icc: float
) -> np.ndarray:
    """Paired changes (+1 fixed, -1 broken, 0) of ``k`` clusters of ``m``: each entry takes its
    cluster's common change with probability sqrt(icc), else its own; both drawn from the same
    marginal, so the changes' correlation within a cluster is ``icc``."""

    def pick(u: np.ndarray) -> np.ndarray:
        return np.where(u < p10, 1.0, np.where(u < p10 + p01, -1.0, 0.0))

    common = pick(rng.random((k, 1)))
    own = pick(rng.random((k, m)))
    return np.where(rng.random((k, m)) < math.sqrt(icc), common, own).reshape(-1)


def _simulated_power(
    delta: float, psi: float, icc: float, m: int, reps: int, seed: int
) -> tuple[float, float, float]:
    plan = plan_sample(
        delta=delta, discordant=psi, icc=icc, per_cluster=m, categories=1, metrics=1,
        lifetime_comparisons=0,
    )  # fmt: skip
    row = plan.rows[0]
    k = int(row["clusters_needed"])
    level = 0.05 / 2  # Holm's first step over (1 category + overall) x 1 metric
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(k), m)
    hits = 0
    for _ in range(reps):
        d = _draw(rng, k, m, (psi + delta) / 2, (psi - delta) / 2, icc)
        p = cluster_sign_flip(np.zeros(d.size), d, labels, rng=rng, n_permutations=1000).pvalue
        hits += p < level
    se = math.sqrt(row["power"] * (1 - row["power"]) / reps)
    return float(row["power"]), hits / reps, se


def test_the_printed_power_holds_for_the_cluster_test_fast() -> None:
    power, sim, se = _simulated_power(0.15, 0.25, 0.3, 4, reps=300, seed=11)
    print(f"printed power {power:.3f}, simulated {sim:.3f} (MC error {se:.3f})")
    assert abs(sim - power) < 3 * se


@pytest.mark.simulation
@pytest.mark.parametrize(
    ("delta", "psi", "icc", "m"),
    [(0.15, 0.25, 0.3, 4), (0.1, 0.2, 0.1, 8), (0.2, 0.3, 0.5, 3), (0.1, 0.3, 0.05, 6)],
)
def test_the_printed_power_holds_for_the_cluster_test(
    delta: float, psi: float, icc: float, m: int
) -> None:
    power, sim, se = _simulated_power(delta, psi, icc, m, reps=2000, seed=7)
    print(f"ICC {icc}, {m} per cluster: printed {power:.3f}, simulated {sim:.3f} (MC {se:.3f})")
    assert abs(sim - power) < 3 * se + 0.02


def test_the_plan_reads_the_entries_compare_compares(make_case) -> None:  # type: ignore[no-untyped-def]
    # the planner read every entry whatever its label tier (compare takes gold only by
    # default), and had no --tiers, --level, --skip-missing or --chunks: on FinanceBench (all
    # silver, gold that resolves only at page level) it could not read the runs at all
    ds, base, cand = _case(make_case)
    rows = [json.loads(line) for line in ds.read_text().splitlines()]
    for i, r in enumerate(rows):
        r["label_tier"] = "gold" if i < 30 else "silver"
    ds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kw = {"delta": 0.1, "dataset": ds, "base": base, "cand": cand, "lifetime_comparisons": 0}
    assert plan_sample(**kw, cluster="none").rows[0]["n_now"] == 30
    both = plan_sample(**kw, cluster="none", tiers="gold,silver").rows[0]
    assert both["n_now"] == 60
    res = CliRunner().invoke(
        app,
        ["plan", "--delta", "0.1", "--dataset", str(ds), "--base", str(base), "--cand",
         str(cand), "--lifetime-comparisons", "0", "--cluster", "none", "--tiers",
         "gold,silver", "--skip-missing", "-f", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["rows"][0]["n_now"] == 60
    # the level reaches the scorer: page level needs the chunk table, named as compare names it
    res = CliRunner().invoke(
        app,
        ["plan", "--delta", "0.1", "--dataset", str(ds), "--base", str(base), "--cand",
         str(cand), "--level", "page"],
    )  # fmt: skip
    assert res.exit_code == 2
    assert "golden.jsonl:1: evidence_paths.0.0.0: page-level scoring" in res.output


def test_too_few_changes_plan_at_the_worst_case_icc(make_case) -> None:  # type: ignore[no-untyped-def]
    # two questions changed, each on its own fact of three: the one-way estimate reads a low
    # ICC from them and the plan took it (on FinanceBench's two retrieval runs one changed
    # question alone in its filing read as ICC 1): a handful of changes cannot estimate it
    pairs = [(1, 2) if i in (0, 3) else (2, 2) for i in range(60)]
    ds, base, cand = make_case({"a": pairs})
    kw = {"delta": 0.1, "dataset": ds, "base": base, "cand": cand, "lifetime_comparisons": 0}
    d = np.array([1.0 if i in (0, 3) else 0.0 for i in range(60)])
    low = icc_oneway(d, [i // 3 for i in range(60)])
    assert low < 0.5
    plan = plan_sample(**kw, cluster="metadata.fact_id")
    assert plan.rows[0]["icc"] == 1.0
    assert "only 2 entries changed between the runs, too few to estimate the ICC" in plan.family
    assert "planned at ICC 1, the worst case (give --icc)" in plan.family
    # a given ICC is used as given
    assert plan_sample(**kw, cluster="metadata.fact_id", icc=0.2).rows[0]["icc"] == 0.2
