"""The ``classification`` system kind's call, and a reference router.

A classification system has ``classify(query, *, as_of, labels)``: the query, the entry's
``as_of`` and the declared labels of its set (an empty tuple when the gold declares none). It
returns a label, or ``{"label": ..., "scores": {label: score}}``; the row carries ``label`` and
``label_scores`` (the scores the confident-learning audit reads). The runner caches, journals and
binds the rows as any other (`assay.systems.kinds`).

`KeywordRouter` is the reference: which filing answers a question (``10-K``, ``10-Q``, ``8-K``,
``DEF 14A``), by weighted cue words, with a softmax over the cue scores as its probabilities.
It learns nothing from gold labels, so its probabilities are independent of their errors (what
the label audit needs). Use it as ``assay.systems.router:KeywordRouter``.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from assay.dataset import Entry
from assay.systems.kinds import CallContext
from assay.systems.protocol import SystemCallError

__all__ = ["CUES", "KeywordRouter", "call_classify", "classify_inputs"]


def classify_inputs(entry: Entry, ctx: CallContext) -> dict[str, Any]:
    """The labels a classifier is handed: part of the entry's cache key."""
    gold = entry.expected_label
    return {"labels": list(gold.allowed or ()) if gold is not None else []}


def call_classify(system: Any, entry: Entry, ctx: CallContext) -> dict[str, Any]:
    """One entry with ``expected_label`` asked of a classifier; the row's ``label`` and
    ``label_scores`` (module docs)."""
    from assay.runs.model import RunRow

    gold = entry.expected_label
    assert gold is not None
    t0 = time.perf_counter()
    out = system.classify(entry.query, as_of=entry.as_of, labels=tuple(gold.allowed or ()))
    ms = (time.perf_counter() - t0) * 1000.0
    scores: Mapping[str, Any] | None = None
    if isinstance(out, Mapping):
        label, scores = out.get("label"), out.get("scores")
    else:
        label = out
    if label is not None and (not isinstance(label, str) or not label):
        raise SystemCallError(entry.id, f"classify() gave {label!r}: not a label")
    extra: dict[str, Any] = {"label": label}
    if scores is not None:
        if not isinstance(scores, Mapping):
            raise SystemCallError(entry.id, "classify() scores must be {label: score}")
        extra["label_scores"] = {str(k): float(v) for k, v in scores.items()}
    return RunRow(
        entry.id,
        None,
        as_of=None if entry.as_of is None else entry.as_of.isoformat(),
        latency_ms=round(ms, 3),
        extra=extra,
    ).to_dict()


CUES: dict[str, dict[str, float]] = {
    "10-K": {
        "annual": 2.0,
        "fiscal year": 2.0,
        "full year": 2.0,
        "fy": 1.5,
        "risk factor": 2.5,
        "10-k": 3.0,
        "year ended": 1.5,
        "segment": 1.0,
        "five-year": 1.5,
        "auditor": 1.5,
        "goodwill": 1.0,
        "long-term debt": 1.0,
    },
    "10-Q": {
        "quarter": 2.5,
        "q1": 2.5,
        "q2": 2.5,
        "q3": 2.5,
        "three months": 2.5,
        "10-q": 3.0,
        "six months": 2.0,
        "nine months": 2.0,
        "interim": 2.0,
        "quarterly": 2.5,
    },
    "8-K": {
        "announce": 2.0,
        "resign": 3.0,
        "appoint": 2.5,
        "departure": 3.0,
        "acquisition": 2.0,
        "agreement": 1.5,
        "8-k": 3.0,
        "press release": 2.0,
        "merger": 2.0,
        "event": 1.0,
        "entered into": 1.5,
        "material definitive": 3.0,
        "completed": 1.0,
    },
    "DEF 14A": {
        "compensation": 2.0,
        "proxy": 3.0,
        "board": 1.5,
        "director": 1.5,
        "say-on-pay": 3.0,
        "shareholder proposal": 3.0,
        "annual meeting": 2.5,
        "pay ratio": 3.0,
        "def 14a": 3.0,
        "vote": 2.0,
        "nominee": 2.5,
        "executive": 1.0,
    },
}


class KeywordRouter:
    """Routes a question to the filing that answers it by weighted cue words (module docs).
    `temperature` spreads the softmax (higher: less confident)."""

    def __init__(self, temperature: float = 1.5, cues: Mapping[str, Mapping[str, float]] = CUES):
        self.temperature = float(temperature)
        self.cues = {k: dict(v) for k, v in cues.items()}
        self.name = f"keyword-router(t={self.temperature})"

    def _scores(self, query: str, labels: Sequence[str]) -> dict[str, float]:
        q = query.lower()
        raw = {
            lab: sum(
                w
                for cue, w in self.cues.get(lab, {}).items()
                if re.search(rf"\b{re.escape(cue)}", q)
            )
            for lab in labels
        }
        top = max(raw.values())
        exp = {lab: math.exp((v - top) / self.temperature) for lab, v in raw.items()}
        total = sum(exp.values())
        return {lab: round(v / total, 6) for lab, v in exp.items()}

    def classify(
        self, query: str, *, as_of: Any = None, labels: Sequence[str] = ()
    ) -> dict[str, Any]:
        labels = tuple(labels) or tuple(self.cues)
        scores = self._scores(query, labels)
        best = max(labels, key=lambda lab: (scores[lab], -labels.index(lab)))  # ties: set order
        return {"label": best, "scores": scores}
