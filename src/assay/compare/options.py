"""The options of a comparison, as one frozen value (`CompareOptions`) that the command line or
a caller builds once and that compare, the gate and the leaderboard pass down unchanged.

Every function of `assay.compare` that compares runs takes ``options=`` and also each option as
a keyword (their spelling, `RunsOptions`: the same names, each optional), which change the
given value (or the defaults); a misspelt keyword is a `TypeError`. What a comparison reads
(the dataset, the runs, their chunk tables) is not an option: it is passed as itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypedDict

from assay.stats.bounded import GradedMethod

__all__ = ["CompareOptions", "RunsOptions"]


@dataclass(frozen=True, kw_only=True)
class CompareOptions:
    """How two runs (or a baseline and its candidates) are compared, with the defaults of
    `assay compare`.

    The statistics (`assay.compare.compare_arrays`): ``seed`` (0), ``n_resamples`` (10,000) and
    ``n_permutations`` (10,000), ``confidence`` (0.95), ``ci_method`` ("score"), ``alpha``
    (0.05), ``binary_ci`` ("tango").

    How runs are read into series: ``k`` (5) the cutoff; ``metrics`` (None: the default pair)
    any series names; ``level`` ("chunk" or "page"); ``by`` ("category") what the rows group
    by; ``cluster`` ("auto") the entry field clustered by (`assay.dataset.clustering`);
    ``pair`` ("turn") what one pair is: each entry, or each conversation (`assay.compare.
    pairing`: the mean over its turns for metrics, "every turn passes" for checks);
    ``skip_stale`` (False) leave out entries whose gold does not resolve;
    ``allow_changed_entries`` (False) rows whose entry changed since the run;
    ``allow_corpus_change`` (False) runs made on different corpora; ``max_unknown_share``
    (None: `assay.runs.corpus.UNKNOWN_SHARE`) of a run's hits its table may not know.

    The use of the data and its record: ``command`` ("compare") the name a use of a sealed fresh
    sample and the ledger line are recorded under; ``allow_reuse`` (False) a second use of a
    sealed fresh sample; ``tiers`` (None: gold) the label tiers compared; ``record`` (True) the
    comparison in the dataset's ledger, and ``record_switch`` how the note of an unrecorded one
    names the switch (the command line's "--no-record").
    """

    seed: int = 0
    n_resamples: int = 10_000
    n_permutations: int = 10_000
    confidence: float = 0.95
    ci_method: GradedMethod = "score"
    alpha: float = 0.05
    binary_ci: str = "tango"
    k: int = 5
    metrics: Sequence[str] | None = None
    level: str = "chunk"
    by: str = "category"
    cluster: str | None = "auto"
    pair: str = "turn"
    skip_stale: bool = False
    allow_changed_entries: bool = False
    allow_corpus_change: bool = False
    max_unknown_share: float | None = None
    command: str = "compare"
    allow_reuse: bool = False
    tiers: str | Sequence[str] | None = None
    record: bool = True
    record_switch: str = "record=False"

    @classmethod
    def of(cls, options: CompareOptions | None, given: RunsOptions) -> CompareOptions:
        """``options`` (default: the defaults) with the ``given`` keywords changed."""
        base = options if options is not None else cls()
        return replace(base, **given) if given else base


class RunsOptions(TypedDict, total=False):
    """`CompareOptions` as keywords: the same names and types, each optional."""

    seed: int
    n_resamples: int
    n_permutations: int
    confidence: float
    ci_method: GradedMethod
    alpha: float
    binary_ci: str
    k: int
    metrics: Sequence[str] | None
    level: str
    by: str
    cluster: str | None
    pair: str
    skip_stale: bool
    allow_changed_entries: bool
    allow_corpus_change: bool
    max_unknown_share: float | None
    command: str
    allow_reuse: bool
    tiers: str | Sequence[str] | None
    record: bool
    record_switch: str
