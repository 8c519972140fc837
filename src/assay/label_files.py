"""Expert label files and judged-verdict files: reading them, with FILE:LINE: field problems, and
running agreement and calibration on them.

`assay.stats` computes on values and refuses bad ones with `StatsInputError` (a field and a
message, no file: stats imports nothing else of assay). This module is where a file is the
context: it reads JSONL with line numbers, hashes the inputs for the report, and turns every
`StatsInputError` raised on a file's contents into a `DataError` naming `FILE:LINE: field`.

- `load_labels` / `agreement_file`: the long-format labels file of ``assay agreement``
- `read_verdict` / `calibrate_files`: the human and judged files of ``assay judge calibrate``
- `read_calibration`: the calibration file ``assay judge calibrate --out`` writes
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from assay._criteria import RENAMED_CRITERIA, criterion_name
from assay._io import iter_jsonl, json_loads, sha256_file
from assay.errors import DataError, Problem
from assay.report import Interval, ReportMixin, Tabular, markdown_table, rich_table
from assay.stats._errors import StatsInputError
from assay.stats._resample import check_confidence, package_version
from assay.stats.agreement import (
    AGREEMENT_KIND,
    STATISTICS,
    AgreementResult,
    Label,
    LabelRecord,
    agreement_by_criterion,
    parse_labels,
)
from assay.stats.calibration import (
    CALIBRATION_FORMAT,
    CALIBRATION_KIND,
    CORRECTED_HEADERS,
    Calibration,
    CorrectedPassRate,
    binary_calibration_by_category,
    calibration_headers,
    calibration_row,
    corrected_pass_rate,
)

__all__ = [
    "VERDICT_FIELDS",
    "AgreementReport",
    "CalibrationReport",
    "agreement_file",
    "calibrate_files",
    "in_file",
    "load_labels",
    "read_calibration",
    "read_verdict",
]


@contextmanager
def in_file(path: str | Path) -> Iterator[None]:
    """Re-raise a `StatsInputError` on this file's contents as a `DataError` naming the file (and
    the line of each issue that has one)."""
    try:
        yield
    except StatsInputError as exc:
        raise DataError(
            [Problem(str(path), i.line, i.field, i.message) for i in exc.issues]
        ) from None


# --------------------------------------------------------------------------------------------
# Expert labels (what `assay agreement` reads)
# --------------------------------------------------------------------------------------------


def load_labels(path: str | Path) -> list[LabelRecord]:
    """Read a long-format labels JSONL file (see `assay.stats.agreement.parse_labels`); every
    problem is named by file, line and field. A criterion written under its older name is read
    by its current one (`assay._criteria`: "complete" is "comprehensive")."""
    with in_file(path):
        records = parse_labels(iter_jsonl(path))
    return [
        replace(r, criterion=criterion_name(r.criterion)) if r.criterion in RENAMED_CRITERIA else r
        for r in records
    ]


def agreement_file(
    path: str | Path,
    *,
    criterion: str | None = None,
    categories: Sequence[Label] | None = None,
    positive: Label | None = None,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    max_disagreements: int = 20,
) -> AgreementReport:
    """Agreement on a long-format labels file, per criterion (what ``assay agreement`` runs).

    ``criterion`` keeps only that criterion (a `DataError` when no label has it). The report is
    stamped with the file's SHA-256, the seed and the number of resamples.
    """
    check_confidence(confidence, n_resamples)  # the arguments first: a StatsInputError of their own
    records = load_labels(path)
    if criterion is not None:
        records = [r for r in records if r.criterion == criterion_name(criterion)]
        if not records:
            raise DataError(f"no labels with criterion {criterion!r}", file=path, field="criterion")
    with in_file(path):
        by = agreement_by_criterion(
            records,
            categories=categories,
            positive=positive,
            rng=seed,
            n_resamples=n_resamples,
            confidence=confidence,
        )
    return AgreementReport(
        results=list(by.values()),
        seed=seed,
        n_resamples=n_resamples,
        confidence=confidence,
        labels={"path": str(path), "sha256": sha256_file(path)},
        assay_version=package_version(),
        max_disagreements=max_disagreements,
    )


# --------------------------------------------------------------------------------------------
# Calibrating from files (what `assay judge calibrate` runs)
# --------------------------------------------------------------------------------------------

#: Fields tried, in order, for the PASS/FAIL verdict when no field is named.
VERDICT_FIELDS = ("pass", "passed", "label", "verdict", "correct", "grade")
_TRUE_WORDS = frozenset({"pass", "passed", "true", "yes", "y", "correct", "1"})
_FALSE_WORDS = frozenset({"fail", "failed", "false", "no", "n", "incorrect", "wrong", "0"})


def read_verdict(value: Any, *, file: str, line: int | None, field_name: str) -> bool:
    """A PASS/FAIL verdict from a boolean, 0/1, or a word (pass/fail, correct/incorrect, yes/no)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    raise DataError(
        f"expected a PASS/FAIL verdict (true/false, 1/0, pass/fail, correct/incorrect), got {value!r}",
        file=file,
        line=line,
        field=field_name,
    )


