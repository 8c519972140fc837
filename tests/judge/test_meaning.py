"""Key facts read by meaning: negation, antonyms, swaps of entity, period and unit, paraphrases."""

from __future__ import annotations

from typing import Any

import pytest

from assay.dataset import Entry
from assay.judge.checking import check_entry
from assay.judge.meaning import analyse, contradicts, lemma, read_fact

POLICY = "Exceptions require advance director approval"


def entry(**kw: Any) -> Entry:
    base: dict[str, Any] = {
        "id": "e1",
        "query": "What approval do exceptions need?",
        "category": "c",
    }
    base.update(kw)
    return Entry.model_validate(base)


def test_the_issue_example_negation_is_a_contradiction_and_a_paraphrase_passes() -> None:
    e = entry(reference_answer=POLICY + ".", key_facts=[{"fact": POLICY}])
    neg = check_entry(e, "Exceptions do not require director approval.")
    assert neg.key_fact_recall == 0.0
    assert neg.values["contradiction_free"] is False
    assert neg.values["answer_correct"] is False
    assert any(n.startswith("negation") for n in neg.notes)
    para = check_entry(e, "Any exception needs prior board approval.")
    assert para.key_fact_recall == 1.0
    assert para.values["contradiction_free"] is True
    assert para.values["answer_correct"] is True


@pytest.mark.parametrize(
    ("answer", "status", "reason"),
    [
        ("Director approval is required in advance for any exception.", "present", ""),
        ("Director approval is not required for exceptions.", "contradicted", "negation"),
        ("Director approval is waived for exceptions.", "contradicted", "antonym"),
        ("Director approval is not waived for exceptions in advance.", "present", ""),
        ("Exceptions need no approval.", "contradicted", "negation"),
        ("Exceptions require no approval.", "contradicted", "negation"),
        ("Exceptions are listed in the policy.", "absent", ""),
    ],
)
def test_polarity_of_the_policy_fact(answer: str, status: str, reason: str) -> None:
    r = read_fact(POLICY, answer)
    assert (r.status, r.reason) == (status, reason), r


@pytest.mark.parametrize(
    ("fact", "answer", "status", "reason"),
    [
        ("revenue rose in fiscal 2023", "Revenue fell in fiscal 2023.", "contradicted", "antonym"),
        ("revenue rose in fiscal 2023", "Sales grew in fiscal 2023.", "present", ""),
        ("revenue rose in fiscal 2023", "Revenue did not decline in FY2023.", "present", ""),
        ("revenue rose in fiscal 2023", "Revenue rose in fiscal 2022.", "contradicted", "period"),
        ("net income of $248 million", "A net loss of $248 million.", "contradicted", "antonym"),
        ("net income of $248 million", "Net earnings were $248 million.", "present", ""),
        ("we buy back shares", "We sell shares.", "contradicted", "antonym"),
        ("latest quarter is Q2 FY2023", "The most recent quarter was Q3 FY2023.", "contradicted", "period"),
        ("latest quarter is Q2 FY2023", "The most recent quarter was the second quarter of fiscal 2023.", "present", ""),
        ("NIM FY2023: 40 bp", "NIM was 40% in FY2023.", "contradicted", "unit"),
        ("revenue FY2023: $2,534 million", "Revenue was $2,534 billion in FY2023.", "contradicted", "unit"),
        ("revenue FY2023: $2,534 million", "Revenue was $3,100 million in FY2023.", "contradicted", "figure"),
        ("revenue FY2023: 1 234,5 mil. Kč", "Revenue was 1234.5 million USD in FY2023.", "contradicted", "unit"),
        ("revenue FY2023: 1 234,5 mil. Kč", "Revenue was CZK 1,234.5 million in FY2023.", "present", ""),
    ],
)  # fmt: skip
def test_antonyms_and_swaps(fact: str, answer: str, status: str, reason: str) -> None:
    r = read_fact(fact, answer)
    assert (r.status, r.reason) == (status, reason), r


