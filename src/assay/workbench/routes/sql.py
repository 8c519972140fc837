"""The SQL task kind's one route of its own: run an edited gold query read-only
(`assay.workbench.service.sql.run_gold_edit`). Its page, labels and adjudication go through the
routes every kind shares."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import Field

from assay.workbench.routes._web import TaskId, _NoNul, web
from assay.workbench.service.sql import gold_edit_plan, gold_edit_result
from assay.workbench.sqlpool import sql_pool

router = APIRouter()


class SqlRunIn(_NoNul):
    query: str = Field(min_length=1, max_length=20000)


@router.post("/api/tasks/{task_id}/sql/run")
async def api_sql_run(request: Request, task_id: TaskId, body: SqlRunIn) -> dict[str, Any]:
    w = web(request)
    info = w.checked_api(request)
    entry, plan = await run_in_threadpool(gold_edit_plan, w.db, info.user, task_id, body.query)
    # the query waits and runs on the SQL pool's own threads and workers, not the pages'
    results = await sql_pool().arun(f"user:{info.user.id}", plan.database, plan.queries)
    return gold_edit_result(entry, results)
