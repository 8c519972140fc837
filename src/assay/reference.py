"""The tables of metrics and answer checks in docs/scores.md, rendered from the registries.

The page holds each table between two markers::

    <!-- registry:metrics -->
    | metric | kind: test | definition |
    ...
    <!-- /registry:metrics -->

`render_readme` replaces what lies between them with `metric_table()` / `check_table()`, and
`tests/test_docs.py` fails when the page differs from what the registries say, so a metric or
a check added, renamed or redescribed shows in the docs in the same commit. Only what assay
itself registers is listed (a plug-in's metric belongs in its own README). Regenerate with::

    python -m assay.reference docs/scores.md
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

__all__ = ["TABLES", "check_table", "metric_table", "render_readme"]

_TESTS = {
    "binary": "exact McNemar",
    "graded": "Wilcoxon over moved entries",
    "count": "one-sided sign test",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").strip()


def _builtin(module: str) -> bool:
    return module == "assay" or module.startswith("assay.")


def metric_table() -> str:
    """The built-in metric families as a Markdown table: name, kind (and its paired test),
    whether the default score table shows it, and the family's description."""
    from assay.metrics import families

    lines = [
        "| metric | kind: test | default table | definition |",
        "| --- | --- | --- | --- |",
    ]
    for f in families():
        if not _builtin(f.compute.__module__):
            continue
        kind = "binary" if f.binary else "graded"
        shown = "yes" if f.default is not None else ""
        lines.append(
            f"| `{f.pattern}` | {kind}: {_TESTS[kind]} | {shown} | {_cell(f.description)} |"
        )
    return "\n".join(lines)


def check_table() -> str:
    """The built-in answer checks as a Markdown table, in the order `assay check` shows them:
    name, kind (and its paired test), which way is better, whether it runs by default (on every
    answer, or on the entries its group applies to: SQL questions, entries with a principal),
    and the check's description."""
    from assay.judge.registry import check_names, get_check

    lines = [
        "| check | kind: test | better | default | definition |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name in check_names():
        c = get_check(name)
        if not _builtin(getattr(c.fn, "__module__", "") or ""):
            continue
        better = "higher" if c.higher_is_better else "lower"
        default = ("yes" if c.group == "answer" else f"on {c.group} entries") if c.default else ""
        lines.append(
            f"| `{c.name}` | {c.kind}: {_TESTS[c.kind]} | {better} | {default} | "
            f"{_cell(c.description)} |"
        )
    return "\n".join(lines)


TABLES = {"metrics": metric_table, "checks": check_table}
"""Marker name -> the function that renders its table."""


def render_readme(text: str) -> str:
    """``text`` with every registry table between its markers replaced by the current one.
    A marker pair missing from ``text`` is an error naming it."""
    out = text
    for name, render in TABLES.items():
        pattern = re.compile(
            rf"(<!-- registry:{name} -->\n)(.*?)(<!-- /registry:{name} -->)", re.DOTALL
        )
        if not pattern.search(out):
            raise ValueError(f"no <!-- registry:{name} --> ... <!-- /registry:{name} --> markers")
        table = render()

        def put(m: re.Match[str], table: str = table) -> str:
            return m.group(1) + table + "\n" + m.group(3)

        out = pattern.sub(put, out)
    return out


def main(argv: list[str] | None = None) -> int:
    """Rewrite the tables of the page given (default docs/scores.md) in place."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0] if args else "docs/scores.md")
    text = path.read_text(encoding="utf-8")
    new = render_readme(text)
    if new != text:
        from assay._io import write_text_atomic

        write_text_atomic(path, new)
        print(f"updated the registry tables in {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
