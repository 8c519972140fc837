from __future__ import annotations

import json
from pathlib import Path

import typer.testing

import assay.cli
import assay.cli.filings_cmds

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
         "--encoder", "hashing", "--format", "json", "--out", str(out)],
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


def test_ladder_leaves_out_questions_whose_filing_the_corpus_lacks(corpus_dir: Path) -> None:
    """A FinanceBench question citing a filing that is not in the corpus is a stale label: the
    page level leaves it out and says so, instead of scoring it as a miss of every rung."""
    from assay.dataset.io import Dataset
    from assay.dataset.schema import Entry
    from assay.systems.filings.ablation import run_ablation
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
