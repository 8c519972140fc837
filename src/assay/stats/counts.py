"""The paired test for counts where any increase matters (leaked chunks, policy violations).

A count series gives every entry a non-negative integer, and the question a change raises is
one-sided: did it make things *worse*? `sign_test_worse` is the exact binomial sign test on the
entries whose count moved. Under no change an entry that moved is equally likely to have moved
either way, so with ``worse`` entries moving in the harmful direction and ``better`` in the other,

    p = P[Binomial(worse + better, 1/2) >= worse]

(scipy's ``binomtest(worse, worse + better, 0.5, alternative="greater")``). Entries whose count
did not move carry no information about the direction and are left out, as McNemar leaves out
the concordant pairs. The test is one-sided on purpose: a count that falls is good news, never
evidence of harm, so it does not spend a gate's alpha. The sizes of the moves are not used
(one entry leaking 40 chunks is one harmful move); the paired delta's interval reports size.
"""

from __future__ import annotations

from assay.stats._errors import Issue, StatsInputError
from assay.stats.paired import TestResult, binom_half

__all__ = ["sign_test_worse"]


def sign_test_worse(worse: int, better: int) -> TestResult:
    """Exact one-sided sign test that moves in the harmful direction outnumber the others.

    ``worse``: entries whose count moved the harmful way (rose, for a count where lower is
    better); ``better``: entries that moved the other way. The statistic is ``worse``.

    >>> round(sign_test_worse(5, 0).pvalue, 5)
    0.03125
    >>> sign_test_worse(0, 4).pvalue
    1.0
    """
    for name, v in (("worse", worse), ("better", better)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise StatsInputError.of([Issue(name, f"must be a non-negative int, not {v!r}")])
    m = worse + better
    if m == 0:
        return TestResult("sign_test_worse", 0.0, 1.0, 0, "exact binomial, one-sided (worse)")
    p = 1.0 if worse == 0 else binom_half(worse - 1, m, upper=True)
    return TestResult(
        "sign_test_worse", float(worse), min(1.0, p), m, "exact binomial, one-sided (worse)"
    )
