"""The series core: any registered metric or check compared, gated and ranked with the test its
kind calls for, checked against statsmodels and scipy."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from tests.compare.room_runs import ids_of, room, write_chunks, write_run_file
from typer.testing import CliRunner

import assay.cli._register
import assay.judge
import assay.score.retrieval
from assay.cli import app
from assay.compare import (
    GatePolicy,
    Series,
    SeriesError,
    compare_arrays,
    compare_runs,
    describe,
    gate,
    gate_files,
    series_for,
)
from assay.corpus import load_chunks
from assay.dataset import load_dataset
from assay.errors import DataError
from assay.judge import CheckContext, check, check_rows, unregister
from assay.metrics import DEFAULT_PAIR, HEADLINE
from assay.runs import load_run
from assay.stats.counts import sign_test_worse
from assay.stats.paired import wilcoxon_moved


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The room, its chunk table and runs: base breaks 3 numeric lookups, cand breaks 7 others
    (so 3 fixed, 7 broken on answer_correct), and cand misses the gold of 2 decoys."""
    d = tmp_path_factory.mktemp("series")
    golden = room(d / "room")
    chunks = d / "chunks.jsonl"
    gold = write_chunks(golden, chunks)
    lookups = ids_of(golden, "numeric_lookup")
    decoys = ids_of(golden, "decoy")
    base = write_run_file(golden, gold, d / "base.jsonl", broken=lookups[:3])
    cand = write_run_file(golden, gold, d / "cand.jsonl", broken=lookups[3:10], missed=decoys[:2])
    good = write_run_file(golden, gold, d / "good.jsonl")
    five = write_run_file(golden, gold, d / "five.jsonl", broken=lookups[:5])
    return {
        "dir": d, "golden": golden, "chunks": chunks, "base": base, "cand": cand,
        "good": good, "five": five, "lookups": lookups, "decoys": decoys,
    }  # fmt: skip


def _load(case: dict[str, Any], *names: str) -> list[Any]:
    return [load_run(case[n]) for n in names]


# ----------------------------------------------------------------------------- the series value


def test_a_series_validates_its_values_by_kind() -> None:
    s = Series.from_values("x", "binary", {"a": True, "b": None, "c": 0})
    assert s.abstained == ("b",) and s.n_decided == 2 and s.get("a") == 1.0 and s.get("b") is None
    assert np.isnan(s.aligned(["c", "zz", "a"])).tolist() == [False, True, False]
    with pytest.raises(SeriesError, match="'x' is binary: every value must be 0 or 1"):
        Series.from_values("x", "binary", {"a": 0.5})
    with pytest.raises(SeriesError, match=r"'g' is graded: values must lie in \[0, 1\]"):
        Series.from_values("g", "graded", {"a": 1.2})
    with pytest.raises(SeriesError, match="'n' is a count: values must be non-negative integers"):
        Series.from_values("n", "count", {"a": 1.5})
    with pytest.raises(SeriesError, match="'n' is a count"):
        Series.from_values("n", "count", {"a": -1})
    with pytest.raises(SeriesError, match="unknown kind 'ordinal'"):
        Series.from_values("o", "ordinal", {"a": 1})
    with pytest.raises(SeriesError, match="unique"):
        Series("d", "binary", ("a", "a"), np.array([0.0, 1.0]))


def test_names_are_read_as_metrics_or_checks() -> None:
    m = describe(HEADLINE, k=5)
    assert (m.name, m.kind, m.source) == ("complete@5", "binary", "metric")
    assert describe("recall@3").kind == "graded"
    c = describe("answer_correct")
    assert (c.kind, c.source, c.higher_is_better) == ("binary", "check", True)
    assert describe("key_fact_recall").kind == "graded"
    assert describe("answered_when_should_abstain").higher_is_better is False
    with pytest.raises(SeriesError, match=r"unknown metric or check 'nope'.*complete@k.*answer_"):
        describe("nope")
    assert DEFAULT_PAIR[0] == HEADLINE


