"""The explorer on a dataset of SQL questions only: `assay synth warehouse` output and two runs
of `assay run --system sql-...`, exported and rendered with no chunk table."""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("sqlglot", reason="the sql extra is not installed")
duckdb = pytest.importorskip("duckdb", reason="the sql extra is not installed")

import assay.cli._register  # noqa: F401, E402  (registers every command)
from assay.cli import app  # noqa: E402
from assay.explorer import (  # noqa: E402
    Bundle,
    entry_filenames,
    export_bundle,
    load_bundle,
    render_site,
)
from assay.synth.warehouse_files import write_warehouse  # noqa: E402

runner = CliRunner()

WORSE = '''
from assay.sql.baseline import TemplateSqlSystem


class Worse:
    """The template baseline, declining every question about customers."""

    dialect = "duckdb"

    def sql(self, question, *, schema, as_of=None):
        if "customer" in question.lower():
            return None
        return TemplateSqlSystem().sql(question, schema=schema, as_of=as_of)
'''


def _ok(args: list[str]) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("sqlonly")
    wh = root / "wh"
    write_warehouse(wh, seed=7, companies=2, years=2, suite=2)
    (root / "worse_sql_system.py").write_text(WORSE, encoding="utf-8")
    golden = wh / "golden.jsonl"
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(root))
        for name, spec in (("template", "sql-template"), ("worse", "sql-worse_sql_system:Worse")):
            _ok(["run", str(golden), "--system", spec, "--out", str(root / f"{name}.jsonl")])
        bundle = root / "bundle.json"
        _ok(
            [
                "export",
                str(golden),
                str(root / "template.jsonl"),
                str(root / "worse.jsonl"),
                "--out",
                str(bundle),
                "--resamples",
                "200",
                "-f",
                "json",
            ]
        )
        yield {"root": root, "golden": golden, "bundle": bundle}


def _checked(golden: Path, run: Path) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(
        _ok(["check", str(golden), str(run), "-f", "json", "--n-boot", "100"])
    )
    return out


def _bag(rows: Any) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(r) for r in rows)


def test_a_sql_only_dataset_exports_without_a_chunk_table(case: dict[str, Path]) -> None:
    data = load_bundle(case["bundle"]).data
    assert data["kind"] == "sql" and data["chunks"] is None and data["attribution"] == {}
    assert [r["name"] for r in data["runs"]] == ["template", "worse"]
    # the scores are the gold SQL checks' rates, as `assay check` gives them
    for name in ("template", "worse"):
        checked = _checked(case["golden"], case["root"] / f"{name}.jsonl")
        over = data["scores"][name]["overall"]
        for c in ("exec_match", "test_suite_match", "sql_refusal_ok"):
            assert over[c] == pytest.approx(checked["rates"]["overall"][c]["rate"], abs=1e-12)
        assert over["n"] == data["dataset"]["n_entries"]
        agg = data["scores"][name]["categories"]["aggregation"]
        assert agg["exec_match_ci"]["low"] <= agg["exec_match"] <= agg["exec_match_ci"]["high"]
    assert (
        data["scores"]["worse"]["overall"]["exec_match"]
        < (data["scores"]["template"]["overall"]["exec_match"])
    )


