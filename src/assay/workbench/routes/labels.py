"""Reading and writing labels through the JSON API: a task's view, its labels (as far as the
blind rules let the caller see them), one label, submitting a label (also served by the app's
fast path, with the same answers) and flagging an item."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from assay.workbench import service as svc
from assay.workbench.routes._web import FlagIn, LabelId, LabelIn, TaskId, web

router = APIRouter()


@router.get("/api/tasks/{task_id}")
async def api_task(request: Request, task_id: TaskId) -> dict[str, Any]:
    w = web(request)
    user = (await run_in_threadpool(w.session_of, request)).user
    view = await run_in_threadpool(svc.task_view, w.db, user, task_id, run_sql=False)
    await view.arun_sql(f"user:{user.id}")  # a SQL task's queries: on the SQL pool
    return view.to_dict()


@router.get("/api/tasks/{task_id}/labels")
def api_task_labels(request: Request, task_id: TaskId) -> dict[str, Any]:
    w = web(request)
    labels = svc.list_labels(w.db, w.session_of(request).user, task_id)
    return {"labels": [lab.to_dict() for lab in labels]}


@router.get("/api/labels/{label_id}")
def api_label(request: Request, label_id: LabelId) -> dict[str, Any]:
    w = web(request)
    return svc.get_label(w.db, w.session_of(request).user, label_id).to_dict()


@router.post("/api/labels", response_class=JSONResponse)
async def api_submit(request: Request, body: LabelIn) -> JSONResponse:
    w = web(request)
    return await w.submit_response(w.checked_api(request), body)  # session: by the API guard


@router.post("/api/flags")
def api_flag(request: Request, body: FlagIn) -> dict[str, Any]:
    w = web(request)
    info = w.checked_api(request)
    return {"flag_id": svc.add_flag(w.db, info.user, body.item_id, body.flag, body.note)}
