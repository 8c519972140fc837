"""The golden set of the synthetic room, written from the ledger and the marks the filings carry.

Every answerable entry lists, as evidence, every anchor (doc, 1-based page, short quote) that
independently answers it: the filing that first reported a figure, the earnings release, and the
later filings that repeat it as a comparative column, filtered to the ones that show the value
the answer uses (a comparative showing a restated figure does not support the original and vice
versa) and, for temporal entries, to the filings accepted by `as_of`.

Categories are named for what breaks: numeric_lookup, narrative, exact_identifier, temporal,
comparison, amendment_restatement, ambiguous, unanswerable. Queries are phrased the way analysts
type. `metadata.fact_ids` lists the ledger facts an entry draws on; unanswerable entries carry
`metadata.absent` (facts the ledger must not have and regexes no filing of the company may match),
which the guard tests check against the rendered text.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.dataset.schema import Entry
from assay.synth.filings import fmt_cell, fmt_prose, period_phrase
from assay.synth.layout import Doc
from assay.synth.ledger import CONCEPTS, Company, Ledger, fact_id
from assay.synth.xbrl import amendments

__all__ = ["Placement", "build_golden", "placements"]

_ORD = {1: "first", 2: "second", 3: "third", 4: "fourth"}

_SHORT: dict[str, list[str]] = {
    "sub_rev": ["sub rev", "subscription & support rev", "subs revenue"],
    "svc_rev": ["prof services rev", "services revenue"],
    "revenue": ["total rev", "revenue", "top line"],
    "op_income": ["op income", "operating income", "GAAP op inc"],
    "net_income": ["net income", "NI", "net inc"],
    "eps": ["diluted EPS", "EPS (diluted)"],
    "rpo": ["RPO", "remaining perf obligations"],
    "nii": ["NII", "net interest inc"],
    "nim": ["NIM", "net interest margin"],
    "provision": ["provision", "PCL", "credit loss provision"],
    "nco": ["NCOs", "net charge-offs"],
    "deposits": ["deposits", "total deposits"],
    "loans": ["loans HFI", "loan book"],
    "nonint_inc": ["fee income (nonint)", "noninterest income"],
    "cet1": ["CET1", "CET1 ratio"],
    "seg_rev": ["segment rev"],
}


@dataclass(frozen=True, slots=True)
class Placement:
    doc_id: str
    page: int
    quote: str
    accepted: dt.date
    facts: tuple[str, ...]
    role: str


def placements(docs: list[Doc]) -> dict[str, list[Placement]]:
    """fact id -> every place a filing states it, in (acceptance date, doc, page, quote) order."""
    out: dict[str, list[Placement]] = defaultdict(list)
    for d in docs:
        acc = dt.date.fromisoformat(str(d.meta["accepted_at"]))
        for m in d.marks:
            p = Placement(d.doc_id, m.page, m.quote, acc, m.facts, m.role)
            for f in m.facts:
                out[f].append(p)
    for lst in out.values():
        lst.sort(key=lambda p: (p.accepted, p.doc_id, p.page, p.quote))
    return out


class _Gen:
    def __init__(self, ledger: Ledger, docs: list[Doc], seed: int):
        self.L = ledger
        self.docs = docs
        self.P = placements(docs)
        self.rng = np.random.default_rng([seed, 5])
        self.entries: list[dict[str, Any]] = []
        self.doc_by_id = {d.doc_id: d for d in docs}
        shared = defaultdict(list)
        for c in ledger.companies:
            shared[c.aliases[0]].append(c.cid)
        self.ambiguous_alias = {a: cids for a, cids in shared.items() if len(cids) > 1}
        self.bad_alias = {cid for cids in self.ambiguous_alias.values() for cid in cids}

    # ------------------------------------------------------------------ helpers
    def pick(self, options: list[str]) -> str:
        return options[int(self.rng.integers(len(options)))]

    def who(self, c: Company) -> str:
        opts = [c.ticker, c.name.replace(", Inc.", "")]
        if c.cid not in self.bad_alias:
            opts.append(c.aliases[0])
        return self.pick(opts)

    def fy_s(self, fy: int) -> str:
        return self.pick([f"FY{fy % 100}", f"FY{fy}", f"fiscal '{fy % 100}"])

    def q_s(self, fy: int, q: int) -> str:
        return self.pick([f"Q{q} FY{fy % 100}", f"{q}Q{fy % 100}", f"Q{q} fiscal {fy}"])

    def shown(self, fid: str, p: Placement) -> float | int:
        return self.L.value_as_of(fid, p.accepted)

    def anchors(
        self,
        fid: str,
        *,
        value: float | int | None = None,
        by: dt.date | None = None,
        need: tuple[str, ...] = (),
    ) -> list[dict[str, Any]]:
        """Anchors stating `fid` (showing `value`, accepted by `by`, also stating `need`)."""
        out: list[dict[str, Any]] = []
        seen: set[tuple[str, int, str]] = set()
        want: float | int | None = value
        if want is None and fid in self.L.facts:
            want = self.L.current_value(fid)
        for p in self.P.get(fid, []):
            if by is not None and p.accepted > by:
                continue
            r = self.L.restatements.get(fid)
            if p.role == "restated":
                if r is None or want not in (r.old, r.new):
                    continue
            elif fid in self.L.facts and self.shown(fid, p) != want:
                continue
            if any(n not in p.facts for n in need):
                continue
            if any(n in self.L.facts and self.shown(n, p) != self.L.current_value(n) for n in need):
                continue
            key = (p.doc_id, p.page, p.quote)
            if key not in seen:
                seen.add(key)
                out.append({"doc": p.doc_id, "page": p.page, "quote": p.quote})
        return out

    def money_text(self, c: Company, concept: str, v: float | int) -> str:
        cell = fmt_cell(c, concept, v)
        unit = CONCEPTS[concept].unit
        if unit == "USD":
            if c.unit == "millions":
                return f"${cell} million"
            return f"${cell} thousand ({fmt_prose(c, concept, v)})"
        if unit == "USD/share":
            return f"${cell}"
        return cell

    def period_text(
        self, c: Company, fy: int, fq: int | None, concept: str, *, bare: bool = False
    ) -> str:
        """ "for fiscal 2023 (ended ...)" / "as of 2023-06-30 (...)"; `bare` drops the "for "."""
        inst = CONCEPTS[concept].period_type == "instant"
        if not inst and not bare:
            return "for " + self.period_text(c, fy, fq, concept, bare=True)
        if fq is None or (inst and fq == 4):
            end = c.calendar.year_end(fy)
            return (
                f"as of the end of {period_phrase(c, fy)} ({end.isoformat()})"
                if inst
                else f"{period_phrase(c, fy)} (ended {end.isoformat()})"
            )
        end = c.calendar.quarter_end(fy, fq)
        return (
            f"as of {end.isoformat()} (end of Q{fq} {period_phrase(c, fy)})"
            if inst
            else f"the {_ORD[fq]} quarter of {period_phrase(c, fy)} (ended {end.isoformat()})"
        )

    def add(
        self,
        *,
        query: str,
        category: str,
        paths: list[list[list[dict[str, Any]]]],
        answer: str | None,
        facts: list[str],
        key_facts: list[tuple[str, list[dict[str, Any]]]],
        answerable: bool | str = True,
        behavior: str | None = None,
        as_of: dt.date | None = None,
        notes: str | None = None,
        template: str,
        cid: str,
        extra: dict[str, Any] | None = None,
    ) -> None:
        for path in paths:
            for piece in path:
                if not piece:
                    raise AssertionError(f"empty evidence piece for {template} {facts}")
        e: dict[str, Any] = {
            "id": "",
            "query": query,
            "category": category,
            "answerable": answerable,
            "evidence_paths": paths,
            "source": "synthetic",
            "metadata": {
                "fact_ids": sorted(set(facts)),
                "template": template,
                "company": cid,
                **(extra or {}),
            },
        }
        if behavior:
            e["expected_behavior"] = behavior
        if as_of:
            e["as_of"] = as_of.isoformat()
        if answer:
            e["reference_answer"] = answer
        if notes:
            e["acceptable_response_notes"] = notes
        if key_facts:
            e["key_facts"] = [
                {"fact": f, "critical": True, "supporting": sup} for f, sup in key_facts
            ]
        self.entries.append(e)

    def restated(self, *fids: str) -> bool:
        return any(f in self.L.restatements for f in fids)

    # ------------------------------------------------------------------ categories
    def numeric(self, c: Company) -> None:
        annual = (
            ["sub_rev", "revenue", "op_income", "net_income", "eps", "rpo", "svc_rev"]
            if c.kind == "tech"
            else ["nii", "provision", "nco", "deposits", "loans", "net_income", "eps", "nonint_inc"]
        )
        quarterly = (
            ["revenue", "sub_rev", "net_income"]
            if c.kind == "tech"
            else ["nii", "provision", "net_income"]
        )
        for fy in range(self.L.first_fy, self.L.last_fy + 1):
            picks = [
                annual[i]
                for i in sorted(self.rng.choice(len(annual), size=4, replace=False).tolist())
            ]
            items: list[tuple[str, int | None, str | None]] = [(con, None, None) for con in picks]
            for con in [
                quarterly[i]
                for i in sorted(self.rng.choice(len(quarterly), 2, replace=False).tolist())
            ]:
                items.append((con, int(self.rng.integers(1, 4)), None))
            if c.kind == "tech":
                items.append(("seg_rev", None, c.segments[int(self.rng.integers(2))]))
            for con, fq, seg in items:
                fid = fact_id(c.cid, con, fy, fq, seg)
                if self.restated(fid):
                    continue
                v = self.L.facts[fid].value
                per = self.fy_s(fy) if fq is None else self.q_s(fy, fq)
                short = self.pick(_SHORT[con])
                if seg:
                    short = f"{seg} {short}"
                query = self.pick(
                    [
                        f"{self.who(c)} {per} {short}",
                        f"{short} {per} {self.who(c)}",
                        f"what was {self.who(c)}'s {short} {per}",
                    ]
                )
                label = f"{seg} segment revenue" if seg else CONCEPTS[con].phrase
                ans = (
                    f"{c.name} reported {label} of {self.money_text(c, con, v)} "
                    f"{self.period_text(c, fy, fq, con)}."
                )
                anchors = self.anchors(fid)
                self.add(
                    query=query,
                    category="numeric_lookup",
                    paths=[[anchors]],
                    answer=ans,
                    facts=[fid],
                    key_facts=[
                        (
                            f"{label} {self.period_text(c, fy, fq, con)}: "
                            f"{self.money_text(c, con, v)}",
                            anchors,
                        )
                    ],
                    template=f"numeric:{con}:{'FY' if fq is None else 'Q'}",
                    cid=c.cid,
                )

    def narrative(self, c: Company) -> None:
        risk = f"{c.cid}:text:risk"
        a = self.anchors(risk)
        self.add(
            query=self.pick(
                [
                    f"{self.who(c)} company-specific risk in 1A",
                    f"what risk does {self.who(c)} call out as specific to its business",
                ]
            ),
            category="narrative",
            paths=[[a]],
            answer=f"{c.name} says a risk specific to its business is that {c.risk}.",
            facts=[risk],
            key_facts=[(c.risk, a)],
            template="narrative:risk",
            cid=c.cid,
        )
        if c.kind == "tech":
            f = f"{c.cid}:text:segments"
            a = self.anchors(f)
            self.add(
                query=self.pick(
                    [
                        f"{self.who(c)} reportable segments?",
                        f"how does {self.who(c)} segment the biz",
                    ]
                ),
                category="narrative",
                paths=[[a]],
                answer=f"{c.name} has two operating segments: {c.segments[0]} and {c.segments[1]}.",
                facts=[f],
                key_facts=[(f"segments: {c.segments[0]}, {c.segments[1]}", a)],
                template="narrative:segments",
                cid=c.cid,
            )
        else:
            f = f"{c.cid}:text:focus"
            a = self.anchors(f)
            self.add(
                query=self.pick(
                    [
                        f"{self.who(c)} lending focus",
                        f"what kind of lending is {self.who(c)} concentrated in",
                    ]
                ),
                category="narrative",
                paths=[[a]],
                answer=f"{c.name}'s lending is focused on {c.product}.",
                facts=[f],
                key_facts=[(c.product, a)],
                template="narrative:focus",
                cid=c.cid,
            )
        fy, when = self.L.officer_change[c.cid]
        fo, fi = f"{c.cid}:text:cfo_out", f"{c.cid}:text:cfo_in"
        ao, ai = self.anchors(fo), self.anchors(fi)
        self.add(
            query=self.pick(
                [
                    f"{self.who(c)} CFO change {fy} - who left, who replaced",
                    f"who replaced {c.cfo} as CFO at {self.who(c)}",
                ]
            ),
            category="narrative",
            paths=[[ao, ai]],
            answer=(
                f"{c.cfo} resigned as Chief Financial Officer of {c.name} on "
                f"{when.isoformat()}; the Board appointed {c.new_cfo} as CFO."
            ),
            facts=[fo, fi],
            key_facts=[(f"{c.cfo} resigned", ao), (f"{c.new_cfo} appointed CFO", ai)],
            template="narrative:cfo",
            cid=c.cid,
        )

    def identifiers(self, c: Company) -> None:
        name = c.name.replace(", Inc.", "")
        for key, q, ans in [
            (
                "file_number",
                self.pick([f"commission file no. {name}", f"SEC file number for {name}"]),
                f"{c.name}'s Commission File Number is {c.file_number}.",
            ),
            (
                "ein",
                self.pick([f"{c.ticker} EIN", f"IRS employer ID no. for {name}"]),
                f"{c.name}'s I.R.S. Employer Identification No. is {c.ein}.",
            ),
            (
                "ticker",
                self.pick([f"which company trades as {c.ticker}", f"{c.ticker} is whose ticker"]),
                f"{c.ticker} is the trading symbol of {c.name}.",
            ),
        ]:
            f = f"{c.cid}:id:{key}"
            a = self.anchors(f)
            self.add(
                query=q,
                category="exact_identifier",
                paths=[[a]],
                answer=ans,
                facts=[f],
                key_facts=[(ans, a)],
                template=f"identifier:{key}",
                cid=c.cid,
            )

    def _first_report(self, fid: str) -> dt.date | None:
        ps = self.P.get(fid, [])
        return ps[0].accepted if ps else None

    def temporal(self, c: Company) -> None:
        main = "revenue" if c.kind == "tech" else "nii"
        bal = "rpo" if c.kind == "tech" else "deposits"
        for fy in range(self.L.first_fy, self.L.last_fy + 1):
            q = int(self.rng.integers(1, 4))
            fid = fact_id(c.cid, main, fy, q)
            first = self._first_report(fid)
            tenq = self._first_report(fact_id(c.cid, "rpo" if c.kind == "tech" else "loans", fy, q))
            assert first is not None and tenq is not None
            # between the earnings release and the 10-Q: only the release has the quarter
            as_of = (
                first + (tenq - first) // 2
                if self.rng.random() < 0.5
                else tenq + dt.timedelta(days=3)
            )
            # the latest quarter reported by as_of (may be this quarter)
            v = self.L.value_as_of(fid, as_of)
            a = self.anchors(fid, value=v, by=as_of)
            short = self.pick(_SHORT[main])
            self.add(
                query=self.pick(
                    [
                        f"{self.who(c)} latest qtr {short}",
                        f"{short} most recent quarter {self.who(c)}",
                        f"what did {self.who(c)} just report for quarterly {short}",
                    ]
                ),
                category="temporal",
                paths=[[a]],
                as_of=as_of,
                answer=(
                    f"As of {as_of.isoformat()}, the most recent quarter {c.name} had reported was "
                    f"{self.period_text(c, fy, q, main, bare=True)}, with {CONCEPTS[main].phrase} of "
                    f"{self.money_text(c, main, v)}."
                ),
                facts=[fid],
                key_facts=[(f"latest quarter is Q{q} FY{fy}", a)],
                template=f"temporal:latest_quarter:{main}",
                cid=c.cid,
            )
            # the latest fiscal-year-end balance known at a date shortly after the 10-K
            fidb = fact_id(c.cid, bal, fy)
            tenk = self._first_report(fact_id(c.cid, "net_income", fy))
            k10 = [p for p in self.P.get(fidb, []) if p.doc_id.endswith(f"{fy}-10k")]
            if tenk is None or not k10:
                continue
            as_of = k10[0].accepted + dt.timedelta(days=int(self.rng.integers(1, 30)))
            v = self.L.value_as_of(fidb, as_of)
            a = self.anchors(fidb, value=v, by=as_of)
            self.add(
                query=self.pick(
                    [
                        f"{self.who(c)} {self.pick(_SHORT[bal])} at last FYE",
                        f"most recent year-end {self.pick(_SHORT[bal])} for {self.who(c)}",
                    ]
                ),
                category="temporal",
                paths=[[a]],
                as_of=as_of,
                answer=(
                    f"As of {as_of.isoformat()}, the latest fiscal year end reported by {c.name} "
                    f"was {c.calendar.year_end(fy).isoformat()}; {CONCEPTS[bal].phrase} were "
                    f"{self.money_text(c, bal, v)}."
                ),
                facts=[fidb],
                key_facts=[(f"{CONCEPTS[bal].phrase} FY{fy}", a)],
                template=f"temporal:latest_fye:{bal}",
                cid=c.cid,
            )

    def comparison(self, c: Company) -> None:
        pairs = (
            ["sub_rev", "revenue", "op_income", "rpo"]
            if c.kind == "tech"
            else ["nim", "nii", "deposits", "cet1", "provision"]
        )
        for fy in range(self.L.first_fy, self.L.last_fy + 1):
            for con in [
                pairs[i] for i in sorted(self.rng.choice(len(pairs), 2, replace=False).tolist())
            ]:
                new, old = fact_id(c.cid, con, fy), fact_id(c.cid, con, fy - 1)
                if self.restated(new, old):
                    continue
                vn, vo = self.L.current_value(new), self.L.current_value(old)
                both = self.anchors(new, need=(old,))
                paths = ([[both]] if both else []) + [[self.anchors(new), self.anchors(old)]]
                short = self.pick(_SHORT[con])
                if CONCEPTS[con].unit == "percent":
                    verb = "expand" if con == "nim" else "improve"
                    query = self.pick(
                        [
                            f"{self.who(c)} {short} {(fy - 1) % 100} vs {fy % 100}, did it {verb}",
                            f"{short} {fy - 1} vs {fy} {self.who(c)}",
                        ]
                    )
                    moved = "rose" if vn > vo else ("fell" if vn < vo else "was unchanged")
                    delta = round((float(vn) - float(vo)) * 100)
                    ans = (
                        f"{c.name}'s {CONCEPTS[con].phrase} {moved} from {fmt_cell(c, con, vo)} in "
                        f"{period_phrase(c, fy - 1)} to {fmt_cell(c, con, vn)} in {period_phrase(c, fy)} "
                        f"({delta:+d} basis points)."
                    )
                else:
                    query = self.pick(
                        [
                            f"{self.who(c)} {self.fy_s(fy)} {short} y/y",
                            f"{short} growth {self.fy_s(fy)} {self.who(c)}",
                        ]
                    )
                    pct = (float(vn) - float(vo)) / abs(float(vo)) * 100
                    ans = (
                        f"{c.name}'s {CONCEPTS[con].phrase} was {self.money_text(c, con, vn)} in "
                        f"{period_phrase(c, fy)} versus {self.money_text(c, con, vo)} in "
                        f"{period_phrase(c, fy - 1)}, a change of {pct:+.1f}%."
                    )
                self.add(
                    query=query,
                    category="comparison",
                    paths=paths,
                    answer=ans,
                    facts=[new, old],
                    key_facts=[
                        (f"FY{fy}: {fmt_cell(c, con, vn)}", paths[-1][0][0:]),
                        (f"FY{fy - 1}: {fmt_cell(c, con, vo)}", paths[-1][1]),
                    ],
                    template=f"comparison:{con}",
                    cid=c.cid,
                )
            if c.kind == "bank":
                q = int(self.rng.integers(1, 5))
                pr, nco = fact_id(c.cid, "provision", fy, q), fact_id(c.cid, "nco", fy, q)
                if self.restated(pr, nco):
                    continue
                vp, vn_ = self.L.current_value(pr), self.L.current_value(nco)
                build = int(vp) - int(vn_)
                word = (
                    "a reserve build"
                    if build > 0
                    else ("a reserve release" if build < 0 else "no change")
                )
                paths = [[self.anchors(pr), self.anchors(nco)]]
                self.add(
                    query=self.pick(
                        [
                            f"{self.who(c)} reserve build {self.q_s(fy, q)}",
                            f"did {self.who(c)} build reserves in {self.q_s(fy, q)}",
                        ]
                    ),
                    category="comparison",
                    paths=paths,
                    answer=(
                        f"In {self.period_text(c, fy, q, 'provision', bare=True)}, {c.name}'s provision for "
                        f"credit losses was {self.money_text(c, 'provision', vp)} against net "
                        f"charge-offs of {self.money_text(c, 'nco', vn_)}, {word} of "
                        f"{self.money_text(c, 'provision', abs(build))}."
                    ),
                    facts=[pr, nco],
                    key_facts=[("provision", paths[0][0]), ("net charge-offs", paths[0][1])],
                    template="comparison:reserve_build",
                    cid=c.cid,
                )

    def amendments(self, c: Company) -> None:
        for r in sorted(
            (r for r in self.L.restatements.values() if self.L.facts[r.fact_id].cid == c.cid),
            key=lambda r: r.fact_id,
        ):
            f = self.L.facts[r.fact_id]
            if f.fq is not None:
                continue
            con = f.concept
            short = self.pick(_SHORT[con])
            per = self.period_text(c, f.fy, None, con)
            new_a = self.anchors(r.fact_id, value=r.new)
            old_a = self.anchors(r.fact_id, value=r.old)
            if not r.quiet:
                self.add(
                    query=self.pick(
                        [
                            f"{self.who(c)} {self.fy_s(f.fy)} {short} after the restatement",
                            f"restated {short} {self.fy_s(f.fy)} {self.who(c)}",
                        ]
                    ),
                    category="amendment_restatement",
                    paths=[[new_a]],
                    answer=(
                        f"{c.name} restated {CONCEPTS[con].phrase} {per} to "
                        f"{self.money_text(c, con, r.new)} (previously reported "
                        f"{self.money_text(c, con, r.old)}) in its 10-K/A."
                    ),
                    facts=[r.fact_id],
                    key_facts=[(f"restated {fmt_cell(c, con, r.new)}", new_a)],
                    template=f"restatement:restated:{con}",
                    cid=c.cid,
                    extra={"amendment": r.via},
                )
                if con != "eps":
                    self.add(
                        query=self.pick(
                            [
                                f"{self.who(c)} {self.fy_s(f.fy)} {short} as originally reported",
                                f"what did {self.who(c)} first report for {self.fy_s(f.fy)} {short}",
                            ]
                        ),
                        category="amendment_restatement",
                        paths=[[old_a]],
                        answer=(
                            f"{c.name} originally reported {CONCEPTS[con].phrase} of "
                            f"{self.money_text(c, con, r.old)} {per}; the 10-K/A later "
                            f"restated it to {self.money_text(c, con, r.new)}."
                        ),
                        facts=[r.fact_id],
                        key_facts=[(f"originally {fmt_cell(c, con, r.old)}", old_a)],
                        template=f"restatement:original:{con}",
                        cid=c.cid,
                        extra={"amendment": r.via},
                    )
            else:
                self.add(
                    query=self.pick(
                        [
                            f"{self.who(c)} {short} at FYE{f.fy % 100}, latest figure",
                            f"current reported {short} {self.fy_s(f.fy)} year-end {self.who(c)}",
                        ]
                    ),
                    category="amendment_restatement",
                    paths=[[new_a]],
                    answer=(
                        f"The latest figure for {c.name}'s {CONCEPTS[con].phrase} {per} is "
                        f"{self.money_text(c, con, r.new)}, as shown in the comparative column of "
                        f"the {period_phrase(c, f.fy + 1)} 10-K; the {period_phrase(c, f.fy)} 10-K "
                        f"had reported {self.money_text(c, con, r.old)}."
                    ),
                    facts=[r.fact_id],
                    key_facts=[(f"revised {fmt_cell(c, con, r.new)}", new_a)],
                    template=f"restatement:quiet_latest:{con}",
                    cid=c.cid,
                    extra={"revised_in": r.via},
                )
                as_of = r.effective - dt.timedelta(days=1)
                old_by = self.anchors(r.fact_id, value=r.old, by=as_of)
                self.add(
                    query=self.pick(
                        [
                            f"{self.who(c)} {short} at FYE{f.fy % 100}",
                            f"{short} end of {self.fy_s(f.fy)} {self.who(c)}",
                        ]
                    ),
                    category="amendment_restatement",
                    paths=[[old_by]],
                    as_of=as_of,
                    answer=(
                        f"As of {as_of.isoformat()}, {c.name} had reported {CONCEPTS[con].phrase} "
                        f"of {self.money_text(c, con, r.old)} {per} (later revised to "
                        f"{self.money_text(c, con, r.new)})."
                    ),
                    facts=[r.fact_id],
                    key_facts=[(f"as reported {fmt_cell(c, con, r.old)}", old_by)],
                    template=f"restatement:quiet_asof:{con}",
                    cid=c.cid,
                    extra={"revised_in": r.via},
                )
        by_year: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for did, what in sorted(amendments(self.L, c.cid).items()):
            by_year[int(did.split("-")[1])].append((did, what))
        for fy, items in sorted(by_year.items()):
            facts = [f"{c.cid}:text:amendment:{did}" for did, _ in items]
            pieces = [self.anchors(f) for f in facts]
            listing = "; ".join(
                f"Amendment No. {did.rsplit('10ka', 1)[1]}: {what}" for did, what in items
            )
            self.add(
                query=self.pick(
                    [
                        f"{self.who(c)} {self.fy_s(fy)} 10-K/A - what changed?",
                        f"why did {self.who(c)} amend its {self.fy_s(fy)} 10-K",
                    ]
                ),
                category="amendment_restatement",
                paths=[pieces],
                answer=f"{c.name} amended its {period_phrase(c, fy)} 10-K {len(items)} time(s). {listing}.",
                facts=facts,
                key_facts=[(what, p) for (_, what), p in zip(items, pieces, strict=True)],
                template="amendment:what_changed",
                cid=c.cid,
            )
        if c.part3_by_amendment:
            for fy in range(self.L.first_fy, self.L.last_fy + 1):
                fpay = f"{c.cid}:text:ceo_pay:FY{fy}"
                a = self.anchors(fpay)
                pay = self.L.ceo_pay[(c.cid, fy)]
                self.add(
                    query=self.pick(
                        [
                            f"{self.who(c)} CEO total comp {self.fy_s(fy)}",
                            f"how much was {c.ceo} paid {self.fy_s(fy)}",
                        ]
                    ),
                    category="amendment_restatement",
                    paths=[[a]],
                    answer=(
                        f"{c.ceo}'s total compensation for {period_phrase(c, fy)} was ${pay:,}, "
                        f"disclosed in the Part III 10-K/A (the original 10-K deferred Part III)."
                    ),
                    facts=[fpay],
                    key_facts=[(f"${pay:,}", a)],
                    template="amendment:part3:ceo_pay",
                    cid=c.cid,
                )

    def ambiguous(self) -> None:
        for alias, cids in sorted(self.ambiguous_alias.items()):
            for fy in range(self.L.first_fy, self.L.last_fy + 1):
                paths = []
                fids = []
                parts = []
                for cid in cids:
                    c = self.L.company(cid)
                    fid = fact_id(cid, "net_income", fy)
                    fids.append(fid)
                    paths.append([self.anchors(fid)])
                    parts.append(
                        f"{c.name} ({c.ticker}): {self.money_text(c, 'net_income', self.L.current_value(fid))}"
                    )
                self.add(
                    query=self.pick([f"{alias} net income {self.fy_s(fy)}", f"{alias} NI {fy}"]),
                    category="ambiguous",
                    paths=paths,
                    behavior="clarify",
                    answer=f"'{alias}' may mean more than one company. Net income for {fy}: "
                    + "; ".join(parts)
                    + ".",
                    notes="Ask which company is meant, or answer for each one, naming it.",
                    facts=fids,
                    key_facts=[],
                    template="ambiguous:alias",
                    cid=cids[0],
                )
        for c in self.L.companies:
            if c.kind != "tech" or c.calendar.fye_month == 12:
                continue
            for fy in range(self.L.first_fy, self.L.last_fy + 1):
                fid = fact_id(c.cid, "revenue", fy)
                v = self.L.current_value(fid)
                self.add(
                    query=self.pick([f"{c.ticker} revenue {fy}", f"{c.ticker} {fy} total rev"]),
                    category="ambiguous",
                    paths=[[self.anchors(fid)]],
                    behavior="clarify",
                    answer=(
                        f"{c.name}'s fiscal year ends {c.calendar.fye}; fiscal {fy} (ended "
                        f"{c.calendar.year_end(fy).isoformat()}) total revenues were "
                        f"{self.money_text(c, 'revenue', v)}. Calendar {fy} is a different period."
                    ),
                    notes=(
                        "Say whether fiscal or calendar year is meant; fiscal year figure is the "
                        "reported one, a calendar-year figure would combine quarters of two fiscal years."
                    ),
                    facts=[fid],
                    key_facts=[],
                    template="ambiguous:fiscal_vs_calendar",
                    cid=c.cid,
                )

    def unanswerable(self, c: Company) -> None:
        nxt = self.L.last_fy + 1
        main = "revenue" if c.kind == "tech" else "nii"
        g = f"{c.cid}:text:guidance"
        lo, hi = self.L.guidance[c.cid]
        phrase = CONCEPTS[main].phrase
        self.add(
            query=self.pick(
                [
                    f"{self.who(c)} {self.fy_s(nxt)} {self.pick(_SHORT[main])} came in at?",
                    f"what did {self.who(c)} report for {self.fy_s(nxt)} {self.pick(_SHORT[main])}",
                ]
            ),
            category="unanswerable",
            answerable=False,
            behavior="abstain",
            paths=[],
            answer=(
                f"{c.name} has not reported {phrase} for {period_phrase(c, nxt)}; the filings only "
                f"give guidance of ${lo / 1e6:,.0f} million to ${hi / 1e6:,.0f} million."
            ),
            notes="Must not present the guidance range as an actual result.",
            facts=[g],
            key_facts=[],
            template="unanswerable:forward_looking",
            cid=c.cid,
            extra={
                "absent": {
                    "facts": [fact_id(c.cid, main, nxt)],
                    "patterns": [
                        re.escape(phrase.lower()) + r" (?:was|were) \$[\d,.]+ million "
                        r"(?:in|for) " + re.escape(period_phrase(c, nxt).lower()),
                        re.escape(f"{phrase} for {period_phrase(c, nxt)}".lower())
                        + " (?:was|were)",
                    ],
                },
                "related_fact_ids": [g],
            },
        )
        con = "large_cust" if c.kind == "tech" else "criticized"
        fy = int(self.rng.integers(self.L.first_fy, self.L.last_fy + 1))
        q = int(self.pick(["1", "3"]))
        qe = c.calendar.quarter_end(fy, q)
        adj = fact_id(c.cid, con, fy, 2)
        vq2 = self.L.current_value(adj)
        date_txt = f"{qe.strftime('%B')} {qe.day}, {qe.year}"
        short = "$100k+ customers" if con == "large_cust" else "criticized loans"
        self.add(
            query=self.pick(
                [
                    f"{self.who(c)} {short} {self.q_s(fy, q)}",
                    f"{short} at end of {self.q_s(fy, q)} {self.who(c)}",
                ]
            ),
            category="unanswerable",
            answerable=False,
            behavior="correct_premise",
            paths=[],
            answer=(
                f"{c.name} does not disclose {CONCEPTS[con].phrase} for the {_ORD[q]} quarter; it "
                f"discloses the figure at the second quarter and at fiscal year end (second quarter of "
                f"{period_phrase(c, fy)}: {self.money_text(c, con, vq2)})."
            ),
            notes="The adjacent quarter's figure may be offered only if labelled as a different period.",
            facts=[],
            key_facts=[],
            template=f"unanswerable:adjacent_quarter:{con}",
            cid=c.cid,
            extra={
                "absent": {
                    "facts": [fact_id(c.cid, con, fy, q)],
                    "patterns": [
                        re.escape(CONCEPTS[con].phrase.lower())
                        + ".{0,40}"
                        + re.escape(f"as of {date_txt}".lower())
                    ],
                },
                "related_fact_ids": [adj],
            },
        )
        other = "nim" if c.kind == "tech" else "rpo"
        fy = int(self.rng.integers(self.L.first_fy, self.L.last_fy + 1))
        self.add(
            query=f"{self.who(c)} {self.pick(_SHORT[other])} {self.fy_s(fy)}",
            category="unanswerable",
            answerable=False,
            behavior="abstain",
            paths=[],
            answer=(
                f"{c.name} does not report {CONCEPTS[other].phrase}; it is "
                f"{'a software company' if c.kind == 'tech' else 'a bank'}."
            ),
            facts=[],
            key_facts=[],
            template=f"unanswerable:not_applicable:{other}",
            cid=c.cid,
            extra={
                "absent": {
                    "facts": [fact_id(c.cid, other, fy)],
                    "patterns": [re.escape(CONCEPTS[other].phrase.lower())],
                }
            },
        )


def build_golden(ledger: Ledger, docs: list[Doc], *, seed: int = 7) -> list[dict[str, Any]]:
    """Entries (JSON dicts valid as `assay.dataset.schema.Entry`), ids `syn-0001`... in order."""
    g = _Gen(ledger, docs, seed)
    for c in ledger.companies:
        g.numeric(c)
        g.narrative(c)
        g.identifiers(c)
        g.temporal(c)
        g.comparison(c)
        g.amendments(c)
        g.unanswerable(c)
    g.ambiguous()
    out: list[dict[str, Any]] = []
    for i, e in enumerate(g.entries, start=1):
        e["id"] = f"syn-{i:04d}"
        out.append(Entry.model_validate(e).to_json_dict())
    return out
