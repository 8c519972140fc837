"""`NearDuplicates` (prefix-filtered) answers exactly what comparing with every kept query does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.logs.classify import tokens
from assay.logs.sample import NearDuplicates, token_frequencies

_WORDS = ["acme", "revenue", "margin", "fy24", "q1", "capex", "ebitda", "debt", "cash", "zeta",
          "lease", "tax", "goodwill", "eps", "bank", "deposits"]  # fmt: skip
_query = st.lists(st.sampled_from(_WORDS), min_size=0, max_size=9).map(" ".join)


def _first_match(kept: list[str], query: str, threshold: float) -> int | None:
    tk = tokens(query)
    if not tk:
        return None
    for i, q in enumerate(kept):
        other = tokens(q)
        inter = len(tk & other)
        if inter and inter / (len(tk) + len(other) - inter) >= threshold:
            return i
    return None


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(st.tuples(st.booleans(), _query), max_size=60),
    threshold=st.sampled_from([0.0, 0.3, 0.5, 0.6, 2 / 3, 0.75, 0.8, 0.9, 1.0, 1.2]),
    rare_first=st.booleans(),
)
def test_matches_are_those_of_comparing_with_every_kept_query(
    steps: list[tuple[bool, str]], threshold: float, rare_first: bool
) -> None:
    """Any mix of adds and matches, at any threshold, with or without a token order: the first
    kept query each match names is the first one a full comparison finds."""
    freq = token_frequencies(q for _, q in steps) if rare_first else None
    nd = NearDuplicates(threshold=threshold, frequencies=freq)
    kept: list[str] = []
    for add, q in steps:
        assert nd.match(q) == _first_match(kept, q, threshold)
        if add:
            nd.add(q)
            kept.append(q)


def test_a_month_of_distinct_queries_is_not_compared_pair_by_pair() -> None:
    """20,000 queries of 200 companies x 100 asks: the index probes short lists (rare tokens
    first), so matching them all checks a few dozen kept queries each, not thousands."""
    asks = [f"{a} {b}" for a in ("revenue", "margin", "capex", "debt", "cash", "tax", "eps",
                                 "goodwill", "lease", "deposits") for b in range(10)]  # fmt: skip
    queries = [f"co{c:03d} {ask} fy{y}" for c in range(200) for ask in asks for y in (23,)]
    nd = NearDuplicates(frequencies=token_frequencies(queries))
    checked = 0
    real = NearDuplicates.match

    for q in queries:
        found = len({i for t in nd._prefix(tokens(q)) for i in nd._post.get(t, ())})
        checked += found
        if real(nd, q) is None:
            nd.add(q)
    assert checked / len(queries) < 60
