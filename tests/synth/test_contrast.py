"""The checks on a contrast set written from the room's facts: >= 95% classified correctly."""

from __future__ import annotations

from collections import Counter

import pytest

from assay.synth.contrast import ContrastReport, contrast_cases, score_contrast
from assay.synth.generate import Room, build_room


@pytest.fixture(scope="module")
def room() -> Room:
    return build_room(seed=11, companies=4, years=2)


@pytest.fixture(scope="module")
def report(room: Room) -> ContrastReport:
    return score_contrast(contrast_cases(room, per_kind=3))


def test_the_set_has_50_or_more_negations_swaps_and_paraphrases(room: Room) -> None:
    cases = contrast_cases(room, per_kind=3)
    kinds = Counter(c.kind for c in cases)
    assert len(cases) >= 50
    for kind in ("paraphrase", "negation", "antonym", "entity", "period", "unit"):
        assert kinds[kind] >= 5, kinds
    assert all(c.answer != c.entry.reference_answer for c in cases)


def test_the_checks_classify_at_least_95_percent_correctly(report: ContrastReport) -> None:
    assert report.n >= 50
    assert report.accuracy >= 0.95, report.to_markdown()
    for kind, (ok, n) in report.by_kind().items():
        assert ok / n >= 0.9, (kind, ok, n)


def test_a_contradiction_is_not_counted_correct_when_the_checks_pass_it(room: Room) -> None:
    cases = [c for c in contrast_cases(room, per_kind=1) if c.kind == "negation"][:3]

    from types import SimpleNamespace

    passing = SimpleNamespace(values={"contradiction_free": True, "answer_correct": True}, notes=())
    rep = score_contrast(cases, check=lambda *a, **k: passing)
    assert rep.correct == 0 and rep.n == 3
    assert "missed" in rep.to_markdown()
