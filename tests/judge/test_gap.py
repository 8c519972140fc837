"""`acknowledges_gap` and the schema fields it reads (`must_acknowledge_gap`, `created_by`)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from assay.dataset.schema import Entry
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
