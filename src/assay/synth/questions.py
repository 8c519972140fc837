"""How question families become golden entries: `Family` rows, the `Question`s their answer
functions find, and the `GoldWriter` that words and writes them (the table itself is
`assay.synth.golden.FAMILIES`).

A `Family` names what it is asked about (`each`, a loop such as `years` or `companies`), its
answer function (`lookup`: one item -> zero or more `Question`s, each with its facts, evidence
and values) and its wording as templates: `phrasings` (one is picked per entry), `answer` and
`key_facts`. Templates are `str.format` strings over the question's `vars` and these placeholders:

- drawn afresh at each use, in phrasings only, from the seeded generator: `{who}` (ticker, name
  or alias of the company), `{fy_s}` (a spelling of fiscal year `fy`), `{q_s}` (of quarter `q` of
  `fy`), `{short_s}` (an analyst's shorthand for `concept`);
- derived: `{c}` (the `Company`: `{c.name}`, `{c.ticker}`, `{c.cfo}` ...), `{as_of}`, `{yy}`,
  `{prev_fy}`, `{prev_yy}`, `{fiscal}` / `{prev_fiscal}` / `{next_fiscal}` (how the filings name
  fiscal year `fy`, the one before, the one after), `{year_end}` (of `fy`), `{phrase}` (how prose
  names `concept`), and in key facts `{answer}`.

Key fact i is supported by piece i of the question's last evidence path. `write_entries` asks
company families company by company in table order, then room families (`scope="room"`) in table
order; consecutive rows with the same category, scope and loop are asked together, item by item
(a year's latest-quarter question, then its latest-year-end question). Every random draw (the
pick among several phrasings is one) comes from one generator in that order, so a seed gives the
same entries; a family added to the table moves the draws of whatever is asked after it, so a room
family appended at the end leaves every earlier entry as it was.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, NamedTuple, TypeVar

import numpy as np

from assay.dataset import Entry
from assay.synth.facts_ledger import CONCEPTS, Company, Fact, Ledger, Restatement
from assay.synth.filings import fmt_cell, fmt_prose, period_phrase
from assay.synth.layout import Doc
from assay.synth.xbrl import amendments

__all__ = [
    "ORDINAL",
    "SHORTHAND",
    "AliasYear",
    "Amended",
    "Anchors",
    "Family",
    "GoldWriter",
    "Placement",
    "Question",
    "Restated",
    "Year",
    "amended_years",
    "companies",
    "placements",
    "restatements",
    "shared_aliases",
    "write_entries",
    "years",
]

ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth"}

SHORTHAND: dict[str, list[str]] = {
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

Anchors = list[dict[str, Any]]
T = TypeVar("T")


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


@dataclass
class Question:
    """One question an answer function found: whom it is about, its facts, evidence and values.

    `paths` are evidence paths of pieces of anchors (`GoldWriter.anchors`); `vars` fill the
    family's templates; `variant` picks the wording when the family keys it by variant;
    `key_facts` replaces the family's key-fact templates (for a variable number of key facts);
    `extra` is added to the entry's metadata; `clarify_with` gives the readings of an ambiguous
    question (the entry's `clarify_with`).
    """

    c: Company
    facts: list[str]
    paths: list[list[Anchors]]
    vars: dict[str, Any] = field(default_factory=dict)
    as_of: dt.date | None = None
    variant: str = ""
    key_facts: list[tuple[str, Anchors]] | None = None
    extra: dict[str, Any] | None = None
    clarify_with: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Family(Generic[T]):
    """One kind of golden question: a row of `FAMILIES`.

    `template` (the entry's `metadata.template`, a template itself), `category`, the loop `each`
    (called with the writer and the companies in view: the one company whose turn it is, or all of
    them for `scope="room"`), the answer function `lookup` (one item -> zero or more questions),
    the wording (`phrasings`, `answer`: one template, or templates keyed by `Question.variant`;
    `key_facts`, `notes`, `false_premise`: the false assumption of a correct-premise question),
    the expected behaviour, and `kinds`, the sectors a company family asks.
    """

    template: str
    category: str
    each: Callable[[GoldWriter, Sequence[Company]], Iterable[T]]
    lookup: Callable[[GoldWriter, T], Iterable[Question]]
    phrasings: tuple[str, ...] | Mapping[str, tuple[str, ...]]
    answer: str | Mapping[str, str]
    key_facts: tuple[str, ...] = ()
    notes: str | None = None
    false_premise: str | None = None
    answerable: bool = True
    behavior: str | None = None
    kinds: tuple[str, ...] = ("tech", "bank")
    scope: Literal["company", "room"] = "company"

    def wording(self, variant: str) -> tuple[tuple[str, ...], str]:
        phr = self.phrasings if isinstance(self.phrasings, tuple) else self.phrasings[variant]
        ans = self.answer if isinstance(self.answer, str) else self.answer[variant]
        return phr, ans


_DRAWN = frozenset({"who", "fy_s", "q_s", "short_s"})


class _Words(dict[str, Any]):
    """The placeholders of one question: its vars, then derived ones (drawn ones if `draw`)."""

    def __init__(self, g: GoldWriter, q: Question, *, draw: bool):
        super().__init__(q.vars)
        self.g, self.q, self.draw = g, q, draw

    def __missing__(self, key: str) -> Any:
        g, c = self.g, self.q.c
        if key in _DRAWN:
            if not self.draw:
                raise KeyError(f"{{{key}}} is drawn at each use: only phrasings may use it")
            if key == "who":
                return g.who(c)
            if key == "fy_s":
                return g.fy_s(self["fy"])
            if key == "q_s":
                return g.q_s(self["fy"], self["q"])
            return g.pick(SHORTHAND[self["concept"]])
        derived: dict[str, Callable[[], Any]] = {
            "c": lambda: c,
            "as_of": lambda: self.q.as_of.isoformat() if self.q.as_of else None,
            "yy": lambda: self["fy"] % 100,
            "prev_fy": lambda: self["fy"] - 1,
            "prev_yy": lambda: (self["fy"] - 1) % 100,
            "fiscal": lambda: period_phrase(c, self["fy"]),
            "prev_fiscal": lambda: period_phrase(c, self["fy"] - 1),
            "next_fiscal": lambda: period_phrase(c, self["fy"] + 1),
            "year_end": lambda: c.calendar.year_end(self["fy"]).isoformat(),
            "phrase": lambda: CONCEPTS[self["concept"]].phrase,
        }
        if key not in derived:
            raise KeyError(f"unknown placeholder {{{key}}}")
        return derived[key]()


class GoldWriter:
    """What loops and answer functions are given: the ledger, where the filings state each fact
    (`placed`), the seeded generator and the helpers that find anchors and word values."""

    def __init__(self, ledger: Ledger, docs: list[Doc], seed: int):
        self.ledger = ledger
        self.docs = docs
        self.placed = placements(docs)
        self.rng = np.random.default_rng([seed, 5])
        self.entries: list[dict[str, Any]] = []
        shared = defaultdict(list)
        for c in ledger.companies:
            shared[c.aliases[0]].append(c.cid)
        self.ambiguous_alias = {a: cids for a, cids in shared.items() if len(cids) > 1}
        self.bad_alias = {cid for cids in self.ambiguous_alias.values() for cid in cids}

    @property
    def years(self) -> range:
        return range(self.ledger.first_fy, self.ledger.last_fy + 1)

    # ------------------------------------------------------------------ wording
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
            else f"the {ORDINAL[fq]} quarter of {period_phrase(c, fy)} (ended {end.isoformat()})"
        )

    # ------------------------------------------------------------------ evidence
    def shown(self, fid: str, p: Placement) -> float | int:
        return self.ledger.value_as_of(fid, p.accepted)

    def restated(self, *fids: str) -> bool:
        return any(f in self.ledger.restatements for f in fids)

    def first_report(self, fid: str) -> dt.date | None:
        ps = self.placed.get(fid, [])
        return ps[0].accepted if ps else None

    def anchors(
        self,
        fid: str,
        *,
        value: float | int | None = None,
        by: dt.date | None = None,
        need: tuple[str, ...] = (),
    ) -> Anchors:
        """Anchors stating `fid` (showing `value`, accepted by `by`, also stating `need`)."""
        L = self.ledger
        out: Anchors = []
        seen: set[tuple[str, int, str]] = set()
        want: float | int | None = value
        if want is None and fid in L.facts:
            want = L.current_value(fid)
        for p in self.placed.get(fid, []):
            if by is not None and p.accepted > by:
                continue
            r = L.restatements.get(fid)
            if p.role == "restated":
                if r is None or want not in (r.old, r.new):
                    continue
            elif fid in L.facts and self.shown(fid, p) != want:
                continue
            if any(n not in p.facts for n in need):
                continue
            if any(n in L.facts and self.shown(n, p) != L.current_value(n) for n in need):
                continue
            key = (p.doc_id, p.page, p.quote)
            if key not in seen:
                seen.add(key)
                out.append({"doc": p.doc_id, "page": p.page, "quote": p.quote})
        return out

    # ------------------------------------------------------------------ writing
    def ask(self, group: Sequence[Family[Any]], cs: Sequence[Company]) -> None:
        """Run a group's loop once and offer each item to each of its families in order."""
        rows = [f for f in group if f.scope == "room" or cs[0].kind in f.kinds]
        for item in group[0].each(self, cs):
            for fam in rows:
                for q in fam.lookup(self, item):
                    self.write(fam, q)

    def write(self, fam: Family[Any], q: Question) -> None:
        phrasings, answer_t = fam.wording(q.variant)
        drawn = _Words(self, q, draw=True)
        options = [p.format_map(drawn) for p in phrasings]
        query = options[0] if len(options) == 1 else self.pick(options)
        words = _Words(self, q, draw=False)
        answer = answer_t.format_map(words)
        words["answer"] = answer
        if q.key_facts is not None:
            key_facts = q.key_facts
        elif fam.key_facts:
            key_facts = [
                (t.format_map(words), piece)
                for t, piece in zip(fam.key_facts, q.paths[-1], strict=True)
            ]
        else:
            key_facts = []
        template = fam.template.format_map(words)
        if not fam.answerable and q.paths:
            # what an unanswerable question is worded from is not evidence that answers it
            raise ValueError(
                f"{template}: an unanswerable family's question carries evidence paths; put "
                "what it relates to in `extra` (e.g. related_fact_ids), not in paths"
            )
        for path in q.paths:
            for piece in path:
                if not piece:
                    raise AssertionError(f"empty evidence piece for {template} {q.facts}")
        e: dict[str, Any] = {
            "id": "",
            "query": query,
            "category": fam.category,
            "answerable": fam.answerable,
            "evidence_paths": q.paths,
            "source": "synthetic",
            "metadata": {
                "fact_ids": sorted(set(q.facts)),
                "template": template,
                "company": q.c.cid,
                **(q.extra or {}),
            },
        }
        if fam.behavior:
            e["expected_behavior"] = fam.behavior
        if q.as_of:
            e["as_of"] = q.as_of.isoformat()
        if answer:
            e["reference_answer"] = answer
        if fam.notes:
            e["acceptable_response_notes"] = fam.notes.format_map(words)
        if q.clarify_with:
            e["clarify_with"] = list(q.clarify_with)
        if fam.false_premise:
            e["false_premise"] = fam.false_premise.format_map(words)
        if key_facts:
            e["key_facts"] = [
                {"fact": f, "critical": True, "supporting": sup} for f, sup in key_facts
            ]
        self.entries.append(e)


# ---------------------------------------------------------------------------------- loops


class Year(NamedTuple):
    c: Company
    fy: int


class Restated(NamedTuple):
    """A restated fiscal-year figure, with the shorthand every question about it uses."""

    c: Company
    r: Restatement
    fact: Fact
    short: str


class Amended(NamedTuple):
    """A fiscal year whose 10-K was amended, and (doc id, what it amends) per amendment."""

    c: Company
    fy: int
    items: tuple[tuple[str, str], ...]


class AliasYear(NamedTuple):
    """A name several companies share, and a fiscal year."""

    alias: str
    cids: tuple[str, ...]
    fy: int


def companies(g: GoldWriter, cs: Sequence[Company]) -> Iterator[Company]:
    """Each company once."""
    yield from cs


def years(g: GoldWriter, cs: Sequence[Company]) -> Iterator[Year]:
    """Each fiscal year of the room, company by company."""
    for c in cs:
        for fy in g.years:
            yield Year(c, fy)


def restatements(g: GoldWriter, cs: Sequence[Company]) -> Iterator[Restated]:
    """Each restated fiscal-year figure (by fact id), drawing the shorthand its questions share."""
    for c in cs:
        mine = (r for r in g.ledger.restatements.values() if g.ledger.facts[r.fact_id].cid == c.cid)
        for r in sorted(mine, key=lambda r: r.fact_id):
            f = g.ledger.facts[r.fact_id]
            if f.fq is not None:
                continue
            yield Restated(c, r, f, g.pick(SHORTHAND[f.concept]))


def amended_years(g: GoldWriter, cs: Sequence[Company]) -> Iterator[Amended]:
    """Each fiscal year with a 10-K/A, with its amendments."""
    for c in cs:
        by_year: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for did, what in sorted(amendments(g.ledger, c.cid).items()):
            by_year[int(did.split("-")[1])].append((did, what))
        for fy, items in sorted(by_year.items()):
            yield Amended(c, fy, tuple(items))


def shared_aliases(g: GoldWriter, cs: Sequence[Company]) -> Iterator[AliasYear]:
    """Each name two or more companies of the room share, for each fiscal year (room scope)."""
    for alias, cids in sorted(g.ambiguous_alias.items()):
        for fy in g.years:
            yield AliasYear(alias, tuple(cids), fy)


def _groups(families: Sequence[Family[Any]]) -> list[list[Family[Any]]]:
    """Consecutive rows with the same category, scope and loop: asked together, item by item."""
    groups: list[list[Family[Any]]] = []
    for f in families:
        if f.scope == "room" and f.kinds != ("tech", "bank"):
            raise ValueError(f"{f.template}: kinds apply to company families only")
        last = groups[-1][0] if groups else None
        if last is not None and (last.category, last.scope, last.each) == (
            f.category,
            f.scope,
            f.each,
        ):
            groups[-1].append(f)
        else:
            groups.append([f])
    return groups


def write_entries(
    ledger: Ledger, docs: list[Doc], families: Sequence[Family[Any]], *, seed: int
) -> list[dict[str, Any]]:
    """Ask every family (see the module docstring for the order); entries as JSON dicts valid as
    `assay.dataset.schema.Entry`, ids `syn-0001`... in order."""
    g = GoldWriter(ledger, docs, seed)
    groups = _groups(families)
    for c in ledger.companies:
        for group in groups:
            if group[0].scope == "company":
                g.ask(group, [c])
    for group in groups:
        if group[0].scope == "room":
            g.ask(group, ledger.companies)
    out: list[dict[str, Any]] = []
    for i, e in enumerate(g.entries, start=1):
        e["id"] = f"syn-{i:04d}"
        out.append(Entry.model_validate(e).to_json_dict())
    return out