@pytest.fixture()
def leaks() -> Iterator[str]:
    @check("leaked_chunks", kind="count", default=False, higher_is_better=False)
    def _leaked(ctx: CheckContext) -> int | None:
        """Chunks retrieved that the row marks as not permitted."""
        return None if ctx.row is None else len(ctx.row.extra.get("forbidden", []))

    yield "leaked_chunks"
    unregister("leaked_chunks")


def test_every_series_of_a_run_is_computed_once(
    case: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three metrics share one retrieval context per run; five checks share one pass over it."""
    contexts: list[object] = []
    real_context = assay.score.retrieval.Context

    def counting_context(*a: Any, **kw: Any) -> Any:
        contexts.append(a)
        return real_context(*a, **kw)

    passes: list[object] = []
    real_rows = assay.judge.check_rows

    def counting_rows(*a: Any, **kw: Any) -> Any:
        passes.append(kw.get("checks"))
        return real_rows(*a, **kw)

    monkeypatch.setattr(assay.score.retrieval, "Context", counting_context)
    monkeypatch.setattr(assay.judge, "check_rows", counting_rows)
    ds = load_dataset(case["golden"])
    chunks = load_chunks(case["chunks"])
    base, cand = _load(case, "base", "cand")
    names = "complete@5,recall@5,mrr,answer_correct,numbers_verified,key_fact_recall"
    cmp = compare_runs(ds, base, cand, chunks=chunks, metrics=[names], n_resamples=200)
    assert cmp.metrics == names.split(",")
    assert len(contexts) == 2 and len(passes) == 2
    assert passes[0] == ["answer_correct", "numbers_verified", "key_fact_recall"]


def test_series_for_gives_metric_and_check_series(case: dict[str, Any]) -> None:
    ds = load_dataset(case["golden"])
    (cand,) = _load(case, "cand")
    rs = series_for(ds, cand, "complete@5,answer_correct", chunks=load_chunks(case["chunks"]))
    metric, checked = rs["complete@5"], rs["answer_correct"]
    answerable = [e.id for e in ds.entries if e.is_answerable]
    assert list(metric.ids) == answerable and metric.source == "metric"
    assert metric.get(case["decoys"][0]) == 0.0 and metric.get(case["decoys"][2]) == 1.0
    assert list(checked.ids) == [e.id for e in ds.entries] and checked.source == "check"
    assert checked.get(case["lookups"][3]) == 0.0 and checked.get(case["lookups"][0]) == 1.0
    unanswerable = ids_of(case["golden"], "unanswerable")
    assert set(unanswerable) <= set(checked.abstained)


# ----------------------------------------------------------------------------- tests by kind


def test_answer_correct_gets_mcnemar_exact_as_statsmodels(case: dict[str, Any]) -> None:
    ds = load_dataset(case["golden"])
    base, cand = _load(case, "base", "cand")
    cmp = compare_runs(
        ds, base, cand, metrics=["answer_correct"], chunks=load_chunks(case["chunks"]),
        n_resamples=500, cluster="none",  # the entry-level test, as statsmodels computes it
    )  # fmt: skip
    rows_b, _ = check_rows(ds, base, checks="answer_correct")
    rows_c, _ = check_rows(ds, cand, checks="answer_correct")
    vb = {r["id"]: r["answer_correct"] for r in rows_b}
    vc = {r["id"]: r["answer_correct"] for r in rows_c}
    pairs = [(vb[i], vc[i]) for i in vb if vb[i] is not None and vc[i] is not None]
    table = [
        [sum(b and c for b, c in pairs), sum(b and not c for b, c in pairs)],
        [sum(c and not b for b, c in pairs), sum(not b and not c for b, c in pairs)],
    ]
    assert table[0][1] == 7 and table[1][0] == 3
    mc = cmp.overall.metrics["answer_correct"]
    assert mc.kind == "binary" and len(mc.broken) == 7 and len(mc.fixed) == 3
    assert set(mc.broken) == set(case["lookups"][3:10])
    assert mc.tests["mcnemar_exact"].pvalue == pytest.approx(
        mcnemar(table, exact=True).pvalue, rel=1e-12
    )
    # abstentions are left out and counted: every entry where either run's check abstained
    abstained = sorted(i for i in vb if vb[i] is None or vc[i] is None)
    assert mc.abstained == tuple(abstained) and mc.n == len(pairs)
    d = cmp.to_dict()["overall"]["metrics"]["answer_correct"]
    assert d["abstained"] == len(abstained) and d["abstained_ids"] == abstained
    decided = f"decided {len(pairs)} of {len(pairs) + len(abstained)}"
    assert any(
        f"answer_correct: {decided} ({len(abstained)} entries left out" in x
        for x in cmp.header_lines()
    )
    assert decided in cmp.to_markdown()  # and it leads the check's rows
    lookup = cmp.categories["numeric_lookup"].metrics["answer_correct"]
    sub = [[6 - 3, 7], [3, 0]]  # 13 lookups: 3 both right, 7 broken, 3 fixed, 0 both wrong
    assert lookup.p == pytest.approx(mcnemar(sub, exact=True).pvalue, rel=1e-12)


def test_a_count_gets_the_one_sided_sign_test_as_scipy(leaks: str) -> None:
    ids = [f"e{i}" for i in range(14)]
    base = np.array([0, 0, 1, 2, 0, 0, 3, 0, 0, 1, 0, 0, 0, 5], dtype=float)
    cand = np.array([1, 2, 1, 4, 0, 1, 3, 1, 2, 0, 0, 1, 0, 5], dtype=float)
    rose, fell = int(np.sum(cand > base)), int(np.sum(cand < base))
    cmp = compare_arrays(ids, ["a"] * 14, {leaks: base}, {leaks: cand}, n_resamples=500)
    mc = cmp.overall.metrics[leaks]
    assert mc.kind == "count" and not mc.higher_is_better
    # lower is better: the entries whose count rose are the worsened ones
    assert len(mc.down) == rose == 7 and len(mc.up) == fell == 1
    ref = binomtest(rose, rose + fell, 0.5, alternative="greater").pvalue
    assert mc.tests["sign_test_worse"].pvalue == pytest.approx(ref, rel=1e-12)
    assert mc.delta.value == pytest.approx(float((cand - base).mean()))
    # the same counts moving the other way are no evidence of harm
    better = compare_arrays(ids, ["a"] * 14, {leaks: cand}, {leaks: base}, n_resamples=500)
    assert better.overall.metrics[leaks].p == pytest.approx(
        binomtest(fell, rose + fell, 0.5, alternative="greater").pvalue
    )
    for worse, good in [(0, 0), (5, 0), (3, 9), (12, 4)]:
        want = (
            1.0
            if worse + good == 0
            else binomtest(worse, worse + good, 0.5, alternative="greater").pvalue
        )
        assert sign_test_worse(worse, good).pvalue == pytest.approx(want, rel=1e-12)
    js = cmp.to_dict()["overall"]["metrics"][leaks]
    assert js["kind"] == "count" and js["higher_is_better"] is False
    assert js["worsened_ids"] == sorted(np.asarray(ids)[cand > base].tolist())
    assert any("one-sided sign test" in line for line in cmp.header_lines())


def test_a_graded_check_gets_wilcoxon_and_a_sign_flip_second_opinion() -> None:
    rng = np.random.default_rng(3)
    ids = [f"e{i}" for i in range(30)]
    base = rng.integers(0, 5, 30) / 4
    cand = np.clip(base + rng.choice([-0.25, 0.0, 0.25, 0.5], 30), 0, 1)
    base[[2, 7]] = np.nan  # abstained in the baseline
    cmp = compare_arrays(
        ids, ["x"] * 30, {"key_fact_recall": base}, {"key_fact_recall": cand},
        n_resamples=500, n_permutations=500,
    )  # fmt: skip
    mc = cmp.overall.metrics["key_fact_recall"]
    keep = ~np.isnan(base)
    assert mc.kind == "graded" and set(mc.tests) == {"wilcoxon", "sign_flip", "score"}
    assert mc.p == wilcoxon_moved(base[keep], cand[keep]).pvalue
    assert mc.abstained == ("e2", "e7") and mc.n == 28


def test_all_series_of_a_comparison_are_one_holm_family(case: dict[str, Any]) -> None:
    ds = load_dataset(case["golden"])
    base, cand = _load(case, "base", "cand")
    cmp = compare_runs(
        ds, base, cand, chunks=load_chunks(case["chunks"]), n_resamples=300, n_permutations=300,
        metrics=["complete@5,recall@5,answer_correct,numbers_verified"],
    )  # fmt: skip
    cells = [mc for row in cmp.rows for mc in row.metrics.values()]
    ps = np.array([mc.p for mc in cells])
    ok = ~np.isnan(ps)
    want = multipletests(ps[ok], method="holm")[1]
    got = np.array([mc.p_holm for mc in cells])[ok]
    assert ok.sum() > 20 and np.allclose(got, want, rtol=0, atol=1e-12)


def test_retrieval_only_comparisons_say_nothing_new(case: dict[str, Any]) -> None:
    """No abstention keys, no count line: a retrieval comparison's output is as it was."""
    ds = load_dataset(case["golden"])
    base, cand = _load(case, "base", "cand")
    cmp = compare_runs(ds, base, cand, chunks=load_chunks(case["chunks"]), n_resamples=200)
    assert cmp.metrics == ["complete@5", "recall@5"]
    d = cmp.to_dict()["overall"]["metrics"]
    assert all("abstained" not in m and "higher_is_better" not in m for m in d.values())
    assert set(d["complete@5"]["broken_ids"]) == set(case["decoys"][:2])


# ----------------------------------------------------------------------------- the gate


def test_a_gate_on_answer_correct_fails_when_five_numeric_lookups_break(
    case: dict[str, Any],
) -> None:
    res = gate_files(
        case["golden"], case["good"], case["five"], k=5, record=False,
        policy=GatePolicy(metric="answer_correct", max_drop=0.02), n_resamples=300,
        cluster="none",  # entries as independent: the exact McNemar checked below
    )  # fmt: skip
    assert not res.passed and res.exit_code == 1
    # the room's conflict entries have neither key facts nor a figure: answer_correct decides
    # none of them, and a gate does not vouch for a category it could not read
    assert res.failed_categories == ["conflict", "numeric_lookup"]
    assert res.headline() == (
        "FAIL: answer_correct regressed in numeric_lookup; answer_correct abstained on too "
        "many entries in conflict (4 of 4)."
    )
    row = next(r for r in res.rows if r.category == "numeric_lookup")
    assert set(row.metric.broken) == set(case["lookups"][:5]) and not row.metric.fixed
    assert row.drop == pytest.approx(5 / 13)
    assert row.metric.p == pytest.approx(mcnemar([[8, 5], [0, 0]], exact=True).pvalue)
    # an answer check needs no retrieval scoring: the comparison holds the gated check only
    assert res.comparison.metrics == ["answer_correct"]
    # the same run against itself passes
    same = gate_files(
        case["golden"], case["good"], case["good"], record=False,
        policy=GatePolicy(metric="answer_correct", max_abstain=1.0), n_resamples=300,
    )  # fmt: skip
    assert same.passed


def test_a_gate_on_several_series_gates_each_in_one_holm_family(case: dict[str, Any]) -> None:
    ds = load_dataset(case["golden"])
    good, five = _load(case, "good", "five")
    cmp = compare_runs(
        ds, good, five, chunks=load_chunks(case["chunks"]), n_resamples=300,
        metrics=["complete@5,answer_correct"],
    )  # fmt: skip
    # (gate() alone does not know which entries answer_correct rates: any abstention counts)
    res = gate(
        cmp,
        GatePolicy(metric="complete", metrics=("answer_correct",), max_drop=0.02, max_abstain=1),
    )
    assert [p.policy.metric for p in res.parts] == ["complete@5", "answer_correct"]
    assert res.parts[0].metric_passed and not res.parts[1].metric_passed and not res.passed
    assert res.failures == [("answer_correct", "numeric_lookup")]
    d = res.to_dict()
    assert d["metrics"] == ["complete@5", "answer_correct"] and d["passed"] is False
    assert d["failed_categories"] == ["numeric_lookup"]
    assert [g["passed"] for g in d["gates"]] == [True, False]
    assert "answer_correct in numeric_lookup" in res.to_markdown()


def test_a_gate_on_an_error_check_fails_on_a_rise() -> None:
    ids = [f"e{i}" for i in range(20)]
    base = np.zeros(20)
    cand = np.zeros(20)
    cand[:4] = 1.0  # four entries newly answered when they should have abstained
    cmp = compare_arrays(
        ids, ["refuse"] * 20, {"answered_when_should_abstain": base},
        {"answered_when_should_abstain": cand}, n_resamples=200,
    )  # fmt: skip
    res = gate(cmp, GatePolicy(metric="answered_when_should_abstain", max_drop=0.1))
    assert not res.passed and res.rows[0].drop == pytest.approx(0.2)
    assert "rose 0.200" in res.rows[0].verdict
    assert res.rows[0].metric.broken == tuple(ids[:4])


# ----------------------------------------------------------------------------- slicing


def test_rows_by_source_and_an_unknown_field(case: dict[str, Any], tmp_path: Path) -> None:
    rows = [json.loads(x) for x in case["golden"].read_text().splitlines()]
    for i, r in enumerate(rows):
        r["source"] = "log" if i % 2 else "synthetic"
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_dataset(golden)
    base, cand = _load(case, "base", "cand")
    cmp = compare_runs(
        ds, base, cand, metrics=["answer_correct"], by="source", n_resamples=200,
        chunks=load_chunks(case["chunks"]),
    )  # fmt: skip
    assert cmp.by == "source" and set(cmp.categories) == {"log", "synthetic"}
    n = {c: r.n for c, r in cmp.categories.items()}
    assert n == {"log": len(rows) // 2, "synthetic": len(rows) - len(rows) // 2}
    by_meta = compare_runs(
        ds, base, cand, metrics=["answer_correct"], by="metadata.company", n_resamples=200
    )
    assert set(by_meta.categories) == {r["metadata"]["company"] for r in rows}
    with pytest.raises(DataError, match=r"metadata\.colour: no entry has metadata\.colour"):
        compare_runs(ds, base, cand, metrics=["answer_correct"], by="colour")


# ----------------------------------------------------------------------------- the command line


def test_cli_compare_gate_and_leaderboard_on_checks(case: dict[str, Any]) -> None:
    runner = CliRunner()
    g, b, c, ch = (str(case[n]) for n in ("golden", "base", "cand", "chunks"))
    common = ["--chunks", ch, "--resamples", "200", "--permutations", "200", "--no-record"]
    res = runner.invoke(
        app,
        ["compare", g, b, c, "--metrics", "complete@5,answer_correct,numbers_verified",
         *common, "-f", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["metrics"] == ["complete@5", "answer_correct", "numbers_verified"]
    ov = data["overall"]["metrics"]
    assert ov["answer_correct"]["broken"] == 7 and ov["answer_correct"]["abstained"] > 0
    assert ov["numbers_verified"]["kind"] == "binary"
    # the table lists the flipped entries, as markdown and JSON do
    table = runner.invoke(app, ["compare", g, b, c, "--metrics", "answer_correct", *common])
    assert table.exit_code == 0, table.output
    assert "Entries that flipped" in table.stdout
    assert case["lookups"][3] in table.stdout and "abstained" in table.stdout

    fail = runner.invoke(
        app,
        ["gate", g, str(case["good"]), str(case["five"]), "--metric", "answer_correct",
         "--max-drop", "0.02", *common[:2], "--resamples", "200", "--no-record", "-f", "json",
         "--max-abstain", "1"],
    )  # fmt: skip
    assert fail.exit_code == 1, fail.output
    assert json.loads(fail.stdout)["failed_categories"] == ["numeric_lookup"]
    both = runner.invoke(
        app,
        ["gate", g, str(case["good"]), str(case["five"]), "--metrics", "complete@5,answer_correct",
         *common[:2], "--resamples", "200", "--no-record", "-f", "json"],
    )  # fmt: skip
    assert both.exit_code == 1, both.output
    out = json.loads(both.stdout)
    assert out["metrics"] == ["complete@5", "answer_correct"]
    assert set(out["comparison"]["metrics"]) == {"complete@5", "answer_correct"}

    board = runner.invoke(
        app,
        ["compare", g, b, c, str(case["five"]), "--metrics", "answer_correct", *common,
         "-f", "json"],
    )  # fmt: skip
    assert board.exit_code == 0, board.output
    lb = json.loads(board.stdout)
    assert lb["metrics"] == ["answer_correct"] and len(lb["leaderboard"]) == 2
    assert lb["holm"]["size"] == sum(
        1
        for cmp in lb["comparisons"].values()
        for row in [*cmp["categories"].values(), cmp["overall"]]
        if row["metrics"]["answer_correct"]["p"] is not None
    )

    bad = runner.invoke(app, ["compare", g, b, c, "--metrics", "answer_corect", *common])
    assert bad.exit_code == 2 and "unknown metric or check 'answer_corect'" in bad.output
    assert "Traceback" not in bad.output
    nofield = runner.invoke(app, ["compare", g, b, c, "--by", "colour", *common])
    assert nofield.exit_code == 2 and "no entry has metadata.colour" in nofield.output


def test_nan_means_abstained_in_compare_arrays() -> None:
    ids = ["a", "b", "c", "d"]
    b = np.array([1.0, 0.0, math.nan, 1.0])
    c = np.array([0.0, 0.0, 1.0, math.nan])
    cmp = compare_arrays(ids, ["x"] * 4, {"answer_correct": b}, {"answer_correct": c})
    mc = cmp.overall.metrics["answer_correct"]
    assert mc.n == 2 and mc.abstained == ("c", "d") and mc.broken == ("a",)
    assert "2 abstained" in cmp.to_markdown()


def test_score_rows_by_source_and_by_a_metadata_field(case: dict[str, Any]) -> None:
    from assay.score import score_retrieval

    rows = [json.loads(x) for x in case["golden"].read_text().splitlines()]
    ds = load_dataset(case["golden"])
    (cand,) = _load(case, "cand")
    chunks = load_chunks(case["chunks"])
    by_source = score_retrieval(ds, cand, chunks=chunks, by="source")
    assert set(by_source.categories) == {"synthetic"} and by_source.by == "source"
    by_company = score_retrieval(ds, cand, chunks=chunks, by="metadata.company")
    companies = {r["metadata"]["company"] for r in rows if r.get("answerable", True) is not False}
    assert set(by_company.categories) >= companies
    assert by_company.overall is not None and by_source.overall is not None
    assert by_company.overall.values == by_source.overall.values
    with pytest.raises(DataError, match=r"golden\.jsonl: metadata\.colour: no entry has"):
        score_retrieval(ds, cand, chunks=chunks, by="metadata.colour")


def test_a_comparison_of_checks_is_recorded_in_the_ledger_once(
    case: dict[str, Any], tmp_path: Path
) -> None:
    import shutil

    from assay.compare import compare_files
    from assay.compare.ledger import read_ledger

    golden = tmp_path / "golden.jsonl"  # its own ledger, beside a copy of the dataset
    shutil.copy(case["golden"], golden)
    args = (golden, case["base"], case["cand"])
    kw: dict[str, Any] = {"n_resamples": 200, "cluster": "none"}  # the entry-level tests
    first = compare_files(*args, metrics=["answer_correct,key_fact_recall"], **kw)
    again = compare_files(*args, metrics=["answer_correct,key_fact_recall"], **kw)
    records = read_ledger(golden)
    assert len(records) == 1 and first.ledger_t == again.ledger_t == 1 and again.ledger_repeat
    rec = records[0]
    assert rec["metrics"] == ["answer_correct", "key_fact_recall"]
    ran = {t for row in first.rows for mc in row.metrics.values() for t in mc.tests}
    assert rec["tests"] == sorted(ran)
    assert {"mcnemar_exact", "wilcoxon", "sign_flip", "score"} <= ran
    assert rec["pvalues"]["overall"]["answer_correct"]["mcnemar_exact"] == pytest.approx(
        first.overall.metrics["answer_correct"].p
    )


def test_judge_verdicts_are_a_binary_series() -> None:
    from assay.compare import series_from_judged
    from assay.judge.judged import JudgedAnswer, JudgedAnswers

    def judged(verdicts: dict[str, bool | None]) -> JudgedAnswers:
        rows = tuple(JudgedAnswer(i, "c", {"supported": v}) for i, v in verdicts.items())
        return JudgedAnswers("j.jsonl", "h", ("supported",), rows)

    base = series_from_judged(judged({"a": True, "b": True, "c": None, "d": False}), "supported")
    cand = series_from_judged(judged({"a": False, "b": True, "c": True, "d": True}), "supported")
    assert base.name == "judge:supported" and base.kind == "binary" and base.abstained == ("c",)
    assert describe("judge:supported").source == "judge"
    cmp = compare_arrays(["a", "b", "c", "d"], ["c"] * 4, {base.name: base}, {base.name: cand})
    mc = cmp.overall.metrics["judge:supported"]
    assert mc.fixed == ("d",) and mc.broken == ("a",) and mc.abstained == ("c",)
    with pytest.raises(SeriesError, match="was not asked 'correct'"):
        series_from_judged(judged({"a": True}), "correct")


def test_the_explorer_bundle_compares_any_series(case: dict[str, Any]) -> None:
    from assay.explorer import export_bundle

    bundle = export_bundle(
        case["golden"], [case["base"], case["cand"]], chunks=case["chunks"],
        metrics=["complete@5,answer_correct"], n_resamples=200, n_permutations=200,
    )  # fmt: skip
    (cmp,) = bundle.data["comparisons"].values()
    assert cmp["metrics"] == ["complete@5", "answer_correct"]
    ac = cmp["overall"]["metrics"]["answer_correct"]
    assert ac["broken"] == 7 and ac["fixed"] == 3 and ac["abstained"] > 0


def test_the_metric_series_of_a_run_share_one_tuple_of_ids(case: dict[str, Any]) -> None:
    # a run's metric series are aligned on the same entries: their ids are held once, as given
    ds = load_dataset(case["golden"])
    (base,) = _load(case, "base")
    rs = series_for(ds, base, "complete@5,recall@5,mrr", chunks=load_chunks(case["chunks"]))
    first, *more = (rs[n] for n in ("complete@5", "recall@5", "mrr"))
    assert all(s.ids is first.ids for s in more)
    given = ("a", "b")
    assert Series("x", "binary", given, np.array([0.0, 1.0])).ids is given
    assert Series("x", "binary", ["a", "b"], np.array([0.0, 1.0])).ids == given  # type: ignore[arg-type]
