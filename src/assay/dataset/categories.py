"""What a dataset declares about its categories: the manifest's `categories` block.

A category may carry a `risk` (``high`` or ``normal``, the default) and a `description`:

    {"version": "1.3", "categories": {"numeric": {"risk": "high"}, "text": {}}}

A manifest without the block (every manifest before it) declares nothing: every category is
normal. The block is read where it decides something -- the judge calibration bar holds a
high-risk category to the stricter floors (`assay.judge.bar`) -- and is checked there: a name no
entry has, an unknown key or an unknown risk is an error naming the manifest and the field (a
misspelt high-risk category must not quietly fall back to the normal bar).
"""

from __future__ import annotations

from assay.dataset.io import Dataset, manifest_path
from assay.errors import DataError, Problem

__all__ = ["CATEGORY_KEYS", "RISKS", "category_risks", "high_risk_categories"]

RISKS = ("normal", "high")
CATEGORY_KEYS = ("description", "risk")


def category_risks(dataset: Dataset) -> dict[str, str]:
    """{category: risk} for every category the manifest declares (DataError on a bad block)."""
    block = dataset.manifest.get("categories")
    if block is None:
        return {}
    file = str(manifest_path(dataset.path)) if dataset.path else "<manifest>"
    if not isinstance(block, dict):
        raise DataError(
            'expected an object: {"numeric": {"risk": "high"}}', file=file, field="categories"
        )
    known = set(dataset.categories())
    problems: list[Problem] = []
    out: dict[str, str] = {}
    for name, spec in block.items():
        where = f"categories.{name}"
        if name not in known:
            problems.append(
                Problem(
                    file,
                    None,
                    where,
                    f"no entry has category {name!r} (categories: {', '.join(sorted(known))})",
                )
            )
            continue
        if not isinstance(spec, dict):
            problems.append(Problem(file, None, where, 'expected an object: {"risk": "high"}'))
            continue
        extra = sorted(set(spec) - set(CATEGORY_KEYS))
        if extra:
            problems.append(
                Problem(
                    file,
                    None,
                    f"{where}.{extra[0]}",
                    f"unknown field (allowed: {', '.join(CATEGORY_KEYS)})",
                )
            )
            continue
        risk = spec.get("risk", "normal")
        if risk not in RISKS:
            problems.append(
                Problem(
                    file, None, f"{where}.risk", f"expected one of {', '.join(RISKS)}, got {risk!r}"
                )
            )
            continue
        out[str(name)] = str(risk)
    if problems:
        raise DataError(problems)
    return out


def high_risk_categories(dataset: Dataset) -> list[str]:
    """The categories the manifest declares high-risk, sorted."""
    return sorted(c for c, r in category_risks(dataset).items() if r == "high")
