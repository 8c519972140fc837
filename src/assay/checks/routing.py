"""Routing and guardrail labels: the ``routing`` check group, the per-class report, and the
confident-learning audit of the gold labels.

An entry's gold is ``expected_label`` (`assay.dataset.labelgold`); a run row's answer is its
``label`` (and optional ``label_scores``).

* ``label_correct`` (binary): the row's label is the gold label. A row without a label fails (the
  router gave no route); an entry without ``expected_label`` abstains.

`label_report` gives, per label set, the accuracy and each class's precision and recall with
Wilson intervals (a class never predicted has no precision: "-"), and the confusion matrix
(rows gold, columns predicted, a column for "no label"). `label_audit` ranks the gold labels
most likely to be wrong by confident learning (Northcutt, Jiang and Chuang, "Confident
Learning: Estimating Uncertainty in Dataset Labels", 2021; cleanlab's `find_label_issues`),
from the run's ``label_scores`` when every row has them, else from out-of-fold probabilities of
a TF-IDF logistic regression over the queries. It never changes a label: it is a review list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import atomic_writer
from assay.dataset import Entry, LabelGold, predicted, scores_of
from assay.errors import DataError, MissingExtraError
from assay.judge.context import CheckContext
from assay.judge.registry import Outcome, check, check_group
from assay.report import Interval, ReportMixin, Tabular
from assay.stats.proportion import wilson

__all__ = [
    "AuditRow",
    "LabelAudit",
    "LabelReport",
    "SetReport",
    "label_audit",
    "label_report",
    "plot_confusion",
]

NO_LABEL = "(none)"


def _gold(entry: Any) -> LabelGold | None:
    return getattr(entry, "expected_label", None)


check_group(
    "routing",
    applies=lambda entry: _gold(entry) is not None,
    description="routing and guardrail labels: entries with expected_label",
)


def _row_label(ctx: CheckContext) -> str | None:
    row = ctx.row
    try:
        return predicted(None if row is None else {"label": row.extra.get("label")})
    except ValueError as exc:
        raise DataError(f"entry {ctx.entry.id}: {exc}", file="run", field="label") from None


@check("label_correct", group="routing", needs_answer=False, rates=lambda e: _gold(e) is not None)
def label_correct(ctx: CheckContext) -> Outcome | None:
    """The row's label is the gold label (a row without a label fails)."""
    gold = _gold(ctx.entry)
    if gold is None:
        return None
    got = _row_label(ctx)
    if got == gold.label:
        return Outcome(True)
    return Outcome(False, (f"gave {got or 'no label'}; gold {gold.label}",))


# ---------------------------------------------------------------------------------------------
# the per-class report


@dataclass(frozen=True)
class ClassRow:
    label: str
    support: int  # gold entries of the class
    predicted: int  # rows that gave the class
    precision: Interval | None
    recall: Interval | None


@dataclass(frozen=True)
class SetReport:
    """One label set: accuracy, each class's precision and recall, the confusion matrix."""

    name: str
    labels: list[str]  # the classes: declared (`allowed`) first, then any other seen
    accuracy: Interval
    classes: list[ClassRow]
    confusion: list[list[int]]  # rows: gold in `labels`; columns: `labels` + NO_LABEL
    unknown: dict[str, int] = field(default_factory=dict)  # labels given outside the set

    def to_dict(self) -> dict[str, Any]:
        def iv(i: Interval | None) -> dict[str, float | None] | None:
            return None if i is None else {"value": i.value, "low": i.low, "high": i.high}

        return {
            "label_set": self.name,
            "labels": self.labels,
            "accuracy": iv(self.accuracy),
            "classes": [
                {
                    "label": c.label,
                    "support": c.support,
                    "predicted": c.predicted,
                    "precision": iv(c.precision),
                    "recall": iv(c.recall),
                }
                for c in self.classes
            ],
            "confusion": {
                "rows": self.labels,
                "columns": [*self.labels, NO_LABEL],
                "counts": self.confusion,
            },
            "outside_the_set": self.unknown,
        }


def _fmt(i: Interval | None) -> str:
    return "-" if i is None else f"{i.value:.3f} [{i.low:.3f}, {i.high:.3f}]"


@dataclass(frozen=True)
class LabelReport(ReportMixin):
    """`label_report`'s result: one `SetReport` per label set."""

    sets: list[SetReport]
    missing_rows: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"sets": [s.to_dict() for s in self.sets], "missing_rows": self.missing_rows}

    def tabular(self) -> list[Tabular]:
        out: list[Tabular] = []
        for s in self.sets:
            rows = [
                [c.label, str(c.support), str(c.predicted), _fmt(c.precision), _fmt(c.recall)]
                for c in s.classes
            ]
            rows.append(
                [
                    "overall",
                    str(sum(c.support for c in s.classes)),
                    "",
                    f"accuracy {_fmt(s.accuracy)}",
                    "",
                ]
            )
            notes = ["precision and recall with 95% Wilson intervals; '-': never predicted"]
            if s.unknown:
                notes.append(
                    "labels outside the declared set: "
                    + ", ".join(f"{k} ({n})" for k, n in sorted(s.unknown.items()))
                )
            if self.missing_rows:
                notes.append(
                    f"{self.missing_rows} entries have no row in the run (count as no label)"
                )
            out.append(
                Tabular(
                    f"label set {s.name}",
                    ["class", "gold", "given", "precision", "recall"],
                    rows,
                    notes,
                )
            )
            cm_rows = [
                [g, *(str(n) for n in counts)]
                for g, counts in zip(s.labels, s.confusion, strict=True)
            ]
            out.append(
                Tabular(
                    f"confusion ({s.name}): rows gold, columns given",
                    ["gold \\ given", *s.labels, NO_LABEL],
                    cm_rows,
                    [],
                    set(),
                )
            )
        return out


