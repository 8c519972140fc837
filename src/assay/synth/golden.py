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

The question families are the table `FAMILIES` at the end of this module: one `Family` row per
kind of question (its loop, its answer function below, its wording as templates). Adding a family
is one row, plus its answer function if no existing one fits; `assay.synth.questions` explains
the template placeholders and the order families are asked in.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from assay.synth.facts_ledger import CONCEPTS, Company, Ledger, fact_id
from assay.synth.filings import fmt_cell, period_phrase
from assay.synth.layout import Doc
from assay.synth.messy import DealBook, SheetRow, deal_book
from assay.synth.questions import (
    ORDINAL,
    SHORTHAND,
    AliasYear,
    Amended,
    Anchors,
    Family,
    GoldWriter,
    Question,
    Restated,
    Year,
    amended_years,
    companies,
    restatements,
    shared_aliases,
    write_entries,
    years,
)

__all__ = ["FAMILIES", "ROOM_TIER", "build_golden"]


def _numeric(g: GoldWriter, y: Year) -> Iterator[Question]:
    """Four annual figures, two quarterly ones and (tech) a segment's revenue, per year."""
    c, fy = y
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
    picks = [annual[i] for i in sorted(g.rng.choice(len(annual), size=4, replace=False).tolist())]
    items: list[tuple[str, int | None, str | None]] = [(con, None, None) for con in picks]
    for con in [
        quarterly[i] for i in sorted(g.rng.choice(len(quarterly), 2, replace=False).tolist())
    ]:
        items.append((con, int(g.rng.integers(1, 4)), None))
    if c.kind == "tech":
        items.append(("seg_rev", None, c.segments[int(g.rng.integers(2))]))
    for con, fq, seg in items:
        fid = fact_id(c.cid, con, fy, fq, seg)
        if g.restated(fid):
            continue
        v = g.ledger.facts[fid].value
        per = g.fy_s(fy) if fq is None else g.q_s(fy, fq)
        short = g.pick(SHORTHAND[con])
        yield Question(
            c,
            [fid],
            [[g.anchors(fid)]],
            vars={
                "concept": con,
                "span": "FY" if fq is None else "Q",
                "per": per,
                "short": f"{seg} {short}" if seg else short,
                "label": f"{seg} segment revenue" if seg else CONCEPTS[con].phrase,
                "value": g.money_text(c, con, v),
                "period": g.period_text(c, fy, fq, con),
            },
        )


def _text(*keys: str) -> Callable[[GoldWriter, Company], Iterator[Question]]:
    """The answer function of a question answered by the text facts `{cid}:text:{key}`: one
    evidence path whose pieces are the anchors of each fact in turn."""

    def lookup(g: GoldWriter, c: Company) -> Iterator[Question]:
        facts = [f"{c.cid}:text:{k}" for k in keys]
        yield Question(c, facts, [[g.anchors(f) for f in facts]])

    return lookup


def _cfo_change(g: GoldWriter, c: Company) -> Iterator[Question]:
    fy, when = g.ledger.officer_change[c.cid]
    for q in _text("cfo_out", "cfo_in")(g, c):
        q.vars.update(fy=fy, when=when.isoformat())
        yield q


def _identifier(key: str) -> Callable[[GoldWriter, Company], Iterator[Question]]:
    def lookup(g: GoldWriter, c: Company) -> Iterator[Question]:
        f = f"{c.cid}:id:{key}"
        yield Question(c, [f], [[g.anchors(f)]], vars={"name": c.name.replace(", Inc.", "")})

    return lookup


def _latest_quarter(g: GoldWriter, y: Year) -> Iterator[Question]:
    """The quarter last reported by a date between a quarter's earnings release and its 10-Q, or
    just after the 10-Q."""
    c, fy = y
    main = "revenue" if c.kind == "tech" else "nii"
    q = int(g.rng.integers(1, 4))
    fid = fact_id(c.cid, main, fy, q)
    first = g.first_report(fid)
    tenq = g.first_report(fact_id(c.cid, "rpo" if c.kind == "tech" else "loans", fy, q))
    assert first is not None and tenq is not None
    as_of = first + (tenq - first) // 2 if g.rng.random() < 0.5 else tenq + dt.timedelta(days=3)
    v = g.ledger.value_as_of(fid, as_of)  # the latest quarter reported by as_of
    a = g.anchors(fid, value=v, by=as_of)
    yield Question(
        c,
        [fid],
        [[a]],
        as_of=as_of,
        vars={
            "concept": main,
            "fy": fy,
            "q": q,
            "short": g.pick(SHORTHAND[main]),
            "period": g.period_text(c, fy, q, main, bare=True),
            "value": g.money_text(c, main, v),
        },
    )


