"""The comparison ledger: numbering, concurrency, bad lines."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.compare import compare_arrays
from assay.compare.ledger import append_ledger, ledger_count, ledger_path, read_ledger
from assay.errors import DataError


def test_concurrent_appends_get_distinct_consecutive_numbers(tmp_path: Path) -> None:
    ds = tmp_path / "golden.jsonl"
    ts: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        rec = append_ledger(ds, {"command": "compare", "i": i})
        with lock:
            ts.append(rec["t"])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(ts) == list(range(1, 13))
    assert ledger_count(ds) == 12
    assert [r["t"] for r in read_ledger(ds)] == list(range(1, 13))


def test_builder_sees_t_and_bad_lines_are_reported(tmp_path: Path) -> None:
    ds = tmp_path / "golden.jsonl"
    rec = append_ledger(ds, lambda t: {"factor": t * (t + 1)})
    assert rec["t"] == 1 and rec["factor"] == 2 and rec["schema"] == "assay.ledger/1"
    with open(ledger_path(ds), "a", encoding="utf-8") as fh:
        fh.write('{"t": 2, "torn\n')
    with pytest.raises(DataError) as info:
        read_ledger(ds)
    assert info.value.problems[0].line == 2


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(8, 60))
def test_swapping_runs_mirrors_the_comparison(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    ids = [f"e{i}" for i in range(n)]
    cats = [("a", "b")[i % 2] for i in range(n)]
    b = {"complete@5": (rng.random(n) < 0.6).astype(float), "recall@5": rng.integers(0, 3, n) / 2}
    c = {"complete@5": (rng.random(n) < 0.6).astype(float), "recall@5": rng.integers(0, 3, n) / 2}
    kw = {"n_resamples": 200, "n_permutations": 200, "seed": 1}
    fwd = compare_arrays(ids, cats, b, c, **kw)  # type: ignore[arg-type]
    rev = compare_arrays(ids, cats, c, b, **kw)  # type: ignore[arg-type]
    renamed = compare_arrays([f"x-{i}" for i in ids], cats, b, c, **kw)  # type: ignore[arg-type]
    for cat in ("a", "b"):
        for m in ("complete@5", "recall@5"):
            f, r = fwd.categories[cat].metrics[m], rev.categories[cat].metrics[m]
            assert f.fixed == r.broken and f.broken == r.fixed
            assert f.p == pytest.approx(r.p) and f.p_holm == pytest.approx(r.p_holm)
            assert f.delta.value == pytest.approx(-r.delta.value)
            assert (
                0.0 <= f.p <= 1.0 and f.delta.low <= f.delta.value + 1e-12 <= f.delta.high + 2e-12
            )
            assert (
                renamed.categories[cat].metrics[m].delta == f.delta
            )  # ids do not enter the numbers


def test_one_line_per_distinct_comparison(tmp_path: Path) -> None:
    from assay.compare.ledger import comparison_key

    ds = tmp_path / "golden.jsonl"
    key = comparison_key(
        dataset_version="1.0",
        dataset_hash="sha256:ab",
        runs=["r1", "r2"],
        metrics=["complete@5", "recall@5"],
        k=5,
        level="chunk",
    )
    first = append_ledger(ds, {"command": "compare"}, key=key)
    again = append_ledger(ds, lambda t: pytest.fail("not built for a repeat"), key=key)
    assert (first["t"], first["repeat"], again["t"], again["repeat"]) == (1, False, 1, True)
    # runs as a set, metrics as a set: the same two-sided comparison
    swapped = comparison_key(
        dataset_version="1.0",
        dataset_hash="sha256:ab",
        runs=["r2", "r1"],
        metrics=["recall@5", "complete@5"],
        k=5,
        level="chunk",
    )
    assert swapped == key
    other = comparison_key(
        dataset_version="1.0",
        dataset_hash="sha256:ab",
        runs=["r1", "r2"],
        metrics=["complete@5"],
        k=10,
        level="chunk",
    )
    assert append_ledger(ds, {"command": "gate"}, key=other)["t"] == 2
    assert ledger_count(ds) == 2
    # a line written before keys were stored is matched by its fields
    with open(ledger_path(ds), "a", encoding="utf-8") as fh:
        fh.write(
            '{"t": 3, "dataset_version": "2.0", "dataset_hash": "h", "base_run": "a", '
            '"cand_run": "b", "metrics": ["mrr"], "k": 5, "level": "chunk"}\n'
        )
    old = comparison_key(
        dataset_version="2.0",
        dataset_hash="h",
        runs=["b", "a"],
        metrics=["mrr"],
        k=5,
        level="chunk",
    )
    assert append_ledger(ds, {}, key=old) == {**read_ledger(ds)[2], "repeat": True}


def _with_latency(src: Path, dst: Path, ms: float) -> Path:
    import json

    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines() if line]
    dst.write_text("".join(json.dumps(r | {"latency_ms": ms}) + "\n" for r in rows))
    return dst


def test_a_rerun_that_differs_only_in_wall_time_is_the_same_comparison(
    make_case, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from assay.compare import compare_files
    from assay.runs import load_run

    ds, base, cand = make_case({"a": [(2, 0)] * 3 + [(2, 2)] * 9})
    first = _with_latency(cand, tmp_path / "cand1.jsonl", 12.5)
    again = _with_latency(cand, tmp_path / "cand2.jsonl", 40.25)  # the same calls, slower
    r1, r2 = load_run(first), load_run(again)
    assert r1.hash != r2.hash and r1.identity == r2.identity
    assert load_run(base).identity != r1.identity
    kw = {"n_resamples": 200, "n_permutations": 200}
    c1 = compare_files(ds, base, first, **kw)  # type: ignore[arg-type]
    c2 = compare_files(ds, base, again, **kw)  # type: ignore[arg-type]
    recs = read_ledger(ds)
    assert len(recs) == 1 and c1.ledger_t == c2.ledger_t == 1 and c2.ledger_repeat
    # a row whose hits differ is another run
    rows = first.read_text().splitlines()
    rows[0] = rows[0].replace('"retrieved": [', '"retrieved": [{"chunk_id": "other"}, ', 1)
    (tmp_path / "cand3.jsonl").write_text("\n".join(rows) + "\n")
    assert load_run(tmp_path / "cand3.jsonl").identity != r1.identity
