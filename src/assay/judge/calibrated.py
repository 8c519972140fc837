"""An LLM judge grades only once calibrated: calibration files, the refusal, corrected pass rates.

A calibration (`assay judge calibrate --out`) measures one judge -- identified by its identity
hash, `LLMJudge.identity_hash` -- against expert labels on one of its questions. It is found
either as the file passed explicitly (`--calibration FILE`) or as
`<calibration dir>/<judge hash>.json` (`$ASSAY_JUDGE_CALIBRATIONS`, default
`.assay/judge-calibrations`).

- A report that uses a judge without a calibration refuses (`UncalibratedJudge`, exit 2) unless
  the caller allows it (`--uncalibrated`); the report then says so in its title, its warnings and
  `calibrated: false`.
- With a calibration, the judge's raw pass rate on the run is reported beside the corrected rate
  for the calibrated question, per category and overall: Rogan-Gladen (TPR/TNR from the
  calibration's confusion counts, delta-method interval) and prediction-powered inference (PPI,
  the calibration's labelled pairs rectifying the judge's verdicts on this run), both from
  `assay.stats.calibration.corrected_pass_rate`. A category the calibration measured with both
  human passes and human fails is corrected with its own counts; otherwise with the overall
  counts (the row says which).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from assay.errors import DataError, UsageError
from assay.judge.bar import BAR, current_shortfalls
from assay.judge.report import CheckReport
from assay.report import Interval, Tabular, markdown_table, rich_table, undefined

if TYPE_CHECKING:
    from assay.judge.bar import BarCheck

__all__ = [
    "ENV_CALIBRATIONS",
    "CorrectedRate",
    "JudgeCalibration",
    "JudgeReport",
    "UncalibratedJudge",
    "calibration_dir",
    "calibration_path",
    "corrected_rates",
    "find_calibration",
    "has_calibration",
    "uncalibrated_warning",
]

ENV_CALIBRATIONS = "ASSAY_JUDGE_CALIBRATIONS"


class UncalibratedJudge(UsageError):
    """A report would grade with a judge that has no calibration, and that was not allowed."""


def calibration_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get(ENV_CALIBRATIONS, ".assay/judge-calibrations"))


def calibration_path(judge_hash: str, directory: str | Path | None = None) -> Path:
    """Where the calibration of the judge with this identity hash lives."""
    base = Path(directory) if directory is not None else calibration_dir()
    return base / f"{judge_hash}.json"


Cells = tuple[int, int, int, int]  # tp, fn, fp, tn (human pass/judge pass, ...)


def _cells(obj: Any, path: str, where: str) -> Cells:
    conf = obj.get("confusion") if isinstance(obj, dict) else None
    if not isinstance(conf, dict):
        raise DataError("missing confusion counts", file=path, field=f"{where}.confusion")
    out: list[int] = []
    for k in ("tp", "fn", "fp", "tn"):
        v = conf.get(k)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise DataError(
                f"expected a count, got {v!r}", file=path, field=f"{where}.confusion.{k}"
            )
        out.append(v)
    return out[0], out[1], out[2], out[3]


@dataclass(frozen=True, slots=True)
class JudgeCalibration:
    """One judge's calibration against expert labels, on one of its questions (`question`)."""

    path: str
    judge_hash: str
    question: str
    overall: Cells
    categories: dict[str, Cells] = field(default_factory=dict)
    recorded_shortfalls: tuple[str, ...] | None = None  # the file's `bar`, when it has one
    high_risk: tuple[str, ...] = ()  # categories held to the high-risk floors
    confidence: float = 0.95

    @property
    def n_labelled(self) -> int:
        return sum(self.overall)

    def bar(self) -> BarCheck:
        """This calibration's counts held to the bar (`assay.judge.bar`), overall and per
        category, its high-risk categories to the high-risk floors."""
        return BAR.check(
            self.overall, self.categories, high_risk=self.high_risk, confidence=self.confidence
        )

    @property
    def shortfalls(self) -> list[str]:
        """Why this calibration is below the bar (`assay.judge.bar`): as the file recorded it
        when written (less what the bar no longer asks) and what its counts show today, overall
        and per category; [] when it clears it."""
        return current_shortfalls(self.recorded_shortfalls or (), self.bar().shortfalls)

    def with_high_risk(self, categories: Sequence[str]) -> JudgeCalibration:
        """The calibration held to the bar with these categories high-risk too (a dataset's
        manifest may name some the calibration was not written with)."""
        extra = tuple(sorted({*self.high_risk, *categories}))
        return self if extra == self.high_risk else replace(self, high_risk=extra)

    @classmethod
    def read(cls, path: str | Path, *, judge_hash: str | None = None) -> JudgeCalibration:
        """Read a calibration file; with `judge_hash`, it must be that judge's."""
        from assay.label_files import read_calibration

        file = str(path)
        data = read_calibration(path)
        jh = data.get("judge_hash")
        if not isinstance(jh, str) or not jh:
            raise DataError(
                "the calibration is tied to no judge (rerun `assay judge calibrate` with "
                "--judge-hash, or on the file `assay judge run --out` wrote)",
                file=file,
                field="judge_hash",
            )
        if judge_hash is not None and jh != judge_hash:
            raise DataError(
                f"calibrates judge {jh[:12]}, not this judge {judge_hash[:12]} (a change of "
                "model, prompt or settings is a new judge: calibrate it)",
                file=file,
                field="judge_hash",
            )
        inputs = data.get("inputs")
        question = None
        if isinstance(inputs, dict) and isinstance(inputs.get("judge"), dict):
            question = inputs["judge"].get("field")
        if not isinstance(question, str) or not question:
            raise DataError(
                "missing: the judge question calibrated", file=file, field="inputs.judge.field"
            )
        cats = data.get("categories") or {}
        if not isinstance(cats, dict):
            raise DataError("expected an object", file=file, field="categories")
        bar = data.get("bar")
        recorded = None
        high_risk: tuple[str, ...] = ()
        if isinstance(bar, dict):
            if isinstance(bar.get("shortfalls"), list):
                recorded = tuple(str(x) for x in bar["shortfalls"])
            risky = bar.get("high_risk", [])
            if not isinstance(risky, list) or not all(isinstance(x, str) for x in risky):
                raise DataError(
                    f"expected a list of categories, got {risky!r}",
                    file=file,
                    field="bar.high_risk",
                )
            high_risk = tuple(risky)
        confidence = data.get("confidence", 0.95)
        if not isinstance(confidence, float) or not 0.0 < confidence < 1.0:
            confidence = 0.95
        # the record cannot hide what the counts show: `shortfalls` joins both
        return cls(
            file,
            jh,
            question,
            _cells(data.get("overall"), file, "overall"),
            {str(k): _cells(v, file, f"categories.{k}") for k, v in cats.items()},
            recorded,
            high_risk,
            confidence,
        )


