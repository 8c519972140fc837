"""`run_system(..., executor="ray")` on a local Ray started here (2 CPUs): the same run file as
the local executor on the synthetic room; the driver keeps the cache; a failure names its entry.

Skipped, with the reason, only where the `ray` extra is not installed."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.rayutil import local_ray as start_local_ray

from assay.cache import RequestCache
from assay.corpus import build_corpus
from assay.dataset import load_dataset
from assay.runner import run_system
from assay.synth.generate import generate_room
from assay.systems import SystemCallError

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'assay[ray]')")

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray with 2 CPUs for this module; its workers import assay and the test systems."""
    with start_local_ray(ray):
        yield


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("room")
    generate_room(base / "room", formats=("html",), seed=11, companies=3, years=2)
    build_corpus(base / "room", meta=base / "room" / "documents.jsonl", out_dir=base / "corpus")
    return base


_LATENCY = re.compile(rb'"latency_ms": [0-9.e+-]+')


def _without_latency(path: Path) -> bytes:
    """The file with each row's measured wall time (`latency_ms`) blanked: nothing else may
    differ between executors."""
    return _LATENCY.sub(b'"latency_ms": _', path.read_bytes())


def test_ray_writes_the_local_executors_file_on_the_synthetic_room(
    local_ray: None, room: Path
) -> None:
    ds = load_dataset(room / "room" / "golden.jsonl")
    opts = {"corpus": room / "corpus", "mode": "bm25"}
    local = room / "local.jsonl"
    remote = room / "ray.jsonl"
    run_system(
        ds,
        "filings",
        options=opts,
        k=10,
        cache=RequestCache(room / "c1.sqlite"),
        out=local,
        progress=False,
    )
    run = run_system(
        ds,
        "filings",
        options=opts,
        k=10,
        cache=RequestCache(room / "c2.sqlite"),
        out=remote,
        progress=False,
        executor="ray",
        workers=2,
    )
    assert run.meta["called_rows"] == len(ds.entries) > 20
    assert _without_latency(local) == _without_latency(remote)
    assert len(_LATENCY.findall(local.read_bytes())) == len(ds.entries)
    m1 = json.loads((room / "local.jsonl.meta.json").read_text())
    m2 = json.loads((room / "ray.jsonl.meta.json").read_text())
    for m in (m1, m2):
        m.pop("written_at")
        m.pop("run_hash")
    assert m1 == m2
    assert not Path(f"{remote}.partial").exists()

    # the driver owns the cache: a rerun calls no worker
    again = run_system(
        ds,
        "filings",
        options=opts,
        k=10,
        cache=RequestCache(room / "c2.sqlite"),
        out=room / "again.jsonl",
        progress=False,
        executor="ray",
    )
    assert again.meta["cache_hits"] == len(ds.entries) and again.meta["called_rows"] == 0
    assert (room / "again.jsonl").read_bytes() == remote.read_bytes()


def test_a_failing_call_on_a_worker_names_its_entry_and_keeps_the_journal(
    local_ray: None, tmp_path: Path
) -> None:
    from .test_run_system import run_on_ray_until_c_fails

    error = run_on_ray_until_c_fails(tmp_path)
    assert error.entry_id == "c" and "cannot answer qc" in str(error)
    journal = [json.loads(x) for x in Path(f"{tmp_path}/r.jsonl.partial").read_text().splitlines()]
    assert [r["row"]["id"] for r in journal] == ["a", "b"]  # one worker: in order, up to c
    assert not (tmp_path / "r.jsonl").exists()


def test_a_sweep_on_ray_matches_the_local_sweep(local_ray: None, room: Path) -> None:
    from assay.sweep import run_sweep

    grid = [{"mode": "bm25", "k": 5}, {"mode": "bm25", "k": 10, "drop_scope": True}]
    kw = {"corpus": room / "corpus", "grid": grid, "score_k": 5, "skip_stale": True}
    golden = room / "room" / "golden.jsonl"
    local = run_sweep(golden, out=room / "sw-local", **kw)
    remote = run_sweep(golden, out=room / "sw-ray", executor="ray", **kw)
    assert remote.executor == "ray" and local.executor == "local"
    assert [(r.name, r.values, r.deltas, r.p_holm) for r in remote.rows] == [
        (r.name, r.values, r.deltas, r.p_holm) for r in local.rows
    ]


def test_a_dead_worker_is_retried_once_then_the_lost_entry_is_named(
    local_ray: None, tmp_path: Path
) -> None:
    import datetime as dt

    from assay.dataset import Entry

    from .fake_systems import DiesOn

    # 60 entries: after the first calls, entries travel in batches of several
    entries = [
        Entry(id=f"e{i:02d}", query=f"q{i}", category="c", as_of=dt.date(2024, 1, 1))
        for i in range(60)
    ]

    def run(system: DiesOn, name: str, executor: str | None = "ray") -> Any:
        return run_system(
            entries,
            system,
            k=2,
            cache=RequestCache(tmp_path / f"{name}.sqlite"),
            out=tmp_path / f"{name}.jsonl",
            progress=False,
            executor=executor,
            workers=2 if executor else None,
        )

    # the worker dies once, on q40: every entry it held is retried on another worker, and the
    # run file is the local executor's
    run(DiesOn("none"), "local", executor=None)
    once = run(DiesOn("q40", once_marker=str(tmp_path / "died")), "once")
    assert (tmp_path / "died").exists() and once.meta["called_rows"] == len(entries)
    assert _without_latency(tmp_path / "once.jsonl") == _without_latency(tmp_path / "local.jsonl")

    # q40 kills every worker it reaches: after one retry the error names it, not the entries
    # that shared its batch
    with pytest.raises(SystemCallError) as ei:
        run(DiesOn("q40"), "always")
    assert ei.value.entry_id == "e40" and "died" in str(ei.value)
    journal = (tmp_path / "always.jsonl.partial").read_text().splitlines()
    saved = {json.loads(x)["row"]["id"] for x in journal}
    assert {e.id for e in entries[:40]} <= saved and "e40" not in saved
