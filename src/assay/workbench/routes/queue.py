"""Getting work: starting a timed work session, the work page of a task kind, and claiming the
next task (`POST /work/{kind}` from a page, `POST /api/next/{kind}` from the API; the latter is
served by the app's fast path too, with the same answers)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.workbench import service as svc
from assay.workbench.auth import SessionInfo
from assay.workbench.models import TASK_KINDS
from assay.workbench.routes._web import Web, web

router = APIRouter()


@router.post("/session/start")
async def session_start(request: Request) -> Response:
    w = web(request)
    info = await w.checked(request)
    form = await request.form()
    kind = str(form.get("kind", "judge"))
    if kind not in TASK_KINDS:
        raise HTTPException(400, f"kind: must be one of {', '.join(TASK_KINDS)}")
    raw = str(form.get("minutes", "50")).strip() or "50"
    if not raw.isdigit() or len(raw) > 4:
        raise HTTPException(400, "minutes: a whole number of minutes, 5 to 240")
    await run_in_threadpool(svc.start_work_session, w.db, info.user, kind, int(raw))
    return await run_in_threadpool(_claim_and_go, w, request, info, kind)


def _claim_and_go(w: Web, request: Request, info: SessionInfo, kind: str) -> Response:
    task_id = svc.claim_next(w.db, info.user, kind)
    if task_id is None:
        return w.page(request, "empty.html", info, kind=kind)
    return RedirectResponse(f"/task/{task_id}", status_code=303)


@router.get("/work/{kind}")
def work(request: Request, kind: str) -> Response:
    """Your unfinished task of this kind, if any; else a page whose button (a POST) claims
    the next one. Looking never claims anything."""
    w = web(request)
    info = w.session_of(request)
    if kind not in TASK_KINDS:
        raise HTTPException(404)
    task_id = svc.open_task(w.db, info.user, kind)
    if task_id is not None:
        return RedirectResponse(f"/task/{task_id}", status_code=303)
    counts = svc.queue_counts(w.db, info.user)
    return w.page(request, "work.html", info, kind=kind, count=counts[kind])


@router.post("/work/{kind}")
async def work_next(request: Request, kind: str) -> Response:
    w = web(request)
    info = await w.checked(request)
    if kind not in TASK_KINDS:
        raise HTTPException(404)
    return await run_in_threadpool(_claim_and_go, w, request, info, kind)


@router.post("/api/next/{kind}", response_class=JSONResponse)
async def api_next(request: Request, kind: str) -> JSONResponse:
    """Claim the next task of a kind (your unfinished one first)."""
    w = web(request)
    return await w.claim_response(w.session_of(request), kind)  # session: by the API guard
