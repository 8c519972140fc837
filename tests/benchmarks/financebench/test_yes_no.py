"""answer_correct on FinanceBench yes/no questions: imported entries carry a reference answer
and no key facts, so the yes/no the reference opens with decides; and a gate over them fails a
candidate that answers every yes/no question the other way."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli.bench_cmds
import assay.cli.stats_cmds  # noqa: F401  (assay gate)
from assay.benchmarks.financebench import import_financebench
from assay.cli import app
from assay.dataset import Entry, write_dataset
from assay.judge.checking import check_entry

FB = next(
    (p / "shared" / "financebench" for p in Path(__file__).resolve().parents
     if (p / "shared" / "financebench").is_dir()),
    Path("shared") / "financebench",
)  # fmt: skip
present = pytest.mark.skipif(
    not (FB / "graded_answers_dev.jsonl").exists(), reason="FinanceBench dev split not present"
)
_YES_NO = re.compile(r"^\s*(yes|no)\b", re.I)


def _flip(answer: str) -> str:
    return _YES_NO.sub(lambda m: "No" if m.group(1).lower() == "yes" else "Yes", answer)


@pytest.fixture(scope="module")
def entries() -> dict[str, Entry]:
    if not (FB / "questions_dev.jsonl").exists():
        pytest.skip("FinanceBench dev split not present")
    got = import_financebench(FB / "questions_dev.jsonl", documents=FB / "documents.jsonl")
    return {e.id: e for e in got}


def _correct(e: Entry, answer: str) -> bool | None:
    v = check_entry(e, answer, checks="answer_correct").values["answer_correct"]
    return None if v is None else bool(v)


@present
def test_the_cyclicality_question_is_decided_by_its_yes(entries: dict[str, Entry]) -> None:
    e = entries["financebench_id_00464"]  # "Is Boeing's business subject to cyclicality?"
    assert not e.key_facts and (e.reference_answer or "").startswith("Yes")
    assert _correct(e, "No, Boeing's business is not subject to cyclicality.") is False
    assert _correct(e, "No. Demand for aircraft is steady.") is False
    assert _correct(e, "Yes, Boeing's business is subject to cyclicality.") is True
    # an answer that says neither, and contradicts nothing, is not decided; a bare statement
    # of the question's statement answers it (the reference's one long sentence aside)
    assert _correct(e, "Boeing builds airplanes.") is None
    assert _correct(e, "Boeing's business is subject to cyclicality.") is True
    assert _correct(e, "Boeing's business is not subject to cyclicality.") is False
    # where the reference's statement is short, an answer stating it without a yes/no is read
    g = entries["financebench_id_00678"]  # "Yes. Boeing has an improving gross margin profile..."
    assert _correct(g, "Based on its 10-K, Boeing has an improving gross margin profile as of "
                    "FY2022.") is True  # fmt: skip
    assert _correct(g, "Boeing does not have an improving gross margin profile as of FY2022.") is (
        False
    )


@present
def test_every_yes_no_reference_passes_and_its_negation_fails(entries: dict[str, Entry]) -> None:
    asked = [e for e in entries.values() if _YES_NO.match(e.reference_answer or "")]
    assert len(asked) == 19 and not any(e.key_facts for e in asked)
    for e in asked:
        ref = e.reference_answer or ""
        assert _correct(e, ref) is True, (e.id, ref)
        assert _correct(e, _flip(ref)) is False, (e.id, ref)


@present
def test_human_graded_correct_answers_to_yes_no_questions_mostly_pass(
    entries: dict[str, Entry],
) -> None:
    """Agreement with the FinanceBench experts' labels on the graded answers to the questions
    whose reference opens with Yes/No (refusals left out): most answers they graded correct
    pass where the check decides, and the check decides most of them."""
    asked = {i for i, e in entries.items() if _YES_NO.match(e.reference_answer or "")}
    passed = failed = undecided = 0
    for line in (FB / "graded_answers_dev.jsonl").read_text(encoding="utf-8").splitlines():
        g = json.loads(line)
        if g["financebench_id"] not in asked or g["label"] != "Correct Answer":
            continue
        v = _correct(entries[g["financebench_id"]], g["model_answer"])
        passed, failed, undecided = (
            passed + (v is True), failed + (v is False), undecided + (v is None),
        )  # fmt: skip
    assert passed / (passed + failed) >= 0.75, (passed, failed, undecided)
    assert undecided < passed


@present
def test_a_gate_fails_a_candidate_that_negates_every_yes_no_answer(
    entries: dict[str, Entry], tmp_path: Path
) -> None:
    golden = tmp_path / "fb.jsonl"
    write_dataset(golden, entries.values())
    ref, neg = tmp_path / "ref.jsonl", tmp_path / "neg.jsonl"
    rows = [(e.id, e.reference_answer or "") for e in entries.values()]
    ref.write_text("".join(json.dumps({"id": i, "answer": a}) + "\n" for i, a in rows))
    neg.write_text("".join(json.dumps({"id": i, "answer": _flip(a)}) + "\n" for i, a in rows))
    args = ["--metric", "answer_correct", "--tiers", "gold,silver", "--no-record"]
    args += ["--resamples", "200", "--permutations", "200", "-f", "json"]
    bad = CliRunner().invoke(app, ["gate", str(golden), str(ref), str(neg), *args])
    assert bad.exit_code == 1, bad.output
    out = json.loads(bad.stdout)
    assert "domain-relevant" in out["failed_categories"]
    assert out["overall"]["cand"] < out["overall"]["base"]
    same = CliRunner().invoke(app, ["gate", str(golden), str(ref), str(ref), *args])
    assert same.exit_code == 0, same.output
