"""The admin page (accounts, store counts, measured minutes and the labelling budget) and
adding an account from it."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import func, select
from starlette.concurrency import run_in_threadpool

from assay.errors import UsageError
from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.models import ROLES, Item, Label, Task, User
from assay.workbench.routes._web import web

router = APIRouter()


@router.get("/admin", response_class=HTMLResponse)
def admin_page(
    request: Request,
    msg: str = "",
    rows: Annotated[int, Query(ge=0, le=10**7)] = 200,
    overlap: Annotated[float, Query(ge=0, le=1)] = 0.5,
    adjudication_minutes: Annotated[float, Query(ge=0, le=600)] = 10.0,
) -> Response:
    w = web(request)
    info = w.session_of(request)
    w.need(info, "admin")
    measured = svc.measured_time(w.db)
    budget = svc.plan_budget(
        rows, overlap=overlap, adjudication_minutes=adjudication_minutes, measured=measured
    )
    with w.db.read() as s:
        users = list(s.scalars(select(User).order_by(User.username)))
        stats = {
            "items": s.scalar(select(func.count()).select_from(Item)),
            "tasks": s.scalar(select(func.count()).select_from(Task)),
            "labels": s.scalar(select(func.count()).select_from(Label)),
        }
    return w.page(
        request,
        "admin.html",
        info,
        users=users,
        stats=stats,
        roles=ROLES,
        msg=msg,
        measured=measured,
        budget=budget,
    )


@router.post("/admin/users")
async def admin_add_user(request: Request) -> Response:
    w = web(request)
    info = await w.checked(request)
    w.need(info, "admin")
    form = await request.form()
    domains = [d.strip() for d in str(form.get("domains", "")).split(",") if d.strip()]
    try:
        await run_in_threadpool(
            create_user,
            w.db,
            str(form.get("username", "")),
            str(form.get("password", "")),
            str(form.get("role", "annotator")),
            domains=domains,
        )
        msg = "User added."
    except UsageError as exc:
        msg = str(exc)
    return RedirectResponse(f"/admin?msg={quote(msg)}", status_code=303)
