"""The one gold resolver: what each alternative of an entry's evidence points at in a chunk table.

`validate` (`check_gold`) and `score` (`resolve_gold`) both ask `GoldResolver.resolve`, so a label
that points at nothing is found by the same rule and told in the same words by both. An
alternative is *stale* when it names

* a chunk id the chunk table lacks (``unknown_chunk``);
* a document the chunk table lacks (``missing_doc``, "document absent"): at page level too,
  where an anchor used to become a `doc#page` key that no hit could ever match, so the label
  read as a retrieval miss;
* a page beyond the end of its document (``page_beyond_doc``), or a page of it without any chunk
  (``empty_page``): at page level too, for the same reason;
* an anchor whose quote is in the text of its page but that no single chunk holds
  (``quote_too_long``: "quote split across chunks", or "quote longer than this chunking can
  hold" when it has more tokens than any chunk of its page): nothing is stale, the chunks cut the
  quote; the message gives the quote's length, the largest chunk's, the best containment in one
  chunk and the threshold, and suggests ``--level page``;
* an anchor whose quote no chunk of its document (and page) holds and whose page does not hold
  either (``unmatched_anchor``): the text changed or the anchor names another page; at page
  level an anchor with a page is keyed by the page and its quote is not aligned;
* a chunk whose text changed since the entry recorded its fingerprint in `chunk_hashes`
  (``changed_chunk``): a positional id like `doc/3/1` survives a re-chunk that moves its text.

An anchor marked ``role="mention"`` is checked like any other but earns no headline credit in
scoring: only a home satisfies its piece (`resolve_gold(mentions=True)` counts mentions too).

Each message starts with its cause in words (`CAUSES`), so a note counting left-out entries
can say why they were left out.

Scoring refuses stale gold (DataError listing every one, by entry) unless told to skip the
entries that carry it; validation reports it, and also checks key facts, unanswerable entries
and evidence accepted after the entry's `as_of`.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from assay._tokens import token_count
from assay.corpus import Chunk, ChunkTable
from assay.dataset import Alternative, Anchor, Dataset, Entry, grade
from assay.errors import DataError, Problem
from assay.gold.align import (
    HOLD_THRESHOLD,
    aligned_containment,
    chunk_fingerprint,
    resolve_anchor,
)
from assay.gold.index import GoldIndex, Level

__all__ = [
    "CAUSES",
    "GoldResolver",
    "Resolution",
    "StaleKind",
    "answer_level",
    "check_gold",
    "gold_problems",
    "percent",
    "resolve_gold",
    "skipped_note",
    "split_quotes",
]

StaleKind = Literal[
    "unknown_chunk",
    "missing_doc",
    "page_beyond_doc",
    "empty_page",
    "quote_too_long",
    "unmatched_anchor",
    "changed_chunk",
]

CAUSES: dict[str, str] = {
    "unknown_chunk": "chunk id absent from the chunk table",
    "missing_doc": "document absent",
    "page_beyond_doc": "page beyond the document",
    "empty_page": "page without any chunk",
    "quote_too_long": "quote no one chunk holds (split across chunks or longer than them)",
    "unmatched_anchor": "quote not in the page's text",
    "changed_chunk": "chunk text changed",
}
"""A few words per stale kind, for notes that count them."""

NEEDS_CHUNKS_FOR_PAGES = "page-level scoring of chunk ids needs the chunk table (--chunks)"
NEEDS_CHUNKS_FOR_ANCHORS = "anchors are resolved onto chunks: pass the chunk table (--chunks)"


@dataclass(frozen=True, slots=True)
class Resolution:
    """What one alternative points at: item keys (chunk ids, or `doc#page` at page level), the
    chunks behind them, and why it is stale (`kind`, `message`) when it points at nothing."""

    keys: tuple[str, ...] = ()
    chunks: tuple[Chunk, ...] = ()
    kind: StaleKind | None = None
    message: str = ""
    # a usage error rather than stale gold: this alternative cannot be resolved without a table
    needs_chunks: str | None = None
    # an anchor held only with whitespace ignored (its quote's spaces were lost or added)
    whitespace_insensitive: bool = False
    # for a quote no one chunk holds: where, and its figures, in a few words (`split_quotes`)
    brief: str = ""

    @property
    def ok(self) -> bool:
        return self.kind is None and self.needs_chunks is None


def _joined(chunks: Sequence[Chunk]) -> str:
    return "\n".join(c.text for c in chunks)


def _where(a: Anchor) -> str:
    return f"{a.doc} page {a.page}" if a.page is not None else a.doc


def _label(alt: Alternative) -> str:
    return repr(alt) if isinstance(alt, str) else f"anchor on {_where(alt)}"


class GoldResolver:
    """Resolves alternatives onto one chunk table (or none) at one level; each distinct
    alternative (with its recorded fingerprint) is resolved once."""

    def __init__(self, chunks: ChunkTable | None, *, level: Level = "chunk") -> None:
        self.chunks = chunks
        self.level = level
        self._fingerprints: dict[str, str] = {}
        self._plain: dict[Alternative, Resolution] = {}
        self._recorded: dict[tuple[str, str], Resolution] = {}

    def _unmatched(self, alt: Anchor, best: float) -> Resolution:
        """Why no chunk holds the anchor: its quote spans chunks (split across them, or longer
        than any of them), or its text is not where it says."""
        assert self.chunks is not None
        table = self.chunks
        where = table.on_page(alt.doc, alt.page) if alt.page is not None else table.of_doc(alt.doc)
        whole = aligned_containment(alt.quote, _joined(where))[0] if where else 0.0
        tokens = token_count(alt.quote)
        largest = max((token_count(c.text) for c in where), default=0)
        if alt.page is None and tokens <= largest:  # a whole document holds most words of any
            whole = 0.0  # quote: only one longer than every chunk is read against all of it
        return _unmatched_message(alt, best, whole, tokens, largest)

    def fingerprint(self, chunk: Chunk) -> str:
        fp = self._fingerprints.get(chunk.chunk_id)
        if fp is None:
            fp = self._fingerprints[chunk.chunk_id] = chunk_fingerprint(chunk.text)
        return fp

    def resolve(self, alt: Alternative, *, hashes: dict[str, str] | None = None) -> Resolution:
        """What `alt` points at; `hashes` are the entry's recorded chunk fingerprints."""
        if hashes and isinstance(alt, str) and alt in hashes:
            key = (alt, hashes[alt])
            res = self._recorded.get(key)
            if res is None:
                res = self._recorded[key] = self._resolve(alt, hashes[alt])
            return res
        res = self._plain.get(alt)
        if res is None:
            res = self._plain[alt] = self._resolve(alt, None)
        return res

    def _resolve(self, alt: Alternative, recorded: str | None) -> Resolution:
        table = self.chunks
        if isinstance(alt, str):
            if table is None:
                if self.level == "page":
                    return Resolution(needs_chunks=NEEDS_CHUNKS_FOR_PAGES)
                return Resolution((alt,))
            chunk = table.by_id.get(alt)
            if chunk is None:
                return Resolution(
                    kind="unknown_chunk", message=f"chunk id {alt!r} is not in the chunk table"
                )
            if recorded is not None and (now := self.fingerprint(chunk)) != recorded:
                return Resolution(
                    kind="changed_chunk",
                    message=f"chunk {alt!r} changed since it was labelled (text fingerprint "
                    f"{recorded} recorded, {now} now): check the label still holds",
                )
            keys = table.page_keys(alt) if self.level == "page" else [alt]
            return Resolution(tuple(keys), (chunk,))
        # an anchor
        if table is None:
            if self.level == "page" and alt.page is not None:
                return Resolution((f"{alt.doc}#{alt.page}",))
            return Resolution(needs_chunks=NEEDS_CHUNKS_FOR_ANCHORS)
        if not table.of_doc(alt.doc):
            return Resolution(
                kind="missing_doc",
                message=f"document absent: the anchor names document {alt.doc!r}, which the "
                "chunk table lacks (a stale label, not a retrieval miss)",
            )
        if alt.page is not None and not table.on_page(alt.doc, alt.page):
            pages = table.pages_of(alt.doc)
            if alt.page > max(pages):
                return Resolution(
                    kind="page_beyond_doc",
                    message=f"page beyond the document: the anchor names page {alt.page} of "
                    f"{alt.doc!r}, whose last page in the chunk table is {max(pages)} (a stale "
                    "label, not a retrieval miss)",
                )
            return Resolution(
                kind="empty_page",
                message=f"page {alt.page} of {alt.doc!r} has no chunk in the chunk table (an "
                "empty page, or one the chunker dropped): no hit can ever satisfy it",
            )
        if self.level == "page" and alt.page is not None:
            return Resolution((f"{alt.doc}#{alt.page}",), tuple(table.on_page(alt.doc, alt.page)))
        res = resolve_anchor(alt, table)
        if not res.ok:
            return self._unmatched(alt, res.best)
        chunks = tuple(table.by_id[c] for c in res.chunk_ids)
        spaced = res.whitespace_insensitive
        if self.level == "page":
            keys = sorted({k for c in res.chunk_ids for k in table.page_keys(c)})
            return Resolution(tuple(keys), chunks, whitespace_insensitive=spaced)
        return Resolution(res.chunk_ids, chunks, whitespace_insensitive=spaced)


