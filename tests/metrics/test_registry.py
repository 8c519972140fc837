"""The metric registry: parse is the one reader of metric names; families declare themselves."""

from __future__ import annotations

import pytest

from assay.metrics import (
    Metric,
    MetricError,
    default_metrics,
    families,
    family,
    listing,
    parse,
    parse_list,
    register,
    unregister,
)

BUILTIN = {"recall", "complete", "mrr", "ndcg", "hit", "precision"}


def test_builtin_families_are_registered_with_their_kind() -> None:
    fams = {f.name: f for f in families()}
    assert set(fams) >= BUILTIN
    assert {n for n in BUILTIN if fams[n].binary} == {"complete", "hit"}
    assert {n for n in BUILTIN if not fams[n].cutoff} == {"mrr"}
    assert all(fams[n].aggregate == "mean" and fams[n].description for n in BUILTIN)
    assert [m.name for m in default_metrics(5)] == ["recall@5", "complete@5", "mrr", "ndcg@5"]
    for pattern in ("recall@k", "complete@k", "mrr", "ndcg@k", "hit@k", "precision@k"):
        assert pattern in listing()


@pytest.mark.parametrize(
    ("text", "family_", "k"),
    [
        ("ndcg@10", "ndcg", 10),
        ("recall@5", "recall", 5),
        ("  nDCG @ 3 ", "ndcg", 3),
        ("HIT@1", "hit", 1),
        ("precision@20", "precision", 20),
        ("mrr", "mrr", None),
        ("MRR", "mrr", None),
    ],
)
def test_parse_and_round_trip(text: str, family_: str, k: int | None) -> None:
    m = parse(text)
    assert m == Metric(family_, k)
    assert parse(str(m)) == m and str(m) == m.name
    assert parse(m) is m
    assert hash(m) == hash(Metric(family_, k))  # a value: usable as a key
    assert m.binary == family(family_).binary


def test_bare_cutoff_family_takes_the_default_k() -> None:
    assert parse("recall", k=7) == Metric("recall", 7)
    assert parse("mrr", k=7) == Metric("mrr")  # no cutoff: k does not apply
    assert parse("ndcg@3", k=7) == Metric("ndcg", 3)  # an explicit cutoff wins
    assert [m.name for m in parse_list("recall,hit@3, mrr,recall@5", k=5)] == [
        "recall@5",
        "hit@3",
        "mrr",
    ]
    assert [m.name for m in parse_list(["complete", "recall@5,ndcg"], k=5)] == [
        "complete@5",
        "recall@5",
        "ndcg@5",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("accuracy@5", "unknown metric 'accuracy@5'; registered metrics: "),
        ("recall", "recall needs a cutoff, e.g. recall@5"),
        ("recall@0", "bad cutoff in 'recall@0': k must be an integer >= 1"),
        ("recall@x", "bad cutoff in 'recall@x'"),
        ("recall@-1", "bad cutoff"),
        ("recall@", "bad cutoff"),
        ("mrr@5", "mrr takes no cutoff"),
        ("", "cannot read metric ''"),
        ("recall@5@6", "bad cutoff"),
    ],
)
def test_bad_names_say_what_exists(text: str, message: str) -> None:
    with pytest.raises(MetricError) as ei:
        parse(text)
    assert message in str(ei.value)
    if "unknown" in message:
        assert "recall@k" in str(ei.value) and "hit@k" in str(ei.value)
    assert isinstance(ei.value, ValueError)  # library callers may catch ValueError


def test_metric_values_are_checked_when_built() -> None:
    with pytest.raises(MetricError, match="needs a cutoff"):
        Metric("ndcg")
    with pytest.raises(MetricError, match="takes no cutoff"):
        Metric("mrr", 5)
    with pytest.raises(MetricError, match="integer >= 1"):
        Metric("recall", 0)
    with pytest.raises(MetricError, match="unknown metric 'nope'"):
        Metric("nope", 1)
    with pytest.raises(MetricError, match="no metric given"):
        parse_list(" , ")


def test_register_refuses_duplicates_bad_names_and_other_aggregates() -> None:
    def fn(ctx: object, k: int | None) -> object:
        """A description."""
        return None

    with pytest.raises(MetricError, match="already registered"):
        register("recall", binary=False, cutoff=True)(fn)  # type: ignore[arg-type]
    with pytest.raises(MetricError, match="lower-case"):
        register("Bad-Name", binary=False, cutoff=True)
    with pytest.raises(MetricError, match="aggregate 'median' is not supported"):
        register("toy_median", binary=False, cutoff=True, aggregate="median")  # type: ignore[arg-type]
    with pytest.raises(MetricError, match="description"):
        register("toy_nodoc", binary=False, cutoff=True)(lambda ctx, k: None)  # type: ignore[arg-type,return-value]
    try:
        register("toy_desc", binary=True, cutoff=False)(fn)  # type: ignore[arg-type]
        assert family("toy_desc").description == "A description."
        assert parse("toy_desc").binary
    finally:
        unregister("toy_desc")
    with pytest.raises(MetricError, match="unknown metric"):
        parse("toy_desc")


def test_the_docs_define_every_builtin_metric() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    scores = (root / "docs" / "scores.md").read_text(encoding="utf-8")
    for f in families():
        if f.name in BUILTIN:
            assert f"| `{f.pattern}` |" in scores, f.pattern
