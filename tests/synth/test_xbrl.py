from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from assay.synth.guards import read_room


def test_company_facts_match_the_ledger_as_filed(small_room: Path) -> None:
    _, ledger, _, facts = read_room(small_room)
    files = sorted((small_room / "xbrl").glob("companyfacts-*.json"))
    assert len(files) == len(ledger.companies)
    seen_restated: dict[str, set[float]] = {}
    for path in files:
        cf = json.loads(path.read_text())
        assert {"cik", "entityName", "facts"} <= set(cf)
        assert set(cf["facts"]) == {"us-gaap"}
        names = set(cf["facts"]["us-gaap"])
        assert "Revenues" in names or "InterestIncomeExpenseNet" in names
        for node in cf["facts"]["us-gaap"].values():
            for unit, obs_list in node["units"].items():
                assert unit in ("USD", "USD/shares")
                for obs in obs_list:
                    assert {"end", "val", "fy", "fp", "form", "filed", "accn"} <= set(obs)
                    assert obs["form"] in ("10-K", "10-Q", "10-K/A")
                    fid = obs["frame_fact_id"]
                    want = ledger.value_as_of(fid, dt.date.fromisoformat(obs["filed"]))
                    assert obs["val"] == want
                    assert obs["end"] == facts[fid]["period_end"]
                    if fid in ledger.restatements:
                        seen_restated.setdefault(fid, set()).add(obs["val"])
    # text-only metrics carry no tag
    for row in facts.values():
        if row.get("concept") in ("nim", "cet1", "nrr", "large_cust", "criticized", "employees"):
            assert row["xbrl"] is None
    # an annual restated figure appears with both values, under different filing dates
    assert any(len(v) == 2 for v in seen_restated.values())
