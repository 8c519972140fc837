"""``--system sql-SPEC``: a text-to-SQL system (the ``sql`` kind, `assay.sql.systems`).

SPEC is ``template`` (the reference baseline), ``module:attr``, ``http(s)://...`` or
``openai[:MODEL]``; `assay sql run --system SPEC` is the same run with the prefix implied.
"""

from __future__ import annotations

import importlib
from typing import Any

from assay.systems.registry import Adapter, Option, register_adapter

__all__ = ["ADAPTER", "PREFIX"]

PREFIX = "sql-"


def _build(spec: str, options: dict[str, Any]) -> Any:
    # named, not imported here: `assay.sql` sits above `assay.systems` (and takes seconds to
    # import), so the adapter reaches it only when a SQL system is built
    load_sql_system = importlib.import_module("assay.sql.systems").load_sql_system
    return load_sql_system(spec.removeprefix(PREFIX), **options)


ADAPTER = register_adapter(
    Adapter(
        name="sql",
        usage="sql-SPEC",
        help="A text-to-SQL system asked every entry with sql gold: sql-template (the "
        "baseline), sql-module:attr, sql-http(s)://HOST/PATH or sql-openai[:MODEL].",
        build=_build,
        matches=lambda spec: spec.startswith(PREFIX),
        options=(
            Option("base_url", str, "sql-openai: the endpoint (default $ASSAY_LLM_BASE_URL)"),
            Option("model", str, "sql-openai: the model (default $ASSAY_LLM_MODEL)"),
            Option("timeout", float, "seconds to wait for each read", identity=False),
            Option(
                "system_version",
                str,
                "what the server runs (a commit, a model): part of the system's identity",
            ),
        ),
        examples=("assay run wh/golden.jsonl --system sql-template --out run.jsonl",),
    )
)
