"""The LLM judge, on a leash.

For what the deterministic checks cannot decide, an OpenAI-compatible chat model is asked
*separate binary questions* about one answer -- is every claim supported by the retrieved context?
does the answer match the reference? -- each with a one-sentence critique, never a 1-10 score.
The judge sees the reference answer, whether the question is answerable and the `as_of` date,
and, when the entry gives them, its expected behaviour and its `acceptable_response_notes` (what
the answer must and must not do). An entry that expects the system to ask for a missing detail
(``clarify``) or to correct a false premise (``correct_premise``) is also asked the behaviour's
own question (`BEHAVIOUR_QUESTIONS`: ``clarify_ok``, ``premise_corrected``); the answer checks of
those names ask it through `LLMJudge.ask` where the entry does not say what to ask or correct.

- Endpoint: any server speaking the OpenAI chat-completions protocol, through `assay.chat.ChatClient`
  (the client the LLM answerer uses too). Base URL, model and key come from the environment
  (`ASSAY_LLM_BASE_URL`, e.g. "http://127.0.0.1:8000/v1", `ASSAY_LLM_MODEL`, `ASSAY_LLM_API_KEY`)
  or are passed in.
- Every call goes through `assay.cache.RequestCache`: a rerun reproduces a judgement exactly
  without calling the model. The cache key holds the base URL, model, messages and settings.
- Identity: `LLMJudge.identity_hash` is the SHA-256 of model, prompts and settings. A calibration
  (`assay judge calibrate --out`) is tied to that hash and stored as
  `<calibration dir>/<hash>.json` (`$ASSAY_JUDGE_CALIBRATIONS`, default
  `.assay/judge-calibrations`) or passed explicitly; the file must be a calibration (its `kind`)
  of this very hash. A report with a judge that has none refuses unless told `uncalibrated=True`
  (then it says so); with one, it reports raw and corrected pass rates
  (see `assay.judge.calibrated`).
- Pairwise mode asks "which answer is better?" in both orders (A,B) and (B,A) and reports position
  disagreement: when the verdict follows the position rather than the answer, the pair is a tie
  and is counted as a position disagreement.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from assay._io import dumps_canonical, iter_jsonl, json_loads, sha256_bytes, write_jsonl_atomic
from assay.chat import ChatClient
from assay.corpus import ChunkTable
from assay.dataset import Dataset, Entry
from assay.errors import DataError, Problem
from assay.judge.bar import WEAK_FLAG, refuse_weak
from assay.judge.calibrated import (
    CorrectedRate,
    JudgeCalibration,
    JudgeReport,
    corrected_rates,
    find_calibration,
    refuse_uncalibrated,
    uncalibrated_warning,
)
from assay.judge.report import CI_METHOD, rate_table
from assay.report import ReportMixin, Tabular
from assay.runs import Run, RunRow

__all__ = [
    "BEHAVIOUR_QUESTIONS",
    "CRITERIA_QUESTIONS",
    "DEFAULT_QUESTIONS",
    "LENGTH_BINS",
    "BinaryVerdict",
    "FewShot",
    "JudgeInput",
    "JudgeSettings",
    "JudgedRow",
    "LLMJudge",
    "PairwiseReport",
    "PairwiseResult",
    "judge_input",
    "judge_pairwise",
    "judge_run",
    "length_bias",
    "load_fewshot",
    "model_family",
]

PROMPT_VERSION = "judge-prompts-2"


DEFAULT_QUESTIONS: dict[str, str] = {
    "supported": (
        "Is every factual claim in the ANSWER supported by the RETRIEVED CONTEXT? Figures must "
        "appear in the context (or follow from it by plain arithmetic) for the right period."
    ),
    "matches_reference": (
        "Does the ANSWER state the same facts and figures as the REFERENCE ANSWER (allowing for "
        "rounding and wording), for the same company and period? If the question is marked "
        "unanswerable, the answer matches only if it declines or says the filings searched do "
        "not contain it."
    ),
}

BEHAVIOUR_QUESTIONS: dict[str, tuple[str, str]] = {
    "clarify": (
        "clarify_ok",
        "The QUESTION is ambiguous: it can be read more than one way (which company, which "
        "period, which measure). Does the ANSWER ask which reading is meant, or answer every "
        "reading, naming each, instead of silently picking one? An answer that picks one "
        "reading without saying so is 'no'; a refusal that neither asks nor names the readings "
        "is 'no'. An answer that does what the ACCEPTABLE RESPONSE NOTES forbid is 'no'.",
    ),
    "correct_premise": (
        "premise_corrected",
        "The QUESTION rests on a false premise (it assumes something the filings contradict, "
        "such as a figure that is not disclosed for that period). Does the ANSWER say which "
        "assumption is false, rather than answering as if it held? An answer that gives a "
        "figure as if the premise were true is 'no'; a refusal that does not name the false "
        "premise is 'no'. An answer that does what the ACCEPTABLE RESPONSE NOTES forbid is "
        "'no'.",
    ),
}
"""expected behaviour -> (the question's name, the question) asked of entries that expect it."""

SYSTEM_PROMPT = (
    "You grade answers to questions about financial filings. You answer one yes/no question at a "
    'time. Reply with a JSON object only: {"verdict": "yes" or "no", "critique": one '
    "sentence giving the decisive reason}. Never give a score."
)

PAIRWISE_PROMPT = (
    "Which answer is better for the question, judged against the reference answer and the "
    "context: correct figures for the right period first, then completeness? Reply with a JSON "
    'object only: {"winner": "1" or "2" or "tie", "critique": one sentence}.'
)


@dataclass(frozen=True, slots=True)
class JudgeSettings:
    """Everything besides the prompts that changes what the judge says."""

    model: str
    temperature: float = 0.0
    max_tokens: int = 200
    seed: int | None = 0


@dataclass(frozen=True, slots=True)
class JudgeInput:
    """What the judge sees about one answer."""

    question: str
    answer: str
    reference: str | None = None
    answerable: bool | str = True
    as_of: dt.date | str | None = None
    context: Sequence[str] = ()
    expected_behavior: str | None = None
    notes: str | None = None  # the entry's acceptable_response_notes


# the workbench's judging criteria -> the judge's questions they decide
CRITERIA_QUESTIONS: dict[str, str] = {"correct": "matches_reference", "faithful": "supported"}


@dataclass(frozen=True, slots=True)
class FewShot:
    """One adjudicated judging case: the question, the answer, the experts' verdict per judge
    question (True = yes) and their critiques."""

    query: str
    answer: str
    verdicts: dict[str, bool]
    critiques: dict[str, str] = field(default_factory=dict)


def load_fewshot(path: str | Path) -> list[FewShot]:
    """The few-shot examples `assay workbench export --fewshot` writes (adjudicated hard
    judging cases): their criteria verdicts mapped to the judge's questions (`correct` decides
    matches_reference, `faithful` decides supported). Every bad line is a `DataError` naming
    FILE:LINE: field."""
    out: list[FewShot] = []
    problems: list[Problem] = []
    for line, row in iter_jsonl(path):
        if not isinstance(row, dict):
            problems.append(Problem(str(path), line, None, "expected a JSON object"))
            continue
        for f in ("query", "answer", "verdicts"):
            if not row.get(f):
                problems.append(Problem(str(path), line, f, "missing"))
        verdicts = row.get("verdicts")
        if not isinstance(verdicts, dict) or not isinstance(row.get("query"), str):
            continue
        mapped: dict[str, bool] = {}
        crit: dict[str, str] = {}
        critiques = row.get("critiques") if isinstance(row.get("critiques"), dict) else {}
        for criterion, question in CRITERIA_QUESTIONS.items():
            v = verdicts.get(criterion)
            if v is None:
                continue
            if isinstance(v, str) and v.lower() in ("pass", "fail", "yes", "no", "true", "false"):
                mapped[question] = v.lower() in ("pass", "yes", "true")
            elif isinstance(v, bool):
                mapped[question] = v
            else:
                problems.append(
                    Problem(str(path), line, f"verdicts.{criterion}", f"not pass/fail: {v!r}")
                )
                continue
            c = critiques.get(criterion) if isinstance(critiques, dict) else None
            if isinstance(c, str):
                crit[question] = c
        if mapped:
            out.append(FewShot(str(row["query"]), str(row.get("answer", "")), mapped, crit))
    if problems:
        raise DataError(problems)
    return out


_FAMILIES = (
    ("gpt", r"gpt|^o\d|chatgpt|davinci|openai"),
    ("claude", r"claude|anthropic"),
    ("llama", r"llama"),
    ("mistral", r"mistral|mixtral|codestral|ministral"),
    ("gemini", r"gemini|gemma|palm|bard|google"),
    ("qwen", r"qwen"),
    ("deepseek", r"deepseek"),
    ("phi", r"\bphi"),
    ("command", r"command|cohere"),
)


def model_family(model: str) -> str:
    """The family of a model name ("gpt-4o-mini" -> "gpt", "meta-llama/Llama-3.1-70B" ->
    "llama", "claude-3-5-sonnet" -> "claude"); unknown names give their first word."""
    low = model.lower()
    for family, pattern in _FAMILIES:
        if re.search(pattern, low):
            return family
    base = low.rsplit("/", 1)[-1]
    m = re.match(r"[a-z]+", base)
    return m.group(0) if m else base


LENGTH_BINS: tuple[tuple[str, int, int | None], ...] = (
    ("short (<= 25 words)", 0, 25),
    ("medium (26-80 words)", 26, 80),
    ("long (> 80 words)", 81, None),
)


def length_bias(
    rows: Sequence[Mapping[str, Any]], lengths: Mapping[str, int], question: str
) -> dict[str, Any]:
    """The judge's pass rate on `question` by answer length (`LENGTH_BINS`), with Fisher's
    exact test of the shortest against the longest bin that have answers: `flag` when p <
    0.05. A judge whose verdict follows length is a judge to distrust (or the answers of one
    length really are worse: read the critiques)."""
    from scipy.stats import fisher_exact

    bins: list[dict[str, Any]] = []
    for name, lo, hi in LENGTH_BINS:
        vals = [
            bool(r[question])
            for r in rows
            if r.get(question) is not None
            and lo <= lengths.get(str(r["id"]), -1)
            and (hi is None or lengths.get(str(r["id"]), -1) <= hi)
        ]
        bins.append({"bin": name, "n": len(vals), "passed": sum(vals),
                     "rate": sum(vals) / len(vals) if vals else None})  # fmt: skip
    filled = [b for b in bins if b["n"]]
    p = None
    if len(filled) >= 2:
        a, b = filled[0], filled[-1]
        table = [[a["passed"], a["n"] - a["passed"]], [b["passed"], b["n"] - b["passed"]]]
        p = float(fisher_exact(table)[1])
    return {"question": question, "bins": bins, "p": p, "flag": p is not None and p < 0.05}


@dataclass(frozen=True, slots=True)
class BinaryVerdict:
    """One yes/no judgement; `passed` is None when the reply could not be read."""

    question: str
    passed: bool | None
    critique: str
    raw: str = ""


@dataclass(frozen=True, slots=True)
class PairwiseResult:
    """Both orders of one pairwise comparison."""

    first_order: Literal["a", "b", "tie", "unreadable"]  # verdict with a shown first
    second_order: Literal["a", "b", "tie", "unreadable"]  # verdict with b shown first
    critiques: tuple[str, str] = ("", "")

    @property
    def position_disagreement(self) -> bool:
        """The two orders disagree: the verdict followed the position, not the answer."""
        return self.first_order != self.second_order

    @property
    def winner(self) -> Literal["a", "b", "tie"]:
        if self.position_disagreement or self.first_order == "unreadable":
            return "tie"
        return self.first_order


_JSON_RE = re.compile(r"\{.*\}", re.DOTALL)


def _parse_json_reply(text: str) -> dict[str, Any] | None:
    m = _JSON_RE.search(text)
    if not m:
        return None
    try:
        obj = json_loads(m.group(0))
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _parse_verdict(text: str) -> tuple[bool | None, str]:
    obj = _parse_json_reply(text)
    if obj is not None:
        v = str(obj.get("verdict", "")).strip().lower()
        crit = _one_sentence(str(obj.get("critique", "")))
        if v in ("yes", "true", "pass"):
            return True, crit
        if v in ("no", "false", "fail"):
            return False, crit
        return None, crit
    m = re.match(r"\s*(yes|no)\b[\s.:,-]*(.*)", text, re.IGNORECASE | re.DOTALL)
    if m:
        return m.group(1).lower() == "yes", _one_sentence(m.group(2))
    return None, _one_sentence(text)


def _one_sentence(text: str) -> str:
    text = " ".join(text.split())
    m = re.match(r"(.+?[.!?])(?:\s|$)", text)
    return m.group(1) if m else text


def _context_block(ctx: Sequence[str], limit: int = 12000) -> str:
    parts: list[str] = []
    used = 0
    for i, c in enumerate(ctx, 1):
        piece = f"[{i}] {c.strip()}"
        if used + len(piece) > limit:
            parts.append(f"[{i}] ... (truncated)")
            break
        parts.append(piece)
        used += len(piece)
    return "\n".join(parts) if parts else "(none)"


class LLMJudge:
    """Binary questions and pairwise comparisons, with an identity hash for calibration."""

    def __init__(
        self,
        client: ChatClient,
        *,
        questions: Mapping[str, str] | None = None,
        settings: JudgeSettings | None = None,
        fewshot: Sequence[FewShot] = (),
        behaviour_questions: Mapping[str, tuple[str, str]] | None = None,
    ):
        self.client = client
        self.questions = dict(DEFAULT_QUESTIONS if questions is None else questions)
        self.behaviour_questions = dict(
            BEHAVIOUR_QUESTIONS if behaviour_questions is None else behaviour_questions
        )
        self.settings = settings or JudgeSettings(model=client.model)
        self.fewshot = tuple(fewshot)

    @property
    def identity(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": self.settings.model,
            "settings": asdict(self.settings),
            "system_prompt": SYSTEM_PROMPT,
            "pairwise_prompt": PAIRWISE_PROMPT,
            "questions": self.questions,
            "behaviour_questions": {k: list(v) for k, v in self.behaviour_questions.items()},
            "prompt_version": PROMPT_VERSION,
        }
        if self.fewshot:  # the examples are part of the prompt: another judge, another hash
            out["fewshot"] = [asdict(f) for f in self.fewshot]
        return out

    @property
    def identity_hash(self) -> str:
        """SHA-256 of model + prompts + settings: a calibration holds for this hash only."""
        return sha256_bytes(dumps_canonical(self.identity).encode("utf-8"))

    def _user_prompt(self, item: JudgeInput, question: str) -> str:
        answerable = {True: "yes", False: "no", "partial": "partially"}.get(item.answerable, "yes")
        # an entry's expected behaviour (other than answering) and its notes are shown when it
        # has them: an entry to answer without notes is asked what judge-prompts-1 asked
        expected = (
            f"EXPECTED BEHAVIOUR: {item.expected_behavior}\n"
            if item.expected_behavior not in (None, "answer")
            else ""
        )
        notes = (
            f"ACCEPTABLE RESPONSE NOTES (what the answer must and must not do): {item.notes}\n"
            if item.notes
            else ""
        )
        return (
            f"QUESTION: {item.question}\n"
            f"AS OF: {item.as_of or 'not stated'}\n"
            f"ANSWERABLE FROM THE FILINGS: {answerable}\n"
            f"{expected}{notes}"
            f"REFERENCE ANSWER: {item.reference or '(none)'}\n"
            f"RETRIEVED CONTEXT:\n{_context_block(item.context)}\n"
            f"ANSWER: {item.answer}\n\n"
            f"YES/NO QUESTION: {question}"
        )

    def _ask(self, user: str, system: str) -> str:
        return self.client.complete(
            [{"role": "system", "content": system}, {"role": "user", "content": user}],
            temperature=self.settings.temperature,
            max_tokens=self.settings.max_tokens,
            seed=self.settings.seed,
        )

    def _examples(self, name: str) -> str:
        """The adjudicated examples that decide question `name`, as a prompt preamble."""
        shots = [f for f in self.fewshot if name in f.verdicts]
        if not shots:
            return ""
        parts = ["EXAMPLES ADJUDICATED BY EXPERTS (for calibration; grade the case below):"]
        for i, f in enumerate(shots, 1):
            v = "yes" if f.verdicts[name] else "no"
            crit = f.critiques.get(name, "")
            parts.append(
                f"EXAMPLE {i}\nQUESTION: {f.query}\nANSWER: {f.answer}\n"
                f'VERDICT: {{"verdict": "{v}", "critique": {json.dumps(crit)}}}'
            )
        return "\n\n".join(parts) + "\n\nCASE TO GRADE\n"

    def questions_for(self, item: JudgeInput) -> dict[str, str]:
        """The questions asked about `item`: the judge's questions, then its expected
        behaviour's own question when it has one (`BEHAVIOUR_QUESTIONS`)."""
        out = dict(self.questions)
        extra = self.behaviour_questions.get(str(item.expected_behavior))
        if extra is not None:
            out.setdefault(*extra)
        return out

    def ask(self, name: str, item: JudgeInput) -> BinaryVerdict:
        """Ask the question `name` (one of `questions_for(item)`) about one answer."""
        asked = self.questions_for(item)
        if name not in asked:
            raise KeyError(f"the judge asks no question {name!r} about this entry")
        raw = self._ask(self._examples(name) + self._user_prompt(item, asked[name]), SYSTEM_PROMPT)
        passed, critique = _parse_verdict(raw)
        return BinaryVerdict(name, passed, critique, raw)

    def judge(self, item: JudgeInput) -> dict[str, BinaryVerdict]:
        """Ask every binary question separately about one answer (after the adjudicated
        few-shot examples for that question, when the judge has any), and the question of the
        entry's expected behaviour when it has one (clarify, correct_premise)."""
        return {name: self.ask(name, item) for name in self.questions_for(item)}

    def _pair(self, item: JudgeInput, first: str, second: str) -> tuple[str, str]:
        user = (
            f"QUESTION: {item.question}\nAS OF: {item.as_of or 'not stated'}\n"
            f"REFERENCE ANSWER: {item.reference or '(none)'}\n"
            f"RETRIEVED CONTEXT:\n{_context_block(item.context)}\n"
            f"ANSWER 1: {first}\nANSWER 2: {second}\n\n{PAIRWISE_PROMPT}"
        )
        raw = self._ask(user, SYSTEM_PROMPT)
        obj = _parse_json_reply(raw)
        if obj is None:
            return "unreadable", _one_sentence(raw)
        w = str(obj.get("winner", "")).strip().lower()
        return (w if w in ("1", "2", "tie") else "unreadable"), _one_sentence(
            str(obj.get("critique", ""))
        )

    def pairwise(self, item: JudgeInput, answer_a: str, answer_b: str) -> PairwiseResult:
        """Compare two answers in both orders; `item.answer` is ignored."""
        w1, c1 = self._pair(item, answer_a, answer_b)
        w2, c2 = self._pair(item, answer_b, answer_a)
        first = {"1": "a", "2": "b", "tie": "tie"}.get(w1, "unreadable")
        second = {"1": "b", "2": "a", "tie": "tie"}.get(w2, "unreadable")
        return PairwiseResult(first, second, (c1, c2))  # type: ignore[arg-type]


@dataclass
class JudgedRow:
    """One judged answer as written by `assay judge run`."""

    id: str
    category: str
    verdicts: dict[str, BinaryVerdict] = field(default_factory=dict)

    def to_dict(self, judge_hash: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "judge_hash": judge_hash,
            **{k: v.passed for k, v in self.verdicts.items()},
            "critiques": {k: v.critique for k, v in self.verdicts.items()},
        }


def _context_for(row: RunRow, chunk_text: Mapping[str, str] | None, k: int) -> list[str]:
    if chunk_text is None:
        return []
    ids = list(row.citations or []) or [h.chunk_id for h in (row.retrieved or [])[:k]]
    return [chunk_text[c] for c in ids if c in chunk_text]


def judge_input(entry: Entry, answer: str, context: Sequence[str]) -> JudgeInput:
    """What the judge sees of one entry's answer (`context`: the chunk texts it may read)."""
    return JudgeInput(
        question=entry.query,
        answer=answer,
        reference=entry.reference_answer,
        answerable=entry.answerable,
        as_of=entry.as_of,
        context=tuple(context),
        expected_behavior=entry.behavior().value,
        notes=entry.acceptable_response_notes,
    )


def _calibration_state(
    judge: LLMJudge,
    calibration: str | Path | None,
    calibrations: str | Path | None,
    uncalibrated: bool,
    accept_weak_calibration: bool = False,
    dataset: Dataset | None = None,
) -> tuple[JudgeCalibration | None, list[str]]:
    """The judge's calibration, or the refusal; with `uncalibrated`, the warning instead. A
    calibration below the bar (`assay.judge.bar`; the categories `dataset`'s manifest declares
    high-risk held to the high-risk floors) is refused unless `accept_weak_calibration`, and
    then every report that uses it carries the warning."""
    cal = find_calibration(judge.identity_hash, path=calibration, directory=calibrations)
    if cal is not None:
        if dataset is not None:
            from assay.dataset import high_risk_categories

            cal = cal.with_high_risk(high_risk_categories(dataset))
        short = cal.shortfalls
        if not short:
            return cal, []
        if not accept_weak_calibration:
            raise refuse_weak(f"the calibration {cal.path}", short)
        return cal, [
            f"WEAK CALIBRATION accepted ({WEAK_FLAG}): {cal.path} is below the bar: "
            + "; ".join(short)
        ]
    if not uncalibrated:
        raise refuse_uncalibrated(judge.identity_hash, calibrations)
    warn = uncalibrated_warning(judge.identity_hash, calibrations)
    return None, [warn] if warn else []


def judge_run(
    dataset: Dataset,
    run: Run,
    judge: LLMJudge,
    *,
    chunks: ChunkTable | None = None,
    k: int = 5,
    rng: np.random.Generator | None = None,
    n_boot: int = 1000,
    calibration: str | Path | None = None,
    calibrations: str | Path | None = None,
    uncalibrated: bool = False,
    on_item: Callable[[], None] | None = None,
    accept_weak_calibration: bool = False,
) -> JudgeReport:
    """Ask the judge's binary questions about every answered entry; rates per category with CIs.

    The context the judge sees is the cited chunks (else the top `k` retrieved) from `chunks`.
    The judge must be calibrated: `calibration` names its calibration file, else the one for its
    identity hash in `calibrations` (default `$ASSAY_JUDGE_CALIBRATIONS`) is used. Without one
    this raises `UncalibratedJudge` before any model call, unless `uncalibrated=True`: the report
    then carries the uncalibrated warning and `calibrated=False`. With one, the report gives the
    calibrated question's raw pass rate beside the Rogan-Gladen and PPI corrected rates. A
    calibration below the bar (`assay.judge.bar`) raises `WeakCalibration` unless
    `accept_weak_calibration`, which the report then records (title, warnings, calibration).
    """
    cal, warnings = _calibration_state(
        judge, calibration, calibrations, uncalibrated, accept_weak_calibration, dataset
    )
    rng = rng if rng is not None else np.random.default_rng(0)
    chunk_text = {c.chunk_id: c.text for c in chunks} if chunks is not None else None
    rows: list[dict[str, Any]] = []
    for entry in dataset.entries:
        if entry.id not in run:
            continue
        rr = run.row(entry.id)
        if rr.answer is None:
            continue
        verdicts = judge.judge(judge_input(entry, rr.answer, _context_for(rr, chunk_text, k)))
        rows.append(JudgedRow(entry.id, entry.category, verdicts).to_dict(judge.identity_hash))
        if on_item is not None:
            on_item()
    asked = {k for r in rows for k in r.get("critiques", {})}
    names = [*judge.questions, *(n for n, _ in judge.behaviour_questions.values() if n in asked)]
    guards = _guards(judge, run, rows, names)
    warnings.extend(guards.pop("warnings"))
    corrected: list[CorrectedRate] = []
    if cal is not None:
        if cal.question in names:
            corrected = corrected_rates(rows, cal)
        else:
            warnings.append(
                f"the calibration measured question {cal.question!r}, which this judge does not "
                f"ask ({', '.join(names)}): no corrected rate"
            )
    title = f"LLM judge {judge.identity_hash[:12]} (pass rate [95% CI])"
    if cal is None:
        title += " -- UNCALIBRATED: rates uncorrected"
    elif cal.shortfalls:
        title += " -- WEAK CALIBRATION accepted"
    return JudgeReport(
        rows=rows,
        checks=names,
        rates=rate_table(rows, names, rng, n_boot),
        meta={
            "dataset": {"path": dataset.path, "version": dataset.version},
            "run": {"path": run.path, "hash": run.hash},
            "judge": {"hash": judge.identity_hash, **judge.identity},
            "endpoint": judge.client.base_url,
            "ci": {"method": CI_METHOD, "level": 0.95, "n_boot": n_boot},
            "guards": guards,
        },
        warnings=warnings,
        title=title,
        calibrated=cal is not None,
        calibration=cal,
        corrected=corrected,
    )


def _guards(
    judge: LLMJudge, run: Run, rows: Sequence[Mapping[str, Any]], names: Sequence[str]
) -> dict[str, Any]:
    """Length bias per question and same-family judging (the judge's model family equals that
    of a model that wrote the answers, as the run rows' `extra.cost.model` record it)."""
    lengths: dict[str, int] = {}
    answer_models: set[str] = set()
    for r in rows:
        rid = str(r["id"])
        if rid in run:
            row = run.row(rid)
            lengths[rid] = len((row.answer or "").split())
            cost = row.extra.get("cost")
            if isinstance(cost, dict) and isinstance(cost.get("model"), str):
                answer_models.add(cost["model"])
    warnings: list[str] = []
    length = [length_bias(rows, lengths, q) for q in names]
    for lb in length:
        if lb["flag"]:
            shown = ", ".join(
                f"{b['bin']} {b['rate']:.2f} (n={b['n']})" for b in lb["bins"] if b["n"]
            )
            warnings.append(
                f"length bias: the judge's pass rate on {lb['question']} varies with answer "
                f"length ({shown}; Fisher p={lb['p']:.3g}): check the critiques"
            )
    family = model_family(judge.settings.model)
    same = sorted(m for m in answer_models if model_family(m) == family)
    if same:
        warnings.append(
            f"same-family judging: the judge ({judge.settings.model}) is of the {family} family, "
            f"like the answerer ({', '.join(same)}): it may favour its own family's answers"
        )
    return {
        "length": length,
        "same_family": {
            "judge_family": family,
            "answer_models": sorted(answer_models),
            "flag": bool(same),
        },
        "warnings": warnings,
    }


@dataclass
class PairwiseReport(ReportMixin):
    """Two runs' answers compared by the judge in both orders: wins, ties, position bias."""

    items: list[dict[str, Any]]
    judge_hash: str
    calibrated: bool
    warnings: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.items)

    def _count(self, key: str, value: Any = True) -> int:
        return sum(1 for i in self.items if i[key] == value)

    def summary(self) -> dict[str, Any]:
        n = self.n
        pos = self._count("position_disagreement")
        return {
            "n": n,
            "a_wins": self._count("winner", "a"),
            "b_wins": self._count("winner", "b"),
            "ties": self._count("winner", "tie"),
            "position_disagreements": pos,
            "position_disagreement_rate": pos / n if n else None,
            "judge": self.judge_hash,
            "calibrated": self.calibrated,
            "warnings": list(self.warnings),
        }

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary(), "meta": self.meta, "items": self.items}

    def tabular(self) -> Tabular:
        s = self.summary()
        rate = s["position_disagreement_rate"]
        title = f"LLM judge {self.judge_hash[:12]}: pairwise, both orders"
        if not self.calibrated:
            title += " -- UNCALIBRATED"
        return Tabular(
            title=title,
            header=["answers", "A wins", "B wins", "ties", "position disagreements"],
            rows=[
                [
                    str(s["n"]),
                    str(s["a_wins"]),
                    str(s["b_wins"]),
                    str(s["ties"]),
                    f"{s['position_disagreements']}" + ("" if rate is None else f" ({rate:.2f})"),
                ]
            ],
            footer=list(self.warnings),
        )

    def write_rows(self, path: str | Path) -> None:
        """Write each pair's verdicts (JSONL, atomically), stamped with the report's `_meta`."""
        write_jsonl_atomic(
            path,
            ({**i, "judge_hash": self.judge_hash, "_meta": self.meta} for i in self.items),
        )


