"""``--system filings --corpus corpus/ --mode full --answerer facts``: the reference filings
pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.systems.registry import Adapter, Option, register_adapter

__all__ = ["ADAPTER", "ANSWERERS", "MODES"]

MODES = ("bm25", "dense", "hybrid", "full")  # assay.systems.filings.MODES (a test keeps them equal)
ANSWERERS = ("extractive", "facts", "llm")  # assay.systems.filings.ANSWERERS (likewise)


def _build(spec: str, options: dict[str, Any]) -> Any:
    from assay.systems.filings import build

    return build(
        options["corpus"],
        mode=options["mode"],
        cache_dir=options["embedding_cache"],
        answerer=options["answerer"],
        xbrl=options["xbrl"],
        llm_base_url=options["llm_base_url"],
        llm_model=options["llm_model"],
        llm_price_in=options["llm_price_in"],
        llm_price_out=options["llm_price_out"],
        ignore_acl=options["ignore_acl"],
    )


ADAPTER = register_adapter(
    Adapter(
        name="filings",
        usage="filings",
        help="The reference filings pipeline (docs/pipeline.md): fiscal calendars, entity and "
        "period filters, hybrid retrieval, reranking; answers extractive, from structured facts "
        "(XBRL and statement tables, standard metrics computed) or by an LLM.",
        build=_build,
        options=(
            Option("corpus", Path, "corpus folder built by `assay corpus build`", required=True),
            Option("mode", str, "filings pipeline mode", default="full", choices=MODES),
            Option(
                "answerer",
                str,
                "extractive (quote the best sentence or row), facts (look up XBRL and statement "
                "facts, compute standard metrics; else extractive), llm (an OpenAI-compatible "
                "endpoint); default: facts in full mode, else extractive",
                choices=ANSWERERS,
            ),
            Option(
                "xbrl",
                Path,
                "folder of SEC company-facts JSON for the facts answerer (default: the corpus' "
                "xbrl/ when there is one)",
            ),
            Option(
                "llm_base_url",
                str,
                "llm answerer: endpoint, e.g. http://127.0.0.1:8000/v1 "
                "(default $ASSAY_LLM_BASE_URL)",
            ),
            Option("llm_model", str, "llm answerer: model name (default $ASSAY_LLM_MODEL)"),
            Option(
                "llm_price_in",
                float,
                "llm answerer: USD per million prompt tokens (prices each answer's cost)",
                identity=False,
            ),
            Option(
                "llm_price_out",
                float,
                "llm answerer: USD per million completion tokens",
                identity=False,
            ),
            Option(
                "ignore_acl",
                bool,
                "the deliberately leaky variant: take the principal but never check access "
                "labels (for showing the policy gate catching a leak)",
                default=False,
            ),
            Option(
                "embedding_cache",
                Path,
                "folder of the embedding cache (default .assay-cache or $ASSAY_CACHE_DIR)",
                identity=False,
            ),
        ),
        examples=(
            "assay run golden.jsonl --system filings --corpus corpus/ --out run.jsonl",
            "assay run golden.jsonl --system filings --corpus corpus/ --answerer facts "
            "--xbrl room/xbrl --out run.jsonl",
            "assay run golden.jsonl --system filings --corpus corpus/ --answerer llm "
            "--llm-base-url http://127.0.0.1:8000/v1 --llm-model my-model --out run.jsonl",
        ),
    )
)
