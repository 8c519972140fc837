"""Statistics for honest comparisons: bootstrap intervals, paired tests, multiple-comparison control."""

from assay.stats.bootstrap import (
    BootstrapCI,
    bootstrap_by_group,
    bootstrap_ci,
    bootstrap_distribution,
)
from assay.stats.multiple import holm, ledger_adjust, ledger_alpha, ledger_factor
from assay.stats.paired import (
    Flips,
    TestResult,
    flips,
    mcnemar_exact,
    paired_bootstrap_diff,
    sign_flip_permutation,
    wilcoxon_moved,
)

__all__ = [
    "BootstrapCI",
    "Flips",
    "TestResult",
    "bootstrap_by_group",
    "bootstrap_ci",
    "bootstrap_distribution",
    "flips",
    "holm",
    "ledger_adjust",
    "ledger_alpha",
    "ledger_factor",
    "mcnemar_exact",
    "paired_bootstrap_diff",
    "sign_flip_permutation",
    "wilcoxon_moved",
]
