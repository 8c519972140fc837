from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import assay.cli
import assay.cli.bench_cmds  # registers the commands
from assay.benchmarks.financebench import (
    financebench_judge,
    load_graded,
    load_questions,
    split_halves,
)
from assay.errors import DataError

# the FinanceBench dev split, in a `shared/financebench` folder beside the checkout (or above it)
REAL = next(
    (p / "shared" / "financebench" for p in Path(__file__).resolve().parents
     if (p / "shared" / "financebench").is_dir()),
    Path("shared") / "financebench",
)  # fmt: skip

QUESTIONS = [
    {"financebench_id": f"q{i}", "question_type": t, "question": q, "answer": a}
    for i, (t, q, a) in enumerate(
        [
            ("metrics-generated", "What is FY2018 capex (in USD millions)?", "$1577.00"),
            ("metrics-generated", "What is the FY2019 asset turnover ratio?", "1.33"),
            (
                "metrics-generated",
                "What is the YoY revenue change (in units of percents)?",
                "30.8%",
            ),
            ("domain-relevant", "Has Acme paid dividends in FY2022?", "Yes, $0.55 per share."),
        ]
    )
]
ANSWERS = [
    ("q0", "Capex was $1,577 million.", "Correct Answer"),
    ("q0", "Capex was $1,577 billion.", "Incorrect Answer"),
    ("q0", "I'm sorry, but the context does not contain the cash flow statement.", "Refusal"),
    ("q1", "The ratio is 65,398 / 49,119 = 1.33.", "Correct Answer"),
    ("q1", "Asset turnover ratio = 0.14.", "Incorrect Answer"),
    ("q2", "Revenue grew 30.8%.", "Correct Answer"),
    ("q2", "Revenue grew 31.0%.", "Incorrect Answer"),
    ("q3", "Yes, it paid $0.55 per share each quarter.", "Correct Answer"),
    ("q3", "As an AI, I don't have access to that data.", "Refusal"),
]


def write(tmp: Path) -> tuple[Path, Path]:
    qp, gp = tmp / "questions.jsonl", tmp / "graded.jsonl"
    qp.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    gp.write_text(
        "".join(
            json.dumps(
                {
                    "financebench_id": i,
                    "model_name": "m",
                    "eval_mode": "e",
                    "model_answer": a,
                    "label": lab,
                }
            )
            + "\n"
            for i, a, lab in ANSWERS
        )
    )
    return gp, qp


def test_bench_on_a_small_graded_set(tmp_path: Path) -> None:
    gp, qp = write(tmp_path)
    rep = financebench_judge(gp, qp, rng=np.random.default_rng(0), n_boot=200)
    num = rep.row("numeric_correct", "metrics-generated")
    assert (num.n, num.abstained, num.human_pos) == (7, 0, 3)
    assert num.tpr.value == 1.0 and num.tnr.value == 1.0 and num.kappa.value == 1.0
    assert rep.row("numeric_correct", "domain-relevant").abstained == 2  # yes/no question
    ref = rep.row("refusal")
    assert (ref.n, ref.human_pos, ref.tpr.value, ref.tnr.value) == (9, 2, 1.0, 1.0)
    reasons = {(j.graded.answer, j.numeric.reason) for j in rep.judged}
    assert ("Capex was $1,577 billion.", "scale_error") in reasons
    assert rep.meta["graded"]["n"] == 9 and len(rep.meta["graded"]["sha256"]) == 64


def test_rows_match_sklearn_on_random_human_grades(tmp_path: Path) -> None:
    from sklearn.metrics import cohen_kappa_score, confusion_matrix  # the oracle (seconds)

    gp, qp = write(tmp_path)
    rng = np.random.default_rng(11)
    labels = ["Correct Answer", "Incorrect Answer", "Refusal"]
    rows = [json.loads(x) for x in gp.read_text().splitlines() for _ in range(6)]
    for r in rows:
        r["label"] = labels[int(rng.integers(0, 3))]
    gp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rep = financebench_judge(gp, qp, rng=np.random.default_rng(0), n_boot=200)
    for check in ("numeric_correct", "refusal"):
        h, j = [], []
        for x in rep.judged:
            v = x.numeric.value if check == "numeric_correct" else x.refusal.refused
            if v is None:
                continue
            want = "correct" if check == "numeric_correct" else "refusal"
            h.append(x.graded.label == want)
            j.append(v)
        row = rep.row(check)
        tn, fp, fn, tp = confusion_matrix(h, j, labels=[False, True]).ravel()
        assert row.n == len(h) and row.human_pos == tp + fn
        assert row.tpr.value == pytest.approx(tp / (tp + fn), abs=1e-12)
        assert row.tnr.value == pytest.approx(tn / (tn + fp), abs=1e-12)
        assert row.kappa.value == pytest.approx(cohen_kappa_score(h, j), abs=1e-9)
        assert row.tpr.low is not None and row.tpr.low <= row.tpr.value <= row.tpr.high


def test_tpr_and_tnr_carry_wilson_intervals_that_match_statsmodels(tmp_path: Path) -> None:
    from statsmodels.stats.proportion import proportion_confint

    gp, qp = write(tmp_path)
    rep = financebench_judge(gp, qp, rng=np.random.default_rng(0), n_boot=200)
    checked = 0
    for row in rep.rows:
        for e, n in ((row.tpr, row.human_pos), (row.tnr, row.human_neg)):
            if n == 0:
                assert e.value is None
                continue
            k = round(e.value * n)
            low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
            assert (e.low, e.high) == (
                pytest.approx(low, abs=1e-12),
                pytest.approx(high, abs=1e-12),
            )
            checked += 1
    assert checked > 10
    # every human-correct answer passed: the bootstrap would read [1.00, 1.00]; Wilson does not
    num = rep.row("numeric_correct", "metrics-generated")
    assert num.tpr.value == 1.0 and num.tpr.high == 1.0 and num.tpr.low is not None
    assert num.tpr.low < 0.6