def test_each_entry_has_both_queries_and_the_diff_of_their_results(
    case: dict[str, Path],
) -> None:
    """The diff is checked against the results DuckDB gives the two queries directly."""
    data = load_bundle(case["bundle"]).data
    golden = {
        json.loads(line)["id"]: json.loads(line) for line in case["golden"].read_text().splitlines()
    }
    from assay.sql.engine import DUCKDB_READONLY_CONFIG  # one process opens a file one way

    path = str(case["golden"].parent / "warehouse.duckdb")
    con = duckdb.connect(path, read_only=True, config=dict(DUCKDB_READONLY_CONFIG))
    differ = 0
    for e in data["entries"]:
        g = golden[e["id"]]
        assert e["sql"]["queries"] == g["sql"].get("queries", [])
        assert e["sql"]["database"] == "warehouse.duckdb"  # a name, not a path
        x = e["runs"]["template"]["sql"]
        if g.get("expected_behavior") == "refuse":
            assert x["declined"] and e["runs"]["template"]["status"] == "pass"
            continue
        assert x["query"] and not x["declined"]
        d = x["diff"]
        if d is None or d["match"] or d["order"] != list(range(len(g["sql"]["result"]["columns"]))):
            continue
        differ += 1
        want = _bag(con.execute(g["sql"]["queries"][0]).fetchall())
        got = _bag(con.execute(x["query"]).fetchall())
        only_gold, only_system = want - got, got - want
        assert d["only_gold"]["n_rows"] == sum(only_gold.values())
        assert d["only_system"]["n_rows"] == sum(only_system.values())
        if only_gold and all(isinstance(v, (int, str)) for r in only_gold for v in r):
            assert _bag(d["only_gold"]["rows"]) == only_gold
        assert e["runs"]["template"]["status"] == "fail"
    con.close()
    assert differ > 3
    # the worse run declined the questions about customers: shown, and failed
    worse = [e for e in data["entries"] if "customer" in e["query"].lower()]
    assert worse and all(e["runs"]["worse"]["sql"]["declined"] for e in worse)
    assert all(
        e["runs"]["worse"]["status"] == "fail"
        for e in worse
        if golden[e["id"]].get("expected_behavior") != "refuse"
    )


def test_the_comparison_pairs_exec_match_and_test_suite_match(case: dict[str, Path]) -> None:
    from scipy.stats import binomtest

    data = load_bundle(case["bundle"]).data
    cmp = data["comparisons"]["worse"]
    assert cmp["metrics"] == ["exec_match", "test_suite_match"]
    t = {e["id"]: e["runs"]["template"]["checks"] for e in data["entries"]}
    w = {e["id"]: e["runs"]["worse"]["checks"] for e in data["entries"]}
    broken = sum(1 for i in t if t[i]["exec_match"] is True and w[i]["exec_match"] is False)
    fixed = sum(1 for i in t if t[i]["exec_match"] is False and w[i]["exec_match"] is True)
    m = cmp["overall"]["metrics"]["exec_match"]
    assert (m["fixed"], m["broken"]) == (fixed, broken) and broken > 0 and fixed == 0
    assert m["tests"]["mcnemar_exact"]["pvalue"] == pytest.approx(
        binomtest(fixed, fixed + broken, 0.5).pvalue, abs=1e-12
    )


def test_the_site_renders_queries_diffs_and_no_attribution(
    case: dict[str, Path], tmp_path: Path
) -> None:
    site = tmp_path / "site"
    out = json.loads(_ok(["report", str(case["bundle"]), "--out", str(site), "-f", "json"]))
    assert out["pages"] > 10
    assert not (site / "attribution.html").exists()
    index = html.unescape((site / "index.html").read_text())
    assert "exec_match" in index and "test_suite_match" in index and "SQL questions" in index
    assert "Attribution" not in index and "k=5" not in index
    # the rates' intervals are named as `assay check` names them (Clopper-Pearson at few fails)
    from assay.judge.report import CI_METHOD

    assert CI_METHOD in re.sub(r"\s+", " ", index)
    data = load_bundle(case["bundle"]).data
    files = entry_filenames([e["id"] for e in data["entries"]])
    failing = next(
        e
        for e in data["entries"]
        if e["runs"]["template"]["sql"]["diff"] is not None
        and e["runs"]["template"]["sql"]["diff"]["only_gold"]["n_rows"]
    )
    page = html.unescape((site / files[failing["id"]]).read_text())
    assert failing["sql"]["queries"][0] in page
    assert failing["runs"]["template"]["sql"]["query"] in page
    n = failing["runs"]["template"]["sql"]["diff"]["only_gold"]["n_rows"]
    assert f"only in the gold result ({n})" in page and 'class="sqlrows only-gold"' in page
    assert re.search(r"exec_match</td><td class=\"check bad\">", page)
    # equal on the warehouse, told apart by a variant: shown as such
    caught = [
        e
        for e in data["entries"]
        if e["runs"]["template"]["checks"]
        and e["runs"]["template"]["checks"]["exec_match"] is True
        and e["runs"]["template"]["checks"]["test_suite_match"] is False
    ]
    assert caught
    page = html.unescape((site / files[caught[0]["id"]]).read_text())
    assert "results match" in page and "a variant of it tells the two queries apart" in page
    assert caught[0]["runs"]["template"]["status"] == "fail"


