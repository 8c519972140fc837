"""The pages that are neither work nor adjudication: home (your queues), a task's page, the
guidelines, and the API's own documentation (`/api/docs`, `/api/openapi.json`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, Response

from assay.workbench import service as svc
from assay.workbench.auth import SessionInfo
from assay.workbench.payloads import PAYLOAD_MODELS
from assay.workbench.routes._web import TaskId, Web, web

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
def home(request: Request) -> Response:
    w = web(request)
    info = w.session_of(request)
    counts = svc.queue_counts(w.db, info.user)
    n_adj = len(svc.adjudication_queue(w.db, info.user)) if info.user.can("adjudicator") else 0
    return w.page(request, "home.html", info, counts=counts, n_adjudication=n_adj)


@router.get("/task/{task_id}", response_class=HTMLResponse)
async def task_page(request: Request, task_id: TaskId) -> Response:
    w = web(request)
    info = await run_in_threadpool(w.session_of, request)
    try:
        view = await run_in_threadpool(svc.task_view, w.db, info.user, task_id, run_sql=False)
    except svc.NotFound:
        return await run_in_threadpool(_missing_task, w, request, info)
    await view.arun_sql(f"user:{info.user.id}")  # a SQL task's queries: on the SQL pool
    return await run_in_threadpool(_task_page, w, request, info, view)


def _missing_task(w: Web, request: Request, info: SessionInfo) -> Response:
    resp = w.page(request, "empty.html", info, kind=None)
    resp.status_code = 404
    return resp


def _task_page(w: Web, request: Request, info: SessionInfo, view: svc.TaskView) -> Response:
    return w.page(
        request, f"task_{view.kind}.html", info, view=view, facets=svc.facets(w.db, info.user)
    )


@router.get("/guidelines", response_class=HTMLResponse)
def guidelines_page(request: Request) -> Response:
    w = web(request)
    info = w.session_of(request)
    return w.page(request, "guidelines.html", info, versions=svc.guidelines(w.db, info.user))


def openapi_schema(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI schema with every label payload's schema added (they are free-form
    `payload` objects in the routes, checked by kind)."""
    if app.openapi_schema is None:
        schema = app.openapi()
        comps = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in PAYLOAD_MODELS.values():
            js = model.model_json_schema(ref_template="#/components/schemas/{model}")
            comps.update(js.pop("$defs", {}))
            comps[model.__name__] = js
        app.openapi_schema = schema
    return app.openapi_schema


@router.get("/api/openapi.json", include_in_schema=False)
def api_openapi(request: Request) -> dict[str, Any]:
    web(request).session_of(request)
    return openapi_schema(request.app)


@router.get("/api/docs", response_class=HTMLResponse, include_in_schema=False)
def api_docs(request: Request) -> Response:
    w = web(request)
    info = w.session_of(request)
    schema = openapi_schema(request.app)
    comps = schema["components"]["schemas"]
    routes = []
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            body_ref = (
                op.get("requestBody", {})
                .get("content", {})
                .get("application/json", {})
                .get("schema", {})
                .get("$ref", "")
            )
            routes.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "summary": op.get("description") or op.get("summary", ""),
                    "params": [
                        {
                            "name": p["name"],
                            "in": p["in"],
                            "required": p.get("required", False),
                            "type": _type_of(p.get("schema", {})),
                        }
                        for p in op.get("parameters", [])
                    ],
                    "body": body_ref.rsplit("/", 1)[-1] or None,
                }
            )
    models = {
        name: _fields(comps[name])
        for name in sorted(comps)
        if "properties" in comps[name] and not name.startswith(("HTTPValidation", "Validation"))
    }
    return w.page(
        request, "api_docs.html", info, routes=routes, models=models, kinds=PAYLOAD_MODELS
    )


def _type_of(schema: dict[str, Any]) -> str:
    """A short type for people: "integer (1 to 2147483647)", "pass | fail", "EvidencePayload"."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "enum" in schema:
        return " | ".join(str(x) for x in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_type_of(x) for x in schema[key])
    t = str(schema.get("type", "any"))
    if t == "array":
        return f"list of {_type_of(schema.get('items', {}))}"
    if t == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {_type_of(schema['additionalProperties'])}"
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if lo is not None or hi is not None:
        t += f" ({lo if lo is not None else '...'} to {hi if hi is not None else '...'})"
    if schema.get("maxLength") is not None:
        t += f" (at most {schema['maxLength']} characters)"
    return t


def _fields(schema: dict[str, Any]) -> list[dict[str, Any]]:
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "type": _type_of(prop),
            "required": name in required,
            "default": prop.get("default"),
            "description": prop.get("description", ""),
        }
        for name, prop in schema.get("properties", {}).items()
    ]
