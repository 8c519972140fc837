"""pytest plugin: put the assay gate in a project's own test suite.

Enable it in ``conftest.py``::

    pytest_plugins = ["assay.pytest_plugin"]

then write a test that gates the candidate run against the baseline::

    def test_no_category_regresses(assay_gate):
        assay_gate("eval/golden.jsonl", "eval/runs/main.jsonl", "eval/runs/candidate.jsonl",
                   k=5, max_drop=0.02)

The test fails (with the gate's Markdown report as the message: per category n, both rates,
the delta with its CI, fixed/broken with the McNemar p-value, verdicts, and the entry ids that
flipped) when any category's rate drops by more than its margin. A usage or data error is an
error of the test, not a pass. Like ``assay gate``, the comparison is recorded in the dataset's
comparison ledger once per distinct comparison (dataset, runs, metrics, k): running the suite
again does not spend the dataset's error budget again. ``record=False`` keeps a call out of the
ledger.

Arguments beyond the three paths (all keyword-only):

* ``k`` (5): the cutoff; ``metric`` ("complete"): the gated metric, ``@k`` added when bare;
* ``max_drop`` (0.02), ``margins`` (a mapping ``{category: drop}`` or a YAML/JSON file, ``"*"``
  for the rest), ``require_significance``, ``alpha``, ``within_comparison``: the gate's policy,
  as ``assay gate`` (significance is judged on the ledger-corrected p unless
  ``within_comparison``);
* ``cluster`` ("auto"): the entry field whose values are clusters of questions that are not
  independent (``doc``, the document of the evidence; ``company``; ``metadata.FIELD``;
  ``none``); by default the evidence document when the dataset has more than one entry per
  document on average, as ``assay gate --cluster``;
* ``max_abstain`` (0.5): the largest share of a category's entries (and of all) a gated check
  may abstain on; above it the test fails, as ``assay gate --max-abstain``;
* ``chunks``: the chunk table file (``chunks.jsonl``) that the gold's anchors are
  resolved against, as ``assay gate --chunks``; without it, gold must name chunk ids;
* ``level`` ("chunk" or "page"): score at chunk level, or at page level (a gold page is found
  when any chunk of that page is retrieved), as ``assay gate --level``;
* ``summary``: also write the Markdown report to this file (for a CI job summary);
* ``tiers`` (None: gold): the label tiers whose entries the gate reads, e.g. ``"gold,silver"``
  (`assay.dataset.tiers`); a dataset with no entry of those tiers fails the test, never passes;
* ``require_certified`` (False): fail unless the dataset carries a certificate (`assay
  certify`) for its current content;
* ``record`` (True): record the comparison in the dataset's ledger;
* ``options`` (an `assay.compare.CompareOptions`), and any of its fields as a keyword (``seed``,
  ``n_resamples``, ``n_permutations``, ...): the comparison's options, as `assay.compare.gate_files`.

Bad input (a missing file, a chunk table that does not exist, gold the chunk table lacks) fails
the test with assay's one-paragraph message naming the file, line and field, not a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Unpack

import pytest

from assay.compare.files import gate_files
from assay.compare.gate import DEFAULT_MAX_ABSTAIN, GatePolicy, GateResult, load_margins
from assay.compare.options import CompareOptions, RunsOptions
from assay.metrics import HEADLINE

__all__ = ["assay_gate", "gate_or_fail"]


def gate_or_fail(
    dataset: str | Path,
    base: str | Path,
    cand: str | Path,
    *,
    max_drop: float = 0.02,
    metric: str = HEADLINE,
    margins: Mapping[str, float] | str | Path | None = None,
    require_significance: bool = False,
    within_comparison: bool = False,
    max_abstain: float = DEFAULT_MAX_ABSTAIN,
    summary: str | Path | None = None,
    chunks: str | Path | None = None,
    base_chunks: str | Path | None = None,
    cand_chunks: str | Path | None = None,
    require_certified: bool = False,
    options: CompareOptions | None = None,
    **given: Unpack[RunsOptions],
) -> GateResult:
    """Run the gate; `pytest.fail` with the Markdown report when a category regressed."""
    from assay._io import write_text_atomic
    from assay.errors import DataError, UsageError

    try:
        if isinstance(margins, str | Path):
            margins = load_margins(margins)
        # a note about an unrecorded comparison names the switch as this call's user wrote it
        opts = CompareOptions.of(options, {"record_switch": "record=False", **given})
        policy = GatePolicy(
            max_drop=max_drop,
            metric=metric,
            margins=dict(margins or {}),
            require_significance=require_significance,
            alpha=opts.alpha,
            within_comparison=within_comparison,
            max_abstain=max_abstain,
        )
        result = gate_files(
            dataset, base, cand, policy=policy, chunks=chunks, base_chunks=base_chunks,
            cand_chunks=cand_chunks, require_certified=require_certified, options=opts,
        )  # fmt: skip
    except (DataError, UsageError, FileNotFoundError, ValueError) as exc:
        pytest.fail(f"assay gate could not run: {_one_message(exc)}", pytrace=False)
    if summary is not None:
        write_text_atomic(summary, result.to_markdown())
    if not result.passed:
        pytest.fail(result.to_markdown(), pytrace=False)
    return result


def _one_message(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"{exc.filename}: no such file"
    return str(exc)


@pytest.fixture
def assay_gate() -> Callable[..., GateResult]:
    """``assay_gate(dataset, base, cand, *, k=5, max_drop=0.02, ...)``: fails the test on regression."""
    return gate_or_fail
