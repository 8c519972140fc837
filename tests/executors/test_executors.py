from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.errors import UsageError
from assay.executors import Executor, imap, map_ordered, parse_executor
from tests.fakeray import Die, DyingRay


def test_parse_executor() -> None:
    assert parse_executor("local") == Executor("local") and parse_executor(None).is_local
    assert parse_executor("ray") == Executor("ray", None)
    assert parse_executor("ray:auto", workers=3) == Executor("ray", "auto", 3)
    ex = parse_executor("ray:ray://head:10001")
    assert ex.address == "ray://head:10001" and str(ex) == "ray:ray://head:10001"
    for bad in ("dask", "ray:", "threads"):
        with pytest.raises(UsageError, match="unknown executor"):
            parse_executor(bad)
    with pytest.raises(UsageError, match="at least 1"):
        parse_executor("ray", workers=0)


class _State:
    def __init__(self) -> None:
        self.calls = 0
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_local_map_builds_state_once_keeps_order_and_closes_it() -> None:
    made: list[_State] = []

    def setup() -> _State:
        made.append(_State())
        return made[-1]

    def work(state: _State, x: int) -> tuple[int, int]:
        state.calls += 1
        return x * x, state.calls

    assert map_ordered("local", work, [3, 1, 2], setup=setup) == [(9, 1), (1, 2), (4, 3)]
    assert len(made) == 1 and made[0].closed
    assert list(imap("local", lambda s, x: x + 1, [1, 2])) == [(0, 2), (1, 3)]
    assert map_ordered("local", work, [], setup=setup) == [] and len(made) == 1


def test_ray_without_ray_says_which_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(UsageError, match=r"assay\[ray\]"):
        map_ordered("ray", lambda s, x: x, [1])


def test_cli_refuses_an_unknown_executor(tmp_path: Path) -> None:
    ds = tmp_path / "g.jsonl"
    ds.write_text('{"id": "a", "query": "q", "category": "c"}\n')
    res = CliRunner().invoke(
        app,
        [
            "run",
            str(ds),
            "--system",
            "bm25",
            "--out",
            str(tmp_path / "r.jsonl"),
            "--executor",
            "dask",
        ],
    )
    assert res.exit_code == 2 and "unknown executor" in res.output
    assert not (tmp_path / "r.jsonl").exists()
    assert os.listdir(tmp_path) == ["g.jsonl"]


class _FakeRay:
    """Just enough of Ray for `imap`: calls run at once on `work`, and `wait` hands over the
    ready refs latest first, which real Ray may do when several are ready together."""

    class exceptions:  # mirrors ray.exceptions
        class RayTaskError(Exception):
            def __init__(self, cause: BaseException) -> None:
                super().__init__(str(cause))
                self.cause = cause

    def __init__(self) -> None:
        self.killed = 0

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 1.0}

    def put(self, value: object) -> object:
        return value

    def remote(self, **_: object) -> object:
        fake = self

        class _Actor:
            def __init__(self, setup: object) -> None:
                from assay.executors import _Worker

                self.inner = _Worker(setup)  # type: ignore[arg-type]
                self.work = self

            def remote(self, fn: object, i: int, item: object) -> tuple[str, object]:
                try:
                    return ("ok", self.inner.work(fn, i, item))  # type: ignore[arg-type]
                except Exception as exc:
                    return ("err", fake.exceptions.RayTaskError(exc))

        class _Cls:
            @staticmethod
            def remote(setup: object) -> _Actor:
                return _Actor(setup)

        return lambda _cls: _Cls

    def wait(self, refs: list[object], num_returns: int = 1) -> tuple[list[object], list[object]]:
        return refs[::-1][:num_returns], refs[::-1][num_returns:]

    def get(self, ref: tuple[str, object]) -> object:
        kind, value = ref
        if kind == "err":
            assert isinstance(value, BaseException)
            raise value
        return value

    def kill(self, _actor: object) -> None:
        self.killed += 1


def _fails_on(bad: set[int]) -> object:
    def fn(_state: object, x: int) -> int:
        if x in bad:
            raise ValueError(f"item {x} failed")
        return x * 10

    return fn


