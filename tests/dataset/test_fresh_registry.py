"""A sealed fresh sample is used once, really: by content, under a lock, whatever the file is called."""

from __future__ import annotations

import json
import multiprocessing as mp
import shutil
from pathlib import Path

import pytest

from assay.dataset import fresh, load_dataset, manifest_path
from assay.errors import UsageError

ENTRIES = [
    {
        "id": f"f-{i}",
        "query": f"What was revenue in {2020 + i}?",
        "category": "lookup",
        "evidence_paths": [[[f"c{i}"]]],
    }
    for i in range(4)
]


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    p = _write(tmp_path / "fresh-2026-11.jsonl", ENTRIES)
    fresh.seal(p)
    return p


def test_second_use_is_refused_and_an_allowed_reuse_is_recorded(sample: Path) -> None:
    first = fresh.record_use(sample, command="score")
    assert first is not None and first.uses == 1 and not first.reused
    with pytest.raises(fresh.FreshReuseError, match="already used 1 time"):
        fresh.record_use(sample, command="compare")
    again = fresh.record_use(sample, command="gate", allow_reuse=True)
    assert again is not None and again.uses == 2 and again.reused
    log = fresh.uses(sample)
    assert [u["command"] for u in log] == ["score", "gate"] and [u["reuse"] for u in log] == [
        False,
        True,
    ]


def test_copy_rename_manifest_edit_and_pasting_do_not_get_around_it(
    sample: Path, tmp_path: Path
) -> None:
    assert fresh.record_use(sample, command="score") is not None
    # a copy under another name, without its manifest
    copy = tmp_path / "other" / "innocent.jsonl"
    copy.parent.mkdir()
    shutil.copy(sample, copy)
    with pytest.raises(fresh.FreshReuseError):
        fresh.record_use(copy, command="score")
    # the manifest's fresh block deleted
    m = json.loads(manifest_path(sample).read_text())
    del m["fresh"]
    manifest_path(sample).write_text(json.dumps(m))
    with pytest.raises(fresh.FreshReuseError):
        fresh.record_use(sample, command="score")
    # entries pasted (reordered, re-spaced) into a bigger set
    mixed = [{"id": "main-1", "query": "q", "category": "lookup"}, *reversed(ENTRIES)]
    mixed[1] = dict(mixed[1], query="  what WAS revenue in 2023? ")
    bigger = _write(tmp_path / "main.jsonl", mixed)
    with pytest.raises(fresh.FreshReuseError):
        fresh.record_use(load_dataset(bigger), command="score")
    # an in-memory list of entries is checked too (library users)
    with pytest.raises(fresh.FreshReuseError):
        fresh.record_use(load_dataset(bigger).entries, command="score")


def test_unrelated_datasets_are_untouched(sample: Path, tmp_path: Path) -> None:
    other = _write(tmp_path / "golden.jsonl", [{"id": "g", "query": "q", "category": "c"}])
    assert fresh.record_use(other, command="score") is None
    assert fresh.record_use(other, command="score") is None


def test_using_records_once_per_operation_and_only_on_success(sample: Path) -> None:
    with pytest.raises(RuntimeError), fresh.using(sample, command="score"):
        raise RuntimeError("scoring failed")
    assert fresh.uses(sample) == []  # a failed scoring spends nothing
    # nested: the same operation
    with (
        fresh.using(sample, command="compare") as outer,
        fresh.using(sample, command="score") as inner,
    ):
        assert inner.use is None
    assert outer.use is not None and outer.use.uses == 1
    assert len(fresh.uses(sample)) == 1
    with pytest.raises(fresh.FreshReuseError), fresh.using(sample, command="score"):
        pytest.fail("a second use must be refused before any work is done")


def test_retired_sample_is_closed_but_the_main_set_that_holds_it_is_not(
    sample: Path, tmp_path: Path
) -> None:
    main = _write(tmp_path / "main.jsonl", [{"id": "m", "query": "q", "category": "lookup"}])
    fresh.retire(sample, into=main)
    with pytest.raises(UsageError, match="retired"):
        fresh.record_use(sample, command="score")
    assert fresh.record_use(main, command="score") is None
    assert [s.status for s in fresh.sealed_samples()] == ["retired"]


def test_a_used_sample_cannot_be_resealed(sample: Path) -> None:
    fresh.record_use(sample, command="score")
    with pytest.raises(UsageError, match="cannot be sealed again"):
        fresh.seal(sample, force=True)


