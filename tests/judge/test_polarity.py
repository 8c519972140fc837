"""polarity_correct and answer_correct on yes/no and direction questions: negations, negation
scope, and paraphrases outside the synonym table (the user study's kinds, on other companies)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from assay.dataset import Entry
from assay.judge import semantic
from assay.judge.checking import check_entry
from assay.judge.meaning import contradicts
from assay.judge.polarity import question_statement, reference_polarity
from assay.judge.registry import get_check


def entry(query: str, reference: str, **kw: Any) -> Entry:
    base: dict[str, Any] = {
        "id": "p1",
        "query": query,
        "category": "domain-relevant",
        "reference_answer": reference,
    }
    return Entry.model_validate({**base, **kw})


def verdicts(e: Entry, answer: str) -> tuple[bool | None, bool | None]:
    v = check_entry(e, answer, checks=["answer_correct", "polarity_correct"]).values
    return v["answer_correct"], v["polarity_correct"]  # type: ignore[return-value]


@pytest.fixture(scope="module")
def meaning_on() -> Iterator[None]:
    """The semantic second opinion on (the suite runs without it: tests/conftest.py)."""
    if not semantic.available():
        pytest.skip("the dense extra is not installed")
    was = semantic.use(True)
    semantic.opinion().encoder.encode(["warm up"])  # the model loads here, once
    yield
    semantic.use(was)


# ------------------------------------------------------------------------------ negation scope

HIGH_GROWTH = entry(
    "Are Costco's FY2022 financials that of a high growth company?",
    "No, Costco's FY2022 financials are not of a high growth company as sales grew by 1.3% in "
    "FY2022.",
)


@pytest.mark.parametrize(
    "answer",
    [
        "No. Costco's FY2022 financials are not those of a high growth company: sales grew by 1.3%",
        "No. Costco's FY2022 financials are not those of a high growth company, as sales grew "
        "by only 1.3%.",
        "Costco's FY2022 financials are not those of a high growth company because sales grew "
        "1.3%.",
    ],
)
def test_a_restatement_of_a_negated_reference_is_no_contradiction(answer: str) -> None:
    # the reference's "not" ends at "as": its sales did grow, as the answer says
    assert contradicts(HIGH_GROWTH.reference_answer or "", answer) is None
    r = check_entry(HIGH_GROWTH, answer, checks=["contradiction_free", "answer_correct"])
    assert r.values == {"contradiction_free": True, "answer_correct": True}, r.notes
    assert check_entry(HIGH_GROWTH, answer, checks="polarity_correct").values == {
        "polarity_correct": True
    }


def test_negation_scope_still_reaches_what_it_negates() -> None:
    # "not as high as" and "not ... as of" keep the negation; a reason after "because" does not
    e = entry("Did Nike's revenue grow in FY2023?", "Yes, Nike's revenue grew in FY2023.")
    assert verdicts(e, "Nike's revenue did not grow as of FY2023.")[1] is False
    assert contradicts("Margins were high.", "Margins were not as high as before.") is not None


# ------------------------------------------------------------------------------ the study's kinds

# eight negations, each answering the question the other way (the user study's kind: "No,
# Boeing's business is not subject to cyclicality" against "Yes")
NEGATIONS = [
    ("Is Caterpillar's business subject to cyclicality?",
     "Yes, Caterpillar's business is subject to cyclicality because construction demand is "
     "cyclical.",
     "No, Caterpillar's business is not subject to cyclicality."),
    ("Was Costco able to retain its members during 2022?", "Yes",
     "No. Costco was not able to retain its members during 2022."),
    ("Has Intel paid dividends to common shareholders in FY2022?",
     "Yes, Intel paid a dividend every quarter in FY2022.",
     "Intel did not pay dividends to common shareholders in FY2022."),
    ("Are Netflix's FY2022 financials that of a high growth company?",
     "No, Netflix's FY2022 financials are not of a high growth company as revenue grew 6.5%.",
     "Yes, Netflix's FY2022 financials are those of a high growth company."),
    ("Has Ford increased its debt on balance sheet between FY2022 and FY2021?",
     "No. Ford decreased its debt by $3.1bn in FY2022.",
     "Yes, Ford increased its debt on balance sheet in FY2022."),
    ("Does Delta have a reasonably healthy liquidity profile based on its quick ratio for FY2022?",
     "No. The quick ratio was about 0.6, so Delta does not have a healthy liquidity profile.",
     "Delta has a healthy liquidity profile based on its quick ratio for FY2022."),
    ("Did PepsiCo's operating margin decline in FY2022 compared to FY2021?",
     "Yes. It declined.",
     "No, PepsiCo's operating margin did not decline in FY2022."),
    ("Is Target a capital-intensive business based on FY2022 data?",
     "Yes, Target requires an extensive asset base to operate.",
     "Target is not a capital-intensive business based on FY2022 data."),
]  # fmt: skip

# eight correct paraphrases, four of them outside the synonym table (the user study's kinds:
# "kept its card members", "is cyclical", "mainly makes packaging")
PARAPHRASES = [
    ("Was Costco able to retain its members during 2022?", "Yes",
     "Costco kept its members during 2022."),
    ("Is Caterpillar's business subject to cyclicality?",
     "Yes, Caterpillar's business is subject to cyclicality.",
     "Caterpillar's business is cyclical."),
    ("Does PepsiCo primarily manufacture snacks and beverages?", "Yes",
     "PepsiCo mainly makes snacks and drinks."),
    ("Has Netflix reported any materially important ongoing legal battles from FY2022?", "Yes",
     "Netflix is a defendant in several pending lawsuits in FY2022."),
    ("Has Ford increased its debt on balance sheet between FY2022 and FY2021?",
     "No. Ford decreased its debt by $3.1bn in FY2022.",
     "Ford's debt went down in FY2022."),
    ("Are Netflix's FY2022 financials that of a high growth company?",
     "No, Netflix's FY2022 financials are not of a high growth company as revenue grew 6.5%.",
     "Netflix's FY2022 financials are not those of a high growth company: revenue grew 6.5%."),
    ("Did PepsiCo's operating margin decline in FY2022 compared to FY2021?",
     "Yes. It declined.", "Yes, PepsiCo's operating margin fell in FY2022."),
    ("Has Intel paid dividends to common shareholders in FY2022?",
     "Yes, Intel paid a dividend every quarter in FY2022.",
     "Intel paid a dividend each quarter of FY2022."),
]  # fmt: skip


@pytest.mark.parametrize(("query", "reference", "answer"), NEGATIONS)
def test_every_negation_fails(query: str, reference: str, answer: str) -> None:
    assert verdicts(entry(query, reference), answer) == (False, False)


@pytest.mark.parametrize(("query", "reference", "answer"), PARAPHRASES)
def test_every_paraphrase_passes(query: str, reference: str, answer: str, meaning_on: None) -> None:
    assert verdicts(entry(query, reference), answer) == (True, True)


def test_paraphrases_outside_the_table_abstain_without_the_opinion() -> None:
    # the deterministic rules alone: answer_correct abstains, polarity_correct finds no yes/no
    query, reference, answer = PARAPHRASES[0]
    was = semantic.use(False)
    try:
        assert verdicts(entry(query, reference), answer) == (None, False)
    finally:
        semantic.use(was)


def test_the_opinion_decides_no_contradiction_alone(meaning_on: None) -> None:
    # a near miss the encoder finds close ("lost" members) is read the other way by the rules
    e = entry("Was Costco able to retain its members during 2022?", "Yes")
    assert verdicts(e, "Costco lost many of its members during 2022.") == (False, False)
    assert verdicts(e, "Walmart kept its members during 2022.")[1] is False


# ------------------------------------------------------------------------------ what it decides


def test_direction_questions_are_decided_by_the_direction() -> None:
    e = entry(
        "How did Starbucks' comparable store sales change in fiscal 2023?",
        "Starbucks' comparable store sales increased 8% in fiscal 2023.",
    )
    assert reference_polarity(e) is not None
    assert verdicts(e, "Comparable store sales rose 8% in fiscal 2023.")[1] is True
    assert verdicts(e, "Comparable store sales fell in fiscal 2023.")[1] is False
    assert verdicts(e, "Comparable store sales did not rise in fiscal 2023.")[1] is False


def test_it_abstains_where_no_polarity_is_asked() -> None:
    e = entry("What was FY2018 capex (in USD millions)?", "$1,577 million")
    assert reference_polarity(e) is None
    assert verdicts(e, "$1,577 million")[1] is None
    assert question_statement("Is Boeing's business subject to cyclicality?") == (
        "Boeing's business subject to cyclicality"
    )
    refuse = entry("Is Costco cyclical?", "Yes", expected_behavior="refuse", answerable=False)
    assert verdicts(refuse, "No.")[1] is None
    # an entry to answer: a refusal, or an answer with no yes/no, fails
    e = entry("Is Costco's business cyclical?", "Yes")
    assert verdicts(e, "I could not find this in the filings searched.")[1] is False


def test_a_self_contradicting_answer_fails() -> None:
    e = entry("Is Caterpillar's business subject to cyclicality?", "Yes")
    assert verdicts(e, "Yes, Caterpillar's business is not subject to cyclicality.")[1] is False


def test_registered_with_its_direction_and_rates() -> None:
    c = get_check("polarity_correct")
    assert c.higher_is_better and c.kind == "binary" and c.default
    assert c.rates is not None
    assert c.rates(entry("Is Costco cyclical?", "Yes")) is True
    assert c.rates(entry("What was capex?", "$5m")) is False


def test_the_explorer_draws_it_as_a_pass_fail_check() -> None:
    from assay.explorer.site import check_cell

    assert check_cell("polarity_correct", True) == ("good", "pass")
    assert check_cell("polarity_correct", False) == ("bad", "fail")
    assert check_cell("polarity_correct", None)[0] == "abstain"


def test_the_question_statement_leaves_out_how_to_answer() -> None:
    assert question_statement("Is Verizon a capital intensive business based on FY 2022 data?") == (
        "Verizon a capital intensive business"
    )
    e = entry("Is Verizon a capital intensive business based on FY 2022 data?", "Yes.")
    assert verdicts(e, "Verizon is a capital-intensive business.")[1] is True
