"""The corpus as an expert may see it: full-text search filtered by company, form and period
(`GET /api/search`), and one chunk by id (`GET /api/chunks/{chunk_id}`). Both show only what the
caller's own access opens (`assay.workbench.service.access`); a chunk they may not see is a 404,
the same answer as a chunk that does not exist."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from assay.workbench import service as svc
from assay.workbench.routes._web import has_nul, refuse_bad_text, web

router = APIRouter()


@router.get("/api/search")
def api_search(
    request: Request,
    q: str = "",
    company: str = "",
    form: str = "",
    period: str = "",
    limit: int = 30,
) -> dict[str, Any]:
    w = web(request)
    info = w.session_of(request)
    refuse_bad_text((("q", q), ("company", company), ("form", form), ("period", period)))
    hits = svc.search_chunks(
        w.db,
        q,
        company=company or None,
        form=form or None,
        period=period or None,
        limit=limit,
        viewer=info.user,
    )
    return {"q": q, "hits": [h.to_dict() for h in hits]}


@router.get("/api/chunks/{chunk_id:path}")
def api_chunk(request: Request, chunk_id: str) -> dict[str, Any]:
    """One chunk with its document's fields and its access labels; 404 when it does not exist
    or the caller may not see it."""
    w = web(request)
    info = w.session_of(request)
    if has_nul(chunk_id) or len(chunk_id) > 300:
        raise svc.NotFound(chunk_id[:40])
    return svc.get_chunk(w.db, info.user, chunk_id).to_dict()
