"""The judge bench: calibrate the deterministic answer checks against FinanceBench's human grades.

FinanceBench (Islam et al., 2023, arXiv 2311.11944) publishes model answers graded by experts as
"Correct Answer", "Incorrect Answer" or "Refusal". This bench runs two deterministic checks on
every graded answer and measures them against the human grade:

numeric_correct
    `assay.judge.numeric.check_numeric` against the published answer; human positive = "Correct
    Answer". The check abstains where the question does not ask for a figure (yes/no, which/who
    questions) or the reference states none; abstentions are counted, not scored.
refusal
    `assay.judge.refusal.detect_refusal`; human positive = "Refusal". Never abstains.

For each question type and overall it reports n (answers scored), abstained, TPR (human positive,
check positive), TNR (human negative, check negative) and Cohen's kappa. TPR and TNR are rates
(passes among the human positives, fails among the human negatives) and get Wilson's score
interval (`assay.stats.proportion.wilson`), which does not collapse to a point when every answer
agrees (30 of 30 reads [0.89, 1.00], not [1.00, 1.00]); kappa gets a percentile bootstrap CI over
answers (`assay.stats.calibration.binary_calibration`; "human positive" plays the role of PASS
there).

Honest generalisation: the rules were developed while looking at half "A" of the questions only;
half "B" estimates performance on unseen questions. The halves are fixed by hashing: within each
question type, questions are ordered by SHA-256 of `SPLIT_SALT + id` and alternately assigned to A
and B, so a new question set splits the same way without any list of ids.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import iter_jsonl, sha256_file
from assay.errors import DataError, Problem
from assay.judge.checking import CHECKS_VERSION
from assay.judge.numeric import NumericVerdict, check_numeric
from assay.judge.refusal import RefusalResult, detect_refusal
from assay.report import Interval, ReportMixin, Tabular
from assay.stats.calibration import binary_calibration
from assay.stats.proportion import wilson

__all__ = [
    "CHECKS_VERSION",
    "SPLIT_SALT",
    "CalibrationRow",
    "FinanceBenchReport",
    "GradedAnswer",
    "JudgedAnswer",
    "financebench_judge",
    "judge_answers",
    "load_graded",
    "load_questions",
    "split_halves",
]

SPLIT_SALT = ""

LABELS = {"Correct Answer": "correct", "Incorrect Answer": "incorrect", "Refusal": "refusal"}
QUESTION_FIELDS = ("financebench_id", "question", "answer", "question_type")
GRADED_FIELDS = ("financebench_id", "model_answer", "label")


@dataclass(frozen=True, slots=True)
class GradedAnswer:
    """One model answer with its human grade and the question it answers."""

    id: str
    question_type: str
    question: str
    reference: str
    answer: str
    label: str  # correct | incorrect | refusal
    model_name: str = ""
    eval_mode: str = ""
    line: int = 0
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class JudgedAnswer:
    graded: GradedAnswer
    half: str
    numeric: NumericVerdict
    refusal: RefusalResult

    def to_dict(self) -> dict[str, Any]:
        g = self.graded
        return {
            "financebench_id": g.id,
            "line": g.line,
            "model_name": g.model_name,
            "eval_mode": g.eval_mode,
            "question_type": g.question_type,
            "half": self.half,
            "human": g.label,
            "numeric_correct": self.numeric.value,
            "numeric_reason": self.numeric.reason,
            "numeric_answer_figure": self.numeric.answer_figure,
            "refusal": self.refusal.refused,
            "refusal_cue": self.refusal.cue,
        }


def load_questions(path: str | Path) -> dict[str, dict[str, Any]]:
    """FinanceBench questions by `financebench_id`; every missing field is reported."""
    problems: list[Problem] = []
    out: dict[str, dict[str, Any]] = {}
    for line, obj in iter_jsonl(path):
        if not isinstance(obj, dict):
            problems.append(Problem(str(path), line, None, "expected a JSON object"))
            continue
        for f in QUESTION_FIELDS:
            if obj.get(f) in (None, ""):
                problems.append(Problem(str(path), line, f, "missing"))
        qid = obj.get("financebench_id")
        if isinstance(qid, str) and qid:
            if qid in out:
                problems.append(Problem(str(path), line, "financebench_id", f"duplicate id {qid}"))
            out[qid] = obj
    if problems:
        raise DataError(problems)
    return out


def load_graded(path: str | Path, questions: Mapping[str, Mapping[str, Any]]) -> list[GradedAnswer]:
    """Graded answers joined to their questions; unknown ids and labels are errors."""
    problems: list[Problem] = []
    out: list[GradedAnswer] = []
    for line, obj in iter_jsonl(path):
        if not isinstance(obj, dict):
            problems.append(Problem(str(path), line, None, "expected a JSON object"))
            continue
        bad = False
        for f in GRADED_FIELDS:
            if obj.get(f) is None:
                problems.append(Problem(str(path), line, f, "missing"))
                bad = True
        if bad:
            continue
        qid = str(obj["financebench_id"])
        label = LABELS.get(str(obj["label"]))
        if label is None:
            problems.append(
                Problem(
                    str(path),
                    line,
                    "label",
                    f"unknown label {obj['label']!r} (want one of {', '.join(LABELS)})",
                )
            )
            continue
        q = questions.get(qid)
        if q is None:
            problems.append(
                Problem(str(path), line, "financebench_id", f"{qid} not in the questions")
            )
            continue
        reference = str(q.get("answer") or obj.get("gold_answer") or "")
        out.append(
            GradedAnswer(
                id=qid,
                question_type=str(q["question_type"]),
                question=str(q["question"]),
                reference=reference,
                answer=str(obj["model_answer"]),
                label=label,
                model_name=str(obj.get("model_name", "")),
                eval_mode=str(obj.get("eval_mode", "")),
                line=line,
                evidence=tuple(
                    str(ev.get("evidence_text", ""))
                    for ev in (q.get("evidence") or [])
                    if isinstance(ev, dict)
                ),
            )
        )
    if problems:
        raise DataError(problems)
    return out


def split_halves(questions: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Question id -> "A" or "B": hash order within each question type, alternating."""
    by_type: dict[str, list[str]] = defaultdict(list)
    for qid, q in questions.items():
        by_type[str(q.get("question_type", ""))].append(qid)
    out: dict[str, str] = {}
    for ids in by_type.values():
        ids.sort(key=lambda i: (hashlib.sha256((SPLIT_SALT + i).encode()).hexdigest(), i))
        for k, qid in enumerate(ids):
            out[qid] = "A" if k % 2 == 0 else "B"
    return out


