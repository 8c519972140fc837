"""Adjudication: the queue and the adjudication page, final labels, the agreement panel and
guideline edits (all need the adjudicator role)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, Response

from assay.workbench import service as svc
from assay.workbench.agreement import agreement_panel
from assay.workbench.routes._web import AdjudicationIn, GuidelineIn, TaskId, web

router = APIRouter()


@router.get("/adjudicate", response_class=HTMLResponse)
def adjudicate_list(request: Request) -> Response:
    w = web(request)
    info = w.session_of(request)
    w.need(info, "adjudicator")
    return w.page(
        request, "adjudicate_list.html", info, queue=svc.adjudication_queue(w.db, info.user)
    )


@router.get("/adjudicate/{task_id}", response_class=HTMLResponse)
async def adjudicate_page(request: Request, task_id: TaskId) -> Response:
    w = web(request)
    info = await run_in_threadpool(w.session_of, request)
    w.need(info, "adjudicator")
    view = await run_in_threadpool(svc.adjudication_view, w.db, info.user, task_id, run_sql=False)
    await view.task.arun_sql(f"user:{info.user.id}")  # a SQL task's queries: on the SQL pool
    return await run_in_threadpool(
        lambda: w.page(
            request, "adjudicate.html", info, view=view, facets=svc.facets(w.db, info.user)
        )
    )


@router.get("/agreement", response_class=HTMLResponse)
def agreement_page(request: Request) -> Response:
    w = web(request)
    info = w.session_of(request)
    w.need(info, "adjudicator")
    return w.page(request, "agreement.html", info, panel=agreement_panel(w.db))


@router.get("/api/adjudication-queue")
def api_adj_queue(request: Request) -> dict[str, Any]:
    w = web(request)
    info = w.session_of(request)
    w.need(info, "adjudicator")
    return {"queue": [q.to_dict() for q in svc.adjudication_queue(w.db, info.user)]}


@router.post("/api/adjudications")
def api_adjudicate(request: Request, body: AdjudicationIn) -> dict[str, Any]:
    w = web(request)
    info = w.checked_api(request)
    w.need(info, "adjudicator")
    return svc.adjudicate(
        w.db,
        info.user,
        body.task_id,
        body.payload,
        root_cause=body.root_cause,
        note=body.note,
        hard_case=body.hard_case,
        guideline_change=body.guideline_change,
        guideline_text=body.guideline_text,
    ).to_dict()


@router.get("/api/agreement")
def api_agreement(request: Request) -> dict[str, Any]:
    w = web(request)
    w.need(w.session_of(request), "adjudicator")
    return agreement_panel(w.db)


@router.post("/api/guidelines")
def api_guidelines(request: Request, body: GuidelineIn) -> dict[str, Any]:
    w = web(request)
    info = w.checked_api(request)
    w.need(info, "adjudicator")
    return {"version": svc.edit_guidelines(w.db, info.user, body.text, body.change)}
