"""Structured facts in the shape of SEC XBRL "company facts", plus the ledger's text-only facts.

`company_facts(ledger, docs)` returns one dict per company shaped like
`https://data.sec.gov/api/xbrl/companyfacts/CIK##########.json`:
`{"cik", "entityName", "facts": {"us-gaap": {Name: {"label", "units": {unit: [obs, ...]}}}}}`,
where each observation is `{"start"?, "end", "val", "fy", "fp", "form", "filed", "accn"}` and a
filing reports every tagged value it shows (current and comparative periods), the value it shows
at its acceptance date, so a restated figure appears twice with different `filed` dates exactly as
it does in real company facts. Concepts with `xbrl=None` (net interest margin, CET1, net revenue
retention, ...) are only in text and tables.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

from assay.synth.facts_ledger import CONCEPTS, Ledger, doc_id_for
from assay.synth.layout import Doc

__all__ = ["amendments", "company_facts", "text_facts"]

_UNITS = {"USD": "USD", "USD/share": "USD/shares", "percent": "pure", "count": "pure"}


def _accn(cik: str, doc_id: str) -> str:
    n = sum(ord(ch) * (i + 1) for i, ch in enumerate(doc_id)) % 1_000_000
    return f"{cik}-{doc_id[-8:].count('-'):02d}-{n:06d}"


def company_facts(ledger: Ledger, docs: list[Doc]) -> dict[str, dict[str, Any]]:
    """Company-facts JSON per ticker, from the facts each filing's marks show."""
    out: dict[str, dict[str, Any]] = {}
    by_cid: dict[str, list[Doc]] = defaultdict(list)
    for d in docs:
        by_cid[str(d.meta["ticker"]).lower()].append(d)
    for c in ledger.companies:
        tree: dict[str, dict[str, Any]] = {}
        for d in by_cid.get(c.cid, []):
            form = str(d.meta["form"])
            if form not in ("10-K", "10-Q", "10-K/A"):
                continue
            filed = str(d.meta["accepted_at"])
            when = dt.date.fromisoformat(filed)
            shown: set[str] = set()
            for m in d.marks:
                shown.update(f for f in m.facts if f in ledger.facts)
            for fid in sorted(shown):
                f = ledger.facts[fid]
                con = CONCEPTS[f.concept]
                if con.xbrl is None or f.segment is not None:
                    continue
                tax, name = con.xbrl.split(":")
                node = tree.setdefault(tax, {}).setdefault(
                    name, {"label": con.label, "description": con.phrase, "units": {}}
                )
                obs: dict[str, Any] = {}
                if f.start is not None:
                    obs["start"] = f.start.isoformat()
                obs |= {
                    "end": f.end.isoformat(),
                    "val": ledger.value_as_of(fid, when),
                    "accn": _accn(c.cid, d.doc_id),
                    "fy": d.meta["fiscal_year"],
                    "fp": "FY"
                    if d.meta["fiscal_quarter"] is None
                    else f"Q{d.meta['fiscal_quarter']}",
                    "form": form,
                    "filed": filed,
                    "frame_fact_id": fid,
                }
                node["units"].setdefault(_UNITS[con.unit], []).append(obs)
        for concepts in tree.values():
            for node in concepts.values():
                for obs_list in node["units"].values():
                    obs_list.sort(
                        key=lambda o: (o["end"], o.get("start", ""), o["filed"], o["accn"])
                    )
        out[c.ticker] = {
            "cik": int(c.cik),
            "entityName": c.name,
            "facts": dict(sorted(tree.items())),
        }
    return out


def amendments(ledger: Ledger, cid: str) -> dict[str, str]:
    """doc id -> what the 10-K/A amends, for every amendment a company files."""
    c = ledger.company(cid)
    out: dict[str, str] = {}
    if c.part3_by_amendment:
        for fy in range(ledger.first_fy, ledger.last_fy + 1):
            out[doc_id_for(c, "10-K/A", fy, None, n=1)] = "Part III (Items 10 through 14) only"
    for r in ledger.restatements.values():
        if not r.quiet and ledger.facts[r.fact_id].cid == cid:
            out[r.via] = (
                f"restated financial statements (Item 8) to correct an error in {c.restatement_cause}"
            )
    return out


def text_facts(ledger: Ledger) -> dict[str, str]:
    """Non-numeric and text-only facts the filings state (identifiers, narrative, events)."""
    out: dict[str, str] = {}
    for c in ledger.companies:
        out[f"{c.cid}:id:file_number"] = c.file_number
        out[f"{c.cid}:id:ein"] = c.ein
        out[f"{c.cid}:id:ticker"] = c.ticker
        out[f"{c.cid}:text:risk"] = c.risk
        if c.kind == "tech":
            out[f"{c.cid}:text:segments"] = f"{c.segments[0]}; {c.segments[1]}"
        else:
            out[f"{c.cid}:text:focus"] = c.product
        lo, hi = ledger.guidance[c.cid]
        out[f"{c.cid}:text:guidance"] = f"{lo}-{hi}"
        out[f"{c.cid}:text:cfo_out"] = c.cfo
        out[f"{c.cid}:text:cfo_in"] = c.new_cfo
        for (cid, fy), v in sorted(ledger.dividend.items()):
            if cid == c.cid:
                out[f"{c.cid}:text:dividend:FY{fy}"] = f"{v:.2f}"
        for (cid, fy), a in sorted(ledger.buyback.items()):
            if cid == c.cid:
                out[f"{c.cid}:text:buyback:FY{fy}"] = str(a)
        for did, what in sorted(amendments(ledger, c.cid).items()):
            out[f"{c.cid}:text:amendment:{did}"] = what
        for (cid, fy), p in sorted(ledger.ceo_pay.items()):
            if cid == c.cid:
                out[f"{c.cid}:text:ceo_pay:FY{fy}"] = str(p)
    return out
