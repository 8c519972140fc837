"""Runs and caches know what produced them: provenance on journal rows and cache entries,
resume refused across systems / k / queries, torn journal lines, honest counts, Ctrl-C."""

from __future__ import annotations

import datetime as dt
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.runner import fake_systems
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cache import RequestCache, clear_cache, list_cache
from assay.cli import app
from assay.dataset import Entry
from assay.runner import JournalMismatch, RunInterrupted, run_system
from assay.runs import load_run
from assay.systems import SystemCallError

ROWS = [
    {"id": "a", "query": "qa", "category": "x", "as_of": "2024-01-01"},
    {"id": "b", "query": "qb", "category": "x"},
    {"id": "c", "query": "qc", "category": "y", "as_of": "2022-06-30"},
    {"id": "d", "query": "qd", "category": "y"},
]
ENTRIES = [Entry.model_validate(r) for r in ROWS]


def _dataset(path: Path, rows: list[dict[str, Any]] = ROWS) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(tmp_path: Path, *args: str) -> Any:
    return CliRunner().invoke(app, ["run", *args, "--cache-dir", str(tmp_path / "cache")])


def _partial(out: Path) -> Path:
    return Path(str(out) + ".partial")


def _interrupted(tmp_path: Path, ds: Path, out: Path, *extra: str) -> None:
    """Run until the system fails on entry c: rows a and b stay in the journal."""
    res = _run(
        tmp_path,
        str(ds),
        "--system",
        "tests.runner.fake_systems:FailsOn",
        "--system-arg",
        "fail=qc",
        "--out",
        str(out),
        *extra,
    )
    assert res.exit_code == 2, res.output
    assert "entry c: RuntimeError: cannot answer qc" in res.output
    assert "Traceback" not in res.output
    assert "rerun the same command to resume" in res.output
    assert len(_partial(out).read_text().splitlines()) == 2 and not out.exists()


def test_resume_with_another_system_is_refused(tmp_path: Path) -> None:
    ds, out = _dataset(tmp_path / "g.jsonl"), tmp_path / "r.jsonl"
    _interrupted(tmp_path, ds, out)
    before = _partial(out).read_bytes()
    res = _run(tmp_path, str(ds), "--system", "tests.runner.fake_systems:Other", "--out", str(out))
    assert res.exit_code == 2, res.output
    assert "holds 2 rows of a different run" in res.output
    assert "tests.runner.fake_systems:FailsOn" in res.output  # names the journal's system
    assert "tests.runner.fake_systems:Other" in res.output
    assert "--restart" in res.output and "Traceback" not in res.output
    assert not out.exists() and _partial(out).read_bytes() == before  # nothing touched
    # --restart discards the journal: every row comes from the new system
    res = _run(
        tmp_path,
        str(ds),
        "--system",
        "tests.runner.fake_systems:Other",
        "--out",
        str(out),
        "--restart",
    )
    assert res.exit_code == 0, res.output
    run = load_run(out)
    assert all(h.startswith("other-") for rid in run.ids for h in run.hits(rid))
    assert "4 rows: 0 resumed, 0 from cache, 4 called" in res.output


def test_resume_with_another_k_is_refused(tmp_path: Path) -> None:
    ds, out = _dataset(tmp_path / "g.jsonl"), tmp_path / "r.jsonl"
    _interrupted(tmp_path, ds, out, "--k", "3")
    res = _run(
        tmp_path,
        str(ds),
        "--system",
        "tests.runner.fake_systems:FailsOn",
        "--system-arg",
        "fail=none",
        "--out",
        str(out),
        "--k",
        "2",
    )
    assert res.exit_code == 2, res.output
    assert "k: 3 in the journal, 2 now" in res.output