def _sets(entries: Sequence[Entry]) -> dict[str, list[Entry]]:
    by: dict[str, list[Entry]] = {}
    for e in entries:
        g = _gold(e)
        if g is not None:
            by.setdefault(g.set_name, []).append(e)
    return by


def _labels_of(es: Sequence[Entry]) -> list[str]:
    declared: list[str] = []
    for e in es:
        g = _gold(e)
        assert g is not None
        for lab in g.allowed or ():
            if lab not in declared:
                declared.append(lab)
    seen = sorted({_gold(e).label for e in es} - set(declared))  # type: ignore[union-attr]
    return declared + seen


def _given(rows: Mapping[str, Mapping[str, Any]], e: Entry, file: str) -> str | None:
    try:
        return predicted(rows.get(e.id))
    except ValueError as exc:
        field_, _, msg = str(exc).partition(": ")
        raise DataError(f"entry {e.id}: {msg}", file=file, field=field_) from None


def label_report(
    entries: Sequence[Entry], rows: Mapping[str, Mapping[str, Any]], *, file: str = "run"
) -> LabelReport:
    """Per label set: accuracy, per-class precision and recall (Wilson 95%), confusion matrix.
    `rows` maps entry id to its run row (a dict with ``label``)."""
    sets: list[SetReport] = []
    missing = 0
    for name, es in sorted(_sets(entries).items()):
        given = [_given(rows, e, file) for e in es]
        missing += sum(1 for e in es if e.id not in rows)
        gold = [_gold(e).label for e in es]  # type: ignore[union-attr]
        labels = _labels_of(es)
        idx = {lab: i for i, lab in enumerate(labels)}
        cm = np.zeros((len(labels), len(labels) + 1), dtype=np.int64)
        unknown: dict[str, int] = {}
        for g, p in zip(gold, given, strict=True):
            if p is None:
                cm[idx[g], -1] += 1
            elif p in idx:
                cm[idx[g], idx[p]] += 1
            else:
                unknown[p] = unknown.get(p, 0) + 1
        classes: list[ClassRow] = []
        for lab, i in idx.items():
            tp = int(cm[i, i])
            support = int(sum(1 for g in gold if g == lab))
            npred = int(sum(1 for p in given if p == lab))
            classes.append(
                ClassRow(
                    lab,
                    support,
                    npred,
                    wilson(tp, npred) if npred else None,
                    wilson(tp, support) if support else None,
                )
            )
        right = sum(1 for g, p in zip(gold, given, strict=True) if g == p)
        sets.append(SetReport(name, labels, wilson(right, len(es)), classes, cm.tolist(), unknown))
    if not sets:
        raise DataError("no entry has expected_label: nothing to report", file=file)
    return LabelReport(sets, missing)


# ---------------------------------------------------------------------------------------------
# the confident-learning audit


@dataclass(frozen=True)
class AuditRow:
    id: str
    label_set: str
    gold: str
    suggested: str
    quality: float  # cleanlab's label quality (the probability of the gold label): low = suspect
    flagged: bool  # find_label_issues marks it as a likely error
    query: str


@dataclass(frozen=True)
class LabelAudit(ReportMixin):
    """Every gold label ranked by how likely it is wrong (lowest label quality first; ties by
    id), the likely errors flagged; `top` rows are shown (10% of the entries, at least 10)."""

    rows: list[AuditRow]
    source: str
    top: int

    @property
    def flagged(self) -> list[AuditRow]:
        return [r for r in self.rows if r.flagged]

    def to_dict(self) -> dict[str, Any]:
        return {
            "probabilities": self.source,
            "entries": len(self.rows),
            "flagged": len(self.flagged),
            "ranked": [r.__dict__ for r in self.rows[: self.top]],
        }

    def tabular(self) -> Tabular:
        rows = [
            [
                r.id,
                r.label_set,
                r.gold,
                r.suggested,
                f"{r.quality:.3f}",
                "yes" if r.flagged else "",
                r.query[:60],
            ]
            for r in self.rows[: self.top]
        ]
        return Tabular(
            f"gold labels most likely wrong: top {self.top} of {len(self.rows)}; "
            f"{len(self.flagged)} flagged (a review list: nothing is changed)",
            ["id", "set", "gold", "suggested", "quality", "flagged", "query"],
            rows,
            [f"confident learning (cleanlab) on {self.source}"],
            set(),
        )