def test_report_in_one_step_and_a_retrieval_metric_is_refused(
    case: dict[str, Path], tmp_path: Path
) -> None:
    golden, template = case["golden"], case["root"] / "template.jsonl"
    _ok(["report", str(golden), str(template), "--out", str(tmp_path / "s"), "--resamples", "100"])
    assert (tmp_path / "s" / "index.html").exists()
    res = runner.invoke(
        app,
        [
            "export",
            str(golden),
            str(template),
            str(case["root"] / "worse.jsonl"),
            "--out",
            str(tmp_path / "b.json"),
            "--metrics",
            "recall@5",
        ],
    )
    assert res.exit_code == 2 and "SQL question" in res.output
    assert not (tmp_path / "b.json").exists()


def test_a_sql_run_is_drawn_by_the_general_entry_view(
    case: dict[str, Path], tmp_path: Path
) -> None:
    """One bundle path for every entry: a SQL run's entry rows have the shape of a retrieval
    run's (the general `_build` writes both), and the entry page draws the SQL panel (the gold
    query and result, the run's query and its diff) where a retrieval entry draws its hits."""
    from assay.dataset import load_dataset
    from assay.explorer import build_bundle
    from assay.runs import load_run

    from .conftest import write_explorer_case

    ds = load_dataset(case["golden"])
    runs = {n: load_run(case["root"] / f"{n}.jsonl") for n in ("template", "worse")}
    data = build_bundle(ds, runs, chunks=None, n_resamples=100, n_permutations=100).data
    rag = write_explorer_case(tmp_path / "rag")
    rag_data = export_bundle(rag.dataset, rag.runs[:1], chunks=rag.chunks, n_resamples=100).data
    rag_row = rag_data["entries"][0]["runs"]["base"]
    for e in data["entries"]:
        for x in e["runs"].values():
            assert set(x) == set(rag_row) | {"sql"}, e["id"]
            assert x["retrieved"] == [] and x["leaked"] == [] and x["stage"] is None
            # the page's check table: the gold SQL checks that were rated, nothing else
            assert set(x["checks"]) == {*data["checks"]["template"]["checks"], "notes"}
    assert set(data["entries"][0]) == set(rag_data["entries"][0])
    site = Path(render_site(Bundle(data), tmp_path / "site").out_dir)
    files = entry_filenames([e["id"] for e in data["entries"]])
    e = next(
        x
        for x in data["entries"]
        if x["runs"]["template"]["sql"]["diff"]
        and not x["runs"]["template"]["sql"]["diff"]["match"]
    )
    page = html.unescape((site / files[e["id"]]).read_text())
    gold = page.split('<section class="sql-gold">')[1].split("</section>")[0]
    assert e["sql"]["queries"][0] in gold and "expected result" in gold
    panels = page.split('<div class="sql-run">')[1:]
    assert len(panels) == 2  # one per run, in run order
    assert e["runs"]["template"]["sql"]["query"] in panels[0] and "results differ" in panels[0]
    assert 'class="sqlrows only-gold"' in panels[0] or 'class="sqlrows only-system"' in panels[0]
    assert re.search(r"exec_match</td><td class=\"check bad\">fail", page)
    assert '<li class="hit' not in page and "No evidence paths" not in page
    assert not (site / "attribution.html").exists()
