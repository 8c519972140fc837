"""Text-to-SQL systems: the contract, the adapters, and the run that drives one over a dataset.

The contract: a system answers

    sql(question: str, *, schema: DatabaseSchema, as_of: datetime.date | None) -> reply

with the query as a string, None to decline (the schema cannot answer the question), or a dict
``{"sql": str | None, "dialect": str?}``. `as_of` is the entry's date (None when it has none): a
figure accepted after it must not count. `schema` carries the tables, the views and the
versioned glossary (`DatabaseSchema.to_prompt()` is its text for a model). An optional
``dialect`` attribute names the dialect of the queries (default: the entry's gold dialect), and
an optional ``identity()`` what makes its answers what they are.

Adapters (`load_sql_system(spec, **options)`):

``template``               the reference baseline (`assay.sql.baseline`), no network
``module:attr``            a Python object with ``sql(...)``, a callable taking the same
                           arguments, or a class built without arguments (``python:`` prefix
                           optional)
``http://...``             POSTs ``{"question", "schema" (as JSON), "as_of"}``; the reply is
                           ``{"sql": str | null, "dialect": str?}``
``openai`` / ``openai:MODEL``  an OpenAI-compatible chat model (`assay.chat.ChatClient`: base URL
                           from ``base_url`` or ``ASSAY_LLM_BASE_URL``, every reply cached in
                           the request cache), asked for one query in a ```sql block or
                           ``NO_ANSWER``

These systems are the ``sql`` kind of `assay.systems.kinds`: `assay.runner.run_system` (what
`assay run --system sql-SPEC` and `assay sql run` call) asks them every entry with `sql` gold
through `call_sql`, with the request cache, the journal and resume, the executors and the
binding of every run. Each row carries ``extra["sql"]`` (None when declined),
``extra["dialect"]`` and, in ``answer``, the same query or `REFUSAL_TEXT` (see
`assay.checks.sql`); it has no ``retrieved``.
"""

from __future__ import annotations

import datetime as dt
import importlib
import inspect
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from assay._io import dumps_canonical, sha256_bytes
from assay.cache import RequestCache, default_cache_path
from assay.chat import ChatClient
from assay.dataset import Entry
from assay.errors import AssayError, UsageError
from assay.runs import RunRow
from assay.sql.answers import REFUSAL_TEXT, SystemSql
from assay.sql.gold import database_path
from assay.sql.schema import DatabaseSchema, schema_path_for
from assay.systems.identity import package_hash
from assay.systems.kinds import CallContext
from assay.systems.protocol import SystemCallError

__all__ = [
    "HttpSqlSystem",
    "LlmSqlSystem",
    "SqlSystem",
    "SqlSystemError",
    "call_sql",
    "load_sql_system",
    "schema_for",
    "sql_inputs",
]


@runtime_checkable
class SqlSystem(Protocol):
    """Anything with ``sql(question, *, schema, as_of)`` (see the module docs)."""

    def sql(self, question: str, *, schema: DatabaseSchema, as_of: dt.date | None) -> Any: ...


class SqlSystemError(AssayError):
    """A text-to-SQL system failed on one entry (the message names it)."""


# ------------------------------------------------------------------------------ adapters


class _CallableSystem:
    def __init__(self, fn: Callable[..., Any], spec: str):
        self._fn = fn
        self.spec = spec
        # its code is the function's package (and this adapter's), as for any Python system
        self._assay_code = package_hash(__name__, getattr(fn, "__module__", None) or __name__)

    def identity(self) -> dict[str, Any]:
        return {"kind": "python", "spec": self.spec}

    def sql(self, question: str, *, schema: DatabaseSchema, as_of: dt.date | None) -> Any:
        return self._fn(question, schema=schema, as_of=as_of)


def _python_system(spec: str) -> Any:
    target = spec.removeprefix("python:")
    mod_name, _, attr = target.partition(":")
    if not mod_name or not attr:
        raise UsageError(f"{spec}: a Python system is module:attr")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as exc:
        raise UsageError(f"{spec}: cannot import {mod_name}: {exc}") from None
    try:
        obj: Any = mod
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise UsageError(f"{spec}: {mod_name} has no attribute {attr}") from None
    if inspect.isclass(obj):
        obj = obj()
    if callable(getattr(obj, "sql", None)):
        return obj
    if callable(obj):
        return _CallableSystem(obj, spec)
    raise UsageError(f"{spec}: neither a system with sql(question, *, schema, as_of) nor callable")