def _cleanlab() -> tuple[Any, Any]:
    try:
        from cleanlab.filter import find_label_issues
        from cleanlab.rank import get_label_quality_scores
    except ImportError as exc:
        raise MissingExtraError("audit", "The label audit", "cleanlab") from exc
    return find_label_issues, get_label_quality_scores


def _oof_probs(queries: list[str], y: np.ndarray, n_classes: int, seed: int) -> np.ndarray | None:
    """Out-of-fold class probabilities from the queries (TF-IDF, logistic regression); None when
    scikit-learn is missing or a class has fewer than 2 entries."""
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import StratifiedKFold, cross_val_predict
    except ImportError:
        return None
    folds = int(min(5, np.bincount(y, minlength=n_classes).min()))
    if folds < 2:
        return None
    x = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True).fit_transform(queries)
    return np.asarray(
        cross_val_predict(
            LogisticRegression(max_iter=2000, C=10.0),
            x,
            y,
            cv=StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed),
            method="predict_proba",
        )
    )


def _run_probs(
    es: Sequence[Entry], rows: Mapping[str, Mapping[str, Any]] | None, labels: list[str], file: str
) -> np.ndarray | None:
    if rows is None or not all(rows.get(e.id, {}).get("label_scores") is not None for e in es):
        return None
    got: list[list[float]] = []
    for e in es:
        try:
            s = scores_of(rows[e.id], tuple(labels))
        except ValueError as exc:
            field_, _, msg = str(exc).partition(": ")
            raise DataError(f"entry {e.id}: {msg}", file=file, field=field_) from None
        assert s is not None
        got.append(s)
    return np.asarray(got)


def label_audit(
    entries: Sequence[Entry],
    rows: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    seed: int = 0,
    top: int | None = None,
    file: str = "run",
) -> LabelAudit:
    """Rank every gold label by how likely it is wrong (module docs). The class probabilities
    are the run's ``label_scores`` (every row must have them; `rows`: entry id -> run row) and
    out-of-fold probabilities from the queries (seeded by `seed`), averaged when both exist:
    on the room's routing set (20 seeds, 10 planted errors in 120) the top 10% held 8.4 of the
    10 on the router's scores alone, 9.45 out of fold, 9.7 averaged
    (`bench/bench_label_audit.py`)."""
    find_label_issues, quality_scores = _cleanlab()
    ranked: list[AuditRow] = []
    sources: set[str] = set()
    for name, es in sorted(_sets(entries).items()):
        labels = _labels_of(es)
        code = {lab: i for i, lab in enumerate(labels)}
        y = np.array([code[_gold(e).label] for e in es])  # type: ignore[union-attr]
        run = _run_probs(es, rows, labels, file)
        oof = _oof_probs([e.query for e in es], y, len(labels), seed)
        if run is None and oof is None:
            raise DataError(
                f"label set {name}: the audit needs label_scores on every row of the run, or "
                "scikit-learn (the audit extra) and 2+ entries of every class",
                file=file,
            )
        parts = [p for p in (run, oof) if p is not None]
        probs = np.mean(parts, axis=0)
        sources.update(
            s
            for s, p in (("the run's label_scores", run), ("out-of-fold query model", oof))
            if p is not None
        )
        quality = np.asarray(quality_scores(y, probs))
        issues = {int(i) for i in np.flatnonzero(find_label_issues(y, probs))}
        for i, e in enumerate(es):
            ranked.append(
                AuditRow(
                    e.id,
                    name,
                    labels[int(y[i])],
                    labels[int(np.argmax(probs[i]))],
                    float(quality[i]),
                    i in issues,
                    e.query,
                )
            )
    ranked.sort(key=lambda r: (r.quality, r.id))
    shown = top if top is not None else max(10, -(-len(ranked) // 10))
    return LabelAudit(ranked, " averaged with ".join(sorted(sources)), min(shown, len(ranked)))


def plot_confusion(report: LabelReport, out: str | Path) -> None:
    """The confusion matrices of a report as one PNG (a panel per label set; counts in the
    cells; rows gold, columns given), written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.5 * len(report.sets), 4.2), layout="constrained")
    for ax, s in zip(fig.subplots(1, len(report.sets), squeeze=False)[0], report.sets, strict=True):
        cm = np.asarray(s.confusion)
        ax.imshow(cm, cmap="Blues")
        cols = [*s.labels, NO_LABEL]
        ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right")
        ax.set_yticks(range(len(s.labels)), s.labels)
        ax.set_xlabel("given")
        ax.set_ylabel("gold")
        ax.set_title(f"{s.name}: accuracy {s.accuracy.value:.3f}")
        for (i, j), v in np.ndenumerate(cm):
            ax.text(
                j,
                i,
                str(v),
                ha="center",
                va="center",
                color="white" if v > cm.max() / 2 else "black",
            )
    with atomic_writer(out, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
