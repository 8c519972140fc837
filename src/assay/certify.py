"""Certifying a label set: the bar its experts' agreement must clear before its gold may gate.

The bar, per criterion of the labels file (and per category of the dataset's entries for the
criteria named in ``per_category``):

* at least ``min_overlap`` (100) overlap items: items two or more experts labelled;
* Krippendorff's alpha of at least ``min_alpha`` (0.80): ordinal on an ordered scale (numbers,
  booleans, two categories, or ``categories`` given), nominal otherwise;
* the lower end of its 95% interval at least ``min_lower`` (0.667): `assay agreement`'s
  (Donner and Eliasziw's goodness-of-fit interval on a binary scale, the score interval of
  nominal alpha on a longer one, its weighted form for ordinal alpha on a longer ordered
  scale), named in the certificate's footer;
* how the overlap batch was drawn stated (``enrichment``): ``"none"`` for a plain random draw,
  else how it was enriched with likely failures (such a batch agrees less, or more, than the
  set at large, and the certificate says so).

The figures are `assay.label_files.agreement_file`'s, what ``assay agreement`` prints on the same
labels with the same seed, resamples and confidence: the certificate computes nothing of its
own. A certificate that clears the bar is written into the dataset's manifest (``certificate``):
the criteria with their figures and intervals, the thresholds, the dataset's content hash and
version, the labels file's hash, the enrichment and the date. `check_certified` is what
``assay gate --require-certified`` asks: a certificate exists and the dataset's content hash is
still the one certified (any edit since voids it).

Items of the labels file are entry ids of the dataset (a judging item ``ID@RUN`` is the entry
``ID``). Labels none of whose items is an entry of the dataset are refused (another dataset's
labels), as is a file where no item was labelled twice; items the dataset lacks (disagreements
the workbench export left out until they are adjudicated) count in the agreement, as `assay
agreement` counts them, and the certificate says how many there were.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._criteria import criterion_name
from assay._io import sha256_file
from assay.errors import DataError
from assay.report import Interval, ReportMixin, Tabular

__all__ = [
    "BAR",
    "Certificate",
    "CriterionCheck",
    "certify",
    "check_certified",
]

BAR: dict[str, float] = {"min_overlap": 100, "min_alpha": 0.80, "min_lower": 0.667}
"""The guide's bar: overlap items per criterion, alpha, and the lower 95% bound of alpha."""

CERTIFICATE_KIND = "assay.certificate/1"


@dataclass(frozen=True)
class CriterionCheck:
    """One criterion (in one category, or over every entry) against the bar."""

    criterion: str | None
    category: str | None
    n_overlap: int
    statistic: str  # alpha_nominal or alpha_ordinal
    alpha: Interval
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        return {
            "criterion": self.criterion,
            "category": self.category,
            "n_overlap": self.n_overlap,
            "statistic": self.statistic,
            "alpha": self.alpha.to_dict(),
            "passed": self.passed,
            "failures": list(self.failures),
        }


