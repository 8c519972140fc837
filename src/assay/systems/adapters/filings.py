"""``--system filings --corpus corpus/ --mode full``: the reference filings pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.systems.registry import Adapter, Option, register_adapter

__all__ = ["ADAPTER", "MODES"]

MODES = ("bm25", "dense", "hybrid", "full")  # assay.systems.filings.MODES (a test keeps them equal)


def _build(spec: str, options: dict[str, Any]) -> Any:
    from assay.systems.filings import build

    return build(options["corpus"], mode=options["mode"], cache_dir=options["embedding_cache"])


ADAPTER = register_adapter(
    Adapter(
        name="filings",
        usage="filings",
        help="The reference filings pipeline (docs/pipeline.md): fiscal calendars, entity and "
        "period filters, hybrid retrieval, reranking, extractive answers.",
        build=_build,
        options=(
            Option("corpus", Path, "corpus folder built by `assay corpus build`", required=True),
            Option("mode", str, "filings pipeline mode", default="full", choices=MODES),
            Option(
                "embedding_cache",
                Path,
                "folder of the embedding cache (default .assay-cache or $ASSAY_CACHE_DIR)",
                identity=False,
            ),
        ),
        examples=("assay run golden.jsonl --system filings --corpus corpus/ --out run.jsonl",),
    )
)
