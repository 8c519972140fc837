from __future__ import annotations

import pytest

from assay.logs.classify import Classifier


@pytest.mark.parametrize(
    ("query", "category"),
    [
        ("AVER fiscal '22 EPS after the restatement", "amendment_restatement"),
        ("KEST EIN", "exact_identifier"),
        ("commission file no. Kestrel Systems", "exact_identifier"),
        ("sub rev growth y/y", "comparison"),
        ("what did AVER just report for quarterly top line", "temporal"),
        ("Averix company-specific risk in 1A", "narrative"),
        ("subs revenue FY2022 Averix", "numeric_lookup"),
    ],
)
def test_rules(query: str, category: str) -> None:
    c = Classifier().classify(query)
    assert c.category == category
    assert c.confidence == 0.5  # one source of evidence: the rule
    assert "rule" in c.reason


def test_neighbours_and_confidence() -> None:
    clf = Classifier(
        [
            ("Averix NIM FY23", "unanswerable"),
            ("Averix net income fiscal '22", "ambiguous"),
            ("subs revenue FY2022 Averix Technologies", "numeric_lookup"),
        ]
    )
    # tokens (abbreviations expanded, stop words dropped): the exact golden query has
    # similarity 1; the two others share only "averix": 1/7 and 1/9
    c = clf.classify("subs revenue FY2022 Averix Technologies")
    assert c.category == "numeric_lookup"
    assert c.confidence == pytest.approx(0.5 + 0.5 * 1 / (1 + 1 / 7 + 1 / 9), abs=1e-6)
    # the rule (FY23: a figure for a period) outvotes an exact neighbour of another category:
    # numeric 0.5 + 0.5 * (1/7) / (1 + 2/7) against unanswerable 0.5 * 1 / (1 + 2/7)
    c = clf.classify("averix nim fy23")
    assert c.category == "numeric_lookup"
    assert c.confidence == pytest.approx(0.5 + 0.5 * (1 / 7) / (1 + 2 / 7), abs=1e-6)
    assert "nearest 'Averix NIM FY23' (sim 1.00)" in c.reason
    nothing = Classifier().classify("hello there")
    assert nothing.category == "other" and nothing.confidence == 0.0
