from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def doc(
    doc_id: str, ticker: str, form: str, period_end: str, accepted: str, **kw: Any
) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "company": f"{ticker.title()} Corp",
        "ticker": ticker,
        "form": form,
        "period_end": period_end,
        "accepted_at": accepted,
        **kw,
    }


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Two companies' filings: ACME's FY2023 10-K, its amendment, its FY2024 10-K and a 10-Q;
    BETA's FY2024 10-K."""
    d = tmp_path / "corpus"
    d.mkdir()
    write_jsonl(
        d / "documents.jsonl",
        [
            doc("acme-2023-10k", "ACME", "10-K", "2023-12-31", "2024-02-20", fiscal_year=2023),
            doc(
                "acme-2023-10ka",
                "ACME",
                "10-K/A",
                "2023-12-31",
                "2024-06-01",
                fiscal_year=2023,
                amends="acme-2023-10k",
            ),
            doc(
                "acme-2024-q1-10q",
                "ACME",
                "10-Q",
                "2024-03-31",
                "2024-05-01",
                fiscal_year=2024,
                fiscal_quarter=1,
            ),
            doc("acme-2024-10k", "ACME", "10-K", "2024-12-31", "2025-02-20", fiscal_year=2024),
            doc("beta-2024-10k", "BETA", "10-K", "2024-12-31", "2025-02-25", fiscal_year=2024),
        ],
    )
    chunks = [
        (
            "acme-2023-10k/3/1",
            "acme-2023-10k",
            "Total revenue was $1,234 million in fiscal 2023.",
            2023,
        ),
        (
            "acme-2024-10k/3/1",
            "acme-2024-10k",
            "Total revenue was $1,500 million in fiscal 2024.",
            2024,
        ),
        (
            "beta-2024-10k/2/1",
            "beta-2024-10k",
            "Net interest income was $410 million in fiscal 2024.",
            2024,
        ),
    ]
    write_jsonl(
        d / "chunks.jsonl",
        [
            {
                "chunk_id": c,
                "doc_id": dd,
                "page": int(c.split("/")[1]),
                "text": t,
                "company": "Acme Corp" if dd.startswith("acme") else "Beta Corp",
                "ticker": dd.split("-")[0].upper(),
                "form": "10-K",
                "fiscal_year": fy,
            }
            for c, dd, t, fy in chunks
        ],
    )
    return d
