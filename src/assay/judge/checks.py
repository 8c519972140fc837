"""Deterministic answer checks: binary per entry, decided without a model.

Every check returns True (pass), False (fail) or None (the check does not apply to this entry and
abstains; abstentions are counted, never scored as passes or fails).

numeric_correct
    The figure the answer concludes with agrees with the reference figure (see
    `assay.judge.numbers` for the rounding tolerance). The reference figures come from the key
    facts when the entry has them, else from `reference_answer`. With one reference figure, the
    answer's *conclusion* is read: the figures in its last sentence that states a figure (working
    shown before it is not the answer). With several reference figures, each must appear somewhere
    in the answer. A refusal fails. A figure off by 1,000x is reported as a likely scale error; a
    figure that sits in the same table row as the reference figure in the evidence (another
    column, usually the prior period) or that a ledger in `metadata["ledger"]` gives for another
    period is reported as a likely prior-period figure. Abstains when the reference states no
    figure or is long prose (more than `PROSE_WORDS` words: its figures are context, not the
    answer).
key_fact_recall, contradiction_free, answer_correct
    recall = critical key facts present / critical key facts (a fact with figures is present when
    each of its figures appears in the answer; a fact without figures when 80% of its
    content words do). contradiction_free = no answer figure is a scale error of a key-fact or
    cited-span figure and the answer's conclusion does not state a different figure where the
    reference states one. answer_correct = recall == 1 and contradiction_free (without key facts:
    numeric_correct and contradiction_free).
refusal
    `answered_when_should_abstain` (rated over entries that should abstain or refuse) and
    `abstained_when_should_answer` (rated over entries that should answer) are scored separately
    from the entry's `expected_behavior` (or answerability); True is the error. `refusal_ok` is
    neither error. Clarify / correct-premise entries are left to the LLM judge (None).
not_disclosed_unsupported
    The answer asserts that the filings do not disclose something ("not disclosed", "the company
    does not report") although the entry is answerable. Saying "I could not find this in the
    filings searched" is the honest form and is never flagged.
numbers_verified
    Every figure in the answer appears (after normalisation) in a chunk the answer cites; a bare
    table figure may carry the scale its header states ("1,577" in a table in millions verifies
    "$1.58 billion"). An answer with figures and no citations fails. Abstains without a chunk
    table.
fiscal_year_ok
    When the entry's period is known (`metadata["fiscal_year"]`, or the years its query names),
    the answer's conclusion must not state only other years.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from assay.corpus.chunks import ChunkTable
from assay.dataset.io import Dataset
from assay.dataset.schema import Entry, ExpectedBehavior
from assay.judge.numbers import (
    Kind,
    MatchResult,
    Quantity,
    apply_hint,
    compare,
    extract_quantities,
    find_match,
    scale_hint,
)
from assay.judge.refusal import RefusalResult, detect_refusal, split_sentences
from assay.judge.report import CheckReport, rate_table
from assay.runs import Run

__all__ = [
    "CHECKS_VERSION",
    "CHECK_NAMES",
    "PROSE_WORDS",
    "EntryChecks",
    "NumericVerdict",
    "asks_for_figure",
    "check_entry",
    "check_numeric",
    "check_run",
    "conclusion_figures",
    "fact_present",
    "not_disclosed_claim",
    "reference_figures",
]

CHECKS_VERSION = "checks-1"
"""Version of the deterministic rules; bump when a rule changes what a check decides."""

PROSE_WORDS = 30
"""A reference answer longer than this many words is prose: its figures are not the answer."""

CHECK_NAMES = (
    "numeric_correct",
    "key_fact_recall_full",
    "contradiction_free",
    "answer_correct",
    "refusal_ok",
    "answered_when_should_abstain",
    "abstained_when_should_answer",
    "not_disclosed_unsupported",
    "numbers_verified",
    "fiscal_year_ok",
)

_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "is",
        "was",
        "were",
        "are",
        "be",
        "been",
        "as",
        "that",
        "this",
        "it",
        "its",
        "their",
        "his",
        "her",
        "which",
        "who",
        "whom",
        "what",
        "when",
        "where",
        "how",
        "than",
        "then",
        "so",
        "such",
        "into",
        "over",
        "under",
        "per",
        "fy",
    ]
)
_WORD_RE = re.compile(r"[a-z][a-z'&-]+")
_YEAR_RE = re.compile(
    r"(?:\bFY\s?'?|\bfiscal(?: year)?\s+)(\d{4}|\d{2})\b|\b(19\d{2}|20\d{2})\b", re.I
)
_NOT_DISCLOSED_RE = re.compile(
    r"\b(?:(?:is|are|was|were) not (?:publicly )?(?:disclosed|reported|published|made public)|"
    r"(?:does|do|did) not (?:publicly )?(?:disclose|report|publish|break out)|"
    r"(?:has|have) not (?:been )?(?:disclosed|reported)|undisclosed|not (?:publicly )?available)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class NumericVerdict:
    """Numeric correctness of one answer: pass, fail or abstain, and why."""

    status: Literal["pass", "fail", "abstain"]
    reason: str
    reference: tuple[str, ...] = ()
    answer_figure: str | None = None
    note: str = ""

    @property
    def value(self) -> bool | None:
        return None if self.status == "abstain" else self.status == "pass"


_FIGURE_Q_RE = re.compile(
    r"\b(?:how much|how many|what (?:is|was|are|were|will be|would be)\b(?! the (?:nature|reason|"
    r"purpose|main|primary|key|largest|biggest))"
    r"|what(?:'s| is| was)? (?:the )?(?:percentage|percent|proportion|share|portion|fraction)\b"
    r"|^\s*(?:calculate|compute|estimate)\b)",
    re.IGNORECASE | re.MULTILINE,
)
_YESNO_Q_RE = re.compile(
    r"^(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|which|who|whom|"
    r"where|why)\b",
    re.IGNORECASE,
)


def asks_for_figure(question: str) -> bool:
    """The question asks for a figure ("what is ... ratio", "how much"), not yes/no or which/who.

    The question clause is the sentence holding the question mark (else the whole text); a
    yes/no or which/who clause is not a figure question even when its reference cites figures.
    """
    sents = split_sentences(question.replace(":", ". "))
    clause = next((s for s in sents if "?" in s), question).strip()
    if _YESNO_Q_RE.match(clause) and not _FIGURE_Q_RE.search(clause):
        return False
    return bool(_FIGURE_Q_RE.search(question))


def reference_figures(reference: str, *, question: str | None = None) -> list[Quantity]:
    """Non-year figures of a reference, with the unit the question asks for where unstated."""
    kind, scale = scale_hint(question) if question else (None, None)
    qs = [q for q in extract_quantities(reference) if not q.is_year]
    return [apply_hint(q, kind=kind, scale=scale) for q in qs]


def conclusion_figures(answer: str) -> list[Quantity]:
    """Figures of the answer's last sentence that states a figure (its conclusion)."""
    for sent in reversed(split_sentences(answer)):
        qs = [q for q in extract_quantities(sent) if not q.is_year]
        if qs:
            return qs
    return []


