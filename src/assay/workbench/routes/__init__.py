"""The workbench's routes, one router per concern: `auth` (login, logout, who am I), `queue`
(work sessions, claiming tasks), `labels` (task views, labels, submissions, flags),
`adjudication` (queue, final labels, agreement, guidelines), `search` (the corpus), `admin`
(accounts, budget), `sql` (running an edited gold query) and `pages` (home, task pages, guidelines, API docs). Each route is a thin
wrapper over `assay.workbench.service`; what they share (the store, the policy, the templates,
the session and CSRF checks) is the `Web` context in `_web`, which `create_app` builds once."""

from __future__ import annotations

from fastapi import APIRouter

from assay.workbench.routes import adjudication, admin, auth, labels, pages, queue, search, sql

__all__ = ["ROUTERS"]

ROUTERS: tuple[APIRouter, ...] = (
    auth.router,
    pages.router,
    queue.router,
    labels.router,
    search.router,
    adjudication.router,
    admin.router,
    sql.router,
)
