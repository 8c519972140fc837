from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.errors import UsageError
from assay.executors import Executor, imap, map_ordered, parse_executor


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