def _words(text: str) -> list[str]:
    return [w for w in _WORD_RE.findall(text.lower()) if w not in _STOP]


def check_numeric(
    reference: str | Sequence[str],
    answer: str | None,
    *,
    question: str | None = None,
    evidence: Sequence[str] = (),
    ledger: Mapping[str, Any] | None = None,
    period: str | None = None,
    prose_words: int = PROSE_WORDS,
) -> NumericVerdict:
    """Does the answer state the reference figure(s)? See the module docstring for the rule.

    `reference` is a reference answer, or a list of key-fact texts (each must be stated).
    `evidence` texts (gold or cited chunks) and `ledger` ({period: figure}) let a wrong figure be
    recognised as another period's; `period` names the asked period in the ledger.
    """
    if question is not None and not asks_for_figure(question):
        return NumericVerdict("abstain", "not_a_figure_question")
    if isinstance(reference, str):
        if len(reference.split()) > prose_words:
            return NumericVerdict("abstain", "prose_reference")
        refs = reference_figures(reference, question=question)
    else:
        refs = [q for fact in reference for q in reference_figures(fact, question=question)]
    if not refs:
        return NumericVerdict("abstain", "no_reference_figure")
    ref_texts = tuple(q.text for q in refs)
    refusal = detect_refusal(answer)
    if refusal.refused or answer is None:
        return NumericVerdict("fail", "refusal", ref_texts, None, refusal.cue)
    if len(refs) == 1:
        cands = conclusion_figures(answer)
        if not cands:
            return NumericVerdict("fail", "no_answer_figure", ref_texts)
        res = find_match(refs[0], cands)
        if res.ok:
            return NumericVerdict("pass", "match", ref_texts, _txt(res), res.note)
        return _explain_miss(refs[0], refs, res, ref_texts, evidence, ledger, period)
    all_figs = [q for q in extract_quantities(answer) if not q.is_year]
    for ref in refs:
        res = find_match(ref, all_figs)
        if not res.ok:
            return _explain_miss(ref, refs, res, ref_texts, evidence, ledger, period, missing=True)
    return NumericVerdict("pass", "match", ref_texts)


