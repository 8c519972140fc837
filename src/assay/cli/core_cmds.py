"""Core commands: schema, validate, run, score, trec."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._io import check_outputs, write_jsonl_atomic, write_text_atomic
from assay.cli._app import app
from assay.cli._common import (
    EXIT_FAIL,
    Format,
    GoldLevel,
    emit,
    err_console,
    gold_level,
    report_problems,
)
from assay.cli.options import (
    CacheDirOpt,
    ChangedOpt,
    ClusterOpt,
    CorpusChangeOpt,
    FmtOpt,
    GoldenArg,
    KOpt,
    LevelOpt,
    ReuseAliasedOpt,
    ReuseOpt,
    SkipMissingOpt,
    TiersOpt,
)
from assay.errors import DataError, UsageError
from assay.metrics import parse_list
from assay.systems import find_adapter, list_adapters
from assay.systems.kinds import list_kinds

trec_app = typer.Typer(
    help="Read and write TREC run and qrels files (for ranx, ir_measures, trec_eval users).",
    no_args_is_help=True,
)
app.add_typer(trec_app, name="trec")


@app.command("schema")
def schema_cmd(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the JSON Schema of a golden entry (one line of a dataset JSONL)."""
    from assay.dataset import Entry

    text = json.dumps(Entry.model_json_schema(), indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(out, text)


@app.command("validate")
def validate_cmd(
    dataset: GoldenArg,
    chunks: Annotated[
        Path | None,
        typer.Option(
            "--chunks",
            help="Chunk table JSONL: also check the gold against it (chunk ids and documents exist, "
            "anchors match a chunk, chunks unchanged since labelled, evidence public by as_of).",
        ),
    ] = None,
    level: LevelOpt = GoldLevel.auto,
    skip_missing: SkipMissingOpt = False,
    min_unanswerable: Annotated[
        float,
        typer.Option(
            "--min-unanswerable",
            min=0.0,
            max=1.0,
            help="Warn when fewer than this share of the labelled entries, overall or in any "
            "category, are unanswerable or partial (0 turns it off).",
        ),
    ] = 0.10,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 on warnings too, not only on problems.")
    ] = False,
    fmt: FmtOpt = Format.table,
) -> None:
    """Check a dataset and report EVERY problem as FILE:LINE: field: message.

    Entries with gold SQL have every gold query run read-only against their database and
    compared with its stored result (the sql extra).

    Exits 0 when clean, 1 when there are problems. Writes nothing. With -f json the report is
    {file, ok, counts, coverage, version, version_check, warnings, problems: [{file, line,
    field, message}]} on stdout.

    Warnings (exit 0; 1 with --strict): fewer than --min-unanswerable (10%) of the labelled
    entries unanswerable or partial, overall or per category; content changed since the
    manifest's version was written, without a version bump (a manifest that records no content
    for its version cannot tell, and says so).

    Each unresolved anchor is named with its cause: document absent, page beyond the document,
    quote longer than this chunking can hold (--level page checks it against its page, as
    page-level scoring reads it), quote not in the page's text, chunk text changed. With
    --skip-missing such gold is listed as what scoring with --skip-missing would leave out, and
    is not a problem.

    Example: assay validate golden.jsonl --chunks corpus/chunks.jsonl
    """
    from assay.gold import validate
    from assay.sql.gold import validate_sql_gold

    report = validate(
        dataset,
        chunks,
        level=gold_level(level),
        skip_missing=skip_missing,
        validators=[validate_sql_gold],
        min_unanswerable=min_unanswerable,
    )
    if fmt is not Format.table:
        emit(report, fmt)
    elif not report.ok:
        report_problems(DataError(report.problems))
    else:
        for note in report.notes():
            err_console().print(note, markup=False, highlight=False)
        err_console().print(report.coverage_line(), markup=False, highlight=False)
        err_console().print(
            f"ok: {report.entries} entries ({report.answerable} with evidence, "
            f"{report.unanswerable} unanswerable"
            + (f", {report.drafts} unlabelled drafts" if report.drafts else "")
            + ") in "
            f"{report.categories} categories; dataset {report.version}"
            + (" ; gold checked against the chunk table" if chunks else "")
            + (
                f"; {report.sql} with gold SQL, every gold query run read-only and equal to its "
                "stored result"
                if report.sql
                else ""
            ),
            markup=False,
        )
    if not report.ok or (strict and report.warnings):
        raise typer.Exit(EXIT_FAIL)


