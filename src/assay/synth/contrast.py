"""A contrast set for the answer checks, written from the synthetic room's facts.

For entries of the room whose truth is known by construction, `contrast_cases(room)` writes
answers that state the reference in other words (paraphrases: the checks must pass them) and
answers that contradict it (the checks must fail them as contradictions):

paraphrase
    the reference answer with its words changed for synonyms and inflections analysts use
    ("reported" -> "posted", "revenue" -> "sales", "resigned" -> "stepped down", "$2,534 million"
    -> "$2.534 billion"), its clauses reordered;
negation
    the fact's main verb negated ("did not report", "could not expose", "is not focused on");
antonym
    a word of the fact replaced by its opposite ("rose" -> "fell", "net income" -> "net loss",
    "decline" -> "increase", "resigned" -> "was appointed", "audited" -> "unaudited");
entity
    another company's, officer's or segment's name where the fact names one;
period
    another fiscal year or quarter where the fact names one (or a comparison's years swapped);
unit
    the fact's figure at another scale ("$2,534 billion") or in another unit (basis points for a
    percent);
figure
    another figure of the same line item where the fact states one (the restated value for the
    original).

`score_contrast(cases)` runs the deterministic checks (`assay.judge.check_entry`) on every
case: a paraphrase is classified correctly when `answer_correct` and `contradiction_free` both
pass; a contradiction when `contradiction_free` fails and `answer_correct` does not pass.

The paraphrases are the kinds of rewording the checks' lemmas and synonym table are meant to
read (`assay.judge.meaning`, whose limits are documented there): the set measures that the
checks read those and are not fooled by negations and swaps, not that they read every
paraphrase.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.dataset import Entry
from assay.report import ReportMixin, Tabular
from assay.synth.facts_ledger import Company
from assay.synth.generate import Room

__all__ = ["KINDS", "ContrastCase", "ContrastReport", "contrast_cases", "score_contrast"]

Kind = Literal["paraphrase", "negation", "antonym", "entity", "period", "unit", "figure"]
KINDS: tuple[str, ...] = ("paraphrase", "negation", "antonym", "entity", "period", "unit", "figure")


@dataclass(frozen=True, slots=True)
class ContrastCase:
    """One answer to a room entry and what the checks should say about it."""

    entry: Entry
    answer: str
    kind: str
    template: str

    @property
    def expect(self) -> str:
        return "correct" if self.kind == "paraphrase" else "contradiction"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.entry.id,
            "template": self.template,
            "kind": self.kind,
            "expect": self.expect,
            "query": self.entry.query,
            "reference": self.entry.reference_answer,
            "answer": self.answer,
        }


# ----------------------------------------------------------------------------- rewordings

_SYNONYMS: tuple[tuple[str, str], ...] = (
    (r"\breported\b", "posted"),
    (r"\btotal revenues\b", "overall sales"),
    (r"\brevenue\b", "sales"),
    (r"\bnet income\b", "net earnings"),
    (r"\bincome from operations\b", "operating income"),
    (r"\bresigned\b", "stepped down"),
    (r"\bChief Financial Officer\b", "chief financial officer"),
    (r"\bappointed\b", "named"),
    (r"\bthe Board\b", "the board of directors"),
    (r"\bdepends on\b", "relies on"),
    (r"\brely on\b", "depend on"),
    (r"\bsignificant portion\b", "substantial share"),
    (r"\blarge share\b", "substantial portion"),
    (r"\brapid decline\b", "sharp drop"),
    (r"\bcould require\b", "might force"),
    (r"\bhigher-cost\b", "more expensive"),
    (r"\bharm\b", "damage"),
    (r"\bexceeds\b", "is above"),
    (r"\bis concentrated in\b", "is focused on"),
    (r"\blargest\b", "biggest"),
    (r"\bmaterial share\b", "significant portion"),
    (r"\bcould limit\b", "might restrict"),
    (r"\bhave reduced\b", "have lowered"),
    (r"\bexposes us to\b", "subjects us to"),
    (r"\bis focused on\b", "concentrates on"),
    (r"\boperating segments\b", "business divisions"),
    (r"\bcorrect an error\b", "correct a misstatement"),
    (r"\brestated\b", "revised"),
    (r"\boriginally\b", "initially"),
    (r"\bmost recent\b", "latest"),
    (r"\btotal compensation\b", "total pay"),
    (r"\bpreviously reported\b", "first reported"),
)

_NEGATIONS: tuple[tuple[str, str], ...] = (
    (r"\breported\b", "did not report"),
    (r"\bcould (\w+)", r"could not \1"),
    (r"\bdepends on\b", "does not depend on"),
    (r"\bexposes\b", "does not expose"),
    (r"\bexceeds\b", "does not exceed"),
    (r"\bis concentrated\b", "is not concentrated"),
    (r"\bhave reduced\b", "have not reduced"),
    (r"\baccounted for\b", "did not account for"),
    (r"\bwe rely\b", "we do not rely"),
    (r"\bis focused on\b", "is not focused on"),
    (r"\bresigned\b", "did not resign"),
    (r"\bhas two operating segments\b", "does not have the operating segments"),
    (r"\brestated\b", "did not restate"),
    (r"\bwas\b", "was not"),
)

_ANTONYMS: tuple[tuple[str, str], ...] = (
    (r"\bnet income\b", "net loss"),
    (r"\bincome from operations\b", "loss from operations"),
    (r"\brose\b", "fell"),
    (r"\bfell\b", "rose"),
    (r"\brapid decline\b", "rapid increase"),
    (r"\brising interest rates\b", "falling interest rates"),
    (r"\bhave reduced\b", "have increased"),
    (r"\bhigher-cost\b", "lower-cost"),
    (r"\bexceeds\b", "is below"),
    (r"\bharm our reputation\b", "help our reputation"),
    (r"\bresigned\b", "was appointed"),
    (r"\bper the audited\b", "per the unaudited"),
    (r"\ba reserve release\b", "a reserve build"),
    (r"\ba reserve build\b", "a reserve release"),
)


def _first(text: str, table: Sequence[tuple[str, str]]) -> str | None:
    """`text` with the first rule of `table` that applies, applied once."""
    for pattern, repl in table:
        new, n = re.subn(pattern, repl, text, count=1)
        if n:
            return new
    return None


def _all(text: str, table: Sequence[tuple[str, str]]) -> str:
    for pattern, repl in table:
        text = re.sub(pattern, repl, text)
    return text


def _billions(text: str) -> str:
    """ "$2,534 million" -> "$2.534 billion" (the same figure written at another scale)."""

    def one(m: re.Match[str]) -> str:
        n = int(m.group(1).replace(",", ""))
        return f"${n / 1000:g} billion" if n >= 1000 else m.group(0)

    return re.sub(r"\$(\d{1,3}(?:,\d{3})+) million\b", one, text)


def _swap_years(text: str, year: int, other: int) -> str:
    return re.sub(rf"\b{year}\b", str(other), text)


def _scale_up(text: str) -> str | None:
    """The first money figure at 1,000 times its scale (a unit swap); the figure's restatement
    in brackets ("$381,668 thousand ($381.7 million)") is dropped so the swap stands alone."""
    text = re.sub(r" \(\$[\d,.]+ million\)", "", text, count=1)
    for pattern, repl in ((r" thousand\b", " million"), (r" million\b", " billion")):
        new, n = re.subn(pattern, repl, text, count=1)
        if n:
            return new
    return None


_ORDINALS = ("first", "second", "third", "fourth")


def _within_tolerance(reference: str, other: str) -> bool:
    """The two figures agree under the checks' rounding rule ("$0.80" reads as 0.8, so "$0.82"
    agrees with it): such a swap is not a contradiction the checks can see."""
    from assay.judge.numbers import compare, parse_quantity

    a, b = parse_quantity(reference), parse_quantity(other)
    return a is not None and b is not None and compare(a, b).ok


# ----------------------------------------------------------------------------- per family


@dataclass
class _Writer:
    room: Room
    companies: dict[str, Company] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.companies = {c.cid: c for c in self.room.ledger.companies}

    def other(self, c: Company, *, kind: str | None = None) -> Company:
        """The next company of the room (of the same kind when asked), deterministically."""
        pool = [o for o in self.room.ledger.companies if o.cid != c.cid]
        pool = [o for o in pool if kind is None or o.kind == kind] or pool
        return sorted(pool, key=lambda o: o.cid)[0]

    def cases(self, e: Entry) -> Iterable[tuple[str, str | None]]:
        ref = e.reference_answer or ""
        template = str(e.metadata.get("template", ""))
        c = self.companies.get(str(e.metadata.get("company", "")))
        if c is None or not ref:
            return []
        family = template.split(":")[0]
        years = sorted({int(y) for y in re.findall(r"\b(20\d\d)\b", ref)})
        year = years[-1] if years else None
        out: list[tuple[str, str | None]] = []
        if family == "numeric":
            out.append(("paraphrase", _billions(_all(ref, _SYNONYMS[:5]))))
            out.append(("negation", _first(ref, _NEGATIONS[:1])))
            out.append(("antonym", _first(ref, _ANTONYMS[:2])))
            if year is not None:
                out.append(("period", _swap_years(ref, year, year - 1)))
            out.append(("unit", _scale_up(ref)))
            if ":seg_rev:" in template and len(c.segments) == 2:
                a, b = c.segments
                seg = a if a in ref else b
                out.append(("entity", ref.replace(seg, b if seg == a else a)))
        elif template == "narrative:risk":
            out.append(
                ("paraphrase", f"In its 10-K, {c.name} notes that {_all(c.risk, _SYNONYMS)}.")
            )
            out.append(("negation", _first(ref, _NEGATIONS[1:10])))
            out.append(("antonym", _first(ref, _ANTONYMS[4:10])))
        elif template == "narrative:cfo":
            when = re.search(r"on (\d{4}-\d\d-\d\d)", ref)
            day = when.group(1) if when else ""
            out.append(
                (
                    "paraphrase",
                    f"On {day}, {c.cfo} stepped down as chief financial officer of {c.name}, and "
                    f"the board of directors named {c.new_cfo} as the new CFO.",
                )
            )
            out.append(("negation", _first(ref, [(r"\bresigned\b", "did not resign")])))
            out.append(
                (
                    "entity",
                    ref.replace(c.cfo, "\0").replace(c.new_cfo, c.cfo).replace("\0", c.new_cfo),
                )
            )
            out.append(("antonym", _first(ref, [(r"\bresigned\b", "was appointed")])))
        elif template == "narrative:segments" and len(c.segments) == 2:
            a, b = c.segments
            o = self.other(c, kind="tech")
            out.append(("paraphrase", f"{c.name} reports two business divisions, {b} and {a}."))
            out.append(("negation", f"{c.name} does not report {a} and {b} as segments."))
            if len(o.segments) == 2:
                out.append(("entity", ref.replace(a, o.segments[0]).replace(b, o.segments[1])))
        elif template == "narrative:focus":
            out.append(("paraphrase", f"{c.name} concentrates its loans in {c.product}."))
            out.append(("negation", _first(ref, [(r"\bis focused on\b", "is not focused on")])))
        elif family == "identifier" and template != "identifier:ticker":
            o = self.other(c)
            short = c.name.split(",")[0]
            out.append(("entity", ref.replace(c.name, o.name).replace(short, o.name)))
        elif template.startswith("temporal:latest_quarter"):
            m = re.search(r"the (first|second|third|fourth) quarter", ref)
            if m:
                q = _ORDINALS.index(m.group(1))
                swapped = _ORDINALS[(q + 1) % 4]
                out.append(
                    (
                        "paraphrase",
                        _billions(ref.replace("the most recent quarter", "the latest quarter")
                                  .replace(f"the {m.group(1)} quarter", f"Q{q + 1}")),
                    )
                )  # fmt: skip
                period = re.sub(r" \(ended [^)]*\)", "", ref)
                out.append(("period", period.replace(f"the {m.group(1)} quarter",
                                                     f"the {swapped} quarter")))  # fmt: skip
        elif template.startswith("temporal:latest_fye") and year is not None:
            fye = re.search(r"was (\d{4})-(\d\d-\d\d);", ref)
            if fye:
                y = int(fye.group(1))
                out.append(("period", ref.replace(f"was {y}-", f"was {y - 1}-")))
        elif template.startswith("comparison:") and template != "comparison:reserve_build":
            m = re.search(r"in (fiscal )?(\d{4}) versus (.+?) in (fiscal )?(\d{4})", ref)
            if m:
                new_y, old_y = m.group(2), m.group(5)
                swapped = ref.replace(f" in {m.group(1) or ''}{new_y} versus", " in \0 versus")
                swapped = swapped.replace(
                    f"in {m.group(4) or ''}{old_y},", f"in {m.group(4) or ''}{new_y},"
                )
                swapped = swapped.replace("\0", f"{m.group(1) or ''}{old_y}")
                out.append(("period", swapped))
                out.append(("unit", _scale_up(ref)))
                out.append(
                    ("paraphrase", _billions(ref.replace(" versus ", ", compared with ")
                                             .replace(" was ", " came to ")))
                )  # fmt: skip
            else:
                out.append(("antonym", _first(ref, _ANTONYMS[2:4])))
                out.append(("unit", re.sub(r"(\d\.\d+)%", r"\1 basis points", ref, count=1)))
                out.append(
                    (
                        "paraphrase",
                        ref.replace(" rose ", " increased ").replace(" fell ", " declined "),
                    )
                )
        elif template == "comparison:reserve_build":
            out.append(("antonym", _first(ref, _ANTONYMS[12:14])))
        elif template.startswith("restatement:restated"):
            out.append(("paraphrase", _all(ref, [(r"\brestated\b", "revised"),
                                                   (r"previously reported", "first reported")])))  # fmt: skip
            out.append(("negation", _first(ref, [(r"\brestated\b", "has not restated")])))
            money = r"\$[\d,.]+(?: thousand| million)?(?: \(\$[\d,.]+ million\))?"
            m = re.search(rf"to ({money}) \(previously reported ({money})\)", ref)
            if m and not _within_tolerance(m.group(1), m.group(2)):
                out.append(("figure", ref.replace(m.group(0), f"to {m.group(2)}")))
        elif template.startswith("restatement:original"):
            out.append(
                ("paraphrase", _all(ref, [(r"\boriginally reported\b", "initially posted")]))
            )
            if year is not None:
                out.append(("period", _swap_years(ref, year, year - 1)))
        elif template == "amendment:part3:ceo_pay":
            out.append(("paraphrase", _all(ref, [(r"\btotal compensation\b", "total pay")])))
            out.append(("unit", re.sub(r"\$([\d,]+),", r"$\1 thousand,", ref, count=1)))
            if year is not None:
                out.append(("period", _swap_years(ref, year, year - 1)))
        elif template == "amendment:what_changed":
            out.append(("paraphrase", _all(ref, [(r"\brestated\b", "revised"),
                                                   (r"\ban error\b", "a misstatement")])))  # fmt: skip
            out.append(("negation", _first(ref, [(r": restated\b", ": did not restate")])))
        elif template == "conflict:net_income":
            out.append(("antonym", _first(ref, _ANTONYMS[11:12])))
        return out


def contrast_cases(
    room: Room, *, per_kind: int | None = None, templates: Iterable[str] | None = None
) -> list[ContrastCase]:
    """Paraphrases, negations and swaps of the room's entries (see the module docs).

    `per_kind` keeps at most that many cases of each (template family, kind), the first ones in
    entry order, so one family does not swamp the set; `templates` limits the families by
    prefix. Every case's answer differs from the reference answer.
    """
    writer = _Writer(room)
    wanted = tuple(templates) if templates is not None else None
    seen: Counter[tuple[str, str]] = Counter()
    out: list[ContrastCase] = []
    for raw in room.golden:
        e = Entry.model_validate(raw)
        template = str(e.metadata.get("template", ""))
        if wanted is not None and not template.startswith(wanted):
            continue
        family = ":".join(template.split(":")[:2])
        for kind, answer in writer.cases(e):
            if not answer or answer == e.reference_answer:
                continue
            if per_kind is not None and seen[(family, kind)] >= per_kind:
                continue
            seen[(family, kind)] += 1
            out.append(ContrastCase(e, answer, kind, template))
    return out


# ----------------------------------------------------------------------------- scoring


@dataclass
class ContrastReport(ReportMixin):
    """How the checks classify a contrast set: overall, per kind, and every miss."""

    rows: list[dict[str, Any]]

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def correct(self) -> int:
        return sum(1 for r in self.rows if r["ok"])

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else float("nan")

    def by_kind(self) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for r in self.rows:
            ok, n = out.get(r["kind"], (0, 0))
            out[r["kind"]] = (ok + bool(r["ok"]), n + 1)
        return dict(sorted(out.items(), key=lambda kv: KINDS.index(kv[0])))

    @property
    def misses(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if not r["ok"]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "correct": self.correct,
            "accuracy": self.accuracy,
            "by_kind": {k: {"correct": ok, "n": n} for k, (ok, n) in self.by_kind().items()},
            "misses": self.misses,
        }

    def tabular(self) -> Tabular:
        rows = [[k, str(n), str(ok), f"{ok / n:.3f}"] for k, (ok, n) in self.by_kind().items()]
        rows.append(["overall", str(self.n), str(self.correct), f"{self.accuracy:.3f}"])
        footer = [
            f"missed: {r['kind']} {r['id']} ({r['template']}): {r['answer']}" for r in self.misses
        ]
        return Tabular(
            title="Answer checks on the contrast set (paraphrases pass, contradictions fail)",
            header=["kind", "n", "classified correctly", "share"],
            rows=rows,
            footer=footer or ["no case misclassified"],
        )


def score_contrast(
    cases: Sequence[ContrastCase],
    *,
    check: Callable[..., Any] | None = None,
) -> ContrastReport:
    """Run the deterministic checks on every case and say which are classified correctly."""
    if check is None:
        from assay.judge.checking import check_entry

        check = check_entry
    rows: list[dict[str, Any]] = []
    for case in cases:
        res = check(case.entry, case.answer, checks="contradiction_free,answer_correct")
        free = res.values.get("contradiction_free")
        correct = res.values.get("answer_correct")
        if case.expect == "correct":
            ok = free is True and correct is True
        else:
            ok = free is False and correct is not True
        rows.append(
            {
                **case.to_dict(),
                "contradiction_free": free,
                "answer_correct": correct,
                "ok": ok,
                "notes": list(res.notes),
            }
        )
    return ContrastReport(rows)
