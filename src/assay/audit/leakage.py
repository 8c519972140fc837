"""The leakage audit: held-out rows must never reach prompts, few-shot files or fine-tuning data.

Every row of the held-out splits (``test`` and ``fresh`` by default) is looked for, question
and reference answer apart, in each file given, after normalisation (`assay.audit.overlap.tokens`).
The rule (word `n`-gram share at least `threshold`, whole sequence for short texts, texts under
`min_tokens` not looked for) and how each kind of file is read: docs/audit.md ("Leakage"). A
JSONL line that is not JSON is a `DataError` naming FILE:LINE, and nothing is reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from assay._io import iter_jsonl_lenient, json_loads, not_utf8, sha256_file
from assay.audit.overlap import ngrams, tokens
from assay.dataset import Dataset
from assay.errors import DataError, Problem
from assay.report import ReportMixin, Tabular

__all__ = ["DEFAULT_SPLITS", "Leak", "LeakageReport", "audit_leakage"]

DEFAULT_SPLITS = ("test", "fresh")


def _strings(obj: Any) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


@dataclass
class _Indexed:
    """A file as normalised token segments: (line, tokens, line of each token)."""

    path: str
    sha256: str
    segments: list[tuple[int | None, list[str], list[int | None]]]

    def index(self, n: int) -> dict[tuple[str, ...], int | None]:
        """Every word n-gram of the file -> the line where it first starts."""
        grams: dict[tuple[str, ...], int | None] = {}
        for _line, toks, lines in self.segments:
            for i, g in enumerate(ngrams(toks, n)):
                grams.setdefault(g, lines[i])
        return grams

    def find(self, toks: Sequence[str]) -> tuple[bool, int | None]:
        """Whether the token sequence occurs in one segment, and the line where it starts."""
        needle = " " + " ".join(toks) + " "
        for _line, seg, lines in self.segments:
            hay = " " + " ".join(seg) + " "
            at = hay.find(needle)
            if at >= 0:
                return True, lines[hay.count(" ", 0, at)] if lines else None
        return False, None


def _read(path: Path) -> _Indexed:
    try:
        return _read_utf8(path)
    except UnicodeDecodeError:
        raise DataError(not_utf8(path)) from None


def _read_utf8(path: Path) -> _Indexed:
    segments: list[tuple[int | None, list[str], list[int | None]]] = []
    if path.suffix == ".jsonl":
        problems: list[Problem] = []
        for line, obj in iter_jsonl_lenient(path, problems):
            toks = tokens("\n".join(_strings(obj)))
            segments.append((line, toks, [line] * len(toks)))
        if problems:
            raise DataError(problems)
    elif path.suffix == ".json":
        obj = json_loads(path.read_text(encoding="utf-8"), path)
        for s in _strings(obj):
            toks = tokens(s)
            segments.append((None, toks, [None] * len(toks)))
    else:
        if not path.exists():
            raise DataError("file not found", file=path)
        all_toks: list[str] = []
        lines: list[int | None] = []
        with open(path, encoding="utf-8") as fh:
            for lineno, text in enumerate(fh, start=1):
                t = tokens(text)
                all_toks += t
                lines += [lineno] * len(t)
        segments.append((None, all_toks, lines))
    return _Indexed(str(path), sha256_file(path), segments)


@dataclass(frozen=True)
class Leak:
    id: str
    line: int | None
    split: str | None
    field: str  # "query" or "reference_answer"
    file: str
    file_line: int | None
    overlap: float
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class LeakageReport(ReportMixin):
    dataset: str | None
    dataset_version: str
    splits: list[str] | None
    files: list[dict[str, str]]
    n: int
    threshold: float
    min_tokens: int
    n_rows: int
    n_checked: int
    n_too_short: int
    leaks: list[Leak] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.leaks

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "assay.audit.leakage/1",
            "dataset": self.dataset,
            "dataset_version": self.dataset_version,
            "splits": self.splits,
            "files": self.files,
            "rule": {"n": self.n, "threshold": self.threshold, "min_tokens": self.min_tokens},
            "n_rows": self.n_rows,
            "n_texts_checked": self.n_checked,
            "n_texts_too_short": self.n_too_short,
            "n_leaked_rows": len({lk.id for lk in self.leaks}),
            "ok": self.ok,
            "leaks": [lk.to_dict() for lk in self.leaks],
        }

    def tabular(self) -> Tabular:
        rows = [
            [
                lk.id,
                lk.split or "-",
                lk.field,
                f"{lk.file}:{lk.file_line}" if lk.file_line else lk.file,
                f"{lk.overlap:.0%}",
            ]
            for lk in self.leaks
        ]
        which = ", ".join(self.splits) if self.splits else "every"
        return Tabular(
            title="Leakage audit: held-out rows found in prompts, few-shot or training files",
            header=["entry", "split", "field", "found in", "overlap"],
            rows=rows,
            footer=[
                f"{len({lk.id for lk in self.leaks})} of {self.n_rows} rows ({which} split) leaked "
                f"into {len(self.files)} file(s); rule: >= {self.threshold:.0%} of word "
                f"{self.n}-grams shared (whole text for {self.min_tokens}-{self.n - 1} tokens); "
                f"{self.n_too_short} texts under {self.min_tokens} tokens not checked",
                f"dataset {self.dataset_version}",
            ],
        )


def audit_leakage(
    dataset: Dataset,
    files: Sequence[str | Path],
    *,
    splits: Sequence[str] | None = DEFAULT_SPLITS,
    n: int = 5,
    threshold: float = 0.5,
    min_tokens: int = 3,
) -> LeakageReport:
    """Flag held-out rows whose question or reference answer appears in any of `files`.

    `splits` None checks every row. See the module docstring for the rule.
    """
    if n < 2:
        raise ValueError("n must be at least 2")
    if not 0 < threshold <= 1:
        raise ValueError("threshold must be in (0, 1]")
    if not 1 <= min_tokens <= n:
        raise ValueError(f"min_tokens must be between 1 and n ({n})")
    if not files:
        raise ValueError("give at least one file to search")
    indexed = [_read(Path(f)) for f in files]
    indexes = [(ix, ix.index(n)) for ix in indexed]
    rows = [e for e in dataset.entries if splits is None or e.split in set(splits)]
    leaks: list[Leak] = []
    checked = too_short = 0
    for e in rows:
        for fld, text in (("query", e.query), ("reference_answer", e.reference_answer)):
            if not text:
                continue
            toks = tokens(text)
            if len(toks) < min_tokens:
                too_short += 1
                continue
            checked += 1
            for ix, grams in indexes:
                if len(toks) < n:
                    hit, at = ix.find(toks)
                    if hit:
                        leaks.append(
                            Leak(
                                e.id, dataset.lines.get(e.id), e.split, fld, ix.path, at, 1.0, text
                            )
                        )
                    continue
                mine = list(dict.fromkeys(ngrams(toks, n)))
                found = [grams[g] for g in mine if g in grams]
                share = len(found) / len(mine)
                if share >= threshold:
                    where = Counter(found).most_common(1)[0][0]
                    leaks.append(
                        Leak(
                            e.id, dataset.lines.get(e.id), e.split, fld, ix.path, where, share, text
                        )
                    )
    return LeakageReport(
        dataset=dataset.path,
        dataset_version=dataset.version,
        splits=list(splits) if splits is not None else None,
        files=[{"path": ix.path, "sha256": ix.sha256} for ix in indexed],
        n=n,
        threshold=threshold,
        min_tokens=min_tokens,
        n_rows=len(rows),
        n_checked=checked,
        n_too_short=too_short,
        leaks=leaks,
    )
