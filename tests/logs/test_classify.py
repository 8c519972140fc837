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
    # an exact golden query: its category, confidence 1, whatever the rules say
    c = clf.classify("subs revenue FY2022 Averix Technologies")
    assert c.category == "numeric_lookup"
    assert c.method == "golden" and c.confidence == 1.0
    # a golden query asked word for word takes its own category before any rule: FY23 is a
    # figure for a period (numeric_lookup), but the golden entry says unanswerable
    c = clf.classify("averix nim fy23")
    assert (c.category, c.method, c.confidence) == ("unanswerable", "golden", 1.0)
    # a near match (Jaccard >= 0.8) too: 4 of the 5 tokens of the golden numeric query
    c = clf.classify("subs revenue FY2022 Averix")
    assert (c.category, c.method) == ("numeric_lookup", "golden")
    assert c.confidence == pytest.approx(0.8) and "sim 0.80" in c.reason
    # below it, the formula: the rule (FY23: a figure for a period) outvotes a neighbour of
    # another category. Sims: 'Averix NIM FY23' 3/4, the two others 1/8 each (total 1.0):
    # numeric 0.5 + 0.5 * 0.75 * (1/8) / 1.0 against unanswerable 0.5 * 0.75 * 0.75 / 1.0
    c = clf.classify("averix nim fy23 capex")
    assert c.method == "rule" and c.category == "numeric_lookup"
    assert c.confidence == pytest.approx(0.5 + 0.5 * 0.75 * 0.125, abs=1e-6)
    assert "nearest 'Averix NIM FY23' (sim 0.75)" in c.reason
    nothing = Classifier().classify("hello there")
    assert (nothing.category, nothing.confidence, nothing.method) == ("other", 0.0, "none")


def test_neighbours_outvote_a_rule_and_say_so() -> None:
    clf = Classifier([("Averix NIM FY23 margin trend", "ambiguous")], rules=True)
    # rule: numeric_lookup 0.5; neighbour (sim 3/5 = 0.6): ambiguous 0.5 * 0.6 = 0.3 -> the rule
    assert clf.classify("Averix NIM FY23").method == "rule"
    # no rule, a neighbour: its category, by the neighbours
    c = clf.classify("averix nim trend")
    assert (c.category, c.method) == ("ambiguous", "nearest")


def test_a_golden_set_with_its_own_taxonomy_turns_the_rules_off() -> None:
    own = [("What is the FY2018 capex for 3M?", "metrics-generated")]
    clf = Classifier(own)
    assert not clf.rules_on
    # a wording rule would say numeric_lookup; the golden set has no such category
    c = clf.classify("What was the FY2019 capex for 3M?")
    assert c.category == "metrics-generated" and c.method == "nearest"
    assert clf.classify("hello there").category == "other"
    # asked for, the built-in rules come back
    assert Classifier(own, rules=True).classify("3M revenue growth y/y").category == "comparison"


def test_only_the_rules_of_the_golden_sets_categories_vote() -> None:
    # a set that has comparison but not temporal: "latest" (temporal) does not vote, "y/y" does
    clf = Classifier([("AVER revenue y/y", "comparison"), ("AVER risk factors", "policy")])
    assert clf.rules_on and "temporal" not in clf.rule_categories
    assert clf.classify("KEST latest filing").method != "rule"
    c = clf.classify("KEST subs y/y")
    assert (c.category, c.method) == ("comparison", "rule")
