"""Re-verification when documents arrive: unanswerable and partial entries a new filing may answer.

An entry that is unanswerable (``answerable: false``) or partly answerable (``"partial"``) is
listed for re-check when a filing of its company that covers its fiscal period became public after
the entry's reference date. Its company is every company its query names (resolved against the
corpus's companies, tickers and aliases) plus the companies of its evidence documents; its periods
are the fiscal periods its query names ("FY24", "Q3 fiscal 2023", "fiscal '25"), read in that
company's own fiscal calendar (`assay.corpus.fiscal.FiscalCalendar`, inferred from its
filings exactly as the filings system does), else the periods of its evidence documents.

A filing covers fiscal year Y when it is an annual report of Y (10-K, 10-KT, 20-F, 40-F, annual
report) or the fourth-quarter earnings release (8-K, EARNINGS) of Y, which reports the full year;
it covers quarter Q of Y when it is of that fiscal quarter (10-Q, quarterly 8-K or earnings
release), or, for the fourth quarter, the annual report of Y that completes it; an amendment
covers what the filing it amends covers. Event 8-Ks (no fiscal quarter: a meeting, an officer
change) cover no period. A later year's filing that merely repeats a period as a comparative
column does not count: it would flag every older entry at every season.

The reference date is the one the rest of the seasonal audit uses: the later of the entry's
``added`` (when it was written: the filings it was judged against) and ``as_of``; with neither,
``since`` (the start of the season audited); with none of them the entry cannot be placed in time
and is counted as undated, not flagged. A covering filing must be accepted after the reference
date and on or after ``since``; a filing among the entry's own evidence documents is not news
to it.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.corpus import Document
from assay.dataset import Entry

__all__ = ["Covering", "Recheck", "recheck_entries"]

_ANNUAL = frozenset({"10-K", "10-KT", "20-F", "40-F", "ANNUAL-REPORT", "ARS"})
_RELEASES = frozenset({"8-K", "EARNINGS", "6-K"})


@dataclass(frozen=True)
class Covering:
    """A filing that arrived and covers an entry's period, and why it counts."""

    doc_id: str
    form: str
    period: str  # the entry's period it covers, e.g. "FY2024" or "Q3 FY2024"
    accepted_at: dt.date
    kind: str  # "same period", "completes", "amendment"

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "form": self.form,
            "period": self.period,
            "accepted_at": self.accepted_at.isoformat(),
            "kind": self.kind,
        }


@dataclass(frozen=True)
class Recheck:
    """An unanswerable or partial entry with the filings that may now answer it."""

    id: str
    line: int | None
    category: str
    answerable: str  # "false" or "partial"
    query: str
    reference_date: dt.date
    companies: list[str]
    periods: list[str]
    filings: list[Covering]

    @property
    def reasons(self) -> list[str]:
        docs = ", ".join(f"{c.doc_id} ({c.form}, {c.kind})" for c in self.filings)
        return [
            f"{'unanswerable' if self.answerable == 'false' else 'partly answerable'} on "
            f"{self.reference_date.isoformat()}; filings covering "
            f"{', '.join(self.periods)} arrived since: {docs}"
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "line": self.line,
            "category": self.category,
            "answerable": self.answerable,
            "query": self.query,
            "reference_date": self.reference_date.isoformat(),
            "companies": self.companies,
            "periods": self.periods,
            "filings": [c.to_dict() for c in self.filings],
            "reasons": self.reasons,
        }


def _label(fy: int, q: int | None) -> str:
    return f"FY{fy}" if q is None else f"Q{q} FY{fy}"


def recheck_entries(
    entries: Sequence[Entry],
    documents: Sequence[Document],
    *,
    since: dt.date | None = None,
    evidence: dict[str, list[str]] | None = None,
    lines: Mapping[str, int] | None = None,
) -> tuple[list[Recheck], list[str]]:
    """Unanswerable / partial entries a newly arrived filing may answer, and the ids of those
    that have no reference date (see the module docs). `evidence` maps entry id -> its evidence
    doc ids (`assay.audit.seasonal.evidence_docs`)."""
    from assay.systems.filings.entities import EntityResolver
    from assay.systems.filings.fiscal import parse_periods
    from assay.systems.filings.index import DocInfo, doc_infos

    wanted = [e for e in entries if e.answerable is False or e.answerable == "partial"]
    if not wanted:
        return [], []
    rows = [d.to_json_dict() for d in documents]
    infos = doc_infos(rows)
    by_id = {i.doc_id: i for i in infos}
    by_company: dict[str, list[DocInfo]] = defaultdict(list)
    for i in infos:
        if i.company_key:
            by_company[i.company_key].append(i)
    resolver = EntityResolver.from_documents(rows, builtin=False)

    def covers(d: DocInfo, fy: int, q: int | None, seen: frozenset[str] = frozenset()) -> str:
        if (
            d.amends
            and d.amends in by_id
            and d.amends not in seen
            and covers(by_id[d.amends], fy, q, seen | {d.doc_id})
        ):
            return "amendment"
        base = (d.form or "").removesuffix("/A")
        if d.fiscal_year != fy:
            return ""
        if base in _ANNUAL:
            return "" if q not in (None, 4) else ("same period" if q is None else "completes")
        if d.fiscal_quarter is None:
            return ""  # an event 8-K: about no fiscal period
        if q is None:
            return "completes" if d.fiscal_quarter == 4 and base in _RELEASES else ""
        return "same period" if d.fiscal_quarter == q else ""

    out: list[Recheck] = []
    undated: list[str] = []
    for e in wanted:
        dates = [x for x in (e.added, e.as_of) if x is not None]
        ref = max(dates) if dates else since
        if ref is None:
            undated.append(e.id)
            continue
        own = set((evidence or {}).get(e.id, []))
        ev = [by_id[x] for x in sorted(own) if x in by_id]
        keys = [m.key for m in resolver.resolve(e.query)]
        keys += [i.company_key for i in ev if i.company_key]
        keys = list(dict.fromkeys(k for k in keys if k in by_company))
        found: dict[str, Covering] = {}
        labels: list[str] = []
        for key in keys:
            cal = by_company[key][0].calendar
            targets = [
                t
                for ref_ in parse_periods(e.query)
                if ref_.relative is None
                for t in ref_.fiscal_quarters(cal)
            ]
            if not targets:
                targets = [
                    (i.fiscal_year, None if (i.form or "")[:4] == "10-K" else i.fiscal_quarter)
                    for i in ev
                    if i.company_key == key and i.fiscal_year is not None
                ]
            for fy, q in dict.fromkeys(targets):
                label = _label(fy, q)
                for d in by_company[key]:
                    kind = covers(d, fy, q)
                    if (
                        kind
                        and d.accepted_at is not None
                        and d.accepted_at > ref
                        and (since is None or d.accepted_at >= since)
                        and d.doc_id not in found
                        and d.doc_id not in own
                    ):
                        found[d.doc_id] = Covering(
                            d.doc_id, d.form or "", label, d.accepted_at, kind
                        )
                        if label not in labels:
                            labels.append(label)
        if found:
            out.append(
                Recheck(
                    id=e.id,
                    line=(lines or {}).get(e.id),
                    category=e.category,
                    answerable="false" if e.answerable is False else "partial",
                    query=e.query,
                    reference_date=ref,
                    companies=[by_company[k][0].company or k for k in keys],
                    periods=labels,
                    filings=sorted(found.values(), key=lambda c: (c.accepted_at, c.doc_id)),
                )
            )
    return out, undated
