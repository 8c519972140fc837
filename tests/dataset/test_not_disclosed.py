"""'Not disclosed' has a higher bar: an unanswerable or partial entry is gold only with two
reviewers and a recorded structured-data lookup (`assay.dataset.tiers.not_disclosed_shortfall`),
and the facts-table search that fills the lookup in (`assay.corpus.factsearch`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.corpus import Fact, load_facts, search_facts
from assay.dataset import Entry, load_dataset, not_disclosed_shortfall, select_tiers, tier_of
from assay.errors import DataError
from assay.gold import validate

runner = CliRunner()
LOOKUP = {
    "source": "facts",
    "searched": "Acme, fiscal 2023: customer count",
    "found": "nothing",
    "by": "ann",
    "at": "2026-01-02",
}


def _entry(eid: str, **extra: Any) -> dict[str, Any]:
    return {"id": eid, "query": f"question {eid}", "category": "c"} | extra


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("extra", "tier"),
    [
        ({"answerable": False, "label_tier": "gold", "reviewed_by": 2}, "silver"),
        ({"answerable": False, "reviewed_by": 2}, "silver"),
        ({"answerable": "partial", "label_tier": "gold", "reviewed_by": 3}, "silver"),
        ({"answerable": False, "label_tier": "gold", "structured_lookup": LOOKUP}, "silver"),
        ({"answerable": False, "label_tier": "expert-agreed", "structured_lookup": LOOKUP}, "silver"),
        (
            {"answerable": False, "label_tier": "gold", "reviewed_by": 1, "structured_lookup": LOOKUP},
            "silver",
        ),
        ({"answerable": False, "label_tier": "gold", "reviewed_by": 2, "structured_lookup": LOOKUP}, "gold"),
        ({"answerable": "partial", "reviewed_by": 2, "structured_lookup": LOOKUP}, "gold"),
        ({"answerable": False, "reviewed_by": 1}, "silver"),
        ({"answerable": True, "label_tier": "gold", "reviewed_by": 2}, "gold"),
        # the synthetic room's own gold (nobody reviewed it; known by construction)
        ({"answerable": False, "label_tier": "gold", "source": "synthetic"}, "gold"),
        # ... but a synthetic question experts reviewed meets the bar like any other
        ({"answerable": False, "label_tier": "gold", "source": "synthetic", "reviewed_by": 2}, "silver"),
    ],
)  # fmt: skip
def test_an_unanswerable_or_partial_entry_is_gold_only_with_two_reviewers_and_a_lookup(
    extra: dict[str, Any], tier: str
) -> None:
    assert tier_of(Entry.model_validate(_entry("x", **extra))) == tier


def test_the_shortfall_says_which_is_missing() -> None:
    def why(**extra: Any) -> str | None:
        return not_disclosed_shortfall(Entry.model_validate(_entry("x", **extra)))

    no_lookup = why(answerable=False, label_tier="gold", reviewed_by=2)
    assert no_lookup is not None and "structured-data lookup" in no_lookup
    assert "second reviewer" not in no_lookup
    one = why(answerable="partial", label_tier="gold", reviewed_by=1, structured_lookup=LOOKUP)
    assert one is not None and "a partial entry" in one and "reviewed_by is 1" in one
    assert "structured_lookup:" not in one
    both = why(answerable=False, label_tier="gold")
    assert both is not None and "reviewed_by is not recorded" in both and "lookup" in both
    assert why(answerable=False, label_tier="silver", reviewed_by=1) is None


def test_validate_names_the_entries_short_of_the_bar_by_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "golden.jsonl",
        [
            _entry("ok", answerable=False, label_tier="gold", reviewed_by=2, structured_lookup=LOOKUP),
            _entry("nolookup", answerable=False, label_tier="gold", reviewed_by=2),
            _entry("onereviewer", answerable="partial", reviewed_by=1, label_tier="gold",
                   evidence_paths=[[["c1"]]], structured_lookup=LOOKUP),
            _entry("answerable", label_tier="gold", reviewed_by=2, evidence_paths=[[["c2"]]]),
        ],
    )  # fmt: skip
    rep = validate(path)
    assert [(p.line, p.field) for p in rep.problems] == [(2, "label_tier"), (3, "label_tier")]
    assert "lacks a structured-data lookup" in rep.problems[0].message
    assert "a second reviewer (reviewed_by is 1)" in rep.problems[1].message
    res = runner.invoke(app, ["validate", str(path)])
    assert res.exit_code != 0 and f"{path}:2: label_tier:" in res.output


def test_a_malformed_lookup_is_named_by_file_line_and_field(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "golden.jsonl",
        [
            _entry("a", answerable=False, structured_lookup=LOOKUP),
            _entry("b", answerable=False, structured_lookup=LOOKUP | {"source": "pdf"}),
            _entry("c", answerable=False, structured_lookup=LOOKUP | {"found": "  "}),
            _entry("d", answerable=False, structured_lookup={"source": "xbrl", "searched": "x"}),
        ],
    )
    with pytest.raises(DataError) as ei:
        load_dataset(path)
    lines = {(p.line, (p.field or "").split(".")[0]) for p in ei.value.problems}
    assert lines == {(2, "structured_lookup"), (3, "structured_lookup"), (4, "structured_lookup")}
    # optional: an entry without one still loads, and one with it round-trips
    e = Entry.model_validate(_entry("a", answerable=False, structured_lookup=LOOKUP))
    assert Entry.model_validate(e.to_json_dict()) == e
    assert e.to_json_dict()["structured_lookup"] == LOOKUP


def test_the_default_selection_leaves_them_out_and_says_so(tmp_path: Path) -> None:
    rows = [_entry(f"g{i}", label_tier="gold", evidence_paths=[[[f"c{i}"]]]) for i in range(3)]
    rows += [
        _entry("nd-ok", answerable=False, label_tier="gold", reviewed_by=2, structured_lookup=LOOKUP),
        _entry("nd-short", answerable=False, label_tier="gold", reviewed_by=2),
    ]  # fmt: skip
    chosen, report = select_tiers(load_dataset(_write(tmp_path / "g.jsonl", rows)))
    assert sorted(e.id for e in chosen.entries) == ["g0", "g1", "g2", "nd-ok"]
    assert report.left_out == {"silver": 1} and report.short_of_gold == ("nd-short",)
    assert "1 'not disclosed' entry marked gold counted as silver" in report.line()
    assert "(nd-short)" in report.line()
    assert report.to_dict()["short_of_gold"] == ["nd-short"]
    wider, rep2 = select_tiers(load_dataset(tmp_path / "g.jsonl"), "gold,silver")
    assert len(wider) == 5 and rep2.kept == {"gold": 4, "silver": 1}


def _fact(company: str, year: int, item: str, value: float, page: int = 3) -> Fact:
    return Fact(
        company=company, doc_id=f"{company.split()[0].upper()}_{year}_10K", fiscal_year=year,
        fiscal_quarter=None, statement="income", line_item=item, value=value, unit="USD",
        scale=1e6, page=page, chunk_id=f"{company}/{year}/{item}", column=0,
    )  # fmt: skip


def test_search_facts_finds_the_company_period_and_concept(tmp_path: Path) -> None:
    facts = [
        _fact("Johnson & Johnson", 2022, "Total revenues", 94943),
        _fact("Johnson & Johnson", 2022, "Net earnings", 17941),
        _fact("Johnson & Johnson", 2021, "Total revenues", 93775),
        _fact("Johnson Controls", 2022, "Revenues", 25299),
    ]
    p = tmp_path / "facts.jsonl"
    p.write_text("".join(json.dumps(f.to_dict()) + "\n" for f in facts), encoding="utf-8")
    assert load_facts(tmp_path) == facts == load_facts(p)
    assert load_facts(tmp_path / "nowhere") == []
    hit = search_facts(facts, company="Johnson & Johnson Inc.", fiscal_year=2022, concept="revenue")
    assert [f.line_item for f in hit.period] == ["Net earnings", "Total revenues"]
    assert [f.value for f in hit.matches] == [94943]
    assert "Total revenues, fiscal 2022: $94,943 million" in hit.found
    miss = search_facts(
        facts, company="johnson and johnson", fiscal_year=2022, concept="customer count"
    )
    assert miss.matches == () and miss.n_period == 2
    assert miss.found.startswith("nothing: no line item holds 'customer count' among the 2")
    rec = miss.to_record(by="ann", at="2026-01-02")
    entry = _entry("x", answerable=False, reviewed_by=2, structured_lookup=rec)
    assert tier_of(Entry.model_validate(entry)) == "gold"
    assert rec["source"] == "facts" and "fiscal 2022" in rec["searched"]
    none = search_facts(facts, company="Acme", fiscal_year=2022, concept="revenue")
    assert none.found == "nothing: the facts table holds no fact of this company and period"
    every = search_facts(facts, company="Johnson & Johnson")
    assert every.n_period == 3 and len(every.matches) == 3 and "every year" in every.searched


def test_a_malformed_facts_row_is_named_by_file_and_line(tmp_path: Path) -> None:
    good = _fact("Acme", 2023, "Revenues", 1.0).to_dict()
    p = tmp_path / "facts.jsonl"
    p.write_text(json.dumps(good) + "\n" + json.dumps(good | {"colour": "red"}) + "\n", "utf-8")
    with pytest.raises(DataError) as ei:
        load_facts(p)
    assert [(x.file, x.line) for x in ei.value.problems] == [(str(p), 2)]
