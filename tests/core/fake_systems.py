"""Systems used by the run tests (importable as tests.core.fake_systems via --system)."""

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