def _race(path: str, registry: str, q: mp.Queue) -> None:  # type: ignore[type-arg]
    import os

    os.environ["ASSAY_FRESH_REGISTRY"] = registry
    from assay.dataset import fresh as f

    try:
        use = f.record_use(path, command="score")
        q.put("first" if use is not None and use.uses == 1 else f"other {use}")
    except f.FreshReuseError:
        q.put("refused")


def test_eight_processes_racing_for_the_first_use_get_exactly_one(
    sample: Path, _isolated_fresh_registry: Path
) -> None:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [
        ctx.Process(target=_race, args=(str(sample), str(_isolated_fresh_registry), q))
        for _ in range(8)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    results = sorted(q.get(timeout=10) for _ in procs)
    assert results.count("first") == 1 and results.count("refused") == 7, results
    assert len(fresh.uses(sample)) == 1


def _case(tmp_path: Path) -> tuple[Path, Path, Path]:
    ds = _write(tmp_path / "fresh-2026-12.jsonl", ENTRIES)
    rows = [
        {"id": e["id"], "retrieved": [f"c{i}", "noise"], "answer": "Revenue was $5 million."}
        for i, e in enumerate(ENTRIES)
    ]
    base = _write(tmp_path / "base.jsonl", rows)
    cand = _write(tmp_path / "cand.jsonl", [dict(r, retrieved=["noise"]) for r in rows])
    return ds, base, cand


def test_every_path_that_scores_a_sealed_sample_refuses_a_second_use(tmp_path: Path) -> None:
    """score, compare, gate, check and trec export, through the CLI and the library."""
    from typer.testing import CliRunner

    import assay.cli._register  # noqa: F401
    from assay.cli import app
    from assay.compare import compare_runs
    from assay.judge import check_run
    from assay.runs import load_run, qrels_from_dataset
    from assay.score import score_retrieval

    ds, base, cand = _case(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["fresh", "seal", str(ds)]).exit_code == 0
    first = runner.invoke(app, ["score", str(ds), str(base)])
    assert first.exit_code == 0 and "first use recorded" in first.output
    q = str(tmp_path / "q.qrels")
    for args in (
        ["score", str(ds), str(base)],
        ["compare", str(ds), str(base), str(cand), "--resamples", "200"],
        ["gate", str(ds), str(base), str(cand), "--resamples", "200"],
        ["check", str(ds), str(base)],
        ["trec", "export", str(ds), "--qrels", q],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and "already used 1 time" in res.output, (args, res.output)
        assert res.exception is None or isinstance(res.exception, SystemExit)
    assert not Path(q).exists()
    data, b, c = load_dataset(ds), load_run(base), load_run(cand)
    for call in (
        lambda: score_retrieval(data, b),
        lambda: compare_runs(data, b, c, n_resamples=200),
        lambda: check_run(data, b),
        lambda: qrels_from_dataset(data),
    ):
        with pytest.raises(fresh.FreshReuseError):
            call()
    assert len(fresh.uses(ds)) == 1  # nothing above spent a use
    res = runner.invoke(app, ["check", str(ds), str(base), "--allow-reuse", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["meta"]["fresh"]["reused"] is True
    assert [u["reuse"] for u in fresh.uses(ds)] == [False, True]


def test_retire_marks_failures_and_counts_production_failures(tmp_path: Path) -> None:
    rows = [dict(e) for e in ENTRIES]
    rows[2]["metadata"] = {"failure_rules": ["down"]}
    sample = _write(tmp_path / "fresh-2026-12.jsonl", rows)
    fresh.seal(sample)
    main = _write(tmp_path / "main.jsonl", [{"id": "m", "query": "q", "category": "lookup"}])
    from assay.errors import DataError

    with pytest.raises(DataError, match=r"failed.txt:3: id: 'nope' is not in"):
        fresh.retire(sample, into=main, failed={"f-1": 1, "nope": 3}, failed_file="failed.txt")
    out = fresh.retire(sample, into=main, failed=["f-1", "f-3"])
    by = {e.id: e for e in out.entries}
    assert by["f-1"].flags == ["fresh_failure"] and by["f-1"].metadata["fresh_failed"] is True
    assert by["f-0"].flags == [] and "fresh_failed" not in by["f-0"].metadata
    note = json.loads(manifest_path(main).read_text())["changelog"][-1]["note"]
    assert "2 marked failed" in note and "1 from production failures" in note
