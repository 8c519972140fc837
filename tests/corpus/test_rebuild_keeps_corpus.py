"""A corpus rebuild where every file fails keeps the previous corpus (issue 11)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.corpus.test_build import MakePdf, _docs, _src
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.corpus import build_corpus
from assay.errors import DataError, UsageError


def _snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def test_every_file_failing_keeps_the_previous_corpus(tmp_path: Path, pdf_factory: MakePdf) -> None:
    src = _src(tmp_path, pdf_factory)
    out = tmp_path / "corpus"
    first = build_corpus(src, meta=_docs(), out_dir=out, workers=1)
    assert first.ok and first.n_documents == 3
    before = _snapshot(out)
    assert set(before) >= {"chunks.jsonl", "documents.jsonl", "pages.jsonl", "manifest.json"}
    (src / "acme-2023-10k.pdf").write_bytes(b"%PDF-1.7\n garbage")
    (src / "acme-2024q1-10q.pdf").write_bytes(b"not a pdf at all")
    (src / "acme-2023-8k.html").unlink()
    with pytest.raises(DataError) as err:
        build_corpus(src, meta=_docs(), out_dir=out, workers=1)
    assert any("every file failed" in p.message for p in err.value.problems)
    assert {Path(p.file).name for p in err.value.problems} >= {
        "acme-2023-10k.pdf",
        "acme-2024q1-10q.pdf",
    }
    assert _snapshot(out) == before
    # the command says so and exits 2
    res = CliRunner().invoke(
        app, ["corpus", "build", str(src), "--out", str(out), "--workers", "1", "--no-progress"]
    )
    assert res.exit_code == 2, res.output
    assert "every file failed" in res.output and "Traceback" not in res.output
    assert _snapshot(out) == before


def test_build_refuses_to_write_over_its_inputs(tmp_path: Path, pdf_factory: MakePdf) -> None:
    src = _src(tmp_path, pdf_factory)
    with pytest.raises(UsageError, match="folder of filings"):
        build_corpus(src, meta=None, out_dir=src, workers=1)
    out = tmp_path / "corpus"
    out.mkdir()
    meta = out / "documents.jsonl"
    meta.write_text("".join(d.model_dump_json() + "\n" for d in _docs()), encoding="utf-8")
    before = meta.read_bytes()
    with pytest.raises(UsageError, match="--meta is a file the build writes"):
        build_corpus(src, meta=meta, out_dir=out, workers=1)
    assert meta.read_bytes() == before