def _latest_fye(g: GoldWriter, y: Year) -> Iterator[Question]:
    """The latest fiscal-year-end balance known at a date shortly after the 10-K."""
    c, fy = y
    bal = "rpo" if c.kind == "tech" else "deposits"
    fid = fact_id(c.cid, bal, fy)
    tenk = g.first_report(fact_id(c.cid, "net_income", fy))
    k10 = [p for p in g.placed.get(fid, []) if p.doc_id.endswith(f"{fy}-10k")]
    if tenk is None or not k10:
        return
    as_of = k10[0].accepted + dt.timedelta(days=int(g.rng.integers(1, 30)))
    v = g.ledger.value_as_of(fid, as_of)
    yield Question(
        c,
        [fid],
        [[g.anchors(fid, value=v, by=as_of)]],
        as_of=as_of,
        vars={"concept": bal, "fy": fy, "value": g.money_text(c, bal, v)},
    )


def _year_over_year(g: GoldWriter, y: Year) -> Iterator[Question]:
    """Two figures a year against the prior year: a ratio moves in basis points, an amount in %."""
    c, fy = y
    pairs = (
        ["sub_rev", "revenue", "op_income", "rpo"]
        if c.kind == "tech"
        else ["nim", "nii", "deposits", "cet1", "provision"]
    )
    for con in [pairs[i] for i in sorted(g.rng.choice(len(pairs), 2, replace=False).tolist())]:
        new, old = fact_id(c.cid, con, fy), fact_id(c.cid, con, fy - 1)
        if g.restated(new, old):
            continue
        vn, vo = g.ledger.current_value(new), g.ledger.current_value(old)
        both = g.anchors(new, need=(old,))
        paths = ([[both]] if both else []) + [[g.anchors(new), g.anchors(old)]]
        words: dict[str, Any] = {
            "concept": con,
            "fy": fy,
            "short": g.pick(SHORTHAND[con]),
            "new_cell": fmt_cell(c, con, vn),
            "old_cell": fmt_cell(c, con, vo),
        }
        if CONCEPTS[con].unit == "percent":
            variant = "ratio"
            words["verb"] = "expand" if con == "nim" else "improve"
            words["moved"] = "rose" if vn > vo else ("fell" if vn < vo else "was unchanged")
            words["delta"] = round((float(vn) - float(vo)) * 100)
        else:
            variant = "amount"
            words["new"] = g.money_text(c, con, vn)
            words["old"] = g.money_text(c, con, vo)
            words["pct"] = (float(vn) - float(vo)) / abs(float(vo)) * 100
        yield Question(c, [new, old], paths, vars=words, variant=variant)


def _reserve_build(g: GoldWriter, y: Year) -> Iterator[Question]:
    c, fy = y
    q = int(g.rng.integers(1, 5))
    pr, nco = fact_id(c.cid, "provision", fy, q), fact_id(c.cid, "nco", fy, q)
    if g.restated(pr, nco):
        return
    vp, vn = g.ledger.current_value(pr), g.ledger.current_value(nco)
    build = int(vp) - int(vn)
    yield Question(
        c,
        [pr, nco],
        [[g.anchors(pr), g.anchors(nco)]],
        vars={
            "fy": fy,
            "q": q,
            "quarter": g.period_text(c, fy, q, "provision", bare=True),
            "provision": g.money_text(c, "provision", vp),
            "nco": g.money_text(c, "nco", vn),
            "word": "a reserve build"
            if build > 0
            else ("a reserve release" if build < 0 else "no change"),
            "build": g.money_text(c, "provision", abs(build)),
        },
    )


