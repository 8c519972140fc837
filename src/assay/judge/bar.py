"""The bar a judge's calibration must clear before its verdicts grade anything.

The labelling guide's rule: at least 100 labelled items, at least 30 of them human FAILs (more
only sharpen TNR), TPR and TNR of at least 0.85, and Cohen's kappa of at least 0.60, all
measured on a held-out split (items never used to write the judge's prompt or as its few-shot
examples; the workbench exports those in the split `judge-fewshot`).

The rates are held to the bar overall *and in every category* with enough labels to measure
them: a category's TPR once it holds `min_slice_class` (10) human passes, its TNR once it holds
10 human fails, its kappa once it holds both. A judge with TNR 0.70 on numeric questions does
not clear the bar because its overall TNR does. A category named high-risk (`--high-risk`, or
`"risk": "high"` on the category in the dataset manifest, `assay.dataset.categories`) needs TPR
and TNR of at least 0.90, and must hold enough labels to show it. `CalibrationBar.check` gives
every slice's figures (Wilson intervals, `assay.stats.proportion.rate_ci`) and names the slices
that failed.

A calibration below the bar is refused, by `assay judge calibrate --out` and by every report
that would grade with it, unless the caller passes `--accept-weak-calibration`
(`accept_weak_calibration=True`); the acceptance is then recorded in the calibration file and in
every output that uses it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from assay.errors import UsageError
from assay.report import Interval, ReportMixin, Tabular, rich_table
from assay.stats.proportion import rate_ci

if TYPE_CHECKING:
    from assay.dataset import Dataset
    from assay.label_files import CalibrationReport
    from assay.stats.calibration import Calibration

__all__ = [
    "BAR",
    "NOT_HELD_OUT_SPLITS",
    "WEAK_FLAG",
    "BarCheck",
    "CalibrationBar",
    "SliceCheck",
    "WeakCalibration",
    "calibration_bar",
    "current_shortfalls",
    "high_risk_for",
    "refuse_weak",
]

WEAK_FLAG = "--accept-weak-calibration"
# splits whose items helped build the judge: a calibration on them is not held out
NOT_HELD_OUT_SPLITS = frozenset({"judge-fewshot", "train", "dev"})
#: a shortfall the bar of before (a FAIL count range, 30 to 50) recorded, no longer one
_OLD_FAIL_RANGE = re.compile(r"^\d+ human FAILs \(\d+ to \d+\)$")

Cells = tuple[int, int, int, int]  # tp, fn, fp, tn (human pass/judge pass, ...)


class WeakCalibration(UsageError):
    """A calibration below the bar, used without `--accept-weak-calibration`."""


@dataclass(frozen=True, slots=True)
class SliceCheck:
    """One slice (a category, or ``overall``) held to the bar: its figures, the floors it was
    held to, what was not checked for want of labels, and why it fell short."""

    name: str
    risk: str  # "high", "normal"; "" for overall
    cells: Cells
    tpr: Interval
    tnr: Interval
    kappa: float | None
    floors: dict[str, float]  # the measures held to a floor here: tpr, tnr, kappa
    unchecked: tuple[str, ...]  # why a measure was not held to its floor (too few labels)
    shortfalls: tuple[str, ...]

    @property
    def met(self) -> bool:
        return not self.shortfalls

    @property
    def n(self) -> int:
        return sum(self.cells)

    @property
    def fails(self) -> int:
        return self.cells[2] + self.cells[3]

    def verdict(self) -> str:
        if self.shortfalls:
            return "FAILED"
        if not self.floors:
            return "not checked"
        return "met" + (" (partly checked)" if self.unchecked else "")

    def to_dict(self) -> dict[str, Any]:
        tp, fn, fp, tn = self.cells
        return {
            "slice": self.name,
            "risk": self.risk or None,
            "n": self.n,
            "human_fails": self.fails,
            "confusion": {"tp": tp, "fn": fn, "fp": fp, "tn": tn},
            "tpr": self.tpr.to_dict(),
            "tnr": self.tnr.to_dict(),
            "kappa": self.kappa,
            "floors": dict(self.floors),
            "unchecked": list(self.unchecked),
            "met": self.met,
            "shortfalls": list(self.shortfalls),
        }


@dataclass(frozen=True)
class BarCheck(ReportMixin):
    """A calibration held to the bar, slice by slice (a report): `met`, every shortfall (overall
    first), the slices that failed, and each slice's figures."""

    slices: list[SliceCheck]
    overall_shortfalls: list[str]  # counts and held-out-ness: not any one slice's
    rule: str
    high_risk: tuple[str, ...] = ()
    accepted_weak: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def shortfalls(self) -> list[str]:
        out = list(self.overall_shortfalls)
        for s in sorted(self.slices, key=lambda s: s.name != "overall"):
            out.extend(s.shortfalls)
        return out

    @property
    def met(self) -> bool:
        return not self.shortfalls

    @property
    def failed(self) -> list[str]:
        """The slices below the bar (categories, or ``overall``)."""
        return [s.name for s in self.slices if not s.met]

    def accepting(self, accepted_weak: bool) -> BarCheck:
        return BarCheck(
            self.slices,
            self.overall_shortfalls,
            self.rule,
            self.high_risk,
            bool(self.shortfalls) and accepted_weak,
            self.notes,
        )

    def to_dict(self) -> dict[str, Any]:
        """What a calibration file and every output using it record about the bar."""
        return {
            "met": self.met,
            "shortfalls": self.shortfalls,
            "accepted_weak": self.accepted_weak,
            "rule": self.rule,
            "high_risk": list(self.high_risk),
            "failed_slices": self.failed,
            "slices": [s.to_dict() for s in self.slices],
            "notes": list(self.notes),
        }

    def summary(self) -> str:
        if self.met:
            return f"calibration bar met ({self.rule})"
        where = f" [failed: {', '.join(self.failed)}]" if self.failed else ""
        if self.accepted_weak:
            return f"WEAK CALIBRATION accepted ({WEAK_FLAG}){where}: " + "; ".join(self.shortfalls)
        return f"below the calibration bar{where}: " + "; ".join(self.shortfalls)

    def tabular(self) -> Tabular:
        level = self.slices[0].tpr.level if self.slices else 0.95
        ci = f"[{level:.0%} CI]"
        rows = []
        for s in self.slices:
            floors = ", ".join(
                f"{k.upper() if k != 'kappa' else k} {v:.2f}" for k, v in s.floors.items()
            )
            rows.append(
                [
                    s.name,
                    s.risk,
                    str(s.n),
                    str(s.fails),
                    s.tpr.fmt(),
                    s.tnr.fmt(),
                    "undefined" if s.kappa is None else f"{s.kappa:.3f}",
                    floors or "-",
                    s.verdict(),
                ]
            )
        return Tabular(
            "calibration bar by slice: " + ("met" if self.met else "NOT MET"),
            [
                "slice",
                "risk",
                "n",
                "human FAILs",
                f"TPR {ci}",
                f"TNR {ci}",
                "kappa",
                "floors",
                "bar",
            ],
            rows,
            footer=[
                *(f"note: {x}" for x in self.notes),
                *(f"not checked: {s.name}: {why}" for s in self.slices for why in s.unchecked),
                self.summary(),
            ],
            emphasis={"overall", *self.failed},
        )

    def to_table(self) -> Any:
        """The slice table, then its footer as plain lines (a caption would wrap to the table's
        width and split the names of failing slices)."""
        from rich.console import Group
        from rich.text import Text

        t = self.tabular()
        return Group(rich_table(replace(t, footer=[])), *(Text(line) for line in t.footer))


