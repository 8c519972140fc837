"""A text-to-SQL system is run by the general runner: its rows are cached, journalled and resumed
after a kill, bound to their entries, and checked by `assay check` with the fresh-sample guard;
`assay sql run` and `assay sql check` are `assay run` and `assay check` with their options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cache import RequestCache
from assay.cli import app
from assay.dataset import Dataset, load_dataset, write_dataset
from assay.runner import JournalMismatch, RunInterrupted, run_system
from assay.sql import REFUSAL_TEXT
from assay.sql.schema import DatabaseSchema

runner = CliRunner()


class CountingSql:
    """The gold query for every answerable entry, None for the others; counts its calls and
    stops (as Ctrl-C does) after `stop_after` of them."""

    def __init__(self, gold: dict[str, str | None], stop_after: int | None = None) -> None:
        self.gold, self.stop_after = gold, stop_after
        self.calls: list[str] = []

    def sql(self, question: str, *, schema: DatabaseSchema, as_of: Any) -> str | None:
        if self.stop_after is not None and len(self.calls) >= self.stop_after:
            raise KeyboardInterrupt
        self.calls.append(question)
        return self.gold[question]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from assay.synth.warehouse_files import write_warehouse

    out = tmp_path_factory.mktemp("sqlruns") / "wh"
    write_warehouse(out, seed=7, companies=2, years=2, suite=2)
    return out


def _gold(ds: Dataset) -> dict[str, str | None]:
    return {
        e.query: (e.sql.queries[0] if e.sql is not None and e.sql.queries else None)
        for e in ds.entries
    }


def _subset(small: Path, n: int, name: str) -> Path:
    """The first `n` entries as a dataset beside the warehouse (their databases resolve)."""
    ds = load_dataset(small / "golden.jsonl")
    path = small / name
    write_dataset(path, ds.entries[:n])
    return path


def test_a_killed_sql_run_resumes_without_asking_the_done_rows_again(
    small: Path, tmp_path: Path
) -> None:
    ds = load_dataset(_subset(small, 12, "resume.jsonl"))
    gold, out = _gold(ds), tmp_path / "run.jsonl"
    no_cache = RequestCache(enabled=False)  # what is not asked again comes from the journal
    first = CountingSql(gold, stop_after=5)
    with pytest.raises(RunInterrupted, match="after 5 of 12 rows"):
        run_system(ds, first, spec="counting", out=out, cache=no_cache, progress=False)
    partial = Path(f"{out}.partial")
    assert not out.exists() and len(partial.read_text().splitlines()) == 5
    with open(partial, "a", encoding="utf-8") as fh:  # killed mid-write: a torn last line
        fh.write('{"provenance": {"system": "x"}, "row": {"id": "sql:')
    second = CountingSql(gold)
    run = run_system(ds, second, spec="counting", out=out, cache=no_cache, progress=False)
    assert len(second.calls) == 7 and set(first.calls).isdisjoint(second.calls)
    assert run.meta["resumed_rows"] == 5 and run.meta["called_rows"] == 7
    assert [r.id for r in run.rows] == [e.id for e in ds.entries] and not partial.exists()
    for r in run.rows:  # every row: the query, no fake retrieval, bound to its entry
        e = ds.by_id[r.id]
        assert e.sql is not None
        assert r.extra["sql"] == gold[e.query] and r.retrieved is None
        assert r.answer == (gold[e.query] or REFUSAL_TEXT)
        assert r.extra["entry_fp"] and r.extra["dataset_version"] == ds.version
    # a journal of another system is refused, not mixed in
    with pytest.raises(RunInterrupted):
        run_system(ds, CountingSql(gold, 2), spec="counting", out=out, cache=no_cache,
                   progress=False)  # fmt: skip
    with pytest.raises(JournalMismatch, match="system"):
        run_system(ds, CountingSql(gold), spec="other", out=out, cache=no_cache, progress=False)


def test_a_second_sql_run_is_served_from_the_cache_and_an_edited_schema_is_not(
    small: Path, tmp_path: Path
) -> None:
    import shutil

    wh = tmp_path / "wh"
    shutil.copytree(small, wh)
    ds = load_dataset(_subset(wh, 10, "cached.jsonl"))
    cache = RequestCache(tmp_path / "cache.sqlite")
    gold = _gold(ds)
    first, second = CountingSql(gold), CountingSql(gold)
    a = run_system(ds, first, spec="counting", cache=cache, progress=False)
    b = run_system(ds, second, spec="counting", cache=cache, progress=False)
    assert len(first.calls) == 10 and second.calls == []
    assert b.meta["cache_hits"] == 10 and b.meta["called_rows"] == 0
    assert [r.to_dict() | {"latency_ms": 0} for r in a.rows] == [
        r.to_dict() | {"latency_ms": 0} for r in b.rows
    ]
    # the schema handed to the system is part of the key: edit it and the system is asked again
    sp = wh / "warehouse.schema.json"
    doc = json.loads(sp.read_text(encoding="utf-8"))
    doc["tables"][0]["description"] = "edited: " + str(doc["tables"][0].get("description"))
    sp.write_text(json.dumps(doc), encoding="utf-8")
    third = CountingSql(gold)
    run_system(ds, third, spec="counting", cache=cache, progress=False)
    assert len(third.calls) == 10


def test_entries_without_sql_gold_are_not_asked(small: Path, tmp_path: Path) -> None:
    """A mixed dataset: the SQL system is asked its entries only, and the run says how many it
    left out; a retrieval system is still asked every entry."""
    ds = load_dataset(small / "golden.jsonl")
    other = ds.entries[0].model_copy(update={"id": "rag-1", "sql": None})
    mixed = Dataset([other, *ds.entries[:4]], path=ds.path)
    sys_ = CountingSql(_gold(ds))
    run = run_system(mixed, sys_, spec="counting", cache=RequestCache(enabled=False),
                     progress=False)  # fmt: skip
    assert [r.id for r in run.rows] == [e.id for e in ds.entries[:4]] and len(sys_.calls) == 4
    assert run.meta["kind"] == "sql" and run.meta["not_asked"] == 1 and run.meta["k"] == 0


def test_sql_run_and_check_are_run_and_check(small: Path, tmp_path: Path) -> None:
    """`assay sql run` takes `assay run`'s options (a second run from the cache; --restart) and
    `assay sql check` `assay check`'s (--resamples; --n-boot still works, with a note)."""
    golden, out = small / "golden.jsonl", tmp_path / "r.jsonl"
    cache = ["--cache-dir", str(tmp_path / "cache")]
    args = ["sql", "run", str(golden), "--system", "template", "--out", str(out), *cache]
    first = runner.invoke(app, [*args, "-f", "json"])
    assert first.exit_code == 0, first.output
    n = json.loads(first.stdout)["rows"]
    assert json.loads(first.stdout)["called"] == n > 0
    second = runner.invoke(app, [*args, "--restart", "-f", "json"])
    assert second.exit_code == 0, second.output
    got = json.loads(second.stdout)
    assert (got["cached"], got["called"]) == (n, 0)
    assert not any("retrieved" in json.loads(line) for line in out.read_text().splitlines())
    check = ["sql", "check", str(golden), str(out), "-f", "json"]
    res = runner.invoke(app, [*check, "--resamples", "160"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["meta"]["ci"]["n_boot"] == 160
    old = runner.invoke(app, [*check, "--n-boot", "170"])
    assert old.exit_code == 0, old.output
    assert json.loads(old.stdout)["meta"]["ci"]["n_boot"] == 170
    assert "--n-boot is deprecated; use --resamples" in old.stderr
    assert "--n-boot" not in runner.invoke(app, ["sql", "check", "--help"]).stdout
    # a spec that is no text-to-SQL system is refused by the SQL adapter, naming the forms
    bad = runner.invoke(app, ["sql", "run", str(golden), "--system", "bm25", "--out", str(out)])
    assert bad.exit_code == 2 and "unknown SQL system 'bm25'" in bad.output


def test_a_sealed_fresh_sample_of_sql_entries_is_checked_once(
    small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.dataset import fresh

    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    sample = _subset(small, 15, "fresh.jsonl")
    fresh.seal(sample)
    out = tmp_path / "r.jsonl"
    made = runner.invoke(app, ["sql", "run", str(sample), "--system", "template", "--out",
                               str(out)])  # fmt: skip
    assert made.exit_code == 0, made.output
    check = ["sql", "check", str(sample), str(out), "--resamples", "100", "-f", "json"]
    once = runner.invoke(app, check)
    assert once.exit_code == 0, once.output
    assert json.loads(once.stdout)["meta"]["fresh"]["reused"] is False
    again = runner.invoke(app, check)
    assert again.exit_code == 2, again.output
    assert "fresh" in again.output and "--allow-reuse" in again.output
    allowed = runner.invoke(app, [*check, "--allow-reuse"])
    assert allowed.exit_code == 0, allowed.output
    assert json.loads(allowed.stdout)["meta"]["fresh"]["reused"] is True


def test_sql_check_refuses_rows_whose_entry_changed_since_the_run(
    small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run-binding check of `assay score` holds for `assay check` and `assay sql check`: a
    row made for another question is refused, naming the entry, its line and the field."""
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    path = _subset(small, 6, "bound.jsonl")
    out = tmp_path / "r.jsonl"
    made = runner.invoke(app, ["sql", "run", str(path), "--system", "template", "--out", str(out)])
    assert made.exit_code == 0, made.output
    lines = path.read_text(encoding="utf-8").splitlines()
    third = json.loads(lines[2])
    third["query"] += " Answer in thousands."
    lines[2] = json.dumps(third)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for cmd in (["sql", "check"], ["check"]):
        res = runner.invoke(app, [*cmd, str(path), str(out), "--checks", "exec_match"])
        assert res.exit_code == 2, res.output
        assert f"{path}:3: query: entry {third['id']}: the query changed" in res.output
        ok = runner.invoke(app, [*cmd, str(path), str(out), "--checks", "exec_match",
                                 "--allow-changed-entries", "-f", "json"])  # fmt: skip
        assert ok.exit_code == 0, ok.output
        assert list(json.loads(ok.stdout)["meta"]["changed"]) == [third["id"]]


def test_a_sql_run_on_ray_writes_the_rows_of_a_local_run(
    small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The executors are the kind's too: a worker builds its system from the spec and asks each
    entry as the kind asks it (a stand-in for Ray, in this process)."""
    from tests.executors.test_executors import _FakeRay

    import assay.executors as ex_mod

    monkeypatch.setattr(ex_mod, "_ray", lambda _ex: _FakeRay())
    ds = load_dataset(_subset(small, 8, "ray.jsonl"))
    kw: dict[str, Any] = {"cache": RequestCache(enabled=False), "progress": False}
    local = run_system(ds, "sql-template", out=tmp_path / "local.jsonl", **kw)
    remote = run_system(ds, "sql-template", out=tmp_path / "ray.jsonl", executor="ray", **kw)
    for a, b in zip(local.rows, remote.rows, strict=True):
        assert a.to_dict() | {"latency_ms": 0} == b.to_dict() | {"latency_ms": 0}
    assert remote.meta["called_rows"] == 8 and remote.meta["kind"] == "sql"


SQL_MODULE = """
class Gold:
    def __init__(self):
        self.gold = {}

    def sql(self, question, *, schema, as_of):
        return self.gold.get(question)


GOLD = Gold()
"""


def test_any_kind_of_system_by_import_path_and_what_no_kind_accepts(
    small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--system pkg.mod:attr` names a text-to-SQL system as it names a retrieval one (an
    instance or a class); an object of no kind is refused naming every kind's contract."""
    from assay.errors import UsageError
    from assay.systems import load_system

    (tmp_path / "my_gold_sql.py").write_text(SQL_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = load_dataset(_subset(small, 5, "byimport.jsonl"))
    no_cache = RequestCache(enabled=False)
    for spec in ("my_gold_sql:GOLD", "my_gold_sql:Gold"):
        run = run_system(ds, spec, cache=no_cache, progress=False)
        assert run.meta["kind"] == "sql" and len(run) == 5
        assert all(r.extra["sql"] is None and r.answer == REFUSAL_TEXT for r in run.rows)
    with pytest.raises(UsageError, match=r"retrieve\(query, \*, as_of, k\) \(retrieval\) or "
                       r"sql\(question, \*, schema, as_of\) \(sql\)"):  # fmt: skip
        load_system(object())
