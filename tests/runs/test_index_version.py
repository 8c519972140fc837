"""Scoring a run made on another index than the one the dataset's manifest names says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cache import RequestCache
from assay.cli import app
from assay.dataset import Entry, load_dataset, write_dataset
from assay.runner import run_system
from assay.runs import load_run
from assay.runs.binding import index_mismatch, run_index
from assay.score import score_retrieval

ROWS = [
    {
        "id": f"e{i}",
        "query": f"What was revenue in {2020 + i}?",
        "category": "lookup",
        "evidence_paths": [[[f"What was revenue in {2020 + i}?-0"]]],
    }
    for i in range(3)
]
BOUND = "0123456789abcdef"  # 16 hex digits, as ChunkTable.version and corpus hashes are written
runner = CliRunner()


def _case(
    tmp_path: Path, corpus_id: str | None, index_version: str | None = BOUND
) -> tuple[Path, Path]:
    ds = tmp_path / "golden.jsonl"
    write_dataset(
        ds, [Entry.model_validate(r) for r in ROWS], version="v1", index_version=index_version
    )
    out = tmp_path / "run.jsonl"
    run_system(
        load_dataset(ds),
        "tests.runner.fake_systems:Echo",
        k=3,
        cache=RequestCache(enabled=False),
        out=out,
        progress=False,
        corpus_id=corpus_id,
    )
    return ds, out


def test_a_run_on_another_index_is_named_in_every_format(tmp_path: Path) -> None:
    ds, run = _case(tmp_path, corpus_id="fedcba9876543210")
    assert run_index(load_run(run)) == "fedcba9876543210"
    js = runner.invoke(app, ["score", str(ds), str(run), "-f", "json"])
    assert js.exit_code == 0, js.output
    got = json.loads(js.stdout)["index_mismatch"]
    assert (got["run"], got["dataset"]) == ("fedcba9876543210", BOUND)
    assert "made on index fedcba9876543210" in got["message"]
    assert f"bound to index {BOUND}" in got["message"]
    md = runner.invoke(app, ["score", str(ds), str(run), "-f", "markdown"])
    assert "note: " in md.stdout and "bound to index 0123456789abcdef" in md.stdout
    table = runner.invoke(app, ["score", str(ds), str(run)])
    words = " ".join(table.stdout.split())  # the caption wraps
    assert table.exit_code == 0 and "bound to index 0123456789abcdef" in words
    # scored all the same: a note, not a refusal
    assert json.loads(js.stdout)["overall"]["recall@5"] == 1.0


@pytest.mark.parametrize(
    ("corpus_id", "index_version"),
    [
        (BOUND, BOUND),
        (BOUND + "0" * 48, BOUND),  # the full hash and its 16-digit version are one index
        (BOUND.upper(), BOUND),
        (None, BOUND),  # a run that does not say where it was made
        ("fedcba9876543210", None),  # a dataset bound to no index
    ],
)
def test_no_note_when_they_agree_or_one_does_not_say(
    tmp_path: Path, corpus_id: str | None, index_version: str | None
) -> None:
    ds, run = _case(tmp_path, corpus_id, index_version)
    scores = score_retrieval(load_dataset(ds), load_run(run), k=3)
    assert scores.index_mismatch is None
    assert not any("bound to index" in n for n in scores.notes())


def test_short_names_are_not_taken_for_prefixes(tmp_path: Path) -> None:
    """`v3` is not `v31`: only hex hashes of 12 digits or more match at two lengths."""
    ds, run = _case(tmp_path, corpus_id="v31", index_version="v3")
    assert index_mismatch(load_dataset(ds), load_run(run)) is not None
