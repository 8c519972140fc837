"""`clarify_ok` and `premise_corrected`: contrast sets (the right behaviour, a guess, a refusal),
the LLM judge where the entry does not say what to ask or correct, and the schema fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.dataset import Entry, load_dataset
from assay.errors import DataError
from assay.judge import CHECK_NAMES, check_entry
from assay.judge.llm import BEHAVIOUR_QUESTIONS, LLMJudge, judge_input

NOTES_ALIAS = "Ask which company is meant, or answer for each one, naming it."
ALIAS = Entry(
    id="alias",
    query="Averix net income FY2023",
    category="ambiguous",
    expected_behavior="clarify",
    clarify_with=["Averix Technologies, Inc.", "Averix Bancshares"],
    acceptable_response_notes=NOTES_ALIAS,
)
FISCAL = Entry(
    id="fiscal",
    query="KSTR revenue 2023",
    category="ambiguous",
    expected_behavior="clarify",
    clarify_with=["fiscal 2023", "calendar 2023"],
)
PREMISE = Entry(
    id="premise",
    query="Kestrel $100k+ customers Q3 FY23",
    category="unanswerable",
    answerable=False,
    expected_behavior="correct_premise",
    false_premise="Kestrel Systems, Inc. discloses customers with annual recurring revenue over "
    "$100,000 for the third quarter",
    acceptable_response_notes="The adjacent quarter's figure may be offered only if labelled as a "
    "different period.",
)

# (entry, answer, kind, expected verdict): kind is right / guess / refusal
CLARIFY = [
    (ALIAS, "Which Averix do you mean: Averix Technologies or Averix Bancshares?", "right", True),
    (
        ALIAS,
        "'Averix' may mean more than one company. Net income for 2023: Averix Technologies, Inc. "
        "(AVXT): $412 million; Averix Bancshares (AVXB): $95 million.",
        "right",
        True,
    ),
    (ALIAS, "Do you mean Averix Bancshares, or the software company?", "right", True),
    (ALIAS, "Could you confirm which Averix you are asking about?", "right", True),
    (ALIAS, "Averix Technologies' net income for FY2023 was $412 million.", "guess", False),
    (ALIAS, "Net income was $95 million in fiscal 2023 (Averix Bancshares).", "guess", False),
    (ALIAS, "Averix reported net income of $412 million for 2023.", "guess", False),
    (
        ALIAS,
        "I'm sorry, but the provided context does not include Averix's net income for 2023.",
        "refusal",
        False,
    ),
    (ALIAS, "I cannot answer this question from the filings provided.", "refusal", False),
    (
        ALIAS,
        "I'm sorry, I can't find that figure. Is there anything else I can help with?",
        "refusal",
        False,
    ),
    (FISCAL, "Do you mean fiscal 2023 (ended June 30, 2023) or calendar 2023?", "right", True),
    (
        FISCAL,
        "Kestrel's fiscal year ends June 30. Fiscal 2023 revenue was $1.2 billion; calendar 2023 "
        "would combine quarters of two fiscal years.",
        "right",
        True,
    ),
    (
        FISCAL,
        "If you mean FY2023, revenue was $1.2 billion; for calendar 2023 the quarters of two "
        "fiscal years would have to be added.",
        "right",
        True,
    ),
    (FISCAL, "Please specify whether you mean the fiscal or the calendar year.", "right", True),
    (FISCAL, "Kestrel's revenue in 2023 was $1.2 billion.", "guess", False),
    (FISCAL, "Kestrel reported FY2023 revenue of $1.2 billion.", "guess", False),
    (FISCAL, "The filings provided do not contain Kestrel's 2023 revenue.", "refusal", False),
    (FISCAL, "I am unable to determine the revenue from the context given.", "refusal", False),
]

PREMISE_SET = [
    (
        "Kestrel Systems does not disclose its count of customers with annual recurring revenue "
        "over $100,000 for the third quarter; it reports it at the second quarter (1,210) and at "
        "year end.",
        "right",
        True,
    ),
    (
        "The number of $100k+ customers isn't disclosed for the third quarter; Kestrel gives it "
        "only at Q2 and fiscal year end.",
        "right",
        True,
    ),
    (
        "Kestrel never discloses customers with annual recurring revenue over $100,000 for the "
        "third quarter.",
        "right",
        True,
    ),
    (
        "Kestrel has 1,250 customers with annual recurring revenue over $100,000 at the end of "
        "the third quarter.",
        "guess",
        False,
    ),
    (
        "As of Q3 FY2023, Kestrel reported 1,250 customers with ARR above $100k.",
        "guess",
        False,
    ),
    (
        "Kestrel disclosed 1,210 customers with annual recurring revenue over $100,000.",
        "guess",
        False,
    ),
    ("I'm sorry, I cannot answer this from the documents provided.", "refusal", False),
    (
        "The provided context does not contain enough information to answer the question.",
        "refusal",
        False,
    ),
]


@pytest.mark.parametrize(
    ("entry", "answer", "kind", "expected"),
    CLARIFY,
    ids=[f"{e.id}-{k}-{i}" for i, (e, _, k, _) in enumerate(CLARIFY)],
)
def test_clarify_ok_contrast_set(entry: Entry, answer: str, kind: str, expected: bool) -> None:
    got = check_entry(entry, answer, checks="clarify_ok")
    assert got.values["clarify_ok"] is expected, (kind, answer, got.notes)


@pytest.mark.parametrize(
    ("answer", "kind", "expected"),
    PREMISE_SET,
    ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(PREMISE_SET)],
)
def test_premise_corrected_contrast_set(answer: str, kind: str, expected: bool) -> None:
    got = check_entry(PREMISE, answer, checks="premise_corrected")
    assert got.values["premise_corrected"] is expected, (kind, answer, got.notes)


def test_each_set_holds_every_kind() -> None:
    for kinds in ({k for _, _, k, _ in CLARIFY}, {k for _, k, _ in PREMISE_SET}):
        assert kinds == {"right", "guess", "refusal"}


def test_they_run_by_default_and_abstain_elsewhere() -> None:
    assert {"clarify_ok", "premise_corrected"} <= set(CHECK_NAMES)
    plain = Entry(id="p", query="Revenue FY2023?", category="numeric_lookup")
    got = check_entry(plain, "Revenue was $4.1bn.", checks="clarify_ok,premise_corrected")
    assert got.values == {"clarify_ok": None, "premise_corrected": None}
    # a guess used to abstain everywhere: refusal_ok leaves clarify entries out
    got = check_entry(ALIAS, "Averix Technologies earned $412 million.", checks="refusal_ok")
    assert got.values == {"refusal_ok": None}
    assert check_entry(ALIAS, None, checks="clarify_ok").values["clarify_ok"] is None


# ------------------------------------------------------------------ the LLM judge


class FakeClient:
    """A stand-in chat model: says yes when the graded answer asks a question or says "not";
    records every prompt."""

    model = "fake-judge"
    base_url = "http://fake.invalid/v1"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def complete(self, messages: list[dict[str, str]], **_: Any) -> str:
        user = messages[-1]["content"]
        self.prompts.append(user)
        answer = user.split("\nANSWER: ")[1].split("\n\nYES/NO")[0]
        yes = "?" in answer or " not " in answer
        return json.dumps({"verdict": "yes" if yes else "no", "critique": "Read it."})


def _bare(entry: Entry) -> Entry:
    return entry.model_copy(update={"clarify_with": None, "false_premise": None})


def test_without_what_to_ask_the_judge_decides_and_reads_the_notes() -> None:
    client = FakeClient()
    judge = LLMJudge(client)  # type: ignore[arg-type]
    bare = _bare(ALIAS)
    asks = check_entry(bare, "Which Averix do you mean?", checks="clarify_ok", judge=judge)
    guess = check_entry(bare, "Averix earned $412 million.", checks="clarify_ok", judge=judge)
    assert asks.values["clarify_ok"] is True and guess.values["clarify_ok"] is False
    assert asks.notes == ["LLM judge: Read it."]
    prompt = client.prompts[0]
    assert f"ACCEPTABLE RESPONSE NOTES (what the answer must and must not do): {NOTES_ALIAS}" in (
        prompt
    )
    assert "EXPECTED BEHAVIOUR: clarify" in prompt
    assert BEHAVIOUR_QUESTIONS["clarify"][1] in prompt
    bare_premise = _bare(PREMISE)
    fixed = check_entry(
        bare_premise,
        "Kestrel does not report that count for Q3.",
        checks="premise_corrected",
        judge=judge,
    )
    assert fixed.values["premise_corrected"] is True
    assert BEHAVIOUR_QUESTIONS["correct_premise"][1] in client.prompts[-1]
    assert "labelled as a different period" in client.prompts[-1]


def test_without_what_to_ask_and_without_a_judge_it_abstains_and_says_so() -> None:
    got = check_entry(_bare(ALIAS), "Averix earned $412 million.", checks="clarify_ok")
    assert got.values["clarify_ok"] is None
    assert "no clarify_with on the entry and no LLM judge" in got.notes[0]


def test_the_judge_asks_the_behaviour_question_only_of_those_entries() -> None:
    client = FakeClient()
    judge = LLMJudge(client)  # type: ignore[arg-type]
    assert set(judge.judge(judge_input(ALIAS, "Which one?", []))) == {
        "supported",
        "matches_reference",
        "clarify_ok",
    }
    plain = Entry(id="p", query="Revenue FY2023?", category="numeric_lookup")
    assert set(judge.judge(judge_input(plain, "$4.1bn", []))) == {
        "supported",
        "matches_reference",
    }
    # an entry to answer, without notes, is shown neither line
    assert "EXPECTED BEHAVIOUR" not in client.prompts[-1]
    assert "ACCEPTABLE RESPONSE NOTES" not in client.prompts[-1]


# ------------------------------------------------------------------ the schema


def test_the_fields_round_trip_and_are_optional() -> None:
    for e in (ALIAS, PREMISE):
        assert Entry.model_validate(e.to_json_dict()) == e
    plain = Entry(id="p", query="q", category="c").to_json_dict()
    assert "clarify_with" not in plain and "false_premise" not in plain


@pytest.mark.parametrize(
    ("extra", "field", "says"),
    [
        ({"clarify_with": ["A", "B"]}, "clarify_with", "expected_behavior is clarify"),
        (
            {"expected_behavior": "clarify", "clarify_with": ["A"]},
            "clarify_with",
            "at least 2",
        ),
        (
            {"expected_behavior": "clarify", "clarify_with": ["A", " "]},
            "clarify_with",
            "blank",
        ),
        (
            {"expected_behavior": "clarify", "false_premise": "X is disclosed"},
            "false_premise",
            "expected_behavior is correct_premise",
        ),
    ],
)
def test_bad_fields_name_file_line_and_field(
    tmp_path: Path, extra: dict[str, Any], field: str, says: str
) -> None:
    good = {"id": "a", "query": "q", "category": "c"}
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "b", **extra}) + "\n")
    with pytest.raises(DataError) as err:
        load_dataset(path)
    text = str(err.value)
    assert f"{path}:2" in text and field in text and says in text, text
