"""Failure attribution: for every answerable entry that fails, the first stage that lost it.

The stages, in pipeline order:

parse
    the gold quote is not in the parser's text of its page (``pages.jsonl`` of the corpus;
    containment below the alignment threshold, compared as alignment compares it: with
    whitespace ignored where the tokens fall short, so a quote whose spaces were lost or added
    is not blamed on the parser), or its document failed to parse;
chunk
    the page text holds the quote but no chunk does (the alignment rule of `assay.gold.align`:
    a chunk holds an anchor when it contains 80% of the quote's normalised tokens);
recall
    no chunk holding it is in the system's candidate pool (the trace's ``candidates``); for a
    system without a reranker (or without a trace), none is in the final top k;
rerank
    it was in the candidate pool and the reranker dropped it out of the top k;
generation
    every required piece was retrieved, and the answer is wrong by the answer checks
    (`answer_correct` of `assay.judge`), or there is no answer;
grounding
    the answer is right, but its figures are not in the spans it cites (`numbers_verified`).

For each entry the *best path* is the one nearest to complete: the most pieces satisfied in the
top k, then the furthest-reaching lost piece (its first loss at the latest stage), then the most
progress over all pieces, then the path listed first. A piece is satisfied by any one of its
alternatives, so it is lost at the furthest stage any alternative reached. The entry's stage is
that of the best path's piece lost earliest in the pipeline (ties: the piece listed first): the
*group* it lost. Stages the inputs cannot show (no page texts, no trace, no answers, no chunk
table) are named in ``unseen_stages`` and never blamed.

A trace is what a system returned beside its hits (see `assay.systems.protocol`)::

    "trace": {"candidates": [hit, ...], "reranked": [hit, ...]}

``candidates`` is the pool before reranking, ``reranked`` the pool after it; a trace without
``reranked`` belongs to a system without a reranker (its pool is diagnostic only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._version import __version__
from assay.corpus import ChunkTable, PageTexts
from assay.dataset import Alternative, Anchor, Dataset, Entry
from assay.errors import DataError, Problem, UsageError
from assay.gold.align import HOLD_THRESHOLD, aligned_containment, resolve_anchor
from assay.gold.index import Level
from assay.gold.resolve import GoldResolver, skipped_note
from assay.report import ReportMixin, Tabular, markdown_table
from assay.runs import Run, load_run

if TYPE_CHECKING:
    from assay.dataset import FreshSession

__all__ = [
    "ANSWER_STAGES",
    "ATTRIBUTION_VERSION",
    "RETRIEVAL_STAGES",
    "STAGES",
    "Attribution",
    "EntryAttribution",
    "PieceOutcome",
    "attribute",
    "attribute_files",
]

RETRIEVAL_STAGES: tuple[str, ...] = ("parse", "chunk", "recall", "rerank")
ANSWER_STAGES: tuple[str, ...] = ("generation", "grounding")
STAGES: tuple[str, ...] = RETRIEVAL_STAGES + ANSWER_STAGES
"""Every stage, in pipeline order."""

_SATISFIED = len(RETRIEVAL_STAGES)  # progress of a piece retrieved in the top k
_CHECKS = ("answer_correct", "numbers_verified")
ATTRIBUTION_VERSION = "attribution-2"
"""Version of the attribution rules; bump when a rule changes which stage an entry gets."""


# ------------------------------------------------------------------------------ results


@dataclass(frozen=True, slots=True)
class PieceOutcome:
    """One required piece of the best path: where it was lost (None: retrieved in the top k),
    its 1-based rank in the run's list (any depth) and in the trace's pool, its gold."""

    piece: int
    stage: str | None
    rank: int | None
    pool_rank: int | None
    gold: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "piece": self.piece,
            "stage": self.stage,
            "rank": self.rank,
            "pool_rank": self.pool_rank,
            "gold": list(self.gold),
        }


@dataclass(frozen=True, slots=True)
class EntryAttribution:
    """One answerable entry: the stage that lost it (None when it passed every stage seen),
    its best path, the group (piece of that path) lost, and every piece's outcome."""

    id: str
    category: str
    stage: str | None
    path: int
    group: int | None
    pieces: tuple[PieceOutcome, ...]
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "stage": self.stage,
            "group": self.group,
            "path": self.path,
            "detail": self.detail,
            "pieces": [p.to_dict() for p in self.pieces],
        }


