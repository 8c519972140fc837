"""assay.judge: registered answer checks over one shared context, the LLM judge on a leash, reports.

Add an answer check with `@check("name")` over a `CheckContext` (see `assay.judge.registry`);
`check_run(dataset, run, checks="a,b")` runs a subset.
"""

from typing import Any

from assay.judge.calibrated import (
    CorrectedRate,
    JudgeCalibration,
    JudgeReport,
    UncalibratedJudge,
    corrected_rates,
    find_calibration,
    uncalibrated_warning,
)
from assay.judge.checking import (
    CHECKS_VERSION,
    EntryChecks,
    check_entry,
    check_rows,
    check_run,
    default_checks_for,
)
from assay.judge.context import CheckContext
from assay.judge.judged import JudgedAnswer, JudgedAnswers, read_judged
from assay.judge.llm import (
    BinaryVerdict,
    JudgeInput,
    JudgeSettings,
    LLMJudge,
    PairwiseReport,
    PairwiseResult,
    judge_pairwise,
    judge_run,
)
from assay.judge.numbers import Quantity, compare, extract_quantities, parse_quantity
from assay.judge.numeric import NumericVerdict, asks_for_figure, check_numeric
from assay.judge.refusal import RefusalResult, detect_refusal
from assay.judge.registry import (
    Check,
    CheckGroup,
    Outcome,
    builtin_checks,
    check,
    check_group,
    check_groups,
    check_names,
    get_check,
    register,
    resolve_checks,
    unregister,
)
from assay.judge.report import CheckReport

__all__ = [
    "CHECKS_VERSION",
    "CHECK_NAMES",
    "BinaryVerdict",
    "Check",
    "CheckContext",
    "CheckGroup",
    "CheckReport",
    "CorrectedRate",
    "EntryChecks",
    "JudgeCalibration",
    "JudgeInput",
    "JudgeReport",
    "JudgeSettings",
    "JudgedAnswer",
    "JudgedAnswers",
    "LLMJudge",
    "NumericVerdict",
    "Outcome",
    "PairwiseReport",
    "PairwiseResult",
    "Quantity",
    "RefusalResult",
    "UncalibratedJudge",
    "asks_for_figure",
    "check",
    "check_entry",
    "check_group",
    "check_groups",
    "check_names",
    "check_numeric",
    "check_rows",
    "check_run",
    "compare",
    "corrected_rates",
    "default_checks_for",
    "detect_refusal",
    "extract_quantities",
    "find_calibration",
    "get_check",
    "judge_pairwise",
    "judge_run",
    "parse_quantity",
    "read_judged",
    "register",
    "resolve_checks",
    "uncalibrated_warning",
    "unregister",
]


def __getattr__(name: str) -> Any:
    if name == "CHECK_NAMES":  # the default answer checks, read when asked (the registry loaded)
        return builtin_checks(default_only=True, group="answer")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