@dataclass(frozen=True)
class CalibrationBar:
    min_labelled: int = 100
    min_fails: int = 30  # a minimum: more human FAILs only measure TNR better
    min_tpr: float = 0.85
    min_tnr: float = 0.85
    min_kappa: float = 0.60
    high_risk_tpr: float = 0.90
    high_risk_tnr: float = 0.90
    min_slice_class: int = 10  # human passes (TPR) / fails (TNR) before a category is held to it

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

    @property
    def rule(self) -> str:
        return (
            f">= {self.min_labelled} labelled items, >= {self.min_fails} human FAILs, TPR and "
            f"TNR >= {self.min_tpr:.2f} ({self.high_risk_tpr:.2f} in high-risk categories), "
            f"kappa >= {self.min_kappa:.2f}, overall and in every category with >= "
            f"{self.min_slice_class} human passes (TPR) or fails (TNR), on a held-out split"
        )

    def _slice(
        self, name: str, cells: Cells, *, risk: str, confidence: float, absent: bool = False
    ) -> SliceCheck:
        tp, fn, fp, tn = cells
        m = self.measures(cells)
        high = risk == "high"
        overall = name == "overall"
        # overall shortfalls read as they always have; a category's name it and its interval
        label = f"category {name}" + (" (high-risk)" if high else "")
        lead = "" if overall else f"{label}: "
        floors_all = {
            "tpr": self.high_risk_tpr if high else self.min_tpr,
            "tnr": self.high_risk_tnr if high else self.min_tnr,
            "kappa": self.min_kappa,
        }
        # what each measure rests on: human passes, human fails, both
        base = {"tpr": tp + fn, "tnr": fp + tn, "kappa": min(tp + fn, fp + tn)}
        words = {"tpr": "human passes", "tnr": "human FAILs", "kappa": "in the smaller class"}
        floors: dict[str, float] = {}
        unchecked: list[str] = []
        short: list[str] = []
        if absent:
            short.append(f"{label}: no labelled items (the judge is unmeasured there)")
        for key, floor in floors_all.items():
            have = base[key]
            shown = "kappa" if key == "kappa" else key.upper()
            if not overall and have < self.min_slice_class:
                if absent:
                    continue
                why = f"{shown}: {have} {words[key]} (< {self.min_slice_class})"
                if high and key != "kappa":
                    short.append(
                        f"{label}: {have} {words[key]}, at least {self.min_slice_class} needed "
                        f"to show {shown} >= {floor:.2f}"
                    )
                else:
                    unchecked.append(why)
                continue
            floors[key] = floor
            value = m[key]
            if value is None:
                short.append(f"{lead}{shown} undefined (at least {floor:.2f})")
            elif float(value) < floor:
                iv = {"tpr": (tp, tp + fn), "tnr": (tn, fp + tn)}.get(key)
                ci = ""
                if iv is not None and not overall:
                    ci = " " + rate_ci(*iv, confidence=confidence).fmt_bounds(2)
                short.append(f"{lead}{shown} {float(value):.3f}{ci} (at least {floor:.2f})")

        def rate(k: int, n: int, what: str) -> Interval:
            if not n:
                return Interval(None, None, None, confidence, "wilson", f"undefined: no {what}")
            return rate_ci(k, n, confidence=confidence)

        kappa = m["kappa"]
        return SliceCheck(
            name,
            "" if overall else risk,
            cells,
            rate(tp, tp + fn, "human passes"),
            rate(tn, fp + tn, "human FAILs"),
            None if kappa is None else float(kappa),
            floors,
            tuple(unchecked),
            tuple(short),
        )

    def check(
        self,
        overall: Cells,
        categories: Mapping[str, Cells] | None = None,
        *,
        high_risk: Collection[str] = (),
        not_held_out: int = 0,
        confidence: float = 0.95,
    ) -> BarCheck:
        """Hold a calibration to the bar, overall and per category (`categories`: name ->
        confusion counts). A category in `high_risk` is held to the high-risk floors; one with
        no labelled items at all falls short (the judge is unmeasured where it matters most).
        Names in `high_risk` are taken as given: check them against the data first
        (`assay.dataset.categories.high_risk_for`)."""
        cats = dict(categories or {})
        risky = sorted(set(high_risk))
        m = self.measures(overall)
        out: list[str] = []
        n, fails = int(m["n"] or 0), int(m["fails"] or 0)
        if n < self.min_labelled:
            out.append(f"{n} labelled items (at least {self.min_labelled})")
        if fails < self.min_fails:
            out.append(f"{fails} human FAILs (at least {self.min_fails})")
        if not_held_out:
            out.append(
                f"{not_held_out} items are not held out (in a split the judge was built on: "
                f"{', '.join(sorted(NOT_HELD_OUT_SPLITS))})"
            )
        slices = [
            self._slice(
                c,
                cats.get(c, (0, 0, 0, 0)),
                risk="high" if c in risky else "normal",
                confidence=confidence,
                absent=c not in cats,
            )
            for c in sorted({*cats, *risky})
        ]
        slices.append(self._slice("overall", overall, risk="", confidence=confidence))
        return BarCheck(slices, out, self.rule, tuple(risky))

    def shortfalls(
        self,
        cells: Cells,
        *,
        not_held_out: int = 0,
        categories: Mapping[str, Cells] | None = None,
        high_risk: Collection[str] = (),
    ) -> list[str]:
        """Why a calibration with these counts is below the bar ([] when it clears it)."""
        return self.check(
            cells, categories, high_risk=high_risk, not_held_out=not_held_out
        ).shortfalls


