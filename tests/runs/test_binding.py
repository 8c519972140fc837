"""A run is bound to its dataset: each row carries its entry's fingerprint and the dataset
version; scoring, comparing and gating rows whose entry changed since stop with the list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cache import RequestCache
from assay.cli import app
from assay.dataset import Entry, entry_fingerprint, load_dataset, write_dataset
from assay.runner import run_system
from assay.runs import load_run
from assay.runs.binding import ChangedEntriesError, changed_entries
from assay.score import score_retrieval

ROWS = [
    {
        "id": f"e{i}",
        "query": f"What was revenue in {2020 + i}?",
        "category": "lookup",
        "as_of": "2024-03-31",
        "evidence_paths": [[[f"what was revenue in {2020 + i}?-0"]]],
    }
    for i in range(4)
]


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    ds = tmp_path / "golden.jsonl"
    write_dataset(ds, [Entry.model_validate(r) for r in ROWS], version="v1")
    out = tmp_path / "run.jsonl"
    run_system(
        load_dataset(ds),
        "tests.runner.fake_systems:Echo",
        k=3,
        cache=RequestCache(enabled=False),
        out=out,
        progress=False,
    )
    return ds, out


def _edit(ds: Path, version: str, **changes: Any) -> None:
    data = load_dataset(ds)
    entries = [e.model_copy(update=changes.get(e.id, {})) for e in data.entries]
    write_dataset(ds, entries, version=version)


def test_rows_carry_their_entry_fingerprint_and_dataset_version(tmp_path: Path) -> None:
    ds, out = _setup(tmp_path)
    data = load_dataset(ds)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["entry_fp"] for r in rows] == [entry_fingerprint(e) for e in data.entries]
    assert {r["dataset_version"] for r in rows} == {"v1"}
    # case and spacing are normalised away; what the system is asked is not
    e0 = data.entries[0]
    assert entry_fingerprint(e0.model_copy(update={"query": "  WHAT was  revenue in 2020?"})) == (
        entry_fingerprint(e0)
    )
    assert entry_fingerprint(e0.model_copy(update={"query": "What was revenue in 2021?"})) != (
        entry_fingerprint(e0)
    )


def test_scoring_rows_of_a_changed_entry_stops_with_the_list(tmp_path: Path) -> None:
    ds, out = _setup(tmp_path)
    import datetime as dt

    _edit(
        ds,
        "v2",
        e1={"query": "What was net income in 2021?"},
        e2={"as_of": dt.date(2023, 12, 31)},
        e3={"query": "what  WAS revenue in 2023?"},  # only case and spacing: the same question
    )
    data, run = load_dataset(ds), load_run(out)
    found = changed_entries(data, run)
    assert [(c.id, c.field) for c in found] == [("e1", "query"), ("e2", "as_of")]
    with pytest.raises(ChangedEntriesError) as err:
        score_retrieval(data, run, k=3)
    text = str(err.value)
    assert "entry e1: the query changed since the run was made (run made on dataset v1)" in text
    assert "entry e2: as_of was 2024-03-31 when the run was made, now 2023-12-31" in text
    assert "e3" not in text
    res = CliRunner().invoke(app, ["score", str(ds), str(out), "--k", "3"])
    assert res.exit_code == 2, res.output
    assert "entry e1" in res.output and "--allow-changed-entries" in res.output
    ok = CliRunner().invoke(
        app, ["score", str(ds), str(out), "--k", "3", "--allow-changed-entries", "-f", "json"]
    )
    assert ok.exit_code == 0, ok.output
    body = json.loads(ok.stdout)
    assert body["changed_entries"]["n"] == 2 and set(body["changed_entries"]["entries"]) == {
        "e1",
        "e2",
    }
    table = CliRunner().invoke(
        app, ["score", str(ds), str(out), "--k", "3", "--allow-changed-entries"]
    )
    assert "2 entries changed since the run was made and were scored anyway" in table.output


def test_compare_and_gate_refuse_a_run_of_changed_entries(tmp_path: Path) -> None:
    ds, out = _setup(tmp_path)
    other = tmp_path / "other.jsonl"
    run_system(
        load_dataset(ds),
        "tests.runner.fake_systems:Other",
        k=3,
        cache=RequestCache(enabled=False),
        out=other,
        progress=False,
    )
    _edit(ds, "v2", e0={"query": "What was revenue in 1999?"})
    for cmd in ("compare", "gate"):
        res = CliRunner().invoke(app, [cmd, str(ds), str(out), str(other), "--k", "3"])
        assert res.exit_code == 2 and "entry e0: the query changed" in res.output, res.output
    assert not (tmp_path / "golden.ledger.jsonl").exists()  # nothing recorded
    res = CliRunner().invoke(
        app,
        ["compare", str(ds), str(out), str(other), "--k", "3", "--allow-changed-entries",
         "--no-record", "--resamples", "200", "-f", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    notes = json.loads(res.stdout)["notes"]
    assert sum("1 entry changed since" in n and "--allow-changed-entries" in n for n in notes) == 2


def test_a_bare_run_without_fingerprints_is_still_checked_on_as_of(tmp_path: Path) -> None:
    ds, out = _setup(tmp_path)
    bare = tmp_path / "bare.jsonl"
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    bare.write_text(
        "".join(
            json.dumps({k: v for k, v in r.items() if k not in ("entry_fp", "dataset_version")})
            + "\n"
            for r in rows
        )
    )
    import datetime as dt

    _edit(ds, "v2", e1={"query": "anything else"}, e2={"as_of": dt.date(2020, 1, 1)})
    found = changed_entries(load_dataset(ds), load_run(bare))
    assert [c.id for c in found] == ["e2"]  # a query edit cannot be seen without a fingerprint