def judge_pairwise(
    dataset: Dataset,
    run_a: Run,
    run_b: Run,
    judge: LLMJudge,
    *,
    chunks: ChunkTable | None = None,
    k: int = 5,
    calibration: str | Path | None = None,
    calibrations: str | Path | None = None,
    uncalibrated: bool = False,
    on_item: Callable[[], None] | None = None,
    accept_weak_calibration: bool = False,
) -> PairwiseReport:
    """Pairwise comparison of two runs' answers, both orders; wins, ties, position disagreement.

    Refuses a judge without a calibration, or with one below the bar, like `judge_run` (unless
    `uncalibrated=True`, `accept_weak_calibration=True`).
    """
    cal, warnings = _calibration_state(
        judge, calibration, calibrations, uncalibrated, accept_weak_calibration, dataset
    )
    chunk_text = {c.chunk_id: c.text for c in chunks} if chunks is not None else None
    items: list[dict[str, Any]] = []
    for entry in dataset.entries:
        if entry.id not in run_a or entry.id not in run_b:
            continue
        ra, rb = run_a.row(entry.id), run_b.row(entry.id)
        if ra.answer is None or rb.answer is None:
            continue
        ctx = _context_for(ra, chunk_text, k) + _context_for(rb, chunk_text, k)
        res = judge.pairwise(judge_input(entry, "", list(dict.fromkeys(ctx))), ra.answer, rb.answer)
        items.append(
            {
                "id": entry.id,
                "category": entry.category,
                "a_first": res.first_order,
                "b_first": res.second_order,
                "winner": res.winner,
                "position_disagreement": res.position_disagreement,
                "critiques": list(res.critiques),
            }
        )
        if on_item is not None:
            on_item()
    return PairwiseReport(
        items,
        judge.identity_hash,
        cal is not None,
        warnings,
        {
            "dataset_version": dataset.version,
            "run_a": run_a.hash,
            "run_b": run_b.hash,
            "judge": {"hash": judge.identity_hash, **judge.identity},
            "calibration": None
            if cal is None
            else {
                "path": cal.path,
                "bar_met": not cal.shortfalls,
                "accepted_weak": bool(cal.shortfalls),
                "shortfalls": cal.shortfalls,
                "high_risk": list(cal.high_risk),
                "failed_slices": cal.bar().failed,
            },
        },
    )
