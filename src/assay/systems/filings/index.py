"""The filings index: chunks joined to filing metadata, BM25, dense vectors and filters.

Filters run before ranking and are expressed as a boolean mask over chunks (passed to bm25s as
`weight_mask`):

- as_of: only filings accepted on or before `as_of` are visible (`accepted_at`, else
  `version_date`). A filing with neither date is visible only when no as_of is given, unless
  `undated="visible"`.
- supersession, per item: a visible amendment (`amends`, `amended_items`) hides the amended
  filing's chunks *in the items it replaces* and nothing else. An amendment that names no items
  hides nothing (a blanket flag would hide the financial statements a Part III amendment never
  touched). Each chunk's item comes from its `item` field or from the "Item 8." headings read in
  page order.
- entity, form and period (per company calendar) choose filings; see `select_docs`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from assay._io import iter_jsonl, json_loads, sha256_bytes
from assay._stopwords import STOPWORDS as _STOPWORDS
from assay._text import fold_text
from assay.corpus import (
    STATEMENT_TITLES,
    AccessLabel,
    FiscalCalendar,
    PrincipalLike,
    allows,
    detect_statement,
    load_chunks,
)
from assay.errors import DataError
from assay.systems.filings.entities import EntityResolver, company_key
from assay.systems.filings.query import QueryPlan

__all__ = [
    "ChunkRecord",
    "DocInfo",
    "FilingsIndex",
    "Selection",
    "doc_infos",
    "parse_item_spec",
    "tokenize",
]

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float32]

_ANNUAL_FORMS = {"10-K", "10-K/A", "20-F", "40-F", "ARS"}
_QUARTER_FORMS = {"10-Q", "10-Q/A"}

_TOKEN_RE = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


class _Stemmer:
    def __init__(self) -> None:
        import Stemmer  # PyStemmer, a core dependency

        self._stem = Stemmer.Stemmer("english").stemWord
        self._memo: dict[str, str] = {}

    def __call__(self, word: str) -> str:
        out = self._memo.get(word)
        if out is None:
            out = self._memo[word] = self._stem(word)
        return out


_STEMMER: _Stemmer | None = None


def tokenize(text: str) -> list[str]:
    """Folded (`assay._text.fold_text`: NFKC, ASCII quotes and dashes, case folded), stop-worded,
    Snowball-stemmed tokens (numbers kept: "2023", "4.5")."""
    global _STEMMER
    if _STEMMER is None:
        _STEMMER = _Stemmer()
    stem = _STEMMER
    return [stem(t) for t in _TOKEN_RE.findall(fold_text(text)) if t not in _STOPWORDS]


def _date(value: Any) -> dt.date | None:
    if value in (None, ""):
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value)[:10])


@dataclass(frozen=True, slots=True)
class DocInfo:
    """Filing metadata the filters need (from documents.jsonl)."""

    doc_id: str
    company: str | None = None
    company_key: str | None = None
    form: str | None = None
    fiscal_year: int | None = None
    fiscal_quarter: int | None = None
    period_end: dt.date | None = None
    accepted_at: dt.date | None = None
    amends: str | None = None
    amended_items: tuple[str, ...] = ()
    calendar: FiscalCalendar = field(default_factory=FiscalCalendar)
    # what kind of document it is beyond its form ("credit_agreement", "management_accounts",
    # "10-K"): `metadata.doc_type` or `doc_type` of documents.jsonl, else None
    doc_type: str | None = None

    @property
    def is_annual(self) -> bool:
        if self.form in _ANNUAL_FORMS:
            return True
        return self.form not in _QUARTER_FORMS and self.fiscal_quarter in (None, 4)

    def label(self) -> str:
        period = "" if self.fiscal_year is None else f"FY{self.fiscal_year}"
        if self.fiscal_quarter and not (self.form or "").startswith("10-K"):
            period = f"Q{self.fiscal_quarter} {period}"
        return " ".join(p for p in (self.company, self.form, period) if p)


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    chunk_id: str
    doc_id: str
    text: str
    pages: tuple[int, ...]
    kind: str = "prose"
    item: str | None = None  # "8", "7A", "III" (part), as labelled or detected
    access: AccessLabel | None = None  # who may see it (assay.corpus.access); None: public


# -- items and supersession -------------------------------------------------------------------

_PARTS = {
    "I": ("1", "1A", "1B", "1C", "2", "3", "4"),
    "II": ("5", "6", "7", "7A", "8", "9", "9A", "9B", "9C"),
    "III": ("10", "11", "12", "13", "14"),
    "IV": ("15", "16"),
}
_ITEM_HEADING = re.compile(r"^\s*item\s+(\d{1,2}[a-c]?)\s*[.:\-–—]", re.I | re.M)


def parse_item_spec(spec: str) -> frozenset[str]:
    """'Part III' -> items 10-14; 'Item 8' -> {'8'}; 'Items 7 and 7A' -> {'7', '7A'}."""
    s = spec.strip().upper()
    out: set[str] = set()
    part = re.fullmatch(r"PART\s+(I{1,3}|IV)", s)
    if part:
        return frozenset(_PARTS[part.group(1)])
    for num in re.findall(r"\b(\d{1,2}[A-C]?)\b", s):
        out.add(num)
    return frozenset(out)


def _detect_items(chunks: Sequence[ChunkRecord]) -> list[str | None]:
    """Item label of each chunk of one filing (chunks in reading order)."""
    current: str | None = None
    out: list[str | None] = []
    for chunk in chunks:
        if chunk.item:
            current = chunk.item.upper().removeprefix("ITEM").strip()
            out.append(current)
            continue
        found = [m.group(1).upper() for m in _ITEM_HEADING.finditer(chunk.text)]
        if found and len(set(found)) < 3:  # three or more headings: a table of contents
            out.append(found[0])
            current = found[-1]
        else:
            out.append(current)
    return out


# -- statement pages --------------------------------------------------------------------------

# the titles and the page test live with the corpus (the facts table reads them at build time)
_STATEMENT_TITLES = STATEMENT_TITLES


# -- selection --------------------------------------------------------------------------------


@dataclass(slots=True)
class Selection:
    """Which filings a query may draw from, and why."""

    docs: set[int] | None  # None: every visible filing
    applied: list[str] = field(default_factory=list)
    relaxed: list[str] = field(default_factory=list)


class FilingsIndex:
    """Chunks + filing metadata + a BM25 index; dense vectors are computed lazily on demand."""

    def __init__(
        self,
        chunks: Sequence[ChunkRecord],
        documents: Iterable[Mapping[str, Any]] = (),
        *,
        corpus_version: str | None = None,
        page_texts: Mapping[tuple[str, int], str] | None = None,
        undated: Literal["hidden", "visible"] = "hidden",
        builtin_aliases: bool = True,
    ) -> None:
        if not chunks:
            raise DataError("the corpus has no chunks")
        self.undated = undated
        doc_rows = [dict(d) for d in documents]
        self.docs: list[DocInfo] = []
        self._doc_pos: dict[str, int] = {}
        for row in _with_calendars(doc_rows):
            self._doc_pos[row.doc_id] = len(self.docs)
            self.docs.append(row)
        for c in chunks:
            if c.doc_id not in self._doc_pos:
                self._doc_pos[c.doc_id] = len(self.docs)
                self.docs.append(DocInfo(doc_id=c.doc_id))
        self.resolver = EntityResolver.from_documents(doc_rows, builtin=builtin_aliases)

        # reading order within each filing: first page, then file order
        order = sorted(
            range(len(chunks)), key=lambda i: (chunks[i].doc_id, min(chunks[i].pages or (0,)), i)
        )
        items: dict[int, str | None] = {}
        start = 0
        while start < len(order):
            end = start
            doc = chunks[order[start]].doc_id
            while end < len(order) and chunks[order[end]].doc_id == doc:
                end += 1
            block = order[start:end]
            for i, label in zip(block, _detect_items([chunks[i] for i in block]), strict=True):
                items[i] = label
            start = end
        self.chunks: list[ChunkRecord] = [
            ChunkRecord(c.chunk_id, c.doc_id, c.text, c.pages, c.kind, items[i], c.access)
            for i, c in enumerate(chunks)
        ]
        self.labelled: list[int] = [
            i for i, c in enumerate(self.chunks) if c.access is not None and c.access.restricts
        ]
        self.ids: list[str] = [c.chunk_id for c in self.chunks]
        self.pos: dict[str, int] = {cid: i for i, cid in enumerate(self.ids)}
        if len(self.pos) != len(self.ids):
            raise DataError("duplicate chunk_id in the corpus")
        self.doc_of = np.array([self._doc_pos[c.doc_id] for c in self.chunks], dtype=np.int32)
        self.statement: list[str | None] = self._statements(page_texts)
        self._statement_codes = {name: i + 1 for i, (name, _) in enumerate(_STATEMENT_TITLES)}
        self.statement_code = np.array(
            [self._statement_codes.get(s, 0) if s else 0 for s in self.statement], dtype=np.int8
        )
        self.version = (
            corpus_version
            or sha256_bytes(
                "\n".join(
                    f"{c.chunk_id}\t{sha256_bytes(c.text.encode())}" for c in self.chunks
                ).encode()
            )[:16]
        )
        self._mask_cache: dict[dt.date | None, BoolArray] = {}
        self._bm25: Any = None

    # -- loading ------------------------------------------------------------------------------

    @classmethod
    def load(cls, corpus_dir: str | Path, **kwargs: Any) -> FilingsIndex:
        """Read `chunks.jsonl`, `documents.jsonl` (optional), `pages.jsonl` (optional) and the
        corpus hash from `manifest.json` (optional) in `corpus_dir`."""

        root = Path(corpus_dir)
        chunks_path = root / "chunks.jsonl"
        if not chunks_path.exists():
            raise DataError("no chunks.jsonl in the corpus directory", file=chunks_path)
        chunks = read_chunks(chunks_path)
        docs: list[dict[str, Any]] = []
        if (root / "documents.jsonl").exists():
            docs = [row for _, row in iter_jsonl(root / "documents.jsonl")]
        pages: dict[tuple[str, int], str] | None = None
        if (root / "pages.jsonl").exists():
            pages = {}
            for _, row in iter_jsonl(root / "pages.jsonl"):
                if "doc_id" in row and "page" in row and "text" in row:
                    pages[(str(row["doc_id"]), int(row["page"]))] = str(row["text"])
        version = kwargs.pop("corpus_version", None)
        manifest = root / "manifest.json"
        if version is None and manifest.exists():
            meta = json_loads(manifest.read_text(encoding="utf-8"), manifest)
            version = meta.get("corpus_hash") or meta.get("hash") or meta.get("version")
        return cls(chunks, docs, corpus_version=version, page_texts=pages, **kwargs)

    # -- features -----------------------------------------------------------------------------

    def _statements(self, page_texts: Mapping[tuple[str, int], str] | None) -> list[str | None]:
        cache: dict[tuple[str, int], str | None] = {}
        joined: dict[tuple[str, int], list[str]] = {}
        if page_texts is None:
            for c in self.chunks:
                if c.pages:
                    joined.setdefault((c.doc_id, c.pages[0]), []).append(c.text)
        out: list[str | None] = []
        for c in self.chunks:
            if not c.pages:
                out.append(None)
                continue
            key = (c.doc_id, c.pages[0])
            if key not in cache:
                text = page_texts.get(key) if page_texts is not None else None
                if text is None:
                    text = "\n".join(joined.get(key, [c.text]))
                cache[key] = detect_statement(text)
            out.append(cache[key])
        return out

    @property
    def bm25(self) -> Any:
        if self._bm25 is None:
            import bm25s

            retriever = bm25s.BM25()
            retriever.index(
                [tokenize(c.text) or ["__empty__"] for c in self.chunks], show_progress=False
            )
            self._bm25 = retriever
        return self._bm25

    def bm25_scores(self, text: str, mask: BoolArray | None = None) -> FloatArray:
        tokens = [t for t in tokenize(text) if t in self.bm25.vocab_dict]
        if not tokens:
            return np.zeros(len(self.ids), dtype=np.float32)
        weight = None if mask is None else mask.astype(np.float32)
        scores = np.asarray(self.bm25.get_scores(tokens, weight_mask=weight), dtype=np.float32)
        if mask is not None:
            scores = np.where(mask, scores, np.float32(0.0))
        return scores

    def statement_mask(self, statements: Iterable[str]) -> BoolArray:
        """Chunks on a primary-statement page of one of `statements`."""
        codes = [self._statement_codes[s] for s in statements if s in self._statement_codes]
        return np.isin(self.statement_code, np.array(codes, dtype=np.int8))

    # -- filters ------------------------------------------------------------------------------

    def access_mask(
        self, principal: PrincipalLike | None, as_of: dt.date | None
    ) -> BoolArray | None:
        """Chunks `principal` (None: the public) may see at `as_of` by their access labels;
        None when every chunk is allowed (nothing to filter)."""
        denied = [i for i in self.labelled if not allows(self.chunks[i].access, principal, as_of)]
        if not denied:
            return None
        mask = np.ones(len(self.ids), dtype=np.bool_)
        mask[denied] = False
        return mask

    def visible_mask(self, as_of: dt.date | None) -> BoolArray:
        """Chunks visible at `as_of`: filing accepted by then, and not superseded for its item."""
        cached = self._mask_cache.get(as_of)
        if cached is not None:
            return cached
        doc_ok = np.array([self._doc_visible(d, as_of) for d in self.docs], dtype=np.bool_)
        mask = doc_ok[self.doc_of].copy()
        # per-item supersession by visible amendments
        hidden: dict[int, set[str]] = {}
        for d_idx, doc in enumerate(self.docs):
            if not doc.amends or not doc_ok[d_idx] or not doc.amended_items:
                continue
            target = self._doc_pos.get(doc.amends)
            if target is None:
                continue
            items: set[str] = set()
            for spec in doc.amended_items:
                items |= parse_item_spec(spec)
            hidden.setdefault(target, set()).update(items)
        if hidden:
            for i, c in enumerate(self.chunks):
                gone = hidden.get(int(self.doc_of[i]))
                if gone and c.item is not None and c.item in gone:
                    mask[i] = False
        self._mask_cache[as_of] = mask
        return mask

    def _doc_visible(self, doc: DocInfo, as_of: dt.date | None) -> bool:
        if as_of is None:
            return True
        if doc.accepted_at is None:
            return self.undated == "visible"
        return doc.accepted_at <= as_of

    def select_docs(
        self, plan: QueryPlan, as_of: dt.date | None, *, latest_when_undated: bool = False
    ) -> Selection:
        """Filings for the plan's companies, forms and periods (each relaxed when it empties).

        With `latest_when_undated`, a question that names a company but no period is read as
        "currently": each company's latest fiscal year visible at as_of.
        """
        visible = {i for i, d in enumerate(self.docs) if self._doc_visible(d, as_of)}
        sel = Selection(docs=None)
        pool = visible
        if plan.entities:
            keys = set(plan.entity_keys)
            chosen = {i for i in pool if self.docs[i].company_key in keys}
            if chosen:
                pool = chosen
                sel.applied.append("entity")
            else:
                sel.relaxed.append("entity: no visible filing of " + ", ".join(sorted(keys)))
        if plan.forms:
            forms = set(plan.forms)
            chosen = {i for i in pool if (self.docs[i].form or "").split("/")[0] in forms}
            if chosen:
                pool = chosen
                sel.applied.append("form")
            else:
                sel.relaxed.append("form")
        if plan.periods:
            by_company: dict[str | None, set[int]] = {}
            for i in pool:
                by_company.setdefault(self.docs[i].company_key, set()).add(i)
            chosen = set()
            for docs in by_company.values():
                chosen |= self._period_docs(plan, docs)
            if chosen:
                pool = chosen
                sel.applied.append("period")
            else:
                sel.relaxed.append("period")
        elif latest_when_undated and "entity" in sel.applied:
            latest: dict[str | None, int] = {}
            for i in pool:
                fy = self.docs[i].fiscal_year
                key = self.docs[i].company_key
                if fy is not None and fy > latest.get(key, -1):
                    latest[key] = fy
            chosen = {
                i for i in pool if self.docs[i].fiscal_year == latest.get(self.docs[i].company_key)
            }
            if chosen:
                pool = chosen
                sel.applied.append("period: latest")
        sel.docs = pool if sel.applied else None
        return sel

    def _period_docs(self, plan: QueryPlan, docs: set[int]) -> set[int]:
        """One company's filings that the plan's periods denote (see module docs)."""
        infos = {i: self.docs[i] for i in docs if self.docs[i].fiscal_year is not None}
        if not infos:
            return set()
        cal = next(iter(infos.values())).calendar
        targets: list[tuple[int, int | None, bool]] = []  # (fy, quarter, from a date)
        for ref in plan.periods:
            if ref.relative == "latest_year":
                annual_years = [
                    d.fiscal_year for d in infos.values() if d.is_annual and d.fiscal_year
                ]
                if annual_years:
                    targets.append((max(annual_years), None, False))
                continue
            if ref.relative == "latest_quarter":
                pairs = [
                    (d.fiscal_year, d.fiscal_quarter or 4)
                    for d in infos.values()
                    if d.fiscal_year is not None
                ]
                if pairs:
                    last_year, last_q = max(pairs)
                    targets.append((last_year, last_q, False))
                continue
            if ref.fiscal_year is None and ref.on_date is None and ref.quarter is not None:
                years = [
                    d.fiscal_year
                    for d in infos.values()
                    if d.fiscal_quarter == ref.quarter and d.fiscal_year
                ]
                if years:
                    targets.append((max(years), ref.quarter, False))
                continue
            for fy, q in ref.fiscal_quarters(cal):
                targets.append((fy, q, ref.on_date is not None))
        if not targets:
            return set()

        def matches(fy: int, q: int | None, dated: bool) -> set[int]:
            same_year = {i for i, d in infos.items() if d.fiscal_year == fy}
            if dated:
                return same_year
            if q is None:
                annual = {i for i in same_year if infos[i].is_annual}
                return annual or same_year
            exact = {
                i
                for i in same_year
                if infos[i].fiscal_quarter == q and infos[i].form not in _ANNUAL_FORMS
            }
            if exact:
                return exact
            if q == 4:
                annual = {i for i in same_year if infos[i].is_annual}
                if annual:
                    return annual
            return same_year

        hit_years = sorted({fy for fy, q, dated in targets if matches(fy, q, dated)})
        if hit_years:
            latest = hit_years[-1]
            # the latest filing carries two or three years of comparatives; older years need
            # their own filing
            keep_years = {latest} | {y for y in hit_years if latest - y >= 3}
            out: set[int] = set()
            for fy, q, dated in targets:
                if fy in keep_years:
                    out |= matches(fy, q, dated)
            return out
        # no filing for any named period: the nearest year (earlier for forward-looking
        # questions, which earlier filings discuss; otherwise later, which carries comparatives)
        years = sorted({d.fiscal_year for d in infos.values() if d.fiscal_year is not None})
        wanted = [fy for fy, _, _ in targets]
        lo, hi = min(wanted), max(wanted)
        earlier = [y for y in years if y < lo]
        later = [y for y in years if y > hi]
        pick: int | None
        if plan.forward_looking:
            pick = earlier[-1] if earlier else (later[0] if later else None)
        else:
            cands = ([later[0]] if later else []) + ([earlier[-1]] if earlier else [])
            pick = min(cands, key=lambda y: (min(abs(y - lo), abs(y - hi)), -y)) if cands else None
        if pick is None:
            return set()
        annual = {i for i, d in infos.items() if d.fiscal_year == pick and d.is_annual}
        return annual or {i for i, d in infos.items() if d.fiscal_year == pick}

    def doc_mask(self, docs: set[int] | None) -> BoolArray:
        if docs is None:
            return np.ones(len(self.ids), dtype=np.bool_)
        allowed = np.zeros(len(self.docs), dtype=np.bool_)
        allowed[list(docs)] = True
        return allowed[self.doc_of]

    def doc(self, chunk_id: str) -> DocInfo:
        return self.docs[int(self.doc_of[self.pos[chunk_id]])]


def doc_infos(rows: list[dict[str, Any]]) -> list[DocInfo]:
    """documents.jsonl rows -> DocInfo, each company's fiscal calendar inferred from its annual
    filings and missing fiscal years read off the period end in that calendar."""
    return _with_calendars(rows)


def _with_calendars(rows: list[dict[str, Any]]) -> list[DocInfo]:
    """DocInfo per row; each company's calendar naming inferred from its annual filings."""
    examples: dict[str, list[tuple[int, dt.date]]] = {}
    fye: dict[str, str | None] = {}
    for row in rows:
        key = company_key(str(row.get("company") or ""))
        fye.setdefault(key, row.get("fiscal_year_end"))
        fy, end = row.get("fiscal_year"), _date(row.get("period_end"))
        if fy is not None and end is not None and row.get("fiscal_quarter") in (None, 4):
            examples.setdefault(key, []).append((int(fy), end))
    calendars = {key: FiscalCalendar.infer(fye.get(key), examples.get(key, [])) for key in fye}
    out: list[DocInfo] = []
    for line, row in enumerate(rows, 1):
        try:
            ckey = company_key(str(row.get("company") or "")) or None
            cal = calendars.get(ckey or "", FiscalCalendar())
            fy = row.get("fiscal_year")
            fq = row.get("fiscal_quarter")
            period_end = _date(row.get("period_end"))
            if fy is None and period_end is not None:
                found = cal.period_ending(period_end)
                if found is not None:
                    fy = found[0]
                    fq = (
                        fq
                        if fq is not None
                        else (None if str(row.get("form", "")).startswith("10-K") else found[1])
                    )
            out.append(
                DocInfo(
                    doc_id=str(row["doc_id"]),
                    company=row.get("company"),
                    company_key=ckey,
                    form=row.get("form"),
                    fiscal_year=int(fy) if fy is not None else None,
                    fiscal_quarter=int(fq) if fq is not None else None,
                    period_end=period_end,
                    accepted_at=_date(row.get("accepted_at")) or _date(row.get("version_date")),
                    amends=row.get("amends"),
                    amended_items=tuple(row.get("amended_items") or ()),
                    calendar=cal,
                    doc_type=_doc_type(row),
                )
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise DataError(
                f"bad document metadata: {exc}", file="documents.jsonl", line=line
            ) from exc
    return out


def _doc_type(row: Mapping[str, Any]) -> str | None:
    meta = row.get("metadata")
    kind = (meta.get("doc_type") if isinstance(meta, Mapping) else None) or row.get("doc_type")
    return str(kind) if kind else None


def read_chunks(path: Path) -> list[ChunkRecord]:
    """chunks.jsonl -> ChunkRecord, validated by the shared chunk-table reader."""
    return [
        ChunkRecord(
            chunk_id=c.chunk_id,
            doc_id=c.doc_id,
            text=c.text,
            pages=tuple(c.pages),
            kind=c.kind or "prose",
            item=c.extra.get("item") or None,
            access=c.access,
        )
        for c in load_chunks(path).require_chunks("index")
    ]
