"""`sample_month`: the monthly fresh sample, drawn blind from a month of traffic.

Candidates (one per distinct normalised query + ``as_of``), strata allocated by largest
remainder, a seeded visiting order (``numpy.random.default_rng(seed)``), near-duplicates
(content-token Jaccard >= `NEAR_DUPLICATE`) dropped, and draft entries that carry no logged
hits, answer or feedback, so the experts stay blind: step by step in docs/production.md
("The monthly fresh sample").
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import write_jsonl_atomic
from assay.errors import MissingExtraError, UsageError
from assay.logs.classify import tokens
from assay.logs.store import connect
from assay.report import ReportMixin, Tabular

__all__ = [
    "NEAR_DUPLICATE",
    "NearDuplicates",
    "SampleReport",
    "allocate",
    "queue_in_workbench",
    "sample_month",
    "token_frequencies",
]

NEAR_DUPLICATE = 0.8
_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


class NearDuplicates:
    """Queries kept so far; `match(q)` gives the first one `q` nearly duplicates.

    Exact, without comparing `q` with every kept query (prefix filtering, as in all-pairs
    similarity joins): two token sets with Jaccard similarity >= t share at least
    ``ceil(t * |x|)`` tokens, so, with the tokens of every set in one global order, they share a
    token among the first ``|x| - ceil(t * |x|) + 1`` of each. Only those prefixes are indexed
    and probed; every query they bring up is then checked in full, in the order it was kept.
    The order puts rare tokens first when `frequencies` (token -> how many queries hold it) is
    given, so the lists probed are short; any order gives the same answers."""

    def __init__(
        self,
        queries: Iterable[str] = (),
        threshold: float = NEAR_DUPLICATE,
        *,
        frequencies: dict[str, int] | None = None,
    ):
        self.threshold = threshold
        self._freq = frequencies or {}
        self._toks: list[frozenset[str]] = []
        self._post: dict[str, list[int]] = defaultdict(list)
        self._found: dict[frozenset[str], int] = {}
        for q in queries:
            self.add(q)

    def _prefix(self, tk: frozenset[str]) -> list[str]:
        # at least ceil(t |x|) tokens in common (a hair lower against rounding: a longer prefix
        # only brings up more queries to check)
        need = max(1, math.ceil(self.threshold * len(tk) - 1e-9))
        ordered = sorted(tk, key=lambda t: (self._freq.get(t, 0), t))
        return ordered[: len(tk) - need + 1]

    def add(self, query: str) -> None:
        tk = tokens(query)
        i = len(self._toks)
        self._toks.append(tk)
        for t in self._prefix(tk):
            self._post[t].append(i)

    def match(self, query: str) -> int | None:
        """The index of the first kept query it nearly duplicates, or None."""
        tk = tokens(query)
        if not tk:
            return None
        hit = self._found.get(tk)  # kept queries only come after: a first match stays first
        if hit is not None:
            return hit
        found: set[int] = set()
        for t in self._prefix(tk):
            found.update(self._post.get(t, ()))
        n = len(tk)
        for i in sorted(found):
            other = self._toks[i]
            inter = len(tk & other)
            if inter / (n + len(other) - inter) >= self.threshold:
                self._found[tk] = i
                return i
        return None


def token_frequencies(queries: Iterable[str]) -> dict[str, int]:
    """How many of `queries` hold each content token (`NearDuplicates`' order: rare first)."""
    out: dict[str, int] = defaultdict(int)
    for q in queries:
        for t in tokens(q):
            out[t] += 1
    return dict(out)


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Proportional allocation of `n` draws over strata of `sizes` (largest remainder; at least
    one per non-empty stratum when n allows; never more than a stratum holds)."""
    live = {s: v for s, v in sizes.items() if v > 0}
    total = sum(live.values())
    n = min(n, total)
    if n <= 0:
        return dict.fromkeys(sizes, 0)
    out = dict.fromkeys(sizes, 0)
    floor_one = n >= len(live)
    if floor_one:
        for s in live:
            out[s] = 1
    rest = n - sum(out.values())
    if rest > 0:
        quota = {s: rest * v / total for s, v in live.items()}
        base = {s: min(int(q), live[s] - out[s]) for s, q in quota.items()}
        for s, b in base.items():
            out[s] += b
        left = n - sum(out.values())
        order = sorted(live, key=lambda s: (-(quota[s] - int(quota[s])), s))
        while left > 0:
            moved = False
            for s in order:
                if left and out[s] < live[s]:
                    out[s] += 1
                    left -= 1
                    moved = True
            if not moved:
                break
    return out


@dataclass
class SampleReport(ReportMixin):
    """What the draw did: the month, the strata (candidates, allocated, drawn), exclusions."""

    db: str
    month: str
    n: int
    seed: int
    stratify: str
    candidates: int
    strata: dict[str, dict[str, int]]
    excluded_near_duplicates: int
    excluded_in_golden: int
    entries: list[dict[str, Any]] = field(default_factory=list)
    out: str | None = None
    workbench: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "db": self.db,
            "month": self.month,
            "n": self.n,
            "drawn": len(self.entries),
            "seed": self.seed,
            "stratify": self.stratify,
            "candidates": self.candidates,
            "strata": self.strata,
            "excluded_near_duplicates": self.excluded_near_duplicates,
            "excluded_in_golden": self.excluded_in_golden,
            "near_duplicate_rule": f"token-set Jaccard >= {NEAR_DUPLICATE}",
            "out": self.out,
            "workbench": self.workbench,
        }

    def tabular(self) -> Tabular:
        rows = [
            [s, str(v["candidates"]), str(v["allocated"]), str(v["drawn"])]
            for s, v in sorted(self.strata.items())
        ]
        rows.append(
            [
                "overall",
                str(self.candidates),
                str(sum(v["allocated"] for v in self.strata.values())),
                str(len(self.entries)),
            ]
        )
        foot = [
            f"seed {self.seed}; {self.excluded_near_duplicates} near-duplicates of drawn queries "
            f"and {self.excluded_in_golden} of main-set entries left out (token-set Jaccard >= "
            f"{NEAR_DUPLICATE}); logged hits are not in the drafts"
        ]
        foot += drafts_footer(len(self.entries), self.out, self.workbench)
        return Tabular(
            f"Fresh sample of {self.month} ({self.stratify})",
            ["stratum", "candidates", "allocated", "drawn"],
            rows,
            foot,
        )


def _candidates(con: Any, where: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
    """One row per distinct (normalised query, as_of): the earliest logged."""
    return list(
        con.execute(
            "SELECT key, ts, query, norm, as_of, category, confidence FROM queries "
            f"WHERE {where} ORDER BY norm, as_of, ts, key",
            args,
        ).fetchall()
    )


def _first_per_query(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    last: tuple[str, str] | None = None
    for r in rows:
        k = (r[3], r[4])
        if k != last:
            out.append(r)
            last = k
    return out


def draft_entry(
    key: str, ts: str, query: str, as_of: str, category: str, confidence: float, **meta: Any
) -> dict[str, Any]:
    return {
        "id": f"log-{key[:12]}",
        "query": query,
        "category": category,
        "as_of": as_of,
        "source": "log",
        "label_tier": "draft",  # a logged question nobody has labelled yet
        "metadata": {"log_key": key, "logged_at": ts, "category_confidence": confidence, **meta},
    }


def sample_month(
    db: str | Path,
    month: str,
    *,
    n: int = 60,
    stratify: str = "category",
    seed: int = 7,
    golden: str | Path | None = None,
    out: str | Path | None = None,
) -> SampleReport:
    """Draw the fresh sample of `month` (``YYYY-MM``); writes draft entries to `out` when given."""
    if not _MONTH.match(month):
        raise UsageError(f"--month is YYYY-MM, not {month!r}")
    if n < 1:
        raise UsageError(f"--n must be at least 1, not {n}")
    if stratify not in ("category", "none"):
        raise UsageError(f"--stratify is category or none, not {stratify!r}")
    main: list[str] = []
    if golden is not None:
        from assay.dataset import load_dataset

        main = [e.query for e in load_dataset(golden).entries]
    with connect(db) as con:
        rows = _first_per_query(_candidates(con, "month = ?", [month]))
    rng = np.random.default_rng(seed)
    strata: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for r in rows:
        strata[r[5] if stratify == "category" else "all"].append(r)
    names = sorted(strata)
    alloc = allocate({s: len(strata[s]) for s in names}, n)
    in_main = NearDuplicates(main, frequencies=token_frequencies(main))
    kept = NearDuplicates()
    orders = {s: [strata[s][int(i)] for i in rng.permutation(len(strata[s]))] for s in names}
    pos = dict.fromkeys(names, 0)
    drawn: dict[str, list[tuple[Any, ...]]] = {s: [] for s in names}
    excl_dup = excl_main = 0

    def draw(s: str) -> bool:
        nonlocal excl_dup, excl_main
        order = orders[s]
        while pos[s] < len(order):
            r = order[pos[s]]
            pos[s] += 1
            if in_main.match(r[2]) is not None:
                excl_main += 1
                continue
            if kept.match(r[2]) is not None:
                excl_dup += 1
                continue
            kept.add(r[2])
            drawn[s].append(r)
            return True
        return False

    for s in names:
        for _ in range(alloc[s]):
            if not draw(s):
                break
    short = sum(alloc.values()) - sum(len(v) for v in drawn.values())
    while short > 0:
        live = sorted(
            (s for s in names if pos[s] < len(orders[s])),
            key=lambda s: (-(len(orders[s]) - pos[s]), s),
        )
        if not live:
            break
        for s in live:
            if short and draw(s):
                short -= 1
    entries: list[dict[str, Any]] = []
    for s in names:
        for key, ts, query, _norm, as_of, category, conf in sorted(drawn[s], key=lambda r: r[0]):
            e = draft_entry(key, ts, query, as_of, category, conf, month=month)
            e["split"] = "fresh"
            entries.append(e)
    from assay.dataset import Entry

    for e in entries:  # drafts are valid entries (evidence comes from the experts)
        Entry.model_validate(e)
    if out is not None:
        write_jsonl_atomic(out, entries)
    return SampleReport(
        db=str(db),
        month=month,
        n=n,
        seed=seed,
        stratify=stratify,
        candidates=len(rows),
        strata={
            s: {"candidates": len(strata[s]), "allocated": alloc[s], "drawn": len(drawn[s])}
            for s in names
        },
        excluded_near_duplicates=excl_dup,
        excluded_in_golden=excl_main,
        entries=entries,
        out=None if out is None else str(out),
    )


def drafts_footer(n: int, out: str | None, workbench: dict[str, Any] | None) -> list[str]:
    """The footer lines of a report that drafted `n` entries: where they went."""
    foot = [f"wrote {n} draft entries to {out}"] if out else []
    if workbench:
        foot.append(
            f"queued in the workbench: {workbench['added']} new items, {workbench['tasks']} tasks"
        )
    return foot


def queue_in_workbench(path: str | Path, url: str, *, overlap: int = 2) -> dict[str, Any]:
    """Queue the draft entries of `path` in the workbench at `url` for blind double labelling:
    each becomes an item with an evidence task and a reference task, `overlap` experts each
    (`assay.workbench.service.import_entries`)."""
    try:
        from assay.workbench.db import Database
        from assay.workbench.service import import_entries
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("workbench", "--to-workbench", exc.name or "sqlalchemy") from exc
    db = Database(url)
    try:
        db.migrate()
        return import_entries(db, path, overlap=overlap).to_dict()
    finally:
        db.dispose()
