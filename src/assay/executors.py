"""Where work runs: this process (`local`) or a Ray cluster (`ray`, `ray:ADDRESS`).

One small abstraction, used by `assay run --executor` and `assay sweep --executor`, and meant for
any loop over independent items (log ingestion, corpus embedding):

    ex = parse_executor("ray")                       # or "local", "ray:auto", "ray:ray://h:10001"
    for i, out in imap(ex, work, items, setup=build):  # (index, result) as they finish
        ...
    results = map_ordered(ex, work, items, setup=build)  # results in the order of items

`setup()` builds per-worker state once (a system with its heavy index: one per Ray actor, so an
index is loaded once per worker, not once per item), and `work(state, item)` does one item. With
`local` both run here, in order. With Ray, `workers` actors (default: the cluster's CPUs) each
run `setup` once and take items as they free up; results return to the caller, which keeps any
cache, journal and ordering. `setup`, `work` and the items are shipped to the workers by Ray's
pickling (cloudpickle): keep them small (a spec string and options, not a loaded index).

`ray` alone starts (or joins, when one is already running in this process) a local Ray on this
machine; `ray:auto` joins the cluster this machine belongs to; `ray:ray://host:10001` joins a
remote cluster through Ray Client. Ray is the `ray` extra (`pip install 'assay[ray]'`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from assay.errors import UsageError

__all__ = ["Executor", "imap", "map_ordered", "parse_executor", "ray_available"]

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Executor:
    """`kind` is "local" or "ray"; `address` is None (start or join a local Ray), "auto" or a
    `ray://host:port` URL; `workers` caps the number of Ray actors (None: the cluster's CPUs)."""

    kind: str = "local"
    address: str | None = None
    workers: int | None = None

    def __str__(self) -> str:
        return self.kind if self.address is None else f"{self.kind}:{self.address}"

    @property
    def is_local(self) -> bool:
        return self.kind == "local"


def parse_executor(spec: str | Executor | None, *, workers: int | None = None) -> Executor:
    """`local`, `ray` or `ray:ADDRESS` (`ray:auto`, `ray:ray://host:10001`) as an Executor."""
    if isinstance(spec, Executor):
        return spec if workers is None else Executor(spec.kind, spec.address, workers)
    if workers is not None and workers < 1:
        raise UsageError(f"workers must be at least 1, not {workers}")
    text = (spec or "local").strip()
    if text == "local":
        return Executor("local", None, workers)
    if text == "ray":
        return Executor("ray", None, workers)
    if text.startswith("ray:") and text[4:].strip():
        return Executor("ray", text[4:].strip(), workers)
    raise UsageError(f"unknown executor {text!r}: use local, ray, ray:auto or ray:ray://HOST:PORT")


def ray_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def _ray(ex: Executor) -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(
            f"--executor {ex} needs Ray: pip install 'assay[ray]' (or use --executor local)"
        ) from None
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if ex.address is not None:
            kwargs["address"] = ex.address
        try:
            ray.init(**kwargs)
        except ConnectionError as exc:
            raise UsageError(f"--executor {ex}: cannot reach the Ray cluster ({exc})") from None
    return ray


_IN_FLIGHT = 4


class _Worker:
    """A Ray actor body: per-worker state built once, then one item per call."""

    def __init__(self, setup: Callable[[], Any] | None) -> None:
        self.state = setup() if setup is not None else None

    def work(self, fn: Callable[[Any, Any], Any], i: int, item: Any) -> tuple[int, Any]:
        return i, fn(self.state, item)


def imap(
    executor: Executor | str,
    fn: Callable[[S, T], R],
    items: Sequence[T],
    *,
    setup: Callable[[], S] | None = None,
) -> Generator[tuple[int, R], None, None]:
    """(index, fn(state, item)) for every item, as each finishes (in order when local).

    An exception in `fn` or `setup` is raised here, as the original exception type where Ray can
    rebuild it, once every earlier item has been yielded (the earliest failing item's exception,
    when several fail). Closing the iterator early
    (or Ctrl-C) cancels the items not yet started and releases the workers."""
    ex = parse_executor(executor)
    if not items:
        return
    if ex.is_local:
        state: Any = setup() if setup is not None else None
        try:
            for i, item in enumerate(items):
                yield i, fn(state, item)
        finally:
            close = getattr(state, "close", None)
            if setup is not None and callable(close):
                close()
        return
    yield from _ray_imap(ex, fn, items, setup)


def _ray_imap(
    ex: Executor,
    fn: Callable[[Any, Any], Any],
    items: Sequence[Any],
    setup: Callable[[], Any] | None,
) -> Iterator[tuple[int, Any]]:
    ray = _ray(ex)
    cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
    n = max(1, min(ex.workers or cpus, len(items)))
    actor_cls = ray.remote(num_cpus=1)(_Worker)
    actors = [actor_cls.remote(setup) for _ in range(n)]
    fn_ref = ray.put(fn)
    # a few calls in flight per actor, so that a worker never waits for the driver's round trip
    idle = [a for _ in range(_IN_FLIGHT) for a in actors][::-1]
    pending: dict[Any, tuple[Any, int]] = {}  # object ref -> (actor, item index)
    nxt = 0
    try:
        while nxt < len(items) or pending:
            while idle and nxt < len(items):
                actor = idle.pop()
                pending[actor.work.remote(fn_ref, nxt, items[nxt])] = (actor, nxt)
                nxt += 1
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                actor, i = pending.pop(ref)
                idle.append(actor)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    # `wait` may hand over a later item before an earlier one that is also
                    # done: finish the earlier items first (yielding their results, so that
                    # none is lost), and raise the earliest failure, as the local executor would
                    earlier = sorted((j, r) for r, (_a, j) in pending.items() if j < i)
                    for _j, r in earlier:
                        del pending[r]
                        try:
                            prior = ray.get(r)
                        except ray.exceptions.RayTaskError as first:
                            _raise_cause(first)
                        yield prior
                    _raise_cause(exc)
                yield result
    finally:
        for actor in actors:  # its queued and running calls end with it
            ray.kill(actor)


def _raise_cause(exc: BaseException) -> NoReturn:
    """Re-raise a Ray task error as the worker's own exception where Ray could rebuild it."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        raise cause from None
    raise exc


def map_ordered(
    executor: Executor | str,
    fn: Callable[[S, T], R],
    items: Sequence[T],
    *,
    setup: Callable[[], S] | None = None,
) -> list[R]:
    """[fn(state, item) for item in items], computed by `executor`, in the order of `items`."""
    out: list[Any] = [None] * len(items)
    for i, r in imap(executor, fn, items, setup=setup):
        out[i] = r
    return out
