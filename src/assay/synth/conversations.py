"""The room's conversations: follow-up questions that only make sense with an earlier turn.

`build_conversations(ledger, docs, seed=7, n=40)` writes conversation lines (the dataset format of
issue 41: an id, a category and `turns`, each turn a question with its own gold) whose first turn
names a company and a period ("What was Averix Technologies' total revenue in FY2023?") and whose
follow-ups lean on it. Kinds of conversation (`KINDS`, drawn from one seeded
`numpy.random.Generator`, several wordings for each turn):

- ``prior_year``: "And the year before?" (then, sometimes, another measure of that year);
- ``other_measure``: "What about operating income?" for the same company and period (then,
  sometimes, "And the year before?");
- ``change``: "How did that change from the prior year?" (both years are the gold);
- ``prior_quarter``: a quarter, then "And the quarter before?" or the same quarter a year earlier;
- ``switch``: another company ("What about Kestrel Systems?"), then "And the year before?": the
  history must follow the new company, not stick to the old one;
- ``clarify_alias`` / ``clarify_year`` / ``clarify_company``: a follow-up the history leaves
  ambiguous (a name two companies share; "that year" after two years; "its" after two
  companies); its expected behaviour is clarify, its gold every reading.

Every answerable turn's gold (evidence paths, key facts, reference answer) comes from the ledger
and the marks the filings carry, exactly as the single-turn golden set's (`GoldWriter`): a
figure's evidence is every page that states it, comparative columns included. A turn's
`depends_on` lists the earlier turns it needs; the conversation's `metadata.turns` says, per turn,
which ledger facts it asks about and what kind of follow-up it is. Restated figures are not asked
(their gold depends on the date, which single-turn entries test).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from assay.synth.facts_ledger import Company, Ledger, fact_id
from assay.synth.filings import period_phrase
from assay.synth.layout import Doc
from assay.synth.questions import Anchors, GoldWriter

__all__ = ["CATEGORIES", "KINDS", "MEASURES", "build_conversations", "turn_entries"]

# annual and quarterly measures per sector, with the names analysts use for them
MEASURES: dict[str, dict[str, tuple[str, ...]]] = {
    "tech": {
        "revenue": ("total revenue", "revenue"),
        "sub_rev": ("subscription and support revenue", "subscription revenue"),
        "op_income": ("operating income", "income from operations"),
        "net_income": ("net income", "net earnings"),
    },
    "bank": {
        "nii": ("net interest income", "NII"),
        "provision": ("provision for credit losses", "credit loss provision"),
        "nonint_inc": ("noninterest income", "fee income"),
        "net_income": ("net income", "net earnings"),
    },
}
QUARTERLY: dict[str, tuple[str, ...]] = {
    "tech": ("revenue", "sub_rev", "net_income"),
    "bank": ("nii", "provision", "net_income"),
}

OPENER = (
    "What was {who}'s {m} in {per}?",
    "How much {m} did {who} report for {per}?",
    "{who} {m} {per}?",
    "Can you pull {who}'s {m} for {per}?",
)
PRIOR_YEAR = (
    "And the year before?",
    "What about the prior fiscal year?",
    "And the previous year?",
    "How about a year earlier?",
    "Same figure for the prior year?",
)
OTHER_MEASURE = (
    "What about {m}?",
    "And {m}?",
    "How much was {m} in the same period?",
    "And what was its {m}?",
)
CHANGE = (
    "How did that change from the prior year?",
    "How does that compare with the year before?",
    "Was that up or down on the previous year?",
    "By how much did that move versus the prior fiscal year?",
)
PRIOR_QUARTER = (
    "And the quarter before?",
    "What about the previous quarter?",
    "And the prior quarter?",
    "How about last quarter?",
)
SAME_QUARTER_PRIOR_YEAR = (
    "And the same quarter a year earlier?",
    "What about the same quarter of the prior year?",
)
SWITCH = (
    "And {who}?",
    "What about {who}?",
    "How about {who} for the same period?",
    "Same question for {who}.",
)
THAT_YEAR = (
    "And {m} that year?",
    "What was {m} in that year?",
)
TWO_YEARS = (
    "What was {who}'s {m} in {per1} and {per2}?",
    "{who} {m} for {per1} and {per2}?",
)
TWO_COMPANIES = (
    "Compare {a} and {b} on {m} for fiscal {fy}.",
    "What were {a}'s and {b}'s {m} in fiscal {fy}?",
)
ITS = (
    "And what was its {m}?",
    "What about its {m}?",
)

KINDS: dict[str, int] = {
    "prior_year": 8,
    "other_measure": 8,
    "change": 6,
    "prior_quarter": 6,
    "switch": 6,
    "clarify_alias": 2,
    "clarify_year": 2,
    "clarify_company": 2,
}
"""Kinds of conversation and their share of `n` (proportions; a kind the room cannot ask, such as
a shared name when no two companies share one, passes its share to the others)."""

CATEGORIES = {
    "prior_year": "carried_context",
    "other_measure": "carried_context",
    "change": "carried_context",
    "prior_quarter": "carried_context",
    "switch": "topic_switch",
    "clarify_alias": "ambiguous_followup",
    "clarify_year": "ambiguous_followup",
    "clarify_company": "ambiguous_followup",
}
CRITERIA = {
    "carried_context": ["kept_context", "no_contradiction"],
    "topic_switch": ["kept_context", "no_contradiction"],
    "ambiguous_followup": ["clarified"],
}


class _Skip(Exception):
    """The draw cannot be asked (a restated or unplaced figure, a used question): draw again."""


def _possessive(who: str) -> str:
    return who + ("'" if who.endswith("s") else "'s")


class _Turns:
    """Writes a conversation's turns from ledger facts, with the room's gold writer."""

    def __init__(self, g: GoldWriter):
        self.g = g
        self.turns: list[dict[str, Any]] = []
        self.meta: list[dict[str, Any]] = []

    def text(self, template: str, **words: Any) -> str:
        who = words.pop("who", None)
        out = template
        if who is not None and "{who}'s" in out:
            out = out.replace("{who}'s", _possessive(who))
        if "{a}'s" in out:
            out = out.replace("{a}'s", _possessive(str(words["a"])))
        if "{b}'s" in out:
            out = out.replace("{b}'s", _possessive(str(words["b"])))
        q = out.format(who=who, **words)
        return q[0].upper() + q[1:]

    def fact(self, c: Company, con: str, fy: int, fq: int | None = None) -> tuple[str, Anchors]:
        fid = fact_id(c.cid, con, fy, fq)
        if fid not in self.g.ledger.facts or self.g.restated(fid):
            raise _Skip(fid)
        anchors = self.g.anchors(fid)
        if not anchors:
            raise _Skip(fid)
        return fid, anchors

    def figure(self, c: Company, con: str, fy: int, fq: int | None = None) -> tuple[str, str]:
        """(value text, period text) of a figure, as the golden set words them."""
        g = self.g
        v = g.ledger.current_value(fact_id(c.cid, con, fy, fq))
        return g.money_text(c, con, v), g.period_text(c, fy, fq, con)

    def lookup(
        self,
        query: str,
        c: Company,
        con: str,
        fy: int,
        fq: int | None,
        *,
        name: str,
        depends_on: Sequence[int] = (),
        follow_up: str = "opener",
    ) -> None:
        """A turn asking one figure: its evidence is every page stating it."""
        fid, anchors = self.fact(c, con, fy, fq)
        value, period = self.figure(c, con, fy, fq)
        self.add(
            query,
            paths=[[anchors]],
            answer=f"{c.name} reported {name} of {value} {period}.",
            key_facts=[(f"{name} {period}: {value}", anchors)],
            facts=[fid],
            depends_on=depends_on,
            follow_up=follow_up,
            company=[c.cid],
        )

    def add(
        self,
        query: str,
        *,
        paths: list[list[Anchors]],
        answer: str,
        key_facts: Sequence[tuple[str, Anchors]],
        facts: Sequence[str],
        depends_on: Sequence[int],
        follow_up: str,
        company: Sequence[str],
        clarify_with: Sequence[str] = (),
        notes: str | None = None,
    ) -> None:
        turn: dict[str, Any] = {"query": query}
        if depends_on:
            turn["depends_on"] = list(depends_on)
        turn["expected_behavior"] = "clarify" if clarify_with else "answer"
        if clarify_with:
            turn["clarify_with"] = list(clarify_with)
        turn["evidence_paths"] = paths
        turn["reference_answer"] = answer
        if notes:
            turn["acceptable_response_notes"] = notes
        turn["key_facts"] = [
            {"fact": text, "critical": True, "supporting": sup} for text, sup in key_facts
        ]
        self.turns.append(turn)
        self.meta.append(
            {"fact_ids": sorted(set(facts)), "follow_up": follow_up, "company": list(company)}
        )


class _Writer:
    def __init__(self, ledger: Ledger, docs: list[Doc], seed: int):
        self.g = GoldWriter(ledger, docs, seed)
        self.g.rng = np.random.default_rng([seed, 41])  # apart from the golden set's draws
        self.rng = self.g.rng
        self.ledger = ledger
        # a follow-up needs an earlier year in the room: years after the first
        self.years = list(range(ledger.first_fy + 1, ledger.last_fy + 1))
        self.asked: set[str] = set()

    def pick(self, options: Sequence[Any]) -> Any:
        return options[int(self.rng.integers(len(options)))]

    def company(self, *, kind: str | None = None, exclude: Sequence[str] = ()) -> Company:
        cs = [
            c
            for c in self.ledger.companies
            if (kind is None or c.kind == kind) and c.cid not in exclude
        ]
        if not cs:
            raise _Skip("no company")
        return self.pick(cs)  # type: ignore[no-any-return]

    def who(self, c: Company) -> str:
        """Ticker, name or (when no other company shares it) the short name."""
        return self.g.who(c)

    def measure(self, c: Company, *, exclude: Sequence[str] = (), quarterly: bool = False) -> str:
        pool = QUARTERLY[c.kind] if quarterly else tuple(MEASURES[c.kind])
        options = [m for m in pool if m not in exclude]
        return str(self.pick(options))

    def m(self, c: Company, con: str) -> str:
        return str(self.pick(MEASURES[c.kind][con]))

    def opener(self, t: _Turns, c: Company, con: str, fy: int, fq: int | None = None) -> None:
        g = self.g
        per = g.fy_s(fy) if fq is None else g.q_s(fy, fq)
        name = self.m(c, con)
        query = t.text(self.pick(OPENER), who=self.who(c), m=name, per=per)
        t.lookup(query, c, con, fy, fq, name=name)

    # -- the kinds ----------------------------------------------------------------------------

    def prior_year(self, t: _Turns) -> list[str]:
        c, fy = self.company(), self.pick(self.years)
        con = self.measure(c)
        self.opener(t, c, con, fy)
        name = self.m(c, con)
        t.lookup(
            self.pick(PRIOR_YEAR), c, con, fy - 1, None, name=name, depends_on=[1],
            follow_up="prior_year",
        )  # fmt: skip
        if self.rng.random() < 0.5:
            other = self.measure(c, exclude=[con])
            m2 = self.m(c, other)
            q = t.text(self.pick(OTHER_MEASURE), m=m2)
            t.lookup(
                q, c, other, fy - 1, None, name=m2, depends_on=[1, 2], follow_up="other_measure"
            )
        return [c.cid]

    def other_measure(self, t: _Turns) -> list[str]:
        c, fy = self.company(), self.pick(self.years)
        con = self.measure(c)
        self.opener(t, c, con, fy)
        other = self.measure(c, exclude=[con])
        m2 = self.m(c, other)
        t.lookup(
            t.text(self.pick(OTHER_MEASURE), m=m2), c, other, fy, None, name=m2, depends_on=[1],
            follow_up="other_measure",
        )  # fmt: skip
        if self.rng.random() < 0.5:
            t.lookup(
                self.pick(PRIOR_YEAR), c, other, fy - 1, None, name=m2, depends_on=[1, 2],
                follow_up="prior_year",
            )  # fmt: skip
        return [c.cid]

    def change(self, t: _Turns) -> list[str]:
        c, fy = self.company(), self.pick(self.years)
        con = self.measure(c)
        self.opener(t, c, con, fy)
        g = self.g
        new, a_new = t.fact(c, con, fy)
        old, a_old = t.fact(c, con, fy - 1)
        both = g.anchors(new, need=(old,))
        paths = ([[both]] if both else []) + [[a_new, a_old]]
        vn, vo = g.ledger.current_value(new), g.ledger.current_value(old)
        name = self.m(c, con)
        pct = (float(vn) - float(vo)) / abs(float(vo)) * 100
        v_new, _ = t.figure(c, con, fy)
        v_old, _ = t.figure(c, con, fy - 1)
        fiscal, prev = period_phrase(c, fy), period_phrase(c, fy - 1)
        t.add(
            self.pick(CHANGE),
            paths=paths,
            answer=(
                f"{c.name}'s {name} was {v_new} in {fiscal} versus {v_old} in {prev}, "
                f"a change of {pct:+.1f}%."
            ),
            key_facts=[(f"{fiscal}: {v_new}", a_new), (f"{prev}: {v_old}", a_old)],
            facts=[new, old],
            depends_on=[1],
            follow_up="change",
            company=[c.cid],
        )
        return [c.cid]

    def prior_quarter(self, t: _Turns) -> list[str]:
        c, fy = self.company(), self.pick(self.years)
        con = self.measure(c, quarterly=True)
        q = int(self.rng.integers(2, 4))  # Q2 or Q3: the quarter before is in the same year
        self.opener(t, c, con, fy, q)
        name = self.m(c, con)
        if self.rng.random() < 0.6:
            t.lookup(
                self.pick(PRIOR_QUARTER), c, con, fy, q - 1, name=name, depends_on=[1],
                follow_up="prior_quarter",
            )  # fmt: skip
        else:
            t.lookup(
                self.pick(SAME_QUARTER_PRIOR_YEAR), c, con, fy - 1, q, name=name,
                depends_on=[1], follow_up="same_quarter_prior_year",
            )  # fmt: skip
        return [c.cid]

    def switch(self, t: _Turns) -> list[str]:
        c, fy = self.company(), self.pick(self.years)
        con = self.measure(c)
        self.opener(t, c, con, fy)
        d = self.company(kind=c.kind, exclude=[c.cid])
        name = self.m(d, con)
        t.lookup(
            t.text(self.pick(SWITCH), who=self.who(d)), d, con, fy, None, name=name,
            depends_on=[1], follow_up="switch_company",
        )  # fmt: skip
        t.lookup(
            self.pick(PRIOR_YEAR), d, con, fy - 1, None, name=name, depends_on=[1, 2],
            follow_up="prior_year",
        )  # fmt: skip
        return [c.cid, d.cid]

    def clarify_alias(self, t: _Turns) -> list[str]:
        """A name two companies share, asked after another company's figure."""
        if not self.g.ambiguous_alias:
            raise _Skip("no shared name")
        alias = self.pick(sorted(self.g.ambiguous_alias))
        cids = self.g.ambiguous_alias[alias]
        c, fy = self.company(exclude=[*self.g.bad_alias]), self.pick(self.years)
        con = "net_income"  # every company reports it
        self.opener(t, c, con, fy)
        paths, parts, facts, readings = [], [], [], []
        for cid in cids:
            e = self.ledger.company(cid)
            fid, anchors = t.fact(e, con, fy)
            value, period = t.figure(e, con, fy)
            paths.append([anchors])
            facts.append(fid)
            parts.append(f"{e.name} ({e.ticker}): {value} {period}")
            readings.append(e.name)
        t.add(
            t.text(self.pick(SWITCH), who=alias),
            paths=paths,
            answer=f"'{alias}' may mean more than one company. Net income: {'; '.join(parts)}.",
            key_facts=[],
            facts=facts,
            depends_on=[1],
            follow_up="ambiguous_company",
            company=list(cids),
            clarify_with=readings,
            notes="Ask which company is meant, or answer for each one, naming it.",
        )
        return [c.cid, *cids]

    def clarify_year(self, t: _Turns) -> list[str]:
        """Two years asked, then "that year"."""
        c, fy = self.company(), self.pick(self.years)
        con = self.measure(c)
        name = self.m(c, con)
        f1, a1 = t.fact(c, con, fy - 1)
        f2, a2 = t.fact(c, con, fy)
        v1, p1 = t.figure(c, con, fy - 1)
        v2, p2 = t.figure(c, con, fy)
        g = self.g
        q = t.text(
            self.pick(TWO_YEARS), who=self.who(c), m=name, per1=g.fy_s(fy - 1), per2=g.fy_s(fy)
        )
        t.add(
            q,
            paths=[[a1, a2]],
            answer=f"{c.name} reported {name} of {v1} {p1} and {v2} {p2}.",
            key_facts=[(f"{name} {p1}: {v1}", a1), (f"{name} {p2}: {v2}", a2)],
            facts=[f1, f2],
            depends_on=[],
            follow_up="opener",
            company=[c.cid],
        )
        other = self.measure(c, exclude=[con])
        m2 = self.m(c, other)
        o1, b1 = t.fact(c, other, fy - 1)
        o2, b2 = t.fact(c, other, fy)
        w1, _ = t.figure(c, other, fy - 1)
        w2, _ = t.figure(c, other, fy)
        y1, y2 = period_phrase(c, fy - 1), period_phrase(c, fy)
        t.add(
            t.text(self.pick(THAT_YEAR), m=m2),
            paths=[[b1], [b2]],
            answer=f"Which year is meant, {y1} or {y2}? {c.name}'s {m2} was {w1} in {y1} and "
            f"{w2} in {y2}.",
            key_facts=[],
            facts=[o1, o2],
            depends_on=[1],
            follow_up="ambiguous_period",
            company=[c.cid],
            clarify_with=[y1, y2],
            notes="Ask which of the two years is meant, or answer for each, naming it.",
        )
        return [c.cid]

    def clarify_company(self, t: _Turns) -> list[str]:
        """Two companies asked, then "its"."""
        a, fy = self.company(), self.pick(self.years)
        b = self.company(kind=a.kind, exclude=[a.cid])
        con = self.measure(a)
        name = self.m(a, con)
        fa, xa = t.fact(a, con, fy)
        fb, xb = t.fact(b, con, fy)
        va, pa = t.figure(a, con, fy)
        vb, pb = t.figure(b, con, fy)
        q = t.text(self.pick(TWO_COMPANIES), a=self.who(a), b=self.who(b), m=name, fy=fy)
        t.add(
            q,
            paths=[[xa, xb]],
            answer=f"{a.name} reported {name} of {va} {pa}; {b.name} reported {vb} {pb}.",
            key_facts=[(f"{a.name} {name}: {va}", xa), (f"{b.name} {name}: {vb}", xb)],
            facts=[fa, fb],
            depends_on=[],
            follow_up="opener",
            company=[a.cid, b.cid],
        )
        other = self.measure(a, exclude=[con])
        m2 = self.m(a, other)
        paths, parts, facts = [], [], []
        for e in (a, b):
            fid, anchors = t.fact(e, other, fy)
            value, period = t.figure(e, other, fy)
            paths.append([anchors])
            facts.append(fid)
            parts.append(f"{e.name}: {value} {period}")
        t.add(
            t.text(self.pick(ITS), m=m2),
            paths=paths,
            answer=f"Which company is meant, {a.name} or {b.name}? {m2}: {'; '.join(parts)}.",
            key_facts=[],
            facts=facts,
            depends_on=[1],
            follow_up="ambiguous_company",
            company=[a.cid, b.cid],
            clarify_with=[a.name, b.name],
            notes="Ask which of the two companies is meant, or answer for each, naming it.",
        )
        return [a.cid, b.cid]


