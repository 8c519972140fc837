"""SQL entries in the explorer: both queries, the results run read-only, and their diff."""

from __future__ import annotations

import html
import sys
from pathlib import Path

import pytest

from assay.explorer import entry_filenames, export_bundle, render_site
from assay.explorer.sqlview import EXTRA_NOTE

from .conftest import SQL_GOLD, SQL_QUERIES, Case, add_sql_entry

FAST = {"n_resamples": 200, "n_permutations": 200}


@pytest.fixture
def sql_case(case: Case) -> Case:
    add_sql_entry(case)
    return case


def _sql_row(case: Case) -> dict:  # type: ignore[type-arg]
    data = export_bundle(case.dataset, case.runs, chunks=case.chunks, **FAST).data
    return next(e for e in data["entries"] if e["id"] == "sql:active")


def test_bundle_has_both_queries_and_the_diff_of_their_results(sql_case: Case) -> None:
    pytest.importorskip("sqlglot")
    e = _sql_row(sql_case)
    gold = e["sql"]
    assert gold["queries"] == list(SQL_GOLD) and gold["dialect"] == "sqlite"
    assert gold["database"] == "shop.sqlite" and gold["note"] is None
    # no result is stored: the first gold query's result, computed on the database
    assert gold["result"]["columns"] == ["region", "active"]
    assert sorted(gold["result"]["rows"]) == [["EMEA", 1], ["NA", 2]]

    base = e["runs"]["base"]
    assert base["sql"]["query"] == SQL_QUERIES["base"] and not base["sql"]["declined"]
    assert sorted(base["sql"]["result"]["rows"]) == [["EMEA", 2], ["LATAM", 1], ["NA", 2]]
    d = base["sql"]["diff"]
    assert d["match"] is False and d["common"] == 1  # NA agrees
    assert d["only_gold"] == {"rows": [["EMEA", 1]], "n_rows": 1}
    assert sorted(d["only_system"]["rows"]) == [["EMEA", 2], ["LATAM", 1]]
    assert d["only_system"]["n_rows"] == 2
    assert base["status"] == "fail"

    # the candidate's columns come the other way round: matched, and shown in the gold's order
    cand = e["runs"]["cand"]
    assert cand["sql"]["diff"]["match"] is True and cand["sql"]["diff"]["order"] == [1, 0]
    assert cand["sql"]["diff"]["only_gold"]["n_rows"] == 0
    assert cand["sql"]["diff"]["only_system"]["n_rows"] == 0
    assert cand["status"] == "pass"

    # a query that is not read-only is refused before it runs; the database is unchanged
    third = e["runs"]["third"]["sql"]
    assert third["result"] is None and third["diff"] is None
    assert third["error"].startswith("unsafe: refused before running")
    assert e["runs"]["third"]["status"] == "fail"
    assert sorted(_sql_row(sql_case)["sql"]["result"]["rows"]) == [["EMEA", 1], ["NA", 2]]


def test_site_shows_queries_and_the_rows_only_in_either(sql_case: Case, tmp_path: Path) -> None:
    pytest.importorskip("sqlglot")
    bundle = export_bundle(sql_case.dataset, sql_case.runs, chunks=sql_case.chunks, **FAST)
    site = Path(render_site(bundle, tmp_path / "site").out_dir)
    text = html.unescape((site / entry_filenames(["sql:active"])["sql:active"]).read_text())
    for q in (*SQL_GOLD, SQL_QUERIES["base"], SQL_QUERIES["cand"], SQL_QUERIES["third"]):
        assert q in text
    assert "only in the gold result (1)" in text and "only in this result (2)" in text
    gold_table = text.split('class="sqlrows only-gold"')[1].split("</table>")[0]
    assert "<td>EMEA</td><td>1</td>" in gold_table
    mine = text.split('class="sqlrows only-system"')[1].split("</table>")[0]
    assert "<td>LATAM</td><td>1</td>" in mine and "<td>NA</td>" not in mine
    assert "results match" in text and "refused before running" in text


def test_without_the_sql_extra_the_page_names_it(
    sql_case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "sqlglot", None)
    monkeypatch.setitem(sys.modules, "duckdb", None)
    bundle = export_bundle(sql_case.dataset, sql_case.runs, chunks=sql_case.chunks, **FAST)
    e = next(x for x in bundle.data["entries"] if x["id"] == "sql:active")
    assert e["sql"]["queries"] == list(SQL_GOLD)  # the queries are still shown
    assert e["sql"]["result"] is None and e["sql"]["note"] == EXTRA_NOTE
    base = e["runs"]["base"]
    assert base["sql"]["query"] == SQL_QUERIES["base"]
    assert base["sql"]["result"] is None and base["sql"]["note"] == EXTRA_NOTE
    assert base["status"] == "unscored"
    assert EXTRA_NOTE in bundle.data["notes"]
    site = Path(render_site(bundle, tmp_path / "site").out_dir)
    text = html.unescape((site / entry_filenames(["sql:active"])["sql:active"]).read_text())
    assert "pip install 'assay[sql]'" in text
    assert SQL_QUERIES["cand"] in text


def test_a_mixed_dataset_renders_both_kinds(sql_case: Case, tmp_path: Path) -> None:
    """RAG entries and a SQL entry in one dataset: one bundle, one site; each entry page draws
    its own kind (hits with their gold marks, or the SQL panel) and the overview scores the
    retrieval entries with the attribution page kept."""
    pytest.importorskip("sqlglot")
    bundle = export_bundle(sql_case.dataset, sql_case.runs, chunks=sql_case.chunks, **FAST)
    data = bundle.data
    assert "kind" not in data and data["chunks"] is not None and data["attribution"]
    site = Path(render_site(bundle, tmp_path / "site").out_dir)
    ids = [e["id"] for e in data["entries"]]
    assert "sql:active" in ids and "q1" in ids
    files = entry_filenames(ids)
    rag = html.unescape((site / files["q1"]).read_text())
    assert '<li class="hit gold">' in rag and "Net revenue was $1,204 million" in rag
    assert "sql-gold" not in rag and "sql-run" not in rag
    sql = html.unescape((site / files["sql:active"]).read_text())
    assert sql.count('<div class="sql-run">') == len(sql_case.runs)
    assert SQL_GOLD[0] in sql and SQL_QUERIES["base"] in sql
    assert '<li class="hit' not in sql
    listing = html.unescape((site / "entries.html").read_text())
    assert files["q1"] in listing and files["sql:active"] in listing
    assert (site / "attribution.html").exists()
    index = html.unescape((site / "index.html").read_text())
    assert "scored at k=" in index and "SQL questions" not in index