def _txt(res: MatchResult) -> str | None:
    return res.answer.text if res.answer is not None else None


def _explain_miss(
    ref: Quantity,
    all_refs: Sequence[Quantity],
    res: MatchResult,
    ref_texts: tuple[str, ...],
    evidence: Sequence[str],
    ledger: Mapping[str, Any] | None,
    period: str | None,
    *,
    missing: bool = False,
) -> NumericVerdict:
    if res.status == "scale_error":
        return NumericVerdict("fail", "scale_error", ref_texts, _txt(res), res.note)
    # an answer figure that states one of the reference figures is not another period's
    stated = [a for a in res.candidates if not any(compare(r, a).ok for r in all_refs)]
    prior = _other_period(ref, stated, evidence, ledger, period)
    if prior is not None:
        return NumericVerdict("fail", "prior_period", ref_texts, prior[0], prior[1])
    if missing:
        return NumericVerdict("fail", "missing_figure", ref_texts, None, f"{ref.text} not stated")
    shown = stated[0].text if stated else None
    return NumericVerdict("fail", "mismatch", ref_texts, shown)


def _other_period(
    ref: Quantity,
    stated: Sequence[Quantity],
    evidence: Sequence[str],
    ledger: Mapping[str, Any] | None,
    period: str | None,
) -> tuple[str, str] | None:
    """An answer figure that is another period's value of the same line item, if one is."""
    if ledger:
        for key, val in ledger.items():
            if period is not None and str(key) == str(period):
                continue
            figs = extract_quantities(str(val))
            for lf in figs:
                lf_h = apply_hint(lf, kind=None, scale=ref.scale if not lf.scale_stated else None)
                for a in stated:
                    if compare(lf_h, a).ok and not compare(ref, a).ok:
                        return a.text, f"matches the ledger's {key} figure: likely prior period"
    for text in evidence:
        for line in _rows(text):
            figs = [q for q in extract_quantities(line) if not q.is_year]
            if not any(compare(apply_hint(f, kind=None, scale=ref.scale), ref).ok for f in figs):
                continue
            others = [
                f for f in figs if not compare(apply_hint(f, kind=None, scale=ref.scale), ref).ok
            ]
            for o in others:
                o_h = apply_hint(o, kind=None, scale=ref.scale)
                for a in stated:
                    if compare(o_h, a).ok:
                        return (
                            a.text,
                            "matches another column of the reference figure's table row: "
                            "likely prior-period figure",
                        )
    return None


_LABEL_RE = re.compile(r"[A-Za-z]{3,}")


def _rows(text: str) -> list[str]:
    """Table rows of an evidence text: a line with a label plus the figure-only lines after it.

    PDF text often puts each cell of a table row on its own line ("Net sales", "$", "5,363",
    "4,869"); those lines are joined back into one row.
    """
    rows: list[str] = []
    for ln in text.splitlines():
        if not ln.strip():
            continue
        if _LABEL_RE.search(ln) or not rows:
            rows.append(ln)
        else:
            rows[-1] += " " + ln
    return rows


def _in_spans(fig: Quantity, span_figs: Sequence[Quantity]) -> bool:
    """The figure appears among span figures; a bare span figure may carry any scale, because
    tables state their unit in a header ("(Millions)")."""
    for s in span_figs:
        if compare(s, fig).ok or compare(fig, s).ok:
            return True
        if not s.scale_stated and s.kind in (Kind.number, Kind.currency):
            for scale in (1e3, 1e6, 1e9):
                if compare(apply_hint(s, kind=None, scale=scale), fig).ok:
                    return True
    return False


def fact_present(fact: str, answer: str) -> bool:
    """A key fact is present: each of its figures is stated, or 80% of its content words are."""
    figs = [q for q in extract_quantities(fact) if not q.is_year]
    if figs:
        ans = [q for q in extract_quantities(answer) if not q.is_year]
        return all(find_match(f, ans).ok for f in figs)
    words = set(_words(fact))
    if not words:
        return True
    have = set(_words(answer))
    return len(words & have) / len(words) >= 0.8


def not_disclosed_claim(answer: str | None) -> bool:
    """The answer asserts non-disclosure (rather than 'could not find in the filings searched')."""
    return bool(answer) and bool(_NOT_DISCLOSED_RE.search(answer or ""))


