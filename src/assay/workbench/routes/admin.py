"""The admin page (accounts with their access, store counts, measured minutes and the labelling
budget), adding an account from it, and setting an account's access (groups and clearance)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import func, select
from starlette.concurrency import run_in_threadpool

from assay.corpus import TIERS
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
        tiers=TIERS,
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
            groups=_groups(str(form.get("groups", ""))),
            clearance=str(form.get("clearance", "public")),
        )
        msg = "User added."
    except UsageError as exc:
        msg = str(exc)
    return RedirectResponse(f"/admin?msg={quote(msg)}", status_code=303)


def _groups(text: str) -> list[str]:
    return [g.strip() for g in text.split(",") if g.strip()]


@router.post("/admin/users/access")
async def admin_set_access(request: Request) -> Response:
    """Set an account's access groups and clearance (replacing the old ones)."""
    w = web(request)
    info = await w.checked(request)
    w.need(info, "admin")
    form = await request.form()
    try:
        got = await run_in_threadpool(
            svc.set_user_access,
            w.db,
            str(form.get("username", "")),
            groups=_groups(str(form.get("groups", ""))),
            clearance=str(form.get("clearance", "public")),
        )
        msg = f"Access of {got.username}: groups {', '.join(got.groups) or 'none'}, "
        msg += f"clearance {got.clearance}."
        if got.unmatched:
            msg += f" No access label names the group(s) {', '.join(got.unmatched)}."
    except UsageError as exc:
        msg = str(exc)
    return RedirectResponse(f"/admin?msg={quote(msg)}", status_code=303)
