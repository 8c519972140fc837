"""Full-text search over the corpus, with filters by company, form and fiscal year."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import Float, String, and_, func, select, text

from assay.workbench.db import Database
from assay.workbench.models import Chunk, Document, User
from assay.workbench.service._common import ChunkView, NotFound, chunk_view
from assay.workbench.service.access import visible_to

__all__ = ["Facets", "facets", "get_chunk", "search_chunks"]


@dataclass(frozen=True)
class Facets:
    """The values the search filters offer."""

    companies: list[str]
    forms: list[str]
    periods: list[str]

    def to_dict(self) -> dict[str, list[str]]:
        return {"companies": self.companies, "forms": self.forms, "periods": self.periods}


_TOKEN = re.compile(r"[\w$%.]+", re.UNICODE)


def _fts_terms(q: str) -> list[str]:
    return [t.strip(".") for t in _TOKEN.findall(q) if t.strip(".")][:20]


def search_chunks(
    db: Database,
    q: str,
    *,
    company: str | None = None,
    form: str | None = None,
    period: str | None = None,
    limit: int = 30,
    viewer: User | None = None,
) -> list[ChunkView]:
    """Full-text search over the corpus (SQLite FTS5 with BM25, PostgreSQL tsvector with
    ts_rank), filtered by company and form (any case) and fiscal year (`period`, e.g. "2023",
    "FY2023" or "FY23").
    All terms must match; when nothing does, any term may. Ties break on chunk id. Only chunks
    the `viewer` may see come back (`assay.workbench.service.access`; no viewer: the public,
    who sees no restricted chunk): a hidden chunk is neither a hit nor a snippet."""
    terms = _fts_terms(q)
    filters = [visible_to(Chunk.access_key, viewer.id if viewer is not None else 0)]
    if company:
        filters.append(func.lower(Document.company) == company.strip().lower())
    if form:
        filters.append(func.upper(Document.form) == form.strip().upper())
    if period:
        year = _fiscal_year(period)
        if year is not None:
            filters.append(Document.fiscal_year == year)
    limit = max(1, min(limit, 100))
    with db.read() as s:
        base = select(Chunk, Document).outerjoin(Document, Document.doc_id == Chunk.doc_id)
        if filters:
            base = base.where(and_(*filters))
        if not terms:
            rows = s.execute(base.order_by(Chunk.doc_id, Chunk.seq).limit(limit)).all()
            return [chunk_view(c, d) for c, d in rows]
        for joiner in (" AND ", " OR "):
            # the ranking is a subquery joined to the filters (access, company, form, year), so
            # the best `limit` chunks the viewer may see and the filters admit come back, however
            # many better-ranked chunks the filters leave out
            if db.dialect == "sqlite":
                query = joiner.join('"' + t.replace('"', "") + '"' for t in terms)
                sql = (
                    "SELECT chunk_id AS fts_id, bm25(chunk_fts) AS r FROM chunk_fts "
                    "WHERE chunk_fts MATCH :q"
                )
            else:
                op = " & " if joiner == " AND " else " | "
                query = op.join("'" + t.replace("'", "").replace("\\", "") + "'" for t in terms)
                sql = (
                    "SELECT chunk_id AS fts_id, -ts_rank(tsv, to_tsquery('english', :q)) AS r "
                    "FROM chunks WHERE tsv @@ to_tsquery('english', :q)"
                )
            ranked = (
                text(sql).bindparams(q=query).columns(fts_id=String, r=Float).subquery("ranked")
            )
            rows = s.execute(
                base.join(ranked, ranked.c.fts_id == Chunk.chunk_id)
                .order_by(ranked.c.r, Chunk.chunk_id)
                .limit(limit)
            ).all()
            if rows:
                return [chunk_view(c, d, _snippet(c.text, terms)) for c, d in rows]
        return []


def _fiscal_year(period: str) -> int | None:
    """The fiscal year a period filter names: "2023", "FY2023", "fy 2023/24" -> 2023; two digits
    on their own ("FY23", "Q1 FY23") are this century's -> 2023; other digits name no year a
    filing has (nothing matches); no digit, no filter (None)."""
    four = re.search(r"\d{4}", period)
    if four:
        return int(four.group())
    two = re.search(r"(?<!\d)\d{2}(?!\d)", period)
    if two:
        return 2000 + int(two.group())
    digits = re.sub(r"\D", "", period)
    return int(digits) if digits else None


def _snippet(body: str, terms: list[str], width: int = 320) -> str:
    low = body.lower()
    pos = min((p for t in terms if (p := low.find(t.lower())) >= 0), default=0)
    start = max(0, pos - width // 3)
    out = body[start : start + width]
    return ("…" if start else "") + out + ("…" if start + width < len(body) else "")


def facets(db: Database, viewer: User | None = None) -> Facets:
    """The companies, forms and fiscal years of the documents the `viewer` may see (no viewer:
    the public): a restricted deal's company is not named to someone outside it."""
    seen = visible_to(Document.access_key, viewer.id if viewer is not None else 0)
    with db.read() as s:
        companies = sorted(
            x for x in s.scalars(select(Document.company).where(seen).distinct()) if x
        )
        forms = sorted(x for x in s.scalars(select(Document.form).where(seen).distinct()) if x)
        years = sorted(
            (str(x) for x in s.scalars(select(Document.fiscal_year).where(seen).distinct()) if x),
            reverse=True,
        )
    return Facets(companies=companies, forms=forms, periods=years)


def get_chunk(db: Database, viewer: User, chunk_id: str) -> ChunkView:
    """One chunk, when it exists and the viewer may see it; else NotFound (the same for both,
    so a restricted chunk's existence is not revealed)."""
    with db.read() as s:
        row = s.execute(
            select(Chunk, Document)
            .outerjoin(Document, Document.doc_id == Chunk.doc_id)
            .where(Chunk.chunk_id == chunk_id, visible_to(Chunk.access_key, viewer.id))
        ).first()
        if row is None:
            raise NotFound(f"chunk {chunk_id}")
        return chunk_view(row[0], row[1])
