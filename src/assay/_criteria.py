"""The names of the expert judging criteria, kept in one place for the judge and the workbench.

An answer is judged *correct*, *comprehensive* (it states every critical key fact of the
reference), *faithful* (every figure is supported by what it cites) and within *policy*
(`assay.checks.policy.CRITERIA` says which checks read each one; the workbench asks an expert for
a Pass or Fail on each).

"comprehensive" was called "complete" until it was renamed so that it no longer shares a name
with the retrieval metric complete@k. Everything stored under the old name still reads:
workbench labels, adjudications, drafts and calibration gold (`current_criteria`), a dataset
entry's ``metadata.criteria`` and a labels file's ``criterion`` (`criterion_name`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CRITERIA", "RENAMED_CRITERIA", "criterion_name", "current_criteria"]

CRITERIA = ("correct", "comprehensive", "faithful", "policy")
"""The judging criteria, in the order an expert meets them."""

RENAMED_CRITERIA = {"complete": "comprehensive"}
"""A criterion's older name -> its name now."""


def criterion_name(name: str) -> str:
    """A criterion's current name (an old name read as the new one)."""
    return RENAMED_CRITERIA.get(name, name)


def current_criteria(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A judging payload (or a stored draft or gold) with its verdicts and critiques keyed by
    the current criterion names; any other payload is returned as a copy, unchanged."""
    out = dict(payload)
    for key in ("verdicts", "critiques"):
        value = out.get(key)
        if isinstance(value, Mapping) and any(k in RENAMED_CRITERIA for k in value):
            out[key] = {criterion_name(k): v for k, v in value.items()}
    return out