def test_resume_after_the_dataset_changed_is_refused(tmp_path: Path) -> None:
    ds, out = _dataset(tmp_path / "g.jsonl"), tmp_path / "r.jsonl"
    _interrupted(tmp_path, ds, out)
    edited = [dict(r) for r in ROWS]
    edited[0]["query"] = "qa, reworded"
    _dataset(ds, edited)
    res = _run(
        tmp_path,
        str(ds),
        "--system",
        "tests.runner.fake_systems:FailsOn",
        "--system-arg",
        "fail=qc",
        "--out",
        str(out),
    )
    assert res.exit_code == 2, res.output
    assert "dataset version" in res.output and "the query of 1 entries changed (a)" in res.output


def test_query_and_as_of_edits_are_refused_without_a_dataset_version(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    cache = RequestCache(enabled=False)
    with pytest.raises(SystemCallError):
        run_system(ENTRIES, fake_systems.FailsOn("qc"), k=2, spec="e", cache=cache, out=out)
    moved = [ENTRIES[0].model_copy(update={"as_of": dt.date(2020, 1, 1)}), *ENTRIES[1:]]
    with pytest.raises(JournalMismatch, match=r"the as_of of 1 entries changed \(a\)"):
        run_system(moved, fake_systems.Echo(), k=2, spec="e", cache=cache, out=out)
    # unchanged: resumes, calling the system only for c and d
    fake_systems.CALLS.clear()
    run = run_system(ENTRIES, fake_systems.Echo(), k=2, spec="e", cache=cache, out=out)
    assert [q for q, _, _ in fake_systems.CALLS] == ["qc", "qd"]
    assert run.meta["resumed_rows"] == 2 and run.meta["called_rows"] == 2


def test_journal_rows_and_cache_entries_carry_provenance(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    cache = RequestCache(tmp_path / "c.sqlite")
    with pytest.raises(SystemCallError):
        run_system(ENTRIES, fake_systems.FailsOn("qc"), k=2, spec="e", cache=cache, out=out)
    recs = [json.loads(line) for line in _partial(out).read_text().splitlines()]
    prov = recs[0]["provenance"]
    assert set(prov) >= {"system", "spec", "corpus", "dataset", "k", "as_of", "query"}
    assert (prov["query"], prov["as_of"], prov["k"], prov["spec"]) == ("qa", "2024-01-01", 2, "e")
    assert recs[0]["row"]["id"] == "a" and recs[0]["source"] == "called"
    listing = list_cache(tmp_path / "c.sqlite")
    assert [(g.label, g.entries) for g in listing.groups] == [("e", 2)]
    assert listing.groups[0].system == prov["system"]


def test_torn_last_journal_line_is_cut_not_glued(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    cache = RequestCache(enabled=False)
    with pytest.raises(SystemCallError):
        run_system(ENTRIES, fake_systems.FailsOn("qc"), k=2, spec="e", cache=cache, out=out)
    journal = _partial(out)
    whole = journal.read_text()
    journal.write_text(whole + whole.splitlines()[0][:25])  # a crash mid-write
    # resume, then fail again on d: the new row must be a line of its own
    with pytest.raises(SystemCallError, match="entry d"):
        run_system(ENTRIES, fake_systems.FailsOn("qd"), k=2, spec="e", cache=cache, out=out)
    lines = journal.read_text().splitlines()
    assert [json.loads(x)["row"]["id"] for x in lines] == ["a", "b", "c"]
    run = run_system(ENTRIES, fake_systems.Echo(), k=2, spec="e", cache=cache, out=out)
    assert run.ids == ["a", "b", "c", "d"] and run.meta["resumed_rows"] == 3


def test_a_bad_line_in_the_middle_of_the_journal_is_named(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    _partial(out).write_text('{"provenance": {}, "row": {"id": "a"}}\n{oops\n{"x": 1}\n')
    with pytest.raises(Exception, match=r"r\.jsonl\.partial:2: not a journal line"):
        run_system(ENTRIES, fake_systems.Echo(), k=2, cache=RequestCache(enabled=False), out=out)


def test_summary_counts_resumed_cached_and_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds, out = _dataset(tmp_path / "g.jsonl"), tmp_path / "r.jsonl"
    args = ["--system", "tests.runner.fake_systems:FailsOnEnv"]
    # c alone, on another output: c is now in the cache
    only_c = _dataset(tmp_path / "c.jsonl", [ROWS[2]])
    assert _run(tmp_path, str(only_c), *args, "--out", str(tmp_path / "c-run.jsonl")).exit_code == 0
    # the whole dataset, failing on b: a is journalled
    monkeypatch.setenv("ASSAY_TEST_FAIL", "qb")
    assert _run(tmp_path, str(ds), *args, "--out", str(out)).exit_code == 2
    monkeypatch.delenv("ASSAY_TEST_FAIL")
    res = _run(tmp_path, str(ds), *args, "--out", str(out), "-f", "json")
    assert res.exit_code == 0, res.output
    assert "4 rows: 1 resumed, 1 from cache, 2 called" in res.output
    summary = json.loads(res.stdout)
    assert (summary["resumed"], summary["cached"], summary["called"]) == (1, 1, 2)
    meta = json.loads((tmp_path / "r.jsonl.meta.json").read_text())
    assert (meta["resumed_rows"], meta["cache_hits"], meta["called_rows"]) == (1, 1, 2)


def test_ctrl_c_says_how_to_resume(tmp_path: Path) -> None:
    ds, out = _dataset(tmp_path / "g.jsonl"), tmp_path / "r.jsonl"
    res = _run(
        tmp_path,
        str(ds),
        "--system",
        "tests.runner.fake_systems:Interrupts",
        "--system-arg",
        "at=qc",
        "--out",
        str(out),
    )
    assert res.exit_code == 130, res.output
    assert "interrupted after 2 of 4 rows" in res.output
    assert f"saved in {_partial(out)}" in res.output
    assert "Run the same command again to resume" in res.output
    assert "Traceback" not in res.output
    with pytest.raises(RunInterrupted) as err:
        run_system(
            ENTRIES,
            fake_systems.Interrupts("qb"),
            k=2,
            cache=RequestCache(enabled=False),
            out=tmp_path / "lib.jsonl",
        )
    assert isinstance(err.value, KeyboardInterrupt) and err.value.done == 1


def test_editing_the_system_source_is_a_cache_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "src"
    pkg.mkdir()
    mod = pkg / "edited_system_mod.py"
    source = textwrap.dedent(
        """
        SUFFIX = "v1"

        class System:
            def retrieve(self, query, *, as_of, k):
                return [f"{query}-{SUFFIX}-{i}" for i in range(k)]
        """
    )
    mod.write_text(source)
    monkeypatch.syspath_prepend(str(pkg))
    ds = _dataset(tmp_path / "g.jsonl")
    args = [str(ds), "--system", "edited_system_mod:System"]
    first = _run(tmp_path, *args, "--out", str(tmp_path / "1.jsonl"))
    assert first.exit_code == 0 and "0 from cache, 4 called" in first.output, first.output
    again = _run(tmp_path, *args, "--out", str(tmp_path / "2.jsonl"))
    assert "4 from cache, 0 called" in again.output, again.output
    mod.write_text(source.replace('"v1"', '"v2"'))
    edited = _run(tmp_path, *args, "--out", str(tmp_path / "3.jsonl"))
    assert "0 from cache, 4 called" in edited.output, edited.output
    meta = json.loads((tmp_path / "3.jsonl.meta.json").read_text())
    assert meta["system"]["code"] != json.loads((tmp_path / "1.jsonl.meta.json").read_text())[
        "system"
    ].get("code")


def test_system_arguments_are_part_of_the_identity(tmp_path: Path) -> None:
    ds = _dataset(tmp_path / "g.jsonl")
    base = [str(ds), "--system", "tests.runner.fake_systems:FailsOn"]
    one = _run(tmp_path, *base, "--system-arg", "fail=zz", "--out", str(tmp_path / "1.jsonl"))
    assert "0 from cache, 4 called" in one.output, one.output
    two = _run(tmp_path, *base, "--system-arg", "fail=yy", "--out", str(tmp_path / "2.jsonl"))
    assert "0 from cache, 4 called" in two.output, two.output
    three = _run(tmp_path, *base, "--system-arg", "fail=zz", "--out", str(tmp_path / "3.jsonl"))
    assert "4 from cache, 0 called" in three.output, three.output


def test_cache_ls_and_clear(tmp_path: Path) -> None:
    ds = _dataset(tmp_path / "g.jsonl")
    for spec in ("tests.runner.fake_systems:build", "tests.runner.fake_systems:Other"):
        res = _run(tmp_path, str(ds), "--system", spec, "--out", str(tmp_path / "r.jsonl"))
        assert res.exit_code == 0, res.output
    cache_dir = ["--cache-dir", str(tmp_path / "cache")]
    res = CliRunner().invoke(app, ["cache", "ls", *cache_dir, "-f", "json"])
    assert res.exit_code == 0, res.output
    listed = json.loads(res.stdout)
    assert listed["entries"] == 8
    assert sorted((g["label"], g["entries"]) for g in listed["groups"]) == [
        ("tests.runner.fake_systems:Other", 4),
        ("tests.runner.fake_systems:build", 4),
    ]
    table = CliRunner().invoke(app, ["cache", "ls", *cache_dir])
    assert "tests.runner.fake_systems:Other" in table.stdout and "8 entries" in table.stdout
    res = CliRunner().invoke(
        app, ["cache", "clear", *cache_dir, "--system", "tests.runner.fake_systems:Other"]
    )
    assert res.exit_code == 0 and "deleted 4 entries" in res.output, res.output
    assert list_cache(tmp_path / "cache" / "requests.sqlite").entries == 4
    assert clear_cache(tmp_path / "cache" / "requests.sqlite") == 4
    assert list_cache(tmp_path / "cache" / "requests.sqlite").entries == 0
    res = CliRunner().invoke(app, ["cache", "ls", "--cache-dir", str(tmp_path / "nowhere")])
    assert res.exit_code == 0 and "0 entries" in res.stdout


def test_answer_receives_dates_and_hits_and_its_trace_is_kept(tmp_path: Path) -> None:
    run = run_system(
        ENTRIES[:1], fake_systems.Traced(), k=2, cache=RequestCache(enabled=False), progress=False
    )
    assert run.row("a").extra["trace"] == {"as_of_type": "date", "hit_type": "Hit"}


def test_nan_scores_from_a_python_system_name_the_entry(tmp_path: Path) -> None:
    with pytest.raises(SystemCallError, match=r"entry a: .*retrieved\.1\.score: must be a finite"):
        run_system(ENTRIES, fake_systems.NaNScores(), k=2, cache=RequestCache(enabled=False))


def test_a_cache_written_by_an_older_assay_is_upgraded(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "requests.sqlite"
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE cache (ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
        " PRIMARY KEY (ns, key))"
    )
    con.execute("INSERT INTO cache VALUES ('llm-judge', 'k', '\"v\"')")
    con.commit()
    con.close()
    cache = RequestCache(path)
    assert cache.get("k") is None  # another namespace
    cache.put("k2", {"x": 1}, provenance={"system": "abc", "spec": "s", "corpus": "c1"})
    assert cache.get("k2") == {"x": 1} and cache.provenance("k2")["corpus"] == "c1"
    groups = {(g.namespace, g.label): g for g in list_cache(path).groups}
    assert groups[("llm-judge", None)].entries == 1 and groups[("llm-judge", None)].system is None
    assert groups[("default", "s")].corpus == "c1"
    assert clear_cache(path, namespace="llm-judge") == 1
