"""Comparing runs read from files: `compare_runs` scores two loaded runs (each against its
own chunk table, as one use of a sealed fresh sample) and compares them; `compare_files` and
`gate_files` open the dataset and run files once (`assay.compare._reading.open_inputs`),
compare (and gate) and record the comparison in the dataset's ledger; and the notes a
comparison says about how its runs were read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from assay._io import gc_paused
from assay.compare._reading import check_corpora, compare_in_use, open_inputs, run_tables
from assay.compare.comparison import Comparison
from assay.compare.gate import GatePolicy, GateResult, gate, unrated_entries
from assay.compare.ledger import _record_comparison
from assay.compare.options import CompareOptions, RunsOptions
from assay.compare.paired import DEFAULT_METRICS, compare_series
from assay.compare.pairing import check_pair, pair_note, per_conversation, unrated_units
from assay.compare.series import RunSeries, series_names
from assay.dataset import clustering_for
from assay.metrics import HEADLINE

if TYPE_CHECKING:
    from assay.corpus import ChunkTable
    from assay.dataset import Dataset, FreshSession
    from assay.runs import Run
    from assay.runs.corpus import RunTable

__all__ = ["compare_files", "compare_runs", "gate_files", "reading_notes", "table_notes"]


def compare_runs(
    dataset: Dataset,
    base_run: Run,
    cand_run: Run,
    *,
    chunks: ChunkTable | None = None,
    base_chunks: ChunkTable | str | Path | None = None,
    cand_chunks: ChunkTable | str | Path | None = None,
    session: FreshSession | None = None,
    options: CompareOptions | None = None,
    **given: Unpack[RunsOptions],
) -> Comparison:
    """Score both runs on ``dataset`` and compare them (the options: `CompareOptions`, as
    ``options`` and changed by the ``given`` keywords).

    Each run's gold is resolved against that run's own chunk table (`assay.runs.corpus.
    chunk_table_for`): ``base_chunks`` / ``cand_chunks`` when given, else the table the run
    recorded, else the shared ``chunks``. So two chunkings of the same documents compare at
    chunk level (each through its own table's alignment of the anchors) and at page level.
    A run whose hits its table does not know, beyond ``max_unknown_share`` (default
    `assay.runs.corpus.UNKNOWN_SHARE`), was made on another index: the comparison stops (a
    `DataError`, before anything is recorded).

    ``skip_stale`` leaves out entries whose gold does not resolve on the chunk table (named in
    the notes), as `assay score --skip-missing` does; ``allow_changed_entries`` compares rows
    whose entry changed since the run was made (refused otherwise: `assay.runs.binding`).

    Runs made on different corpora (their ``corpus_hash`` in the run metadata differs) are
    refused unless each was read against its own chunk table, or ``allow_corpus_change``: the
    same chunk id can mean another text in another index, so the flips would compare different
    things. Said in the comparison's notes; ``tables`` records each run's table and binding.

    On a sealed fresh sample the whole comparison is one use of it (refused a second time
    unless ``allow_reuse``; `assay.dataset.fresh.using`), recorded in ``fresh``; or part of the
    use the caller opened (``session``: `assay.compare.open_inputs`), which the caller records.
    """
    opts = CompareOptions.of(options, given)
    by_conv = check_pair(opts.pair) == "conversation"
    clusters = (
        None
        if by_conv
        else clustering_for(dataset.entries, opts.cluster, file=dataset.path or "<dataset>")
    )
    labels = ["baseline", "candidate"]
    runs = [base_run, cand_run]
    tables = run_tables(runs, [base_chunks, cand_chunks], labels, opts, chunks)
    corpus_notes = check_corpora(runs, tables, labels, opts)
    cmp, series, use = compare_in_use(
        dataset,
        runs,
        tables,
        opts,
        lambda series, names: compare_series(
            *(per_conversation(one, dataset.entries) if by_conv else one for one in series[:2]),
            clusters=clusters,
            options=replace(opts, metrics=names),
        ),
        session,
    )
    cmp.dataset_path = dataset.path
    if by_conv:
        cmp.notes.append(pair_note(dataset.entries))
    cmp.notes.extend(dataset.tier_notes())
    cmp.tiers = None if dataset.tiers is None else dataset.tiers.to_dict()
    cmp.notes.extend(reading_notes(series))
    cmp.notes.extend(table_notes(runs, tables, labels))
    cmp.notes.extend(corpus_notes)
    cmp.tables = {lb: t.to_dict() for lb, t in zip(labels, tables, strict=True)}
    if use is not None:
        cmp.fresh = use.to_dict()
    return cmp


def table_notes(
    runs: Sequence[Run], tables: Sequence[RunTable], labels: Sequence[str]
) -> list[str]:
    """What a comparison says about the chunk tables its runs were read against: each its own
    when they differ, a run unbound or read against another table as asked, a table without
    content hashes, and a run that names no index and has no table (nothing checked it)."""
    out: list[str] = []
    prints = {t.table.fingerprint for t in tables if t.table is not None}
    if len(prints) > 1:
        out.append(
            "Each run's gold was resolved against its own chunk table: "
            + "; ".join(f"{lb} {t.describe()}" for lb, t in zip(labels, tables, strict=True))
            + " (chunk ids are matched within each run's table)."
        )
    for run, table, label in zip(runs, tables, labels, strict=True):
        for note in table.notes(run, label):
            if note not in out:
                out.append(note)
        if table.table is None and not run.meta.get("corpus_hash"):
            out.append(
                f"The {label} run does not say which index it was made on and no chunk table "
                "was given for it: its hits could not be checked against its index "
                "(--chunks, --base-chunks / --cand-chunks, or assay run --corpus-id)."
            )
    return out


def reading_notes(computed: Sequence[RunSeries]) -> list[str]:
    """What a comparison must say about how its runs' gold was read: entries left out because
    their gold does not resolve (--skip-missing), rows scored although their entry changed
    (--allow-changed-entries)."""
    from assay.gold.resolve import skipped_note
    from assay.runs.binding import changed_note

    out: list[str] = []
    excluded: dict[str, str] = {}
    kinds: dict[str, str] = {}
    for one in computed:
        if one.scores is not None:
            excluded.update(one.scores.excluded)
            kinds.update(one.scores.excluded_kinds)
    if excluded:
        out.append(skipped_note(excluded, kinds))
    for one in computed:
        if one.scores is not None and one.scores.changed:
            out.append(changed_note(list(one.scores.changed), one.run_path))
    return out


def compare_files(
    dataset: str | Path,
    base: str | Path,
    cand: str | Path,
    *,
    chunks: str | Path | None = None,
    base_chunks: ChunkTable | str | Path | None = None,
    cand_chunks: ChunkTable | str | Path | None = None,
    options: CompareOptions | None = None,
    **given: Unpack[RunsOptions],
) -> Comparison:
    """Load a dataset and two run files, compare them, and record the comparison.

    On a sealed fresh sample the comparison is one use of it, refused a second time unless
    ``allow_reuse`` (the files are opened once, and the use guarded once, by `open_inputs`).
    The comparison is recorded in the dataset's ledger once per distinct comparison
    (``record=False``: not in the ledger, for exploration; the comparison's note names that
    switch as ``record_switch``, the command line's ``"--no-record"``). Nothing is recorded
    when loading, scoring or comparing fails. The options: `CompareOptions`.
    """
    opts = CompareOptions.of(options, given)
    with gc_paused(), open_inputs(
        dataset, [base, cand], chunks=chunks, level=opts.level, tiers=opts.tiers,
        command=opts.command, allow_reuse=opts.allow_reuse,
    ) as inputs:  # fmt: skip
        ds, (b, c) = inputs.dataset, inputs.runs
        cmp = compare_runs(
            ds, b, c, chunks=inputs.chunks, base_chunks=base_chunks, cand_chunks=cand_chunks,
            session=inputs.session, options=opts,
        )  # fmt: skip
    if inputs.session.use is not None:
        cmp.fresh = inputs.session.use.to_dict()
    _record_comparison(cmp, ds, b, c, dataset, opts)
    return cmp


def gate_files(
    dataset: str | Path,
    base: str | Path,
    cand: str | Path,
    *,
    policy: GatePolicy | None = None,
    chunks: str | Path | None = None,
    base_chunks: ChunkTable | str | Path | None = None,
    cand_chunks: ChunkTable | str | Path | None = None,
    require_certified: bool = False,
    options: CompareOptions | None = None,
    **given: Unpack[RunsOptions],
) -> GateResult:
    """Load, compare (the gated series; beside retrieval metrics also complete@k and recall@k)
    and gate; what ``assay gate`` runs.

    ``policy.metric`` (and ``policy.metrics``) name registered metrics with their cutoff
    (``complete@5``, ``hit@5``; a bare name such as ``complete`` gets ``@k``) or answer checks
    (``answer_correct``: pass the chunk table as ``chunks`` for checks that read cited text).
    Once the gate has a result, the comparison is recorded in the dataset's ledger (once per
    distinct comparison; ``record=False`` for exploration, which the report names as
    ``record_switch``, the command line's ``"--no-record"``), and a sealed fresh sample refuses
    a second use unless ``allow_reuse``. The options: `CompareOptions` (``alpha`` the policy's
    unless given; the series compared and the command, "gate", are the gate's own).

    Only the entries of label tier gold are compared unless the option ``tiers`` (e.g.
    ``"gold,silver"``) widens it (`assay.dataset.tiers.select_tiers`; the comparison's notes say
    what was left out, and a dataset with no entry of the tiers asked is refused).
    ``require_certified`` refuses (`DataError`, before anything is read or recorded) a dataset
    without a certificate, or changed since it was certified (`assay.certify.check_certified`).
    """
    if require_certified:
        from assay.certify import check_certified

        check_certified(dataset)

    policy = policy or GatePolicy(metric=HEADLINE)
    opts = CompareOptions.of(options, given)
    k = opts.k
    gated = series_names(policy.gated, k=k)
    policy = replace(policy, metric=gated[0].name, metrics=tuple(g.name for g in gated[1:]))
    # the gated series, and with retrieval metrics only the default pair beside them (as the
    # gate has always compared); an answer check needs no retrieval scoring
    also = DEFAULT_METRICS if all(g.source == "metric" for g in gated) else ()
    names = [i.name for i in series_names([*(g.name for g in gated), *also], k=k)]
    alpha = opts.alpha if options is not None or "alpha" in given else policy.alpha
    opts = replace(opts, metrics=names, command="gate", alpha=alpha)
    # the policy is checked against the comparison before anything is recorded: a gate that
    # stops on bad margins (exit 2) leaves no trace in the ledger or on a fresh sample (the
    # sample's use is recorded when this block completes)
    with gc_paused(), open_inputs(
        dataset, [base, cand], chunks=chunks, level=opts.level, tiers=opts.tiers, command="gate",
        allow_reuse=opts.allow_reuse,
    ) as inputs:  # fmt: skip
        ds, (b, c) = inputs.dataset, inputs.runs
        cmp = compare_runs(
            ds, b, c, chunks=inputs.chunks, base_chunks=base_chunks, cand_chunks=cand_chunks,
            session=inputs.session, options=opts,
        )  # fmt: skip
        unrated = unrated_entries(ds.entries, [g.name for g in gated if g.source == "check"])
        if check_pair(opts.pair) == "conversation":  # the gate counts conversations then
            unrated = unrated_units(unrated, ds.entries)
        gate(cmp, policy, unrated=unrated)  # a bad policy (exit 2) stops here, unrecorded
    if inputs.session.use is not None:
        cmp.fresh = inputs.session.use.to_dict()
    _record_comparison(cmp, ds, b, c, dataset, opts)
    # the verdict is taken once the comparison has its number in the ledger: significance is
    # judged on the ledger-corrected p unless policy.within_comparison
    return gate(cmp, policy, unrated=unrated)
