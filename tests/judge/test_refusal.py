from __future__ import annotations

import pytest

from assay.judge.refusal import detect_refusal, split_sentences


@pytest.mark.parametrize(
    "text",
    [
        "I'm sorry, but the provided context does not contain information about Acme's debt.",
        "As an AI, I don't have real-time access to financial databases. Please check the 10-K.",
        "The provided information does not include the total assets for FY2021, which are needed.",
        "Without the figures for FY2020 it is impossible to calculate the CAGR. Please provide them.",
        "I don't know.",
        "",
    ],
)
def test_refusals_are_detected(text: str) -> None:
    assert detect_refusal(text).refused


@pytest.mark.parametrize(
    "text",
    [
        "Capital expenditure in FY2018 was $1,577 million.",
        "The filing does not break out segment margins. However, the company reports total "
        "operating income of $3.2 billion, which is the figure asked for.",
        "Revenue grew 30.8% (from $135,987 million to $177,866 million). Therefore, the "
        "year-over-year change is 30.8%.",
        "Yes, it paid $0.55 per share. Please refer to the 10-Q for the dates.",
    ],
)
def test_answers_are_not_refusals(text: str) -> None:
    assert not detect_refusal(text).refused


def test_commitment_overrides_an_opening_caveat() -> None:
    text = (
        "I cannot access the full filing. From the excerpt, net sales were $65,398 million and "
        "$65,984 million. Therefore, the CAGR is 0.4%."
    )
    assert not detect_refusal(text).refused


def test_cue_is_reported() -> None:
    res = detect_refusal("Sorry, but I cannot answer that from these filings.")
    assert res.refused and res.kind == "apology" and res.cue


def test_split_sentences_keeps_decimals() -> None:
    assert split_sentences("It was 3.46 times. Next one.\nLine two") == [
        "It was 3.46 times.",
        "Next one.",
        "Line two",
    ]