def _adapter_parameters() -> list[inspect.Parameter]:
    """One typed option per adapter option in the registry, shown in a panel per adapter."""
    owners: dict[str, list[str]] = {}
    declared: dict[str, Any] = {}
    for adapter in list_adapters(strict=False):
        for opt in adapter.options:
            owners.setdefault(opt.name, []).append(adapter.usage or adapter.name)
            declared.setdefault(opt.name, opt)
    params = []
    for name, opt in declared.items():
        who = owners[name]
        panel = f"Options of --system {who[0]}" if len(who) == 1 else "Options of several systems"
        extra = []
        if opt.choices:
            extra.append(" | ".join(opt.choices))
        if opt.default is not None:
            extra.append(f"default {opt.default}")
        if len(who) > 1:
            extra.append("for " + ", ".join(who))
        text = opt.help + (f" ({'; '.join(extra)})" if extra else "")
        flag = opt.type is bool  # a flag: --name (absent: the adapter's default)
        base = list[opt.type] if opt.multiple and not flag else opt.type  # type: ignore[name-defined]
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=None,
                annotation=Annotated[
                    base | None,
                    typer.Option(
                        opt.flag,
                        help=opt.help if flag else text,
                        rich_help_panel=panel,
                        show_default=False,
                    ),
                ],
            )
        )
    return params


def _systems_epilog() -> str:
    lines = ["Systems (--system):"]
    lines.extend(f"{a.usage or a.name}: {a.help}" for a in list_adapters(strict=False))
    lines.append("System kinds (what a system is asked per entry):")
    lines.extend(f"{kind.name}: {kind.contract}; {kind.help}" for kind in list_kinds(strict=False))
    return "\n\n".join(lines)


