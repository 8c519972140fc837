"""Qrels from a golden dataset: what TREC tools (trec_eval, pytrec_eval, ranx) can know of gold.

Qrels are flat: per query, a relevance grade per document. assay's gold is richer (evidence
paths of required pieces, each satisfied by any of its alternatives), so the conversion is lossy
for entries with several paths or several alternatives per piece: every alternative becomes a
separately relevant document. `Qrels.flattened` names those entries.

At ``level="page"`` the documents are pages (``doc#page``, as page-level scoring keys them):
qrels name the gold pages, and `page_run` turns a run's chunks into the pages they lie on (each
page at the rank of its first chunk), so trec_eval ranks pages; its cutoffs then count pages,
where assay's page-level top k counts chunks.

Every alternative is written with its own grade (`Entry.grade`: a chunk id's
`metadata.relevance[chunk_id]`, an anchor's `relevance`, default 1), the grade scoring gives it;
a grade-0 alternative is written with grade 0, which TREC tools read as judged not relevant, as
assay does (it satisfies nothing). A document named by several alternatives of an entry gets the
largest of their grades. Chunk-id gold is written as is. Anchor gold has no chunk id of its own:
it is resolved onto the chunks that hold its quote, so it needs the chunk table. Gold that points at nothing is
refused, as `assay score` refuses it, and so is a dataset that would give empty qrels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.corpus import ChunkTable
from assay.dataset import Dataset, Entry
from assay.errors import DataError, Problem
from assay.gold.index import Level
from assay.gold.resolve import GoldResolver, Resolution, split_quotes
from assay.runs.model import Hit, Run, RunRow
from assay.runs.trec import write_trec_qrels

__all__ = ["Qrels", "page_run", "qrels_from_dataset"]


@dataclass
class Qrels:
    """TREC qrels built from a dataset: `qrels[entry_id][chunk_id] = grade`."""

    qrels: dict[str, dict[str, int]]
    flattened: list[str] = field(default_factory=list)  # entries whose structure was lost
    unanswerable: int = 0  # entries without gold (never in qrels)
    excluded: dict[str, str] = field(default_factory=dict)  # left out (--skip-missing): why
    excluded_kinds: dict[str, str] = field(default_factory=dict)
    level: Level = "chunk"

    def __len__(self) -> int:
        return len(self.qrels)

    def write(self, path: str | Path) -> None:
        write_trec_qrels(path, self.qrels)


def qrels_from_dataset(
    dataset: Dataset | Sequence[Entry],
    *,
    chunks: ChunkTable | None = None,
    allow_reuse: bool = False,
    level: Level = "chunk",
    skip_stale: bool = False,
) -> Qrels:
    """Qrels (chunk ids, or ``doc#page`` at page level) of every answerable entry; DataError
    (FILE:LINE: field) when gold points at nothing -- unless ``skip_stale``, which leaves those
    entries out and names them in ``excluded`` -- when anchors need `chunks` and it is missing,
    or when no entry has gold.

    Exporting a sealed fresh sample's gold is a use of it (refused a second time unless
    ``allow_reuse``; `assay.dataset.fresh.using`): with the gold in hand, tuning against it is
    one step away.
    """
    from assay.dataset import fresh

    with fresh.using(dataset, command="trec export", allow_reuse=allow_reuse):
        return _qrels(dataset, chunks, level, skip_stale)


def _qrels(
    dataset: Dataset | Sequence[Entry], chunks: ChunkTable | None, level: Level, skip_stale: bool
) -> Qrels:
    entries = dataset.entries if isinstance(dataset, Dataset) else list(dataset)
    file = (dataset.path if isinstance(dataset, Dataset) else None) or "<dataset>"
    lines = dataset.lines if isinstance(dataset, Dataset) else {}
    out: dict[str, dict[str, int]] = {}
    flattened: list[str] = []
    unanswerable = 0
    problems: list[tuple[str, Problem, Resolution]] = []
    resolver = GoldResolver(chunks, level=level)  # the one resolver validate and score use
    excluded: dict[str, str] = {}
    kinds: dict[str, str] = {}
    for e in entries:
        if not e.is_answerable:
            unanswerable += 1
            continue
        line = lines.get(e.id)
        if len(e.evidence_paths) > 1 or any(len(p) > 1 for path in e.evidence_paths for p in path):
            flattened.append(e.id)
        grades = out.setdefault(e.id, {})
        stale: list[tuple[Problem, Resolution]] = []
        for pi, path in enumerate(e.evidence_paths):
            for qi, piece in enumerate(path):
                for ai, alt in enumerate(piece):
                    fld = f"evidence_paths.{pi}.{qi}.{ai}"
                    res = resolver.resolve(alt, hashes=e.chunk_hashes)
                    if res.needs_chunks is not None:
                        raise DataError(
                            f"entry {e.id}: {res.needs_chunks}", file=file, line=line, field=fld
                        )
                    if not res.ok:
                        stale.append(
                            (Problem(file, line, fld, f"entry {e.id}: {res.message}"), res)
                        )
                        continue
                    grade = e.grade(alt)  # the alternative's own grade, as scoring reads it
                    for cid in res.keys:
                        grades[cid] = max(grades.get(cid, grade), grade)
        if stale and skip_stale:
            excluded[e.id] = f"{stale[0][0].field}: {stale[0][0].message}"
            kinds[e.id] = stale[0][1].kind or ""
            grades.clear()
        else:
            problems.extend((e.id, p, res) for p, res in stale)
        if not grades:
            del out[e.id]
    if problems:
        raise DataError(split_quotes(problems, file=file, level=level))
    if not out:
        raise DataError(
            f"no entry has gold evidence ({len(entries)} entries, {unanswerable} "
            "unanswerable): the qrels would be empty",
            file=file,
        )
    flattened = [i for i in flattened if i not in excluded]
    return Qrels(out, flattened, unanswerable, excluded, kinds, level)


def page_run(run: Run, chunks: ChunkTable) -> Run:
    """The run with each row's chunks replaced by the pages they lie on (``doc#page``), each page
    at the rank of its first chunk and with that chunk's score; a chunk the table lacks is
    dropped (it lies on no known page). A row without `retrieved` stays without."""
    rows = []
    for rid in run.ids:
        retrieved = run.row(rid).retrieved
        seen: dict[str, Hit] = {}
        for h in retrieved or ():
            for key in chunks.page_keys(h.chunk_id):
                seen.setdefault(key, Hit(key, h.score))
        rows.append(RunRow(rid, None if retrieved is None else list(seen.values())))
    return Run.from_rows(rows, path=run.path, hash=run.hash, meta=dict(run.meta))
