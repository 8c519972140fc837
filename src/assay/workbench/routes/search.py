"""Full-text search of the corpus, filtered by company, form and period (`GET /api/search`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request

from assay.workbench import service as svc
from assay.workbench.routes._web import has_nul, web

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
    w.session_of(request)
    for field, value in (("q", q), ("company", company), ("form", form), ("period", period)):
        if has_nul(value):
            raise HTTPException(422, f"{field}: must not contain NUL characters")
    hits = svc.search_chunks(
        w.db, q, company=company or None, form=form or None, period=period or None, limit=limit
    )
    return {"q": q, "hits": [h.to_dict() for h in hits]}