def test_a_failure_on_ray_comes_after_every_earlier_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """When a later item's failure is ready before an earlier item's result, the earlier results
    are still yielded first (none is lost), and the exception is the worker's own."""
    import assay.executors as ex_mod

    fake = _FakeRay()
    monkeypatch.setattr(ex_mod, "_ray", lambda _ex: fake)
    got: list[tuple[int, object]] = []
    with pytest.raises(ValueError, match="item 2 failed"):
        for pair in imap("ray", _fails_on({2}), [0, 1, 2, 3, 4, 5]):  # type: ignore[arg-type]
            got.append(pair)
    # every item before the failure is yielded (later ones may be too: they finished first)
    assert {0, 1} <= {i for i, _ in got} and 2 not in {i for i, _ in got}
    assert all(v == 10 * i for i, v in got)
    assert fake.killed == 1


def test_the_earliest_of_several_failures_on_ray_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    import assay.executors as ex_mod

    monkeypatch.setattr(ex_mod, "_ray", lambda _ex: _FakeRay())
    got: list[int] = []
    with pytest.raises(ValueError, match="item 1 failed"):
        for i, _ in imap("ray", _fails_on({1, 3}), [0, 1, 2, 3]):  # type: ignore[arg-type]
            got.append(i)
    assert 0 in got and 1 not in got


def test_executor_kinds_build_their_implementations() -> None:
    from assay.executors import LocalExecutor, RayExecutor

    assert isinstance(Executor("local"), LocalExecutor) and isinstance(
        parse_executor(None), LocalExecutor
    )
    assert isinstance(Executor("ray", "auto", 3), RayExecutor)
    assert parse_executor("local", workers=4) == LocalExecutor("local", None, 4)
    with pytest.raises(UsageError, match="unknown executor kind"):
        Executor("dask")


def test_local_threads_yield_every_earlier_item_before_the_earliest_failure() -> None:
    """On threads, items finish in any order; a failure is raised only once every earlier item
    has been yielded, and the earliest failure wins (as on Ray)."""
    import threading
    import time

    from assay.executors import LocalExecutor

    release = threading.Event()

    def work(_state: object, x: int) -> int:
        if x in (2, 4):
            raise ValueError(f"item {x} failed")
        if x == 0:
            release.wait(5)  # item 0 finishes after the failures are in
        return x * 10

    got: list[tuple[int, int]] = []
    stream = LocalExecutor(workers=4).imap(work, list(range(6)))
    with pytest.raises(ValueError, match="item 2 failed"):
        for pair in stream:
            got.append(pair)
            if pair[0] != 0:
                release.set()
        time.sleep(0)
    assert (0, 0) in got and (1, 10) in got and all(i not in (2, 4) for i, _ in got)


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("killer", [1, 5, 11])
def test_a_dead_worker_names_the_item_that_killed_it_not_one_that_finished_beside_it(
    monkeypatch: pytest.MonkeyPatch, workers: int, killer: int
) -> None:
    """An item that kills every worker it reaches: the items sharing its batch are retried and
    give their results, and the error names the killer -- not an item whose retry finished on
    the same worker just before it died (reported after the death), nor one queued behind it."""
    import assay.executors as ex_mod
    from assay.executors import WorkerLost

    fake = DyingRay(workers)
    monkeypatch.setattr(ex_mod, "_ray", lambda _ex: fake)

    def fn(_state: object, x: int) -> int:
        if x == killer:
            raise Die
        return x * 10

    got: dict[int, int] = {}
    with pytest.raises(WorkerLost) as ei:
        for i, v in imap(parse_executor("ray", workers=workers), fn, list(range(16))):
            got[i] = v
    assert ei.value.index == killer
    assert set(range(killer)) <= set(got) and killer not in got
    assert all(v == 10 * i for i, v in got.items())
    assert fake.sent_to_dead == 0  # no call went to a worker known to be dead


@pytest.mark.parametrize("workers", [1, 2])
def test_a_worker_that_dies_once_loses_nothing(
    monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    import assay.executors as ex_mod

    fake = DyingRay(workers)
    monkeypatch.setattr(ex_mod, "_ray", lambda _ex: fake)
    died: list[int] = []

    def fn(_state: object, x: int) -> int:
        if x == 6 and not died:
            died.append(x)
            raise Die
        return x * 10

    out = map_ordered(parse_executor("ray", workers=workers), fn, list(range(20)))
    assert out == [10 * i for i in range(20)] and died == [6]
    assert fake.sent_to_dead == 0