BAR = CalibrationBar()


def high_risk_for(
    named: Sequence[str], known: Collection[str], *, declared: Collection[str] = ()
) -> list[str]:
    """The high-risk categories: those `named` (``--high-risk``; each must be one of `known`, the
    categories of the labelled items and the dataset: a misspelt name must not quietly leave a
    category on the normal bar) and those the dataset's manifest `declared` high-risk."""
    for name in named:
        if name.strip() and name in known:
            continue
        have = ", ".join(sorted(known)) if known else "none: the items carry no category"
        raise UsageError(
            f"--high-risk names {name!r}, which is not a category of the labelled items or the "
            f"dataset (categories: {have})"
        )
    return sorted({*named, *declared})


def calibration_bar(
    report: CalibrationReport,
    *,
    high_risk: Sequence[str] = (),
    dataset: Dataset | None = None,
    not_held_out: int = 0,
    accept_weak: bool = False,
) -> BarCheck:
    """Hold a calibration (`assay.label_files.calibrate_files`) to the bar, overall and per category.

    High-risk categories are those named in `high_risk` (each a category of the labelled items
    or of `dataset`, else a `UsageError`) and those `dataset`'s manifest declares high-risk
    (`assay.dataset.categories`). `not_held_out` counts labelled items from a split the judge
    was built on. With `accept_weak` a calibration below the bar is recorded as accepted."""
    declared: list[str] = []
    known = set(report.categories)
    notes: list[str] = []
    if dataset is not None:
        from assay.dataset import high_risk_categories

        declared = high_risk_categories(dataset)
        known |= set(dataset.categories())
        missing = sorted(set(dataset.categories()) - set(report.categories) - set(declared))
        if missing and report.categories:
            notes.append(f"categories of the dataset with no labelled items: {', '.join(missing)}")
    risky = high_risk_for(high_risk, known, declared=declared)
    checked = BAR.check(
        _cells_of(report.overall),
        {k: _cells_of(v) for k, v in report.categories.items()},
        high_risk=risky,
        not_held_out=not_held_out,
        confidence=report.overall.confidence,
    )
    return replace(checked, notes=notes).accepting(accept_weak)


def _cells_of(c: Calibration) -> Cells:
    return c.tp, c.fn, c.fp, c.tn


def current_shortfalls(recorded: Collection[str], fresh: list[str]) -> list[str]:
    """A file's recorded shortfalls joined with those its counts show today; a FAIL count above
    the old range's top (30 to 50) is no longer one."""
    kept = [s for s in recorded if not _OLD_FAIL_RANGE.match(s)]
    return list(dict.fromkeys([*kept, *fresh]))


def refuse_weak(what: str, shortfalls: list[str]) -> WeakCalibration:
    return WeakCalibration(
        f"{what} is below the calibration bar: {'; '.join(shortfalls)}. Label more items (or "
        f"more FAILs) and calibrate again, or pass {WEAK_FLAG} to use it anyway (recorded in "
        "every output that uses it)."
    )