class HttpSqlSystem:
    """A text-to-SQL system behind an HTTP endpoint (module docs give the wire format)."""

    max_workers = 8  # the runner's default parallel calls, as for a retrieval HTTP system

    def __init__(self, url: str, *, timeout: float = 30.0, system_version: str | None = None):
        import httpx

        if timeout <= 0:
            raise UsageError("the timeout must be positive (seconds)")
        self.url = url
        self.system_version = system_version
        self._client = httpx.Client(timeout=timeout)

    def identity(self) -> dict[str, Any]:
        return {"kind": "http", "url": self.url, "system_version": self.system_version}

    def sql(self, question: str, *, schema: DatabaseSchema, as_of: dt.date | None) -> Any:
        import httpx

        body = {
            "question": question,
            "schema": schema.to_dict(),
            "as_of": None if as_of is None else as_of.isoformat(),
        }
        try:
            resp = self._client.post(self.url, json=body)
        except httpx.HTTPError as exc:
            raise SqlSystemError(f"{self.url}: {type(exc).__name__}: {exc}") from exc
        if resp.status_code != 200:
            raise SqlSystemError(f"{self.url} answered HTTP {resp.status_code}: {resp.text[:200]}")
        try:
            data = resp.json()
        except ValueError:
            raise SqlSystemError(f"{self.url} answered something that is not JSON") from None
        if not isinstance(data, dict) or "sql" not in data:
            raise SqlSystemError(f'{self.url}: the reply must be an object with an "sql" key')
        return data

    def close(self) -> None:
        self._client.close()


_SYSTEM_PROMPT = (
    "You translate analysts' questions into one read-only SQL query in the {dialect} dialect "
    "over the database below. Use the glossary's definitions for business terms. When the "
    "question gives a date ('as of'), only filings accepted on or before it count. Reply with "
    "the query alone in a ```sql block, or with NO_ANSWER when the schema cannot answer the "
    "question."
)
_NO_ANSWER = re.compile(r"\bNO_ANSWER\b")
_FENCE = re.compile(r"```(?:sql)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class LlmSqlSystem:
    """An OpenAI-compatible chat model asked for SQL; every reply is cached (`assay.chat`)."""

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        dialect: str = "duckdb",
        cache_dir: str | Path | None = None,
        max_tokens: int = 600,
        client: Any = None,
    ):
        self.dialect = dialect
        self.max_tokens = max_tokens
        self.client = client or ChatClient.from_env(
            base_url=base_url,
            model=model,
            cache=RequestCache(default_cache_path(cache_dir), namespace="chat"),
        )

    def identity(self) -> dict[str, Any]:
        return {
            "kind": "openai",
            "base_url": self.client.base_url,
            "model": self.client.model,
            "dialect": self.dialect,
            "prompt": sha256_bytes(_SYSTEM_PROMPT.encode())[:12],
        }

    def sql(self, question: str, *, schema: DatabaseSchema, as_of: dt.date | None) -> Any:
        user = schema.to_prompt() + "\n"
        if as_of is not None:
            user += f"As of: {as_of.isoformat()}\n"
        user += f"Question: {question}\n"
        reply = self.client.complete(
            [
                {"role": "system", "content": _SYSTEM_PROMPT.format(dialect=self.dialect)},
                {"role": "user", "content": user},
            ],
            max_tokens=self.max_tokens,
        )
        m = _FENCE.search(reply)
        if m is None and _NO_ANSWER.search(reply):
            return None
        return {"sql": (m.group(1) if m else reply).strip() or None, "dialect": self.dialect}


def load_sql_system(spec: str, **options: Any) -> Any:
    """A text-to-SQL system from a spec (module docs) and the adapter's options."""
    opts = {k: v for k, v in options.items() if v is not None}
    if spec == "template":
        from assay.sql.baseline import TemplateSqlSystem

        _no_options(spec, opts)
        return TemplateSqlSystem()
    if spec.startswith(("http://", "https://")):
        allowed = {"timeout", "system_version"}
        _no_options(spec, {k: v for k, v in opts.items() if k not in allowed})
        return HttpSqlSystem(spec, **{k: v for k, v in opts.items() if k in allowed})
    if spec == "openai" or spec.startswith("openai:"):
        model = spec.partition(":")[2] or opts.pop("model", None)
        allowed = {"base_url", "dialect", "cache_dir", "max_tokens"}
        _no_options(spec, {k: v for k, v in opts.items() if k not in allowed})
        return LlmSqlSystem(model=model, **{k: v for k, v in opts.items() if k in allowed})
    if ":" in spec:
        _no_options(spec, opts)
        return _python_system(spec)
    raise UsageError(
        f"unknown SQL system {spec!r}: use template, module:attr, http://..., or openai[:MODEL]"
    )