@dataclass(frozen=True, slots=True)
class _Verdicts:
    by_id: dict[str, bool]
    category: dict[str, str]
    hashes: dict[str, int]  # judge_hash -> first line
    field: str
    unreadable: int = 0  # null verdicts left out (a judge reply that could not be read)


def _read_verdicts(
    path: str | Path,
    field_name: str | None,
    category_field: str,
    criterion: str | None = None,
    *,
    skip_null: bool = False,
) -> _Verdicts:
    file = str(path)
    problems: list[Problem] = []
    by_id: dict[str, bool] = {}
    first_line: dict[str, int] = {}
    category: dict[str, str] = {}
    hashes: dict[str, int] = {}
    unreadable = 0
    chosen = field_name
    for line, row in iter_jsonl(path):
        if not isinstance(row, dict):
            problems.append(Problem(file, line, None, "expected a JSON object"))
            continue
        if criterion is not None and criterion_name(str(row.get("criterion"))) != criterion_name(
            criterion
        ):
            continue
        item = row.get("id", row.get("item"))
        if item is None or isinstance(item, bool | dict | list):
            problems.append(Problem(file, line, "id", "required: the item id (`id` or `item`)"))
            continue
        if chosen is None:
            chosen = next((f for f in VERDICT_FIELDS if f in row), None)
            if chosen is None:
                problems.append(
                    Problem(
                        file,
                        line,
                        None,
                        f"no verdict field (tried {', '.join(VERDICT_FIELDS)}); name one",
                    )
                )
                break
        if chosen not in row:
            problems.append(Problem(file, line, chosen, "missing verdict"))
            continue
        if skip_null and row[chosen] is None:
            unreadable += 1
            continue
        try:
            verdict = read_verdict(row[chosen], file=file, line=line, field_name=chosen)
        except DataError as exc:
            problems.extend(exc.problems)
            continue
        key = str(item)
        if key in by_id and by_id[key] != verdict:
            problems.append(
                Problem(
                    file,
                    line,
                    chosen,
                    f"item {key!r} has conflicting verdicts (first on line {first_line[key]}): "
                    "adjudicate first (see `assay agreement`)",
                )
            )
            continue
        by_id[key] = verdict
        first_line.setdefault(key, line)
        cat = row.get(category_field)
        if cat is not None:
            category[key] = str(cat)
        jh = row.get("judge_hash")
        if isinstance(jh, str) and jh:
            hashes.setdefault(jh, line)
    if problems:
        raise DataError(problems)
    return _Verdicts(by_id, category, hashes, chosen or "", unreadable)


