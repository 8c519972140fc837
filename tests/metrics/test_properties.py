"""What must hold for every registered metric, on any gold and any ranking."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.metrics import families, parse
from assay.score import score_retrieval

from ._util import E, R

ids = st.sampled_from([f"c{i}" for i in range(12)])
piece = st.lists(ids, min_size=1, max_size=3)
path = st.lists(piece, min_size=1, max_size=3)
paths = st.lists(path, min_size=1, max_size=3)
# duplicates allowed: a run may repeat a chunk
ranking = st.lists(ids, min_size=0, max_size=15)


def _every_metric(k: int) -> list[str]:
    return [parse(f.name, k=k).name for f in families()]


@settings(max_examples=150, deadline=None)
@given(paths, ranking, st.integers(1, 10))
def test_every_registered_metric_is_in_the_unit_interval(ps: list, ret: list[str], k: int) -> None:
    names = _every_metric(k)
    s = score_retrieval([E("a", ps)], R({"a": ret}), k=k, metrics=names)
    assert list(s.per_entry) == names
    for m in names:
        v = s.rows[0][m]
        assert 0.0 <= v <= 1.0, (m, v)
        if parse(m).binary:
            assert v in (0.0, 1.0), (m, v)


@settings(max_examples=150, deadline=None)
@given(paths, ranking, ranking, st.integers(1, 10))
def test_a_superset_of_hits_never_lowers_recall_or_hit(
    ps: list, ret: list[str], more: list[str], k: int
) -> None:
    """Adding retrieved chunks to the top k (keeping the ones there) never lowers recall@k/hit@k."""
    base = list(dict.fromkeys(ret))[:k]
    sup = base + [x for x in dict.fromkeys(more) if x not in base]
    kk = max(len(sup), 1)
    names = [f"recall@{kk}", f"hit@{kk}", f"complete@{kk}"]
    a = score_retrieval([E("a", ps)], R({"a": base}), k=kk, metrics=names).rows[0]
    b = score_retrieval([E("a", ps)], R({"a": sup}), k=kk, metrics=names).rows[0]
    for m in names:
        assert b[m] >= a[m], m


@settings(max_examples=100, deadline=None)
@given(paths, ranking, st.integers(1, 10))
def test_hit_is_recall_above_zero_and_complete_is_recall_one(
    ps: list, ret: list[str], k: int
) -> None:
    r = score_retrieval([E("a", ps)], R({"a": ret}), k=k, metrics=_every_metric(k)).rows[0]
    assert r[f"hit@{k}"] == float(r[f"recall@{k}"] > 0)
    assert r[f"complete@{k}"] == float(r[f"recall@{k}"] == 1.0)
    assert r[f"hit@{k}"] >= r[f"complete@{k}"]
    assert (r[f"precision@{k}"] > 0) == (r[f"hit@{k}"] == 1.0)