def judge_answers(graded: Iterable[GradedAnswer], halves: Mapping[str, str]) -> list[JudgedAnswer]:
    """Run the numeric and refusal checks on every graded answer."""
    return [
        JudgedAnswer(
            g,
            halves.get(g.id, "A"),
            check_numeric(g.reference, g.answer, question=g.question, evidence=g.evidence),
            detect_refusal(g.answer),
        )
        for g in graded
    ]


# --------------------------------------------------------------------------------- calibration


@dataclass(frozen=True, slots=True)
class CalibrationRow:
    check: str
    question_type: str
    half: str
    n: int
    abstained: int
    human_pos: int
    human_neg: int
    tpr: Interval
    tnr: Interval
    kappa: Interval
    warnings: tuple[str, ...] = ()

    def interval(self, name: str) -> Interval:
        """``tpr``, ``tnr`` or ``kappa`` as the report layer's `Interval`."""
        e = getattr(self, name)
        method = CI_METHOD if name == "kappa" else RATE_CI_METHOD
        return Interval(e.value, e.low, e.high, CI_LEVEL, method, e.note)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "check": self.check,
            "question_type": self.question_type,
            "half": self.half,
            "n": self.n,
            "abstained": self.abstained,
            "human_pos": self.human_pos,
            "human_neg": self.human_neg,
        }
        for k in ("tpr", "tnr", "kappa"):
            ci = self.interval(k)
            d[k] = ci.to_dict()["value"]
            d[f"{k}_ci"] = ci.to_dict()
        d["warnings"] = list(self.warnings)
        return d


CI_LEVEL = 0.95
CI_METHOD = "percentile bootstrap over answers"
RATE_CI_METHOD = "wilson"


@dataclass
class FinanceBenchReport(ReportMixin):
    """Per check, question type and half: n, abstained, TPR, TNR, kappa with CIs.

    A report: ``to_dict``/``to_json`` (full precision, intervals as `Interval.to_dict()`),
    ``to_table`` and ``to_markdown``.
    """

    rows: list[CalibrationRow]
    meta: dict[str, Any] = field(default_factory=dict)
    judged: list[JudgedAnswer] = field(default_factory=list)

    HEADERS = (
        "check",
        "question type",
        "half",
        "n",
        "abstained",
        "human +/-",
        "TPR",
        "TNR",
        "kappa",
    )

    def row(self, check: str, question_type: str = "overall", half: str = "all") -> CalibrationRow:
        for r in self.rows:
            if (r.check, r.question_type, r.half) == (check, question_type, half):
                return r
        raise KeyError((check, question_type, half))

    def to_dict(self) -> dict[str, Any]:
        return {"meta": self.meta, "rows": [r.to_dict() for r in self.rows]}

    def cells(self, r: CalibrationRow) -> list[str]:
        def f(e: Interval) -> str:
            if e.value is None:
                return "-"
            if e.low is None or e.high is None:
                return f"{e.value:.3f}"
            return f"{e.value:.3f} [{e.low:.2f}, {e.high:.2f}]"

        return [
            r.check,
            r.question_type,
            r.half,
            str(r.n),
            str(r.abstained),
            f"{r.human_pos}/{r.human_neg}",
            f(r.tpr),
            f(r.tnr),
            f(r.kappa),
        ]

    def tabular(self) -> Tabular:
        split = self.meta.get("split", {})
        return Tabular(
            "FinanceBench: deterministic checks vs human grades "
            "(95% CI: Wilson for TPR and TNR, bootstrap for kappa)",
            list(self.HEADERS),
            [self.cells(r) for r in self.rows],
            footer=[str(split["note"])] if "note" in split else [],
            emphasis=set(),
        )

    def to_markdown(self) -> str:
        lines = [
            "| " + " | ".join(self.HEADERS) + " |",
            "|" + "|".join("---" for _ in self.HEADERS) + "|",
        ]
        lines += ["| " + " | ".join(self.cells(r)) + " |" for r in self.rows]
        return "\n".join(lines) + "\n"