def calibrate_files(
    human_path: str | Path,
    judge_path: str | Path,
    *,
    human_field: str | None = None,
    judge_field: str | None = None,
    category_field: str = "category",
    judge_hash: str | None = None,
    criterion: str | None = None,
    seed: int | None = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> CalibrationReport:
    """Calibrate the judge in `judge_path` against the human verdicts in `human_path`.

    Both files are JSONL with an item id (`id` or `item`) and a verdict (`human_field` /
    `judge_field`, else the first of VERDICT_FIELDS present). Items in both files are the
    labelled set; items only the judge saw are the unlabelled set whose pass rate is corrected
    (Rogan-Gladen, PPI, PPI++). Categories come from `category_field` of either file. The judge
    hash comes from `judge_hash` or the judged rows' `judge_hash` field (one judge per file).
    A null judge verdict (a reply the judge's parser could not read, as `assay judge run --out`
    writes it) is left out with a warning. The human file may be the long-format labels file of `assay agreement` (`item`, `rater`,
    `label`, `criterion`): `criterion` keeps that criterion's rows; raters who agree on an item
    give one verdict, raters who disagree are an error (adjudicate first).
    """
    human = _read_verdicts(human_path, human_field, category_field, criterion)
    judged = _read_verdicts(judge_path, judge_field, category_field, skip_null=True)
    warnings: list[str] = []
    if judged.unreadable:
        warnings.append(
            f"{judged.unreadable} judged items have no verdict (null: the judge's reply could not "
            "be read) and are left out"
        )
    if judge_hash is None:
        if len(judged.hashes) > 1:
            raise DataError(
                [
                    Problem(str(judge_path), ln, "judge_hash", f"judged file mixes judges: {h}")
                    for h, ln in sorted(judged.hashes.items(), key=lambda kv: kv[1])
                ]
            )
        judge_hash = next(iter(judged.hashes), None)
    elif judged.hashes and set(judged.hashes) != {judge_hash}:
        raise DataError(
            f"rows carry {sorted(judged.hashes)}, not {judge_hash}",
            file=judge_path,
            field="judge_hash",
        )
    if judge_hash is None:
        warnings.append(
            "no judge hash: this calibration cannot be tied to a judge (pass --judge-hash)"
        )
    ids = sorted(set(human.by_id) & set(judged.by_id))
    if not ids:
        raise DataError(f"no item id in common with {human_path}", file=judge_path, field="id")
    judge_only = sorted(set(judged.by_id) - set(human.by_id))
    human_only = sorted(set(human.by_id) - set(judged.by_id))
    if human_only:
        warnings.append(f"{len(human_only)} human-labelled items were not judged and are left out")
    h = np.array([human.by_id[i] for i in ids], dtype=bool)
    j = np.array([judged.by_id[i] for i in ids], dtype=bool)
    cats = [human.category.get(i, judged.category.get(i, "(none)")) for i in ids]
    # every value passed on is read and checked above: a StatsInputError here is an argument's
    per = binary_calibration_by_category(
        h, j, cats, rng=seed, n_resamples=n_resamples, confidence=confidence
    )
    overall = per.pop("overall")
    if len(per) == 1 and "(none)" in per:
        per = {}
    corrected = None
    if judge_only:
        u = np.array([judged.by_id[i] for i in judge_only], dtype=bool)
        corrected = corrected_pass_rate(h, j, u, confidence=confidence)
    return CalibrationReport(
        judge_hash=judge_hash,
        human_file=str(human_path),
        human_sha256=sha256_file(human_path),
        judge_file=str(judge_path),
        judge_sha256=sha256_file(judge_path),
        human_field=human.field,
        judge_field=judged.field,
        overall=overall,
        categories=per,
        corrected=corrected,
        n_judge_only=len(judge_only),
        n_human_only=len(human_only),
        seed=seed,
        warnings=warnings + overall.warnings,
    )


def read_calibration(path: str | Path) -> dict[str, Any]:
    """Read a calibration file written by `assay judge calibrate --out` (checks its kind)."""
    p = Path(path)
    if not p.exists():
        raise DataError("file not found", file=p)
    data = json_loads(p.read_text(encoding="utf-8"), p)
    if not isinstance(data, dict) or data.get("kind") != CALIBRATION_KIND:
        raise DataError(
            f"not a judge calibration (expected kind {CALIBRATION_KIND!r})", file=p, field="kind"
        )
    return data


# --------------------------------------------------------------------------------------------
# The reports of agreement and calibration: tables for people, markdown for pull requests.
# (The statistics live in assay.stats; how they read lives here, above it.)
# --------------------------------------------------------------------------------------------


def _ci(e: Interval, digits: int = 3) -> str:
    return e.fmt_bounds(digits)


def _val(e: Interval, digits: int = 3) -> str:
    return e.fmt_value(digits)


@dataclass(frozen=True, slots=True)
class _Sections:
    title: str
    stat_headers: list[str]
    stat_rows: list[list[str]]
    pair_headers: list[str]
    pair_rows: list[list[str]]
    dis_rows: list[list[str]]
    n_dis: int


def _sections(res: AgreementResult, max_rows: int) -> _Sections:
    pct = f"{res.confidence:.0%} CI"
    title = (f"criterion {res.criterion!r}: " if res.criterion is not None else "") + (
        f"{res.n_items} items ({res.n_items_multi} with 2+ labels), {res.n_ratings} labels, "
        f"raters {', '.join(res.raters) or '-'}, categories "
        f"{', '.join(map(str, res.categories)) or '-'}"
    )
    stat_rows = [[STATISTICS[k], _val(e), _ci(e), e.note or ""] for k, e in res.statistics.items()]
    if len(res.categories) > 2:
        stat_rows += [
            [f"specific agreement on {c}", _val(e), _ci(e), e.note or ""]
            for c, e in res.specific.items()
        ]
    weighted = res.ordered and len(res.categories) > 2
    pair_headers = ["rater A", "rater B", "n", "raw", "kappa", pct]
    if weighted:
        pair_headers += ["quadratic kappa", pct]
    pair_rows = []
    for p in res.pairs:
        row = [
            p.rater_a,
            p.rater_b,
            str(p.n),
            _val(p.raw_agreement),
            _val(p.cohen_kappa),
            _ci(p.cohen_kappa),
        ]
        if weighted:
            row += [_val(p.cohen_kappa_quadratic), _ci(p.cohen_kappa_quadratic)]
        pair_rows.append(row)
    dis_rows = [
        [d.item, ", ".join(f"{r}={v}" for r, v in d.labels.items())]
        for d in res.disagreements[:max_rows]
    ]
    return _Sections(
        title,
        ["statistic", "value", pct, "note"],
        stat_rows,
        pair_headers,
        pair_rows,
        dis_rows,
        len(res.disagreements),
    )


def _markdown(results: Sequence[AgreementResult], max_rows: int) -> str:
    out: list[str] = []
    for res in results:
        s = _sections(res, max_rows)
        out.append(f"### {s.title}\n")
        out.append(markdown_table(s.stat_headers, s.stat_rows, "lrll"))
        if len(s.pair_rows) > 1:
            out.append("Per rater pair:\n")
            out.append(markdown_table(s.pair_headers, s.pair_rows, "llrrrlrl"))
        out += [f"> {m}\n" for m in res.messages]
        if s.n_dis:
            out.append(f"To adjudicate ({s.n_dis} items):\n")
            out.append(markdown_table(["item", "labels"], s.dis_rows, "ll"))
    return "\n".join(out) + "\n"


def _rich(results: Sequence[AgreementResult], max_rows: int) -> Any:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[Any] = []
    for res in results:
        s = _sections(res, max_rows)
        parts.append(Text(s.title, style="bold"))
        t = Table(show_lines=False)
        for h in s.stat_headers:
            t.add_column(
                h, overflow="fold", no_wrap=h != "note", justify="right" if h == "value" else "left"
            )
        for row in s.stat_rows:
            t.add_row(*row)
        parts.append(t)
        if len(s.pair_rows) > 1:
            pt = Table(title="per rater pair")
            for h in s.pair_headers:
                pt.add_column(h)
            for row in s.pair_rows:
                pt.add_row(*row)
            parts.append(pt)
        parts += [Text.assemble(("note", "yellow"), f" {m}") for m in res.messages]
        if s.n_dis:
            dt = Table(title=f"to adjudicate: {s.n_dis} items with disagreeing labels")
            dt.add_column("item")
            dt.add_column("labels")
            for row in s.dis_rows:
                dt.add_row(*row)
            parts.append(dt)
            if s.n_dis > len(s.dis_rows):
                parts.append(
                    Text(f"... and {s.n_dis - len(s.dis_rows)} more (--max-disagreements)")
                )
        parts.append(Text(""))
    return Group(*parts)


@dataclass(frozen=True)
class AgreementReport(ReportMixin):
    """Agreement on every criterion of a labels file, stamped with its inputs (what
    ``assay agreement`` prints and writes). Tables list ``max_disagreements`` items to
    adjudicate per criterion; JSON lists them all."""

    results: list[AgreementResult]
    seed: int | None
    n_resamples: int
    confidence: float
    labels: dict[str, str] | None = None  # {"path": ..., "sha256": ...}
    assay_version: str | None = None
    max_disagreements: int = 20

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": AGREEMENT_KIND,
            "assay_version": self.assay_version,
            "labels": self.labels,
            "seed": self.seed,
            "n_resamples": self.n_resamples,
            "confidence": self.confidence,
            "results": [r.to_dict() for r in self.results],
        }

    def to_markdown(self) -> str:
        return _markdown(self.results, self.max_disagreements)

    def to_table(self) -> Any:
        return _rich(self.results, self.max_disagreements)