def _restatement(
    g: GoldWriter, it: Restated, evidence: Anchors, *, as_of: dt.date | None = None
) -> Question:
    c, r, f, short = it
    con = f.concept
    return Question(
        c,
        [r.fact_id],
        [[evidence]],
        as_of=as_of,
        extra={"revised_in" if r.quiet else "amendment": r.via},
        vars={
            "concept": con,
            "fy": f.fy,
            "short": short,
            "period": g.period_text(c, f.fy, None, con),
            "new": g.money_text(c, con, r.new),
            "old": g.money_text(c, con, r.old),
            "new_cell": fmt_cell(c, con, r.new),
            "old_cell": fmt_cell(c, con, r.old),
        },
    )


def _restated_figure(g: GoldWriter, it: Restated) -> Iterator[Question]:
    if not it.r.quiet:
        yield _restatement(g, it, g.anchors(it.r.fact_id, value=it.r.new))


def _original_figure(g: GoldWriter, it: Restated) -> Iterator[Question]:
    if not it.r.quiet and it.fact.concept != "eps":
        yield _restatement(g, it, g.anchors(it.r.fact_id, value=it.r.old))


def _quiet_latest(g: GoldWriter, it: Restated) -> Iterator[Question]:
    if it.r.quiet:
        yield _restatement(g, it, g.anchors(it.r.fact_id, value=it.r.new))


def _quiet_as_of(g: GoldWriter, it: Restated) -> Iterator[Question]:
    """The figure as reported the day before the quiet revision."""
    if it.r.quiet:
        as_of = it.r.effective - dt.timedelta(days=1)
        yield _restatement(g, it, g.anchors(it.r.fact_id, value=it.r.old, by=as_of), as_of=as_of)


def _what_changed(g: GoldWriter, it: Amended) -> Iterator[Question]:
    c, fy, items = it
    facts = [f"{c.cid}:text:amendment:{did}" for did, _ in items]
    pieces = [g.anchors(f) for f in facts]
    listing = "; ".join(f"Amendment No. {did.rsplit('10ka', 1)[1]}: {what}" for did, what in items)
    yield Question(
        c,
        facts,
        [pieces],
        vars={"fy": fy, "n": len(items), "listing": listing},
        key_facts=[(what, p) for (_, what), p in zip(items, pieces, strict=True)],
    )


def _ceo_pay(g: GoldWriter, y: Year) -> Iterator[Question]:
    c, fy = y
    if c.part3_by_amendment:
        f = f"{c.cid}:text:ceo_pay:FY{fy}"
        yield Question(
            c, [f], [[g.anchors(f)]], vars={"fy": fy, "pay": g.ledger.ceo_pay[(c.cid, fy)]}
        )


def _forward_looking(g: GoldWriter, c: Company) -> Iterator[Question]:
    """Next year's headline figure, of which the filings only give guidance."""
    nxt = g.ledger.last_fy + 1
    main = "revenue" if c.kind == "tech" else "nii"
    guidance = f"{c.cid}:text:guidance"
    lo, hi = g.ledger.guidance[c.cid]
    phrase = CONCEPTS[main].phrase
    yield Question(
        c,
        [guidance],
        [],
        vars={"concept": main, "fy": nxt, "low_m": lo / 1e6, "high_m": hi / 1e6},
        extra={
            "absent": {
                "facts": [fact_id(c.cid, main, nxt)],
                "patterns": [
                    re.escape(phrase.lower()) + r" (?:was|were) \$[\d,.]+ million "
                    r"(?:in|for) " + re.escape(period_phrase(c, nxt).lower()),
                    re.escape(f"{phrase} for {period_phrase(c, nxt)}".lower()) + " (?:was|were)",
                ],
            },
            "related_fact_ids": [guidance],
        },
    )


