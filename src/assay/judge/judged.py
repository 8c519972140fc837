"""The judged-answers file: what `assay judge run --out` writes and `assay judge calibrate` reads.

`judge_run(...)` returns a report whose `write_rows(path)` writes this file; `read_judged(path)`
reads it back (for `binary_calibration`, `corrected_pass_rate` or your own analysis).

One JSON object per line, one line per judged answer:

    {"id": "q1", "category": "lookup", "judge_hash": "<sha256 of the judge>",
     "supported": true, "matches_reference": false,
     "critiques": {"supported": "...", "matches_reference": "..."},
     "_meta": {...provenance: dataset version, run hash, the judge's identity...}}

The judge's questions are the keys of `critiques`; each has a verdict field that is true, false or
null (the reply could not be read). Every row carries the same `judge_hash`: a calibration holds
for one judge. `read_judged` checks all of this and reports every problem as FILE:LINE: field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._io import iter_jsonl
from assay.errors import DataError, Problem

__all__ = ["JudgedAnswer", "JudgedAnswers", "read_judged"]


@dataclass(frozen=True, slots=True)
class JudgedAnswer:
    """One judged answer: its verdict (True/False/None) and critique per question."""

    id: str
    category: str
    verdicts: dict[str, bool | None]
    critiques: dict[str, str] = field(default_factory=dict)
    line: int = 0


@dataclass(frozen=True, slots=True)
class JudgedAnswers:
    """Every answer one judge judged, as read from a judged-answers file."""

    path: str
    judge_hash: str
    questions: tuple[str, ...]
    rows: tuple[JudgedAnswer, ...]
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rows)

    def verdicts(self, question: str) -> dict[str, bool]:
        """{answer id: verdict} for one question; unreadable replies (null) are left out."""
        if question not in self.questions:
            raise DataError(
                f"not a question of this judge (questions: {', '.join(self.questions)})",
                file=self.path,
                field=question,
            )
        return {r.id: v for r in self.rows if (v := r.verdicts.get(question)) is not None}

    def categories(self) -> dict[str, str]:
        return {r.id: r.category for r in self.rows}


def read_judged(path: str | Path) -> JudgedAnswers:
    """Read and check a judged-answers file; every problem is reported as FILE:LINE: field."""
    file = str(path)
    problems: list[Problem] = []
    rows: list[JudgedAnswer] = []
    seen: dict[str, int] = {}
    judge_hash: str | None = None
    hash_line = 0
    questions: tuple[str, ...] | None = None
    meta: dict[str, Any] = {}
    for line, obj in iter_jsonl(path):
        if not isinstance(obj, dict):
            problems.append(Problem(file, line, None, "expected a JSON object"))
            continue
        before = len(problems)
        rid = obj.get("id")
        if not isinstance(rid, str) or not rid:
            problems.append(Problem(file, line, "id", "required: the answer's entry id (a string)"))
        elif rid in seen:
            problems.append(
                Problem(file, line, "id", f"duplicate id {rid!r} (first on line {seen[rid]})")
            )
        cat = obj.get("category", "(none)")
        if not isinstance(cat, str):
            problems.append(Problem(file, line, "category", f"expected a string, got {cat!r}"))
        jh = obj.get("judge_hash")
        if not isinstance(jh, str) or not jh:
            problems.append(
                Problem(file, line, "judge_hash", "required: the judge's identity hash")
            )
        elif judge_hash is None:
            judge_hash, hash_line = jh, line
        elif jh != judge_hash:
            problems.append(
                Problem(
                    file,
                    line,
                    "judge_hash",
                    f"{jh[:12]} differs from {judge_hash[:12]} on line {hash_line}: "
                    "one file holds one judge's verdicts",
                )
            )
        crit = obj.get("critiques")
        if not isinstance(crit, dict) or not crit:
            problems.append(
                Problem(file, line, "critiques", "required: {question: critique} per question")
            )
            continue
        qs = tuple(str(q) for q in crit)
        if questions is None:
            questions = qs
        elif set(qs) != set(questions):
            problems.append(
                Problem(
                    file,
                    line,
                    "critiques",
                    f"questions {sorted(qs)} differ from the file's {sorted(questions)}",
                )
            )
        verdicts: dict[str, bool | None] = {}
        for q in qs:
            if q not in obj:
                problems.append(Problem(file, line, q, "missing verdict (true, false or null)"))
                continue
            v = obj[q]
            if v is not None and not isinstance(v, bool):
                problems.append(Problem(file, line, q, f"expected true, false or null, got {v!r}"))
                continue
            verdicts[q] = v
        if len(problems) > before:
            continue
        assert isinstance(rid, str) and isinstance(cat, str)
        seen[rid] = line
        if not meta and isinstance(obj.get("_meta"), dict):
            meta = dict(obj["_meta"])
        rows.append(
            JudgedAnswer(rid, cat, verdicts, {str(k): str(v) for k, v in crit.items()}, line)
        )
    if not problems and not rows:
        problems.append(Problem(file, None, None, "no judged answers in the file"))
    if problems:
        raise DataError(problems)
    assert judge_hash is not None and questions is not None
    return JudgedAnswers(file, judge_hash, questions, tuple(rows), meta)
