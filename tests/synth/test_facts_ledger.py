from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from assay.synth.facts_ledger import CONCEPTS, FiscalCalendar, accepted_date, build_ledger, fact_id
from assay.synth.filings import build_filings


@given(st.integers(1, 12), st.integers(1990, 2060))
def test_fiscal_quarters_tile_the_year(month: int, fy: int) -> None:
    cal = FiscalCalendar(month)
    assert cal.year_start(fy) == cal.quarter_start(fy, 1)
    for q in (1, 2, 3):
        assert cal.quarter_end(fy, q) + dt.timedelta(days=1) == cal.quarter_start(fy, q + 1)
    assert cal.quarter_end(fy, 4) == cal.year_end(fy)
    assert cal.year_end(fy).year == fy and cal.year_end(fy).month == month
    assert 364 <= (cal.year_end(fy) - cal.year_start(fy)).days <= 365


def test_flows_sum_and_instants_agree() -> None:
    L = build_ledger(5, companies=6, years=3)
    for c in L.companies:
        for fy in range(L.first_fy - 1, L.last_fy + 1):
            for key, con in CONCEPTS.items():
                if c.kind not in con.kinds or con.unit != "USD" or not con.quarterly:
                    continue
                segs = c.segments if key == "seg_rev" else (None,)
                for seg in segs:
                    annual = L.current_value(fact_id(c.cid, key, fy, None, seg))
                    quarters = [
                        L.current_value(fact_id(c.cid, key, fy, q, seg)) for q in (1, 2, 3, 4)
                    ]
                    if con.period_type == "duration":
                        assert annual == sum(quarters), (c.cid, key, fy)
                    else:
                        assert annual == quarters[3], (c.cid, key, fy)
            if c.kind == "tech":
                total = L.current_value(fact_id(c.cid, "revenue", fy))
                assert total == sum(
                    L.current_value(fact_id(c.cid, "seg_rev", fy, None, s)) for s in c.segments
                )
                assert total == L.current_value(fact_id(c.cid, "sub_rev", fy)) + L.current_value(
                    fact_id(c.cid, "svc_rev", fy)
                )


def test_calendars_sectors_and_shared_alias() -> None:
    L = build_ledger(7, companies=6, years=3)
    kinds = [c.kind for c in L.companies]
    assert kinds.count("tech") == kinds.count("bank") == 3
    assert {c.calendar.fye_month for c in L.companies if c.kind == "tech"} == {12, 6, 9}
    assert {c.unit for c in L.companies} == {"thousands", "millions"}
    tech0 = L.companies[0]
    assert any(tech0.aliases[0] in c.aliases for c in L.companies if c.kind == "bank")
    assert len({c.ticker for c in L.companies}) == len(L.companies)


def test_restatements_follow_the_filings_they_change() -> None:
    L = build_ledger(7, companies=6, years=3)
    assert {r.quiet for r in L.restatements.values()} == {True, False}
    for r in L.restatements.values():
        f = L.facts[r.fact_id]
        c = L.company(f.cid)
        assert r.new != r.old
        original = accepted_date(c, "10-K", f.fy, None)
        assert r.effective > original
        if r.quiet:
            assert r.effective == accepted_date(c, "10-K", f.fy + 1, None)
        assert L.value_as_of(r.fact_id, r.effective - dt.timedelta(days=1)) == r.old
        assert L.value_as_of(r.fact_id, r.effective) == r.new


def test_acceptance_dates_are_consistent_with_periods() -> None:
    L = build_ledger(3, companies=4, years=2)
    docs = build_filings(L)
    by_id = {d.doc_id: d.meta for d in docs}
    for m in by_id.values():
        acc = dt.date.fromisoformat(str(m["accepted_at"]))
        assert acc > dt.date.fromisoformat(str(m["period_end"])) or m["form"] == "8-K"
        if m["form"] == "10-Q":
            release = by_id[str(m["doc_id"]).replace("-10q", "-ex99")]
            assert str(release["accepted_at"]) < str(m["accepted_at"])
        if m["form"] == "10-K":
            q4 = by_id[str(m["doc_id"]).replace("-10k", "-q4-ex99")]
            assert str(q4["accepted_at"]) < str(m["accepted_at"])
        if m["amends"]:
            assert str(by_id[str(m["amends"])]["accepted_at"]) < str(m["accepted_at"])