def _adjacent_quarter(g: GoldWriter, c: Company) -> Iterator[Question]:
    """A figure disclosed at Q2 and year end, asked for Q1 or Q3."""
    con = "large_cust" if c.kind == "tech" else "criticized"
    fy = int(g.rng.integers(g.ledger.first_fy, g.ledger.last_fy + 1))
    q = int(g.pick(["1", "3"]))
    qe = c.calendar.quarter_end(fy, q)
    adj = fact_id(c.cid, con, fy, 2)
    date_txt = f"{qe.strftime('%B')} {qe.day}, {qe.year}"
    yield Question(
        c,
        [],
        [],
        vars={
            "concept": con,
            "fy": fy,
            "q": q,
            "nth": ORDINAL[q],
            "short": "$100k+ customers" if con == "large_cust" else "criticized loans",
            "q2_value": g.money_text(c, con, g.ledger.current_value(adj)),
        },
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


def _other_sector(g: GoldWriter, c: Company) -> Iterator[Question]:
    """A figure only the other sector reports (a bank's margin from a software company)."""
    other = "nim" if c.kind == "tech" else "rpo"
    fy = int(g.rng.integers(g.ledger.first_fy, g.ledger.last_fy + 1))
    yield Question(
        c,
        [],
        [],
        vars={
            "concept": other,
            "fy": fy,
            "what": "a software company" if c.kind == "tech" else "a bank",
        },
        extra={
            "absent": {
                "facts": [fact_id(c.cid, other, fy)],
                "patterns": [re.escape(CONCEPTS[other].phrase.lower())],
            }
        },
    )


def _alias(g: GoldWriter, it: AliasYear) -> Iterator[Question]:
    fids, paths, parts = [], [], []
    for cid in it.cids:
        c = g.ledger.company(cid)
        fid = fact_id(cid, "net_income", it.fy)
        fids.append(fid)
        paths.append([g.anchors(fid)])
        value = g.money_text(c, "net_income", g.ledger.current_value(fid))
        parts.append(f"{c.name} ({c.ticker}): {value}")
    yield Question(
        g.ledger.company(it.cids[0]),
        fids,
        paths,
        vars={"alias": it.alias, "fy": it.fy, "each": "; ".join(parts)},
        clarify_with=tuple(g.ledger.company(cid).name for cid in it.cids),
    )


def _fiscal_vs_calendar(g: GoldWriter, y: Year) -> Iterator[Question]:
    """Revenue "for 2023" from a company whose fiscal year does not end in December."""
    c, fy = y
    if c.kind == "tech" and c.calendar.fye_month != 12:
        fid = fact_id(c.cid, "revenue", fy)
        value = g.money_text(c, "revenue", g.ledger.current_value(fid))
        yield Question(
            c,
            [fid],
            [[g.anchors(fid)]],
            vars={"fy": fy, "value": value},
            clarify_with=(f"fiscal {fy}", f"calendar {fy}"),
        )


# ------------------------------------------------------------------------ room v2: deal docs


def deal_books_of(g: GoldWriter, cs: Sequence[Company]) -> Iterator[DealBook]:
    """Each company's deal documents (room scope, so the filings' entries keep their draws)."""
    for c in cs:
        yield deal_book(g.ledger, c)


def _sheet_anchor(doc: str, r: SheetRow, upto: int, *, page: int | None = None) -> dict[str, Any]:
    return {
        "doc": doc,
        "page": r.page if page is None else page,
        "sheet": r.sheet,
        "cells": r.cells(upto=upto),
        "quote": r.quote(upto),
    }


def _quote_anchor(b: DealBook, key: str) -> dict[str, Any]:
    doc, page, quote = b.quotes[key]
    return {"doc": doc, "page": page, "quote": quote}


def _conflict_net_income(g: GoldWriter, b: DealBook) -> Iterator[Question]:
    c, fy = b.c, b.fy
    conf = next(x for x in b.conflicts if ":net_income:" in x["fact"])
    fid = conf["fact"]
    tenk = [a for a in g.anchors(fid) if a["doc"] == conf["authority"]["doc"]]
    piece = [*tenk, _quote_anchor(b, "minutes:audit")]
    yield Question(
        c,
        [fid],
        [[piece]],
        vars={"fy": fy, "value": conf["value"], "other": conf["superseded"]["value"]},
        extra={"conflict": conf},
    )


def _conflict_leverage(g: GoldWriter, b: DealBook) -> Iterator[Question]:
    conf = next(x for x in b.conflicts if x["fact"].endswith(":deal:max_leverage"))
    yield Question(
        b.c,
        [conf["fact"]],
        [[[_quote_anchor(b, "credit:leverage")]]],
        vars={"fy": b.fy, "value": conf["value"], "other": conf["superseded"]["value"]},
        extra={"conflict": conf, "deal_facts": ["max_leverage"]},
    )


def _decoy_budget(g: GoldWriter, b: DealBook) -> Iterator[Question]:
    d = next(x for x in b.decoys if x["kind"] == "scope")
    main = "revenue" if b.c.kind == "tech" else "nii"
    r = b.rows[f"pl:{main}"]
    yield Question(
        b.c,
        [f"{b.c.cid}:deal:mgmt_{main}"],
        [[[_sheet_anchor(d["doc"], r, 1)]]],
        vars={
            "fy": b.fy,
            "label": r.label.lower(),
            "value": f"{d['value']:,}",
            "decoy": f"{d['decoy_value']:,}",
            "unit": b.c.unit,
        },
        extra={"decoy": d},
    )


def _decoy_subsidiary(g: GoldWriter, b: DealBook) -> Iterator[Question]:
    d = next(x for x in b.decoys if x["kind"] == "entity")
    fid = d["fact"]
    c = b.c
    concept = fid.split(":")[1]
    yield Question(
        c,
        [fid],
        [[g.anchors(fid)]],
        vars={
            "fy": b.fy,
            "label": CONCEPTS[concept].phrase,
            "value": fmt_cell(c, concept, g.ledger.current_value(fid)),
            "decoy": f"{d['decoy_value']:,}",
            "unit": c.unit,
            "sub": b.facts["subsidiary"],
        },
        extra={"decoy": d},
    )


def _decoy_leverage(g: GoldWriter, b: DealBook) -> Iterator[Question]:
    d = next(x for x in b.decoys if x["kind"] == "period")
    r = b.rows["cov:leverage"]
    email = next(x for x in b.docs if x.kind == "email")
    piece = [  # the e-mail's body and attachment first: the entry counts as an e-mail question
        _quote_anchor(b, "email:leverage"),
        _sheet_anchor(email.doc_id, r, 2, page=2),  # the schedule, attached to the e-mail
        _sheet_anchor(d["doc"], r, 2),
    ]
    yield Question(
        b.c,
        [d["fact"]],
        [[piece]],
        vars={"fy": b.fy, "value": f"{d['value']:.2f}", "decoy": f"{d['decoy_value']:.2f}"},
        extra={"decoy": d, "deal_facts": ["leverage"]},
    )


# ---------------------------------------------------------------------------------- the table

FAMILIES: tuple[Family[Any], ...] = (
    Family(
        "numeric:{concept}:{span}",
        "numeric_lookup",
        each=years,
        lookup=_numeric,
        phrasings=("{who} {per} {short}", "{short} {per} {who}", "what was {who}'s {short} {per}"),
        answer="{c.name} reported {label} of {value} {period}.",
        key_facts=("{label} {period}: {value}",),
    ),
    Family(
        "narrative:risk",
        "narrative",
        each=companies,
        lookup=_text("risk"),
        phrasings=(
            "{who} company-specific risk in 1A",
            "what risk does {who} call out as specific to its business",
        ),
        answer="{c.name} says a risk specific to its business is that {c.risk}.",
        key_facts=("{c.risk}",),
    ),
    Family(
        "narrative:segments",
        "narrative",
        each=companies,
        lookup=_text("segments"),
        kinds=("tech",),
        phrasings=("{who} reportable segments?", "how does {who} segment the biz"),
        answer="{c.name} has two operating segments: {c.segments[0]} and {c.segments[1]}.",
        key_facts=("segments: {c.segments[0]}, {c.segments[1]}",),
    ),
    Family(
        "narrative:focus",
        "narrative",
        each=companies,
        lookup=_text("focus"),
        kinds=("bank",),
        phrasings=("{who} lending focus", "what kind of lending is {who} concentrated in"),
        answer="{c.name}'s lending is focused on {c.product}.",
        key_facts=("{c.product}",),
    ),
    Family(
        "narrative:cfo",
        "narrative",
        each=companies,
        lookup=_cfo_change,
        phrasings=(
            "{who} CFO change {fy} - who left, who replaced",
            "who replaced {c.cfo} as CFO at {who}",
        ),
        answer=(
            "{c.cfo} resigned as Chief Financial Officer of {c.name} on {when}; "
            "the Board appointed {c.new_cfo} as CFO."
        ),
        key_facts=("{c.cfo} resigned", "{c.new_cfo} appointed CFO"),
    ),
    Family(
        "identifier:file_number",
        "exact_identifier",
        each=companies,
        lookup=_identifier("file_number"),
        phrasings=("commission file no. {name}", "SEC file number for {name}"),
        answer="{c.name}'s Commission File Number is {c.file_number}.",
        key_facts=("{answer}",),
    ),
    Family(
        "identifier:ein",
        "exact_identifier",
        each=companies,
        lookup=_identifier("ein"),
        phrasings=("{c.ticker} EIN", "IRS employer ID no. for {name}"),
        answer="{c.name}'s I.R.S. Employer Identification No. is {c.ein}.",
        key_facts=("{answer}",),
    ),
    Family(
        "identifier:ticker",
        "exact_identifier",
        each=companies,
        lookup=_identifier("ticker"),
        phrasings=("which company trades as {c.ticker}", "{c.ticker} is whose ticker"),
        answer="{c.ticker} is the trading symbol of {c.name}.",
        key_facts=("{answer}",),
    ),
    Family(
        "temporal:latest_quarter:{concept}",
        "temporal",
        each=years,
        lookup=_latest_quarter,
        phrasings=(
            "{who} latest qtr {short}",
            "{short} most recent quarter {who}",
            "what did {who} just report for quarterly {short}",
        ),
        answer=(
            "As of {as_of}, the most recent quarter {c.name} had reported was {period}, "
            "with {phrase} of {value}."
        ),
        key_facts=("latest quarter is Q{q} FY{fy}",),
    ),
    Family(
        "temporal:latest_fye:{concept}",
        "temporal",
        each=years,
        lookup=_latest_fye,
        phrasings=("{who} {short_s} at last FYE", "most recent year-end {short_s} for {who}"),
        answer=(
            "As of {as_of}, the latest fiscal year end reported by {c.name} was {year_end}; "
            "{phrase} were {value}."
        ),
        key_facts=("{phrase} FY{fy}",),
    ),
    Family(
        "comparison:{concept}",
        "comparison",
        each=years,
        lookup=_year_over_year,
        phrasings={
            "ratio": (
                "{who} {short} {prev_yy} vs {yy}, did it {verb}",
                "{short} {prev_fy} vs {fy} {who}",
            ),
            "amount": ("{who} {fy_s} {short} y/y", "{short} growth {fy_s} {who}"),
        },
        answer={
            "ratio": (
                "{c.name}'s {phrase} {moved} from {old_cell} in {prev_fiscal} to {new_cell} in "
                "{fiscal} ({delta:+d} basis points)."
            ),
            "amount": (
                "{c.name}'s {phrase} was {new} in {fiscal} versus {old} in {prev_fiscal}, "
                "a change of {pct:+.1f}%."
            ),
        },
        key_facts=("FY{fy}: {new_cell}", "FY{prev_fy}: {old_cell}"),
    ),
    Family(
        "comparison:reserve_build",
        "comparison",
        each=years,
        lookup=_reserve_build,
        kinds=("bank",),
        phrasings=("{who} reserve build {q_s}", "did {who} build reserves in {q_s}"),
        answer=(
            "In {quarter}, {c.name}'s provision for credit losses was {provision} against net "
            "charge-offs of {nco}, {word} of {build}."
        ),
        key_facts=("provision", "net charge-offs"),
    ),
    Family(
        "restatement:restated:{concept}",
        "amendment_restatement",
        each=restatements,
        lookup=_restated_figure,
        phrasings=("{who} {fy_s} {short} after the restatement", "restated {short} {fy_s} {who}"),
        answer="{c.name} restated {phrase} {period} to {new} (previously reported {old}) in its 10-K/A.",
        key_facts=("restated {new_cell}",),
    ),
    Family(
        "restatement:original:{concept}",
        "amendment_restatement",
        each=restatements,
        lookup=_original_figure,
        phrasings=(
            "{who} {fy_s} {short} as originally reported",
            "what did {who} first report for {fy_s} {short}",
        ),
        answer=(
            "{c.name} originally reported {phrase} of {old} {period}; "
            "the 10-K/A later restated it to {new}."
        ),
        key_facts=("originally {old_cell}",),
    ),
    Family(
        "restatement:quiet_latest:{concept}",
        "amendment_restatement",
        each=restatements,
        lookup=_quiet_latest,
        phrasings=(
            "{who} {short} at FYE{yy}, latest figure",
            "current reported {short} {fy_s} year-end {who}",
        ),
        answer=(
            "The latest figure for {c.name}'s {phrase} {period} is {new}, as shown in the "
            "comparative column of the {next_fiscal} 10-K; the {fiscal} 10-K had reported {old}."
        ),
        key_facts=("revised {new_cell}",),
    ),
    Family(
        "restatement:quiet_asof:{concept}",
        "amendment_restatement",
        each=restatements,
        lookup=_quiet_as_of,
        phrasings=("{who} {short} at FYE{yy}", "{short} end of {fy_s} {who}"),
        answer="As of {as_of}, {c.name} had reported {phrase} of {old} {period} (later revised to {new}).",
        key_facts=("as reported {old_cell}",),
    ),
    Family(
        "amendment:what_changed",
        "amendment_restatement",
        each=amended_years,
        lookup=_what_changed,
        phrasings=("{who} {fy_s} 10-K/A - what changed?", "why did {who} amend its {fy_s} 10-K"),
        answer="{c.name} amended its {fiscal} 10-K {n} time(s). {listing}.",
    ),
    Family(
        "amendment:part3:ceo_pay",
        "amendment_restatement",
        each=years,
        lookup=_ceo_pay,
        phrasings=("{who} CEO total comp {fy_s}", "how much was {c.ceo} paid {fy_s}"),
        answer=(
            "{c.ceo}'s total compensation for {fiscal} was ${pay:,}, disclosed in the Part III "
            "10-K/A (the original 10-K deferred Part III)."
        ),
        key_facts=("${pay:,}",),
    ),
    Family(
        "unanswerable:forward_looking",
        "unanswerable",
        each=companies,
        lookup=_forward_looking,
        answerable=False,
        behavior="abstain",
        phrasings=(
            "{who} {fy_s} {short_s} came in at?",
            "what did {who} report for {fy_s} {short_s}",
        ),
        answer=(
            "{c.name} has not reported {phrase} for {fiscal}; the filings only give guidance of "
            "${low_m:,.0f} million to ${high_m:,.0f} million."
        ),
        notes="Must not present the guidance range as an actual result.",
    ),
    Family(
        "unanswerable:adjacent_quarter:{concept}",
        "unanswerable",
        each=companies,
        lookup=_adjacent_quarter,
        answerable=False,
        behavior="correct_premise",
        phrasings=("{who} {short} {q_s}", "{short} at end of {q_s} {who}"),
        answer=(
            "{c.name} does not disclose {phrase} for the {nth} quarter; it discloses the figure "
            "at the second quarter and at fiscal year end (second quarter of {fiscal}: "
            "{q2_value})."
        ),
        notes="The adjacent quarter's figure may be offered only if labelled as a different period.",
        false_premise="{c.name} discloses {phrase} for the {nth} quarter",
    ),
    Family(
        "unanswerable:not_applicable:{concept}",
        "unanswerable",
        each=companies,
        lookup=_other_sector,
        answerable=False,
        behavior="abstain",
        phrasings=("{who} {short_s} {fy_s}",),
        answer="{c.name} does not report {phrase}; it is {what}.",
    ),
    Family(
        "ambiguous:alias",
        "ambiguous",
        each=shared_aliases,
        lookup=_alias,
        scope="room",
        behavior="clarify",
        phrasings=("{alias} net income {fy_s}", "{alias} NI {fy}"),
        answer="'{alias}' may mean more than one company. Net income for {fy}: {each}.",
        notes="Ask which company is meant, or answer for each one, naming it.",
    ),
    Family(
        "ambiguous:fiscal_vs_calendar",
        "ambiguous",
        each=years,
        lookup=_fiscal_vs_calendar,
        scope="room",
        behavior="clarify",
        phrasings=("{c.ticker} revenue {fy}", "{c.ticker} {fy} total rev"),
        answer=(
            "{c.name}'s fiscal year ends {c.calendar.fye}; fiscal {fy} (ended {year_end}) total "
            "revenues were {value}. Calendar {fy} is a different period."
        ),
        notes=(
            "Say whether fiscal or calendar year is meant; fiscal year figure is the reported one, "
            "a calendar-year figure would combine quarters of two fiscal years."
        ),
    ),
    Family(
        "conflict:net_income",
        "conflict",
        each=deal_books_of,
        lookup=_conflict_net_income,
        scope="room",
        phrasings=(
            "{c.ticker} FY{fy} net income - mgmt accounts vs 10-K",
            "which {c.ticker} net income for fiscal {fy} is right, the management accounts or the 10-K",
        ),
        answer=(
            "{c.name}'s net income for fiscal {fy} was {value} ({c.unit}) per the audited 10-K; the "
            "management accounts' {other} predates the audit adjustment and is superseded."
        ),
        notes="The 10-K (authority tier 1) decides over the unaudited management accounts (tier 3).",
    ),
    Family(
        "conflict:max_leverage",
        "conflict",
        each=deal_books_of,
        lookup=_conflict_leverage,
        scope="room",
        phrasings=(
            "{c.ticker} max net leverage covenant",
            "what leverage ratio can {c.ticker} not exceed under its credit agreement",
        ),
        answer=(
            "The credit agreement caps {c.name}'s net leverage at {value} to 1.00; the compliance "
            "schedule's {other} misstates it."
        ),
        notes="The credit agreement (tier 1) decides over the covenant compliance schedule (tier 3).",
    ),
    Family(
        "decoy:budget",
        "decoy",
        each=deal_books_of,
        lookup=_decoy_budget,
        scope="room",
        phrasings=(
            "{c.ticker} FY{fy} actual {label} in the management accounts",
            "management accounts {c.ticker} {label} actual fiscal {fy}",
        ),
        answer="The management accounts show actual {label} of {value} ({unit}) for fiscal {fy}.",
        notes="The budget column ({decoy}) is a different scope, not the actual.",
    ),
    Family(
        "decoy:subsidiary",
        "decoy",
        each=deal_books_of,
        lookup=_decoy_subsidiary,
        scope="room",
        phrasings=(
            "{c.ticker} group {label} fiscal {fy}",
            "consolidated {label} {c.ticker} FY{fy}",
        ),
        answer="{c.name} reported consolidated {label} of {value} ({unit}) for fiscal {fy}.",
        notes="{sub}'s {decoy} is a subsidiary's figure, not the group's.",
    ),
    Family(
        "decoy:leverage_period",
        "decoy",
        each=deal_books_of,
        lookup=_decoy_leverage,
        scope="room",
        phrasings=(
            "{c.ticker} net leverage ratio at FY{fy} year end covenant test",
            "covenant compliance {c.ticker} leverage at fiscal year end {fy}",
        ),
        answer="{c.name}'s net leverage at the fiscal {fy} year-end test was {value}x.",
        notes="The {decoy}x figure is the third-quarter test, a different period.",
    ),
)


def build_golden(
    ledger: Ledger,
    docs: list[Doc],
    *,
    seed: int = 7,
    families: Sequence[Family[Any]] = FAMILIES,
) -> list[dict[str, Any]]:
    """Entries (JSON dicts valid as `assay.dataset.schema.Entry`), ids `syn-0001`... in order.

    `families` is the table of question families asked (default `FAMILIES`). Every entry is
    ``label_tier: gold``: its gold was recorded from the ledger as the documents were written,
    not guessed after (gold by construction, `assay.dataset.tiers`).
    """
    return [e | {"label_tier": ROOM_TIER} for e in write_entries(ledger, docs, families, seed=seed)]


ROOM_TIER = "gold"
"""The tier of every entry the synthetic room writes (its gold is known by construction)."""
