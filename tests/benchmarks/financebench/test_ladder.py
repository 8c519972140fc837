from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import typer.testing
from scipy.stats import binomtest

import assay.cli
import assay.cli.bench_cmds  # registers the commands
from assay.benchmarks.financebench import (
    METRICS,
    AblationResult,
    default_rungs,
    metric_names,
    run_ablation,
)
from assay.dataset import load_dataset
from assay.report import Report, render
from assay.systems.filings.system import RetrievalConfig

# the FinanceBench dev split, in a `shared/financebench` folder beside the checkout (or above it)
FB = next(
    (p / "shared" / "financebench" for p in Path(__file__).resolve().parents
     if (p / "shared" / "financebench").is_dir()),
    Path("shared") / "financebench",
)  # fmt: skip

ENTRIES = [
    {"id": "q1", "query": "What were Acme net sales in 2023?", "category": "metrics", "as_of": "2024-03-01",
     "evidence_paths": [[["acme-2023-10k/1/0"]]]},
    {"id": "q2", "query": "Microsoft revenue fiscal 2023", "category": "metrics",
     "evidence_paths": [[[{"doc": "msft-2023-10k", "page": 2, "quote": "Total revenue 211,915 198,270"}]]]},
    {"id": "q3", "query": "Who are Acme's directors?", "category": "governance", "as_of": "2024-05-01",
     "evidence_paths": [[["acme-2023-10ka-p3/1/0"]]]},
]  # fmt: skip