@dataclass(frozen=True, slots=True)
class CalibrationReport(ReportMixin):
    """A judge's calibration against human labels, tied to the judge's identity hash: what
    ``assay judge calibrate`` prints and writes (a report)."""

    judge_hash: str | None
    human_file: str
    human_sha256: str
    judge_file: str
    judge_sha256: str
    human_field: str
    judge_field: str
    overall: Calibration
    categories: dict[str, Calibration]
    corrected: CorrectedPassRate | None
    n_judge_only: int
    n_human_only: int
    seed: int | None
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": CALIBRATION_KIND,
            "format": CALIBRATION_FORMAT,
            "assay_version": package_version(),
            "judge_hash": self.judge_hash,
            "inputs": {
                "human": {
                    "path": self.human_file,
                    "sha256": self.human_sha256,
                    "field": self.human_field,
                },
                "judge": {
                    "path": self.judge_file,
                    "sha256": self.judge_sha256,
                    "field": self.judge_field,
                },
            },
            "seed": self.seed,
            "n_resamples": self.overall.n_resamples,
            "confidence": self.overall.confidence,
            "n_labelled": self.overall.n,
            "n_judge_only": self.n_judge_only,
            "n_human_only": self.n_human_only,
            "overall": self.overall.to_dict(),
            "categories": {k: v.to_dict() for k, v in self.categories.items()},
            "corrected_pass_rate": None if self.corrected is None else self.corrected.to_dict(),
            "warnings": list(self.warnings),
        }

    def _rows(self) -> list[list[str]]:
        rows = [calibration_row(k, v) for k, v in self.categories.items()]
        rows.append(calibration_row("overall", self.overall))
        return rows

    def tabular(self) -> list[Tabular]:
        tables = [
            Tabular(
                f"judge {self.judge_hash or '(no hash)'}: calibration against human labels",
                calibration_headers(self.overall.confidence),
                self._rows(),
                emphasis=set(),
            )
        ]
        if self.corrected is not None:
            tables.append(self.corrected.tabular())
        return tables

    def to_markdown(self) -> str:
        parts = [
            f"Judge `{self.judge_hash or 'unknown'}`: calibration on {self.overall.n} items\n",
            markdown_table(calibration_headers(self.overall.confidence), self._rows(), "lrrrlrlrl"),
        ]
        if self.corrected is not None:
            parts.append(f"Pass rate on {self.n_judge_only} unlabelled items:\n")
            parts.append(markdown_table(CORRECTED_HEADERS, self.corrected.rows(), "lrlrrl"))
            parts.append(self.corrected.summary + "\n")
        parts += [f"> warning: {w}\n" for w in self.warnings]
        return "\n".join(parts)

    def to_table(self) -> Any:
        from rich.console import Group
        from rich.text import Text

        first = self.tabular()[0]
        parts: list[Any] = [rich_table(first)]
        if self.corrected is not None:
            c = self.corrected
            parts.append(
                rich_table(
                    Tabular(
                        f"pass rate on {self.n_judge_only} unlabelled items, corrected",
                        list(CORRECTED_HEADERS),
                        c.rows(),
                        emphasis=set(),
                    )
                )
            )
            parts.append(Text(c.summary))
        parts += [Text.assemble(("warning", "yellow"), f" {w}") for w in self.warnings]
        return Group(*parts)
