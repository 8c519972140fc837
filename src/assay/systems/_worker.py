"""The other end of ``--python``: a system served over JSON lines from another interpreter.

`assay.systems.isolated` starts ``PYTHON -c <this file's source>`` and talks to it over the
pipes: one JSON request per line on stdin, one JSON reply per line on the original stdout (the
system's own prints go to stderr, so they cannot corrupt a reply). This file imports nothing but
the standard library: the other interpreter needs the system's dependencies, not assay's.

Requests: ``{"op": "load", "spec": "pkg.mod:attr", "kwargs": {...}}`` first, then
``{"op": "retrieve" | "trace", "query", "as_of": "YYYY-MM-DD" | null, "k", "principal"}`` and
``{"op": "answer", "query", "as_of", "hits": [{"chunk_id", "score"}], "principal"}``, where
``principal`` is who asks (``{"role", "groups": [...], "clearance"}``, or null for the public).
It reaches each method that names a ``principal`` keyword as a `Principal` (role, groups,
clearance), as in-process (`assay.systems.protocol.takes_principal`); a method without the
keyword is called without it. A request of a conversation's turn may carry ``"history"`` (the
earlier turns, ``[{"role", "content"}]``): it reaches each method that names a ``history``
keyword, as in-process (`assay.systems.protocol.takes_history`). The load reply lists, per
keyword, the methods that name it (``"keywords": {"principal": [...], "history": [...]}``).
Replies:
``{"ok": true, "result": ...}`` or ``{"ok": false, "error": "Type: message", "usage": bool}``
(``usage``: the system could not be loaded as named). End of input closes the system and exits.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
import inspect
import json
import os
import sys
from collections.abc import Mapping
from typing import Any


@dataclasses.dataclass(frozen=True)
class Hit:
    """What `answer` receives, as in-process (`assay.Hit`): a chunk id and a score or None."""

    chunk_id: str
    score: float | None = None


@dataclasses.dataclass(frozen=True)
class Principal:
    """Who asks, as in-process (`assay.dataset.schema.Principal`): role, groups, clearance."""

    role: str
    groups: tuple[str, ...] = ()
    clearance: str = "public"


_KEYWORDS = ("principal", "history")
_METHODS = ("retrieve", "trace", "answer")


def _takes(system: Any, method: str, name: str) -> bool:
    fn = getattr(system, method, None)
    try:
        p = inspect.signature(fn).parameters.get(name) if callable(fn) else None
    except (TypeError, ValueError):
        return False
    return p is not None and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)


def _who(system: Any, method: str, req: dict[str, Any]) -> dict[str, Any]:
    """``{"principal": Principal}`` when the request names one and `method` takes it, and
    ``{"history": [...]}`` likewise."""
    out: dict[str, Any] = {}
    raw = req.get("principal")
    if raw is not None and _takes(system, method, "principal"):
        groups = tuple(raw.get("groups") or ())
        out["principal"] = Principal(str(raw["role"]), groups, str(raw["clearance"]))
    told = req.get("history")
    if told is not None and _takes(system, method, "history"):
        out["history"] = [dict(m) for m in told]
    return out


class _Usage(Exception):
    pass


def _plain(obj: Any) -> Any:
    """A JSON-ready copy: hit objects become dicts, numpy scalars and arrays plain values."""
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if hasattr(obj, "chunk_id"):
        return {"chunk_id": _plain(obj.chunk_id), "score": _plain(getattr(obj, "score", None))}
    if hasattr(obj, "tolist"):
        return _plain(obj.tolist())
    if hasattr(obj, "__float__"):
        return float(obj)
    return str(obj)


def _load(spec: str, kwargs: dict[str, Any]) -> Any:
    mod_name, _, attr = spec.partition(":")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as exc:
        raise _Usage(f"cannot import {mod_name} in {sys.executable}: {exc}") from exc
    target: Any = mod
    for part in attr.split("."):
        if not hasattr(target, part):
            raise _Usage(f"{mod_name} has no attribute {attr!r}")
        target = getattr(target, part)
    if hasattr(target, "retrieve") and not inspect.isclass(target):
        if kwargs:
            raise _Usage(f"{spec} is an instance; it takes no arguments (got {sorted(kwargs)})")
        return target
    if not callable(target):
        raise _Usage(f"{spec}: not a system, a class or a factory")
    try:
        inspect.signature(target).bind(**kwargs)
    except TypeError as exc:
        raise _Usage(f"{spec} cannot be called with {kwargs}: {exc}") from exc
    except ValueError:
        pass
    return target(**kwargs)


def _value(system: Any, name: str) -> Any:
    v = getattr(system, name, None)
    return v() if callable(v) else v


def _path(value: Any) -> str | None:
    """A path the system names, absolute (as this interpreter's working folder reads it)."""
    if value is None:
        return None
    return os.path.abspath(os.fspath(value) if isinstance(value, os.PathLike) else str(value))


def _roots(system: Any, spec: str) -> list[dict[str, Any]]:
    """Where the top-level packages of the system's class and of the spec's module live."""
    out = []
    tops = dict.fromkeys([type(system).__module__.partition(".")[0], spec.partition(".")[0]])
    for top in tops:
        top = top.partition(":")[0]
        mod = sys.modules.get(top)
        if mod is None:
            continue
        paths = [str(p) for p in getattr(mod, "__path__", [])]
        file = getattr(mod, "__file__", None)
        dist = None
        where = paths or ([os.path.dirname(file)] if file else [])
        if where and all(("site-packages" in p or "dist-packages" in p) for p in where):
            try:
                import importlib.metadata as md

                names = sorted(set(md.packages_distributions().get(top, [])))
                if names:
                    dist = ",".join(f"{n}=={md.version(n)}" for n in names)
            except Exception:
                dist = None
        out.append({"top": top, "paths": paths, "file": file, "dist": dist})
    return out


def _date(value: Any) -> dt.date | None:
    return None if value is None else dt.date.fromisoformat(value)


def _answer(out: Any) -> Any:
    if out is None or isinstance(out, str):
        return out
    if isinstance(out, Mapping):
        return _plain({k: out.get(k) for k in ("answer", "citations", "trace") if k in out})
    if hasattr(out, "answer"):
        return _plain(
            {
                "answer": out.answer,
                "citations": getattr(out, "citations", None),
                "trace": getattr(out, "trace", None),
            }
        )
    raise TypeError(
        f"answer() returned {type(out).__name__}; expected a string, a dict with 'answer' and "
        "'citations', or None"
    )


def _handle(system: Any, req: dict[str, Any]) -> Any:
    op = req.get("op")
    if op in ("retrieve", "trace"):
        fn = getattr(system, op)
        who = _who(system, op, req)
        return _plain(fn(req["query"], as_of=_date(req["as_of"]), k=req["k"], **who))
    if op == "answer":
        hits = [Hit(h["chunk_id"], h.get("score")) for h in req["hits"]]
        who = _who(system, "answer", req)
        return _answer(system.answer(req["query"], as_of=_date(req["as_of"]), hits=hits, **who))
    raise _Usage(f"unknown request {op!r}")


def main() -> None:
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # the system's prints go to stderr; stdout carries replies only
    sys.stdout = sys.stderr
    system: Any = None

    def reply(obj: dict[str, Any]) -> None:
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            if req.get("op") == "load":
                system = _load(req["spec"], req.get("kwargs") or {})
                if not callable(getattr(system, "retrieve", None)):
                    raise _Usage(f"{req['spec']}: a system needs a retrieve(query, *, as_of, k)")
                result: Any = {
                    "answer": callable(getattr(system, "answer", None)),
                    "trace": callable(getattr(system, "trace", None)),
                    "keywords": {
                        name: [m for m in _METHODS if _takes(system, m, name)] for name in _KEYWORDS
                    },
                    "identity": _plain(_value(system, "identity")),
                    "corpus_hash": _plain(_value(system, "corpus_hash")),
                    "data_files": _plain(_value(system, "data_files")),
                    "chunks_path": _path(_value(system, "chunks_path")),
                    "roots": _roots(system, req["spec"]),
                    "python": sys.version,
                }
            else:
                result = _handle(system, req)
            reply({"ok": True, "result": result})
        except BaseException as exc:  # handed to assay, which names the entry
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            reply(
                {
                    "ok": False,
                    "error": str(exc)
                    if isinstance(exc, _Usage)
                    else f"{type(exc).__name__}: {exc}",
                    "usage": isinstance(exc, _Usage),
                }
            )
    close = getattr(system, "close", None)
    if callable(close):
        close()


if __name__ == "__main__":
    main()
