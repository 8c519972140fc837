"""The warehouse from the room's ledger: tables true to the ledger, traps planted, gold by
construction in every category, the same bytes from the same seed."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from pathlib import Path

import pytest

from assay.synth.facts_ledger import build_ledger, fact_id
from assay.synth.warehouse import GLOSSARY, WAREHOUSE_SCHEMA, Warehouse, build_warehouse
from assay.synth.warehouse_gold import CATEGORIES, build_gold_entries, near_misses


@pytest.fixture(scope="module")
def wh() -> Warehouse:
    return build_warehouse(build_ledger(7))


def test_tables_hold_the_ledger(wh: Warehouse) -> None:
    L = wh.ledger
    months = Counter(c["fiscal_year_end_month"] for c in wh.companies("Software"))
    assert months == {12: 1, 6: 1, 9: 1}
    assert {c["industry"] for c in wh.companies()} == {"Software", "Banking"}
    # every fact row is the ledger's value as known when its filing was accepted
    for f in wh.rows("facts"):
        filing = wh.filing_by_id[f["filing_id"]]
        p = wh.period_by_id[f["period_id"]]
        c = wh.company_by_id[p["company_id"]]
        code = wh.item_by_id[f["line_item_id"]]["code"]
        seg = None if f["segment_id"] is None else wh.segment_by_id[f["segment_id"]]["name"]
        fid = fact_id(c["cid"], code, p["fiscal_year"], p["fiscal_quarter"], seg)
        assert f["value"] == float(L.value_as_of(fid, filing["accepted_at"]))
        assert filing["company_id"] == p["company_id"]
    # the current figure of every restated fiscal-year fact is the restated value
    for r in L.restatements.values():
        f = L.facts[r.fact_id]
        if f.fq is None:
            c = next(x for x in wh.companies() if x["cid"] == f.cid)
            assert wh.latest(c["company_id"], f.fy, None, f.concept, None) == float(r.new)


def test_amendments_and_restatements(wh: Warehouse) -> None:
    amended = [f for f in wh.rows("filings") if f["form"] == "10-K/A"]
    assert amended and all(f["amends_filing_id"] is not None for f in amended)
    for f in amended:
        orig = wh.filing_by_id[f["amends_filing_id"]]
        assert orig["form"] == "10-K" and orig["fiscal_year"] == f["fiscal_year"]
        assert orig["accepted_at"] < f["accepted_at"] and f["amendment_no"] >= 1
    restating = {f["filing_id"] for f in wh.rows("facts")} & {f["filing_id"] for f in amended}
    assert restating and len(restating) < len(amended)  # some 10-K/As restate, some do not


def test_traps_are_planted(wh: Warehouse) -> None:
    cust = wh.rows("customers")
    assert any(c["status"] == "A" and c["churn_date"] is not None for c in cust)
    assert {c["status"] for c in cust} == {"A", "I"}  # P and S are codes no one holds
    assert set(WAREHOUSE_SCHEMA.table("customers").column("status").domain) == {"A", "I", "P", "S"}
    amended_cov = [k for k in wh.rows("covenants") if k["effective_to"] is not None]
    assert amended_cov
    assert GLOSSARY.lookup("revenue", "Banking").sql != GLOSSARY.lookup("revenue", "Software").sql
    assert GLOSSARY.history[0]["term"] == "active customer"


def test_gold_entries_by_construction(wh: Warehouse) -> None:
    entries = build_gold_entries(wh)
    assert len(entries) >= 200
    cats = Counter(e["category"] for e in entries)
    assert set(cats) == set(CATEGORIES) and min(cats.values()) >= 15
    for e in entries:
        assert e["sql"]["database"] == "warehouse.duckdb"
        if e["category"] == "unanswerable":
            assert e["sql"]["queries"] == [] and e["expected_behavior"] == "refuse"
            assert e["sql"]["missing"]
        else:
            assert e["sql"]["queries"] and "result" in e["sql"]
    as_of = [e for e in entries if e["category"] == "as_of"]
    assert all(dt.date.fromisoformat(e["as_of"]) for e in as_of)
    ids = {e["id"] for e in entries}
    assert {n[0] for n in near_misses(wh)} <= ids


def test_fiscal_calendar_trap_has_teeth(wh: Warehouse) -> None:
    """For the June company, calendar 2023 revenue is not fiscal 2023 revenue."""
    entries = {e["id"]: e for e in build_gold_entries(wh)}
    june = next(c for c in wh.companies() if c["fiscal_year_end_month"] == 6)
    cal = entries[f"sql:calendar_revenue:{june['ticker']}:2023"]["sql"]["result"]["rows"][0][0]
    fis = entries[f"sql:revenue:{june['ticker']}:2023"]["sql"]["result"]["rows"][0][0]
    assert cal != fis


def test_same_seed_same_files(tmp_path: Path) -> None:
    pytest.importorskip("duckdb", reason="the sql extra is not installed")
    from assay.synth.warehouse_files import write_warehouse

    def digest(out: Path) -> dict[str, str]:
        return {
            n: hashlib.sha256((out / n).read_bytes()).hexdigest()
            for n in (
                "golden.jsonl",
                "warehouse.sqlite",
                "warehouse.schema.json",
                "near_misses.jsonl",
            )
        }

    a = write_warehouse(tmp_path / "a", seed=3, companies=2, years=2, suite=0)
    b = write_warehouse(tmp_path / "b", seed=3, companies=2, years=2, suite=0)
    c = write_warehouse(tmp_path / "c", seed=4, companies=2, years=2, suite=0)
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    assert digest(tmp_path / "a")["golden.jsonl"] != digest(tmp_path / "c")["golden.jsonl"]
    assert a.entries == b.entries and not (tmp_path / "a" / "warehouse.suite").exists()
    assert c.tables["companies"] == 2


# sha256 of golden.jsonl and near_misses.jsonl of the default warehouse (seed 7, 6 companies x 3
# years) as the generator writes them. If you change the gold on purpose, bump
# WAREHOUSE_VERSION and update these. Every entry now states `label_tier: gold` (its result is
# computed from the rows the warehouse wrote); with that key removed the file hashes to the
# previous pin 1772f82a5f1e83541554c08876639ff1930417d9825654d804dc73a9c4202ce9 (gold unchanged).
WAREHOUSE_GOLDEN_SHA256 = "a453e2bb13406e02e33e5897d3d4531fe28c51c25b61440d7751fa46d61b08d0"
WAREHOUSE_NEAR_MISSES_SHA256 = "dfd6d63571dc056bcad861ef105931d9a332d2aa2acc29008fe1d9856d5beb24"


def test_default_warehouse_gold_is_byte_for_byte_what_it_was(tmp_path: Path) -> None:
    pytest.importorskip("duckdb", reason="the sql extra is not installed")
    from assay.synth.warehouse import WAREHOUSE_VERSION
    from assay.synth.warehouse_files import write_warehouse

    write_warehouse(tmp_path / "wh", seed=7, suite=0)
    assert WAREHOUSE_VERSION == "assay-warehouse/1"
    got = {
        n: hashlib.sha256((tmp_path / "wh" / n).read_bytes()).hexdigest()
        for n in ("golden.jsonl", "near_misses.jsonl")
    }
    assert got == {
        "golden.jsonl": WAREHOUSE_GOLDEN_SHA256,
        "near_misses.jsonl": WAREHOUSE_NEAR_MISSES_SHA256,
    }