def _quota(n: int, kinds: dict[str, int]) -> list[str]:
    """`n` kinds in proportion to their weights (largest remainders, ties in table order)."""
    total = sum(kinds.values())
    exact = {k: n * w / total for k, w in kinds.items()}
    base = {k: int(v) for k, v in exact.items()}
    left = n - sum(base.values())
    order = sorted(kinds, key=lambda k: (-(exact[k] - base[k]), list(kinds).index(k)))
    for k in order[:left]:
        base[k] += 1
    return [k for k in kinds for _ in range(base[k])]


def _attempt(w: _Writer, kind: str) -> tuple[str, _Turns, list[str]] | None:
    """A conversation of `kind` not asked before (up to 50 draws), or None."""
    ask: Callable[[_Turns], list[str]] = getattr(w, kind)
    for _ in range(50):
        t = _Turns(w.g)
        try:
            cids = ask(t)
        except _Skip:
            continue
        key = " | ".join(turn["query"] for turn in t.turns)
        if key not in w.asked:
            w.asked.add(key)
            return kind, t, cids
    return None


def build_conversations(
    ledger: Ledger, docs: list[Doc], *, seed: int = 7, n: int = 40
) -> list[dict[str, Any]]:
    """`n` conversation lines (JSON dicts, ids ``conv-001``...), in the dataset's conversation
    format; deterministic in (`ledger`, `docs`, `seed`, `n`). A room too small for `n` distinct
    conversations gets as many as it has."""
    if n < 1:
        raise ValueError("n must be at least 1")
    if ledger.last_fy <= ledger.first_fy:
        raise ValueError("conversations need at least two fiscal years in the room")
    w = _Writer(ledger, docs, seed)
    kinds = dict(KINDS)
    if not w.g.ambiguous_alias:
        kinds.pop("clarify_alias")
    plan = _quota(n, kinds)
    w.rng.shuffle(plan)
    out: list[dict[str, Any]] = []
    fallback = [k for k in kinds if CATEGORIES[k] == "carried_context"]
    for wanted in plan:
        written = None
        # a kind this room cannot ask (too few companies of a sector) gives way to the others
        for kind in [wanted, *(k for k in fallback if k != wanted)]:
            written = _attempt(w, kind)
            if written is not None:
                break
        if written is None:
            break  # a small room has fewer distinct conversations than asked for
        kind, t, cids = written
        category = CATEGORIES[kind]
        out.append(
            {
                "id": f"conv-{len(out) + 1:03d}",
                "category": category,
                "turns": t.turns,
                "criteria": CRITERIA[category],
                "source": "synthetic",
                "label_tier": "gold",
                "metadata": {
                    "kind": kind,
                    "companies": list(dict.fromkeys(cids)),
                    "turns": t.meta,
                },
            }
        )
    return out


_CONVERSATION_ONLY = ("id", "turns", "criteria")


def turn_entries(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry dict per turn of a conversation line, as the dataset loader expands it (id
    ``"{id}#{n}"``; the conversation's fields are each turn's defaults; ``metadata`` joins the
    turn's own record from ``metadata.turns``), without the ``conversation`` reference: valid as
    an `assay.dataset.Entry` of this version, for the room's guards and tests."""
    base = {k: v for k, v in conversation.items() if k not in _CONVERSATION_ONLY}
    meta = dict(base.pop("metadata", {}) or {})
    per_turn = meta.pop("turns", [])
    out: list[dict[str, Any]] = []
    for n, turn in enumerate(conversation["turns"], start=1):
        e = base | {k: v for k, v in turn.items() if k != "depends_on"}
        e["id"] = f"{conversation['id']}#{n}"
        e["metadata"] = meta | (per_turn[n - 1] if n <= len(per_turn) else {})
        out.append(e)
    return out