def _years(text: str) -> set[int]:
    out: set[int] = set()
    for m in _YEAR_RE.finditer(text):
        y = m.group(1) or m.group(2)
        n = int(y)
        out.add(n + 2000 if n < 100 else n)
    return out


@dataclass(slots=True)
class EntryChecks:
    """Every deterministic check for one entry and its run row."""

    id: str
    category: str
    numeric: NumericVerdict
    refusal: RefusalResult
    values: dict[str, bool | None] = field(default_factory=dict)
    key_fact_recall: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def faithful(self) -> bool | None:
        """Faithfulness: every figure verified in cited spans and none contradicts them."""
        return self.values.get("numbers_verified")

    @property
    def correct(self) -> bool | None:
        return self.values.get("answer_correct")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            **self.values,
            "key_fact_recall": self.key_fact_recall,
            "numeric_reason": self.numeric.reason,
            "refused": self.refusal.refused,
            "notes": self.notes,
        }


def check_entry(
    entry: Entry,
    answer: str | None,
    *,
    citations: Sequence[str] | None = None,
    chunk_text: Mapping[str, str] | None = None,
    evidence_text: Iterable[str] = (),
) -> EntryChecks:
    """Run every deterministic check on one entry's answer.

    `chunk_text` maps chunk ids to text (needed for numbers_verified); `evidence_text` is the
    entry's gold evidence text where known (it lets a wrong figure be named as another period's).
    """
    notes: list[str] = []
    refusal = detect_refusal(answer)
    cited = [chunk_text[c] for c in (citations or []) if chunk_text is not None and c in chunk_text]
    evidence = [*evidence_text, *cited]
    ledger = (
        entry.metadata.get("ledger") if isinstance(entry.metadata.get("ledger"), dict) else None
    )
    period = entry.metadata.get("fiscal_year") or entry.metadata.get("period")
    critical = [kf.fact for kf in entry.key_facts if kf.critical]
    reference: str | list[str] | None = critical if critical else entry.reference_answer
    if reference is None or (isinstance(reference, list) and not reference):
        numeric = NumericVerdict("abstain", "no_reference")
    else:
        numeric = check_numeric(
            reference,
            answer,
            question=entry.query,
            evidence=evidence,
            ledger=ledger,
            period=None if period is None else str(period),
        )
    if numeric.status == "fail" and numeric.reason in ("scale_error", "prior_period"):
        notes.append(f"{numeric.reason}: {numeric.answer_figure} ({numeric.note})")
    values: dict[str, bool | None] = {"numeric_correct": numeric.value}

    # key facts
    recall: float | None = None
    if critical and answer is not None and not refusal.refused:
        recall = sum(fact_present(f, answer) for f in critical) / len(critical)
    elif critical:
        recall = 0.0
    values["key_fact_recall_full"] = None if recall is None else recall == 1.0

    # contradictions: scale errors against facts or cited spans, or a wrong conclusion figure
    contradiction = numeric.status == "fail" and numeric.reason in (
        "scale_error",
        "prior_period",
        "mismatch",
    )
    if answer and cited and not contradiction:
        span_figs = [q for t in cited for q in extract_quantities(t) if not q.is_year]
        for a in extract_quantities(answer):
            if a.is_year:
                continue
            # a bare span figure may carry any scale (tables state it in a header), so only a
            # span figure with a stated scale can show a scale error
            agrees = any(compare(s, a).ok or compare(a, s).ok for s in span_figs)
            off = any(s.scale_stated and compare(s, a).status == "scale_error" for s in span_figs)
            if off and not agrees:
                contradiction = True
                notes.append(f"scale_error against a cited span: {a.text}")
                break
    contradiction_free: bool | None = None if answer is None else not contradiction
    values["contradiction_free"] = contradiction_free
    if recall is not None:
        values["answer_correct"] = recall == 1.0 and bool(contradiction_free)
    elif numeric.value is not None:
        values["answer_correct"] = numeric.value and bool(contradiction_free)
    else:
        values["answer_correct"] = None

    # refusal correctness
    behavior = entry.behavior()
    should_abstain = behavior in (ExpectedBehavior.abstain, ExpectedBehavior.refuse)
    should_answer = behavior is ExpectedBehavior.answer
    # each error is rated over the entries where it can happen (None elsewhere)
    values["answered_when_should_abstain"] = (not refusal.refused) if should_abstain else None
    values["abstained_when_should_answer"] = refusal.refused if should_answer else None
    if should_abstain or should_answer:
        values["refusal_ok"] = not (
            values["answered_when_should_abstain"] or values["abstained_when_should_answer"]
        )
    else:
        values["refusal_ok"] = None  # clarify / correct_premise: the LLM judge decides

    # "not disclosed" without the evidence to say so
    claim = not_disclosed_claim(answer)
    values["not_disclosed_unsupported"] = claim and entry.answerable is not False
    if claim:
        notes.append("asserts non-disclosure; prefer 'could not find this in the filings searched'")

    # numbers verified against cited spans
    if chunk_text is None:
        values["numbers_verified"] = None
    else:
        figs = [q for q in extract_quantities(answer or "") if not q.is_year]
        if not figs:
            values["numbers_verified"] = True
        elif not cited:
            values["numbers_verified"] = False
        else:
            span_figs = [q for t in cited for q in extract_quantities(t) if not q.is_year]
            unverified = [a.text for a in figs if not _in_spans(a, span_figs)]
            values["numbers_verified"] = not unverified
            if unverified:
                notes.append("unverified figures: " + ", ".join(unverified[:5]))

    # fiscal year
    want: set[int] = set()
    if period is not None:
        want = _years(f"FY{period}") or _years(str(period))
    if not want:
        want = _years(entry.query)
    if want and answer and not refusal.refused:
        concl = ""
        for sent in reversed(split_sentences(answer)):
            if _years(sent):
                concl = sent
                break
        stated = _years(concl)
        values["fiscal_year_ok"] = not stated or bool(stated & want)
        if stated and not stated & want:
            notes.append(f"answer states {sorted(stated)}, entry asks about {sorted(want)}")
    else:
        values["fiscal_year_ok"] = None
    return EntryChecks(entry.id, entry.category, numeric, refusal, values, recall, notes)