@dataclass
class Attribution(ReportMixin):
    """Per category, how many failing entries each stage lost (a funnel); per entry, its stage.

    ``entries`` holds every answerable entry attributed (passing ones with ``stage`` None);
    ``to_dict()["entries"]`` lists the failing ones, and per category the stage counts sum to
    ``n_failed``.
    """

    k: int
    entries: list[EntryAttribution]
    unseen_stages: list[str]
    by: str = "category"  # what "categories" groups by: category, or an entry metadata key
    traced: int = 0
    judged: int = 0  # entries with all evidence retrieved whose answer the checks judged
    unjudged: list[str] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)
    unanswerable: int = 0
    dataset_version: str | None = None
    run_hash: str | None = None
    index_version: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[EntryAttribution]:
        return [e for e in self.entries if e.stage is not None]

    @property
    def seen_stages(self) -> list[str]:
        return [s for s in STAGES if s not in self.unseen_stages]

    def funnel(self) -> dict[str, dict[str, Any]]:
        """{category: {n, n_passed, n_failed, stages: {stage: count}}}; every seen stage is
        listed (0 when it lost nothing), categories sorted."""
        out: dict[str, dict[str, Any]] = {}
        for e in sorted(self.entries, key=lambda x: x.category):
            cell = out.setdefault(
                e.category,
                {
                    "n": 0,
                    "n_passed": 0,
                    "n_failed": 0,
                    "stages": dict.fromkeys(self.seen_stages, 0),
                },
            )
            cell["n"] += 1
            if e.stage is None:
                cell["n_passed"] += 1
            else:
                cell["n_failed"] += 1
                cell["stages"][e.stage] = cell["stages"].get(e.stage, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        funnel = self.funnel()
        overall = {
            "n": sum(c["n"] for c in funnel.values()),
            "n_passed": sum(c["n_passed"] for c in funnel.values()),
            "n_failed": sum(c["n_failed"] for c in funnel.values()),
            "stages": {
                s: sum(c["stages"].get(s, 0) for c in funnel.values()) for s in self.seen_stages
            },
        }
        return {
            "k": self.k,
            "by": self.by,
            "stages": list(STAGES),
            "unseen_stages": list(self.unseen_stages),
            "categories": funnel,
            "overall": overall,
            "entries": [e.to_dict() for e in self.failed],
            "traced": self.traced,
            "judged": self.judged,
            "unjudged": list(self.unjudged),
            "unanswerable_n": self.unanswerable,
            "excluded_stale_gold": {"n": len(self.excluded), "entries": dict(self.excluded)},
            "notes": list(self.notes),
            "dataset_version": self.dataset_version,
            "run_hash": self.run_hash,
            "index_version": self.index_version,
            "attribution_version": ATTRIBUTION_VERSION,
            "assay_version": __version__,
        }

    def _footer(self) -> list[str]:
        foot = [
            f"k={self.k}, dataset {self.dataset_version}, run {self.run_hash}, "
            f"index {self.index_version}"
        ]
        if self.unseen_stages:
            foot.append(
                "not seen (no evidence for them in the inputs): " + ", ".join(self.unseen_stages)
            )
        return foot + list(self.notes)

    def tabular(self) -> list[Tabular]:
        funnel = self.funnel()
        stages = self.seen_stages
        header = [self.by, "n", "failed", *stages]
        rows: list[list[str]] = []
        for cat, c in funnel.items():
            rows.append(
                [
                    cat,
                    str(c["n"]),
                    str(c["n_failed"]),
                    *(str(c["stages"].get(s, 0)) for s in stages),
                ]
            )
        d = self.to_dict()["overall"]
        rows.append(
            ["overall", str(d["n"]), str(d["n_failed"]), *(str(d["stages"][s]) for s in stages)]
        )
        funnel_t = Tabular(
            title=f"Where entries were lost, per {self.by} (first stage that lost a required piece, k={self.k})",
            header=header,
            rows=rows,
            footer=self._footer(),
            sections={len(rows) - 2} if len(rows) > 1 else set(),
        )
        entry_rows = [
            [
                e.id,
                e.category,
                str(e.stage),
                "-" if e.group is None else f"path {e.path} piece {e.group}",
                e.detail,
            ]
            for e in self.failed
        ]
        entries_t = Tabular(
            title="Failing entries",
            header=["id", "category", "stage", "group", "detail"],
            rows=entry_rows,
            emphasis=set(),
        )
        return [funnel_t, entries_t] if entry_rows else [funnel_t]

    def to_markdown(self) -> str:
        """The funnel (numbers right-aligned), then the failing entries (left-aligned text)."""
        parts: list[str] = []
        for t in self._tables():
            align = "l" + "r" * (len(t.header) - 1) if t.emphasis else "l" * len(t.header)
            rows = [[f"**{r[0]}**", *r[1:]] if r[0] in t.emphasis else r for r in t.rows]
            block = f"**{t.title}**\n\n" + markdown_table(t.header, rows, align)
            if t.footer:
                block += "\n" + "\n".join(t.footer) + "\n"
            parts.append(block)
        return "\n".join(parts)


# ------------------------------------------------------------------------------ the rules


def _label(alt: Alternative) -> str:
    if isinstance(alt, str):
        return alt
    where = alt.doc if alt.page is None else f"{alt.doc} p{alt.page}"
    text = " ".join(alt.quote.split())
    quote = text if len(text) <= 60 else text[:57] + "..."
    return f'{where}: "{quote}"'


def _hit_ids(value: Any, *, file: str, fld: str, eid: str) -> list[str]:
    if not isinstance(value, list):
        raise DataError(f"entry {eid}: must be a list of hits", file=file, field=fld)
    out: list[str] = []
    for j, h in enumerate(value):
        if isinstance(h, str):
            out.append(h)
        elif isinstance(h, Mapping) and isinstance(h.get("chunk_id"), str):
            out.append(str(h["chunk_id"]))
        else:
            raise DataError(
                f"entry {eid}: a hit is a chunk id string or {{'chunk_id', 'score'}}",
                file=file,
                field=f"{fld}.{j}",
            )
    return out


def _ranks(ids: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, c in enumerate(ids, start=1):
        out.setdefault(c, i)
    return out


@dataclass(frozen=True, slots=True)
class _Retrieved:
    ranks: dict[str, int]  # every hit of the run row, 1-based, first occurrence
    pool: dict[str, int] | None  # the trace's candidate pool, 1-based
    reranked: bool  # the trace says a reranker ran


class _Attributor:
    def __init__(
        self,
        chunks: ChunkTable | None,
        pages: PageTexts | None,
        parse_failures: frozenset[str],
        k: int,
        level: Level = "chunk",
    ) -> None:
        self.chunks = chunks
        self.pages = pages
        self.parse_failures = parse_failures
        self.k = k
        self.level = level
        self.resolver = GoldResolver(chunks, level=level)
        # entries with an anchor found only with whitespace ignored (spaces lost or added)
        self.spaced: dict[str, None] = {}

    def _page_text(self, anchor: Anchor) -> str | None:
        """The parser's text where the anchor lives; None when the page texts cannot say."""
        if self.pages is None or anchor.doc not in self.pages.doc_ids:
            return None
        if anchor.page is None:
            return "\n".join(self.pages.of_doc(anchor.doc))
        return self.pages.get((anchor.doc, anchor.page), "")

    def alternative(
        self, alt: Alternative, entry: Entry, fld: str, file: str, line: int | None
    ) -> tuple[int, tuple[str, ...]]:
        """(progress before retrieval: 0 lost at parse, 1 at chunk, 2 reached the index; the
        chunk ids that hold it)."""
        if isinstance(alt, str):
            res = self.resolver.resolve(alt, hashes=entry.chunk_hashes)
            if not res.ok:
                raise _StaleGold(
                    Problem(file, line, fld, f"entry {entry.id}: {res.message}"), res.kind or ""
                )
            return 2, res.keys
        if self.chunks is None:
            raise DataError("anchors are resolved onto chunks: pass the corpus (--corpus) or the chunk "
                    "table (--chunks)", file=file, line=line, field=fld)  # fmt: skip
        if alt.page is not None and self.chunks.of_doc(alt.doc):
            last = max(self.chunks.pages_of(alt.doc))
            if alt.page > last:  # stale gold, at either level: not a parse or retrieval miss
                res = self.resolver.resolve(alt)
                raise _StaleGold(
                    Problem(file, line, fld, f"entry {entry.id}: {res.message}"), "page_beyond_doc"
                )
        text = self._page_text(alt)
        if text is not None:
            share, spaced = aligned_containment(alt.quote, text)
            if share < HOLD_THRESHOLD:
                return 0, ()
            if spaced:
                self.spaced[entry.id] = None
        if not self.chunks.of_doc(alt.doc):
            if alt.doc in self.parse_failures:
                return 0, ()
            if text is not None:  # the parser read it, the chunker made nothing of it
                return 1, ()
            raise _StaleGold(
                Problem(
                    file, line, fld,
                    f"entry {entry.id}: document absent: the anchor names document {alt.doc!r}, "
                    "which the corpus lacks (a stale label, not a retrieval miss)",
                ),
                "missing_doc",
            )  # fmt: skip
        if self.level == "page" and alt.page is not None:
            # any chunk of the page counts; a page the chunker made nothing of is lost at chunk
            on_page = self.chunks.on_page(alt.doc, alt.page)
            return (2, (f"{alt.doc}#{alt.page}",)) if on_page else (1, ())
        held = resolve_anchor(alt, self.chunks)
        if held.ok:
            if held.whitespace_insensitive:
                self.spaced[entry.id] = None
            keys = held.chunk_ids
            if self.level == "page":
                keys = tuple(sorted({k for c in keys for k in self.chunks.page_keys(c)}))
            return 2, keys
        return 1, ()

    def retrieval(
        self, keys: tuple[str, ...], got: _Retrieved
    ) -> tuple[int, int | None, int | None]:
        """(progress: 2 lost at recall, 3 at rerank, 4 in the top k; rank; pool rank)."""
        rank = min((got.ranks[c] for c in keys if c in got.ranks), default=None)
        pool_rank = None
        if got.pool is not None:
            pool_rank = min((got.pool[c] for c in keys if c in got.pool), default=None)
        if rank is not None and rank <= self.k:
            return _SATISFIED, rank, pool_rank
        if got.reranked and pool_rank is not None:
            return 3, rank, pool_rank
        return 2, rank, pool_rank


def _best(paths: list[list[tuple[int, int | None, int | None, tuple[str, ...]]]]) -> int:
    def key(i: int) -> tuple[float, int, float, int]:
        prog = [p[0] for p in paths[i]]
        done = sum(p == _SATISFIED for p in prog)
        lost = [p for p in prog if p < _SATISFIED]
        return (done / len(prog), min(lost, default=_SATISFIED), sum(prog) / len(prog), -i)

    return max(range(len(paths)), key=key)


def attribute(
    dataset: Dataset | Sequence[Entry],
    run: Run,
    *,
    chunks: ChunkTable | None = None,
    pages: PageTexts | Mapping[tuple[str, int], str] | None = None,
    corpus: str | Path | None = None,
    k: int = 5,
    answers: bool | None = None,
    skip_stale: bool = False,
    allow_missing: bool = False,
    by: str = "category",
    level: Level = "chunk",
    allow_reuse: bool = False,
    session: FreshSession | None = None,
) -> Attribution:
    """Attribute every failing answerable entry of `run` to the first stage that lost it.

    It reads every entry's pass or fail: on a sealed fresh sample it is one use of it (refused a
    second time unless ``allow_reuse``; `assay.dataset.fresh.using`), said in ``notes``, or part
    of the use the caller opened (``session``: an export, which guards its files once).

    ``level="page"`` reads gold as page-level scoring does: a piece is retrieved when any chunk
    of a gold page is in the top k (ranks are those of each page's first chunk), so a quote
    longer than the chunks is not lost at the chunk stage.

    ``by`` groups the funnel by the entry's category (the default) or by an entry metadata key
    such as ``format`` or ``messiness`` (the synthetic room records both; an entry without the
    key falls in "(none)"), so "where do scans lose their evidence" is one call.

    ``corpus`` is a built corpus folder (`assay corpus build`): its ``chunks.jsonl`` (unless
    ``chunks`` is given), ``pages.jsonl`` (the parser's page text, for the parse stage) and the
    parse failures its ``manifest.json`` lists. ``pages`` may also be given directly. ``answers``
    (default: whether any row of the run has an answer) turns on the generation and grounding
    stages, judged by the deterministic answer checks.

    Refuses (DataError) gold that points at nothing -- a chunk id the table lacks, a chunk
    changed since it was labelled, a document neither parsed nor failed -- unless
    ``skip_stale``, which leaves those entries out and names them; and answerable entries
    missing from the run, unless ``allow_missing`` (they retrieved nothing).
    """
    from assay.dataset import fresh

    with (
        fresh.using(dataset, command="attribute", allow_reuse=allow_reuse, runs=[run.hash])
        if session is None
        else nullcontext(session)
    ) as own:
        result = _attribute(
            dataset, run, chunks=chunks, pages=pages, corpus=corpus, k=k, answers=answers,
            skip_stale=skip_stale, allow_missing=allow_missing, by=by, level=level,
        )  # fmt: skip
    if own.use is not None:  # a use of its own (the caller's is known when its block ends)
        result.notes.append(own.use.message)
    return result


def _attribute(
    dataset: Dataset | Sequence[Entry],
    run: Run,
    *,
    chunks: ChunkTable | None,
    pages: PageTexts | Mapping[tuple[str, int], str] | None,
    corpus: str | Path | None,
    k: int,
    answers: bool | None,
    skip_stale: bool,
    allow_missing: bool,
    by: str,
    level: Level,
) -> Attribution:
    if k < 1:
        raise UsageError(f"k must be at least 1, not {k}")
    failures: frozenset[str] = frozenset()
    if corpus is not None:
        chunks, pages, failures = _read_corpus(Path(corpus), chunks, pages)
    page_texts = pages if pages is None or isinstance(pages, PageTexts) else PageTexts(pages)
    entries = dataset.entries if isinstance(dataset, Dataset) else list(dataset)
    file = dataset.path if isinstance(dataset, Dataset) and dataset.path else "<dataset>"
    lines = dataset.lines if isinstance(dataset, Dataset) else {}
    run_file = run.path or "<run>"
    if answers is None:
        answers = any(run.details[i].get("answer") is not None for i in range(len(run)))
    if by != "category" and not any(by in e.metadata for e in entries):
        raise DataError(
            f"no entry says its {by}; cannot group by it", file=file, field=f"metadata.{by}"
        )

    def group_of(e: Entry) -> str:
        return e.category if by == "category" else str(e.metadata.get(by, "(none)"))

    if level == "page" and chunks is None:
        raise UsageError("--level page needs the chunk table: it knows each chunk's pages")
    att = _Attributor(chunks, page_texts, failures, k, level)
    table = chunks

    def keyed(ids: Sequence[str]) -> dict[str, int]:
        """Ranks of the items scored: chunk ids, or at page level each chunk's pages."""
        if level != "page" or table is None:
            return _ranks(ids)
        out: dict[str, int] = {}
        for i, c in enumerate(ids, start=1):
            for key in table.page_keys(c):
                out.setdefault(key, i)
        return out

    chunk_text = None if chunks is None else {c.chunk_id: c.text for c in chunks}

    results: list[EntryAttribution] = []
    excluded: dict[str, str] = {}
    excluded_kinds: dict[str, str] = {}
    missing: list[str] = []
    unjudged: list[str] = []
    traced = judged_n = unanswerable = 0
    any_reranked = False
    problems: list[Problem] = []
    for entry in entries:
        if not entry.is_answerable:
            unanswerable += 1
            continue
        line = lines.get(entry.id)
        row = run.row(entry.id) if entry.id in run else None
        if row is None and not allow_missing:
            missing.append(entry.id)
            continue
        hits = [] if row is None else [h.chunk_id for h in row.retrieved or ()]
        trace = None if row is None else row.extra.get("trace")
        pool: dict[str, int] | None = None
        reranked = False
        if isinstance(trace, Mapping):
            cand, rer = trace.get("candidates"), trace.get("reranked")
            rer_ids = (
                None
                if rer is None
                else _hit_ids(rer, file=run_file, fld="trace.reranked", eid=entry.id)
            )
            cand_ids = (
                rer_ids
                if cand is None
                else _hit_ids(cand, file=run_file, fld="trace.candidates", eid=entry.id)
            )
            if cand_ids is not None:
                traced += 1
                pool = keyed(cand_ids)
                reranked = rer_ids is not None
                any_reranked = any_reranked or reranked
        got = _Retrieved(keyed(hits), pool, reranked)
        try:
            paths = [
                [
                    _piece(att, entry, piece, got, f"evidence_paths.{pi}.{qi}", file, line)
                    for qi, piece in enumerate(path)
                ]
                for pi, path in enumerate(entry.evidence_paths)
            ]
        except DataError as exc:
            if skip_stale:
                excluded[entry.id] = f"{exc.problems[0].field}: {exc.problems[0].message}"
                excluded_kinds[entry.id] = getattr(exc, "kind", "")
                continue
            problems.extend(exc.problems)
            continue
        best = _best(paths)
        outcomes = tuple(
            PieceOutcome(
                qi,
                None if prog == _SATISFIED else RETRIEVAL_STAGES[prog],
                rank,
                prank,
                gold,
            )
            for qi, (prog, rank, prank, gold) in enumerate(paths[best])
        )
        lost = [p for p in outcomes if p.stage is not None]
        stage: str | None = None
        group: int | None = None
        detail = ""
        if lost:
            first = min(lost, key=lambda p: (RETRIEVAL_STAGES.index(str(p.stage)), p.piece))
            stage, group = first.stage, first.piece
            detail = _retrieval_detail(first, k)
        elif answers and row is not None:
            stage, detail, judged = _answer_stage(entry, row.answer, row.citations, chunk_text)
            if judged:
                judged_n += 1
            else:
                unjudged.append(entry.id)
        results.append(
            EntryAttribution(entry.id, group_of(entry), stage, best, group, outcomes, detail)
        )
    if not allow_missing:
        problems.extend(run.retrieval_problems(r.id for r in results))
    if missing:
        shown = ", ".join(missing[:20]) + (
            f" ... (+{len(missing) - 20} more)" if len(missing) > 20 else ""
        )
        problems.append(
            Problem(
                run_file,
                None,
                "id",
                f"{len(missing)} answerable entries have no row in the run: {shown}",
            )
        )
    if problems:
        raise DataError(problems)
    if not results:
        raise DataError(f"no answerable entry to attribute ({len(entries)} entries)", file=file)
    unseen: list[str] = []
    if page_texts is None:
        unseen.append("parse")
    if chunks is None:
        unseen.append("chunk")
    if not any_reranked:
        unseen.append("rerank")
    if not answers:
        unseen += ["generation", "grounding"]
    elif chunks is None:
        unseen.append("grounding")
    notes: list[str] = []
    if traced and traced < len(results):
        notes.append(
            f"{len(results) - traced} of {len(results)} entries have no trace: for them recall "
            f"is judged at the top {k}"
        )
    if att.spaced:
        notes.append(
            f"{len(att.spaced)} entries' quotes were found only with whitespace ignored (spaces "
            "lost or added, or words hyphenated at line ends, in the quote or in the text): "
            + ", ".join(att.spaced)
        )
    if excluded:
        notes.append(skipped_note(excluded, excluded_kinds))
    if unjudged:
        notes.append(
            f"{len(unjudged)} entries retrieved all their evidence but the answer checks could "
            "not judge their answers (no key facts or reference figure); counted as passed"
        )
    return Attribution(
        k=k,
        by=by,
        entries=results,
        unseen_stages=unseen,
        traced=traced,
        judged=judged_n,
        unjudged=unjudged,
        excluded=excluded,
        unanswerable=unanswerable,
        dataset_version=dataset.version if isinstance(dataset, Dataset) else None,
        run_hash=run.hash or None,
        index_version=None if chunks is None else chunks.version,
        notes=notes,
    )


class _StaleGold(DataError):
    """Gold that points at nothing, with its kind (`assay.gold.resolve.StaleKind`)."""

    def __init__(self, problem: Problem, kind: str):
        super().__init__(problem)
        self.kind = kind


def _piece(
    att: _Attributor,
    entry: Entry,
    piece: list[Alternative],
    got: _Retrieved,
    fld: str,
    file: str,
    line: int | None,
) -> tuple[int, int | None, int | None, tuple[str, ...]]:
    """(progress, rank, pool rank, gold labels) of one piece: the furthest any alternative got."""
    best: tuple[int, int | None, int | None] = (-1, None, None)
    for ai, alt in enumerate(piece):
        prog, keys = att.alternative(alt, entry, f"{fld}.{ai}", file, line)
        rank: int | None = None
        prank: int | None = None
        if prog == 2:
            prog, rank, prank = att.retrieval(keys, got)
        cand = (prog, rank, prank)
        if (prog, -(rank or 1 << 30)) > (best[0], -(best[1] or 1 << 30)):
            best = cand
    return best[0], best[1], best[2], tuple(_label(a) for a in piece)


def _retrieval_detail(p: PieceOutcome, k: int) -> str:
    gold = p.gold[0] + (f" (or {len(p.gold) - 1} more)" if len(p.gold) > 1 else "")
    if p.stage == "parse":
        return f"not in the parser's text: {gold}"
    if p.stage == "chunk":
        return f"no chunk holds it intact: {gold}"
    where = f"rank {p.rank}" if p.rank is not None else "not retrieved"
    if p.stage == "rerank":
        return f"pool rank {p.pool_rank}, {where} after reranking (k={k}): {gold}"
    pool = "" if p.pool_rank is None else f", pool rank {p.pool_rank}"
    return f"{where}{pool} (k={k}): {gold}"


def _answer_stage(
    entry: Entry,
    answer: str | None,
    citations: Sequence[str] | None,
    chunk_text: Mapping[str, str] | None,
) -> tuple[str | None, str, bool]:
    """(stage or None, detail, judged) for an entry whose evidence was all retrieved."""
    from assay.judge import check_entry

    if answer is None:
        return "generation", "evidence retrieved, no answer given", True
    evidence = [a.quote for a in entry.anchors()]
    if chunk_text is not None:
        evidence += [chunk_text[c] for c in sorted(entry.chunk_ids()) if c in chunk_text]
    res = check_entry(
        entry,
        answer,
        citations=citations,
        chunk_text=chunk_text,
        evidence_text=evidence,
        checks=list(_CHECKS),
    )
    correct, grounded = res.values.get("answer_correct"), res.values.get("numbers_verified")
    notes = "; ".join(res.notes)
    if correct is False:
        why = notes or (res.numeric.reason or "")
        if res.key_fact_recall is not None and res.key_fact_recall < 1.0:
            why = f"{res.key_fact_recall:.0%} of the critical key facts stated" + (
                f"; {notes}" if notes else ""
            )
        return "generation", "evidence retrieved, answer wrong" + (f": {why}" if why else ""), True
    if correct is None:
        return None, "", False
    if grounded is False:
        return (
            "grounding",
            "answer right, figures not in its cited spans" + (f": {notes}" if notes else ""),
            True,
        )
    return None, "", True


def _read_corpus(
    root: Path,
    chunks: ChunkTable | None,
    pages: PageTexts | Mapping[tuple[str, int], str] | None,
) -> tuple[ChunkTable | None, PageTexts | Mapping[tuple[str, int], str] | None, frozenset[str]]:
    from assay.corpus import load_chunks, load_manifest, load_pages

    if not root.is_dir():
        raise UsageError(
            f"{root}: the corpus is a folder (chunks.jsonl, pages.jsonl, manifest.json)"
        )
    if chunks is None:
        if not (root / "chunks.jsonl").is_file():
            raise DataError("file not found", file=root / "chunks.jsonl")
        chunks = load_chunks(root / "chunks.jsonl")
    if pages is None and (root / "pages.jsonl").is_file():
        pages = load_pages(root / "pages.jsonl")
    failed: set[str] = set()
    if (root / "manifest.json").is_file():
        for p in load_manifest(root).failures:
            failed.add(Path(p.file).stem)
    return chunks, pages, frozenset(failed)


def attribute_files(
    dataset: str | Path,
    run: str | Path,
    *,
    corpus: str | Path | None = None,
    chunks: str | Path | None = None,
    k: int = 5,
    skip_stale: bool = False,
    allow_missing: bool = False,
    by: str = "category",
    level: Level = "chunk",
    allow_reuse: bool = False,
    allow_corpus_change: bool = False,
) -> Attribution:
    """`attribute` on files (what `assay attribute` runs)."""
    from assay.dataset import load_dataset
    from assay.runs.corpus import bind_run

    if k < 1:
        raise UsageError(f"k must be at least 1, not {k}")
    if corpus is not None and not Path(corpus).is_dir():
        raise UsageError(
            f"{corpus}: the corpus is a folder (chunks.jsonl, pages.jsonl, manifest.json)"
        )
    ds = load_dataset(dataset)
    rn = load_run(run)
    if chunks is None and corpus is not None and (Path(corpus) / "chunks.jsonl").is_file():
        chunks = Path(corpus) / "chunks.jsonl"
    # the run is read against the table it was made on; the corpus's, or --chunks, only when
    # it recorded none (another table refused unless allow_corpus_change)
    bound = bind_run(rn, given=chunks, allow_change=allow_corpus_change, label="attributed")
    result = attribute(
        ds,
        rn,
        chunks=bound.table,
        corpus=corpus,
        k=k,
        skip_stale=skip_stale,
        allow_missing=allow_missing,
        by=by,
        level=level,
        allow_reuse=allow_reuse,
    )
    result.notes.extend(bound.notes(rn, "attributed"))
    return result
