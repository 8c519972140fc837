"""Statistics for honest comparisons: intervals, paired tests, multiple-comparison control."""

from assay.report import Interval, undefined
from assay.stats.bootstrap import (
    bootstrap_by_group,
    bootstrap_ci,
    bootstrap_distribution,
)
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
from assay.stats.multiple import holm, holm_family, ledger_adjust, ledger_alpha, ledger_factor
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
