"""The LLM judge, on a leash.

For what the deterministic checks cannot decide, an OpenAI-compatible chat model is asked
*separate binary questions* about one answer -- is every claim supported by the retrieved context?
does the answer match the reference? -- each with a one-sentence critique, never a 1-10 score.
The judge sees the reference answer, whether the question is answerable and the `as_of` date.

- Endpoint: any server speaking the OpenAI chat-completions protocol, through `assay.chat.ChatClient`
  (the client the LLM answerer uses too). Base URL, model and key come from the environment
  (`ASSAY_LLM_BASE_URL`, e.g. "http://127.0.0.1:8000/v1", `ASSAY_LLM_MODEL`, `ASSAY_LLM_API_KEY`)
  or are passed in.
- Every call goes through `assay.cache.RequestCache`: a rerun reproduces a judgement exactly
  without calling the model. The cache key holds the base URL, model, messages and settings.
- Identity: `LLMJudge.identity_hash` is the SHA-256 of model, prompts and settings. A calibration
  (`assay judge calibrate --out`) is tied to that hash and stored as
  `<calibration dir>/<hash>.json` (`$ASSAY_JUDGE_CALIBRATIONS`, default
  `.assay/judge-calibrations`); the file must be a calibration (its `kind`) of this very hash.
  Reporting with a judge whose hash has none prints `uncalibrated_warning(...)` on every report.
- Pairwise mode asks "which answer is better?" in both orders (A,B) and (B,A) and reports position
  disagreement: when the verdict follows the position rather than the answer, the pair is a tie
  and is counted as a position disagreement.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from assay._io import dumps_canonical, sha256_bytes
from assay.chat import ChatClient
from assay.corpus.chunks import ChunkTable
from assay.dataset.io import Dataset
from assay.dataset.schema import Entry
from assay.errors import DataError
from assay.judge.report import CheckReport, rate_table
from assay.runs import Run, RunRow

__all__ = [
    "DEFAULT_QUESTIONS",
    "ENV_CALIBRATIONS",
    "BinaryVerdict",
    "JudgeInput",
    "JudgeSettings",
    "LLMJudge",
    "PairwiseResult",
    "calibration_dir",
    "calibration_path",
    "has_calibration",
    "judge_pairwise",
    "judge_run",
    "uncalibrated_warning",
]

ENV_CALIBRATIONS = "ASSAY_JUDGE_CALIBRATIONS"
PROMPT_VERSION = "judge-prompts-1"


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
        obj = json.loads(m.group(0))
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
    ):
        self.client = client
        self.questions = dict(DEFAULT_QUESTIONS if questions is None else questions)
        self.settings = settings or JudgeSettings(model=client.model)

    @property
    def identity(self) -> dict[str, Any]:
        return {
            "model": self.settings.model,
            "settings": asdict(self.settings),
            "system_prompt": SYSTEM_PROMPT,
            "pairwise_prompt": PAIRWISE_PROMPT,
            "questions": self.questions,
            "prompt_version": PROMPT_VERSION,
        }

    @property
    def identity_hash(self) -> str:
        """SHA-256 of model + prompts + settings: a calibration holds for this hash only."""
        return sha256_bytes(dumps_canonical(self.identity).encode("utf-8"))

    def _user_prompt(self, item: JudgeInput, question: str) -> str:
        answerable = {True: "yes", False: "no", "partial": "partially"}.get(item.answerable, "yes")
        return (
            f"QUESTION: {item.question}\n"
            f"AS OF: {item.as_of or 'not stated'}\n"
            f"ANSWERABLE FROM THE FILINGS: {answerable}\n"
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

    def judge(self, item: JudgeInput) -> dict[str, BinaryVerdict]:
        """Ask every binary question separately about one answer."""
        out: dict[str, BinaryVerdict] = {}
        for name, q in self.questions.items():
            raw = self._ask(self._user_prompt(item, q), SYSTEM_PROMPT)
            passed, critique = _parse_verdict(raw)
            out[name] = BinaryVerdict(name, passed, critique, raw)
        return out

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


# ------------------------------------------------------------------------------- calibrations


def calibration_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get(ENV_CALIBRATIONS, ".assay/judge-calibrations"))


def calibration_path(judge_hash: str, directory: str | Path | None = None) -> Path:
    """Where the calibration of the judge with this identity hash lives."""
    base = Path(directory) if directory is not None else calibration_dir()
    return base / f"{judge_hash}.json"


def has_calibration(judge_hash: str, directory: str | Path | None = None) -> bool:
    """A calibration file written by `assay judge calibrate --out` exists for exactly this hash."""
    from assay.stats.calibration import read_calibration

    path = calibration_path(judge_hash, directory)
    if not path.is_file():
        return False
    try:
        data = read_calibration(path)
    except DataError:
        return False
    return data.get("judge_hash") == judge_hash


def uncalibrated_warning(judge_hash: str, directory: str | Path | None = None) -> str | None:
    """The warning every report prints for a judge without a calibration (None when calibrated)."""
    if has_calibration(judge_hash, directory):
        return None
    return (
        f"WARNING: LLM judge {judge_hash[:12]} has no calibration (no valid "
        f"{calibration_path(judge_hash, directory)}); its pass rates are uncorrected and may be "
        "biased. Calibrate it against expert labels: `assay judge calibrate --human LABELS "
        f"--judge JUDGED --judge-field matches_reference --out {calibration_path(judge_hash, directory)}`."
    )


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
    ids = list(row.citations or []) or [h.chunk_id for h in row.retrieved[:k]]
    return [chunk_text[c] for c in ids if c in chunk_text]


def _item(entry: Entry, answer: str, context: Sequence[str]) -> JudgeInput:
    return JudgeInput(
        question=entry.query,
        answer=answer,
        reference=entry.reference_answer,
        answerable=entry.answerable,
        as_of=entry.as_of,
        context=tuple(context),
    )


def judge_run(
    dataset: Dataset,
    run: Run,
    judge: LLMJudge,
    *,
    chunks: ChunkTable | None = None,
    k: int = 5,
    rng: np.random.Generator | None = None,
    n_boot: int = 1000,
    calibrations: str | Path | None = None,
    on_item: Callable[[], None] | None = None,
) -> CheckReport:
    """Ask the judge's binary questions about every answered entry; rates per category with CIs.

    The context the judge sees is the cited chunks (else the top `k` retrieved) from `chunks`.
    The report carries the uncalibrated-judge warning when the judge's hash has no calibration.
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    chunk_text = {c.chunk_id: c.text for c in chunks} if chunks is not None else None
    rows: list[dict[str, Any]] = []
    for entry in dataset.entries:
        if entry.id not in run:
            continue
        rr = run.row(entry.id)
        if rr.answer is None:
            continue
        verdicts = judge.judge(_item(entry, rr.answer, _context_for(rr, chunk_text, k)))
        rows.append(JudgedRow(entry.id, entry.category, verdicts).to_dict(judge.identity_hash))
        if on_item is not None:
            on_item()
    names = list(judge.questions)
    warn = uncalibrated_warning(judge.identity_hash, calibrations)
    return CheckReport(
        rows=rows,
        checks=names,
        rates=rate_table(rows, names, rng, n_boot),
        meta={
            "dataset": {"path": dataset.path, "version": dataset.version},
            "run": {"path": run.path, "hash": run.hash},
            "judge": {"hash": judge.identity_hash, **judge.identity},
            "endpoint": judge.client.base_url,
            "ci": {"method": "percentile bootstrap over entries", "level": 0.95, "n_boot": n_boot},
        },
        warnings=[warn] if warn else [],
    )


