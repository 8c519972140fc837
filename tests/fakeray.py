"""A stand-in for Ray whose workers die, for tests of what the executor does then (no Ray
process needed: everything runs in the test's own process)."""

from __future__ import annotations

from typing import Any

__all__ = ["Die", "DyingRay"]


class Die(BaseException):
    """Raised by an item that kills its worker (not an Exception: the batch does not catch it)."""


class DyingRay:
    """Ray with workers that die: each actor runs its queued calls in order; an item raising
    `Die` ends the actor, and every call still queued on it fails with RayActorError. `wait`
    lets every actor run all it holds before answering, and hands over failed calls before
    finished ones -- real Ray may report a worker's death before a result it sent just before."""

    class exceptions:  # mirrors ray.exceptions
        class RayActorError(Exception):
            actor_init_failed = False

        class RayTaskError(Exception):
            pass

    def __init__(self, cpus: int) -> None:
        self.cpus = cpus
        self.actors: list[Any] = []
        self.sent_to_dead = 0  # calls sent to a worker after its death was reported

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": float(self.cpus)}

    def put(self, value: object) -> object:
        return value

    def remote(self, **_: object) -> object:
        fake = self

        class _Ref:
            def __init__(self, actor: Any, args: tuple[Any, ...]) -> None:
                self.actor, self.args = actor, args
                self.state: tuple[str, Any] | None = None  # ("ok", value) or ("dead", None)

        class _Call:
            def __init__(self, actor: Any) -> None:
                self.actor = actor

            def remote(self, fn: Any, i: int, items: Any) -> _Ref:
                ref = _Ref(self.actor, (fn, i, items))
                if self.actor.reported:
                    fake.sent_to_dead += 1
                if self.actor.dead:
                    ref.state = ("dead", None)
                else:
                    self.actor.queue.append(ref)
                return ref

        class _Actor:
            def __init__(self, setup: Any) -> None:
                from assay.executors import _Worker

                self.inner = _Worker(setup)
                self.queue: list[_Ref] = []
                self.dead = False
                self.reported = False  # a call of it has raised RayActorError
                self.work = _Call(self)
                fake.actors.append(self)

            def run(self) -> None:
                while self.queue and not self.dead:
                    ref = self.queue.pop(0)
                    try:
                        ref.state = ("ok", self.inner.work(*ref.args))
                    except Die:
                        self.dead = True
                        ref.state = ("dead", None)
                for ref in self.queue:
                    ref.state = ("dead", None)
                if self.dead:
                    self.queue = []

        class _Cls:
            @staticmethod
            def remote(setup: Any) -> _Actor:
                return _Actor(setup)

        return lambda _cls: _Cls

    def wait(self, refs: list[Any], num_returns: int = 1) -> tuple[list[Any], list[Any]]:
        for actor in self.actors:
            actor.run()
        ready = sorted((r for r in refs if r.state is not None), key=lambda r: r.state[0] != "dead")
        assert ready, "nothing can finish: the executor waits on a call no worker will run"
        return ready[:num_returns], [r for r in refs if r not in ready[:num_returns]]

    def get(self, ref: Any) -> object:
        kind, value = ref.state
        if kind == "dead":
            ref.actor.reported = True
            raise self.exceptions.RayActorError("the worker died")
        return value

    def kill(self, actor: Any) -> None:
        actor.dead = True
