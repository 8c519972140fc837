"""Errors that name the file, line and field at fault."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one input: where it is and what is wrong."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class AssayError(Exception):
    """Base class of every error assay raises on purpose."""


class DataError(AssayError):
    """Input data is wrong. Carries every problem found, not just the first."""

    def __init__(
        self,
        problems: list[Problem] | Problem | str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ):
        """A list of problems, one, or one message about `file` (at `line`, in `field`)."""
        if isinstance(problems, str):
            problems = [Problem(str(file or "<input>"), line, field, problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class UsageError(AssayError):
    """The caller asked for something that cannot be done (bad option, missing extra)."""


class MissingExtraError(UsageError):
    """An optional dependency is not installed; says which extra adds it and what it gives."""

    def __init__(self, extra: str, what: str, module: str):
        self.extra = extra
        super().__init__(
            f"{what} needs the optional '{extra}' extra ({module} is not installed). "
            f"Install it with: pip install 'assay[{extra}]'"
        )
