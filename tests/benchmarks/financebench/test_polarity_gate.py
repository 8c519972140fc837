"""Gates on FinanceBench-imported entries that cannot pass on abstentions: a candidate that
negates every yes/no answer of a real answerer (GPT-4 Turbo with the filing in context, graded
by the FinanceBench experts) fails `gate --metric polarity_correct` on the flipped answers, and a
gate on `answer_correct`, which abstains on most of that answerer's prose, fails by the
abstention rule unless --allow-abstain; every check's row leads with "decided n of N"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers the commands)
from assay.benchmarks.financebench import import_financebench
from assay.cli import app
from assay.dataset import write_dataset

FB = next(
    (p / "shared" / "financebench" for p in Path(__file__).resolve().parents
     if (p / "shared" / "financebench").is_dir()),
    Path("shared") / "financebench",
)  # fmt: skip
pytestmark = pytest.mark.skipif(
    not (FB / "graded_answers_dev.jsonl").exists(), reason="FinanceBench dev split not present"
)
_YES_NO = re.compile(r"^\s*(yes|no)\b", re.I)
MODEL = ("gpt-4-1106-preview", "inContext")


def _flip(answer: str) -> str:
    return _YES_NO.sub(lambda m: "No" if m.group(1).lower() == "yes" else "Yes", answer)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    tmp = tmp_path_factory.mktemp("fbgate")
    entries = import_financebench(FB / "questions_dev.jsonl", documents=FB / "documents.jsonl")
    golden = tmp / "fb.jsonl"
    write_dataset(golden, entries)
    said = {}
    for line in (FB / "graded_answers_dev.jsonl").read_text(encoding="utf-8").splitlines():
        g = json.loads(line)
        if (g["model_name"], g["eval_mode"]) == MODEL:
            said[g["financebench_id"]] = g["model_answer"].strip()
    base, cand = tmp / "base.jsonl", tmp / "neg.jsonl"
    rows = []
    for e in entries:
        ref = e.reference_answer or ""
        # the negated candidate: every yes/no question answered the other way
        neg = _flip(ref) if _YES_NO.match(ref) else said[e.id]
        rows.append((e.id, said[e.id], neg))
    base.write_text("".join(json.dumps({"id": i, "answer": a}) + "\n" for i, a, _ in rows))
    cand.write_text("".join(json.dumps({"id": i, "answer": n}) + "\n" for i, _, n in rows))
    return str(golden), str(base), str(cand)


def _gate(
    runs: tuple[str, str, str], metric: str, *extra: str, table: bool = False
) -> tuple[int, dict, str]:
    args = ["gate", *runs, "--metric", metric, "--tiers", "gold,silver", "--no-record"]
    args += ["--resamples", "200", "--permutations", "200", *extra]
    out = CliRunner().invoke(app, [*args, "-f", "json"])
    shown = CliRunner().invoke(app, args).output if table else ""
    return out.exit_code, json.loads(out.stdout), shown


def test_the_negated_candidate_fails_a_gate_on_polarity_correct(
    runs: tuple[str, str, str],
) -> None:
    code, out, table = _gate(runs, "polarity_correct", table=True)
    assert code == 1
    assert out["overall"]["cand"] < out["overall"]["base"]
    assert "domain-relevant" in out["failed_categories"]
    assert re.search(r"decided \d+ of \d+: FAIL", table), table


def test_a_gate_on_answer_correct_fails_by_the_abstention_rule(
    runs: tuple[str, str, str],
) -> None:
    code, out, _ = _gate(runs, "answer_correct")
    assert code == 1
    said = [r["verdict"] for r in [*out["rows"], out["overall"]]]
    assert any("answer_correct abstained on" in v for v in said), said
    # --allow-abstain is the escape hatch: the abstention rule no longer fails any row
    code, out, _ = _gate(runs, "answer_correct", "--allow-abstain")
    said = [r["verdict"] for r in [*out["rows"], out["overall"]]]
    assert not any("abstained on" in v for v in said), said
    assert out["max_abstain"] == 1.0


def test_polarity_correct_agrees_with_the_experts_on_correct_answers() -> None:
    """The FinanceBench experts' "Correct Answer" grades on the yes/no questions' answers (the
    rules alone, no semantic opinion): measured 153 of 178 pass (0.86, Wilson [0.80, 0.90])."""
    from assay.judge.checking import check_entry
    from assay.judge.polarity import reference_polarity

    entries = {
        e.id: e
        for e in import_financebench(FB / "questions_dev.jsonl", documents=FB / "documents.jsonl")
    }
    asked = {i for i, e in entries.items() if reference_polarity(e) is not None}
    assert len(asked) == 21
    passed = graded = 0
    for line in (FB / "graded_answers_dev.jsonl").read_text(encoding="utf-8").splitlines():
        g = json.loads(line)
        if g["financebench_id"] not in asked or g["label"] != "Correct Answer":
            continue
        v = check_entry(entries[g["financebench_id"]], g["model_answer"], checks="polarity_correct")
        graded += 1
        passed += v.values["polarity_correct"] is True
    assert graded == 178 and passed >= 150, passed
