"""Where work runs: this process (`local`) or a Ray cluster (`ray`, `ray:ADDRESS`).

One small abstraction, used by `assay run --executor`, `assay sweep --executor` and `assay logs
ingest --executor`, and meant for any loop over independent items (corpus embedding too):

    ex = parse_executor("ray")                       # or "local", "ray:auto", "ray:ray://h:10001"
    for i, out in ex.imap(work, items, setup=build):   # (index, result) as they finish
        ...
    results = map_ordered(ex, work, items, setup=build)  # results in the order of items

`setup()` builds per-worker state once (a system with its heavy index: one per Ray actor, so an
index is loaded once per worker, not once per item), and `work(state, item)` does one item.

- `LocalExecutor` runs both here: in order on this thread, or, with ``workers > 1``, on that
  many threads of this process (results as they finish; for systems that wait on a server).
- `RayExecutor` starts `workers` actors (default: the cluster's CPUs); each runs `setup` once
  and takes items in batches sized to the measured cost of a call (see `RayExecutor`), and
  results return to the caller, which keeps any cache, journal and ordering. `setup`, `work`
  and the items are shipped by Ray's pickling (cloudpickle): keep them small (a spec string and
  options, not a loaded index).

`ray` alone starts (or joins, when one is already running in this process) a local Ray on this
machine; `ray:auto` joins the cluster this machine belongs to; `ray:ray://host:10001` joins a
remote cluster through Ray Client. Ray is the `ray` extra (`pip install 'assay[ray]'`).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from assay.errors import UsageError

__all__ = [
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "WorkerLost",
    "imap",
    "map_ordered",
    "parse_executor",
    "ray_available",
]

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


class WorkerLost(RuntimeError):
    """A worker died (its process ended) running `item`, and died again when the item was retried
    alone on another worker: the item itself kills workers. `index` is its place in the items."""

    def __init__(self, index: int, item: Any, cause: BaseException | None = None):
        self.index, self.item, self.cause = index, item, cause
        super().__init__(
            f"a worker died running item {index}, and again when it was retried alone on "
            f"another worker ({type(cause).__name__ if cause is not None else 'no cause'})"
        )


@dataclass(frozen=True)
class Executor:
    """Where items run. `kind` is "local" or "ray"; `address` is None (start or join a local Ray),
    "auto" or a `ray://host:port` URL; `workers` caps the threads (local) or Ray actors (None: 1
    thread here, or the cluster's CPUs).

    ``Executor("local", ...)`` and ``Executor("ray", ...)`` build a `LocalExecutor` and a
    `RayExecutor`; each implements `imap`."""

    kind: str = "local"
    address: str | None = None
    workers: int | None = None

    _kinds: ClassVar[dict[str, type[Executor]]] = {}

    def __new__(
        cls, kind: str = "local", address: str | None = None, workers: int | None = None
    ) -> Executor:
        if cls is Executor:
            impl = Executor._kinds.get(kind)
            if impl is None:
                raise UsageError(f"unknown executor kind {kind!r}: local or ray")
            cls = impl
        return object.__new__(cls)

    def __str__(self) -> str:
        return self.kind if self.address is None else f"{self.kind}:{self.address}"

    @property
    def is_local(self) -> bool:
        """Whether items run in this process (they may then share its objects: a cache, a
        loaded system) rather than being shipped to workers."""
        return self.kind == "local"

    def with_workers(self, workers: int | None) -> Executor:
        return Executor(self.kind, self.address, workers)

    def imap(
        self,
        fn: Callable[[S, T], R],
        items: Sequence[T],
        *,
        setup: Callable[[], S] | None = None,
    ) -> Generator[tuple[int, R], None, None]:
        """(index, fn(state, item)) for every item, as each finishes.

        An exception in `fn` or `setup` is raised here, as the original exception type where it
        can be rebuilt, once every earlier item has been yielded (the earliest failing item's
        exception, when several fail). Closing the iterator early (or Ctrl-C) cancels the items
        not yet started and releases the workers."""
        raise NotImplementedError


@dataclass(frozen=True)
class LocalExecutor(Executor):
    """This process: items in order on this thread, or on `workers` threads when > 1."""

    kind: str = "local"

    def imap(
        self,
        fn: Callable[[S, T], R],
        items: Sequence[T],
        *,
        setup: Callable[[], S] | None = None,
    ) -> Generator[tuple[int, R], None, None]:
        if not items:
            return
        state: Any = setup() if setup is not None else None
        try:
            if (self.workers or 1) <= 1:
                for i, item in enumerate(items):
                    yield i, fn(state, item)
            else:
                yield from _threads(fn, state, items, self.workers or 1)
        finally:
            close = getattr(state, "close", None)
            if setup is not None and callable(close):
                close()


def _threads(
    fn: Callable[[Any, Any], Any], state: Any, items: Sequence[Any], workers: int
) -> Iterator[tuple[int, Any]]:
    """`fn` over `items` on `workers` threads, results as they complete; a failure is raised
    once every earlier item is yielded (the earliest failure); the rest is cancelled."""
    pool = ThreadPoolExecutor(max_workers=workers)
    pending: dict[Future[Any], int] = {pool.submit(fn, state, x): i for i, x in enumerate(items)}
    fail: tuple[int, BaseException] | None = None
    try:
        while pending:
            # a timeout, so that Ctrl-C reaches this thread while the workers run
            done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for f in sorted(done, key=pending.__getitem__):
                i = pending.pop(f)
                exc = f.exception()
                if exc is not None:
                    if fail is None or i < fail[0]:
                        fail = (i, exc)
                elif fail is None or i < fail[0]:
                    yield i, f.result()
            if fail is not None:
                if all(i > fail[0] for i in pending.values()):
                    raise fail[1]
                for f, i in list(pending.items()):
                    if i > fail[0] and f.cancel():  # not started: it never will be
                        del pending[f]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def parse_executor(spec: str | Executor | None, *, workers: int | None = None) -> Executor:
    """`local`, `ray` or `ray:ADDRESS` (`ray:auto`, `ray:ray://host:10001`) as an Executor."""
    if workers is not None and workers < 1:
        raise UsageError(f"workers must be at least 1, not {workers}")
    if isinstance(spec, Executor):
        return spec if workers is None else spec.with_workers(workers)
    text = (spec or "local").strip()
    if text == "local":
        return LocalExecutor("local", None, workers)
    if text == "ray":
        return RayExecutor("ray", None, workers)
    if text.startswith("ray:") and text[4:].strip():
        return RayExecutor("ray", text[4:].strip(), workers)
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


class _Worker:
    """A Ray actor body: per-worker state built once, then one call per batch of items."""

    def __init__(self, setup: Callable[[], Any] | None) -> None:
        self.state = setup() if setup is not None else None

    def work(self, fn: Callable[[Any, Any], Any], i: int, item: Any) -> tuple[int, Any]:
        return i, fn(self.state, item)


class _Batch:
    """`fn` over a batch of items on one worker: (results, (offset, exception) of the first
    failure or None, seconds spent). Items after a failure are not run, as locally."""

    def __init__(self, fn: Callable[[Any, Any], Any]):
        self.fn = fn

    def __call__(
        self, state: Any, items: Sequence[Any]
    ) -> tuple[list[Any], tuple[int, BaseException] | None, float]:
        t0 = time.perf_counter()
        out: list[Any] = []
        for j, item in enumerate(items):
            try:
                out.append(self.fn(state, item))
            except Exception as exc:
                return out, (j, exc), time.perf_counter() - t0
        return out, None, time.perf_counter() - t0


@dataclass(frozen=True)
class RayExecutor(Executor):
    """Ray actors, each built once by `setup`, taking items in batches.

    Batches are sized to what a call costs: a call carries about ``max(TARGET_S, OVERHEAD_X x the
    driver's measured seconds per call)`` of work (sending a call and fetching its result: what a
    batch shares), from the measured seconds per item on the workers (the first calls carry one
    item each, to measure), at most ``MAX_BATCH`` items, and
    at most an even share of what is left among the actors, so the last items are spread out
    too. A system of a millisecond per call then travels in batches of tens, and the driver's
    cost per item (Ray's submit, wait and get) is shared by the batch.

    A worker that dies (its process ends: ``RayActorError``) is replaced, and the items of the
    batch it held are retried once each, alone, on the other workers (alone on its worker too:
    nothing is queued behind a retry, and no new batch is sent while retries wait for a free
    worker); an item whose retry dies too raises `WorkerLost` naming it. A call the dead worker
    finished before it died still gives its results; nothing more is sent to it. Results still
    come back in any order, as each batch finishes, with the earliest-failure rule of
    `Executor.imap`.
    """

    kind: str = "ray"

    IN_FLIGHT: ClassVar[int] = 2  # calls queued per actor, so a worker never waits for the driver
    TARGET_S: ClassVar[float] = 0.02
    OVERHEAD_X: ClassVar[float] = 10.0
    MAX_BATCH: ClassVar[int] = 512

    def imap(
        self,
        fn: Callable[[S, T], R],
        items: Sequence[T],
        *,
        setup: Callable[[], S] | None = None,
    ) -> Generator[tuple[int, R], None, None]:
        if not items:
            return
        yield from _RayRun(self, _ray(self), fn, items, setup).results()


class _RayRun:
    """One `RayExecutor.imap`: the actors, the calls in flight, the batch sizing, the retries."""

    def __init__(
        self,
        ex: RayExecutor,
        ray: Any,
        fn: Callable[[Any, Any], Any],
        items: Sequence[Any],
        setup: Callable[[], Any] | None,
    ) -> None:
        self.ex, self.ray, self.items, self.setup = ex, ray, items, setup
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        self.n = max(1, min(ex.workers or cpus, len(items)))
        self.actor_cls = ray.remote(num_cpus=1)(_Worker)
        self.actors = [self.actor_cls.remote(setup) for _ in range(self.n)]
        self.fn_ref = ray.put(_Batch(fn))
        self.idle = [a for _ in range(ex.IN_FLIGHT) for a in self.actors][::-1]
        # token -> (object ref, actor, item indices, retried alone?, driver seconds to send it); a few
        # calls per actor, so finding a ref by a scan is cheap (and needs no hashable ref)
        self.pending: dict[int, tuple[Any, Any, list[int], bool, float]] = {}
        self.token = 0
        self.nxt = 0
        self.retry: deque[int] = deque()
        self.per_item: float | None = None  # seconds per item on a worker
        self.overhead = 0.0  # the driver's own seconds per call: sending it, fetching its result
        self.fail: tuple[int, BaseException] | None = None

    # ---------------------------------------------------------------- sizing and submitting

    def _size(self) -> int:
        if self.per_item is None:
            return 1
        target = max(self.ex.TARGET_S, self.ex.OVERHEAD_X * self.overhead)
        left = len(self.items) - self.nxt
        share = math.ceil(left / (self.n * self.ex.IN_FLIGHT))
        want = math.ceil(target / self.per_item) if self.per_item > 0 else self.ex.MAX_BATCH
        return max(1, min(self.ex.MAX_BATCH, want, share))

    def _submit(self) -> None:
        while self.fail is None:
            if self.retry:
                # a retry runs alone on its worker, nothing queued behind it: if that worker dies,
                # the item retried is the one that killed it (an item queued behind it on the same
                # worker would die too and could be named in its place). Until a worker is free of
                # calls, no new batch is sent, so one soon is.
                actor = next((a for a in self.actors if self._free(a) == self.ex.IN_FLIGHT), None)
                if actor is None:
                    return
                self.idle = [a for a in self.idle if a is not actor]
                idx, again = [self.retry.popleft()], True
            elif self.idle and self.nxt < len(self.items):
                actor = self.idle.pop()
                size = self._size()
                idx, again = list(range(self.nxt, min(len(self.items), self.nxt + size))), False
                self.nxt = idx[-1] + 1
            else:
                return
            batch = [self.items[i] for i in idx]
            t0 = time.perf_counter()
            ref = actor.work.remote(self.fn_ref, idx[0], batch)
            self.token += 1
            self.pending[self.token] = (ref, actor, idx, again, time.perf_counter() - t0)

    def _free(self, actor: Any) -> int:
        """How many of `actor`'s call slots are idle."""
        return sum(1 for a in self.idle if a is actor)

    def _measure(self, n: int, seconds: float, driver: float) -> None:
        """Fold in one call: `seconds` of work on the worker for `n` items, `driver` seconds of
        the driver's own (sending the call, fetching its result)."""
        per = seconds / max(1, n)
        if self.per_item is None:
            self.per_item, self.overhead = per, driver
        else:
            self.per_item = 0.7 * self.per_item + 0.3 * per
            self.overhead = 0.7 * self.overhead + 0.3 * driver

    def _failed(self, i: int, exc: BaseException) -> None:
        if self.fail is None or i < self.fail[0]:
            self.fail = (i, exc)

    def _died(self, actor: Any, idx: list[int], again: bool, exc: BaseException) -> None:
        """A worker died holding `idx`: replace it; retry each item alone, once. Its other calls
        stay pending: one that finished before it died still gives its results, one that did not
        fails on its own and comes back here."""
        if actor in self.actors:
            self.actors.remove(actor)
            self.idle = [a for a in self.idle if a is not actor]
            fresh = self.actor_cls.remote(self.setup)
            self.actors.append(fresh)
            self.idle.extend([fresh] * self.ex.IN_FLIGHT)
        self._requeue(idx, again, exc)

    def _requeue(self, idx: list[int], again: bool, exc: BaseException) -> None:
        if again:
            for i in idx:
                self._failed(i, WorkerLost(i, self.items[i], exc))
            return
        self.retry.extend(idx)
        self.retry = deque(sorted(self.retry))

    # ---------------------------------------------------------------- the loop

    def results(self) -> Iterator[tuple[int, Any]]:
        ray = self.ray
        died = getattr(ray.exceptions, "RayActorError", ())
        try:
            self._submit()
            while self.pending:
                if self.fail is not None and not any(
                    p[2][0] < self.fail[0] for p in self.pending.values()
                ):
                    break
                ready, _ = ray.wait([p[0] for p in self.pending.values()], num_returns=1)
                for got in ready:
                    tok = next(t for t, p in self.pending.items() if p[0] is got or p[0] == got)
                    ref, actor, idx, again, sending = self.pending.pop(tok)
                    t0 = time.perf_counter()
                    try:
                        _start, (out, failure, seconds) = ray.get(ref)
                    except died as exc:
                        if getattr(exc, "actor_init_failed", False):  # setup raised: no retry
                            self._failed(idx[0], exc)
                        else:
                            self._died(actor, idx, again, exc)
                        continue
                    except ray.exceptions.RayTaskError as exc:  # setup failed on the worker
                        self._failed(idx[0], _cause(exc))
                        continue
                    if actor in self.actors:  # not a call that finished before its worker died
                        # a retry held all of its worker's slots
                        self.idle.extend([actor] * (self.ex.IN_FLIGHT if again else 1))
                    fetching = time.perf_counter() - t0
                    self._measure(len(out) + (failure is not None), seconds, sending + fetching)
                    for j, value in enumerate(out):
                        if self.fail is None or idx[j] < self.fail[0]:
                            yield idx[j], value
                    if failure is not None:
                        self._failed(idx[failure[0]], failure[1])
                self._submit()
            if self.fail is not None:
                raise self.fail[1]
        finally:
            for actor in self.actors:  # its queued and running calls end with it
                ray.kill(actor)


def _cause(exc: BaseException) -> BaseException:
    """The worker's own exception behind a Ray task error, where Ray could rebuild it."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc


Executor._kinds.update(local=LocalExecutor, ray=RayExecutor)


def imap(
    executor: Executor | str,
    fn: Callable[[S, T], R],
    items: Sequence[T],
    *,
    setup: Callable[[], S] | None = None,
) -> Generator[tuple[int, R], None, None]:
    """`parse_executor(executor).imap(fn, items, setup=setup)`."""
    return parse_executor(executor).imap(fn, items, setup=setup)


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
