"""`assay agreement` and `assay judge calibrate`: parse, one call into assay.stats, emit."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from assay._io import check_outputs, iter_jsonl, write_text_atomic
from assay.cli._app import app
from assay.cli._common import Format, emit
from assay.cli.groups import judge_app
from assay.cli.options import ConfOpt, FmtOpt, ResOpt

if TYPE_CHECKING:  # the statistics stack (scipy) is imported when a command runs, not at start-up
    from assay.stats.agreement import Label


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
    fmt: FmtOpt = Format.table,
    seed: Annotated[
        int, typer.Option(help="Seed of the bootstrap (same seed, same intervals).")
    ] = 0,
    resamples: ResOpt = 2000,
    confidence: ConfOpt = 0.95,
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
    from assay.label_files import agreement_file

    check_outputs([out], [labels])

    pos: Label | None = None
    if positive is not None:
        parsed = _parse_categories(positive)
        pos = parsed[0] if parsed else positive
    report = agreement_file(
        labels,
        criterion=criterion,
        categories=_parse_categories(categories),
        positive=pos,
        seed=seed,
        n_resamples=resamples,
        confidence=confidence,
        max_disagreements=max_disagreements,
    )
    if out is not None:
        write_text_atomic(out, report.to_json() + "\n")
    emit(report, fmt)


# --------------------------------------------------------------------------------------------
# assay certify
# --------------------------------------------------------------------------------------------


@app.command("certify")
def certify_cmd(
    dataset: Annotated[Path, typer.Argument(help="Golden dataset (JSONL) the labels are about.")],
    labels: Annotated[
        Path,
        typer.Option(
            "--labels",
            help="The experts' labels in the long format `assay agreement` reads (the "
            "workbench's `export --labels-long`): one {item, rater, label[, criterion]} per line, "
            "items named by entry id.",
        ),
    ],
    enrichment: Annotated[
        str,
        typer.Option(
            "--enrichment",
            help="How the overlap batch was drawn: 'none' (a plain random draw), or how it was "
            "enriched with likely failures (e.g. 'half drawn from judge failures'). Recorded "
            "and reported.",
        ),
    ],
    min_overlap: Annotated[
        int, typer.Option("--min-overlap", min=1, help="Overlap items needed per criterion.")
    ] = 100,
    min_alpha: Annotated[
        float, typer.Option("--min-alpha", min=-1.0, max=1.0, help="Krippendorff's alpha needed.")
    ] = 0.80,
    min_lower: Annotated[
        float,
        typer.Option("--min-lower", min=-1.0, max=1.0, help="Lower 95% bound of alpha needed."),
    ] = 0.667,
    per_category: Annotated[
        str | None,
        typer.Option(
            "--per-category",
            help="Criteria (comma-separated) whose bar holds in each category of the entries, "
            "not only over all of them.",
        ),
    ] = None,
    categories: Annotated[
        str | None,
        typer.Option(help="The full scale in order, as for `assay agreement --categories`."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap (as `assay agreement`).")] = 0,
    resamples: ResOpt = 2000,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check the bar; write nothing to the manifest.")
    ] = False,
    fmt: FmtOpt = Format.table,
) -> None:
    """Certify a label set: per criterion at least 100 overlap items, Krippendorff's alpha >=
    0.80 and the lower end of its 95% interval >= 0.667, and how the overlap batch was drawn.

    The figures are those `assay agreement` reports on the same labels (same seed and
    resamples). A set that clears the bar gets a certificate in its manifest (criteria, figures
    with intervals, the dataset's content hash and version, the labels' hash, the date), which
    `assay gate --require-certified` asks for; any edit of the dataset voids it.
    Exit 0 certified, 1 below the bar (nothing written), 2 bad input (nothing written).

    Example: assay certify golden.jsonl --labels labels.jsonl --enrichment none
    """
    from assay.certify import certify

    report = certify(
        dataset,
        labels,
        enrichment=enrichment,
        min_overlap=min_overlap,
        min_alpha=min_alpha,
        min_lower=min_lower,
        per_category=[c.strip() for c in (per_category or "").split(",") if c.strip()],
        categories=_parse_categories(categories),
        seed=seed,
        n_resamples=resamples,
        write=not dry_run,
    )
    emit(report, fmt)
    raise typer.Exit(report.exit_code)


# --------------------------------------------------------------------------------------------
# assay judge calibrate
# --------------------------------------------------------------------------------------------


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
    fmt: FmtOpt = Format.table,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    resamples: ResOpt = 2000,
    confidence: ConfOpt = 0.95,
    accept_weak: Annotated[
        bool,
        typer.Option(
            "--accept-weak-calibration",
            help="Write a calibration below the bar (>= 100 labelled items, >= 30 human FAILs, "
            "TPR and TNR >= 0.85 (0.90 in high-risk categories), kappa >= 0.60, overall and per "
            "category, held out); recorded in the file and in every output that uses it.",
        ),
    ] = False,
    high_risk: Annotated[
        str | None,
        typer.Option(
            "--high-risk",
            help="Comma-separated high-risk categories: TPR and TNR >= 0.90 there, with at least "
            "10 human passes and 10 human FAILs to show it. Each must be a category of the "
            "labelled items or of --dataset.",
        ),
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset",
            help="The golden dataset the judge grades: categories its manifest declares "
            '{"risk": "high"} are high-risk (as with --high-risk).',
        ),
    ] = None,
) -> None:
    """Calibrate an automatic judge against human PASS/FAIL labels.

    TPR (the human passed it and the judge passed it), TNR (the human failed it and the judge
    failed it) and Cohen's kappa, each with a bootstrap CI over items, per category and overall;
    warnings below 100 items or 30 human FAILs. When the judge file also holds items no human
    labelled, the judge's pass rate on them is corrected for its measured errors (Rogan-Gladen,
    PPI, PPI++): the interval with the best coverage measured on the calibration grid is
    recommended, and the narrowest on these data named.

    The bar: at least 100 labelled items, at least 30 human FAILs, TPR and TNR of at least 0.85
    and kappa of at least 0.60, on held-out items (none in a split the judge was built on, such
    as the workbench's judge-fewshot). TPR, TNR and kappa are held to it overall and in every
    category with at least 10 human passes (TPR) or 10 human FAILs (TNR); a high-risk category
    (--high-risk, or "risk": "high" in the --dataset manifest's categories) needs 0.90, and the
    labels to show it. Below it, --out refuses (exit 2) unless --accept-weak-calibration; every
    output shows each slice's figures and names the slices that failed.

    Example: assay judge calibrate --human labels.jsonl --judge judged.jsonl --out calib.json
    """
    from assay.dataset import load_dataset
    from assay.judge.bar import calibration_bar, refuse_weak
    from assay.label_files import calibrate_files

    check_outputs([out], [human, judge, dataset])
    ds = load_dataset(dataset) if dataset is not None else None
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
    bar = calibration_bar(
        report,
        high_risk=[c.strip() for c in high_risk.split(",")] if high_risk is not None else (),
        dataset=ds,
        not_held_out=_not_held_out(human, report),
        accept_weak=accept_weak,
    )
    if bar.shortfalls and out is not None and not accept_weak:
        raise refuse_weak("this calibration", bar.shortfalls)
    data = {**json.loads(report.to_json()), "bar": bar.to_dict()}
    if out is not None:
        write_text_atomic(out, json.dumps(data, indent=2) + "\n")
    if fmt is Format.json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    emit(report, fmt)
    if fmt is Format.markdown:
        sys.stdout.write("\n")
    emit(bar, fmt)


def _not_held_out(human: Path, report: Any) -> int:
    """Labelled items whose human row names a split the judge was built on (judge-fewshot,
    train, dev): a calibration on them is not held out."""
    from assay.judge.bar import NOT_HELD_OUT_SPLITS

    ids = set()
    for _line, row in iter_jsonl(human):
        if isinstance(row, dict) and row.get("split") in NOT_HELD_OUT_SPLITS:
            ids.add(str(row.get("id", row.get("item"))))
    return len(ids) if ids and report.overall.n else 0
