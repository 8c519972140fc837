"""`assay compare`, `assay gate`, `assay split`, `assay plan`, `assay fresh seal|retire`.

Each command parses its options, calls one library function and formats the result.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from assay._io import check_outputs, json_loads, write_text_atomic
from assay.cli._app import app
from assay.cli._common import (
    Format,
    GoldLevel,
    RegistryHelp,
    collector_paused,
    emit,
    err_console,
    gold_level,
)
from assay.cli.groups import fresh_app
from assay.cli.options import (
    BaseChunksOpt,
    ChangedOpt,
    ChunksOpt,
    ClusterOpt,
    ConfOpt,
    CorpusChangeOpt,
    FmtOpt,
    GoldenArg,
    KOpt,
    LevelOpt,
    PairOpt,
    ResOpt,
    ReuseAliasedOpt,
    SeedOpt,
    SkipMissingOpt,
    TiersOpt,
)
from assay.errors import DataError, UsageError
from assay.metrics import DEFAULT_PAIR, HEADLINE

__all__ = ["compare_cmd", "fresh_retire_cmd", "fresh_seal_cmd", "gate_cmd", "plan_cmd", "split_cmd"]


class CIMethod(StrEnum):
    score = "score"
    percentile = "percentile"
    bca = "bca"


class BinaryCI(StrEnum):
    tango = "tango"
    newcombe = "newcombe"
    bootstrap = "bootstrap"


UnknownOpt = Annotated[
    float,
    typer.Option(
        "--max-unknown-hits",
        min=0.0,
        max=1.0,
        help="Largest share of a run's hits its chunk table may not know; more means the run "
        "was made on another index and the comparison stops (exit 2).",
    ),
]
PermOpt = Annotated[
    int, typer.Option("--permutations", min=100, help="Sign-flip permutations (graded metrics).")
]
CIOpt = Annotated[
    CIMethod,
    typer.Option(
        "--ci-method",
        help="Interval of a graded metric's delta: score (the score interval of a mean "
        "difference, which excludes 0 exactly when its score test says p < 1 - confidence), or "
        "a paired bootstrap (percentile, bca).",
    ),
]
BinaryCIOpt = Annotated[
    BinaryCI,
    typer.Option(
        "--binary-ci",
        help="Interval of a binary metric's paired delta: tango (score interval, covers at small "
        "n and rare flips), newcombe, or bootstrap.",
    ),
]
NoRecordOpt = Annotated[
    bool,
    typer.Option(
        "--no-record",
        help="Do not record this comparison in the dataset's ledger (exploration). "
        "A sealed fresh sample's use is recorded all the same.",
    ),
]


def _series(names: list[str] | None, k: int) -> list[str]:
    """The named series (metrics and checks, comma-separated or repeated), read before any
    file is: an unknown name fails fast (exit 2)."""
    from assay.compare.series import series_names

    return [i.name for i in series_names(names or list(DEFAULT_PAIR), k=k)]


SERIES_HELP = (
    "Metric(s) or answer check(s) to compare (repeat, or comma-separate): any registered one "
    "(listed below); a bare cutoff name takes --k. Default: complete and recall. Checks that read "
    "cited text need --chunks."
)
ByOpt = Annotated[
    str,
    typer.Option(
        "--by",
        help="Rows by category (default), source (log, hand, synthetic, benchmark), format, "
        "messiness, any other entry field, or metadata.FIELD.",
    ),
]


@app.command("compare", cls=RegistryHelp)
def compare_cmd(
    dataset: GoldenArg,
    base: Annotated[Path, typer.Argument(help="Baseline run (JSONL or TREC).")],
    cands: Annotated[
        list[Path],
        typer.Argument(
            help="Candidate run(s) (JSONL or TREC). Several: a leaderboard against the baseline."
        ),
    ],
    k: KOpt = 5,
    metric: Annotated[
        list[str] | None, typer.Option("--metrics", "--metric", "-m", help=SERIES_HELP)
    ] = None,
    chunks: ChunksOpt = None,
    base_chunks: BaseChunksOpt = None,
    cand_chunks: Annotated[
        list[Path] | None,
        typer.Option(
            "--cand-chunks",
            help="Each candidate run's own chunk table, in the order of the candidates (repeat "
            "once per candidate).",
        ),
    ] = None,
    max_unknown_hits: UnknownOpt = 0.05,
    level: LevelOpt = GoldLevel.auto,
    skip_missing: SkipMissingOpt = False,
    allow_changed_entries: ChangedOpt = False,
    seed: SeedOpt = 0,
    resamples: ResOpt = 10_000,
    permutations: PermOpt = 10_000,
    confidence: ConfOpt = 0.95,
    ci_method: CIOpt = CIMethod.score,
    binary_ci: BinaryCIOpt = BinaryCI.tango,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    fmt: FmtOpt = Format.table,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Also write the comparison as JSON here.")
    ] = None,
    reuse: ReuseAliasedOpt = False,
    no_record: NoRecordOpt = False,
    allow_corpus_change: CorpusChangeOpt = False,
    by: ByOpt = "category",
    cluster: ClusterOpt = "auto",
    pair: PairOpt = "turn",
    tiers: TiersOpt = None,
) -> None:
    """Compare two runs per category: both rates, the paired delta with its CI (Tango's score
    interval on binary metrics, its extension to graded differences on graded ones), which
    entries were fixed and broken, and whether that is more than noise.

    Any registered metric or answer check compares (--metrics complete@5,answer_correct,
    numbers_verified): binary ones get McNemar, graded ones Wilcoxon, counts an exact one-sided
    sign test; entries a check abstains on are left out of its pairs and counted.

    Binary complete@k gets the exact McNemar test on the flipped entries (6 fixed / 0 broken is
    p = 0.031; 16 fixed / 10 broken is p = 0.33 - the same net change, a different conclusion).
    Graded metrics (recall@k) get a Wilcoxon signed-rank test over the entries that moved and a
    paired sign-flip permutation test. P-values are Holm-adjusted across categories, overall and
    metrics, and the comparison is recorded in the dataset's ledger (<dataset>.ledger.jsonl),
    once per distinct comparison (--no-record to explore); the report says how many comparisons
    the dataset has seen and corrects for them.

    With several candidates (assay compare golden.jsonl base.jsonl a.jsonl b.jsonl c.jsonl) the
    result is a leaderboard: each candidate against the baseline per category, with its flips,
    and one Holm family across every candidate, category and metric.

    Example: assay compare golden.jsonl base.jsonl cand.jsonl --k 5
    """
    from assay.compare.options import CompareOptions
    from assay.dataset import parse_tiers

    check_outputs([out], [dataset, base, *cands, chunks, base_chunks, *(cand_chunks or [])])
    parse_tiers(tiers)
    if cand_chunks and len(cand_chunks) != len(cands):
        raise UsageError(
            f"--cand-chunks: give one chunk table per candidate ({len(cands)}), "
            f"not {len(cand_chunks)}"
        )
    # one value of options for the two-run comparison and the leaderboard
    options = CompareOptions(
        k=k,
        level=gold_level(level),
        skip_stale=skip_missing,
        allow_changed_entries=allow_changed_entries,
        max_unknown_share=max_unknown_hits,
        metrics=_series(metric, k),
        seed=seed,
        n_resamples=resamples,
        n_permutations=permutations,
        confidence=confidence,
        ci_method=ci_method.value,
        binary_ci=binary_ci.value,
        alpha=alpha,
        command="compare",
        allow_reuse=reuse,
        record=not no_record,
        record_switch="--no-record",
        allow_corpus_change=allow_corpus_change,
        by=by,
        cluster=cluster,
        pair=pair,
        tiers=tiers,
    )
    if len(cands) > 1:
        from assay.compare.leaderboard import compare_many_files

        with err_console().status("scoring and comparing runs ..."):
            board = compare_many_files(
                dataset, base, cands, chunks=chunks, base_chunks=base_chunks,
                cand_chunks=cand_chunks, options=options,
            )  # fmt: skip
        if out is not None:
            write_text_atomic(out, board.to_json() + "\n")
        emit(board, fmt)
        return
    from assay.compare import compare_files

    with err_console().status("scoring and comparing runs ..."):
        cmp = compare_files(
            dataset, base, cands[0], chunks=chunks, base_chunks=base_chunks,
            cand_chunks=cand_chunks[0] if cand_chunks else None, options=options,
        )  # fmt: skip
    if cmp.fresh is not None and cmp.fresh.get("reused"):
        err_console().print(f"[bold red]{cmp.fresh['message']}[/bold red]", highlight=False)
    if out is not None:
        write_text_atomic(out, cmp.to_json() + "\n")
    emit(cmp, fmt)


@app.command("gate", cls=RegistryHelp)
@collector_paused
def gate_cmd(
    dataset: GoldenArg,
    base: Annotated[Path, typer.Argument(help="Baseline run (e.g. main's run).")],
    cand: Annotated[Path, typer.Argument(help="Candidate run (e.g. the pull request's run).")],
    k: KOpt = 5,
    max_drop: Annotated[
        float,
        typer.Option(
            "--max-drop", min=0.0, max=1.0, help="Largest allowed absolute drop per category."
        ),
    ] = 0.02,
    margins: Annotated[
        Path | None,
        typer.Option(
            "--margins",
            help='JSON file of per-category margins {"category": 0.05, "*": 0.02}.',
        ),
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            "-m",
            help="Metric or answer check to gate on: any registered one (listed below); a bare "
            "cutoff name takes --k. Default: complete.",
        ),
    ] = None,
    metrics: Annotated[
        list[str] | None,
        typer.Option(
            "--metrics",
            help="Gate on each of several metrics or checks (comma-separate or repeat), all "
            "in one Holm family: --metrics complete@5,answer_correct.",
        ),
    ] = None,
    require_significance: Annotated[
        bool,
        typer.Option(
            "--require-significance",
            help="Fail only when a drop is also significant: its ledger-corrected p (Holm, times "
            "t(t+1) for the dataset's t-th comparison) <= --alpha.",
        ),
    ] = False,
    within_comparison: Annotated[
        bool,
        typer.Option(
            "--within-comparison",
            help="With --require-significance: judge significance by Holm within this "
            "comparison only, ignoring the dataset's earlier comparisons (the output says so).",
        ),
    ] = False,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    max_leaks: Annotated[
        int | None,
        typer.Option(
            "--max-leaks",
            min=0,
            help="Ceiling on a gated count of harms (leak: default 0, zero tolerance): a "
            "category fails when the candidate's total exceeds it, whatever the base did.",
        ),
    ] = None,
    max_abstain: Annotated[
        float,
        typer.Option(
            "--max-abstain",
            min=0.0,
            max=1.0,
            help="Largest share of a category's entries (and of all) a gated check may abstain "
            "on (in either run); above it the gate fails (exit 1), naming the check and the "
            "count per category. 1 allows any.",
        ),
    ] = 0.5,
    allow_abstain: Annotated[
        bool,
        typer.Option(
            "--allow-abstain",
            help="Let a gated check abstain on any share of the entries (--max-abstain 1): the "
            "gate then decides on the entries the check decided alone.",
        ),
    ] = False,
    summary: Annotated[
        Path | None,
        typer.Option("--summary", help="Write the verdict as Markdown (a pull-request comment)."),
    ] = None,
    chunks: ChunksOpt = None,
    base_chunks: BaseChunksOpt = None,
    cand_chunks: Annotated[
        Path | None,
        typer.Option("--cand-chunks", help="The candidate run's own chunk table."),
    ] = None,
    max_unknown_hits: UnknownOpt = 0.05,
    level: LevelOpt = GoldLevel.auto,
    skip_missing: SkipMissingOpt = False,
    allow_changed_entries: ChangedOpt = False,
    seed: SeedOpt = 0,
    resamples: ResOpt = 10_000,
    permutations: PermOpt = 10_000,
    confidence: ConfOpt = 0.95,
    ci_method: CIOpt = CIMethod.score,
    binary_ci: BinaryCIOpt = BinaryCI.tango,
    fmt: FmtOpt = Format.table,
    reuse: ReuseAliasedOpt = False,
    no_record: NoRecordOpt = False,
    allow_corpus_change: CorpusChangeOpt = False,
    by: ByOpt = "category",
    cluster: ClusterOpt = "auto",
    pair: PairOpt = "turn",
    tiers: TiersOpt = None,
    require_certified: Annotated[
        bool,
        typer.Option(
            "--require-certified",
            help="Refuse (exit 2) a dataset without a certificate (`assay certify`) or whose "
            "content changed since it was certified.",
        ),
    ] = False,
) -> None:
    """Fail CI when any category regresses - not when the average does.

    Exit status: 0 when no category's rate on --metric (complete@k by default) drops by more than
    its margin, 1 when one does, 2 on a usage or data error. Prints per category: n, both rates,
    the delta with its CI, fixed/broken counts with the McNemar p-value, and a verdict.
    Categories too small for any conclusion say so. A sealed fresh sample is refused on second
    use unless --allow-reuse.

    Any answer check gates too (--metric answer_correct: fail when a category's share of correct
    answers drops by more than --max-drop; on an error check or a count, a rise fails), and
    --metrics gates on several at once, one Holm family across all of them.

    Only verified gold decides: the gate reads the entries of label tier gold (--tiers
    gold,silver widens it), leaves ambiguous entries out, and says how many of each tier it left
    out; a dataset with no entry of the tiers asked is refused (exit 2), never passed.
    --require-certified also refuses a dataset whose labels `assay certify` has not certified
    at its current content.

    A leak is never averaged away: --metric leak (chunks the asking principal may not see,
    retrieved or cited, and figures only they state; needs --chunks for the access labels) fails
    on a single leaked chunk in the candidate, whatever the base did; --max-leaks N tolerates N.

    A gate never passes on entries its check could not decide: when a gated check abstains on
    more than --max-abstain (default 0.5) of a category's entries, or of all entries, the gate
    fails (exit 1) and says which check abstained on how many of how many, per category;
    --allow-abstain lifts that rule (as --max-abstain 1).

    Example: assay gate golden.jsonl main.jsonl pr.jsonl --k 5 --max-drop 0.02 --summary pr.md
    """
    from assay.compare.files import gate_files
    from assay.compare.gate import GatePolicy, load_margins
    from assay.compare.options import CompareOptions
    from assay.dataset import parse_tiers

    check_outputs([summary], [dataset, base, cand, chunks, base_chunks, cand_chunks, margins])
    parse_tiers(tiers)

    named = [*([metric] if metric else []), *(metrics or [])]
    gated = _series(named or [HEADLINE], k)
    policy = GatePolicy(
        max_drop=max_drop,
        metric=gated[0],
        metrics=tuple(gated[1:]),
        margins=load_margins(margins) if margins is not None else {},
        require_significance=require_significance,
        alpha=alpha,
        within_comparison=within_comparison,
        max_count=max_leaks,
        max_abstain=1.0 if allow_abstain else max_abstain,
    )
    with err_console().status("scoring, comparing and gating ..."):
        result = gate_files(
            dataset,
            base,
            cand,
            policy=policy,
            chunks=chunks,
            base_chunks=base_chunks,
            cand_chunks=cand_chunks,
            require_certified=require_certified,
            options=CompareOptions(
                k=k,
                level=gold_level(level),
                skip_stale=skip_missing,
                allow_changed_entries=allow_changed_entries,
                max_unknown_share=max_unknown_hits,
                metrics=None,
                seed=seed,
                n_resamples=resamples,
                n_permutations=permutations,
                confidence=confidence,
                ci_method=ci_method.value,
                binary_ci=binary_ci.value,
                alpha=alpha,
                command="gate",
                allow_reuse=reuse,
                record=not no_record,
                record_switch="--no-record",
                allow_corpus_change=allow_corpus_change,
                by=by,
                cluster=cluster,
                pair=pair,
                tiers=tiers,
            ),
        )
    fresh = result.comparison.fresh
    if fresh is not None and fresh.get("reused"):
        err_console().print(f"[bold red]{fresh['message']}[/bold red]", highlight=False)
    if summary is not None:
        write_text_atomic(summary, result.to_markdown())
    emit(result, fmt)
    raise typer.Exit(result.exit_code)


@app.command("split")
def split_cmd(
    dataset: Annotated[Path, typer.Argument(help="Dataset to split (JSONL).")],
    test_size: Annotated[
        float, typer.Option("--test-size", min=0.0, max=1.0, help="Share of entries in test.")
    ] = 0.5,
    stratify: Annotated[
        str, typer.Option("--stratify", help="Field to stratify by ('none' to not stratify).")
    ] = "category",
    group_by: Annotated[
        str | None,
        typer.Option(
            "--group-by",
            help="Dotted field whose values stay together, e.g. metadata.fact_ids; a list groups by "
            "every element (entries sharing any fact stay together).",
        ),
    ] = None,
    seed: SeedOpt = 0,
    train_out: Annotated[
        Path | None, typer.Option("--train-out", help="Default: <name>.train.jsonl beside it.")
    ] = None,
    test_out: Annotated[
        Path | None, typer.Option("--test-out", help="Default: <name>.test.jsonl beside it.")
    ] = None,
    fmt: FmtOpt = Format.table,
) -> None:
    """Split a dataset into train and test, stratified and grouped, reproducibly.

    Entries sharing a --group-by value (a fact, a conflict, a document) land on the same side,
    so nothing leaks across; with a list field (the synthetic room's metadata.fact_ids) entries
    sharing any element do, transitively. A field no entry has stops the split (exit 2). Each side is written as a dataset with `split` set on every entry
    and a manifest stamped with the parent version and the split's parameters; the report shows
    the achieved test share per stratum.

    Example: assay split golden.jsonl --test-size 0.5 --stratify category
    --group-by metadata.fact_ids --seed 7
    """
    from assay.dataset import split_dataset

    res = split_dataset(
        dataset,
        test_size=test_size,
        stratify=None if stratify.lower() == "none" else stratify,
        group_by=group_by,
        seed=seed,
        train_out=train_out,
        test_out=test_out,
    )
    if fmt is Format.json:
        typer.echo(json.dumps(res.to_dict(), indent=2))
    else:
        emit(res, fmt)


@app.command("plan")
def plan_cmd(
    delta: Annotated[
        float, typer.Option("--delta", help="Change in complete@k to detect (e.g. 0.03).")
    ],
    discordant: Annotated[
        float | None,
        typer.Option(
            "--discordant",
            help="Share of entries expected to flip either way (e.g. 0.06). Default: from --rate "
            "assuming independent outcomes (conservative), or observed from --base/--cand.",
        ),
    ] = None,
    rate: Annotated[
        float | None, typer.Option("--rate", help="Baseline complete@k rate (e.g. 0.80).")
    ] = None,
    power: Annotated[float, typer.Option("--power", help="Target power.")] = 0.8,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    categories: Annotated[
        int,
        typer.Option(
            "--categories",
            min=1,
            help="Categories compared together; with the overall row and --metrics they make the "
            "Holm family compare and gate test ((categories + 1) x metrics).",
        ),
    ] = 1,
    metrics: Annotated[
        int,
        typer.Option(
            "--metrics",
            min=1,
            help="How many metrics compare or gate test together (default 2: complete and recall).",
        ),
    ] = 2,
    lifetime_comparisons: Annotated[
        int | None,
        typer.Option(
            "--lifetime-comparisons",
            min=0,
            help="Plan for the dataset's N-th comparison: the ledger multiplies its p-values by "
            "N(N+1). Default: the next one (the dataset's ledger count + 1 with --dataset, else "
            "1: the first recorded comparison already doubles p); 0: no ledger correction.",
        ),
    ] = None,
    dataset: Annotated[
        Path | None, typer.Option("--dataset", help="With --base/--cand: plan per category.")
    ] = None,
    base: Annotated[Path | None, typer.Option("--base", help="Baseline run.")] = None,
    cand: Annotated[Path | None, typer.Option("--cand", help="Candidate run.")] = None,
    k: KOpt = 5,
    fmt: FmtOpt = Format.table,
    icc: Annotated[
        float | None,
        typer.Option(
            "--icc",
            help="Intraclass correlation of the paired changes within a document (0-1): the "
            "entries needed grow by the design effect 1 + (per-cluster - 1) ICC.",
        ),
    ] = None,
    per_cluster: Annotated[
        float | None,
        typer.Option(
            "--per-cluster",
            min=1,
            help="Entries (questions) per document (default: from --dataset's clusters, "
            "their size-weighted mean; else 1).",
        ),
    ] = None,
    cluster: ClusterOpt = "auto",
    chunks: ChunksOpt = None,
    level: LevelOpt = GoldLevel.auto,
    skip_missing: SkipMissingOpt = False,
    tiers: TiersOpt = None,
) -> None:
    """How many entries per category to detect a change in complete@k with a paired test.

    Plans the exact McNemar test (two-sided) from the change to detect and the share of entries
    that flip either way, at the level compare and gate test it: --alpha over the Holm family of
    (--categories + the overall row) x --metrics tests, and over N(N+1) more for the dataset's
    N-th comparison (--lifetime-comparisons). Give --dataset, --base and --cand to use each
    category's observed flip rate and see how far each category is from enough; a category so
    small that even every entry flipping one way could not be significant says so. Their
    entries are clustered as compare clusters them (--cluster): the ICC of the paired changes
    within a cluster (one-way ANOVA) and the entries per cluster are then estimated from the
    runs unless --icc / --per-cluster are given, and the plan is in clusters and entries.

    Example: assay plan --rate 0.80 --delta 0.04 --discordant 0.10 --categories 6
    """
    from assay.compare.planning import plan_sample

    _finite_options(
        {
            "--delta": delta,
            "--discordant": discordant,
            "--rate": rate,
            "--power": power,
            "--alpha": alpha,
        }
    )
    plan = plan_sample(
        delta=delta,
        discordant=discordant,
        rate=rate,
        power=power,
        alpha=alpha,
        categories=categories,
        metrics=metrics,
        lifetime_comparisons=lifetime_comparisons,
        dataset=dataset,
        base=base,
        cand=cand,
        k=k,
        icc=icc,
        per_cluster=per_cluster,
        cluster=cluster,
        chunks=chunks,
        level=gold_level(level),
        skip_missing=skip_missing,
        tiers=tiers,
    )
    emit(plan, fmt)


def _finite_options(values: dict[str, float | None]) -> None:
    """Refuse NaN and infinities by the option's name (the planner's own checks cannot name it)."""
    import math

    for flag, v in values.items():
        if v is not None and not math.isfinite(v):
            raise UsageError(f"{flag}: must be a finite number, not {v}")


@fresh_app.command("seal")
def fresh_seal_cmd(
    sample: Annotated[Path, typer.Argument(help="The fresh sample (JSONL of new entries).")],
    force: Annotated[
        bool,
        typer.Option("--force", help="Seal again a sample that was sealed but never used."),
    ] = False,
) -> None:
    """Seal a fresh sample: register it by its content hash and start counting uses.

    The first score/compare/gate/check against it is the honest one; every later use is
    refused unless --allow-reuse (and then recorded as a reuse). A copy, a rename or a manifest
    edit is still the same sample; editing the sealed file makes it unusable. The registry is
    per user ($ASSAY_FRESH_REGISTRY overrides where it lives).
    """
    from assay.dataset import fresh

    block = fresh.seal(sample, force=force)
    err_console().print(
        f"sealed {block['name']}: {block['n_entries']} entries, sha256 {block['content_hash'][:16]}",
        highlight=False,
    )


@fresh_app.command("retire")
def fresh_retire_cmd(
    sample: Annotated[Path, typer.Argument(help="The sealed fresh sample.")],
    into: Annotated[Path, typer.Option("--into", help="The main dataset to merge it into.")],
    source: Annotated[
        str | None,
        typer.Option("--source", help="Provenance for entries without one (log, hand, ...)."),
    ] = None,
    split: Annotated[
        str | None, typer.Option("--split", help="Split label (default: the sample's name).")
    ] = None,
    failed: Annotated[
        Path | None,
        typer.Option(
            "--failed",
            help="Ids of the entries the system failed in the sample's one use (one per line, "
            "or JSONL with an id): marked with the flag fresh_failure.",
        ),
    ] = None,
) -> None:
    """Merge a used fresh sample into the main set with provenance, and close it (entries the
    system failed marked; the changelog counts them and those from production failures)."""
    from assay.dataset import Source, fresh

    src: Source | None = None
    if source is not None:
        try:
            src = Source(source)
        except ValueError:
            raise UsageError(
                f"--source must be one of {', '.join(s.value for s in Source)}"
            ) from None
    failed_ids: dict[str, int | None] = {}
    if failed is not None:
        for lineno, raw in enumerate(failed.read_text(encoding="utf-8").splitlines(), start=1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            if text.startswith("{"):
                try:
                    rid = json_loads(text).get("id")
                except ValueError:
                    rid = None
                if not isinstance(rid, str) or not rid:
                    raise DataError("a JSON line needs an id", file=failed, line=lineno, field="id")
                text = rid
            failed_ids.setdefault(text, lineno)
    out = fresh.retire(
        sample, into=into, source=src, split=split, failed=failed_ids,
        failed_file=None if failed is None else str(failed),
    )  # fmt: skip
    err_console().print(f"retired {sample} into {into}: {len(out)} entries now", highlight=False)