def percent(share: float) -> str:
    """A share as a percentage rounded down to 0.1 (never up to a threshold it falls short of):
    0.7989 -> "79.8%", 0.8 -> "80%"."""
    tenths = math.floor(share * 1000 + 1e-9)
    return f"{tenths // 10}%" if tenths % 10 == 0 else f"{tenths / 10:.1f}%"


def _unmatched_message(
    alt: Anchor, best: float, whole: float, tokens: int, largest: int
) -> Resolution:
    need = percent(HOLD_THRESHOLD)
    if whole >= HOLD_THRESHOLD:
        hint = (
            ": score with --level page, where any chunk of the page counts"
            if alt.page is not None
            else ": give the anchor its page and score with --level page"
        )
        if tokens > largest:
            why = (
                f"quote longer than this chunking can hold: the quote ({tokens} tokens) is in the "
                f"text of {_where(alt)}, whose chunks hold at most {largest} tokens"
            )
        else:
            why = (
                f"quote split across chunks: the quote ({tokens} tokens) is in the text of "
                f"{_where(alt)}, whose chunks hold up to {largest} tokens, but it crosses a chunk "
                "boundary"
            )
        return Resolution(
            kind="quote_too_long",
            message=f"{why}: the best chunk holds {percent(best)} of it, a chunk must hold "
            f"{need}{hint}",
            brief=f"{_where(alt)}: {tokens}-token quote, chunks of up to {largest} tokens, best "
            f"chunk holds {percent(best)}",
        )
    return Resolution(
        kind="unmatched_anchor",
        message=f"anchor matches no chunk of {_where(alt)}: the quote is not in its text (best "
        f"containment {percent(best)} in one chunk, {percent(whole)} in all of them, needs "
        f"{need}); the text changed or the anchor names another page",
    )