def test_entity_swap_needs_a_foreign_name_and_scope_names_are_not_foreign() -> None:
    fact = "Ruth Adeyemi appointed CFO"
    others = ["Fatima Petrova resigned"]
    ctx = ["FERN CFO change", "Fatima Petrova resigned; the Board of Fernleaf Software appointed"]
    swap = read_fact(fact, "The board appointed Fatima Petrova as CFO.", context=ctx, others=others)
    assert (swap.status, swap.reason) == ("contradicted", "entity")
    scope = read_fact(fact, "Fernleaf Software appointed a new CFO.", context=ctx, others=others)
    assert scope.status == "absent"  # incomplete, not a contradiction
    para = read_fact(fact, "The board named Ruth Adeyemi chief financial officer.", context=ctx)
    assert para.status == "present"


def test_clauses_pair_each_fact_with_its_own_clause() -> None:
    answer = "Fatima Petrova resigned as CFO; the Board appointed Ruth Adeyemi as CFO."
    assert read_fact("Ruth Adeyemi appointed CFO", answer).status == "present"
    assert read_fact("Fatima Petrova resigned", answer).status == "present"


def test_names_inside_a_company_name_are_not_vocabulary() -> None:
    # "Trail" is not the verb "trail", "Security" is a segment's name
    ref = "Summit Trail Bancshares's net interest margin rose from 2.89% to 2.94%."
    assert contradicts(ref, ref.replace(" rose ", " fell ")) is not None
    assert contradicts(ref, ref) is None


def test_yes_no_opening_contradicts() -> None:
    r = contradicts("Yes, 3M is a capital-intensive business.", "No, it is not.")
    assert r is not None and r.reason == "answer"
    assert contradicts("Yes, it is.", "Yes. The ratio is 2.1.") is None


def test_period_of_a_comparison_is_read_locally() -> None:
    fact = "FY2023: 2,534"
    right = "Revenue was $2,534 million in fiscal 2023 versus $2,249 million in fiscal 2022."
    swapped = "Revenue was $2,534 million in fiscal 2022 versus $2,249 million in fiscal 2023."
    from assay.judge.numeric import reference_figures

    figs = reference_figures(fact, scale_source=right)
    assert read_fact(fact, right, fact_figures=figs).status == "present"
    r = read_fact(fact, swapped, fact_figures=figs)
    assert (r.status, r.reason) == ("contradicted", "period")
    # the other side of a comparison names no period of its own: not a contradiction
    loose = "Revenue was $2,534 million, up 12.7% from fiscal 2022."
    assert read_fact(fact, loose, fact_figures=figs).status == "present"


def test_fiscal_labels_beat_calendar_dates() -> None:
    fact = "net income for the second quarter of fiscal 2022 (ended 2021-12-31): $22 million"
    wrong = "Net income was $22 million for the second quarter of fiscal 2021 (ended 2021-12-31)."
    assert read_fact(fact, wrong).reason == "period"
    dated = "Net income was $22 million for the quarter ended 2021-12-31."
    assert read_fact(fact, dated).status == "present"


def test_lemmas_fold_inflection_irregular_forms_and_accents() -> None:
    assert lemma("Required") == lemma("requires") == lemma("require")
    assert lemma("rose") == lemma("rise") and lemma("fell") == lemma("falls")
    assert lemma("Kč") == lemma("kc")
    keys = {t.key for t in analyse("top line")} | {t.key for t in analyse("sales")}
    assert len(keys) == 1  # one concept
    up = analyse("revenue increased")[1]
    down = analyse("revenue did not decrease")[1]
    assert up.key == down.key and up.polarity == down.polarity == 1


def test_key_fact_scale_comes_from_the_reference() -> None:
    e = entry(
        query="FERN fiscal '23 sub rev y/y",
        reference_answer="Revenue was $2,534 million in fiscal 2023 versus $2,249 million in "
        "fiscal 2022.",
        key_facts=[{"fact": "FY2023: 2,534"}, {"fact": "FY2022: 2,249"}],
    )
    r = check_entry(e, e.reference_answer)
    assert r.values["numeric_correct"] is True and r.values["answer_correct"] is True
    bad = check_entry(e, e.reference_answer.replace("million", "billion"))
    assert bad.values["contradiction_free"] is False
