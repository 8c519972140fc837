"""The one interval type every result uses: a value (or None when undefined) with its bounds.

`Interval` is pure data. ``value is None`` means the statistic is undefined on the data and
``note`` says why; ``low``/``high`` are None when no interval could be computed (``note`` says
why). JSON has one shape everywhere: ``{"value", "low", "high", "level", "method", "note"}``,
with full float precision (NaN and infinities become null).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["ONE_CLUSTER", "Interval", "fmt_end", "undefined"]

ONE_CLUSTER = "one cluster: no interval"
"""The note of an interval over entries that all fall in one cluster: one draw, so its bounds
are the whole range, and reports print the note in their place."""


def fmt_end(x: float, digits: int = 3) -> str:
    """A signed interval end, ``+0.105``; an end that excludes 0 but rounds to 0 is ``>0`` or
    ``<0`` (a clustered CI's end just past 0 when p rejects would print ``+0.000``, as if the
    interval touched 0). An end at exactly 0 prints ``+0.000``."""
    s = f"{x:+.{digits}f}"
    if x != 0.0 and float(s) == 0.0:
        return ">0" if x > 0.0 else "<0"
    return s


def _clean(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


@dataclass(frozen=True, slots=True)
class Interval:
    """A statistic with its confidence interval (or the reason it has none)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    level: float = 0.95
    method: str = ""
    note: str | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None and not math.isnan(self.value)

    @property
    def has_bounds(self) -> bool:
        return _clean(self.low) is not None and _clean(self.high) is not None

    @property
    def width(self) -> float | None:
        if not self.has_bounds:
            return None
        assert self.low is not None and self.high is not None
        return self.high - self.low

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": _clean(self.value),
            "low": _clean(self.low),
            "high": _clean(self.high),
            "level": self.level,
            "method": self.method,
            "note": self.note,
        }

    def fmt(self, digits: int = 3) -> str:
        """``0.571 [0.41, 0.72]``; ``undefined`` or the bare value when no interval exists."""
        if not self.defined:
            return "undefined"
        assert self.value is not None
        if not self.has_bounds:
            return f"{self.value:.{digits}f}"
        if self.note == ONE_CLUSTER:
            return f"{self.value:.{digits}f} ({ONE_CLUSTER})"
        assert self.low is not None and self.high is not None
        d = max(digits - 1, 0)
        return f"{self.value:.{digits}f} [{self.low:.{d}f}, {self.high:.{d}f}]"

    def fmt_value(self, digits: int = 3) -> str:
        """The value alone, or ``undefined``."""
        if not self.defined:
            return "undefined"
        assert self.value is not None
        return f"{self.value:.{digits}f}"

    def fmt_bounds(self, digits: int = 3) -> str:
        """``[low, high]``, or an empty string when there is no interval (the note when all
        entries are in one cluster)."""
        if not self.has_bounds:
            return ""
        if self.note == ONE_CLUSTER:
            return f"({ONE_CLUSTER})"
        assert self.low is not None and self.high is not None
        return f"[{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def __str__(self) -> str:
        return self.fmt()


def undefined(note: str, *, level: float = 0.95, method: str = "") -> Interval:
    """The one way to say a statistic is undefined on the data, and why."""
    return Interval(None, None, None, level, method, note)