def judge_pairwise(
    dataset: Dataset,
    run_a: Run,
    run_b: Run,
    judge: LLMJudge,
    *,
    chunks: ChunkTable | None = None,
    k: int = 5,
    calibrations: str | Path | None = None,
    on_item: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Pairwise comparison of two runs' answers, both orders; wins, ties, position disagreement."""
    chunk_text = {c.chunk_id: c.text for c in chunks} if chunks is not None else None
    items: list[dict[str, Any]] = []
    for entry in dataset.entries:
        if entry.id not in run_a or entry.id not in run_b:
            continue
        ra, rb = run_a.row(entry.id), run_b.row(entry.id)
        if ra.answer is None or rb.answer is None:
            continue
        ctx = _context_for(ra, chunk_text, k) + _context_for(rb, chunk_text, k)
        res = judge.pairwise(_item(entry, "", list(dict.fromkeys(ctx))), ra.answer, rb.answer)
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
    n = len(items)
    warn = uncalibrated_warning(judge.identity_hash, calibrations)
    return {
        "n": n,
        "a_wins": sum(i["winner"] == "a" for i in items),
        "b_wins": sum(i["winner"] == "b" for i in items),
        "ties": sum(i["winner"] == "tie" for i in items),
        "position_disagreements": sum(i["position_disagreement"] for i in items),
        "position_disagreement_rate": (
            sum(i["position_disagreement"] for i in items) / n if n else None
        ),
        "judge": judge.identity_hash,
        "warnings": [warn] if warn else [],
        "items": items,
    }
