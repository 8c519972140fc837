"""`assay agreement` and `assay judge calibrate`: thin wrappers over assay.stats."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from assay._io import sha256_file, write_text_atomic
from assay.cli import app
from assay.cli._common import Format
from assay.cli.groups import judge_app
from assay.errors import AssayError, DataError

if TYPE_CHECKING:  # the statistics stack (scipy) is imported when a command runs, not at start-up
    from assay.stats._resample import Estimate
    from assay.stats.agreement import AgreementResult, Label
    from assay.stats.calibration import Calibration, CalibrationReport

AGREEMENT_KIND = "assay.agreement"


def _fail(exc: AssayError) -> typer.Exit:
    err = Console(stderr=True, highlight=False)
    if isinstance(exc, DataError):
        for p in exc.problems:
            err.print(f"[red]error[/red] {p}", markup=True, soft_wrap=True)
    else:
        err.print(f"[red]error[/red] {exc}", soft_wrap=True)
    return typer.Exit(2)


def _ci(e: Estimate, digits: int = 3) -> str:
    if e.low is None or e.high is None:
        return ""
    return f"[{e.low:.{digits}f}, {e.high:.{digits}f}]"


def _val(e: Estimate, digits: int = 3) -> str:
    return "undefined" if e.value is None else f"{e.value:.{digits}f}"


def _md_table(headers: list[str], rows: list[list[str]]) -> str:
    def esc(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# assay agreement
# --------------------------------------------------------------------------------------------


def _parse_categories(text: str | None) -> list[Label] | None:
    if text is None:
        return None
    out: list[Label] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            val = json.loads(part)
        except json.JSONDecodeError:
            val = part
        out.append(val if isinstance(val, bool | int | float | str) else part)
    return out


def _agreement_sections(res: AgreementResult, max_rows: int) -> dict[str, Any]:
    pct = f"{res.confidence:.0%} CI"
    title = (f"criterion {res.criterion!r}: " if res.criterion is not None else "") + (
        f"{res.n_items} items ({res.n_items_multi} with 2+ labels), {res.n_ratings} labels, "
        f"raters {', '.join(res.raters) or '-'}, categories "
        f"{', '.join(map(str, res.categories)) or '-'}"
    )
    from assay.stats.agreement import STATISTICS

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
    return {
        "title": title,
        "stat_headers": ["statistic", "value", pct, "note"],
        "stat_rows": stat_rows,
        "pair_headers": pair_headers,
        "pair_rows": pair_rows,
        "dis_rows": dis_rows,
        "n_dis": len(res.disagreements),
    }


def _print_agreement_table(results: list[AgreementResult], max_rows: int) -> None:
    console = Console(highlight=False)
    for res in results:
        s = _agreement_sections(res, max_rows)
        console.print(f"[bold]{s['title']}[/bold]", soft_wrap=True)
        t = Table(show_lines=False)
        for h in s["stat_headers"]:
            t.add_column(
                h, overflow="fold", no_wrap=h != "note", justify="right" if h == "value" else "left"
            )
        for row in s["stat_rows"]:
            t.add_row(*row)
        console.print(t)
        if len(s["pair_rows"]) > 1:
            pt = Table(title="per rater pair")
            for h in s["pair_headers"]:
                pt.add_column(h)
            for row in s["pair_rows"]:
                pt.add_row(*row)
            console.print(pt)
        for m in res.messages:
            console.print(f"[yellow]note[/yellow] {m}", soft_wrap=True)
        if s["n_dis"]:
            dt = Table(title=f"to adjudicate: {s['n_dis']} items with disagreeing labels")
            dt.add_column("item")
            dt.add_column("labels")
            for row in s["dis_rows"]:
                dt.add_row(*row)
            console.print(dt)
            if s["n_dis"] > len(s["dis_rows"]):
                console.print(
                    f"... and {s['n_dis'] - len(s['dis_rows'])} more (--max-disagreements)"
                )
        console.print()


def _agreement_markdown(results: list[AgreementResult], max_rows: int) -> str:
    out: list[str] = []
    for res in results:
        s = _agreement_sections(res, max_rows)
        out.append(f"### {s['title']}\n")
        out.append(_md_table(s["stat_headers"], s["stat_rows"]) + "\n")
        if len(s["pair_rows"]) > 1:
            out.append("Per rater pair:\n")
            out.append(_md_table(s["pair_headers"], s["pair_rows"]) + "\n")
        out += [f"> {m}\n" for m in res.messages]
        if s["n_dis"]:
            out.append(f"To adjudicate ({s['n_dis']} items):\n")
            out.append(_md_table(["item", "labels"], s["dis_rows"]) + "\n")
    return "\n".join(out)


@app.command("agreement")
def agreement_cmd(
    labels: Annotated[
        Path,
        typer.Argument(help="Long-format JSONL: one {item, rater, label[, criterion]} per line."),
    ],
    criterion: Annotated[
        str | None,
        typer.Option(
            "--criterion",
            "-c",
            help="Only this criterion (default: every criterion, each on its own).",
        ),
    ] = None,
    categories: Annotated[
        str | None,
        typer.Option(
            help="The full scale in order, comma-separated (e.g. '0,1,2,3' or 'fail,pass'). "
            "Gives text labels an order (ordinal statistics) and counts unused categories."
        ),
    ] = None,
    positive: Annotated[
        str | None,
        typer.Option(
            help="The positive label of a binary scale (default: true, 1, pass, yes, correct, ...)."
        ),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.table,
    seed: Annotated[
        int, typer.Option(help="Seed of the bootstrap (same seed, same intervals).")
    ] = 0,
    resamples: Annotated[int, typer.Option(min=1, help="Bootstrap resamples of items.")] = 2000,
    confidence: Annotated[
        float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals.")
    ] = 0.95,
    max_disagreements: Annotated[
        int,
        typer.Option(
            min=0, help="How many disagreeing items to list for adjudication (json lists all)."
        ),
    ] = 20,
    out: Annotated[
        Path | None, typer.Option(help="Also write the full JSON report to this file.")
    ] = None,
) -> None:
    """Agreement between experts, each statistic with a bootstrap CI over items.

    Raw agreement, Cohen's kappa (unweighted, linear, quadratic), Fleiss' kappa, Krippendorff's
    alpha (nominal, ordinal, interval, ratio; missing labels allowed), PABAK, Gwet's AC1 and
    positive / negative specific agreement, per criterion, with every rater pair, the items to
    adjudicate, and a plain-words note when kappa is low only because one label dominates.

    Example: assay agreement labels.jsonl --criterion faithful --format markdown
    """
    try:
        from assay.stats.agreement import agreement_by_criterion, load_labels

        records = load_labels(labels)
        if criterion is not None:
            records = [r for r in records if r.criterion == criterion]
            if not records:
                raise DataError(f"no labels with criterion {criterion!r}", file=labels)
        pos: Label | None = None
        if positive is not None:
            parsed = _parse_categories(positive)
            pos = parsed[0] if parsed else positive
        by = agreement_by_criterion(
            records,
            categories=_parse_categories(categories),
            positive=pos,
            rng=seed,
            n_resamples=resamples,
            confidence=confidence,
            file=str(labels),
        )
    except AssayError as exc:
        raise _fail(exc) from None
    results = list(by.values())
    from assay import __version__

    report = {
        "kind": AGREEMENT_KIND,
        "assay_version": __version__,
        "labels": {"path": str(labels), "sha256": sha256_file(labels)},
        "seed": seed,
        "n_resamples": resamples,
        "confidence": confidence,
        "results": [r.to_dict() for r in results],
    }
    text = json.dumps(report, indent=2, ensure_ascii=False, default=str)
    if out is not None:
        write_text_atomic(out, text + "\n")
    if fmt is Format.json:
        sys.stdout.write(text + "\n")
    elif fmt is Format.markdown:
        sys.stdout.write(_agreement_markdown(results, max_disagreements) + "\n")
    else:
        _print_agreement_table(results, max_disagreements)


# --------------------------------------------------------------------------------------------
# assay judge calibrate
# --------------------------------------------------------------------------------------------


def _calibration_rows(report: CalibrationReport) -> list[list[str]]:
    def row(name: str, c: Calibration) -> list[str]:
        return [
            name,
            str(c.n),
            str(c.n_human_fail),
            _val(c.tpr),
            _ci(c.tpr),
            _val(c.tnr),
            _ci(c.tnr),
            _val(c.kappa),
            _ci(c.kappa),
        ]

    rows = [row(k, v) for k, v in report.categories.items()]
    rows.append(row("overall", report.overall))
    return rows


def _calibration_headers(confidence: float) -> list[str]:
    ci = f"{confidence:.0%} CI"
    return ["category", "n", "human FAILs", "TPR", ci, "TNR", ci, "kappa", ci]


def _corrected_rows(report: CalibrationReport) -> list[list[str]]:
    if report.corrected is None:
        return []
    return [
        [
            m.method,
            _val(m.estimate, 4),
            _ci(m.estimate, 4),
            "" if m.width is None else f"{m.width:.4f}",
            "" if m.lam is None else f"{m.lam:.3f}",
            m.estimate.note or "",
        ]
        for m in report.corrected.methods
    ]


_CORRECTED_HEADERS = ["pass rate", "estimate", "CI", "width", "lambda", "note"]


@judge_app.command("calibrate")
def calibrate_cmd(
    human: Annotated[
        Path, typer.Option(help="Human verdicts, JSONL: {id, pass|label|verdict[, category]}.")
    ],
    judge: Annotated[
        Path,
        typer.Option(
            help="Judge verdicts, JSONL: {id, pass|label|verdict[, category, judge_hash]}. "
            "Items no human labelled are the unlabelled set whose pass rate is corrected."
        ),
    ],
    human_field: Annotated[
        str | None, typer.Option(help="Verdict field of the human file (default: auto).")
    ] = None,
    judge_field: Annotated[
        str | None, typer.Option(help="Verdict field of the judge file (default: auto).")
    ] = None,
    category_field: Annotated[
        str, typer.Option(help="Field holding each item's category.")
    ] = "category",
    criterion: Annotated[
        str | None,
        typer.Option(help="Keep only human rows with this criterion (a long-format labels file)."),
    ] = None,
    judge_hash: Annotated[
        str | None,
        typer.Option(help="The judge's identity hash (default: the judged rows' judge_hash)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Write the calibration (JSON, tied to the judge hash) here.")
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.table,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    resamples: Annotated[int, typer.Option(min=1, help="Bootstrap resamples of items.")] = 2000,
    confidence: Annotated[float, typer.Option(min=0.5, max=0.999, help="Confidence level.")] = 0.95,
) -> None:
    """Calibrate an automatic judge against human PASS/FAIL labels.

    TPR (the human passed it and the judge passed it), TNR (the human failed it and the judge
    failed it) and Cohen's kappa, each with a bootstrap CI over items, per category and overall;
    warnings below 100 items or 30 human FAILs. When the judge file also holds items no human
    labelled, the judge's pass rate on them is corrected for its measured errors (Rogan-Gladen,
    PPI, PPI++) and the narrowest interval is named.

    Example: assay judge calibrate --human labels.jsonl --judge judged.jsonl --out calib.json
    """
    try:
        from assay.stats.calibration import calibrate_files

        report = calibrate_files(
            human,
            judge,
            human_field=human_field,
            judge_field=judge_field,
            category_field=category_field,
            judge_hash=judge_hash,
            criterion=criterion,
            seed=seed,
            n_resamples=resamples,
            confidence=confidence,
        )
    except AssayError as exc:
        raise _fail(exc) from None
    data = report.to_dict()
    text = json.dumps(data, indent=2, ensure_ascii=False)
    if out is not None:
        write_text_atomic(out, text + "\n")
    if fmt is Format.json:
        sys.stdout.write(text + "\n")
        return
    headers = _calibration_headers(confidence)
    rows = _calibration_rows(report)
    crows = _corrected_rows(report)
    if fmt is Format.markdown:
        parts = [
            f"Judge `{report.judge_hash or 'unknown'}`: calibration on {report.overall.n} items\n",
            _md_table(headers, rows) + "\n",
        ]
        if crows:
            parts.append(f"Pass rate on {report.n_judge_only} unlabelled items:\n")
            parts.append(_md_table(_CORRECTED_HEADERS, crows) + "\n")
        if report.corrected is not None:
            parts.append(report.corrected.summary + "\n")
        parts += [f"> warning: {w}\n" for w in report.warnings]
        sys.stdout.write("\n".join(parts))
        return
    console = Console(highlight=False)
    t = Table(title=f"judge {report.judge_hash or '(no hash)'}: calibration against human labels")
    for h in headers:
        t.add_column(h, justify="left" if h == "category" else "right")
    for r in rows:
        t.add_row(*r)
    console.print(t)
    if crows:
        ct = Table(title=f"pass rate on {report.n_judge_only} unlabelled items, corrected")
        for h in _CORRECTED_HEADERS:
            ct.add_column(h)
        for r in crows:
            ct.add_row(*r)
        console.print(ct)
    if report.corrected is not None:
        console.print(report.corrected.summary, soft_wrap=True)
    for w in report.warnings:
        console.print(f"[yellow]warning[/yellow] {w}", soft_wrap=True)