def test_split_is_stratified_deterministic_and_independent_of_order() -> None:
    qs = {f"id{i}": {"question_type": "ab"[i % 2]} for i in range(40)}
    s1 = split_halves(qs)
    s2 = split_halves(dict(reversed(list(qs.items()))))
    assert s1 == s2
    for t in "ab":
        halves = [s1[k] for k, v in qs.items() if v["question_type"] == t]
        assert halves.count("A") == halves.count("B") == 10


def test_bad_input_names_file_line_and_field(tmp_path: Path) -> None:
    _, qp = write(tmp_path)
    questions = load_questions(qp)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"financebench_id": "q0", "model_answer": "x", "label": "Maybe"})
        + "\n"
        + json.dumps({"financebench_id": "zz", "model_answer": "x", "label": "Refusal"})
        + "\n"
        + json.dumps({"financebench_id": "q0", "label": "Refusal"})
        + "\n"
    )
    with pytest.raises(DataError) as exc:
        load_graded(bad, questions)
    probs = {(p.line, p.field) for p in exc.value.problems}
    assert probs == {(1, "label"), (2, "financebench_id"), (3, "model_answer")}


def test_cli_json_and_no_partial_output(tmp_path: Path) -> None:
    gp, qp = write(tmp_path)
    out = tmp_path / "judged.jsonl"
    runner = CliRunner()
    res = runner.invoke(
        assay.cli.app,
        [
            "bench",
            "financebench-judge",
            str(gp),
            "--questions",
            str(qp),
            "--format",
            "json",
            "--n-boot",
            "100",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    keys = {(r["check"], r["question_type"], r["half"]) for r in data["rows"]}
    assert ("numeric_correct", "overall", "all") in keys and ("refusal", "overall", "B") in keys
    row = next(
        r
        for r in data["rows"]
        if r["check"] == "refusal" and r["half"] == "all" and r["question_type"] == "overall"
    )
    assert {"n", "tpr", "tnr", "kappa", "abstained", "tpr_ci"} <= set(row)
    assert len(out.read_text().splitlines()) == len(ANSWERS)
    missing = tmp_path / "nope.jsonl"
    out2 = tmp_path / "judged2.jsonl"
    res = runner.invoke(
        assay.cli.app,
        ["bench", "financebench-judge", str(missing), "--questions", str(qp), "--out", str(out2)],
    )
    assert res.exit_code == 2 and not out2.exists()


@pytest.mark.skipif(not (REAL / "graded_answers_dev.jsonl").exists(), reason="no FinanceBench")
def test_real_financebench_numeric_calibration_holds() -> None:
    rep = financebench_judge(
        REAL / "graded_answers_dev.jsonl",
        REAL / "questions_dev.jsonl",
        rng=np.random.default_rng(0),
        n_boot=50,
    )
    for half in ("A", "B"):
        row = rep.row("numeric_correct", "metrics-generated", half)
        assert row.abstained == 0
        # the goal: TPR >= 0.95 at TNR >= 0.95 on metrics-generated answers, on either half
        assert row.tpr.value is not None and row.tpr.value >= 0.95
        assert row.tnr.value is not None and row.tnr.value >= 0.95
        assert row.tpr.method == "wilson" and row.tpr.low is not None and row.tpr.low < 1.0
    assert rep.row("refusal").kappa.value is not None and rep.row("refusal").kappa.value > 0.85


def test_judge_bench_is_a_report(tmp_path: Path) -> None:
    from assay.report import Report, render

    gp, qp = write(tmp_path)
    rep = financebench_judge(gp, qp, rng=np.random.default_rng(0), n_boot=200)
    assert isinstance(rep, Report)
    data = json.loads(render(rep, "json"))
    row = next(r for r in data["rows"] if (r["check"], r["half"]) == ("refusal", "all")
               and r["question_type"] == "overall")  # fmt: skip
    want = rep.row("refusal").tpr
    assert row["tpr"] == want.value  # full precision, not rounded
    assert row["tpr_ci"] == {"value": want.value, "low": want.low, "high": want.high,
                             "level": 0.95, "method": "wilson", "note": want.note}  # fmt: skip
    assert row["kappa_ci"]["method"] == "percentile bootstrap over answers"
    undefined = next(r for r in data["rows"] if r["n"] == 0)  # half A of domain-relevant: none
    assert undefined["tpr"] is None and undefined["tpr_ci"]["note"]
    md = render(rep, "markdown")
    assert md.startswith("| check | question type | half | n | abstained |")
    assert "| refusal | overall | all | 9 |" in md
    table = render(rep, "table")
    assert "FinanceBench: deterministic checks vs human grades" in table
    assert "half B" in table  # the split note


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_cli_formats(tmp_path: Path, fmt: str) -> None:
    gp, qp = write(tmp_path)
    res = CliRunner().invoke(
        assay.cli.app,
        [
            "bench",
            "financebench-judge",
            str(gp),
            "--questions",
            str(qp),
            "-f",
            fmt,
            "--n-boot",
            "50",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "numeric_correct" in res.stdout and "refusal" in res.stdout
