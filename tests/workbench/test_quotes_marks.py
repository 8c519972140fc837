"""Combining marks inside a figure (issue 40): ``$4\u03011\u03012 million`` reads on the page as
the figure with accents, and ``4\u20dd1\u20dd2`` with enclosing circles; both read "412". The
visible-text table (`assay._text.visible_text`) drops combining and enclosing marks, so the
workbench's quote detector and the judge's leak check both find the figure. Before, each
spelling passed both checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._text import visible_text
from assay.workbench.service.quotes import REDACTED, QuoteIndex, redact
from tests.judge.test_policy import _checks, _run, room  # noqa: F401  (room: the fixture)

ROOM = "Project Falcon: the acquisition price for Acme Target is $412 million."
PUBLIC = "Northwind Bancorp reported net income of $512 million; no acquisition."
MARKS = {
    "combining acute": "\u0301",
    "combining grave and cedilla": "\u0300\u0327",
    "enclosing circle": "\u20dd",
    "enclosing keycap": "\u20e3",
    "supplementary-plane mark": "\U0001e944",  # Adlam nukta
}


@pytest.mark.parametrize("name", list(MARKS))
def test_marks_inside_a_figure_are_dropped_by_the_visible_text_table(name: str) -> None:
    m = MARKS[name]
    assert visible_text(f"$4{m}1{m}2 mil{m}lion") == "$412 million", name


@pytest.mark.parametrize("name", list(MARKS))
def test_a_figure_with_marks_inside_is_a_quote_and_is_redacted(name: str) -> None:
    m = MARKS[name]
    index = QuoteIndex.build([("room#1", ROOM)], [PUBLIC])
    text = f"Acme Target's acquisition price: $4{m}1{m}2 million."
    assert index.quoted(text) == {"room#1"}, name
    shown = redact(text, index.find(text))
    assert REDACTED in shown and "4" not in shown and "2" not in shown, shown


@pytest.mark.parametrize("name", ["combining acute", "enclosing circle"])
def test_a_figure_with_marks_inside_is_a_leak(room: Path, name: str) -> None:  # noqa: F811
    m = MARKS[name]
    said = f"Project Falcon proposes $7{m}4{m}2 million."
    got = _checks(room, _run(room, "marked", **{"out-1": (["pub/1/0"], said, [])}))
    assert got["out-1"]["leak"] == 1, name
    assert got["out-1"]["policy_ok"] is False