@dataclass
class Certificate(ReportMixin):
    """The bar checked on every criterion; ``certified`` when every check passed (then
    ``written`` says it went into the manifest)."""

    checks: list[CriterionCheck]
    dataset: dict[str, Any]
    labels: dict[str, Any]
    thresholds: dict[str, float]
    enrichment: str
    date: str
    seed: int
    n_resamples: int
    confidence: float
    written: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def certified(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def exit_code(self) -> int:
        return 0 if self.certified else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": CERTIFICATE_KIND,
            "certified": self.certified,
            "date": self.date,
            "dataset": dict(self.dataset),
            "labels": dict(self.labels),
            "thresholds": dict(self.thresholds),
            "enrichment": self.enrichment,
            "enriched": self.enrichment != "none",
            "seed": self.seed,
            "n_resamples": self.n_resamples,
            "confidence": self.confidence,
            "criteria": [c.to_dict() for c in self.checks],
        }

    def tabular(self) -> Tabular:
        from assay.stats.agreement import describe_intervals  # scipy: import on first use

        t = self.thresholds
        head = (
            f"CERTIFIED: every criterion clears the bar ({'written to the manifest' if self.written else 'not written'})"
            if self.certified
            else "NOT CERTIFIED: "
            + "; ".join(f"{_name(c)}: {', '.join(c.failures)}" for c in self.checks if not c.passed)
        )
        rows = [
            [
                _name(c),
                str(c.n_overlap),
                c.statistic,
                c.alpha.fmt_value(3),
                c.alpha.fmt_bounds(3),
                "pass" if c.passed else "FAIL",
            ]
            for c in self.checks
        ]
        enrich = (
            "The overlap batch was a plain random draw (enrichment: none)."
            if self.enrichment == "none"
            else f"The overlap batch was enriched with likely failures ({self.enrichment}): the "
            "figures describe that batch, which is harder than the set at large."
        )
        foot = [
            head,
            f"Bar: >= {int(t['min_overlap'])} overlap items, alpha >= {t['min_alpha']:g}, lower "
            f"{self.confidence:.0%} bound >= {t['min_lower']:g} (the intervals of `assay agreement`: "
            f"{describe_intervals(c.alpha.method for c in self.checks if c.alpha.has_bounds)}; "
            f"a bootstrap, where one is used: {self.n_resamples} resamples, seed {self.seed}).",
            enrich,
            f"dataset {self.dataset.get('version')} (sha256 {str(self.dataset.get('content_hash'))[:16]}) "
            f"· labels sha256 {str(self.labels.get('sha256'))[:16]} · {self.date}",
            *self.notes,
        ]
        return Tabular(
            "assay certify",
            ["criterion", "overlap n", "statistic", "alpha", f"{self.confidence:.0%} CI", "bar"],
            rows,
            foot,
            emphasis=set(),
        )


def _name(c: CriterionCheck) -> str:
    name = c.criterion if c.criterion is not None else "(all labels)"
    return f"{name} [{c.category}]" if c.category is not None else name


def _check(res: Any, category: str | None, thresholds: Mapping[str, float]) -> CriterionCheck:
    stat = "alpha_ordinal" if res.ordered else "alpha_nominal"
    a: Interval = res.statistics[stat]
    fails: list[str] = []
    if res.n_items_multi < thresholds["min_overlap"]:
        fails.append(f"{res.n_items_multi} overlap items < {int(thresholds['min_overlap'])}")
    if not a.defined:
        fails.append(f"alpha undefined ({a.note or 'no variation'})")
    else:
        assert a.value is not None
        if a.value < thresholds["min_alpha"]:
            fails.append(f"alpha {a.value:.3f} < {thresholds['min_alpha']:g}")
        if a.low is None or not a.has_bounds:
            fails.append("alpha has no interval")
        elif a.low < thresholds["min_lower"]:
            fails.append(f"lower bound {a.low:.3f} < {thresholds['min_lower']:g}")
    return CriterionCheck(res.criterion, category, res.n_items_multi, stat, a, tuple(fails))


