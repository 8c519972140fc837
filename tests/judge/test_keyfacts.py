"""Key facts drafted from a reference answer: figures with unit, scale and period, the yes/no,
entities and direction words; marked drafted, stored apart, decided on by no check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.dataset import Entry, load_dataset, tier_of, write_dataset
from assay.judge.checking import check_entry
from assay.judge.keyfacts import DRAFTS_KEY, draft_entries, draft_key_facts

FB = next(
    (p / "shared" / "financebench" for p in Path(__file__).resolve().parents
     if (p / "shared" / "financebench").is_dir()),
    Path("shared") / "financebench",
)  # fmt: skip


def _kinds(facts: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in facts:
        assert f["drafted"] is True
        out.setdefault(f["kind"], []).append(f)
    return out


def test_figures_carry_unit_scale_and_their_own_period() -> None:
    facts = _kinds(draft_key_facts(
        "Yes. Nike has an improving gross margin profile as of FY2023. Gross profit improved "
        "from $21,479 million in FY2022 to $22,292 million in FY2023.",
        "Does Nike have an improving gross margin profile as of FY2023?",
    ))  # fmt: skip
    (yes,) = facts["polarity"]
    assert yes["polarity"] == "yes" and "improving gross margin profile" in yes["fact"]
    first, second = facts["figure"]
    assert (first["figure"], first["unit"], first["scale"], first["period"]) == (
        "$21,479 million", "USD", 1e6, "FY2022",
    )  # fmt: skip
    assert second["period"] == "FY2023" and second["value"] == 22_292e6
    assert "Gross profit improved" in first["fact"]
    assert {f["fact"] for f in facts["direction"]} >= {"improved"}


def test_the_question_sets_the_scale_of_a_bare_figure_and_no_reads_as_no() -> None:
    (fig,) = draft_key_facts("$1577.00", "What is the FY2018 capex (in USD millions) for 3M?")
    assert fig["value"] == 1577e6 and fig["scale"] == 1e6
    facts = _kinds(draft_key_facts(
        "No, Ford's FY2022 financials are not of a high growth company as sales grew 1.3%.",
        "Are Ford's FY2022 financials that of a high growth company?",
    ))  # fmt: skip
    assert facts["polarity"][0]["polarity"] == "no"
    assert [f["fact"] for f in facts["direction"]][:2] == ["not", "growth"]
    names = _kinds(draft_key_facts(
        "The US government and Airbus Group accounted for 40% of revenue.",
        "Who are Boeing's customers?",
    ))["entity"]  # fmt: skip
    assert "Airbus Group" in {n["fact"] for n in names}


def test_drafts_decide_nothing_and_change_no_tier() -> None:
    e = Entry.model_validate({
        "id": "k1", "query": "Is Ford's business cyclical?", "category": "c",
        "reference_answer": "Yes, Ford's business is cyclical.", "reviewed_by": 1,
    })  # fmt: skip
    (d,), n = draft_entries([e])
    assert n == 1 and d.metadata[DRAFTS_KEY] and not d.key_facts
    assert tier_of(d) == tier_of(e)
    for answer in ("No.", "Yes, Ford's business is cyclical.", "Ford builds cars."):
        assert check_entry(d, answer).values == check_entry(e, answer).values
    # an entry with expert key facts is left alone; drafts are not redone unless asked
    expert = Entry.model_validate({**e.to_json_dict(), "key_facts": [{"fact": "cyclical"}]})
    kept, n = draft_entries([expert])
    assert n == 0 and kept[0] is expert and DRAFTS_KEY not in kept[0].metadata
    again, n = draft_entries([d])
    assert n == 0 and again[0] is d


def test_assay_keyfacts_writes_the_drafts(tmp_path: Path) -> None:
    src = tmp_path / "golden.jsonl"
    e = Entry.model_validate({"id": "k1", "query": "What was capex (in USD millions)?",
                              "category": "c", "reference_answer": "$1,577"})  # fmt: skip
    write_dataset(src, [e], version="1.0")
    out = tmp_path / "drafted.jsonl"
    r = CliRunner().invoke(app, ["keyfacts", str(src), "--out", str(out), "-f", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["drafted"] == 1
    (got,) = load_dataset(out).entries
    assert got.metadata[DRAFTS_KEY][0]["value"] == 1577e6
    assert load_dataset(src).entries[0].metadata == {}  # the source untouched
    r = CliRunner().invoke(app, ["keyfacts", str(src)])  # in place
    assert r.exit_code == 0 and DRAFTS_KEY in load_dataset(src).entries[0].metadata
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    r = CliRunner().invoke(app, ["keyfacts", str(bad)])
    assert r.exit_code == 2 and "bad.jsonl" in r.output
    assert bad.read_text() == '{"id": "x"}\n'  # nothing written


def test_financebench_import_drafts_key_facts() -> None:
    if not (FB / "questions_dev.jsonl").exists():
        pytest.skip("FinanceBench dev split not present")
    from assay.benchmarks.financebench import import_financebench

    got = {e.id: e for e in import_financebench(FB / "questions_dev.jsonl")}
    assert all(not e.key_facts and e.metadata[DRAFTS_KEY] for e in got.values())
    capex = _kinds(got["financebench_id_03029"].metadata[DRAFTS_KEY])["figure"]
    assert capex[0]["value"] == 1577e6
    stated = [e for e in got.values() if _kinds(e.metadata[DRAFTS_KEY]).get("statement")]
    assert [e.reference_answer for e in stated if e.reference_answer == "Customer deposits"]
    boeing = _kinds(got["financebench_id_00464"].metadata[DRAFTS_KEY])
    assert boeing["polarity"][0]["polarity"] == "yes"
