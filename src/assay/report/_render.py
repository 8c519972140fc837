"""The rendering base of every result type (re-exported by `assay.report`).

It lives in `stats` because `stats` is the bottom layer and imports nothing else of assay, yet its
results (agreement, calibration, ...) are reports too. Import it from `assay.report`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast, runtime_checkable

Format = Literal["table", "json", "markdown"]


@runtime_checkable
class Report(Protocol):
    """What every result type implements."""

    def to_dict(self) -> dict[str, Any]: ...

    def to_json(self, indent: int | None = 2) -> str: ...

    def to_table(self) -> Any: ...

    def to_markdown(self) -> str: ...

    def to_pandas(self) -> Any: ...


def json_ready(obj: Any) -> Any:
    """Plain JSON values: numpy scalars/arrays to Python, NaN/inf to None, tuples to lists,
    objects with ``to_dict`` through it. Floats keep full precision."""
    if obj is None or isinstance(obj, (bool, str, int)):
        return obj
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return json_ready(obj.to_dict())
    if isinstance(obj, Mapping):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj) if isinstance(obj, (set, frozenset)) else obj
        return [json_ready(v) for v in items]
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            return json_ready(obj.item())
        if isinstance(obj, np.ndarray):
            return json_ready(obj.tolist())
    except ImportError:  # pragma: no cover
        pass
    return str(obj)


@dataclass
class Tabular:
    """A table as people read it: a title, a header, rows of strings and a footer.

    ``emphasis`` names rows (by their first cell) shown in bold, such as the overall row;
    ``sections`` lists row indices after which a rule is drawn.
    """

    title: str
    header: list[str]
    rows: list[list[str]]
    footer: list[str] = field(default_factory=list)
    emphasis: set[str] = field(default_factory=lambda: {"overall"})
    sections: set[int] = field(default_factory=set)


def markdown_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], align: str | None = None
) -> str:
    """A GitHub-flavoured markdown table: first column left, the others right-aligned, or as
    ``align`` says, one letter per column (``"l"`` left, ``"r"`` right; e.g. ``"lrll"``)."""

    def esc(s: str) -> str:
        return str(s).replace("|", "\\|").replace("\n", " ")

    if align is None:
        align = "l" + "r" * (len(header) - 1)
    lines = [
        "| " + " | ".join(esc(h) for h in header) + " |",
        "|" + "|".join("---:" if a == "r" else "---" for a in align.ljust(len(header), "l")) + "|",
    ]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def rich_table(t: Tabular) -> Any:
    from rich.table import Table

    table = Table(title=t.title or None, title_justify="left")
    for i, h in enumerate(t.header):
        table.add_column(h, justify="left" if i == 0 else "right", no_wrap=True, min_width=len(h))
    for i, r in enumerate(t.rows):
        table.add_row(
            *r,
            style="bold" if r and r[0] in t.emphasis else None,
            end_section=i in t.sections,
        )
    if t.footer:
        table.caption = "\n".join(t.footer)
    return table


class ReportMixin:
    """Derive ``to_json``/``to_table``/``to_markdown`` from ``to_dict`` and ``tabular``."""

    def to_dict(self) -> dict[str, Any]:
        """A dataclass report's fields, in order (a report of another shape overrides it)."""
        return dataclasses.asdict(cast(Any, self))

    def tabular(self) -> Tabular | list[Tabular]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _tables(self) -> list[Tabular]:
        t = self.tabular()
        return t if isinstance(t, list) else [t]

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(json_ready(self.to_dict()), indent=indent, allow_nan=False)

    def to_markdown(self) -> str:
        parts: list[str] = []
        for t in self._tables():
            block = (f"**{t.title}**\n\n" if t.title else "") + markdown_table(
                t.header,
                [[f"**{r[0]}**", *r[1:]] if r and r[0] in t.emphasis else r for r in t.rows],
            )
            if t.footer:
                block += "\n" + "\n".join(t.footer) + "\n"
            parts.append(block)
        return "\n".join(parts)

    def to_table(self) -> Any:
        tables = [rich_table(t) for t in self._tables()]
        if len(tables) == 1:
            return tables[0]
        from rich.console import Group

        return Group(*tables)

    def to_pandas(self) -> Any:
        """The report's table(s) as a `pandas.DataFrame` (pandas is imported here, not before).

        Built from ``tabular()``: one row per table row, one column per header cell. A column
        whose cells are all numbers (``-`` or empty: missing) holds floats; a column of
        ``value [low, high]`` cells becomes three float columns, ``name``, ``name low`` and
        ``name high``. With several tables the frame gains a leading ``table`` column (each
        table's title) and the union of their columns.
        """
        return tabular_frame(self._tables())


PANDAS_MISSING = (
    "to_pandas() needs pandas, which assay does not install by itself: "
    "pip install 'assay[pandas]' (or pip install pandas)"
)

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?%?"
_CELL_NUM = re.compile(rf"^({_NUM})$")
_CELL_CI = re.compile(rf"^({_NUM}) \[({_NUM}), ({_NUM})\]$")
_MISSING_CELLS = {"", "-", "n/a", "None", "nan"}


def _number(text: str) -> float:
    return float(text[:-1]) / 100.0 if text.endswith("%") else float(text)


def _typed_columns(header: Sequence[str], rows: Sequence[Sequence[str]]) -> dict[str, list[Any]]:
    """Columns of one table, numbers as floats where every cell of a column is one."""
    cols: dict[str, list[Any]] = {}
    for j, name in enumerate(header):
        cells = [str(r[j]).strip() if j < len(r) else "" for r in rows]
        present = [c for c in cells if c not in _MISSING_CELLS]
        if present and all(_CELL_NUM.match(c) for c in present):
            cols[name] = [None if c in _MISSING_CELLS else _number(c) for c in cells]
        elif present and all(_CELL_NUM.match(c) or _CELL_CI.match(c) for c in present):
            value: list[float | None] = []
            low: list[float | None] = []
            high: list[float | None] = []
            for c in cells:
                m = _CELL_CI.match(c)
                if m:
                    value.append(_number(m.group(1)))
                    low.append(_number(m.group(2)))
                    high.append(_number(m.group(3)))
                else:
                    value.append(None if c in _MISSING_CELLS else _number(c))
                    low.append(None)
                    high.append(None)
            cols[name], cols[f"{name} low"], cols[f"{name} high"] = value, low, high
        else:
            cols[name] = cells
    return cols


def tabular_frame(tables: Sequence[Tabular]) -> Any:
    """`Tabular` tables as one `pandas.DataFrame` (see `ReportMixin.to_pandas`)."""
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError(PANDAS_MISSING) from exc
    if len(tables) == 1:
        t = tables[0]
        return pd.DataFrame(_typed_columns(t.header, t.rows))
    frames = [
        pd.DataFrame({"table": [t.title] * len(t.rows)} | _typed_columns(t.header, t.rows))
        for t in tables
    ]
    return pd.concat(frames, ignore_index=True, sort=False)


def render(report: Report, fmt: Format | str = "table") -> str:
    """A report as text: ``json`` (full precision), ``markdown``, or ``table`` (rich, plain text)."""
    fmt = str(fmt)
    if fmt == "json":
        return report.to_json() + "\n"
    if fmt == "markdown":
        text = report.to_markdown()
        return text if text.endswith("\n") else text + "\n"
    if fmt == "table":
        from io import StringIO

        from rich.console import Console

        buf = StringIO()
        Console(file=buf, width=200, soft_wrap=False, color_system=None).print(report.to_table())
        return buf.getvalue()
    raise ValueError(f"unknown format {fmt!r}: use table, json or markdown")
