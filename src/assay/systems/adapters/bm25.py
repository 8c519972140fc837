"""``--system bm25 --chunks chunks.jsonl``: a plain BM25 baseline over a chunk table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.systems.registry import Adapter, Option, register_adapter

__all__ = ["ADAPTER"]


def _build(spec: str, options: dict[str, Any]) -> Any:
    from assay.systems.bm25 import BM25System

    return BM25System.from_path(options["chunks"])


ADAPTER = register_adapter(
    Adapter(
        name="bm25",
        usage="bm25",
        help="A plain BM25 baseline (bm25s) over a chunk table; honours as_of through each "
        "chunk's accepted_at.",
        build=_build,
        options=(Option("chunks", Path, "the chunk table to index", required=True),),
        examples=("assay run golden.jsonl --system bm25 --chunks chunks.jsonl --out run.jsonl",),
    )
)
