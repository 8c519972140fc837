"""The pytest plugin: the fixture fails a test on regression and passes otherwise."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from assay.compare.ledger import read_ledger
from assay.pytest_plugin import gate_or_fail


def test_gate_or_fail(make_case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case({"a": [(2, 0)] * 4 + [(2, 2)] * 30, "b": [(2, 2)] * 10})
    with pytest.raises(pytest.fail.Exception, match="regressed in a"):
        gate_or_fail(ds, base, cand, n_resamples=300, n_permutations=300)
    res = gate_or_fail(
        ds,
        base,
        cand,
        margins={"a": 0.2},
        summary=tmp_path / "s.md",
        n_resamples=300,
        n_permutations=300,
    )
    assert res.passed and (tmp_path / "s.md").read_text().startswith("### assay gate")


def test_plugin_loads_in_a_project_suite(
    make_case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case({"a": [(2, 0)] * 4 + [(2, 2)] * 30})
    (tmp_path / "test_project.py").write_text(
        textwrap.dedent(
            f"""
            def test_passes(assay_gate):
                assay_gate({str(ds)!r}, {str(base)!r}, {str(base)!r}, n_resamples=200)

            def test_regresses(assay_gate):
                assay_gate({str(ds)!r}, {str(base)!r}, {str(cand)!r}, n_resamples=200)
            """
        )
    )
    code = pytest.main(
        ["-q", "-p", "assay.pytest_plugin", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
         str(tmp_path / "test_project.py")],
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == pytest.ExitCode.TESTS_FAILED, out
    assert "1 failed, 1 passed" in out
    assert "FAIL: complete@5 regressed in a" in out
    # the suite run again: the same comparison, not a new one (and a run against itself is none)
    code = pytest.main(
        ["-q", "-p", "assay.pytest_plugin", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
         str(tmp_path / "test_project.py")],
    )  # fmt: skip
    capsys.readouterr()
    assert code == pytest.ExitCode.TESTS_FAILED
    recs = read_ledger(ds)
    assert len(recs) == 1 and recs[0]["t"] == 1 and recs[0]["command"] == "gate"


def test_a_missing_chunk_table_fails_in_one_line(make_case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case({"a": [(2, 2)] * 4})
    missing = tmp_path / "nope" / "chunks.jsonl"
    with pytest.raises(pytest.fail.Exception) as info:
        gate_or_fail(ds, base, cand, chunks=missing, n_resamples=100, n_permutations=100)
    msg = str(info.value)
    assert msg.startswith("assay gate could not run:") and str(missing) in msg
    assert "Traceback" not in msg and len(msg.splitlines()) <= 3
    assert info.value.pytrace is False  # type: ignore[attr-defined]


def test_the_no_record_note_names_the_argument(make_case) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case({"a": [(2, 2)] * 6})
    res = gate_or_fail(ds, base, cand, record=False, n_resamples=100, n_permutations=100)
    text = res.to_markdown()
    assert "record=False" in text and "--no-record" not in text
    assert read_ledger(ds) == []


def test_the_docstring_documents_every_argument() -> None:
    import assay.pytest_plugin as plugin

    doc = plugin.__doc__ or ""
    for arg in ("``chunks``", "``level``", "``record``", "``summary``", "``margins``"):
        assert arg in doc
