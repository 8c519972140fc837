"""The bar a judge's calibration must clear before its verdicts grade anything.

The labelling guide's rule: at least 100 labelled items, 30 to 50 of them human FAILs, TPR and
TNR of at least 0.85, and Cohen's kappa of at least 0.60, all measured on a held-out split
(items never used to write the judge's prompt or as its few-shot examples; the workbench
exports those in the split `judge-fewshot`). A calibration below the bar is refused, by
`assay judge calibrate --out` and by every report that would grade with it, unless the caller
passes `--accept-weak-calibration` (`accept_weak_calibration=True`); the acceptance is then
recorded in the calibration file and in every output that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.errors import UsageError

__all__ = [
    "BAR",
    "NOT_HELD_OUT_SPLITS",
    "WEAK_FLAG",
    "CalibrationBar",
    "WeakCalibration",
    "bar_record",
    "refuse_weak",
]

WEAK_FLAG = "--accept-weak-calibration"
# splits whose items helped build the judge: a calibration on them is not held out
NOT_HELD_OUT_SPLITS = frozenset({"judge-fewshot", "train", "dev"})

Cells = tuple[int, int, int, int]  # tp, fn, fp, tn (human pass/judge pass, ...)


class WeakCalibration(UsageError):
    """A calibration below the bar, used without `--accept-weak-calibration`."""


@dataclass(frozen=True)
class CalibrationBar:
    min_labelled: int = 100
    min_fails: int = 30
    max_fails: int = 50
    min_tpr: float = 0.85
    min_tnr: float = 0.85
    min_kappa: float = 0.60

    def measures(self, cells: Cells) -> dict[str, float | int | None]:
        """n, human FAILs, TPR, TNR and Cohen's kappa from the confusion counts."""
        tp, fn, fp, tn = cells
        n = tp + fn + fp + tn
        fails = fp + tn
        tpr = tp / (tp + fn) if tp + fn else None
        tnr = tn / (tn + fp) if tn + fp else None
        kappa = None
        if n:
            po = (tp + tn) / n
            pe = ((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn)) / n**2
            kappa = (po - pe) / (1 - pe) if pe < 1 else None
        return {"n": n, "fails": fails, "tpr": tpr, "tnr": tnr, "kappa": kappa}

    def shortfalls(self, cells: Cells, *, not_held_out: int = 0) -> list[str]:
        """Why a calibration with these counts is below the bar ([] when it clears it)."""
        m = self.measures(cells)
        out: list[str] = []
        n, fails = int(m["n"] or 0), int(m["fails"] or 0)
        if n < self.min_labelled:
            out.append(f"{n} labelled items (at least {self.min_labelled})")
        if not self.min_fails <= fails <= self.max_fails:
            out.append(f"{fails} human FAILs ({self.min_fails} to {self.max_fails})")
        for name, floor in (
            ("tpr", self.min_tpr),
            ("tnr", self.min_tnr),
            ("kappa", self.min_kappa),
        ):
            value = m[name]
            label = "kappa" if name == "kappa" else name.upper()
            if value is None:
                out.append(f"{label} undefined (at least {floor:.2f})")
            elif value < floor:
                out.append(f"{label} {value:.3f} (at least {floor:.2f})")
        if not_held_out:
            out.append(
                f"{not_held_out} items are not held out (in a split the judge was built on: "
                f"{', '.join(sorted(NOT_HELD_OUT_SPLITS))})"
            )
        return out


BAR = CalibrationBar()


def bar_record(shortfalls: list[str], *, accepted_weak: bool) -> dict[str, Any]:
    """What a calibration file and every output using it record about the bar."""
    return {
        "met": not shortfalls,
        "shortfalls": list(shortfalls),
        "accepted_weak": bool(shortfalls) and accepted_weak,
        "rule": (
            f">= {BAR.min_labelled} labelled items, {BAR.min_fails}-{BAR.max_fails} human FAILs, "
            f"TPR and TNR >= {BAR.min_tpr:.2f}, kappa >= {BAR.min_kappa:.2f}, on a held-out split"
        ),
    }


def refuse_weak(what: str, shortfalls: list[str]) -> WeakCalibration:
    return WeakCalibration(
        f"{what} is below the calibration bar: {'; '.join(shortfalls)}. Label more items (or "
        f"more FAILs) and calibrate again, or pass {WEAK_FLAG} to use it anyway (recorded in "
        "every output that uses it)."
    )
