from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.audit import audit_seasonal, load_corpus_documents, time_words
from assay.cli import app
from assay.dataset import load_dataset
from tests.audit.conftest import write_jsonl

runner = CliRunner()

ANCHOR = {"doc": "acme-2023-10k", "page": 3, "quote": "Total revenue was $1,234 million"}


def _golden(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "golden.jsonl",
        [
            # planted stale entry: labelled before the amendment and the next 10-K arrived
            {
                "id": "stale",
                "query": "ACME revenue FY23",
                "category": "numeric",
                "evidence_paths": [[[ANCHOR]]],
                "added": "2024-03-01",
            },
            # relative time in the query, evidence current
            {
                "id": "latest",
                "query": "Latest total revenue for ACME?",
                "category": "temporal",
                "evidence_paths": [[["acme-2024-10k/3/1"]]],
                "added": "2025-03-01",
            },
            # labelled after everything arrived: nothing new
            {
                "id": "fresh",
                "query": "ACME revenue FY23",
                "category": "numeric",
                "evidence_paths": [[["acme-2023-10k/3/1"]]],
                "added": "2025-03-01",
            },
            # another company's newer filing is no news to it; "current assets" is not time
            {
                "id": "beta",
                "query": "BETA current assets FY24",
                "category": "numeric",
                "evidence_paths": [[["beta-2024-10k/2/1"]]],
                "as_of": "2025-03-01",
            },
        ],
    )


def test_time_words() -> None:
    assert time_words("Most recent quarter revenue, and the latest EPS") == [
        "most recent",
        "latest",
    ]
    assert time_words("revenue this fiscal year vs last quarter") == [
        "this fiscal year",
        "last quarter",
    ]
    assert time_words("total current assets FY24") == []
    assert time_words("current CET1 ratio") == ["current"]
    assert time_words("YTD net income") == ["ytd"]


def test_planted_stale_entry_is_found_with_the_filings_that_arrived(
    tmp_path: Path, corpus: Path
) -> None:
    ds = load_dataset(_golden(tmp_path))
    docs, chunk_docs = load_corpus_documents(corpus)
    rep = audit_seasonal(ds, docs, chunk_docs=chunk_docs)
    flagged = {f.id: f for f in rep.flagged}
    assert set(flagged) == {"stale", "latest"}
    stale = flagged["stale"]
    assert [(a.doc_id, a.kind) for a in stale.arrivals] == [
        ("acme-2023-10ka", "amendment"),
        ("acme-2024-10k", "newer period"),
    ]
    assert stale.time_words == [] and stale.line == 1
    assert flagged["latest"].time_words == ["latest"] and flagged["latest"].arrivals == []
    d = rep.to_dict()
    assert d["n_flagged"] == 2 and d["n_newer_filings"] == 1 and d["n_time_words"] == 1
    # the 10-Q is another form type: never an arrival for a 10-K's entry
    assert all(a.doc_id != "acme-2024-q1-10q" for f in rep.flagged for a in f.arrivals)


def test_since_keeps_only_this_seasons_filings(tmp_path: Path, corpus: Path) -> None:
    ds = load_dataset(_golden(tmp_path))
    docs, chunk_docs = load_corpus_documents(corpus)
    rep = audit_seasonal(ds, docs, since=dt.date(2025, 1, 1), chunk_docs=chunk_docs)
    stale = next(f for f in rep.flagged if f.id == "stale")
    assert [a.doc_id for a in stale.arrivals] == ["acme-2024-10k"]


def test_unknown_evidence_documents_are_listed(tmp_path: Path, corpus: Path) -> None:
    g = write_jsonl(
        tmp_path / "g.jsonl",
        [{"id": "x", "query": "q", "category": "c", "evidence_paths": [[["nodoc/1/1"]]]}],
    )
    docs, chunk_docs = load_corpus_documents(corpus)
    rep = audit_seasonal(load_dataset(g), docs, chunk_docs=chunk_docs)
    assert rep.flagged == [] and rep.unknown_docs == ["nodoc"]


def test_cli_json_and_workbench_queue(tmp_path: Path, corpus: Path) -> None:
    g = _golden(tmp_path)
    wb = tmp_path / "wb.db"
    res = runner.invoke(
        app,
        [
            "audit",
            "seasonal",
            str(g),
            "--corpus",
            str(corpus),
            "--to-workbench",
            f"sqlite:///{wb}",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert [f["id"] for f in out["flagged"]] == ["stale", "latest"]
    assert out["queued"]["added"] == 2
    from assay.workbench.db import Database
    from assay.workbench.models import Item

    db = Database(f"sqlite:///{wb}")
    with db.read() as s:
        item = s.get(Item, "stale")
        assert item is not None and item.entry["metadata"]["audit"]["audit"] == "seasonal"


def test_cli_bad_date(tmp_path: Path, corpus: Path) -> None:
    res = runner.invoke(
        app,
        ["audit", "seasonal", str(_golden(tmp_path)), "--corpus", str(corpus), "--since", "May"],
    )
    assert res.exit_code == 2 and "--since" in res.output
