"""What every answer check reads about one entry, computed once per entry and only when asked.

A `CheckContext` holds the entry, the answer, its citations and the chunk texts; everything
derived from them (the refusal verdict, the cited chunks, the figures read from the answer and
from the cited chunks, the numeric verdict, key-fact recall, the years asked and stated) is a
lazily computed attribute, so ten checks that all need the answer's figures read them once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from assay._tokens import HOLD_THRESHOLD, aligned_containment
from assay.dataset import Anchor, Entry, ExpectedBehavior
from assay.judge.llm import judge_input
from assay.judge.meaning import FactReading, contradicts, read_fact, stated_answer, yes_no
from assay.judge.numbers import Kind, Quantity, apply_hint, extract_with_units
from assay.judge.numeric import (
    NumericVerdict,
    check_numeric,
    figure_in_spans,
    read_figures,
    reference_figures,
    stated_years,
)
from assay.judge.refusal import RefusalResult, detect_refusal, split_sentences
from assay.judge.registry import Outcome, get_check
from assay.judge.semantic import opinion

if TYPE_CHECKING:
    from assay.corpus import ChunkTable
    from assay.dataset import Dataset
    from assay.judge.llm import BinaryVerdict, JudgeInput
    from assay.judge.registry import Check
    from assay.runs.model import RunRow

__all__ = ["AskingJudge", "CheckContext"]


class AskingJudge(Protocol):
    """What a check may ask a model judge (`assay.judge.llm.LLMJudge` is one): one named yes/no
    question about one answer."""

    def ask(self, name: str, item: JudgeInput) -> BinaryVerdict: ...


class CheckContext:
    """One entry and its answer, as the checks see them.

    `chunk_text` maps chunk ids to text (None when no chunk table was given: checks that need
    cited text abstain); `evidence_text` is the entry's gold evidence text where known (it lets a
    wrong figure be named as another period's). `row` is the run row the answer came from (None
    when the checks run on a bare answer): a check can read `row.retrieved`, `row.citations`,
    `row.extra` (any extra field the system wrote) and `row.answer`. `dataset` is the dataset
    the entry belongs to, when known (a check can find files named relative to it). `chunks` is
    the chunk table itself when given (each chunk's access label, for the policy checks).
    `judge` is a model judge the checks may ask what no rule decides (`judged`); None: those
    checks abstain. `run` (kept as `full_run`) is the whole run (`assay.runs.Run`) when known: the conversation
    checks read the answers to a turn's earlier turns from it (`turn_answer`).
    """

    def __init__(
        self,
        entry: Entry,
        answer: str | None,
        *,
        citations: Sequence[str] | None = None,
        chunk_text: Mapping[str, str] | None = None,
        evidence_text: Iterable[str] = (),
        row: RunRow | None = None,
        dataset: Dataset | None = None,
        chunks: ChunkTable | None = None,
        judge: AskingJudge | None = None,
        run: Any = None,
    ) -> None:
        self.entry = entry
        self.full_run = run
        self.judge = judge
        self.row = row
        self.chunks = chunks
        self.dataset = dataset
        self.answer = answer
        self.citations: list[str] = list(citations or [])
        self.chunk_text = chunk_text
        self.evidence_text: list[str] = list(evidence_text)
        self._results: dict[str, Outcome] = {}
        self._running: set[str] = set()

    # ------------------------------------------------------------------ other checks

    def result(self, name: str) -> bool | float | int | None:
        """The value of the registered check `name` on this entry (computed once): a bool for a
        binary check, a float in [0, 1] for a graded one, an int for a count, None (abstained)."""
        return self.outcome(name).value

    def outcome(self, name: str) -> Outcome:
        """The full outcome (value and notes) of the registered check `name` (computed once)."""
        if name not in self._results:
            self._results[name] = self.run(get_check(name))
        return self._results[name]

    def run(self, c: Check[CheckContext]) -> Outcome:
        if c.name in self._results:
            return self._results[c.name]
        if c.name in self._running:
            raise RuntimeError(f"answer check {c.name!r} depends on itself")
        self._running.add(c.name)
        try:
            out = c(self)
        finally:
            self._running.discard(c.name)
        self._results[c.name] = out
        return out

    def turn_answer(self, entry_id: str) -> str | None:
        """The run's answer to another entry (an earlier turn of this one's conversation);
        None without a run, a row or an answer."""
        run = self.full_run
        i = None if run is None else run.index.get(entry_id)
        if i is None:
            return None
        answer: str | None = run.details[i].get("answer")  # no RunRow built: only its answer
        return answer

    def judged(self, question: str) -> BinaryVerdict | None:
        """The judge's verdict on its question `question` about this answer (None without a
        judge or an answer). It reads the cited chunks, else the top five retrieved."""
        if self.judge is None or self.answer is None:
            return None
        context = self.cited
        if not context and self.row is not None and self.chunk_text is not None:
            top = [h.chunk_id for h in (self.row.retrieved or [])[:5]]
            context = [self.chunk_text[c] for c in top if c in self.chunk_text]
        return self.judge.ask(question, judge_input(self.entry, self.answer, context))

    # ------------------------------------------------------------------ the answer

    @cached_property
    def refusal(self) -> RefusalResult:
        return detect_refusal(self.answer)

    @property
    def refused(self) -> bool:
        return self.refusal.refused

    @cached_property
    def answer_figures(self) -> list[Quantity]:
        """Every figure the answer states (years, dates and identifiers are not figures); a bare
        figure the cited chunks state with a unit carries that unit (see `read_answer`)."""
        return self.read_answer(self.answer or "")

    def read_answer(self, text: str) -> list[Quantity]:
        """The figures of (part of) the answer. A figure without a scale word ("948,627") that a
        cited chunk states with one -- in words, or under a unit line "(in thousands)" -- is read
        both as written and at that scale (a reference may give the figure either way: "FY2022:
        948,627" or "$948.6 million"); when the cited chunks disagree on its scale it stays bare."""
        out: list[Quantity] = []
        for q in read_figures(text):
            out.append(q)
            scaled = self._cited_unit(q)
            if scaled is not q:
                out.append(scaled)
        return out

    def _cited_unit(self, q: Quantity) -> Quantity:
        if (
            q.scale_stated
            or q.kind not in (Kind.number, Kind.currency)
            or q.text.lower().rstrip(")").endswith(("x", "times"))
        ):
            return q
        scales = {s.scale for s in self._scaled_cited if _same_digits(s, q)}
        if len(scales) != 1:
            return q
        scale = scales.pop()
        return q if scale == 1.0 else apply_hint(q, kind=None, scale=scale)

    @cached_property
    def _scaled_cited(self) -> list[Quantity]:
        return [
            s
            for s in self.cited_figures
            if s.scale_stated and s.kind in (Kind.number, Kind.currency)
        ]

    @cached_property
    def conclusion(self) -> str:
        """The answer's last sentence that names a year ("" when none does)."""
        for sent in reversed(split_sentences(self.answer or "")):
            if stated_years(sent):
                return sent
        return ""

    # ------------------------------------------------------------------ citations and evidence

    @cached_property
    def cited(self) -> list[str]:
        """Texts of the cited chunks the chunk table knows."""
        if self.chunk_text is None:
            return []
        return [self.chunk_text[c] for c in self.citations if c in self.chunk_text]

    @cached_property
    def cited_figures(self) -> list[Quantity]:
        """Every figure stated in the cited chunks; a table's unit line ("(in thousands)") sets
        the scale of the bare figures below it (`assay.judge.numbers.extract_with_units`)."""
        return [q for t in self.cited for q in extract_with_units(t) if not q.is_year]

    @cached_property
    def evidence(self) -> list[str]:
        """Gold evidence text then cited text: where another period's figure can be recognised."""
        return [*self.evidence_text, *self.cited]

    # ------------------------------------------------------------------ the entry

    @cached_property
    def ledger(self) -> Mapping[str, Any] | None:
        led = self.entry.metadata.get("ledger")
        return led if isinstance(led, dict) else None

    @cached_property
    def period(self) -> str | None:
        p = self.entry.metadata.get("fiscal_year") or self.entry.metadata.get("period")
        return None if p is None else str(p)

    @cached_property
    def critical_facts(self) -> list[str]:
        return [kf.fact for kf in self.entry.key_facts if kf.critical]

    @cached_property
    def behavior(self) -> ExpectedBehavior:
        return self.entry.behavior()

    @cached_property
    def wanted_years(self) -> set[int]:
        """The fiscal years the entry asks about: its period, else the years its query names."""
        want: set[int] = set()
        if self.period is not None:
            want = stated_years(f"FY{self.period}") or stated_years(self.period)
        return want or stated_years(self.entry.query)

    # ------------------------------------------------------------------ shared verdicts

    @cached_property
    def numeric(self) -> NumericVerdict:
        """Does the answer state the reference figure(s)? (key facts first, else the reference)"""
        critical = self.critical_facts
        reference: str | list[str] | None = critical if critical else self.entry.reference_answer
        if reference is None or (isinstance(reference, list) and not reference):
            return NumericVerdict("abstain", "no_reference")
        return check_numeric(
            reference,
            self.answer,
            question=self.entry.query,
            evidence=self.evidence,
            ledger=self.ledger,
            period=self.period,
            read=self.read_answer,
            scale_source=self.entry.reference_answer if critical else None,
        )

    @cached_property
    def key_fact_recall(self) -> float | None:
        """Share of the critical key facts the answer states (None without key facts): present
        by meaning, not contradicted (`assay.judge.meaning.read_fact`)."""
        critical = self.critical_facts
        if not critical:
            return None
        if self.answer is None or self.refused:
            return 0.0
        return sum(r.present for r in self.fact_readings) / len(critical)

    @cached_property
    def fact_readings(self) -> list[FactReading]:
        """How the answer relates to each critical key fact: present, absent or contradicted
        (negated, an antonym, another period, entity or unit; `assay.judge.meaning`)."""
        if self.answer is None or self.refused:
            return []
        critical = self.critical_facts
        ref = self.entry.reference_answer
        context = [self.entry.query, *([ref] if ref else [])]
        out: list[FactReading] = []
        for i, fact in enumerate(critical):
            figs = reference_figures(fact, question=self.entry.query, scale_source=ref)
            reading = read_fact(
                fact,
                self.answer,
                context=context,
                others=[f for j, f in enumerate(critical) if j != i],
                figures=self.answer_figures,
                fact_figures=figs,
                years=self.wanted_years,
            )
            if reading.status == "absent" and not figs:
                # beyond the synonym table: the encoder's opinion, polarity read by the rules
                said = opinion().supports(fact, self.answer)
                if said is not None:
                    reading = FactReading(
                        "present",
                        "semantic",
                        f"said by meaning (similarity {said.score:.2f}): {said.sentence}",
                        reading.coverage,
                        said.sentence,
                    )
            out.append(reading)
        return out

    @cached_property
    def reference_contradiction(self) -> FactReading | None:
        """A sentence of the answer stating a sentence of the reference answer with the opposite
        polarity, or the opposite yes/no (`assay.judge.meaning.contradicts`)."""
        ref = self.entry.reference_answer
        if not ref or not self.answer or self.refused:
            return None
        return contradicts(ref, self.answer)

    @cached_property
    def yes_no(self) -> tuple[int, int | None] | None:
        """The reference answer's yes (+1) or no (-1) and the answer's (None: it opens with
        neither); None when the reference answers no yes/no question or nothing was answered."""
        ref = self.entry.reference_answer
        said = yes_no(ref) if ref else None
        if ref is None or said is None or not self.answer or self.refused:
            return None
        told = yes_no(self.answer)
        if told is None:
            # an answer that opens with neither may still state the reference's statement
            # ("Based on the 10-K, Boeing's business is subject to cyclicality")
            reading = stated_answer(ref, self.answer)
            told = None if reading is None else said * reading
        if told is None:
            # the statement the question asks about ("Is Target capital-intensive?"), read by
            # the rules, else by the semantic opinion (a paraphrase beyond the synonym table)
            from assay.judge.polarity import statement_polarity

            told = statement_polarity(self.entry.query, self.answer)
        return said, told

    # ------------------------------------------------------------------ citations, conflicts, cost

    @cached_property
    def _gold_chunks(self) -> set[str]:
        return set(self.entry.chunk_ids())

    @cached_property
    def _gold_anchors(self) -> list[Anchor]:
        return self.entry.anchors()

    def holds_evidence(self, chunk_id: str) -> bool:
        """The cited chunk holds the entry's evidence: a gold chunk id, a chunk holding a gold
        anchor's quote (the alignment rule of `assay.gold.align`: 80% of its tokens, whitespace
        ignored where the tokens fall short, in a chunk
        of the anchor's document when the chunk id names one), or, for page-level gold, a chunk
        of the gold page ("doc/page/n" ids). Home and mention anchors both hold evidence."""
        if chunk_id in self._gold_chunks:
            return True
        text = (self.chunk_text or {}).get(chunk_id)
        for a in self._gold_anchors:
            doc_known = "/" in chunk_id
            if doc_known and not chunk_id.startswith(a.doc + "/"):
                continue
            if a.page is not None and chunk_id.startswith(f"{a.doc}/{a.page}/"):
                return True
            if text is not None and aligned_containment(a.quote, text)[0] >= HOLD_THRESHOLD:
                return True
        return False

    def conflict_outcome(self, conf: Mapping[str, Any]) -> Outcome:
        """`conflict_handling` on one planted conflict (see that check)."""
        ref = self.entry.reference_answer
        top = reference_figures(str(conf.get("value", "")), scale_source=ref)
        sup = conf.get("superseded") or {}
        low = reference_figures(str(sup.get("value", "")), scale_source=ref)
        figs = self.answer_figures
        # the conflict's figures are written as the documents print them ("283" in a table in
        # millions): a bare one may carry the scale the answer states
        states_top = bool(top) and any(figure_in_spans(a, top[:1]) for a in figs)
        states_low = bool(low) and any(figure_in_spans(a, low[:1]) for a in figs)
        auth_doc = str((conf.get("authority") or {}).get("doc", ""))
        low_docs = {str(sup.get("doc", "")), *map(str, sup.get("also_in") or [])} - {""}
        cited_docs = {c.split("/")[0].split("#")[0] for c in self.citations}
        if self.citations and cited_docs & low_docs and auth_doc not in cited_docs:
            return Outcome(
                False,
                (f"cites only the superseded tier ({', '.join(sorted(cited_docs & low_docs))})",),
            )
        if states_top:
            return Outcome(True)
        if states_low:
            return Outcome(
                False,
                (f"states the superseded figure {sup.get('value')} (tier {sup.get('tier')})",),
            )
        return Outcome(False, (f"does not state the authority's figure {conf.get('value')}",))

    @cached_property
    def cost(self) -> dict[str, Any] | None:
        """What producing the answer cost, from the run row (`extra.cost`: tokens, usd)."""
        if self.row is None:
            return None
        cost = self.row.extra.get("cost")
        return cost if isinstance(cost, dict) else None


def _same_digits(stated: Quantity, bare: Quantity) -> bool:
    """The two figures are written with the same digits (one with a scale, one without)."""
    if stated.written_decimals != bare.written_decimals:
        return False
    a = abs(stated.value) / stated.scale
    b = abs(bare.value)
    return abs(a - b) <= 1e-9 * max(1.0, b)