def find_calibration(
    judge_hash: str, *, path: str | Path | None = None, directory: str | Path | None = None
) -> JudgeCalibration | None:
    """The judge's calibration: the file `path` (errors if it is not this judge's), else the one
    in the calibration directory (None when there is no valid one)."""
    if path is not None:
        return JudgeCalibration.read(path, judge_hash=judge_hash)
    candidate = calibration_path(judge_hash, directory)
    if not candidate.is_file():
        return None
    try:
        return JudgeCalibration.read(candidate, judge_hash=judge_hash)
    except DataError:
        return None


def has_calibration(judge_hash: str, directory: str | Path | None = None) -> bool:
    """A calibration file written by `assay judge calibrate --out` exists for exactly this hash."""
    return find_calibration(judge_hash, directory=directory) is not None


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


def refuse_uncalibrated(judge_hash: str, directory: str | Path | None = None) -> UncalibratedJudge:
    """The error a report raises when its judge has no calibration and none was allowed."""
    return UncalibratedJudge(
        f"LLM judge {judge_hash[:12]} has no calibration (no valid "
        f"{calibration_path(judge_hash, directory)}, no --calibration FILE): its pass rates would "
        "be uncorrected and may be biased. Calibrate it against expert labels (`assay judge "
        "calibrate --human LABELS --judge JUDGED --judge-field matches_reference --out "
        f"{calibration_path(judge_hash, directory)}`), or pass --uncalibrated to report "
        "uncorrected rates, marked as such."
    )


# ------------------------------------------------------------------------------ corrected rates


def _interval(est: Any, level: float, method: str) -> Interval:
    """An `Interval` from a stats estimate (value/low/high/note)."""
    value = getattr(est, "value", None)
    note = getattr(est, "note", None)
    if value is None:
        return undefined(note or "undefined", level=level, method=method)
    return Interval(
        value, getattr(est, "low", None), getattr(est, "high", None), level, method, note
    )


@dataclass(frozen=True, slots=True)
class CorrectedRate:
    """The judge's raw pass rate on one category of a run, beside its corrections."""

    category: str
    question: str
    n: int  # answers the judge gave a readable verdict on
    raw: Interval
    rogan_gladen: Interval
    ppi: Interval
    calibrated_on: str  # "category" or "overall": whose confusion counts corrected this row
    n_labelled: int
    notes: tuple[str, ...] = ()  # e.g. too few labelled items for a precise correction

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "question": self.question,
            "n": self.n,
            "raw": self.raw.to_dict(),
            "rogan_gladen": self.rogan_gladen.to_dict(),
            "ppi": self.ppi.to_dict(),
            "calibrated_on": self.calibrated_on,
            "n_labelled": self.n_labelled,
            "notes": list(self.notes),
        }


