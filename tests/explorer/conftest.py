"""A small, complete explorer case: a chunk table, a golden set with anchors and chunk-id gold,
three runs (the baseline misses, one candidate answers with citations), a judged-answers file,
an ablation ladder and a hand-built attribution of the shape `assay.attribution` returns."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.runs import write_run

DOCS = {
    "acme-10k": [
        "Acme Corp annual report. Net revenue was $1,204 million in fiscal 2023.",
        "Operating margin was 14.2% in fiscal 2023, up from 12.9% in fiscal 2022.",
        "Risk factors: supply chain disruption could reduce revenue.",
    ],
    "beta-10k": [
        "Beta Inc annual report. Net revenue was $880 million in fiscal 2023.",
        "Beta's headcount was 4,100 employees at year end 2023.",
        "Beta's operating margin was 9.1% in fiscal 2023.",
    ],
}


def _chunk_id(doc: str, page: int) -> str:
    return f"{doc}/{page}/1"


def _entries() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    facts = [
        ("acme-10k", 1, "Net revenue was $1,204 million in fiscal 2023", "lookup"),
        ("acme-10k", 2, "Operating margin was 14.2% in fiscal 2023", "lookup"),
        ("beta-10k", 1, "Net revenue was $880 million in fiscal 2023", "lookup"),
        ("beta-10k", 2, "headcount was 4,100 employees", "lookup"),
        ("beta-10k", 3, "operating margin was 9.1% in fiscal 2023", "trend"),
        ("acme-10k", 3, "supply chain disruption could reduce revenue", "trend"),
    ]
    for i, (doc, page, quote, cat) in enumerate(facts):
        out.append(
            {
                "id": f"q{i + 1}",
                "query": f"What does {doc} say on page {page}?",
                "category": cat,
                "as_of": "2024-03-31",
                "evidence_paths": [[[{"doc": doc, "page": page, "quote": quote}]]],
                "reference_answer": quote + ".",
                "key_facts": [{"fact": quote}],
            }
        )
    # two paths: either both filings' margins, or the Acme margin chunk id alone
    out.append(
        {
            "id": "q7/both margins",
            "query": "Compare Acme's and Beta's operating margins in 2023",
            "category": "trend",
            "evidence_paths": [
                [[_chunk_id("acme-10k", 2)], [_chunk_id("beta-10k", 3)]],
                [[{"doc": "acme-10k", "page": 2, "quote": "Operating margin was 14.2%"}]],
            ],
        }
    )
    return out


def _runs(entries: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    noise = [_chunk_id("acme-10k", 3), _chunk_id("beta-10k", 1), _chunk_id("beta-10k", 2)]
    gold = {
        "q1": _chunk_id("acme-10k", 1),
        "q2": _chunk_id("acme-10k", 2),
        "q3": _chunk_id("beta-10k", 1),
        "q4": _chunk_id("beta-10k", 2),
        "q5": _chunk_id("beta-10k", 3),
        "q6": _chunk_id("acme-10k", 3),
        "q7/both margins": _chunk_id("beta-10k", 3),
    }
    base_hits = {"q1", "q6"}  # the baseline finds two
    cand_hits = {"q1", "q2", "q3", "q5", "q7/both margins"}  # the candidate finds five
    third_hits = {"q1", "q2", "q6"}
    runs: dict[str, list[dict[str, Any]]] = {"base": [], "cand": [], "third": []}
    for e in entries:
        eid = e["id"]
        for name, hits in (("base", base_hits), ("cand", cand_hits), ("third", third_hits)):
            others = [c for c in noise if c != gold[eid]]
            retrieved = ([gold[eid]] if eid in hits else []) + others
            row: dict[str, Any] = {
                "id": eid,
                "retrieved": [{"chunk_id": c, "score": 10.0 - j} for j, c in enumerate(retrieved)],
            }
            if name == "cand":
                row["answer"] = (
                    e.get("reference_answer") or "Acme 14.2% against Beta 9.1%."
                ) + f" [{retrieved[0]}]"
                row["citations"] = [retrieved[0]]
            runs[name].append(row)
    return runs


ATTRIBUTION: dict[str, Any] = {
    "categories": {
        "lookup": {"n_failed": 1, "stages": {"recall": 1}},
        "trend": {"n_failed": 1, "stages": {"chunk": 1}},
    },
    "entries": [
        {"id": "q4", "stage": "recall", "group": "1.1"},
        {"id": "q6", "stage": "chunk", "group": "1.1"},
    ],
    "unseen_stages": ["rerank"],
}

LADDER: dict[str, Any] = {
    "k": 5,
    "baseline": "bm25",
    "rows": [
        {
            "rung": "bm25",
            "level": "page",
            "category": "overall",
            "n": 7,
            "complete@5": 0.29,
            "complete_ci": {"value": 0.29, "low": 0.08, "high": 0.64},
            "flips_vs_bm25": {"fixed": 0, "broken": 0, "p_mcnemar": 1.0},
        },
        {
            "rung": "+filters",
            "level": "page",
            "category": "overall",
            "n": 7,
            "complete@5": 0.71,
            "complete_ci": {"value": 0.71, "low": 0.36, "high": 0.92},
            "flips_vs_bm25": {"fixed": 3, "broken": 0, "p_mcnemar": 0.25},
        },
    ],
}


@dataclass
class Case:
    dataset: Path
    chunks: Path
    runs: list[Path]
    judged: Path
    ladder: Path


def write_explorer_case(directory: Path) -> Case:
    directory.mkdir(parents=True, exist_ok=True)
    chunks = directory / "chunks.jsonl"
    with open(chunks, "w", encoding="utf-8") as fh:
        for doc, pages in DOCS.items():
            for i, text in enumerate(pages, start=1):
                row = {"chunk_id": _chunk_id(doc, i), "doc_id": doc, "pages": [i], "text": text}
                fh.write(json.dumps(row) + "\n")
    entries = _entries()
    dataset = directory / "golden.jsonl"
    dataset.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    paths = []
    for name, rows in _runs(entries).items():
        p = directory / f"{name}.jsonl"
        write_run(p, rows)
        paths.append(p)
    judged = directory / "cand.judged.jsonl"
    judged.write_text(
        "".join(
            json.dumps(
                {
                    "id": e["id"],
                    "category": e["category"],
                    "judge_hash": "j" * 16,
                    "supported": e["id"] != "q4",
                    "critiques": {"supported": f"The answer to {e['id']} is in its cited span."},
                }
            )
            + "\n"
            for e in entries
        ),
        encoding="utf-8",
    )
    ladder = directory / "ladder.json"
    ladder.write_text(json.dumps(LADDER), encoding="utf-8")
    return Case(dataset, chunks, paths, judged, ladder)


@pytest.fixture
def case(tmp_path: Path) -> Case:
    return write_explorer_case(tmp_path / "case")


# ------------------------------------------------------------------ a SQL entry

SQL_GOLD = (
    "SELECT region, COUNT(*) AS active FROM customers WHERE status = 'A' GROUP BY region",
    "SELECT region, SUM(CASE WHEN status = 'A' THEN 1 ELSE 0 END) AS active FROM customers "
    "GROUP BY region HAVING SUM(CASE WHEN status = 'A' THEN 1 ELSE 0 END) > 0",
)
SQL_QUERIES = {
    # the status filter left out: EMEA's count differs and LATAM (no active customer) appears
    "base": "SELECT region, COUNT(*) AS n FROM customers GROUP BY region",
    # right, with its columns the other way round
    "cand": "SELECT COUNT(*) AS n, region FROM customers WHERE status = 'A' GROUP BY region",
    # not read-only: refused before it runs
    "third": "DELETE FROM customers",
}
CUSTOMERS = [
    (1, "NA", "A"),
    (2, "NA", "A"),
    (3, "EMEA", "A"),
    (4, "EMEA", "C"),
    (5, "LATAM", "C"),
]


def add_sql_entry(case: Case) -> None:
    """Add a text-to-SQL entry over a small SQLite file to the case's dataset and runs."""
    import sqlite3

    db = case.dataset.parent / "shop.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE customers (id INTEGER, region TEXT, status TEXT)")
    con.executemany("INSERT INTO customers VALUES (?, ?, ?)", CUSTOMERS)
    con.commit()
    con.close()
    entry = {
        "id": "sql:active",
        "query": "How many active customers are there in each region?",
        "category": "sql",
        "sql": {"queries": list(SQL_GOLD), "dialect": "sqlite", "database": "shop.sqlite"},
    }
    with open(case.dataset, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    for path in case.runs:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        q = SQL_QUERIES[path.stem]  # a run row keeps its SQL in extra: "sql" and "dialect"
        rows.append({"id": "sql:active", "retrieved": [], "sql": q, "dialect": "sqlite"})
        write_run(path, rows)
