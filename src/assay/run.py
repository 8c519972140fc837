"""Driving a system over a dataset: `as_of` on every call, every call cached, resumable.

A *system* is any object with ``retrieve(query, *, as_of, k)`` (and optionally
``answer(query, *, as_of, hits)``), given as an object, an import path ``"pkg.mod:attr"`` (an
instance, a class or a factory function, called with the options), or an HTTP endpoint
(``http://host:port/path``: POST ``{"query", "as_of", "k"}`` -> ``{"hits": [{"chunk_id",
"score"}, ...]}``, optionally with ``"answer"`` and ``"citations"``).

Every call goes through the request cache, keyed on the system identity, query, as_of and k, so a
rerun reproduces a run without calling the system. Rows are journalled to ``<out>.partial`` as
they complete; an interrupted run resumes from there.
"""

from __future__ import annotations

import datetime as dt
import importlib
import inspect
import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from assay._io import dumps_canonical
from assay.cache import RequestCache, cache_key
from assay.dataset.io import Dataset
from assay.dataset.schema import Entry
from assay.errors import AssayError, UsageError
from assay.runs import Hit, Run, RunRow, parse_hit, write_run

__all__ = ["HttpSystem", "System", "load_system", "run_system", "system_identity"]


@runtime_checkable
class System(Protocol):
    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> Sequence[Any]: ...


class HttpSystem:
    """A system behind an HTTP endpoint. POST {"query", "as_of", "k"} -> {"hits": [...]}."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 60.0,
        retries: int = 3,
        headers: dict[str, str] | None = None,
    ):
        import httpx

        self.url = url
        self.retries = retries
        self._client = httpx.Client(timeout=timeout, headers=headers or {})
        self._last: dict[str, Any] = {}
        self.identity = {"kind": "http", "url": url}

    def call(self, query: str, *, as_of: dt.date | None, k: int) -> dict[str, Any]:
        import httpx

        payload = {"query": query, "as_of": as_of.isoformat() if as_of else None, "k": k}
        delay = 0.5
        for attempt in range(self.retries + 1):
            try:
                resp = self._client.post(self.url, json=payload)
                if resp.status_code >= 500 and attempt < self.retries:
                    raise httpx.HTTPStatusError("server error", request=resp.request, response=resp)
                resp.raise_for_status()
                data = resp.json()
                if not isinstance(data, dict) or not isinstance(data.get("hits"), list):
                    raise AssayError(
                        f"{self.url}: the response must be a JSON object with a 'hits' list"
                    )
                return data
            except (httpx.TransportError, httpx.HTTPStatusError) as exc:
                if attempt >= self.retries:
                    raise AssayError(
                        f"{self.url}: request failed after {self.retries + 1} tries: {exc}"
                    ) from exc
                time.sleep(delay)
                delay *= 2
        raise AssayError("unreachable")  # pragma: no cover

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> Sequence[Any]:
        data = self.call(query, as_of=as_of, k=k)
        hits: list[Any] = data["hits"]
        return hits

    def close(self) -> None:
        self._client.close()


def _check_protocol(obj: Any, spec: str) -> None:
    fn = getattr(obj, "retrieve", None)
    if not callable(fn):
        raise UsageError(f"{spec}: a system needs a retrieve(query, *, as_of, k) method")
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return
    has_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if not has_kwargs and ("as_of" not in params or "k" not in params):
        raise UsageError(
            f"{spec}: retrieve() must accept keyword arguments as_of and k "
            "(as_of reaches the retriever on every call; a date that is only stored is decoration)"
        )


def load_system(spec: str | Any, **options: Any) -> Any:
    """An object, "pkg.mod:attr" (instance, class or factory, called with options), or an http URL.

    The name "filings" builds the reference filings pipeline (options: corpus, mode, ...), and
    "bm25" a plain BM25 baseline over a chunk table (option: chunks).
    """
    if not isinstance(spec, str):
        _check_protocol(spec, type(spec).__name__)
        return spec
    if spec.startswith(("http://", "https://")):
        return HttpSystem(spec)
    if spec == "bm25":
        from assay.systems.bm25 import BM25System

        if "chunks" not in options:
            raise UsageError("--system bm25 needs --chunks (the chunk table to index)")
        return BM25System.from_path(options["chunks"])
    if spec == "filings":
        try:
            mod = importlib.import_module("assay.systems.filings")
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise UsageError(f"the filings pipeline is not available: {exc}") from exc
        if "corpus" not in options:
            raise UsageError("--system filings needs --corpus DIR (built by `assay corpus build`)")
        obj = mod.build(options["corpus"], **{k: v for k, v in options.items() if k != "corpus"})
        _check_protocol(obj, spec)
        return obj
    if ":" not in spec:
        raise UsageError(
            f"--system {spec!r}: expected 'pkg.module:attr', an http(s) URL, 'bm25' or 'filings'"
        )
    mod_name, _, attr = spec.partition(":")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as exc:
        raise UsageError(f"--system {spec!r}: cannot import {mod_name}: {exc}") from exc
    target: Any = mod
    for part in attr.split("."):
        if not hasattr(target, part):
            raise UsageError(f"--system {spec!r}: {mod_name} has no attribute {attr!r}")
        target = getattr(target, part)
    obj = target
    if not hasattr(target, "retrieve") or inspect.isclass(target):
        if not callable(target):
            raise UsageError(f"--system {spec!r}: not a system, a class or a factory")
        obj = target(**options)
    _check_protocol(obj, spec)
    return obj


def system_identity(system: Any, spec: str | None = None) -> dict[str, Any]:
    """What makes a system's answers what they are: its spec and its own `identity` if it has one."""
    ident = getattr(system, "identity", None)
    if callable(ident):
        ident = ident()
    out: dict[str, Any] = {"spec": spec or f"{type(system).__module__}.{type(system).__qualname__}"}
    if ident is not None:
        out["identity"] = ident
    return out