SPLIT_QUOTES_HINT = (
    "score with --level page (any chunk of a gold page counts), or leave those entries out with "
    "--skip-missing; `assay validate --chunks` lists each anchor with its figures"
)


def split_quotes(
    stale: Sequence[tuple[str, Problem, Resolution]], *, file: str, level: Level
) -> list[Problem]:
    """The problems of stale gold, ``(entry id, problem, resolution)`` each, as a retrieval
    command reports them: at chunk level every quote that its page holds but no one chunk does
    (``quote_too_long``) is told in ONE problem that names each entry and suggests
    ``--level page``; every other problem is kept as it is."""
    split = [(eid, res) for eid, _, res in stale if res.kind == "quote_too_long"]
    rest = [p for _, p, res in stale if res.kind != "quote_too_long"]
    if not split or level != "chunk":
        return [p for _, p, _ in stale]
    by_entry: dict[str, list[str]] = {}
    for eid, res in split:
        by_entry.setdefault(eid, []).append(res.brief or res.message)
    named = "; ".join(f"{eid} ({', '.join(briefs)})" for eid, briefs in by_entry.items())
    n = len(by_entry)
    one = Problem(
        file,
        None,
        "evidence_paths",
        f"{n} {'entry has' if n == 1 else 'entries have'} gold that resolves only at page level "
        f"(quotes their pages hold but no one chunk does: split across chunks or longer than "
        f"them): {named}; {SPLIT_QUOTES_HINT}",
    )
    return [one, *rest]


