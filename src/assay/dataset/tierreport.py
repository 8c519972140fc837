"""What a label-tier selection kept and left out (`assay.dataset.tiers.select_tiers` makes it;
`assay.dataset.io.Dataset.tiers` carries it to every result that prints it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = ["TIERS", "Tier", "TierReport"]

Tier: TypeAlias = Literal["draft", "silver", "gold"]
TIERS: tuple[Tier, ...] = ("gold", "silver", "draft")


@dataclass(frozen=True)
class TierReport:
    """What a tier selection kept and left out: ``kept`` and ``left_out`` count entries by tier
    (an entry with no known tier counts as draft, except in an ``untiered`` set, where every
    entry is kept), ``ambiguous`` lists the ambiguous entries (always left out)."""

    tiers: tuple[str, ...]
    kept: dict[str, int]
    left_out: dict[str, int]
    ambiguous: tuple[str, ...] = ()
    untiered: bool = False
    unknown: int = 0  # entries with no known tier (counted as draft unless the set is untiered)
    # unanswerable or partial entries marked gold without two reviewers and a structured-data
    # lookup: counted as silver at most (`assay.dataset.tiers.not_disclosed_shortfall`)
    short_of_gold: tuple[str, ...] = ()

    @property
    def n_kept(self) -> int:
        return sum(self.kept.values())

    @property
    def n_left_out(self) -> int:
        return sum(self.left_out.values()) + len(self.ambiguous)

    def line(self) -> str:
        """One sentence for a report: '200 draft entries and 3 ambiguous left out; 100 gold
        used (tiers: gold; --tiers gold,silver widens it).'"""
        if self.untiered:
            head = (
                f"Untiered dataset: no entry states a label_tier, reviewed_by or a generated source, so all "
                f"{self.n_kept} entries were used as they are (set label_tier to decide on "
                "verified gold only)"
            )
        else:
            gone = [f"{n} {t}" for t, n in _ordered(self.left_out)]
            if self.ambiguous:
                gone.append(f"{len(self.ambiguous)} ambiguous")
            left = _join(gone) + " left out" if gone else "none left out"
            head = f"Label tiers {','.join(self.tiers)}: {_counts(self.kept)} used; {left}"
            if self.unknown:
                head += f" ({self.unknown} without a known tier counted as draft)"
        if self.ambiguous and self.untiered:
            head += f"; {len(self.ambiguous)} ambiguous left out"
        if self.ambiguous:
            head += f" (ambiguous, never scored or gated: {_shown(self.ambiguous)})"
        if self.short_of_gold:
            n = len(self.short_of_gold)
            head += (
                f"; {n} 'not disclosed' {'entry' if n == 1 else 'entries'} marked gold "
                "counted as silver at most, for want of two reviewers and a structured-data "
                f"lookup ({_shown(self.short_of_gold)})"
            )
        return head + "."

    def to_dict(self) -> dict[str, Any]:
        return {
            "tiers": list(self.tiers),
            "kept": dict(self.kept),
            "left_out": dict(self.left_out),
            "ambiguous": list(self.ambiguous),
            "untiered": self.untiered,
            "unknown_tier": self.unknown,
            "short_of_gold": list(self.short_of_gold),
        }

    def refusal(self) -> str:
        """Why a selection that kept nothing is refused: the tiers the dataset holds and the
        ``--tiers`` that would widen it."""
        held = dict(self.left_out)
        present = [f"{n} {t}" for t, n in _ordered(held)]
        if self.ambiguous:
            present.append(f"{len(self.ambiguous)} ambiguous")
        wider = [t for t in TIERS if held.get(t)]
        hint = (
            f"; widen it with --tiers {','.join([*self.tiers, *wider])} (tiers=... in Python) if "
            "deciding on less verified labels is what you mean"
            if wider
            else ""
        )
        return (
            f"no entry of tier {','.join(self.tiers)} to score or gate: the dataset holds "
            f"{_join(present) if present else 'no entries'}{hint}. Only verified gold decides by "
            "default: review the entries (the workbench export marks them gold) to gate on them"
        )


def _shown(ids: Sequence[str]) -> str:
    return ", ".join(ids[:10]) + (" ..." if len(ids) > 10 else "")


def _ordered(counts: dict[str, int]) -> list[tuple[str, int]]:
    return [(t, counts[t]) for t in TIERS if counts.get(t)]


def _counts(counts: dict[str, int]) -> str:
    return _join([f"{n} {t}" for t, n in _ordered(counts)])


def _join(parts: Sequence[str]) -> str:
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
