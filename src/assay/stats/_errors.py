"""The one exception `assay.stats` raises for input it refuses.

`stats` imports nothing from the rest of assay, so it cannot name a file: it names the field (and,
for a sequence of records, the record's line) and says what is wrong. A caller that read the input
from a file (`assay.label_files`) turns each issue into a `FILE:LINE: field: message` problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Issue", "StatsInputError"]


@dataclass(frozen=True, slots=True)
class Issue:
    """One thing wrong with one input: the field at fault (None: the record as a whole), what is
    wrong, and the line (or 1-based position) of the record when the input is a list of them."""

    field: str | None
    message: str
    line: int | None = None

    def __str__(self) -> str:
        text = f"{self.field}: {self.message}" if self.field else self.message
        return text if self.line is None else f"line {self.line}: {text}"


class StatsInputError(ValueError):
    """Input a statistic refuses. ``str(exc)`` is ``field: message`` (one line per issue).

    ``field`` and ``message`` are those of the first issue; ``issues`` holds every one found.
    """

    def __init__(
        self,
        field: str | None,
        message: str,
        *,
        line: int | None = None,
        more: Sequence[Issue] = (),
    ) -> None:
        self.issues: list[Issue] = [Issue(field, message, line), *more]
        self.field = field
        self.message = message
        self.line = line
        super().__init__("\n".join(str(i) for i in self.issues))

    @classmethod
    def of(cls, issues: Sequence[Issue]) -> StatsInputError:
        """One error carrying every issue (at least one)."""
        first, *rest = issues
        return cls(first.field, first.message, line=first.line, more=rest)
