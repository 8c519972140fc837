"""The vectorised scorer against a plain reference written from the metric definitions.

The reference walks every entry in Python: the first rank of every chunk in the ranking, then per
path its recall@k and nDCG@k, the best path (highest recall, then nDCG, then first listed), and
MRR and precision@k over every alternative. The fast path must give the same values on random
runs with tied scores, repeated chunks, several paths, pieces with alternatives, rows missing or
in another order, rows long enough to be cut into segments, entries with more alternatives than
one round of comparisons takes, and cache blocks small enough that every block boundary is hit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.metrics._util import E

import assay.score._ranks as ranks_module
from assay.gold import resolve_gold
from assay.metrics import parse_list
from assay.metrics.context import NEVER
from assay.runs import Run
from assay.score import compute_metrics, score_retrieval
from assay.score._ranks import Hits, first_ranks

METRICS = ("recall", "complete", "ndcg", "hit", "precision")


def reference(paths: list[list[list[str]]], first: dict[str, int], k: int) -> dict[str, float]:
    """Every metric of one entry from the definitions; ``first``: chunk -> its first rank."""

    def piece_rank(piece: list[str]) -> int | None:
        found = [first[c] for c in piece if c in first]
        return min(found) if found else None

    scored = []
    for i, path in enumerate(paths):
        rs = [piece_rank(p) for p in path]
        within = [r for r in rs if r is not None and r < k]
        recall = len(within) / len(path)
        dcg = sum(1.0 / math.log2(r + 2) for r in within)
        idcg = sum(1.0 / math.log2(j + 2) for j in range(min(k, len(path))))
        scored.append((recall, min(dcg / idcg, 1.0), -i))
    recall, ndcg, _ = max(scored)
    every = [r for path in paths for piece in path if (r := piece_rank(piece)) is not None]
    relevant = {first[c] for path in paths for piece in path for c in piece if c in first}
    return {
        f"recall@{k}": recall,
        f"complete@{k}": float(recall == 1.0),
        f"ndcg@{k}": ndcg,
        f"hit@{k}": float(recall > 0.0),
        f"precision@{k}": len({r for r in relevant if r < k}) / k,
        "mrr": 1.0 / (min(every) + 1) if every else 0.0,
    }


def _first(ranking: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r, c in enumerate(ranking):
        out.setdefault(c, r)
    return out


def _check(got: dict[str, Any], want: dict[str, float], where: str) -> None:
    for name, value in want.items():
        if name.startswith("ndcg"):
            assert got[name] == pytest.approx(value, abs=1e-12), (where, name)
        else:
            assert got[name] == value, (where, name)


ids = st.sampled_from([f"c{i}" for i in range(14)])
piece = st.lists(ids, min_size=1, max_size=3)
path = st.lists(piece, min_size=1, max_size=4)
paths = st.lists(path, min_size=1, max_size=3)
ranking = st.lists(ids, min_size=0, max_size=25)  # repeats allowed


@pytest.fixture(params=[1 << 17, 7], ids=["default-blocks", "tiny-blocks"])
def cells(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Run each test with the default cache block and with blocks of a row or two."""
    monkeypatch.setattr(ranks_module, "_CELLS", request.param)
    return int(request.param)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.tuples(paths, ranking, st.booleans()), min_size=1, max_size=10),
    st.integers(1, 8),
    st.randoms(use_true_random=False),
)
def test_chunk_level_matches_the_reference(cells: int, data: list[Any], k: int, rnd: Any) -> None:
    entries = [E(f"e{i}", ps) for i, (ps, _, _) in enumerate(data)]
    rows = [
        {
            "id": f"e{i}",
            # tied scores: ranks follow the list's order whatever the scores say
            "retrieved": [{"chunk_id": c, "score": 1.0} for c in ret],
        }
        for i, (_, ret, keep) in enumerate(data)
        if keep
    ]
    rnd.shuffle(rows)  # rows in another order than the dataset
    names = [f"{m}@{k}" for m in METRICS] + ["mrr"]
    s = score_retrieval(entries, Run.from_rows(rows), k=k, metrics=names, allow_missing=True)
    by_id = {r["id"]: r for r in s.rows}
    for i, (ps, ret, keep) in enumerate(data):
        _check(by_id[f"e{i}"], reference(ps, _first(ret if keep else []), k), f"e{i}")


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(paths, st.lists(st.tuples(ids, st.integers(0, 12)), max_size=30)),
        min_size=1,
        max_size=8,
    ),
    st.integers(1, 8),
    st.randoms(use_true_random=False),
)
def test_general_path_with_tied_ranks_matches_the_reference(
    cells: int, data: list[Any], k: int, rnd: Any
) -> None:
    """(entry, rank, code) triples in any order, several items at one rank (as pages of one
    chunk are at page level): a key counts at the smallest rank it is retrieved at."""
    entries = [E(f"e{i}", ps) for i, (ps, _) in enumerate(data)]
    gold = resolve_gold(entries)
    vocab = [f"c{i}" for i in range(14)]
    triples = [(i, r, int(c[1:])) for i, (_, hits) in enumerate(data) for c, r in hits]
    rnd.shuffle(triples)
    arr = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    got = compute_metrics(
        gold,
        arr[:, 0],
        arr[:, 1],
        arr[:, 2],
        vocab,
        [k],
        metrics=parse_list([f"{m}@{k}" for m in METRICS] + ["mrr"]),
    )
    for i, (ps, hits) in enumerate(data):
        first: dict[str, int] = {}
        for c, r in hits:
            first[c] = min(r, first.get(c, r))
        want = reference(ps, first, k)
        _check({m: float(v[i]) for m, v in got.items()}, want, f"e{i}")


