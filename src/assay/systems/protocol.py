"""The system contract: what assay calls, with what, and what it expects back.

A *system* is the thing under test. assay calls it once per golden entry:

``retrieve(query: str, *, as_of: datetime.date | None, k: int) -> Sequence[hit]``
    Required. `as_of` is the entry's `as_of` as a `datetime.date` (never a string), or None when
    the entry has none; a system must not return evidence that was not public on that date. A
    `retrieve` that cannot take `as_of` and `k` as keywords is refused at load time: a date that
    is only stored is decoration. Return at most `k` hits in rank order (best first); a hit is a
    chunk id string, a ``{"chunk_id": str, "score": float}`` dict, or an object with
    `chunk_id` and `score` attributes. A score is optional but must be a finite number: NaN or
    an infinity stops the run with the entry id and the hit's position.

``retrieve(query, *, as_of, k, principal)``
    Optional. A `retrieve` (and likewise `trace` and `answer`) that names a ``principal``
    keyword gets the entry's principal (`assay.dataset.schema.Principal`: role, groups,
    clearance) on every entry that has one, as it gets `as_of`; it must not return evidence the
    principal may not see (`assay.corpus.access.allows`), and should refuse or escalate as the
    access labels say. A system without the keyword is called as before: it is measured by the
    policy checks (``leak``, ``policy_ok``), not trusted. The built-in adapters carry it over
    every boundary: an HTTP system gets it in each request's ``principal`` field, a system in
    another interpreter (``--python``) as a `Principal` of the same fields; the request cache
    keys on it, so one principal's cached reply is never served to another.

``retrieve(query, *, as_of, k, history)``
    Optional. A `retrieve` (and likewise `trace` and `answer`) that names a ``history``
    keyword gets, on each turn of a conversation (`assay.dataset.conversations`), the earlier
    turns of the same conversation: ``[{"role": "user" | "assistant", "content": str}, ...]``,
    oldest first, ``[]`` on turn 1. The assistant's messages are the system's own earlier
    answers (``assay run --history own``, the default: turns of one conversation run in
    order), the gold reference answers (``gold``), or there are none (``none``: history is
    ``[]``, the no-memory baseline). An entry of no conversation is called without it, and a
    system without the keyword is called as before. An HTTP system gets it in the request's
    ``history`` field; the request cache keys on it for a system that takes it.

``answer(query: str, *, as_of: datetime.date | None, hits: list[assay.Hit]) -> ...``
    Optional (skipped with ``--no-answers``). `hits` is what `retrieve` just returned for the
    same entry, normalised to `assay.Hit` (`chunk_id`, `score` or None), at most `k` of them.
    Return a string, ``{"answer": str, "citations": [chunk_id, ...]}``, an object with
    `answer` and `citations` attributes, or None (no answer).

``identity() -> JSON-serialisable`` (or an attribute of that name)
    Optional. What makes this system's answers what they are beyond its code: model names,
    index versions, a version string. assay keys its request cache and run journal on it
    *combined with* a hash of every source file of the system's top-level package (helpers
    included) and the arguments it was built with, so editing the code behind a declared
    identity is still a cache miss (`assay.systems.identity` says exactly what is seen).

``data_files`` (a list of paths, or a method returning one)
    Optional. Files or folders whose contents change the answers (an index manifest, prompts):
    their contents are hashed into the identity.

``corpus_hash`` (attribute or method returning str or None)
    Optional. A hash of the data the system searches (its chunk table or corpus). It is
    recorded in the run's metadata and in every journal row and cache entry.

``trace`` (a retrieval trace, a method, or a key of the answer dict)
    Optional. What retrieval saw before the final top k, for failure attribution
    (`assay.attribution`): ``{"candidates": [hit, ...], "reranked": [hit, ...]}``, the candidate
    pool before reranking and the same pool after it (leave ``reranked`` out when the system does
    not rerank). Hand it over in one of two ways: `retrieve` returns ``{"hits": [...], "trace":
    {...}}`` instead of a list, or the system has a method ``trace(query, *, as_of, k)`` that the
    runner calls right after `retrieve` (same arguments, same thread) and that returns the trace
    of that retrieval. Pools are normalised like hits (a bad one stops the run naming
    ``trace.candidates.j``). Extra keys of an answer dict other than `answer` and `citations` are
    not kept; put per-entry diagnostics in the answer dict under ``"trace"``. Both land in the run
    row's ``trace`` field: the retrieval trace's keys over the answer trace's (an answer trace
    that is not a dict goes under ``"answer"``).

Errors: an exception raised by `retrieve` or `answer` stops the run with
``entry ID: ExceptionType: message`` (no traceback; the original exception is its
``__cause__``); rows finished before it are kept in ``OUT.partial`` and a rerun resumes there.
"""

from __future__ import annotations

import datetime as dt
import inspect
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from assay.errors import AssayError, UsageError

__all__ = [
    "AnsweringSystem",
    "System",
    "SystemCallError",
    "check_protocol",
    "takes_history",
    "takes_keyword",
    "takes_principal",
]


@runtime_checkable
class System(Protocol):
    """Anything with ``retrieve(query, *, as_of, k)``; see the module docs for the full contract."""

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> Sequence[Any]: ...


@runtime_checkable
class AnsweringSystem(System, Protocol):
    """A system that also answers from the hits it retrieved."""

    def answer(self, query: str, *, as_of: dt.date | None, hits: list[Any]) -> Any: ...


class SystemCallError(AssayError):
    """A system raised (or returned something unusable) on one entry: names the entry."""

    def __init__(self, entry_id: str, message: str):
        self.entry_id = entry_id
        super().__init__(f"entry {entry_id}: {message}")


def check_protocol(obj: Any, spec: str) -> None:
    """UsageError unless `obj` has a `retrieve` that takes `as_of` and `k` as keywords."""
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


def takes_principal(obj: Any, method: str = "retrieve") -> bool:
    """Does ``obj.method`` name a ``principal`` keyword? (A ``**kwargs`` is not enough: a system
    opts in to receiving the principal by naming it.)"""
    return takes_keyword(obj, method, "principal")


def takes_history(obj: Any, method: str = "retrieve") -> bool:
    """Does ``obj.method`` name a ``history`` keyword? A system opts in to a conversation's
    earlier turns by naming it, as it opts in to the principal."""
    return takes_keyword(obj, method, "history")


def takes_keyword(obj: Any, method: str, name: str) -> bool:
    """Does ``obj.method`` name the keyword `name` (``**kwargs`` is not enough)? A system that
    forwards calls elsewhere (`assay.systems.isolated.IsolatedSystem`) says it instead, in
    ``remote_keywords`` (keyword -> the methods that name it where the calls land)."""
    remote = getattr(obj, "remote_keywords", None)
    if isinstance(remote, Mapping) and name in remote:
        return method in remote[name] and callable(getattr(obj, method, None))
    fn = getattr(obj, method, None)
    if not callable(fn):
        return False
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    p = params.get(name)
    return p is not None and p.kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )
