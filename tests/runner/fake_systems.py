"""Systems used by the run tests (importable as tests.runner.fake_systems via --system)."""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar

CALLS: list[tuple[str, dt.date | None, int]] = []


class Echo:
    """Returns chunk ids derived from the query; records every call with its as_of."""

    identity: ClassVar[dict[str, Any]] = {"kind": "echo", "version": 1}

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[dict[str, Any]]:
        CALLS.append((query, as_of, k))
        return [{"chunk_id": f"{query}-{i}", "score": float(k - i)} for i in range(k)]

    def answer(self, query: str, *, as_of: dt.date | None, hits: list[Any]) -> dict[str, Any]:
        return {"answer": f"answer to {query} as of {as_of}", "citations": [hits[0].chunk_id]}


def build(**options: Any) -> Echo:
    return Echo()


class NoAsOf:
    def retrieve(self, query: str, k: int) -> list[str]:
        return []


class Flaky(Echo):
    """Fails on the third call, to test resume."""

    def __init__(self) -> None:
        self.n = 0

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[dict[str, Any]]:
        self.n += 1
        if self.n == 3:
            raise RuntimeError("boom")
        return super().retrieve(query, as_of=as_of, k=k)


class Other(Echo):
    """Another system: different hits, its own identity."""

    identity: ClassVar[dict[str, Any]] = {"kind": "other", "version": 1}

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[dict[str, Any]]:
        CALLS.append((query, as_of, k))
        return [{"chunk_id": f"other-{query}-{i}"} for i in range(k)]


class FailsOn(Echo):
    """Raises on the query named `fail` (CLI: --system-arg fail=qc)."""

    def __init__(self, fail: str = "qc") -> None:
        self.fail = fail

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[dict[str, Any]]:
        if query == self.fail:
            raise RuntimeError(f"cannot answer {query}")
        return super().retrieve(query, as_of=as_of, k=k)


class Interrupts(Echo):
    """Ctrl-C on the query named `at`."""

    def __init__(self, at: str = "qc") -> None:
        self.at = at

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[dict[str, Any]]:
        if query == self.at:
            raise KeyboardInterrupt
        return super().retrieve(query, as_of=as_of, k=k)


class NaNScores(Echo):
    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[dict[str, Any]]:
        return [{"chunk_id": "x", "score": 1.0}, {"chunk_id": "y", "score": float("nan")}]


class Traced(Echo):
    def answer(self, query: str, *, as_of: dt.date | None, hits: list[Any]) -> dict[str, Any]:
        return {
            "answer": "a",
            "citations": [hits[0].chunk_id],
            "trace": {"as_of_type": type(as_of).__name__, "hit_type": type(hits[0]).__name__},
        }


class FailsOnEnv(Echo):
    """Raises on the query named by $ASSAY_TEST_FAIL (not part of its identity)."""

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[dict[str, Any]]:
        import os

        if query == os.environ.get("ASSAY_TEST_FAIL"):
            raise RuntimeError(f"cannot answer {query}")
        return super().retrieve(query, as_of=as_of, k=k)


class DiesOn(Echo):
    """Ends its own process on the query named `at` (a worker that dies), every time, or only
    the first time when `once_marker` names a file (created at the first death)."""

    def __init__(self, at: str = "qc", once_marker: str | None = None) -> None:
        self.at, self.once_marker = at, once_marker

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[dict[str, Any]]:
        import os
        from pathlib import Path

        if query == self.at:
            marker = Path(self.once_marker) if self.once_marker else None
            if marker is None or not marker.exists():
                if marker is not None:
                    marker.touch()
                os._exit(3)
        return super().retrieve(query, as_of=as_of, k=k)