def _reference_ranks(
    pair_entry: list[int], pair_code: list[int], rows: list[list[tuple[int, int]]]
) -> list[int]:
    out = []
    for e, c in zip(pair_entry, pair_code, strict=True):
        found = [r for code, r in rows[e] if code == c] if c >= 0 else []
        out.append(min(found) if found else int(NEVER))
    return out


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.just(n),
            # per entry: distinct codes (up to 40, so that some entries need several rounds)
            st.lists(st.sets(st.integers(-1, 49), max_size=40), min_size=n, max_size=n),
            # per entry: a ranking, sometimes long enough to be cut into segments (drawn from
            # a seed: hypothesis is slow at drawing long lists)
            st.lists(
                st.one_of(
                    st.lists(st.integers(0, 49), max_size=20),
                    st.tuples(st.integers(0, 2**32 - 1), st.integers(300, 700)).map(
                        lambda sl: np.random.default_rng(sl[0]).integers(0, 50, sl[1]).tolist()
                    ),
                ),
                min_size=n,
                max_size=n,
            ),
        )
    ),
    st.sampled_from([50, 1 << 20, 1 << 40]),  # uint16, uint32 and int64 comparisons
    st.booleans(),
)
def test_first_ranks_kernel_matches_the_reference(
    cells: int, data: Any, n_codes: int, as_triples: bool
) -> None:
    n, code_sets, rankings = data
    pair_entry = [e for e, codes in enumerate(code_sets) for _ in codes]
    pair_code = [c for codes in code_sets for c in sorted(codes)]
    rows = [list(zip(r, range(len(r)), strict=True)) for r in rankings]
    if as_triples:
        flat = [(e, r, c) for e, row in enumerate(rows) for c, r in row]
        arr = np.asarray(flat, dtype=np.int64).reshape(-1, 3)
        hits = Hits.from_triples(arr[:, 0], arr[:, 1], arr[:, 2], n_codes, n)
    else:
        lengths = [len(r) for r in rankings]
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        codes = np.asarray([c for r in rankings for c in r], dtype=np.int64)
        hits = Hits.from_run(offsets, codes, n_codes, np.arange(n, dtype=np.int64))
    got = first_ranks(np.asarray(pair_entry, np.int64), np.asarray(pair_code, np.int64), hits)
    assert got.tolist() == _reference_ranks(pair_entry, pair_code, rows)


def test_first_ranks_with_rows_missing_and_reordered(cells: int) -> None:
    rng = np.random.default_rng(5)
    n_rows, width = 40, 30
    codes = rng.integers(0, 60, size=n_rows * width).astype(np.int64)
    offsets = np.arange(0, n_rows * width + 1, width, dtype=np.int64)
    row_of = rng.permutation(n_rows + 10)[:n_rows] - 10  # some entries have no row
    row_of[row_of < 0] = -1
    pair_entry = np.repeat(np.arange(n_rows, dtype=np.int64), 3)
    pair_code = np.concatenate([rng.choice(60, 3, replace=False) for _ in range(n_rows)])
    got = first_ranks(pair_entry, pair_code, Hits.from_run(offsets, codes, 60, row_of))
    rows = [
        list(zip(codes[offsets[r] : offsets[r + 1]].tolist(), range(width), strict=True))
        if r >= 0
        else []
        for r in row_of
    ]
    assert got.tolist() == _reference_ranks(pair_entry.tolist(), pair_code.tolist(), rows)


def test_the_gold_keeps_one_pair_per_entry_and_chunk() -> None:
    """A chunk named in two paths of an entry (or twice in a piece) is searched for once."""
    gold = resolve_gold([E("a", [[["x", "x"], ["y"]], [["x"]]]), E("b", [[["x"]]])])
    assert gold.pair_entry.tolist() == [0, 0, 1]
    assert [gold.alt_keys[int(np.flatnonzero(gold.alt_key_id == k)[0])] for k in gold.pair_key] == [
        "x",
        "y",
        "x",
    ]
    assert gold.alt_pair.tolist() == [0, 0, 1, 0, 2]
    s = score_retrieval(
        [E("a", [[["x", "x"], ["y"]], [["x"]]]), E("b", [[["x"]]])],
        Run.from_rows([{"id": "a", "retrieved": ["q", "x"]}, {"id": "b", "retrieved": ["x"]}]),
        k=2,
    )
    assert [r["ranks"] for r in s.rows] == [[[2, None], [2]], [[1]]]


def test_a_run_without_rows_scores_every_entry_as_retrieving_nothing() -> None:
    """An empty run with allow_missing used to fail with an IndexError on the row offsets."""
    s = score_retrieval([E("a", [[["x"]]])], Run.from_rows([]), k=3, allow_missing=True)
    assert s.rows[0]["recall@3"] == 0.0 and s.rows[0]["mrr"] == 0.0
    assert s.rows[0]["ranks"] == [[None]]
