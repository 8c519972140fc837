"""The ledger follows a dataset's content, not its file name or spelling.

A copy of the dataset (renamed, moved, its text in Unicode NFD instead of NFC, its numbers
written ``60.0`` instead of ``60``, CRLF line ends) continues its original's count, and a
comparison its original already made is a repeat with the original's number, not a new look.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import write_case

from assay._io import jsonl_identity
from assay.compare import compare_files, ledger_count, read_ledger
from assay.compare.ledger import ledger_path

OUTCOMES = {"lookup": [(2, 2)] * 12 + [(2, 0)] * 4, "trend": [(2, 1)] * 6}
KW: dict[str, Any] = {"n_resamples": 100, "n_permutations": 100}


def _case(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The case's dataset rewritten with accented text and an integral number in each entry."""
    ds, base, cand = write_case(tmp_path / "orig", OUTCOMES)
    rows = [json.loads(line) for line in ds.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        r["query"] = f"Soci\u00e9t\u00e9 G\u00e9n\u00e9rale: {r['query']}"
        r["metadata"]["pages"] = 60
    ds.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return ds, base, cand


def _nfd(v: Any) -> Any:
    if isinstance(v, str):
        return unicodedata.normalize("NFD", v)
    if isinstance(v, dict):
        return {_nfd(k): _nfd(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_nfd(x) for x in v]
    return v


def _floats(v: Any) -> Any:
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return float(v)
    if isinstance(v, dict):
        return {k: _floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_floats(x) for x in v]
    return v


def _copy(ds: Path, to: Path, spell: Any = None, *, end: str = "\n") -> Path:
    """``ds`` copied to ``to``, each JSON value passed through ``spell`` (as it is: None)."""
    to.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in ds.read_text(encoding="utf-8").splitlines()]
    if spell is not None:
        rows = [spell(r) for r in rows]
    to.write_text("".join(json.dumps(r, ensure_ascii=False) + end for r in rows), "utf-8")
    return to


def test_the_identity_ignores_the_unicode_form_and_integral_floats(tmp_path: Path) -> None:
    ds, _, _ = _case(tmp_path)
    nfd = _copy(ds, tmp_path / "nfd.jsonl", _nfd)
    floats = _copy(ds, tmp_path / "floats.jsonl", _floats)
    assert nfd.read_bytes() != ds.read_bytes() and b"60.0" in floats.read_bytes()
    assert jsonl_identity(nfd) == jsonl_identity(ds) == jsonl_identity(floats)
    # NFD written as ASCII escapes (\u0301), and a float in exponent form
    escaped = tmp_path / "escaped.jsonl"
    rows = [_nfd(json.loads(line)) for line in ds.read_text(encoding="utf-8").splitlines()]
    escaped.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    assert escaped.read_bytes().isascii() and jsonl_identity(escaped) == jsonl_identity(ds)
    big = _copy(ds, tmp_path / "big.jsonl", lambda r: {**r, "metadata": {"pages": 10**15}})
    big_float = tmp_path / "big-float.jsonl"
    big_float.write_text(big.read_text("utf-8").replace(str(10**15), "1e15"), "utf-8")
    assert jsonl_identity(big_float) == jsonl_identity(big)
    # what the file says still counts: another number, a fraction, a letter
    other = _copy(ds, tmp_path / "other.jsonl", lambda r: {**r, "metadata": {"pages": 61}})
    half = _copy(ds, tmp_path / "half.jsonl", lambda r: {**r, "metadata": {"pages": 60.5}})
    word = _copy(ds, tmp_path / "word.jsonl", lambda r: {**r, "query": r["query"] + "!"})
    assert len({jsonl_identity(p) for p in (ds, other, half, word)}) == 4
    # an integer stays apart from a string that spells it
    text = _copy(ds, tmp_path / "text.jsonl", lambda r: {**r, "metadata": {"pages": "60"}})
    assert jsonl_identity(text) != jsonl_identity(ds)


def _two_comparisons(ds: Path, base: Path, cand: Path) -> None:
    assert compare_files(ds, base, cand, k=5, **KW).ledger_t == 1
    assert compare_files(ds, base, cand, k=3, **KW).ledger_t == 2


@pytest.mark.parametrize(
    ("name", "spell", "end"),
    [
        ("nfd", _nfd, "\n"),
        ("floats", _floats, "\n"),
        ("crlf", None, "\r\n"),
        ("renamed", None, "\n"),
    ],
)
def test_a_respelt_copy_continues_the_count_and_repeats_are_repeats(
    tmp_path: Path, name: str, spell: Any, end: str
) -> None:
    ds, base, cand = _case(tmp_path)
    _two_comparisons(ds, base, cand)
    copy = _copy(ds, tmp_path / name / f"{name}-golden.jsonl", spell, end=end)
    assert ledger_count(copy) == 2  # what the planner counts from
    again = compare_files(copy, cand, base, k=5, **KW)  # comparison 1, runs swapped
    assert (again.ledger_t, again.ledger_repeat) == (1, True)
    assert ledger_count(copy) == 2
    new = compare_files(copy, base, cand, k=4, **KW)
    assert (new.ledger_t, new.ledger_repeat) == (3, False)
    assert ledger_count(copy) == 3
    # and comparison 2, after the copy's own: still a repeat, with its number
    old = compare_files(copy, base, cand, k=3, **KW)
    assert (old.ledger_t, old.ledger_repeat) == (2, True)
    assert ledger_count(copy) == 3
    assert ledger_count(ds) == 2  # the copy's look is its own


def test_a_dataset_respelt_in_place_keeps_its_comparisons(tmp_path: Path) -> None:
    ds, base, cand = _case(tmp_path)
    _two_comparisons(ds, base, cand)
    _copy(ds, ds, _nfd, end="\r\n")  # an editor saved it in NFD with CRLF
    again = compare_files(ds, base, cand, k=3, **KW)
    assert (again.ledger_t, again.ledger_repeat) == (2, True)
    assert ledger_count(ds) == 2


def test_the_planner_counts_a_copys_comparisons(tmp_path: Path) -> None:
    from assay.compare.planning import plan_sample

    ds, base, cand = _case(tmp_path)
    _two_comparisons(ds, base, cand)
    copy = _copy(ds, tmp_path / "copy" / "renamed.jsonl", _nfd)
    planned = plan_sample(delta=0.1, dataset=copy, base=base, cand=cand, k=5)
    assert "comparison #3 (ledger x12)" in planned.family  # the next comparison is #3


def test_a_ledger_older_than_the_index_is_not_counted_twice(tmp_path: Path) -> None:
    ds, base, cand = _case(tmp_path)
    _two_comparisons(ds, base, cand)
    Path(os.environ["ASSAY_LEDGER_INDEX"]).unlink()  # both written before there was an index
    assert compare_files(ds, base, cand, k=4, **KW).ledger_t == 3  # indexes the ledger
    copy = _copy(ds, tmp_path / "copy" / "golden.jsonl", _floats)
    for k, t in ((5, 1), (3, 2), (4, 3)):
        again = compare_files(copy, base, cand, k=k, **KW)
        assert (again.ledger_t, again.ledger_repeat) == (t, True), k
    assert ledger_count(copy) == 3
    assert compare_files(copy, base, cand, k=2, **KW).ledger_t == 4
    assert [r.get("t") for r in read_ledger(ds)] == [1, 2, 3]
    assert ledger_path(copy).exists()