def run_cmd(
    dataset: GoldenArg,
    system: Annotated[
        str,
        typer.Option(
            "--system",
            "-s",
            help="The system under test: pkg.module:attr, an http(s) URL, bm25 or filings "
            "(each takes the options of its panel below).",
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Run JSONL to write (plus OUT.meta.json).")
    ],
    k: Annotated[int, typer.Option("--k", help="Hits to ask for per query.")] = 10,
    workers: Annotated[
        int | None,
        typer.Option("--workers", help="Parallel calls (default 8 for HTTP systems, 1 otherwise)."),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Bypass the request cache (still records results).")
    ] = False,
    cache_dir: CacheDirOpt = None,
    no_answers: Annotated[
        bool, typer.Option("--no-answers", help="Only retrieve; do not call the system's answer().")
    ] = False,
    restart: Annotated[
        bool,
        typer.Option(
            "--restart", help="Discard OUT.partial (the journal of an interrupted run) first."
        ),
    ] = False,
    log: Annotated[
        Path | None,
        typer.Option(
            "--log",
            help="Also append one production-log line per query to this file (the format "
            "`assay logs ingest` reads).",
        ),
    ] = None,
    corpus_id: Annotated[
        str | None,
        typer.Option(
            "--corpus-id",
            help="The corpus (index) the system searches, for a system that does not say (an "
            "HTTP endpoint without an index field): recorded in the run, so compare can tell "
            "runs on another index.",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="local; ray (a local Ray on this machine); ray:ADDRESS (ray:auto, "
            "ray:ray://HOST:10001) to call the system on a Ray cluster, one system per worker "
            "(--workers caps them). Needs the ray extra.",
        ),
    ] = "local",
    history: Annotated[
        str,
        typer.Option(
            "--history",
            help="What a system that takes a history keyword is told of a conversation's "
            "earlier turns: own (its own answers; turns run in order), gold (the reference "
            "answers) or none (no memory).",
        ),
    ] = "own",
    fmt: FmtOpt = Format.table,
    **system_options: Any,
) -> None:
    """Drive a system over a dataset; every entry's as_of reaches the system; every call is cached.

    A rerun reproduces the run from the cache without calling the system (an HTTP system is
    called for the first entry, to learn the index it is on now); an interrupted run
    resumes from OUT.partial when the journal's provenance (system, corpus, dataset, k, queries)
    matches this run, and is refused otherwise (--restart discards it). The summary says how many
    rows were resumed, served by the cache and called.

    Example: assay run golden.jsonl --system mypkg.pipeline:build --out run.jsonl --k 10

    On a Ray cluster: assay run golden.jsonl --system filings --corpus corpus/ --out run.jsonl
    --executor ray:auto (the request cache and the journal stay on this machine).
    """
    from assay.cache import RequestCache, default_cache_path
    from assay.dataset import load_dataset
    from assay.executors import parse_executor
    from assay.runner import RunInterrupted, RunSummary, run_system

    ex = parse_executor(executor, workers=workers)

    check_outputs(
        [out, Path(f"{out}.meta.json"), log],
        [dataset, cache_dir, *(v for v in system_options.values() if isinstance(v, Path))],
    )
    given = {n: v for n, v in system_options.items() if v is not None and v != []}
    adapter = find_adapter(system)
    foreign = [n for n in given if adapter.option(n) is None]
    if foreign:
        mine = ", ".join(o.flag for o in adapter.options) or "none"
        raise UsageError(
            f"--system {adapter.usage or adapter.name} does not take "
            + ", ".join("--" + n.replace("_", "-") for n in foreign)
            + f" (its options: {mine})"
        )
    ds = load_dataset(dataset)
    cache = RequestCache(default_cache_path(cache_dir), enabled=not no_cache)
    try:
        run = run_system(
            ds,
            system,
            options=given,
            k=k,
            cache=cache,
            out=out,
            workers=workers,
            answers=not no_answers,
            restart=restart,
            executor=ex,
            corpus_id=corpus_id,
            history=history,
        )
    except RunInterrupted as exc:
        err_console().print(str(exc), style="bold yellow", markup=False)
        raise typer.Exit(130) from None
    if log is not None:
        from assay.logs.write import append_log, log_lines_from_run

        rows = [r.to_dict() for r in run.rows]
        n_logged = append_log(log, log_lines_from_run(ds.entries, rows, system=system))
        err_console().print(f"appended {n_logged} log lines to {log}", markup=False)
    summary = RunSummary.from_run(run)
    err_console().print(summary.line(), markup=False)
    if adapter.name == "http" and summary.cached and not given.get("system_version"):
        err_console().print(
            f"note: {summary.cached} rows came from the request cache. An HTTP system is known "
            "by its URL, --system-version and the index its replies name: pass a new "
            "--system-version when the server changes (or --no-cache)."
            + (
                ""
                if summary.corpus
                else " Its replies name no index (an index field or an X-Assay-Index header), "
                "so a server restarted on another index is not told apart either."
            ),
            markup=False,
        )
    if fmt is not Format.table:
        emit(summary, fmt)


_run_signature = inspect.signature(run_cmd, eval_str=True)
run_cmd.__signature__ = _run_signature.replace(  # type: ignore[attr-defined]
    parameters=[
        *(p for p in _run_signature.parameters.values() if p.kind is not p.VAR_KEYWORD),
        *_adapter_parameters(),
    ]
)
app.command("run", epilog=_systems_epilog())(run_cmd)


@app.command("score")
def score_cmd(
    dataset: GoldenArg,
    run: Annotated[Path, typer.Argument(help="Run JSONL (or TREC run).")],
    chunks: Annotated[
        Path | None,
        typer.Option(
            "--chunks",
            help="Chunk table, for runs that recorded none (a run made by `assay run` is read "
            "against the table it recorded; another one is refused): gold is checked against it "
            "before scoring; needed for anchors and --level page.",
        ),
    ] = None,
    k: KOpt = 5,
    metrics: Annotated[
        str | None,
        typer.Option(
            "--metrics",
            "-m",
            help="Comma-separated metrics to show, e.g. recall@5,hit@5,precision@5,mrr,ndcg@10 "
            "(a bare name takes --k). Default: recall, complete, mrr and nDCG at --k.",
        ),
    ] = None,
    level: LevelOpt = GoldLevel.auto,
    ci: Annotated[
        bool,
        typer.Option(
            "--ci",
            help="Add a 95% CI to every cell: Wilson on rates (Clopper-Pearson below 4 passes or "
            "fails), the score interval of a bounded mean on graded metrics; with clusters "
            "(--cluster), each cluster one draw: cluster Wilson at the effective size on rates, "
            "the score interval over the cluster means on graded metrics.",
        ),
    ] = False,
    ci_method: Annotated[
        str,
        typer.Option(
            "--ci-method",
            help="Graded metrics: score (the score interval of a bounded mean, never a point), "
            "percentile or bca (bootstrap).",
        ),
    ] = "score",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    per_entry: Annotated[
        Path | None, typer.Option("--per-entry", help="Also write per-entry scores as JSONL.")
    ] = None,
    allow_missing: Annotated[
        bool,
        typer.Option(
            "--allow-missing",
            help="Score entries missing from the run, or whose rows carry no retrieved, as "
            "retrieving nothing.",
        ),
    ] = False,
    skip_missing: SkipMissingOpt = False,
    reuse: ReuseAliasedOpt = False,
    by: Annotated[
        str,
        typer.Option(
            "--by",
            help="Rows by category (default), source (log, hand, synthetic, benchmark), any "
            "other entry field, or metadata.FIELD (format and messiness: the synthetic room "
            "records both, so recall on scans is one row).",
        ),
    ] = "category",
    allow_changed_entries: ChangedOpt = False,
    fmt: FmtOpt = Format.table,
    allow_corpus_change: CorpusChangeOpt = False,
    tiers: TiersOpt = None,
    cluster: ClusterOpt = "auto",
) -> None:
    """Score retrieval per category (recall@k, complete@k, MRR, nDCG@k) with the overall row.

    --metrics picks other registered metrics (hit@k, precision@k, ...) and cutoffs.
    Refuses to start when gold is stale (names chunks or documents the chunk table lacks), and
    lists it by entry; --skip-missing scores the rest and reports how many were left out.
    A run is bound to its dataset: rows answering an entry whose query or as_of changed since
    the run was made stop scoring with the list of entries (--allow-changed-entries scores them
    and says so).
    Retrieved ids the chunk table does not know are counted. Unanswerable entries are counted,
    never scored. Only gold entries are scored by default (--tiers gold,silver widens it; an
    untiered dataset is scored whole); the result says how many of each tier, and how many
    ambiguous entries, were left out. Exit 0 scored, 2 bad input.

    Example: assay score golden.jsonl run.jsonl --chunks chunks.jsonl --k 5 --ci -f markdown
    """
    from assay.dataset import open_dataset, parse_tiers
    from assay.runs import load_run
    from assay.score import score_retrieval

    check_outputs([per_entry], [dataset, run, chunks])
    chosen = parse_list(metrics, k=k) if metrics is not None else None
    parse_tiers(tiers)
    ds = open_dataset(dataset, tiers)
    r = load_run(run)
    if ci and ci_method not in ("score", "percentile", "bca"):
        raise typer.BadParameter("--ci-method must be score, percentile or bca")
    scores = score_retrieval(
        ds,
        r,
        k=k,
        chunks=chunks,
        allow_corpus_change=allow_corpus_change,
        level=gold_level(level),
        allow_missing=allow_missing,
        metrics=chosen,
        skip_stale=skip_missing,
        allow_reuse=reuse,
        by=by,
        allow_changed_entries=allow_changed_entries,
    )
    if ci:
        from assay.dataset import clustering_for

        clusters = clustering_for(ds.entries, cluster, file=str(dataset))
        scores.add_ci(seed=seed, method=ci_method, clusters=clusters)  # type: ignore[arg-type]
    if per_entry is not None:
        write_jsonl_atomic(per_entry, scores.rows)
    _fresh_notice(scores.fresh)
    emit(scores, fmt)


def _fresh_notice(use: dict[str, object] | None) -> None:
    """Say that this use of a sealed fresh sample was recorded; loudly when it is a reuse."""
    if use is not None:
        style = "bold red" if use.get("reused") else "bold yellow"
        err_console().print(str(use["message"]), style=style, markup=False)


@trec_app.command("export")
def trec_export(
    dataset: GoldenArg,
    run: Annotated[
        Path | None, typer.Option("--run", help="Run JSONL to convert to a TREC run file.")
    ] = None,
    qrels: Annotated[
        Path | None, typer.Option("--qrels", help="Write the dataset's gold as TREC qrels here.")
    ] = None,
    run_out: Annotated[
        Path | None, typer.Option("--run-out", help="Where to write the TREC run.")
    ] = None,
    chunks: Annotated[
        Path | None,
        typer.Option(
            "--chunks",
            help="Chunk table: resolves anchor gold onto chunk ids (required when gold has "
            "anchors) and checks chunk-id gold exists.",
        ),
    ] = None,
    scores: Annotated[
        str,
        typer.Option(
            "--scores",
            help="rank: scores that follow assay's rank order, so trec_eval, pytrec_eval and "
            "ranx read the ranking assay scores (ties included); system: the system's own scores.",
        ),
    ] = "rank",
    allow_reuse: ReuseOpt = False,
    level: LevelOpt = GoldLevel.auto,
    skip_missing: SkipMissingOpt = False,
    allow_corpus_change: CorpusChangeOpt = False,
) -> None:
    """Write gold as TREC qrels and/or a run as a TREC run file.

    --level page writes pages (doc#page) as documents: the gold pages in the qrels, and the run's
    chunks turned into the pages they lie on (each page at the rank of its first chunk), so
    trec_eval ranks pages. --skip-missing leaves out entries whose gold does not resolve.

    Qrels are lossy for multi-path entries and for pieces with several alternatives (every
    alternative becomes a separately relevant document); the command says how many entries lost
    structure. Anchor gold needs --chunks; gold that points at nothing, or a dataset without
    gold, is refused (exit 2) and nothing is written.

    Example: assay trec export golden.jsonl --chunks chunks.jsonl --qrels gold.qrels --run run.jsonl --run-out run.trec
    """
    from assay.corpus import load_chunks
    from assay.dataset import load_dataset
    from assay.runs import load_run, page_run, qrels_from_dataset, write_trec_run
    from assay.runs.corpus import bind_run

    if scores not in ("rank", "system"):
        raise typer.BadParameter("--scores must be rank or system")
    if run is not None and run_out is None:
        raise typer.BadParameter("--run needs --run-out")
    if run is None and qrels is None:
        raise typer.BadParameter("nothing to export: give --qrels and/or --run with --run-out")
    check_outputs([qrels, run_out], [dataset, run, chunks])
    ds = load_dataset(dataset)
    loaded = load_run(run) if run is not None else None
    if loaded is not None:  # the run's own table: the one it recorded (--chunks if none)
        bound = bind_run(loaded, given=chunks, allow_change=allow_corpus_change)
        table = bound.table
        for note in bound.notes(loaded):
            err_console().print(note, markup=False)
    else:
        table = load_chunks(chunks) if chunks is not None else None
    if level is GoldLevel.page and table is None:
        raise UsageError("--level page needs the chunk table (--chunks): it knows the pages")
    built = (
        qrels_from_dataset(
            ds,
            chunks=table,
            allow_reuse=allow_reuse,
            level=gold_level(level),
            skip_stale=skip_missing,
        )
        if qrels is not None
        else None
    )
    if loaded is not None and level is GoldLevel.page and table is not None:
        loaded = page_run(loaded, table)
    if qrels is not None and built is not None:
        built.write(qrels)
        err_console().print(
            f"wrote {qrels} ({len(built)} queries; {len(built.flattened)} entries flattened: "
            "paths/alternatives are not expressible in qrels)",
            markup=False,
        )
        if skip_missing:
            from assay.gold.resolve import skipped_note

            err_console().print(skipped_note(built.excluded, built.excluded_kinds), markup=False)
    if loaded is not None and run_out is not None:
        write_trec_run(run_out, loaded, scores=scores)  # type: ignore[arg-type]
        err_console().print(f"wrote {run_out}", markup=False)


@trec_app.command("import")
def trec_import(
    trec_run: Annotated[Path, typer.Argument(help="TREC run file (qid Q0 docno rank score tag).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Run JSONL to write.")],
) -> None:
    """Convert a TREC run into an assay run JSONL (ranked by score, ties in file order)."""
    from assay.runs import read_trec_run, write_run

    check_outputs([out], [trec_run])
    r = read_trec_run(trec_run)
    write_run(out, r.rows, meta={"converted_from": str(trec_run), "format": "trec"})
    err_console().print(f"wrote {out} ({len(r)} rows)", markup=False)