def test_bench_financebench_retrieval_cli(corpus_dir: Path, tmp_path: Path) -> None:
    ds = tmp_path / "ds.jsonl"
    ds.write_text("".join(json.dumps(e) + "\n" for e in ENTRIES), encoding="utf-8")
    out = tmp_path / "ablation.json"
    result = typer.testing.CliRunner().invoke(
        assay.cli.app,
        ["bench", "financebench-retrieval", "--corpus", str(corpus_dir), "--questions", str(ds),
         "--encoder", "hashing", "--format", "json", "--out", str(out), "--no-halves"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    rungs = {r["rung"] for r in data["rows"]}
    assert rungs == {
        "bm25",
        "dense",
        "hybrid",
        "hybrid + filters",
        "+ query",
        "+ reranker",
        "bm25 + filters + query",
        "true hybrid + filters + query",
        "true hybrid + reranker",
        "+ facts",
        "facts only",
        "+ concepts",
        "+ concepts + cover",
        "true hybrid + concepts + cover",
    }
    full = [
        r
        for r in data["rows"]
        if r["rung"] == "+ reranker" and r["level"] == "page" and r["category"] == "overall"
    ]
    assert full[0]["complete@5"] == 1.0 and full[0]["n"] == 3
    assert "per_entry" in json.loads(out.read_text())


def test_bad_level_is_a_usage_error(corpus_dir: Path, tmp_path: Path) -> None:
    ds = tmp_path / "ds.jsonl"
    ds.write_text(json.dumps(ENTRIES[0]) + "\n", encoding="utf-8")
    result = typer.testing.CliRunner().invoke(
        assay.cli.app,
        [
            "bench",
            "financebench-retrieval",
            "--corpus",
            str(corpus_dir),
            "--questions",
            str(ds),
            "--level",
            "doc",
        ],
    )
    assert result.exit_code == 2


# ------------------------------------------------------------------ the ladder as a report

EXTRA = [
    {"id": "q4", "query": "Microsoft total revenue fiscal 2024 income statement", "category": "metrics",
     "as_of": "2024-08-01", "evidence_paths": [[["msft-2024-10k/2/0"]]]},
    {"id": "q5", "query": "Acme restated net income 2023", "category": "metrics", "as_of": "2024-10-01",
     "evidence_paths": [[["acme-2023-10ka-r/1/0"]]]},
    {"id": "q6", "query": "Microsoft third quarter revenue", "category": "metrics", "as_of": "2024-05-01",
     "evidence_paths": [[["msft-2024q3-10q/1/0"]]]},
    {"id": "q7", "query": "Microsoft operating income fiscal 2023", "category": "metrics",
     "as_of": "2023-08-01", "evidence_paths": [[["msft-2023-10k/2/0"]]]},
    {"id": "q8", "query": "Acme corporate governance directors", "category": "governance",
     "as_of": "2024-03-01", "evidence_paths": [[["acme-2023-10k/2/0"]]]},
]  # fmt: skip


def _tiny_result(corpus_dir: Path, tmp_path: Path, **kw: Any) -> AblationResult:
    from assay.systems.filings.dense import HashingEncoder

    ds = tmp_path / "ds8.jsonl"
    ds.write_text("".join(json.dumps(e) + "\n" for e in ENTRIES + EXTRA), encoding="utf-8")
    kw = {"k": 1, "encoder": HashingEncoder(), "n_resamples": 200} | kw
    return run_ablation(load_dataset(ds), corpus_dir, **kw)


def _check_flips_against_scipy(result: AblationResult) -> int:
    """fixed/broken from the per-entry outcomes, p from scipy's exact binomial test."""
    checked = 0
    for r in result.rows:
        if r.rung == result.baseline or r.category != "overall":
            continue
        base = result.per_entry[f"{result.baseline}|{r.level}"]
        cand = result.per_entry[f"{r.rung}|{r.level}"]
        fixed = sum(1 for i in base if base[i]["complete"] < cand[i]["complete"])
        broken = sum(1 for i in base if base[i]["complete"] > cand[i]["complete"])
        assert (r.fixed, r.broken) == (fixed, broken), (r.rung, r.level)
        want = 1.0 if fixed + broken == 0 else binomtest(fixed, fixed + broken, 0.5).pvalue
        assert r.p_mcnemar == pytest.approx(want, abs=1e-12), (r.rung, r.level)
        mc = result.comparisons[f"{r.rung}|{r.level}"].overall.metrics[f"complete@{result.k}"]
        assert (len(mc.fixed), len(mc.broken), mc.p) == (r.fixed, r.broken, r.p_mcnemar)
        checked += 1
    return checked


def test_metric_names_are_one_constant() -> None:
    assert metric_names(5) == {"recall": "recall@5", "complete": "complete@5", "mrr": "mrr"}
    assert set(METRICS) == {"recall", "complete", "mrr"}


def test_ladder_flips_come_from_compare(corpus_dir: Path, tmp_path: Path) -> None:
    result = _tiny_result(corpus_dir, tmp_path)
    assert _check_flips_against_scipy(result) == 26  # 13 rungs x 2 levels
    assert result.row("+ query", "page").fixed == 1  # q6 needs the period filter at k=1
    base = result.row("bm25", "page")
    assert (base.fixed, base.broken, base.p_mcnemar) == (0, 0, None)
    assert "bm25|page" not in result.comparisons


def test_ladder_is_a_report(corpus_dir: Path, tmp_path: Path) -> None:
    result = _tiny_result(corpus_dir, tmp_path, rungs=default_rungs()[:2], levels=("page",))
    assert isinstance(result, Report)
    data = json.loads(render(result, "json"))
    row = data["rows"][0]
    assert set(row["complete_ci"]) == {"value", "low", "high", "level", "method", "note"}
    assert row["complete_ci"]["value"] == row["complete@1"] == 0.875  # full precision
    assert row["complete_ci"]["method"] == "percentile bootstrap"
    md = render(result, "markdown")
    assert md.startswith("| level | rung | category | n | recall@1 | complete@1 (95% CI) |")
    assert "| page | dense | **overall** | 8 |" in md
    table = render(result, "table")
    assert "retrieval ablation @ 1" in table and "dense" in table
    overall = result.overall_only()
    assert [r.category for r in overall.rows] == ["overall", "overall"]
    assert len(result.rows) == 6  # the original is untouched


def test_cli_markdown_and_overall_only(corpus_dir: Path, tmp_path: Path) -> None:
    ds = tmp_path / "ds.jsonl"
    ds.write_text("".join(json.dumps(e) + "\n" for e in ENTRIES), encoding="utf-8")
    args = ["bench", "financebench-retrieval", "--corpus", str(corpus_dir), "--questions", str(ds),
            "--encoder", "hashing", "--rung", "dense", "--level", "page", "--no-halves"]  # fmt: skip
    runner = typer.testing.CliRunner()
    res = runner.invoke(assay.cli.app, [*args, "-f", "markdown", "--overall-only"])
    assert res.exit_code == 0, res.output
    assert "| page | dense | **overall** | 3 |" in res.stdout
    assert "governance" not in res.stdout
    res = runner.invoke(assay.cli.app, [*args, "-f", "table"])
    assert res.exit_code == 0, res.output
    assert "governance" in res.stdout


# Figures of the ladder before it moved here (assay.systems.filings.ablation at 8dc0ebf) on six
# FinanceBench filings and the 75 dev questions, BM25 rungs, 500 resamples: the move and the
# switch to assay.score / assay.compare must not change them.
SIX = (
    "AMCOR_2023Q4_EARNINGS", "FOOTLOCKER_2022_8K_dated_2022-08-19", "ULTABEAUTY_2023Q4_EARNINGS",
    "MGMRESORTS_2022Q4_EARNINGS", "JOHNSON_JOHNSON_2023_8K_dated-2023-08-30", "AMCOR_2023Q2_10Q",
)  # fmt: skip
BEFORE = {
    # (rung, level): (n, recall@5, complete@5, low, high, mrr, fixed, broken, p)
    ("bm25", "page"): (75, 0.08888888888888889, 0.08, 0.02666666666666667, 0.14666666666666667,
                       0.043111111111111114, 0, 0, None),
    ("bm25 + filters + query", "page"): (75, 0.10222222222222221, 0.09333333333333334, 0.04, 0.16,
                                         0.05377777777777778, 2, 1, 1.0),
    ("bm25", "chunk"): (7, 0.5238095238095238, 0.42857142857142855, 0.14285714285714285,
                        0.7142857142857143, 0.17619047619047618, 0, 0, None),
    ("bm25 + filters + query", "chunk"): (7, 0.8095238095238095, 0.7142857142857143,
                                          0.42857142857142855, 1.0, 0.3619047619047619, 2, 0, 0.5),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.skipif(
    not all((FB / "pdfs" / f"{d}.pdf").exists() for d in SIX), reason="FinanceBench not present"
)
def test_real_filings_figures_unchanged(tmp_path: Path) -> None:
    from assay.benchmarks.financebench import questions_dataset
    from assay.corpus import build_corpus

    src = tmp_path / "pdfs"
    src.mkdir()
    for d in SIX:
        (src / f"{d}.pdf").symlink_to(FB / "pdfs" / f"{d}.pdf")
    assert build_corpus(
        src, meta=FB / "documents.jsonl", out_dir=tmp_path / "c", workers=1, follow_symlinks=True
    ).ok
    ds = questions_dataset(FB / "questions_dev.jsonl", tmp_path / "c")
    rungs = [r for r in default_rungs() if r[0] in ("bm25", "bm25 + filters + query")]
    result = run_ablation(ds, tmp_path / "c", rungs=rungs, n_resamples=500)
    # Page level now leaves out the questions whose filing is not among the six (stale labels,
    # issue 11); before, they were scored as misses of every rung. Every one of them scored 0, so
    # the sums over the questions that remain are unchanged: each mean is the old sum over the
    # new n, and the flips are the same. The interval is recomputed on the smaller sample.
    assert len(result.page_stale) == 65
    for (rung, level), want in BEFORE.items():
        r = result.row(rung, level)
        n, recall, complete, low, high, mrr, fixed, broken, p = want
        if level == "page":
            scale = n / (n - len(result.page_stale))
            n -= len(result.page_stale)
            recall, complete, mrr = recall * scale, complete * scale, mrr * scale
            assert r.complete_low <= r.complete <= r.complete_high, (rung, level)
            low, high = r.complete_low, r.complete_high
        assert (r.n, r.fixed, r.broken, r.p_mcnemar) == (n, fixed, broken, p), (rung, level)
        got = [r.recall, r.complete, r.complete_low, r.complete_high, r.mrr]
        # the means come from assay.score's per-category aggregates: equal up to summation order
        want_f = [recall, complete, low, high, mrr]
        assert got == pytest.approx(want_f, rel=1e-12, abs=1e-15), (rung, level)
    assert len(result.unaligned) == 68
    assert _check_flips_against_scipy(result) == 2


def test_ladder_leaves_out_questions_whose_filing_the_corpus_lacks(corpus_dir: Path) -> None:
    """A FinanceBench question citing a filing that is not in the corpus is a stale label: the
    page level leaves it out and says so, instead of scoring it as a miss of every rung."""
    from assay.dataset import Dataset, Entry
    from assay.systems.filings.dense import HashingEncoder
    from assay.systems.filings.system import RetrievalConfig

    absent = {"id": "q4", "query": "AES revenue 2022", "category": "metrics",
              "evidence_paths": [[[{"doc": "AES_2022_10K", "page": 3, "quote": "revenue"}]]]}  # fmt: skip
    ds = Dataset([Entry.model_validate(e) for e in [*ENTRIES, absent]])
    res = run_ablation(
        ds, corpus_dir, rungs=[("bm25", RetrievalConfig())], encoder=HashingEncoder(),
        n_resamples=200,
    )  # fmt: skip
    overall = {r.level: r for r in res.rows if r.category == "overall"}
    assert overall["page"].n == 3 and res.page_stale == ["q4"]
    assert "q4" in res.unaligned and res.to_dict()["page_level_excluded"] == ["q4"]
    assert "page level leaves out 1 entries whose gold is stale" in res.to_markdown()


# ------------------------------------------------------------------ halves, reference, facts


def test_halves_reference_and_facts_exact(corpus_dir: Path, tmp_path: Path) -> None:
    from assay.corpus import extract_facts
    from assay.dataset import Dataset, Entry
    from assay.systems.filings.dense import HashingEncoder

    # the facts table of the tiny corpus (corpus build writes it for real corpora)
    docs = {
        json.loads(x)["doc_id"]: json.loads(x)
        for x in (corpus_dir / "documents.jsonl").read_text().splitlines()
    }
    rows = []
    for line in (corpus_dir / "chunks.jsonl").read_text().splitlines():
        c = json.loads(line)
        d = docs[c["doc_id"]]
        rows.append({**c, "pages": [c["page"]], "company": d["company"],
                     "fiscal_year": d["fiscal_year"], "fiscal_quarter": d["fiscal_quarter"]})  # fmt: skip
    (corpus_dir / "facts.jsonl").write_text(
        "".join(json.dumps(f.to_dict()) + "\n" for f in extract_facts(rows)), encoding="utf-8"
    )
    metric = [
        {**e, "category": "metrics-generated", "reference_answer": ans}
        for e, ans in ((EXTRA[0], "$245,122 million"), (EXTRA[3], "$90,000 million"))
    ]  # a right figure and a wrong reference
    ds = Dataset([Entry.model_validate(e) for e in [*ENTRIES, *EXTRA[1:3], *EXTRA[4:], *metric]])
    halves = {e.id: ("A" if i % 2 == 0 else "B") for i, e in enumerate(ds.entries)}
    names = ("bm25", "+ reranker", "true hybrid + filters + query", "+ facts", "facts only")
    rungs = [r for r in default_rungs() if r[0] in names]
    res = run_ablation(
        ds, corpus_dir, k=1, levels=("page",), rungs=rungs, encoder=HashingEncoder(),
        n_resamples=200, halves=halves, cache_dir=tmp_path,
    )  # fmt: skip
    assert {r.half for r in res.rows} == {"A", "B"}
    for rung in names:
        a, b = res.row(rung, half="A"), res.row(rung, half="B")
        assert a.n + b.n == len(ds.entries)
    # flips against the reference rung come from the per-entry outcomes of that half
    for rung in names[2:]:
        for half in "AB":
            r = res.row(rung, half=half)
            ids = [e.id for e in ds.entries if halves[e.id] == half]
            ref = res.per_entry["+ reranker|page"]
            cand = res.per_entry[f"{rung}|page"]
            fixed = sum(1 for i in ids if ref[i]["complete"] < cand[i]["complete"])
            broken = sum(1 for i in ids if ref[i]["complete"] > cand[i]["complete"])
            assert (r.fixed_ref, r.broken_ref) == (fixed, broken)
            cmp = res.comparisons[f"{rung}|page|{half}|vs + reranker"]
            assert len(cmp.overall.metrics["complete@1"].fixed) == fixed
    assert res.row("+ reranker", half="A").fixed_ref is None
    # one metrics question answered exactly by its fact, the other not
    assert sum(v["n"] for v in res.facts_exact.values()) == 2
    assert sum(v["exact"] for v in res.facts_exact.values()) == 1
    md = res.to_markdown()
    assert "| level | half | rung |" in md and "fixed / broken vs + reranker" in md
    assert "half B: unseen" in md and "answered exactly" in md
    data = res.to_dict()
    assert data["reference"] == "+ reranker" and data["rows"][0]["half"] in ("A", "B")
    assert "vs + reranker" in render(res, "table")


def test_concept_rungs_build_on_the_previous_full_mode() -> None:
    rungs = dict(default_rungs())
    ref = rungs["+ reranker"]
    assert rungs["+ concepts"] == replace(ref, concepts=True)
    assert rungs["+ concepts + cover"] == replace(ref, concepts=True, statement_cover=True)
    # the new full mode is that rung (at the ladder's pool depth)
    assert rungs["+ concepts + cover"] == replace(RetrievalConfig.for_mode("full"), pool=20)
    assert rungs["true hybrid + concepts + cover"] == replace(
        rungs["true hybrid + reranker"], concepts=True, statement_cover=True
    )