# ------------------------------------------------------------------------------ over a whole run


def check_run(
    dataset: Dataset,
    run: Run,
    *,
    chunks: ChunkTable | None = None,
    rng: np.random.Generator | None = None,
    n_boot: int = 1000,
) -> CheckReport:
    """Every deterministic check on every entry the run answered, rated per category with CIs.

    Faithfulness (`numbers_verified`: the answer's figures are in the spans it cites) and
    correctness (`answer_correct`) are separate columns; entries where they disagree are listed,
    "faithful but wrong" first (faithful to the wrong quarter is the failure that matters).
    Needs `chunks` for numbers_verified; without it that column abstains.
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    chunk_text = {c.chunk_id: c.text for c in chunks} if chunks is not None else None
    rows: list[dict[str, Any]] = []
    missing = 0
    for entry in dataset.entries:
        if entry.id not in run:
            missing += 1
            continue
        rr = run.row(entry.id)
        if rr.answer is None:
            continue
        evidence = [a.quote for a in entry.anchors()]
        if chunk_text is not None:
            evidence += [chunk_text[c] for c in sorted(entry.chunk_ids()) if c in chunk_text]
        res = check_entry(
            entry, rr.answer, citations=rr.citations, chunk_text=chunk_text, evidence_text=evidence
        )
        rows.append(res.to_dict())
    disagreements: list[dict[str, Any]] = []
    for r in rows:
        faithful, correct = r.get("numbers_verified"), r.get("answer_correct")
        if faithful is True and correct is False:
            disagreements.append(
                {
                    "id": r["id"],
                    "category": r["category"],
                    "kind": "faithful but wrong",
                    "why": "; ".join(r["notes"]) or r["numeric_reason"],
                }
            )
    for r in rows:
        faithful, correct = r.get("numbers_verified"), r.get("answer_correct")
        if faithful is False and correct is True:
            disagreements.append(
                {
                    "id": r["id"],
                    "category": r["category"],
                    "kind": "correct but unverified",
                    "why": "; ".join(r["notes"]),
                }
            )
    warnings: list[str] = []
    if missing:
        warnings.append(f"{missing} entries have no row in the run and are not checked")
    if chunks is None:
        warnings.append("no chunk table given (--chunks): numbers_verified abstains")
    return CheckReport(
        rows=rows,
        checks=list(CHECK_NAMES),
        rates=rate_table(rows, CHECK_NAMES, rng, n_boot),
        disagreements=disagreements,
        meta={
            "dataset": {"path": dataset.path, "version": dataset.version},
            "run": {"path": run.path, "hash": run.hash},
            "chunks": None
            if chunks is None
            else {
                "path": getattr(chunks, "path", None),
                "version": getattr(chunks, "version", None),
            },
            "checks_version": CHECKS_VERSION,
            "ci": {"method": "percentile bootstrap over entries", "level": 0.95, "n_boot": n_boot},
        },
        warnings=warnings,
    )