def answer_level(entries: Sequence[Entry], chunks: ChunkTable) -> tuple[Level, str | None]:
    """The level answer checks read gold at when told ``auto``: chunk level when every anchor
    that resolves at page level resolves onto a chunk too; otherwise page level (answer checks
    need no chunk-level gold), with a note naming each entry and why its anchors do not resolve
    onto a chunk. Gold stale at page level too (a document or page the table lacks) is left to
    `resolve_gold` to report."""
    chunk, page = GoldResolver(chunks), GoldResolver(chunks, level="page")
    why: dict[str, list[str]] = {}
    for e in entries:
        if not e.is_answerable:
            continue
        for alt in (a for path in e.evidence_paths for piece in path for a in piece):
            if not isinstance(alt, Anchor):
                continue
            res = chunk.resolve(alt)
            if res.kind in ("quote_too_long", "unmatched_anchor") and page.resolve(alt).ok:
                what = res.brief or f"{_where(alt)}: {CAUSES[res.kind or '']}"
                why.setdefault(e.id, []).append(what)
    if not why:
        return "chunk", None
    n = len(why)
    named = "; ".join(f"{eid} ({', '.join(w)})" for eid, w in why.items())
    return "page", (
        f"gold read at page level (--level auto): {n} {'entry has' if n == 1 else 'entries have'} "
        f"anchors that resolve onto their pages but onto no one chunk: {named}. Answer checks "
        "need no chunk-level gold; --level chunk refuses such gold instead"
    )


def skipped_note(excluded: dict[str, str], kinds: dict[str, str] | None = None) -> str:
    """The note beside results that left entries out (``--skip-missing``): how many, why (each
    cause counted, in words), and which."""
    n = len(excluded)
    ids = list(excluded)
    shown = ", ".join(ids[:10]) + (f" (+{n - 10} more)" if n > 10 else "")
    counts: dict[str, int] = {}
    for eid in ids:
        kind = (kinds or {}).get(eid, "")
        counts[kind] = counts.get(kind, 0) + 1
    why = "; ".join(
        f"{c} {CAUSES.get(k, 'unresolved')}" for k, c in sorted(counts.items(), key=lambda x: -x[1])
    )
    text = (
        f"{n} {'entry' if n == 1 else 'entries'} left out because {'its' if n == 1 else 'their'} "
        "gold does not resolve on this chunk table (--skip-missing)"
    )
    if n:
        text += f": {why}: {shown}"
        if "quote_too_long" in counts:
            text += " (quotes no one chunk holds: --level page scores them)"
    return text


def _accepted_after(res: Resolution, as_of: dt.date) -> dt.date | None:
    """The acceptance date of what `res` points at when all of it became public after `as_of`."""
    dates = [c.accepted_at for c in res.chunks]
    known = [d for d in dates if d is not None]
    if not known or len(known) < len(dates):
        return None
    first = min(known)
    return first if first > as_of else None


def check_gold(
    dataset: Dataset | Sequence[Entry],
    chunks: ChunkTable,
    *,
    file: str | None = None,
    level: Level = "chunk",
) -> list[Problem]:
    """Every problem with a dataset's gold against a chunk table: stale alternatives (unknown
    chunk ids, documents the table lacks, pages beyond a document, anchors no chunk holds, chunks
    changed since they were labelled) in evidence paths and key facts of every entry, answerable
    or not; and evidence accepted after the entry's `as_of` when the chunk table carries
    acceptance dates. At ``level="page"`` an anchor with a page is checked against its page, as
    page-level scoring reads it (a quote longer than the chunks is then no problem)."""
    return [p for p, _ in gold_problems(dataset, chunks, file=file, level=level)]


