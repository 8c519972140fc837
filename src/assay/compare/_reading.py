"""Reading runs into series for a comparison: the steps that `compare_runs` (two runs) and
`compare_many` (a baseline and its candidates) share, and `open_inputs`, which opens a
command's files once.

Each run's gold is resolved against that run's own chunk table, a run whose hits its table does
not know stops the comparison, and the series of every run and the comparison over them are one
use of a sealed fresh sample.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from assay._io import hold_until_exit
from assay.compare.options import CompareOptions
from assay.compare.series import RunSeries, series_for, series_names
from assay.errors import DataError
from assay.metrics import DEFAULT_PAIR

if TYPE_CHECKING:
    from assay.corpus import ChunkTable
    from assay.dataset import Dataset, FreshSession, FreshUse
    from assay.gold import GoldIndex, Level
    from assay.runs import Run
    from assay.runs.corpus import RunTable
    from assay.score import RetrievalScores

__all__ = ["Inputs", "open_inputs"]

T = TypeVar("T")


@dataclass
class Inputs:
    """A command's files, opened once at the edge (`open_inputs`): the dataset (its entries of
    the tiers asked), the shared chunk table (None when not given), the runs in order, and the
    use of a sealed fresh sample they make (``session``; its ``use`` is set once the ``with``
    block completes). Everything below takes these objects, never the paths."""

    dataset: Dataset
    chunks: ChunkTable | None
    runs: list[Run]
    session: FreshSession


@contextlib.contextmanager
def open_inputs(
    dataset: str | Path,
    runs: Sequence[str | Path],
    *,
    chunks: str | Path | None = None,
    level: str = "chunk",
    tiers: str | Sequence[str] | None = None,
    command: str = "compare",
    allow_reuse: bool = False,
) -> Iterator[Inputs]:
    """Open a command's dataset and runs once, as one use of any sealed fresh sample: a
    ``level`` other than "chunk" or "page" is refused first; then the dataset is loaded (once:
    its entries of ``tiers``, gold by default, `assay.dataset.tiers.select_tiers`), the shared
    chunk table and the runs; then the fresh-sample guard is entered, once, over the whole file
    (`assay.dataset.fresh.using`: a second use is refused here unless ``allow_reuse``, and the
    use is recorded when the ``with`` block completes). What compare, gate, leaderboard and the
    pytest plugin run inside it passes ``session`` down instead of guarding again."""
    from assay.corpus import load_chunks
    from assay.dataset import fresh, load_dataset, select_tiers
    from assay.runs import load_run

    if level not in ("chunk", "page"):
        raise ValueError("level must be 'chunk' or 'page'")
    # the runs are parsed first, while little else is held: a run's parse needs several times
    # the file's size for a moment (a quarter of the gate's peak memory at 100,000 entries when
    # it came on top of the loaded entries); a problem is still reported in the order the
    # files are named, the dataset's first
    loaded: list[Run] = []
    run_error: Exception | None = None
    try:
        loaded = [load_run(r) for r in runs]
    except Exception as exc:  # a bad run, an unreadable path: raised once the dataset is read
        run_error = exc
    whole = load_dataset(dataset)
    ds = select_tiers(whole, tiers)[0]
    table = load_chunks(chunks) if chunks is not None else None
    if run_error is not None:
        raise run_error
    hashes = [run.hash for run in loaded]
    # the whole file is guarded: sealed entries the tiers leave out are still in what was read
    with fresh.using(whole, command=command, allow_reuse=allow_reuse, runs=hashes) as session:
        inputs = Inputs(ds, table, loaded, session)
        hold_until_exit(inputs)  # the command line's: reclaimed whole when it leaves
        yield inputs


def run_tables(
    runs: Sequence[Run],
    given: Sequence[ChunkTable | str | Path | None],
    labels: Sequence[str],
    options: CompareOptions,
    shared: ChunkTable | None,
) -> list[RunTable]:
    """Each run bound to the chunk table it was made on (`assay.runs.corpus.bind_run`: the one
    it recorded; its own ``given`` table or the ``shared`` one only when it recorded none, a
    table that is not the recorded one refused unless ``allow_corpus_change``); a run whose hits
    its table does not know stops here (`DataError`). Then runs made on different corpora are
    refused unless each was read against its own table (`check_corpora`)."""
    from assay.runs.corpus import bind_run

    tables = [
        bind_run(
            run,
            given=g,
            shared=shared,
            allow_change=options.allow_corpus_change,
            label=label,
            flag="--base-chunks" if i == 0 else "--cand-chunks",
            max_share=options.max_unknown_share,
        )
        for i, (run, g, label) in enumerate(zip(runs, given, labels, strict=True))
    ]
    return tables


def check_corpora(
    runs: Sequence[Run],
    tables: Sequence[RunTable],
    labels: Sequence[str],
    options: CompareOptions,
) -> list[str]:
    """Refuse a run made on another corpus than the first (its ``corpus_hash`` differs) unless
    both were read against their own chunk tables, or ``allow_corpus_change``; return the notes
    the result prints about it."""
    base = runs[0].meta.get("corpus_hash")
    own0 = tables[0].binding in ("bound", "checked")
    notes: list[str] = []
    for run, table, label in zip(runs[1:], tables[1:], labels[1:], strict=True):
        corpus = run.meta.get("corpus_hash")
        if not (base and corpus and corpus != base):
            continue
        if own0 and table.binding in ("bound", "checked"):
            notes.append(
                f"The {labels[0]} and {label} runs were made on different corpora ({base} -> "
                f"{corpus}); each was read against its own chunk table (gold resolved on each)."
            )
        elif options.allow_corpus_change:
            notes.append(
                f"The {labels[0]} and {label} runs were made on different corpora ({base} -> "
                f"{corpus}); compared as asked (--allow-corpus-change)."
            )
        else:
            raise DataError(
                f"the {label} run was made on corpus {corpus}, the {labels[0]} on {base}: "
                "the same chunk id may hold other text. Give each run its own chunk table "
                "(--base-chunks, --cand-chunks) so each run's gold is resolved on its own "
                "index, or pass --allow-corpus-change if the change of corpus is the "
                "change being measured (gold must resolve on both)",
                file=run.path or f"<{label} run>",
                field="corpus_hash",
            )
    return notes


def compare_in_use(
    dataset: Dataset,
    runs: Sequence[Run],
    tables: Sequence[RunTable],
    options: CompareOptions,
    compare: Callable[[list[RunSeries], list[str]], T],
    session: FreshSession | None = None,
) -> tuple[T, list[RunSeries], FreshUse | None]:
    """Every run's series (each on its own table) and ``compare(series, names)`` over them, as
    one use of a sealed fresh sample: (what ``compare`` returned, the series, the use or None).

    ``session`` is the use the caller opened (`open_inputs`): the series are part of it, and
    the use (known once the caller's block completes) is not returned here; without one, this
    is a use of its own (`assay.dataset.fresh.using`). The gold is resolved once per distinct
    chunk table, whatever the number of runs read against it. Runs scored on different room
    versions are refused: the same entry id asks another question there."""
    if session is None:
        from assay.dataset import fresh

        hashes = [run.hash for run in runs]
        with fresh.using(
            dataset, command=options.command, allow_reuse=options.allow_reuse, runs=hashes
        ) as own:
            result, computed = _series_compared(dataset, runs, tables, options, compare, own)
        return result, computed, own.use
    result, computed = _series_compared(dataset, runs, tables, options, compare, session)
    return result, computed, None


def _series_compared(
    dataset: Dataset,
    runs: Sequence[Run],
    tables: Sequence[RunTable],
    options: CompareOptions,
    compare: Callable[[list[RunSeries], list[str]], T],
    session: FreshSession,
) -> tuple[T, list[RunSeries]]:
    from assay.dataset import groups
    from assay.score import resolve_for

    infos = series_names(options.metrics or DEFAULT_PAIR, k=options.k)
    golds: dict[int, GoldIndex] = {}  # by the table object the runs share
    if any(i.source == "metric" for i in infos):
        for table in tables:
            if id(table.table) not in golds:
                golds[id(table.table)] = resolve_for(
                    dataset, table.table, cast("Level", options.level), options.skip_stale
                )
    # the rows of the entries, read once for every run (after the gold, as `series_for` did)
    rows = groups(dataset.entries, options.by, file=str(dataset.path or "<dataset>"))
    computed = [
        series_for(
            dataset,
            run,
            infos,
            k=options.k,
            chunks=table,
            level=options.level,
            by=options.by,
            skip_stale=options.skip_stale,
            allow_changed_entries=options.allow_changed_entries,
            session=session,
            gold=golds.get(id(table.table)),
            rows=rows,
        )
        for run, table in zip(runs, tables, strict=True)
    ]
    for one in computed[1:]:
        same_room(computed[0], one)
    return compare(computed, [i.name for i in infos]), computed


def same_room(base: RunSeries | RetrievalScores, cand: RunSeries | RetrievalScores) -> None:
    """Refuse runs scored on different versions of the synthetic room."""
    if base.room and cand.room and base.room != cand.room:
        raise DataError(
            f"the runs were scored on different room versions ({base.room} vs {cand.room}): "
            "the same entry id asks another question; score both on one room",
            file=cand.run_hash or "<candidate>",
            field="room",
        )