def _norm_hits(raw: Sequence[Any], source: str) -> list[Hit]:
    return [parse_hit(h, source, None, j) for j, h in enumerate(raw)]


def _call_one(
    system: Any, entry: Entry, *, k: int, answers: bool, cache: RequestCache, ident: str
) -> dict[str, Any]:
    as_of = entry.as_of
    key = cache_key(
        system=ident,
        query=entry.query,
        as_of=as_of.isoformat() if as_of else None,
        k=k,
        answers=answers,
    )
    cached = cache.get(key)
    if cached is not None:
        return {"id": entry.id, **cached, "cached": True}
    t0 = time.perf_counter()
    answer: str | None = None
    citations: list[str] | None = None
    if isinstance(system, HttpSystem):
        data = system.call(entry.query, as_of=as_of, k=k)
        hits = _norm_hits(data["hits"], system.url)
        answer = data.get("answer")
        citations = data.get("citations")
    else:
        hits = _norm_hits(
            system.retrieve(entry.query, as_of=as_of, k=k), f"{ident} (query {entry.id})"
        )
        if answers and callable(getattr(system, "answer", None)):
            out = system.answer(entry.query, as_of=as_of, hits=hits)
            if isinstance(out, str):
                answer = out
            elif isinstance(out, dict):
                answer = out.get("answer")
                citations = out.get("citations")
            elif out is not None:
                answer = getattr(out, "answer", None)
                citations = getattr(out, "citations", None)
    latency = (time.perf_counter() - t0) * 1000.0
    row = RunRow(
        entry.id,
        hits,
        answer=answer,
        citations=citations,
        as_of=as_of.isoformat() if as_of else None,
        latency_ms=round(latency, 3),
    )
    d = row.to_dict()
    cache.put(key, {kk: vv for kk, vv in d.items() if kk != "id"})
    return d


def run_system(
    dataset: Dataset | Sequence[Entry],
    system: Any,
    *,
    k: int = 10,
    spec: str | None = None,
    cache: RequestCache | None = None,
    out: str | Path | None = None,
    workers: int | None = None,
    answers: bool = True,
    progress: bool = True,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> Run:
    """Run `system` over every entry; returns the Run (and writes it to `out` when given).

    `workers` defaults to 8 for HTTP systems and 1 otherwise (Python systems are rarely
    thread-safe). With `out`, completed rows are journalled to `<out>.partial` and a rerun resumes.
    """
    entries = dataset.entries if isinstance(dataset, Dataset) else list(dataset)
    system = load_system(system) if isinstance(system, str) else system
    if not isinstance(system, HttpSystem):
        _check_protocol(system, spec or type(system).__name__)
    ident_obj = system_identity(system, spec)
    ident = dumps_canonical(ident_obj)
    cache = cache if cache is not None else RequestCache()
    if workers is None:
        workers = 8 if isinstance(system, HttpSystem) else 1
    done: dict[str, dict[str, Any]] = {}
    partial: Path | None = None
    if out is not None:
        partial = Path(str(out) + ".partial")
        partial.parent.mkdir(parents=True, exist_ok=True)
        if partial.exists():
            wanted = {e.id for e in entries}
            with open(partial, encoding="utf-8") as fh:
                for raw in fh:
                    try:
                        row = json.loads(raw)
                    except json.JSONDecodeError:
                        break  # a torn last line from a crash: stop there
                    if isinstance(row, dict) and row.get("id") in wanted:
                        done[row["id"]] = row
    todo = [e for e in entries if e.id not in done]
    journal = open(partial, "a", encoding="utf-8") if partial is not None else None  # noqa: SIM115
    results: dict[str, dict[str, Any]] = dict(done)
    try:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        columns = (
            TextColumn("[bold]run[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
        )
        with Progress(*columns, disable=not progress, transient=True) as bar:
            task = bar.add_task("run", total=len(entries), completed=len(done))

            def finish(row: dict[str, Any]) -> None:
                results[row["id"]] = row
                if journal is not None:
                    journal.write(json.dumps(row, ensure_ascii=False) + "\n")
                    journal.flush()
                if on_row is not None:
                    on_row(row)
                bar.advance(task)

            if workers <= 1:
                for e in todo:
                    finish(_call_one(system, e, k=k, answers=answers, cache=cache, ident=ident))
            else:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    futs = [
                        pool.submit(
                            _call_one, system, e, k=k, answers=answers, cache=cache, ident=ident
                        )
                        for e in todo
                    ]
                    for f in futs:
                        finish(f.result())
    finally:
        if journal is not None:
            journal.close()
    ordered = [results[e.id] for e in entries]
    rows = [{kk: vv for kk, vv in r.items() if kk != "cached"} for r in ordered]
    meta = {
        "system": ident_obj,
        "k": k,
        "dataset_version": dataset.version if isinstance(dataset, Dataset) else None,
        "dataset_path": dataset.path if isinstance(dataset, Dataset) else None,
        "n_entries": len(entries),
        "cache_hits": sum(1 for r in ordered if r.get("cached")),
        "resumed_rows": len(done),
    }
    if out is not None:
        h = write_run(out, rows, meta=meta)
        if partial is not None and partial.exists():
            partial.unlink()
        run = Run.from_rows(rows, path=str(out), hash=h, meta=meta)
    else:
        run = Run.from_rows(rows, meta=meta)
    return run
