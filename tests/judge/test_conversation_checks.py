"""The conversation-level checks: kept_context, no_contradiction, clarified (each fails when the
turn does what it tests against), on generated and real-phrasing answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.conftest import write_jsonl

from assay.checks.conversation.context import entity_names
from assay.checks.conversation.contradiction import contradicting_clause, split_clauses
from assay.dataset import Dataset, load_dataset
from assay.judge import check_entry, check_rows
from assay.judge.numeric import read_figures
from assay.runs import Run

TURNS: list[dict[str, Any]] = [
    {
        "query": "What was Averix's total revenue in fiscal 2023?",
        "key_facts": [{"fact": "$4.2 billion"}],
        "reference_answer": "Averix reported total revenue of $4.2 billion for fiscal 2023.",
    },
    {
        "query": "And the year before?",
        "depends_on": [1],
        "key_facts": [{"fact": "$3.9 billion"}],
        "reference_answer": "Averix reported total revenue of $3.9 billion for fiscal 2022.",
    },
    {
        "query": "How does that compare with the company's guidance?",
        "expected_behavior": "clarify",
    },
]
OTHER = {
    "id": "other",
    "category": "lookup",
    "query": "What was Borlan Systems' total revenue in fiscal 2023?",
    "key_facts": [{"fact": "$7.1 billion"}],
}


@pytest.fixture
def ds(tmp_path: Path) -> Dataset:
    conv = {"id": "c", "category": "carried_context", "turns": TURNS}
    return load_dataset(write_jsonl(tmp_path / "d.jsonl", [conv, OTHER]))


def _check(ds: Dataset, answers: dict[str, str], eid: str, name: str) -> Any:
    run = Run.from_rows([{"id": i, "retrieved": [], "answer": a} for i, a in answers.items()])
    rows, _ = check_rows(ds, run, checks=[name])
    got = {r["id"]: r for r in rows}
    return got[eid][name], got[eid]["notes"]


T1 = "Averix's total revenue in fiscal 2023 was $4.2 billion."


@pytest.mark.parametrize(
    ("follow_up", "want", "why"),
    [
        ("Averix's revenue in fiscal 2022 was $3.9 billion.", True, ""),
        ("In the prior year, revenue came to $3,900 million.", True, ""),  # no name: fine
        ("Borlan Systems' revenue in fiscal 2022 was $3.9 billion.", False, "about Borlan"),
        ("Averix's revenue in fiscal 2023 was $4.2 billion.", False, "again and none of this"),
        ("Revenue was $4.2 billion in FY2023, the most recent year.", False, "turn 1's figure"),
        # the period the turn means, a wrong figure: context kept (answer_correct says wrong)
        ("Averix's revenue in fiscal 2022 was $3.5 billion.", True, ""),
        # another year only, no figure of either turn
        ("Averix's revenue in fiscal 2021 was $3.5 billion.", False, "names only fiscal 2021"),
        # nothing to tell the context by: no company, figure or year of the turn
        ("It was a little lower.", None, "names neither"),
    ],
)
def test_kept_context(ds: Dataset, follow_up: str, want: bool | None, why: str) -> None:
    value, notes = _check(ds, {"c#1": T1, "c#2": follow_up}, "c#2", "kept_context")
    assert value is want
    assert why in " ".join(notes)


def test_kept_context_rates_follow_ups_only(ds: Dataset) -> None:
    value, _ = _check(ds, {"c#1": T1, "c#2": "x"}, "c#1", "kept_context")
    assert value is None


@pytest.mark.parametrize(
    ("later", "want"),
    [
        ("Averix's revenue in fiscal 2022 was $3.9 billion.", True),  # another period
        ("Revenue for fiscal 2023 came in at $4.5bn, and fiscal 2022 was $3.9bn.", False),
        ("FY2023 total revenue: $4,200 million; FY2022: $3.9 billion.", True),  # same, rescaled
        ("Up from $3.9 billion in fiscal 2022 to $4.2 billion in fiscal 2023.", True),
        ("Averix's fiscal 2023 revenue was actually $4.0 billion; 2022 was $3.9B.", False),
        ("Its fiscal 2023 operating margin was 12%.", True),  # another concept and kind
    ],
)
def test_no_contradiction(ds: Dataset, later: str, want: bool) -> None:
    value, notes = _check(ds, {"c#1": T1, "c#2": later}, "c#2", "no_contradiction")
    assert value is want, notes
    if not want:
        assert "turn 1's answer stated $4.2 billion" in " ".join(notes)


def test_no_contradiction_abstains_when_nothing_was_stated_before(ds: Dataset) -> None:
    vague = {"c#1": "I could not find it.", "c#2": "Revenue in fiscal 2023 was $4.5 billion."}
    assert _check(ds, vague, "c#2", "no_contradiction")[0] is None
    # and without the run it has no earlier answer to read: abstains
    entry = ds.by_id["c#2"]
    res = check_entry(entry, "Revenue in fiscal 2023 was $4.5 billion.", checks=["no_contradiction"],
                      dataset=ds)  # fmt: skip
    assert res.values["no_contradiction"] is None


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        ("Which guidance do you mean: the fiscal 2024 outlook or the long-term targets?", True),
        ("Could you specify which guidance you are referring to?", True),
        ("Revenue beat guidance of $4.0 billion.", False),
        ("Did you mean the 2024 outlook? Revenue beat it by $0.2 billion.", False),
    ],
)
def test_clarified(ds: Dataset, answer: str, want: bool) -> None:
    value, _ = _check(ds, {"c#1": T1, "c#3": answer}, "c#3", "clarified")
    assert value is want


def test_criteria_choose_the_checks(tmp_path: Path) -> None:
    conv = {"id": "c", "category": "x", "turns": TURNS, "criteria": ["no_contradiction"]}
    ds = load_dataset(write_jsonl(tmp_path / "d.jsonl", [conv, OTHER]))
    wrong = "Borlan Systems' revenue in fiscal 2022 was $3.9 billion."
    assert _check(ds, {"c#1": T1, "c#2": wrong}, "c#2", "kept_context")[0] is None


def test_helpers_on_real_phrasing() -> None:
    from assay.dataset import Entry

    def names(q: str) -> list[str]:
        return entity_names(Entry(id="a", query=q, category="c"))

    assert names("How much did American Express spend on marketing in FY2022?") == [
        "American Express"
    ]
    assert names("In Q3 2023, what was Adobe's operating margin?") == ["Adobe"]
    assert names("And the year before?") == []
    assert split_clauses("A was 1; B was 2, and C was 3. D.") == [
        "A was 1",
        "B was 2",
        "C was 3.",
        "D.",
    ]
    fig = read_figures("$4.2 billion")[0]
    hit = contradicting_clause(fig, {2023}, {"revenue"}, "FY23 revenue was $4.6B, a record.")
    assert hit is not None and hit[1].text == "$4.6B"


@pytest.mark.parametrize(
    ("later", "want"),
    [
        # the year in a citation's id is not the period the clause speaks of
        ("Averix's revenue was $3.9 billion for fiscal 2022 [avx-2023-10k/3/1~a1b2].", True),
        ("Averix's revenue was $4.4 billion for fiscal 2023 [avx-2023-10k/3/1~a1b2].", False),
        # another company's figure for the same measure and year is another fact
        ("Borlan Systems reported total revenue of $7.1 billion for fiscal 2023.", True),
    ],
)
def test_no_contradiction_on_the_rooms_phrasing(ds: Dataset, later: str, want: bool) -> None:
    said = "Averix reported total revenue of $4.2 billion for fiscal 2023 [avx-2023-10k/3/1~a1b2]."
    value, notes = _check(ds, {"c#1": said, "c#2": later}, "c#2", "no_contradiction")
    assert value is want, notes


def test_a_key_fact_names_what_it_is_about() -> None:
    fig = read_figures("$283 million")[0]
    other_measure = "Fernleaf reported total revenues of $3,181 million for fiscal 2024."
    same_measure = "Net income was $290 million in fiscal 2024."
    about = {"net", "income"}
    assert contradicting_clause(fig, {2024}, about, other_measure, every_word=True) is None
    assert contradicting_clause(fig, {2024}, about, same_measure, every_word=True) is not None
    assert contradicting_clause(fig, {2024}, about, same_measure, every_word=True,
                                elsewhere=["Kestrel Systems"]) is not None  # fmt: skip
    assert contradicting_clause(fig, {2024}, about, "Kestrel Systems' net income was $12 "
                                "million in fiscal 2024.", every_word=True,
                                elsewhere=["Kestrel Systems"]) is None  # fmt: skip


def test_kept_context_reads_a_ticker_and_a_named_switch(tmp_path: Path) -> None:
    from assay.checks.conversation.context import _ticker_of

    assert _ticker_of("GRAN", "Granite State Bancorp") and _ticker_of(
        "GSB", "Granite State Bancorp"
    )
    assert not _ticker_of("QUIL", "Granite State Bancorp") and not _ticker_of("Gran", "Granite")
    assert _ticker_of("AVX", "Averix Technologies") and not _ticker_of("XAV", "Averix")
    turns = [
        {"query": "What was AVX's total revenue in fiscal 2023?", "key_facts": [{"fact": "$4.2 billion"}]},
        {"query": "And the year before?", "depends_on": [1], "key_facts": [{"fact": "$3.9 billion"}]},
        {"query": "And Borlan Systems?", "depends_on": [1], "key_facts": [{"fact": "$7.1 billion"}]},
    ]  # fmt: skip
    names = {"id": "n", "category": "x", "query": "What did Averix Technologies earn?"}
    ds = load_dataset(write_jsonl(tmp_path / "d.jsonl",
                                  [{"id": "c", "category": "x", "turns": turns}, names, OTHER]))  # fmt: skip
    ans = {"c#1": "AVX: $4.2 billion in fiscal 2023.",
           "c#2": "Averix Technologies' revenue in fiscal 2022 was $3.9 billion.",
           "c#3": "Borlan Systems' revenue in fiscal 2023 was $7.1 billion."}  # fmt: skip
    assert _check(ds, ans, "c#2", "kept_context")[0] is True
    assert _check(ds, ans, "c#3", "kept_context")[0] is True
    ans["c#2"] = "Borlan Systems' revenue in fiscal 2022 was $3.9 billion."
    value, notes = _check(ds, ans, "c#2", "kept_context")
    assert value is False and "not AVX" in notes[0]


def test_kept_context_reads_the_spellings_of_one_company(tmp_path: Path) -> None:
    """FinanceBench's phrasing: one company spelled several ways across the dataset ("JnJ",
    "Johnson & Johnson"; "Pepsico", "PepsiCo"; "Upjohn", a spin-off named in a Pfizer
    question) is one entity; a name several companies' questions use is none's."""

    def conv(cid: str, company: str, first: str, second: str) -> dict[str, Any]:
        md = {"company": company}
        return {"id": cid, "category": "x", "turns": [
            {"query": first, "key_facts": [{"fact": "$10.0 billion"}], "metadata": md},
            {"query": second, "depends_on": [1], "key_facts": [{"fact": "$12.0 billion"}],
             "metadata": md},
        ]}  # fmt: skip

    lines = [
        conv("j", "Johnson & Johnson", "What was JnJ's FY2022 revenue, per its Cash Flow "
             "Statement?", "And its net PP&E?"),
        conv("p", "Pfizer", "Did Pfizer spin off Upjohn in 2020?", "And its 2020 revenue?"),
        {"id": "q", "category": "x", "query": "What is Pepsico's FY2022 Cash Flow Statement "
         "capex?", "metadata": {"company": "PepsiCo"}},
        {"id": "r", "category": "x", "query": "Did PepsiCo buy back shares?",
         "metadata": {"company": "PepsiCo"}},
    ]  # fmt: skip
    ds = load_dataset(write_jsonl(tmp_path / "d.jsonl", lines))

    def kept(cid: str, answer: str) -> Any:
        return _check(ds, {f"{cid}#1": "$10.0 billion.", f"{cid}#2": answer}, f"{cid}#2",
                      "kept_context")  # fmt: skip

    for said in ("Johnson & Johnson", "Johnson and Johnson", "J&J", "JnJ", "JNJ"):
        assert kept("j", f"{said}'s net PP&E was $12.0 billion.")[0] is True, said
    assert kept("p", "Pfizer's revenue without Upjohn was $12.0 billion.")[0] is True
    assert kept("p", "Upjohn's revenue was $12.0 billion.")[0] is True
    # the Cash Flow Statement is named in two companies' questions: no company's name
    assert kept("j", "Per the Cash Flow Statement, net PP&E was $12.0 billion.")[0] is True
    value, notes = kept("j", "Pepsico's net PP&E was $12.0 billion.")
    assert value is False and "about Pepsico" in notes[0] and "not Johnson & Johnson" in notes[0]
    assert kept("p", "PEPSICO's revenue was $12.0 billion.") == (False, ["about PEPSICO, not Pfizer "
                                                                      "of turn 1"])  # fmt: skip
    # another company beside the turn's own: cannot tell which the answer is about
    value, notes = kept("p", "Pfizer's revenue was $12.0 billion, PepsiCo's $9.0 billion.")
    assert value is None and "names PepsiCo beside Pfizer" in notes[0]
    # the earlier turn's figure again, and the turn's own neither stated nor its year named
    assert kept("j", "JnJ's net PP&E was $10.0 billion.")[0] is False


AMEX_ASKED = (
    "How much has the effective tax rate of American Express changed between FY2021 and FY2022?"
)
AMEX_FACT = (
    "The effective tax rate for American Express has changed/dropped from 24.6% in FY 2021 to "
    "21.6% in FY 2022"
)


@pytest.mark.parametrize(
    ("first", "fact", "said", "later", "want"),
    [
        # a key fact that is a sentence: two of the words it shares with the question
        (
            AMEX_ASKED,
            AMEX_FACT,
            AMEX_FACT + ".",
            "Per the 10-K, the effective tax rate decreased from 36.9% in FY2021 to 21.6% in "
            "FY2022.",
            False,
        ),
        (
            AMEX_ASKED,
            AMEX_FACT,
            AMEX_FACT + ".",
            "The effective tax rate fell from 24.6% in FY2021 to 21.6% in FY2022.",
            True,
        ),
        # the question's asking sentence, not its definitions, says what a bare figure is
        (
            "What is the FY2019 fixed asset turnover ratio for Activision Blizzard? Fixed asset "
            "turnover ratio is defined as: FY2019 revenue / (average PP&E between FY2018 and "
            "FY2019).",
            "24.26",
            "24.26",
            "The 3 year average of capex as a percentage of revenue from 2017 to 2019 is 1.9%; "
            "the FY2019 average PP&E was 267.5.",
            True,
        ),
        # "increase" and "increased" are one word; "that year" is the sentence's year
        (
            "By how much did Pepsico increase its unsecured five year revolving credit "
            "agreement on May 26, 2023?",
            "$400,000,000 increase",
            "$400,000,000 increase.",
            "On May 26, 2023 PepsiCo increased the agreement by $600 million.",
            False,
        ),
    ],
)
def test_no_contradiction_on_financebench_phrasing(
    tmp_path: Path, first: str, fact: str, said: str, later: str, want: bool
) -> None:
    md = {"company": "AmEx"}
    conv = {"id": "c", "category": "x", "turns": [
        {"query": first, "key_facts": [{"fact": fact}], "metadata": md},
        {"query": "And its largest liability?", "depends_on": [1],
         "key_facts": [{"fact": "Customer deposits"}], "metadata": md},
    ]}  # fmt: skip
    ds = load_dataset(write_jsonl(tmp_path / "d.jsonl", [conv]))
    value, notes = _check(ds, {"c#1": said, "c#2": later}, "c#2", "no_contradiction")
    assert value is want, notes