def gold_problems(
    dataset: Dataset | Sequence[Entry],
    chunks: ChunkTable,
    *,
    file: str | None = None,
    level: Level = "chunk",
) -> list[tuple[Problem, StaleKind | None]]:
    """`check_gold`'s problems, each with its stale kind (None: not stale gold but evidence
    accepted after the entry's `as_of`), so a caller can set stale gold apart."""
    entries = dataset.entries if isinstance(dataset, Dataset) else list(dataset)
    lines = dataset.lines if isinstance(dataset, Dataset) else {}
    file = file or (dataset.path if isinstance(dataset, Dataset) else None) or "<dataset>"
    resolver = GoldResolver(chunks, level=level)
    problems: list[tuple[Problem, StaleKind | None]] = []
    for e in entries:
        line = lines.get(e.id)
        alts: list[tuple[str, Alternative]] = [
            (f"evidence_paths.{pi}.{qi}.{ai}", alt)
            for pi, path in enumerate(e.evidence_paths)
            for qi, piece in enumerate(path)
            for ai, alt in enumerate(piece)
        ]
        alts += [
            (f"key_facts.{ki}.supporting.{ai}", alt)
            for ki, kf in enumerate(e.key_facts)
            for ai, alt in enumerate(kf.supporting)
        ]
        for fld, alt in alts:
            res = resolver.resolve(alt, hashes=e.chunk_hashes)
            if not res.ok:
                problems.append(
                    (Problem(file, line, fld, f"entry {e.id}: {res.message}"), res.kind)
                )
            elif e.as_of is not None and (after := _accepted_after(res, e.as_of)) is not None:
                problems.append(
                    (
                        Problem(
                            file,
                            line,
                            fld,
                            f"entry {e.id}: evidence {_label(alt)} was accepted "
                            f"{after.isoformat()}, after the entry's as_of {e.as_of.isoformat()} "
                            "(a system that honours as_of can never retrieve it)",
                        ),
                        None,
                    )
                )
    return problems


def _chunk_id_gold(
    entries: Sequence[Entry], resolver: GoldResolver, bare: bool
) -> GoldIndex | None:
    """`resolve_gold`'s index, flattened at C speed, when every answerable entry's gold is
    chunk ids that each resolve (each distinct one resolved once), none graded or hashed; None
    otherwise (then the general loop runs, and names any problem)."""
    answerable: list[Entry] = []
    unanswerable: dict[str, int] = defaultdict(int)
    rooms: set[str | None] = set()
    turns = False
    for e in entries:
        meta = e.metadata
        room = meta.get("room") if meta else None
        rooms.add(str(room) if room else None)
        turns = turns or e.conversation is not None
        if e.is_answerable:
            if e.chunk_hashes or (meta and "relevance" in meta):
                return None
            answerable.append(e)
        elif e.label_tier != "draft":
            unanswerable[e.category] += 1
    evidence = [e.evidence_paths for e in answerable]
    paths = list(chain.from_iterable(evidence))
    pieces = list(chain.from_iterable(paths))
    alts: list[Any] = list(chain.from_iterable(pieces))
    if not (set(map(type, alts)) <= {str} and all(pieces)):
        return None  # an anchor (or an empty piece, which no validated entry has)
    alt_piece = np.repeat(np.arange(len(pieces), dtype=np.int64), list(map(len, pieces)))
    alt_keys: list[str]
    if resolver.level == "chunk":
        # a chunk id resolves at chunk level to itself, when the table (if any) holds it: each
        # distinct id (the index numbers them) is looked up once, no resolution built
        table = None if bare else resolver.chunks
        index = _quick_index(answerable, evidence, paths, alts, alt_piece, resolver.level,
                             unanswerable, rooms, turns)  # fmt: skip
        if table is not None and not all(map(table.by_id.__contains__, index.key_ids)):
            return None  # stale gold: the general loop names it
        return index
    keys: dict[str, tuple[str, ...]] = {}
    for alt in dict.fromkeys(alts):
        res = resolver.resolve(alt) if not bare else Resolution((alt,))
        if not res.ok or not res.keys:
            return None  # stale gold: the general loop names it
        keys[alt] = res.keys
    if all(len(k) == 1 for k in keys.values()):
        alt_keys = [keys[a][0] for a in alts] if any(k != (a,) for a, k in keys.items()) else alts
    else:  # an alternative on several keys (a chunk id over several pages): each keeps its piece
        per = [keys[a] for a in alts]
        alt_piece = np.repeat(alt_piece, list(map(len, per)))
        alt_keys = list(chain.from_iterable(per))
    return _quick_index(answerable, evidence, paths, alt_keys, alt_piece, resolver.level,
                        unanswerable, rooms, turns)  # fmt: skip


