"""The options several commands share, each defined once with one help text.

Every command of the CLI declares its parameters in one Typer style, ``Annotated``: the type and
the `typer.Option` (or `typer.Argument`) in the annotation, the default as the parameter's
default. A shared option is an ``Annotated`` alias here; a command writes
``fmt: FmtOpt = Format.table`` and so gets the same names, bounds and help as every other
command that takes it. An option that only one command group has stays in that module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli._common import Format, GoldLevel

__all__ = [
    "MIN_RESAMPLES",
    "BaseChunksOpt",
    "CacheDirOpt",
    "ChangedOpt",
    "ChunksOpt",
    "ClusterOpt",
    "ConfOpt",
    "CorpusChangeOpt",
    "FmtOpt",
    "GoldenArg",
    "KOpt",
    "LevelOpt",
    "ResOpt",
    "ReuseAliasedOpt",
    "ReuseOpt",
    "SeedOpt",
    "SkipMissingOpt",
    "TiersOpt",
]

LEVEL_HELP = (
    "chunk: a gold chunk must be retrieved; page: any chunk of a gold page counts (for quotes "
    "no one chunk holds: split across chunks or longer than them); auto (the default): the "
    "level follows the gold -- chunk level when every anchor resolves onto a chunk, otherwise "
    "retrieval commands stop with one message naming the entries, and answer checks (which need "
    "no chunk-level gold) read it at page level and say so."
)
SKIP_MISSING_HELP = (
    "Leave out entries whose gold does not resolve on the chunk table (document absent, page "
    "beyond the document, quote longer than the chunks hold, chunk text changed) and say how "
    "many and why; without it the command stops and lists them."
)
CORPUS_CHANGE_HELP = (
    "Read a run against a chunk table other than the one it was made on, or compare runs made "
    "on different corpora (refused otherwise: the same chunk id may hold other text); the "
    "result says it was overridden."
)
TIERS_HELP = (
    "Label tiers whose entries decide, comma-separated: gold (two experts agreeing, or an "
    "adjudication), silver (one expert), draft (generated, unreviewed). Default: gold; an "
    "untiered dataset (no entry states a tier or reviewers) is used whole. Ambiguous entries "
    "are always left out; the result says how many of each tier were."
)

GoldenArg = Annotated[Path, typer.Argument(help="Golden dataset (JSONL of entries).")]
FmtOpt = Annotated[
    Format,
    typer.Option(
        "--format",
        "-f",
        help="Output: a table for people, json for programs, markdown for pull requests.",
    ),
]
KOpt = Annotated[int, typer.Option("--k", "-k", min=1, help="Rank cutoff for @k metrics.")]
ChunksOpt = Annotated[
    Path | None,
    typer.Option(
        "--chunks",
        help="Chunk table (JSONL) for runs that do not record their own (assay run records the "
        "table of bm25 and filings systems); needed for anchors and --level page. Not needed "
        "when every entry is a SQL question: the runs are rated by the gold SQL checks.",
    ),
]
BaseChunksOpt = Annotated[
    Path | None,
    typer.Option(
        "--base-chunks",
        help="The baseline run's own chunk table: its gold is resolved on it (default: the "
        "table the run recorded, else --chunks).",
    ),
]
LevelOpt = Annotated[GoldLevel, typer.Option("--level", help=LEVEL_HELP)]
SkipMissingOpt = Annotated[
    bool, typer.Option("--skip-missing", "--skip-stale", help=SKIP_MISSING_HELP)
]
ChangedOpt = Annotated[
    bool,
    typer.Option(
        "--allow-changed-entries",
        help="Score, check or compare rows whose entry's query or as_of changed since the run "
        "was made (refused otherwise, with the list of entries); the output says they were "
        "used anyway.",
    ),
]
CacheDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir", help="Request cache location (default .assay-cache or $ASSAY_CACHE_DIR)."
    ),
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap and permutations.")]
MIN_RESAMPLES = 100
"""The fewest bootstrap resamples any command takes: with fewer, the ends of a 95% interval rest
on two or three draws."""
ResOpt = Annotated[
    int,
    typer.Option(
        "--resamples",
        min=MIN_RESAMPLES,
        help=f"Bootstrap resamples for the intervals (at least {MIN_RESAMPLES}).",
    ),
]
ConfOpt = Annotated[float, typer.Option("--confidence", min=0.5, max=0.999, help="CI level.")]
CorpusChangeOpt = Annotated[bool, typer.Option("--allow-corpus-change", help=CORPUS_CHANGE_HELP)]
TiersOpt = Annotated[str | None, typer.Option("--tiers", help=TIERS_HELP)]
REUSE_HELP = (
    "Use a sealed fresh sample again, for scores or per-entry results (refused otherwise: the "
    "first look is the only blind one; the reuse is recorded)."
)
ReuseOpt = Annotated[bool, typer.Option("--allow-reuse", help=REUSE_HELP)]
ReuseAliasedOpt = Annotated[bool, typer.Option("--allow-reuse", "--reuse", help=REUSE_HELP)]
"""`ReuseOpt`, also spelt ``--reuse`` (compare and gate have always taken both)."""

CLUSTER_HELP = (
    "Entries that are not independent: doc (the document of the entry's evidence), company, "
    "conversation (the turns of one conversation), any entry field or metadata.FIELD; none: "
    "independent. Default auto: conversation when the dataset has conversations, else doc when "
    "it has more than one entry per document on average. Every interval, rate and p-value then treats a "
    "cluster as one draw (cluster-level tests: clustered McNemar, cluster sign-flip), and the "
    "report's header says how entries were clustered."
)
ClusterOpt = Annotated[str, typer.Option("--cluster", help=CLUSTER_HELP)]

PAIR_HELP = (
    "What one pair is: turn (each entry; the turns of a conversation clustered by conversation) "
    "or conversation (one value per conversation: the mean over its turns for metrics, every "
    "turn passes for checks)."
)
PairOpt = Annotated[str, typer.Option("--pair", help=PAIR_HELP)]
