"""One result and report layer: every result type renders the same four ways.

A *report* is any result object with ``to_dict`` (JSON-ready, full float precision),
``to_json``, ``to_table`` (a rich renderable for people) and ``to_markdown`` (for pull
requests). The easy way to be one is to subclass `ReportMixin` and implement ``to_dict`` and
``tabular`` (a `Tabular`: title, header, rows, footer): JSON, markdown and the rich table then
come for free and look alike across commands. `render` turns a report into text in a named
format, and is what every CLI command calls.

Conventions: JSON keeps full precision (tables round for people); NaN and infinities are null;
an interval is always `Interval.to_dict()`; an undefined value is None with a note.
"""

from __future__ import annotations

from assay.report._render import (
    Format,
    Report,
    ReportMixin,
    Tabular,
    json_ready,
    markdown_table,
    render,
    rich_table,
)
from assay.report.interval import Interval, undefined

__all__ = [
    "Format",
    "Interval",
    "Report",
    "ReportMixin",
    "Tabular",
    "json_ready",
    "markdown_table",
    "render",
    "rich_table",
    "undefined",
]