def _no_options(spec: str, opts: Mapping[str, Any]) -> None:
    if opts:
        raise UsageError(f"{spec}: takes no option {', '.join(sorted(opts))}")


# ------------------------------------------------------------------------------ the kind


_SCHEMAS: dict[tuple[str, int, int], tuple[DatabaseSchema, str]] = {}


def _schema(entry: Entry, base: str | Path | None) -> tuple[DatabaseSchema, str]:
    db = database_path(entry, base)
    sp = schema_path_for(db)
    if not sp.is_file():
        raise UsageError(
            f"entry {entry.id}: no schema beside {db} ({sp.name}); a text-to-SQL system "
            "is handed the schema"
        )
    st = sp.stat()
    key = (str(sp.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _SCHEMAS:
        schema = DatabaseSchema.load(sp)
        _SCHEMAS[key] = (schema, sha256_bytes(dumps_canonical(schema.to_dict()).encode())[:16])
    return _SCHEMAS[key]


def schema_for(entry: Entry, base: str | Path | None) -> DatabaseSchema:
    """The schema handed to systems for the entry's database (``<stem>.schema.json`` beside it)."""
    return _schema(entry, base)[0]


def sql_inputs(entry: Entry, ctx: CallContext) -> dict[str, Any]:
    """What a text-to-SQL system is handed beside the question: the schema (its hash), part of
    the entry's cache key and journal provenance, so an edited schema is asked again."""
    return {"schema": _schema(entry, ctx.base)[1]}


def _reply(out: Any, default_dialect: str) -> SystemSql:
    if out is None:
        return SystemSql(None, default_dialect)
    if isinstance(out, str):
        return SystemSql(out if out.strip() else None, default_dialect)
    if isinstance(out, Mapping):
        q = out.get("sql")
        if q is not None and not isinstance(q, str):
            raise SqlSystemError("the reply's sql is not a string")
        d = out.get("dialect") or default_dialect
        return SystemSql(q if q and q.strip() else None, str(d))
    raise SqlSystemError(
        f"sql() returned {type(out).__name__}; expected a string, None or "
        '{"sql": ..., "dialect": ...}'
    )


def call_sql(system: Any, entry: Entry, ctx: CallContext) -> dict[str, Any]:
    """The ``sql`` kind's call (`assay.systems.kinds`): one entry with sql gold asked of the
    system; the row has no ``retrieved``, the query in extra ``sql`` (None when declined) and
    ``dialect``, and in ``answer`` the same query or `REFUSAL_TEXT`. The runner caches,
    journals and binds it as any row."""
    assert entry.sql is not None
    schema = schema_for(entry, ctx.base)
    default = str(getattr(system, "dialect", None) or entry.sql.dialect)
    t0 = time.perf_counter()
    try:
        out = system.sql(entry.query, schema=schema, as_of=entry.as_of)
        ms = (time.perf_counter() - t0) * 1000.0
        got = _reply(out, default)
    except SqlSystemError as exc:  # the runner names the entry
        raise SystemCallError(entry.id, str(exc)) from exc
    row = RunRow(
        entry.id,
        None,
        answer=got.sql if got.sql is not None else REFUSAL_TEXT,
        as_of=None if entry.as_of is None else entry.as_of.isoformat(),
        latency_ms=round(ms, 3),
        extra={"sql": got.sql, "dialect": got.dialect},
    )
    return row.to_dict()


def reply_of(
    system: Any, question: str, schema: DatabaseSchema, as_of: dt.date | None
) -> SystemSql:
    """One reply of `system`, read as a run reads it (for `assay sql ask`)."""
    default = str(getattr(system, "dialect", None) or "duckdb")
    return _reply(system.sql(question, schema=schema, as_of=as_of), default)
