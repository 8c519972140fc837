"""Gold for a classification eval type: routing (which desk, which filing type a question goes
to) and guardrails (block or allow). An entry's ``expected_label``::

    {"label": "credit", "label_set": "desk", "allowed": ["equity", "credit", "policy"]}

``label`` is the gold label; ``allowed`` (optional) declares the label set, and the gold must be
one of it; ``label_set`` (optional) names the set, so one dataset can hold several (a router's
and a guardrail's entries side by side, each reported on its own). A run row carries the
system's ``label`` and, optionally, ``label_scores`` (``{label: score}``, probabilities or any
non-negative scores, normalised when read): what the confident-learning label audit reads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["LabelGold", "predicted", "scores_of"]


class LabelGold(BaseModel):
    """The expected label of a routing or guardrail entry (module docs)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(min_length=1, description="the gold label")
    label_set: str | None = Field(
        default=None, min_length=1, description="the name of the label set (e.g. desk, guardrail)"
    )
    allowed: tuple[str, ...] | None = Field(
        default=None, min_length=2, description="the declared labels; the gold must be one"
    )

    @model_validator(mode="after")
    def _gold_in_set(self) -> LabelGold:
        if self.allowed is not None:
            if len(set(self.allowed)) != len(self.allowed):
                raise ValueError("allowed labels repeat")
            if self.label not in self.allowed:
                raise ValueError(f"label {self.label!r} is not one of allowed {list(self.allowed)}")
        return self

    @property
    def set_name(self) -> str:
        return self.label_set or "label"


def predicted(row: Mapping[str, Any] | None) -> str | None:
    """The label a run row gives (None without a row or a label); a label that is not a
    non-empty string is a ValueError naming the field."""
    if row is None:
        return None
    got = row.get("label")
    if got is None:
        return None
    if not isinstance(got, str) or not got:
        raise ValueError("label: must be a non-empty string")
    return got


def scores_of(row: Mapping[str, Any] | None, labels: tuple[str, ...]) -> list[float] | None:
    """The row's ``label_scores`` over `labels`, normalised to sum 1 (None when the row has none;
    a label it does not score gets 0). Negative, infinite or all-zero scores are a ValueError."""
    raw = None if row is None else row.get("label_scores")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ValueError("label_scores: must be an object {label: score}")
    values: list[float] = []
    for lab in labels:
        v = raw.get(lab, 0.0)
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise ValueError(f"label_scores.{lab}: must be a finite number >= 0")
        values.append(float(v))
    total = sum(values)
    if total <= 0:
        raise ValueError("label_scores: no label of the set has a positive score")
    return [v / total for v in values]
