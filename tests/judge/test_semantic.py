"""The semantic second opinion: its threshold chosen on the fit half of the contrast set and
reported on the held-out half (other companies); without the dense extra it says what it would
add and the checks abstain as before."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.dataset import Entry
from assay.judge import semantic
from assay.judge.checking import check_entry

DATA = Path(__file__).parent / "data" / "paraphrase_contrast.jsonl"
ROWS = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def op() -> Iterator[semantic.SemanticOpinion]:
    if not semantic.available():
        pytest.skip("the dense extra is not installed")
    was = semantic.use(True)
    op = semantic.opinion()  # the process's encoder, loaded once for the suite
    # one batch for every text of the contrast set (the encoder keeps them): the tests then
    # read them back instead of running the model pair by pair
    op.encoder.encode([t for r in ROWS for t in (r["fact"], r["answer"].strip())])
    yield op
    semantic.use(was)


def test_the_contrast_set_is_two_halves_of_different_companies() -> None:
    fit = [r for r in ROWS if r["half"] == "fit"]
    held = [r for r in ROWS if r["half"] == "held"]
    assert len(ROWS) >= 40 and len(fit) >= 20 and len(held) >= 20
    assert not {r["company"] for r in fit} & {r["company"] for r in held}
    for half in (fit, held):
        assert {r["kind"] for r in half if not r["entails"]} >= {"negation", "antonym", "entity"}
        assert sum(r["entails"] for r in half) * 2 == len(half)


def test_the_threshold_is_the_one_the_fit_half_chooses(op: semantic.SemanticOpinion) -> None:
    fit = [r for r in ROWS if r["half"] == "fit"]
    scores = []
    for r in fit:
        m = op.nearest(r["fact"], r["answer"])
        assert m is not None
        scores.append(-1.0 if m.flipped or m.other_name else m.score)
    assert semantic.choose_threshold(scores, [r["entails"] for r in fit]) == semantic.THRESHOLD


def test_the_held_out_half(op: semantic.SemanticOpinion) -> None:
    held = [(r["fact"], r["answer"], r["entails"]) for r in ROWS if r["half"] == "held"]
    rep = semantic.contrast_report(held, op)
    # reported in the module docs and the report: accuracy 29/32, TPR 15/16, TNR 14/16
    assert (rep.correct, rep.n, rep.tp, rep.positives, rep.tn, rep.negatives) == (
        29, 32, 15, 16, 14, 16,
    )  # fmt: skip
    rates = rep.rates()
    assert rates["accuracy"][1] > 0.75 and rates["tnr"][0] == 14 / 16


def test_choose_threshold_prefers_the_higher_cut_on_ties() -> None:
    assert semantic.choose_threshold([0.9, 0.8, 0.5, 0.4], [True, True, False, False]) == 0.8
    with pytest.raises(ValueError):
        semantic.choose_threshold([], [])


def test_without_the_extra_the_checks_abstain_and_say_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(semantic, "available", lambda: False)
    was = semantic.use(True)
    try:
        assert isinstance(semantic.opinion(), semantic.SemanticOpinion)
        assert semantic.opinion().nearest("a", "b") is None
        assert semantic.note() == semantic.MISSING
        e = Entry.model_validate(
            {"id": "s1", "query": "Was Costco able to retain its members during 2022?",
             "category": "c", "reference_answer": "Yes"}
        )  # fmt: skip
        r = check_entry(e, "Costco kept its members.", checks=["answer_correct"])
        assert r.values["answer_correct"] is None
        assert r.notes == [semantic.MISSING]
    finally:
        semantic.use(was)