def certify(
    dataset: str | Path,
    labels: str | Path,
    *,
    enrichment: str,
    min_overlap: int = int(BAR["min_overlap"]),
    min_alpha: float = BAR["min_alpha"],
    min_lower: float = BAR["min_lower"],
    per_category: Sequence[str] = (),
    categories: Sequence[Any] | None = None,
    positive: Any = None,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    write: bool = True,
    today: dt.date | None = None,
) -> Certificate:
    """Check the labels' agreement against the bar (see the module docstring) and, when every
    criterion clears it and ``write``, record the certificate in the dataset's manifest.

    Refused (`DataError`, nothing written): labels none of whose items is an entry of the
    dataset, a labels file where no item was labelled by two raters, a ``per_category``
    criterion the labels do not have, an empty ``enrichment``."""
    from assay.dataset import load_dataset, load_manifest, save_manifest
    from assay.label_files import agreement_file, in_file, load_labels
    from assay.stats.agreement import agreement_by_criterion

    if not enrichment.strip():
        raise DataError(
            "say how the overlap batch was drawn: 'none' for a plain random draw, else "
            "how it was enriched with likely failures",
            file=labels,
            field="enrichment",
        )
    ds = load_dataset(dataset)
    records = load_labels(labels)
    entry_of = {r.item: r.item.split("@", 1)[0] for r in records}
    stray = sorted({i for i, e in entry_of.items() if e not in ds.by_id})
    if len(stray) == len(entry_of):
        shown = ", ".join(stray[:5]) + (f" ... (+{len(stray) - 5} more)" if len(stray) > 5 else "")
        raise DataError(
            f"none of the {len(stray)} labelled items is an entry of {dataset} ({shown}): "
            "these are another dataset's labels",
            file=labels,
            field="item",
        )
    raters: dict[tuple[str | None, str], set[str]] = {}
    for r in records:
        if r.label is not None:
            raters.setdefault((r.criterion, r.item), set()).add(r.rater)
    if not any(len(v) >= 2 for v in raters.values()):
        raise DataError(
            "no item was labelled by two raters: agreement needs an overlap batch (items "
            "every expert labels blind to the others)",
            file=labels,
            field="item",
        )
    crits = {r.criterion for r in records}
    per_category = [criterion_name(c) for c in per_category]
    unknown = [c for c in per_category if c not in crits]
    if unknown:
        raise DataError(
            f"no labels with criterion {', '.join(map(repr, unknown))} (--per-category)",
            file=labels,
            field="criterion",
        )
    thresholds = {
        "min_overlap": float(min_overlap),
        "min_alpha": float(min_alpha),
        "min_lower": float(min_lower),
    }
    report = agreement_file(
        labels,
        categories=categories,
        positive=positive,
        seed=seed,
        n_resamples=n_resamples,
        confidence=confidence,
    )
    checks = [_check(res, None, thresholds) for res in report.results]
    for crit in per_category:
        mine = [r for r in records if r.criterion == crit and entry_of[r.item] in ds.by_id]
        cats = sorted({ds.by_id[entry_of[r.item]].category for r in mine})
        for cat in cats:
            subset = [r for r in mine if ds.by_id[entry_of[r.item]].category == cat]
            with in_file(labels):
                by = agreement_by_criterion(
                    subset,
                    categories=categories,
                    positive=positive,
                    rng=seed,
                    n_resamples=n_resamples,
                    confidence=confidence,
                )
            checks.extend(_check(res, cat, thresholds) for res in by.values())
    cert = Certificate(
        checks=checks,
        dataset={"path": str(dataset), "version": ds.version, "content_hash": ds.content_hash},
        labels={"path": str(labels), "sha256": sha256_file(labels)},
        thresholds=thresholds,
        enrichment=enrichment.strip(),
        date=(today or dt.date.today()).isoformat(),
        seed=seed,
        n_resamples=n_resamples,
        confidence=confidence,
    )
    if stray:
        cert.notes.append(
            f"{len(stray)} labelled items are not entries of the dataset (e.g. disagreements not "
            f"settled yet, which the export leaves out: {', '.join(stray[:5])}"
            + (" ..." if len(stray) > 5 else "")
            + "): their labels count in the agreement, as in `assay agreement`"
            + (", not in the per-category checks." if per_category else ".")
        )
    if cert.certified and write:
        manifest = load_manifest(dataset)
        manifest["certificate"] = cert.to_dict()
        save_manifest(dataset, manifest)
        cert.written = True
    return cert


def check_certified(dataset: str | Path) -> dict[str, Any]:
    """The dataset's certificate when it has one and its content is still the one certified;
    otherwise a `DataError` saying why (what ``assay gate --require-certified`` refuses)."""
    from assay.dataset import load_manifest, manifest_path

    cert = load_manifest(dataset).get("certificate")
    where = str(manifest_path(dataset))
    if not isinstance(cert, dict) or cert.get("kind") != CERTIFICATE_KIND:
        raise DataError(
            f"{dataset} has no certificate: its labels' agreement was never checked "
            "against the bar (assay certify DATASET --labels LABELS --enrichment ...)",
            file=where,
            field="certificate",
        )
    now = sha256_file(dataset)
    was = (cert.get("dataset") or {}).get("content_hash")
    if now != was:
        raise DataError(
            f"{dataset} changed since it was certified on {cert.get('date')} (content "
            f"sha256 {str(was)[:16]} certified, {now[:16]} now): re-run the agreement on "
            "the edited set and certify it again",
            file=where,
            field="certificate",
        )
    if not cert.get("certified"):
        raise DataError("the certificate did not pass", file=where, field="certificate")
    return cert