def _labelled(cells: Cells) -> tuple[np.ndarray, np.ndarray]:
    tp, fn, fp, tn = cells
    human = np.array([True] * (tp + fn) + [False] * (fp + tn), dtype=bool)
    judge = np.array([True] * tp + [False] * fn + [True] * fp + [False] * tn, dtype=bool)
    return human, judge


def corrected_rates(
    rows: Sequence[Mapping[str, Any]],
    calibration: JudgeCalibration,
    *,
    confidence: float = 0.95,
) -> list[CorrectedRate]:
    """Raw and corrected pass rates of the calibrated question, per category and overall.

    `rows` are judged rows (`id`, `category`, one verdict field per question); answers whose
    verdict could not be read (None) are left out.
    """
    from assay.stats.calibration import corrected_pass_rate

    q = calibration.question
    cats = sorted({str(r["category"]) for r in rows})
    out: list[CorrectedRate] = []
    for cat in [*cats, "overall"]:
        verdicts = [
            bool(r[q])
            for r in rows
            if (cat == "overall" or r["category"] == cat) and r.get(q) is not None
        ]
        own = calibration.categories.get(cat) if cat != "overall" else None
        if own is not None and own[0] + own[1] > 0 and own[2] + own[3] > 0:
            cells, scope = own, "category"
        else:
            cells, scope = calibration.overall, "overall"
        h, j = _labelled(cells)
        u = np.asarray(verdicts, dtype=bool)
        c = corrected_pass_rate(h, j, u, confidence=confidence)
        out.append(
            CorrectedRate(
                cat,
                q,
                len(verdicts),
                _interval(c.judge_rate.estimate, confidence, "normal (Wald), uncorrected"),
                _interval(c.rogan_gladen.estimate, confidence, "Rogan-Gladen, delta method"),
                _interval(c.ppi.estimate, confidence, "prediction-powered inference (PPI)"),
                scope,
                sum(cells),
                tuple(c.warnings),
            )
        )
    return out


@dataclass
class JudgeReport(CheckReport):
    """An LLM judge's pass rates on a run; with a calibration, corrected beside the raw rates."""

    calibrated: bool = False
    calibration: JudgeCalibration | None = None
    corrected: list[CorrectedRate] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        cal = self.calibration
        return {
            **super().to_dict(),
            "calibrated": self.calibrated,
            "calibration": None
            if cal is None
            else {
                "path": cal.path,
                "judge_hash": cal.judge_hash,
                "question": cal.question,
                "n_labelled": cal.n_labelled,
                "bar_met": not cal.shortfalls,
                "accepted_weak": bool(cal.shortfalls),  # used only when accepted
                "shortfalls": cal.shortfalls,
                "high_risk": list(cal.high_risk),
                "failed_slices": cal.bar().failed,
            },
            "corrected": [c.to_dict() for c in self.corrected],
        }

    def _corrected_tabular(self) -> Tabular | None:
        if not self.corrected or self.calibration is None:
            return None
        cal = self.calibration
        return Tabular(
            title=(
                f"{cal.question}: raw vs corrected pass rate (calibration {Path(cal.path).name}, "
                f"{cal.n_labelled} labelled answers)"
            ),
            header=["category", "n", "raw", "Rogan-Gladen", "PPI", "calibrated on"],
            rows=[
                [
                    c.category,
                    str(c.n),
                    c.raw.fmt(),
                    c.rogan_gladen.fmt(),
                    c.ppi.fmt(),
                    f"{c.calibrated_on} ({c.n_labelled})",
                ]
                for c in self.corrected
            ],
            footer=[
                f"{round(100 * self.corrected[0].raw.level)}% intervals; raw: judge verdicts "
                "as given; Rogan-Gladen and PPI correct them for the judge's measured errors.",
                *dict.fromkeys(f"note: {n}" for c in self.corrected for n in c.notes),
            ],
        )

    def tabular(self) -> Tabular | list[Tabular]:
        out = [self._rates_tabular()]
        extra = self._corrected_tabular()
        if extra is not None:
            out.append(extra)
        return out

    def to_markdown(self) -> str:
        text = f"**{self.title}**\n\n" + super().to_markdown()
        extra = self._corrected_tabular()
        if extra is None:
            return text
        return (
            text
            + f"\n**{extra.title}**\n\n"
            + markdown_table(extra.header, extra.rows)
            + "\n"
            + "\n".join(extra.footer)
            + "\n"
        )

    def to_table(self) -> Any:
        base = super().to_table()
        extra = self._corrected_tabular()
        if extra is None:
            return base
        from rich.console import Group

        return Group(base, rich_table(extra))
