"""Statistics for honest comparisons: intervals, paired tests, multiple-comparison control.

The names below are imported from their modules on first use, so that a command which needs
one test (the gate: a binomial and a t quantile) does not load every distribution of scipy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._faces import lazy_face

if TYPE_CHECKING:
    from assay.report import Interval, undefined
    from assay.stats.bootstrap import bootstrap_by_group, bootstrap_ci, bootstrap_distribution
    from assay.stats.bounded import score_mean_interval, score_mean_test
    from assay.stats.clusters import (
        Clustering,
        cluster_mean_interval,
        cluster_rate_interval,
        cluster_sign_flip,
        clustered_delta,
        clustered_mcnemar,
        icc_oneway,
    )
    from assay.stats.multiple import (
        holm,
        holm_family,
        ledger_adjust,
        ledger_alpha,
        ledger_factor,
    )
    from assay.stats.paired import (
        Flips,
        TestResult,
        flips,
        mcnemar_exact,
        paired_bootstrap_diff,
        sign_flip_permutation,
        wilcoxon_moved,
    )
    from assay.stats.proportion import (
        clopper_pearson,
        newcombe_paired,
        paired_proportion_diff,
        rate_ci,
        rate_interval,
        tango_paired,
        wilson,
    )

_HOMES = {  # module: the names it gives (each imported on first use)
    "assay.report": "Interval undefined",
    "assay.stats.bootstrap": "bootstrap_by_group bootstrap_ci bootstrap_distribution",
    "assay.stats.bounded": "score_mean_interval score_mean_test",
    "assay.stats.clusters": "Clustering cluster_mean_interval cluster_rate_interval "
    "cluster_sign_flip clustered_delta clustered_mcnemar icc_oneway",
    "assay.stats.multiple": "holm holm_family ledger_adjust ledger_alpha ledger_factor",
    "assay.stats.paired": "Flips TestResult flips mcnemar_exact paired_bootstrap_diff "
    "sign_flip_permutation wilcoxon_moved",
    "assay.stats.proportion": "clopper_pearson newcombe_paired paired_proportion_diff rate_ci "
    "rate_interval tango_paired wilson",
}
_HOME = {name: module for module, names in _HOMES.items() for name in names.split()}

__all__ = [
    "Clustering",
    "Flips",
    "Interval",
    "TestResult",
    "bootstrap_by_group",
    "bootstrap_ci",
    "bootstrap_distribution",
    "clopper_pearson",
    "cluster_mean_interval",
    "cluster_rate_interval",
    "cluster_sign_flip",
    "clustered_delta",
    "clustered_mcnemar",
    "flips",
    "holm",
    "holm_family",
    "icc_oneway",
    "ledger_adjust",
    "ledger_alpha",
    "ledger_factor",
    "mcnemar_exact",
    "newcombe_paired",
    "paired_bootstrap_diff",
    "paired_proportion_diff",
    "rate_ci",
    "rate_interval",
    "score_mean_interval",
    "score_mean_test",
    "sign_flip_permutation",
    "tango_paired",
    "undefined",
    "wilcoxon_moved",
    "wilson",
]


if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(__name__, _HOME, {})
