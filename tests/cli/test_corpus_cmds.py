"""`assay corpus embed`: the whole-corpus vectors ahead of the runs, and its bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.systems.filings.dense import HashingEncoder

runner = CliRunner()

TEXTS = ["Total revenue 211,915", "Operating income 88,523", "Net income was $90 million"]


def _corpus(root: Path, texts: list[str] = TEXTS) -> Path:
    root.mkdir(parents=True)
    rows = [
        {"chunk_id": f"d/{i + 1}/0", "doc_id": "d", "page": i + 1, "text": t}
        for i, t in enumerate(texts)
    ]
    (root / "chunks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_embed_writes_the_vectors_file_and_reuses_it(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    args = ["corpus", "embed", str(corpus), "--encoder", "hashing"]
    args += ["--cache-dir", str(tmp_path / "cache"), "--batch", "2", "-f", "json"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    report = json.loads(first.output)
    assert report["chunks"] == 3 and report["embedded"] == 3 and report["dim"] == 256
    assert report["executor"] == "local" and report["reused_vectors_file"] is False
    assert report["assay_version"]
    path = Path(report["path"])
    assert path.parent == tmp_path / "cache" / "vectors"
    np.testing.assert_array_equal(np.load(path), HashingEncoder().encode(TEXTS))
    again = json.loads(runner.invoke(app, args).output)
    assert again["reused_vectors_file"] is True and again["embedded"] == 0
    table = runner.invoke(app, args[:-2])
    assert table.exit_code == 0 and "corpus embedded" in table.output


def test_bad_inputs_exit_2_and_write_nothing(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    cache = tmp_path / "cache"
    for extra in (["--executor", "spark"], ["--encoder", "bert"], ["--batch", "0"]):
        res = runner.invoke(
            app, ["corpus", "embed", str(corpus), "--cache-dir", str(cache), *extra]
        )
        assert res.exit_code == 2, (extra, res.output)
        assert "Traceback" not in res.output
    (corpus / "chunks.jsonl").write_text('{"chunk_id": "d/1/0", "doc_id": "d", "page": 0}\n')
    res = runner.invoke(
        app, ["corpus", "embed", str(corpus), "--encoder", "hashing", "--cache-dir", str(cache)]
    )
    assert res.exit_code == 2 and "chunks.jsonl:1" in res.output
    assert not cache.exists()