def financebench_judge(
    graded_path: str | Path,
    questions_path: str | Path,
    *,
    rng: np.random.Generator | None = None,
    n_boot: int = 2000,
) -> FinanceBenchReport:
    """Calibrate the numeric-correctness and refusal checks against FinanceBench human grades.

    Rows: for check in (numeric_correct, refusal), question type in (each type, "overall") and
    half in ("A" = rules developed on it, "B" = unseen while developing, "all").
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    questions = load_questions(questions_path)
    graded = load_graded(graded_path, questions)
    halves = split_halves(questions)
    judged = judge_answers(graded, halves)
    types = sorted({j.graded.question_type for j in judged})
    rows: list[CalibrationRow] = []
    for check in ("numeric_correct", "refusal"):
        for qtype in [*types, "overall"]:
            for half in ("A", "B", "all"):
                sel = [
                    j
                    for j in judged
                    if (qtype == "overall" or j.graded.question_type == qtype)
                    and (half == "all" or j.half == half)
                ]
                human: list[bool] = []
                judge: list[bool] = []
                abstained = 0
                for j in sel:
                    if check == "numeric_correct":
                        if j.numeric.value is None:
                            abstained += 1
                            continue
                        human.append(j.graded.label == "correct")
                        judge.append(j.numeric.value)
                    else:
                        human.append(j.graded.label == "refusal")
                        judge.append(j.refusal.refused)
                cal = binary_calibration(
                    np.asarray(human, dtype=bool),
                    np.asarray(judge, dtype=bool),
                    rng=rng,
                    n_resamples=n_boot,
                )
                rows.append(
                    CalibrationRow(
                        check,
                        qtype,
                        half,
                        cal.n,
                        abstained,
                        cal.n_human_pass,
                        cal.n_human_fail,
                        _rate(cal.tp, cal.tp + cal.fn, cal.tpr),
                        _rate(cal.tn, cal.tn + cal.fp, cal.tnr),
                        cal.kappa,
                        tuple(cal.warnings),
                    )
                )
    reasons: dict[str, dict[str, int]] = {}
    for j in judged:
        if j.numeric.status == "fail":
            by = reasons.setdefault(j.graded.label, {})
            by[j.numeric.reason] = by.get(j.numeric.reason, 0) + 1
    meta = {
        "bench": "financebench-judge",
        "numeric_fail_reasons_by_human_label": reasons,
        "graded": {"path": str(graded_path), "sha256": sha256_file(graded_path), "n": len(graded)},
        "questions": {
            "path": str(questions_path),
            "sha256": sha256_file(questions_path),
            "n": len(questions),
        },
        "checks_version": CHECKS_VERSION,
        "split": {
            "salt": SPLIT_SALT,
            "A": sum(1 for v in halves.values() if v == "A"),
            "B": sum(1 for v in halves.values() if v == "B"),
            "note": "rules developed looking at half A only; half B estimates unseen questions",
        },
        "human_positive": {"numeric_correct": "Correct Answer", "refusal": "Refusal"},
        "ci": {
            "tpr_tnr": "Wilson score interval (assay.stats.proportion.wilson)",
            "kappa": "percentile bootstrap over answers (assay.stats.calibration)",
            "method": "Wilson for TPR and TNR; percentile bootstrap over answers for kappa",
            "level": 0.95,
            "n_boot": n_boot,
        },
        "citation": "Islam et al. (2023), FinanceBench, arXiv:2311.11944",
    }
    return FinanceBenchReport(rows, meta, judged)


def _rate(k: int, n: int, point: Interval) -> Interval:
    """Wilson's interval for ``k`` of ``n`` (the undefined bootstrap estimate when ``n`` is 0)."""
    if n == 0:
        return point
    w = wilson(k, n, confidence=CI_LEVEL)
    return Interval(w.value, w.low, w.high, CI_LEVEL, RATE_CI_METHOD, None)
