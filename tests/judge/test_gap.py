"""`acknowledges_gap` and the schema fields it reads (`must_acknowledge_gap`, `created_by`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from assay.dataset import Entry
from assay.judge import CHECK_NAMES, check_entry

GAP = Entry(
    id="g1",
    query="What was Acme's revenue from the Nordic segment in FY2024?",
    category="numeric_lookup",
    must_acknowledge_gap=True,
    created_by="ana",
)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Total revenue was $4.1 billion; the 10-K does not break out the Nordic segment.", True),
        ("Revenue was $4.1 billion. Nordic revenue is not separately disclosed.", True),
        ("Revenue was $4.1bn. The filing does not provide a figure for the Nordic segment.", True),
        ("I could not find a Nordic figure in the filings searched.", True),
        ("Nordic segment revenue was $310 million.", False),  # fills the gap with a figure
        ("Revenue was $4.1 billion in FY2024.", False),  # says nothing of the gap
    ],
)
def test_acknowledges_gap(answer: str, expected: bool) -> None:
    assert (
        check_entry(GAP, answer, checks="acknowledges_gap").values["acknowledges_gap"] is expected
    )


def test_it_abstains_without_the_flag_or_an_answer() -> None:
    plain = GAP.model_copy(update={"must_acknowledge_gap": False})
    assert check_entry(plain, "Revenue was $4.1bn.", checks="acknowledges_gap").values == {
        "acknowledges_gap": None
    }
    assert check_entry(GAP, None, checks="acknowledges_gap").values["acknowledges_gap"] is None


def test_it_runs_by_default_and_the_fields_round_trip() -> None:
    assert "acknowledges_gap" in CHECK_NAMES
    again = Entry.model_validate(GAP.to_json_dict())
    assert again.must_acknowledge_gap is True and again.created_by == "ana"
    assert "must_acknowledge_gap" not in Entry(id="x", query="q", category="c").to_json_dict()
    with pytest.raises(ValidationError):
        Entry(id="x", query="q", category="c", must_acknowledge_gap="yes")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Entry(id="x", query="q", category="c", created_by="")


# The contrast set: answers that acknowledge a gap in varied wording and answers that do not
# (figures, and "no"/"not" in other senses: "no change", "not material", "did not pay a
# dividend"). Sentences marked "FinanceBench dev split" are model answers from the
# FinanceBench development split (graded_answers_dev.jsonl; Islam et al. 2023,
# arXiv 2311.11944), the rest are written in filing language. The rules were developed on the
# "dev" half; the "held" half was checked once afterwards.
CONTRAST = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "gap_contrast.jsonl").read_text().splitlines()
]


def test_the_contrast_set_is_large_and_varied() -> None:
    for half in ("dev", "held"):
        rows = [r for r in CONTRAST if r["half"] == half]
        assert sum(r["acknowledges_gap"] for r in rows) >= 20
        assert sum(not r["acknowledges_gap"] for r in rows) >= 20
    assert sum("FinanceBench" in r["source"] for r in CONTRAST) >= 30


@pytest.mark.parametrize("row", CONTRAST, ids=[f"{r['half']}-{i}" for i, r in enumerate(CONTRAST)])
def test_the_contrast_set(row: dict[str, object]) -> None:
    got = check_entry(GAP, str(row["answer"]), checks="acknowledges_gap").values
    assert got["acknowledges_gap"] is row["acknowledges_gap"], row["answer"]


@pytest.mark.parametrize(
    "answer",
    [
        "Country-level revenue isn\u2019t broken out in the annual report.",
        "Nordic revenue can\u2019t be isolated from Europe.",
        "The 10-K doesn\u2019t itemize revenue by country.",
    ],
)
def test_typographic_apostrophes(answer: str) -> None:
    assert check_entry(GAP, answer, checks="acknowledges_gap").values["acknowledges_gap"] is True