def _quick_index(
    answerable: list[Entry],
    evidence: list[list[list[list[Alternative]]]],
    paths: list[list[list[Alternative]]],
    alt_keys: list[str],
    alt_piece: npt.NDArray[np.int64],
    level: Level,
    unanswerable: dict[str, int],
    rooms: set[str | None],
    turns: bool,
) -> GoldIndex:
    """`_chunk_id_gold`'s index from its flattened columns (every grade 1, nothing excluded)."""
    return GoldIndex(
        [e.id for e in answerable],
        [e.category for e in answerable],
        alt_keys,
        alt_piece,
        np.ones(len(alt_keys), dtype=np.float64),
        np.repeat(np.arange(len(paths), dtype=np.int64), list(map(len, paths))),
        np.repeat(np.arange(len(evidence), dtype=np.int64), list(map(len, evidence))),
        level,
        dict(unanswerable),
        {},
        excluded_kinds={},
        rooms=frozenset(rooms),
        conversations=turns,
        judged_keys=[],
        judged_entry=np.zeros(0, dtype=np.int64),
    )


def resolve_gold(
    entries: Sequence[Entry],
    *,
    chunks: ChunkTable | None = None,
    level: Level = "chunk",
    file: str = "<dataset>",
    lines: Mapping[str, int] | None = None,
    skip_stale: bool = False,
    mentions: bool = False,
) -> GoldIndex:
    """Map every alternative of every answerable entry to item keys, for scoring.

    Anchors marked ``role="mention"`` (the same fact repeated elsewhere, e.g. a later filing's
    comparative column) get no headline credit: they are left out unless `mentions` is True
    (their staleness is still checked).

    Refuses (DataError listing each, by entry) when gold is stale -- see the module docstring;
    at chunk level the quotes no one chunk holds are one problem naming their entries and
    suggesting page level (`split_quotes`) -- or, with `skip_stale`, leaves those entries out and
    names them in `GoldIndex.excluded`.
    Chunk ids are checked only when `chunks` is given; anchors need `chunks` at chunk level, and
    at page level chunk ids need it to know their pages.
    """
    lines = lines or {}
    resolver = GoldResolver(chunks, level=level)
    plain = resolver._plain  # the resolver's cache of alternatives without a recorded hash
    bare = chunks is None and level == "chunk"
    quick = _chunk_id_gold(entries, resolver, bare)
    if quick is not None:
        return quick
    problems: list[tuple[str, Problem, Resolution]] = []
    excluded: dict[str, str] = {}
    excluded_kinds: dict[str, str] = {}
    entry_ids: list[str] = []
    cats: list[str] = []
    alt_keys: list[str] = []
    alt_piece: list[int] = []
    alt_gain: list[int] = []
    piece_path: list[int] = []
    path_entry: list[int] = []
    judged_keys: list[str] = []  # grade-0 keys: judged not relevant (bpref reads them)
    judged_entry: list[int] = []
    unanswerable: dict[str, int] = defaultdict(int)
    rooms: set[str | None] = set()
    turns = False
    for e in entries:
        room = e.metadata.get("room")
        rooms.add(str(room) if room else None)
        turns = turns or e.conversation is not None
        if not e.is_answerable:
            if e.label_tier != "draft":  # a draft is not labelled yet, not unanswerable
                unanswerable[e.category] += 1
            continue
        line = lines.get(e.id)
        hashes = e.chunk_hashes
        grades: dict[str, Any] = e.metadata.get("relevance") or {}  # chunk id -> grade
        # append optimistically; an entry with stale gold is rolled back, wholly out of the index
        marks = (len(alt_keys), len(piece_path), len(path_entry))
        stale: list[Problem] = []
        kinds: list[str] = []
        found: list[Resolution] = []
        ei = len(entry_ids)
        zero: list[str] = []
        for pi, path in enumerate(e.evidence_paths):
            path_idx = len(path_entry)
            path_entry.append(ei)
            for qi, piece in enumerate(path):
                piece_idx = len(piece_path)
                piece_path.append(path_idx)
                n_before = len(alt_keys)
                for ai, alt in enumerate(piece):
                    gain = grade(alt, grades) if grades or isinstance(alt, Anchor) else 1
                    if bare and isinstance(alt, str):  # no table: a chunk id is its own key
                        if gain:  # grade 0 satisfies nothing
                            alt_keys.append(alt)
                            alt_piece.append(piece_idx)
                            alt_gain.append(gain)
                        else:
                            zero.append(alt)
                        continue
                    res = None if hashes else plain.get(alt)
                    if res is None:
                        res = resolver.resolve(alt, hashes=hashes)
                    if res.kind is not None or res.needs_chunks is not None:
                        fld = f"evidence_paths.{pi}.{qi}.{ai}"
                        if res.needs_chunks is not None:
                            raise DataError(res.needs_chunks, file=file, line=line, field=fld)
                        stale.append(Problem(file, line, fld, f"entry {e.id}: {res.message}"))
                        kinds.append(res.kind or "")
                        found.append(res)
                        continue
                    if isinstance(alt, Anchor) and alt.role == "mention" and not mentions:
                        continue  # evidence, but headline credit goes only to a home
                    if not gain:
                        zero.extend(res.keys)  # graded 0: judged not relevant, satisfies nothing
                        continue
                    for key in res.keys:  # each key keeps its alternative's own grade
                        alt_keys.append(key)
                        alt_piece.append(piece_idx)
                        alt_gain.append(gain)
                if len(alt_keys) == n_before:
                    # no key at all (only stale gold, rolled back below); keep arrays aligned
                    alt_keys.append("\x00unresolvable")
                    alt_piece.append(piece_idx)
                    alt_gain.append(1)
        if stale:
            del alt_keys[marks[0] :], alt_piece[marks[0] :], alt_gain[marks[0] :]
            del piece_path[marks[1] :], path_entry[marks[2] :]
            if skip_stale:
                excluded[e.id] = f"{stale[0].field}: {stale[0].message}"
                excluded_kinds[e.id] = kinds[0]
            else:
                problems.extend(zip([e.id] * len(stale), stale, found, strict=True))
            continue
        relevant = set(alt_keys[marks[0] :])
        judged = [key for key in dict.fromkeys(zero) if key not in relevant]
        judged_keys.extend(judged)
        judged_entry.extend([ei] * len(judged))
        entry_ids.append(e.id)
        cats.append(e.category)
    if problems:
        raise DataError(split_quotes(problems, file=file, level=level))
    return GoldIndex(
        entry_ids,
        cats,
        alt_keys,
        np.asarray(alt_piece, dtype=np.int64),
        np.asarray(alt_gain, dtype=np.float64),
        np.asarray(piece_path, dtype=np.int64),
        np.asarray(path_entry, dtype=np.int64),
        level,
        dict(unanswerable),
        excluded,
        excluded_kinds=excluded_kinds,
        rooms=frozenset(rooms),
        conversations=turns,
        judged_keys=judged_keys,
        judged_entry=np.asarray(judged_entry, dtype=np.int64),
    )
