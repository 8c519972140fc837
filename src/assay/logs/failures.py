"""`find_failures`: every production failure becomes one draft entry, ready for labelling.

Rules (a query fails when any rule it is checked against catches it):

- ``down``: the user gave ``feedback: "down"``;
- ``abstained``: the logged answer is a refusal (`assay.judge.detect_refusal`, checked at ingest);
- ``no_hits``: the retriever returned nothing;
- ``low_score``: the top-1 retrieval score is below ``min_score`` (default: the 5th percentile of
  the top-1 scores of the queries considered, so about one query in twenty at most).

Failing queries are deduplicated: first by normalised query text + ``as_of``, then near-duplicates
are merged into the earliest (`assay.logs.sample.NearDuplicates`, token-set Jaccard >= 0.8). Each
draft keeps the union of the rules that caught its queries and how many queries it stands for
(``metadata.failure_rules``, ``metadata.occurrences``). Queries that nearly duplicate an entry of
the main set (`golden`) are left out and counted. Drafts carry ``source: "log"`` and, like the
fresh sample, no logged hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import write_jsonl_atomic
from assay.errors import UsageError
from assay.logs.sample import NearDuplicates, draft_entry, drafts_footer, token_frequencies
from assay.logs.store import connect
from assay.report import ReportMixin, Tabular

__all__ = ["FAILURE_RULES", "FailureReport", "find_failures"]

FAILURE_RULES = ("down", "abstained", "no_hits", "low_score")


@dataclass
class FailureReport(ReportMixin):
    db: str
    rules: list[str]
    month: str | None
    min_score: float | None
    considered: int
    failing: int
    by_rule: dict[str, int]
    excluded_in_golden: int
    entries: list[dict[str, Any]] = field(default_factory=list)
    out: str | None = None
    workbench: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "db": self.db,
            "rules": self.rules,
            "month": self.month,
            "min_score": self.min_score,
            "considered": self.considered,
            "failing_queries": self.failing,
            "by_rule": self.by_rule,
            "candidates": len(self.entries),
            "excluded_in_golden": self.excluded_in_golden,
            "out": self.out,
            "workbench": self.workbench,
        }

    def tabular(self) -> Tabular:
        per_rule: dict[str, int] = dict.fromkeys(self.rules, 0)
        for e in self.entries:
            for r in e["metadata"]["failure_rules"]:
                per_rule[r] = per_rule.get(r, 0) + 1
        rows = [[r, str(self.by_rule.get(r, 0)), str(per_rule.get(r, 0))] for r in self.rules]
        rows.append(["overall", str(self.failing), str(len(self.entries))])
        foot = [
            f"{self.considered} queries considered"
            + (f" in {self.month}" if self.month else "")
            + (
                f"; low_score: top-1 score < {self.min_score:.4g}"
                if self.min_score is not None
                else ""
            )
            + f"; {self.excluded_in_golden} already in the main set"
        ]
        foot += drafts_footer(len(self.entries), self.out, self.workbench)
        return Tabular(
            "Production failures -> draft entries",
            ["rule", "failing queries", "candidates"],
            rows,
            foot,
        )


def find_failures(
    db: str | Path,
    *,
    rules: Sequence[str] = FAILURE_RULES,
    month: str | None = None,
    min_score: float | None = None,
    golden: str | Path | None = None,
    out: str | Path | None = None,
) -> FailureReport:
    """Draft entries for the failing queries of the store (of `month` when given)."""
    rules = list(dict.fromkeys(rules))
    unknown = [r for r in rules if r not in FAILURE_RULES]
    if unknown or not rules:
        raise UsageError(
            f"unknown failure rule(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(FAILURE_RULES)}"
        )
    main: list[str] = []
    if golden is not None:
        from assay.dataset import load_dataset

        main = [e.query for e in load_dataset(golden).entries]
    where, args = ("month = ?", [month]) if month else ("1 = 1", [])
    with connect(db) as con:
        considered = con.execute(f"SELECT COUNT(*) FROM queries WHERE {where}", args).fetchone()[0]
        if "low_score" in rules and min_score is None:
            scores = np.fromiter(
                (
                    s
                    for (s,) in con.execute(
                        f"SELECT top_score FROM queries WHERE {where} AND top_score IS NOT NULL",
                        args,
                    ).fetchall()
                ),
                dtype=np.float64,
            )
            min_score = float(np.percentile(scores, 5)) if len(scores) else None
        conds = []
        if "down" in rules:
            conds.append("feedback = 'down'")
        if "abstained" in rules:
            conds.append("abstained = 1")
        if "no_hits" in rules:
            conds.append("n_hits = 0")
        if "low_score" in rules and min_score is not None:
            conds.append("top_score < ?")
        extra = [min_score] if "low_score" in rules and min_score is not None else []
        rows = list(
            con.execute(
                "SELECT key, ts, query, norm, as_of, category, confidence, feedback, abstained, "
                f"n_hits, top_score FROM queries WHERE {where} AND ({' OR '.join(conds)}) "
                "ORDER BY ts, key",
                [*args, *extra],
            ).fetchall()
        )
    by_rule: dict[str, int] = dict.fromkeys(rules, 0)
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    order: list[tuple[str, str]] = []
    for key, ts, query, norm, as_of, cat, conf, fb, abst, n_hits, top in rows:
        caught = [
            r
            for r, hit in (
                ("down", fb == "down"),
                ("abstained", abst == 1),
                ("no_hits", n_hits == 0),
                (
                    "low_score",
                    min_score is not None and top is not None and top < min_score,
                ),
            )
            if r in rules and hit
        ]
        for r in caught:
            by_rule[r] += 1
        g = groups.get((norm, as_of))
        if g is None:
            g = groups[(norm, as_of)] = {
                "row": (key, ts, query, as_of, cat, conf),
                "rules": set(),
                "n": 0,
                "last": ts,
            }
            order.append((norm, as_of))
        g["rules"].update(caught)
        g["n"] += 1
        g["last"] = ts
    # rare tokens first in the near-duplicate index: the lists it probes stay short
    freq = token_frequencies([*main, *(groups[k]["row"][2] for k in order)])
    in_main = NearDuplicates(main, frequencies=freq)
    kept = NearDuplicates(frequencies=freq)
    merged: list[dict[str, Any]] = []
    excl_main = 0
    for k in order:
        g = groups[k]
        q = g["row"][2]
        if in_main.match(q) is not None:
            excl_main += 1
            continue
        i = kept.match(q)
        if i is not None:
            merged[i]["rules"] |= g["rules"]
            merged[i]["n"] += g["n"]
            merged[i]["last"] = max(merged[i]["last"], g["last"])
            continue
        kept.add(q)
        merged.append(g)
    entries = []
    for g in merged:
        key, ts, query, as_of, cat, conf = g["row"]
        entries.append(
            draft_entry(
                key,
                ts,
                query,
                as_of,
                cat,
                conf,
                failure_rules=[r for r in FAILURE_RULES if r in g["rules"]],
                occurrences=g["n"],
                last_logged_at=g["last"],
            )
        )
    if out is not None:
        write_jsonl_atomic(out, entries)
    return FailureReport(
        db=str(db),
        rules=rules,
        month=month,
        min_score=min_score if "low_score" in rules else None,
        considered=considered,
        failing=len(rows),
        by_rule=by_rule,
        excluded_in_golden=excl_main,
        entries=entries,
        out=None if out is None else str(out),
    )
