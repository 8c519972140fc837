"""assay.judge: deterministic answer checks and the LLM judge on a leash."""

from assay.judge.checks import (
    CHECK_NAMES,
    EntryChecks,
    NumericVerdict,
    check_entry,
    check_numeric,
    check_run,
)
from assay.judge.llm import (
    BinaryVerdict,
    ChatClient,
    JudgeInput,
    JudgeSettings,
    LLMJudge,
    PairwiseResult,
    judge_pairwise,
    judge_run,
    uncalibrated_warning,
)
from assay.judge.numbers import Quantity, compare, extract_quantities, parse_quantity
from assay.judge.refusal import RefusalResult, detect_refusal
from assay.judge.report import CheckReport

__all__ = [
    "CHECK_NAMES",
    "BinaryVerdict",
    "ChatClient",
    "CheckReport",
    "EntryChecks",
    "JudgeInput",
    "JudgeSettings",
    "LLMJudge",
    "NumericVerdict",
    "PairwiseResult",
    "Quantity",
    "RefusalResult",
    "check_entry",
    "check_numeric",
    "check_run",
    "compare",
    "detect_refusal",
    "extract_quantities",
    "judge_pairwise",
    "judge_run",
    "parse_quantity",
    "uncalibrated_warning",
]
