"""`traffic_report`: what production traffic looked like, per period and per category.

Every figure (``n``, ``no_hits_rate``, ``abstain_rate``, ``down_rate``, the latency percentiles,
``drift``, ``retrieval``) and its denominator, the two share tables and how the report is
computed (SQL over the store; only golden matches come back to Python): docs/production.md
("Report"). ``drift``'s ``pvalue_holm`` is Holm-adjusted over every pair of consecutive periods
shown (``family`` of them).

A query the neighbours or a rule placed with a confidence below the threshold
(`assay.logs.classify.Threshold`: ``min_confidence``, or chosen on the golden set by held-out
accuracy, or the default without one) is in the ``uncertain`` bucket in every table instead of
its category. The gap against the golden set is over the confident placements only (``traffic
(confident)``: a category's share of them), and says how many were uncertain; the threshold and
how it was chosen are in the report.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from assay._version import __version__
from assay.errors import UsageError
from assay.logs.classify import (
    METHODS,
    TARGET_ACCURACY,
    UNCERTAIN,
    Threshold,
    check_golden_categories,
    choose_threshold,
    golden_pairs,
)
from assay.logs.model import normalize_query
from assay.logs.store import connect
from assay.report import ReportMixin, Tabular
from assay.stats.drift import ks_two_sample
from assay.stats.multiple import holm

if TYPE_CHECKING:
    from assay.dataset import Dataset

__all__ = [
    "CategoryShares",
    "Period",
    "TrafficReport",
    "category_shares",
    "resolve_threshold",
    "traffic_report",
]

By = Literal["month", "week"]


@dataclass(frozen=True)
class CategoryShares:
    """Each category's share of the *confidently* placed traffic (`shares`, summing to 1 when
    any placement is confident), and what was left out: `uncertain` of the `n` logged queries
    were placed by neighbours or a rule below `threshold` (as the gap table of `traffic_report`
    reads them)."""

    shares: dict[str, float]
    n: int
    uncertain: int
    threshold: Threshold

    def note(self) -> str:
        """One line for a report: how many placements were left out and why."""
        how = {"held-out": "chosen on the golden set by held-out accuracy"}.get(
            self.threshold.how, self.threshold.how
        )
        return (
            f"traffic shares over the {self.n - self.uncertain} confident placements of {self.n} "
            f"logged queries; {self.uncertain} uncertain (confidence < "
            f"{self.threshold.value:.2f}, {how}) left out"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "shares": self.shares,
            "n": self.n,
            "uncertain": self.uncertain,
            "threshold": self.threshold.value,
            "threshold_how": self.threshold.how,
        }


def _load(path: str | Path) -> Dataset:
    from assay.dataset import load_dataset

    ds = load_dataset(path)
    check_golden_categories(ds.entries, path)
    return ds


def resolve_threshold(
    golden: Dataset | None, min_confidence: float | None, target_accuracy: float | None
) -> Threshold:
    """The uncertainty threshold: `min_confidence` when given, else chosen on `golden` (a loaded
    dataset) by held-out accuracy (`target_accuracy`), else the default."""
    if min_confidence is not None:
        if not 0 <= min_confidence <= 1:
            raise UsageError(f"min_confidence is in [0, 1], not {min_confidence}")
        return Threshold(min_confidence, "option")
    if golden is not None:
        target = TARGET_ACCURACY if target_accuracy is None else target_accuracy
        if not 0 < target <= 1:
            raise UsageError(f"target_accuracy is in (0, 1], not {target}")
        return choose_threshold(golden_pairs(golden.entries), target=target)
    return choose_threshold([])


def _placed_view(con: Any, threshold: Threshold) -> None:
    """TEMP VIEW ``placed``: the queries, a placement below `threshold` in `UNCERTAIN`."""
    con.execute(  # the threshold is a float: its repr is exact SQL
        "CREATE TEMP VIEW placed AS SELECT * REPLACE (CASE WHEN method IN ('nearest', "
        f"'rule') AND confidence < {float(threshold.value)!r} THEN '{UNCERTAIN}' "
        "ELSE category END AS category) FROM queries"
    )


def category_shares(
    db: str | Path,
    *,
    golden: str | Path | Dataset | None = None,
    min_confidence: float | None = None,
    target_accuracy: float | None = None,
) -> CategoryShares:
    """Share of each category in the confidently placed traffic, and how many placements were
    uncertain (the threshold as `traffic_report` sets it: `min_confidence`, else chosen on
    `golden` (a dataset's path, or the dataset) by held-out accuracy, else the default)."""
    ds = _load(golden) if isinstance(golden, str | Path) else golden
    if ds is not None:
        check_golden_categories(ds.entries, None)
    threshold = resolve_threshold(ds, min_confidence, target_accuracy)
    with connect(db) as con:
        _placed_view(con, threshold)
        rows = con.execute("SELECT category, COUNT(*) FROM placed GROUP BY category").fetchall()
    n = sum(int(k) for _, k in rows)
    unsure = sum(int(k) for c, k in rows if c == UNCERTAIN)
    sure = n - unsure
    shares = {c: k / sure for c, k in sorted(rows) if c != UNCERTAIN} if sure else {}
    return CategoryShares(shares=shares, n=n, uncertain=unsure, threshold=threshold)


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


# per period and category (and per period: category NULL), in one GROUP BY
_STATS = """
SELECT {col} AS period, category, grouping(category) AS whole,
       count(*) AS n,
       count(*) FILTER (WHERE n_hits = 0) AS no_hits,
       count(abstained) AS answered,
       count(*) FILTER (WHERE abstained = 1) AS abstained,
       count(*) FILTER (WHERE feedback = 'down') AS down,
       count(feedback) AS feedback_n,
       quantile_cont(latency_ms, 0.5) AS p50,
       quantile_cont(latency_ms, 0.95) AS p95
FROM placed {where}
GROUP BY GROUPING SETS (({col}, category), ({col}))
ORDER BY period, whole DESC, category
"""


def _stats(row: tuple[Any, ...], total: int | None = None) -> dict[str, Any]:
    """A period's (or a category's) figures from its `_STATS` row."""
    n, no_hits, answered, abstained, down, feedback_n, p50, p95 = row[3:]
    d: dict[str, Any] = {
        "n": n,
        "no_hits_rate": _rate(no_hits, n),
        "answered": answered,
        "abstain_rate": _rate(abstained, answered),
        "down_rate": _rate(down, n),
        "feedback_n": feedback_n,
        "down_share_of_feedback": _rate(down, feedback_n),
        "latency_p50": None if p50 is None else float(p50),
        "latency_p95": None if p95 is None else float(p95),
    }
    if total is not None:
        d = {"share": _rate(n, total), **d}
    return d


@dataclass
class Period:
    period: str
    stats: dict[str, Any]
    categories: dict[str, dict[str, Any]]
    drift: dict[str, Any] | None = None
    retrieval: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "period": self.period,
            **self.stats,
            "drift": self.drift,
            "categories": self.categories,
            "retrieval": self.retrieval,
        }


@dataclass
class TrafficReport(ReportMixin):
    """The traffic report: category shares (traffic vs golden), then one row per period."""

    db: str
    by: str
    n: int
    traffic_shares: dict[str, float]
    golden_shares: dict[str, float] | None
    periods: list[Period]
    k: int
    golden_version: str | None = None
    classifier: dict[str, Any] | None = None
    # how queries were classified: method -> share of traffic, and per category
    methods: dict[str, float] = field(default_factory=dict)
    methods_by_category: dict[str, dict[str, int]] = field(default_factory=dict)
    # placements below the threshold: the uncertain bucket (in traffic_shares, not in confident)
    threshold: Threshold | None = None
    uncertain: int = 0
    confident_shares: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "db": self.db,
            "by": self.by,
            "n": self.n,
            "k": self.k,
            "assay_version": __version__,
            "golden_version": self.golden_version,
            "classifier": self.classifier,
            "category_shares": {
                c: {
                    "traffic": self.traffic_shares.get(c, 0.0),
                    "confident": None if c == UNCERTAIN else self.confident_shares.get(c, 0.0),
                    "golden": None
                    if self.golden_shares is None or c == UNCERTAIN
                    else self.golden_shares.get(c, 0.0),
                }
                for c in self._cats()
            },
            "uncertain": {
                "n": self.uncertain,
                "share": _rate(self.uncertain, self.n),
                **(self.threshold.to_dict() if self.threshold else {}),
            },
            "classified_by": {
                "shares": self.methods,
                "categories": self.methods_by_category,
            },
            "periods": [p.to_dict() for p in self.periods],
        }

    def _cats(self) -> list[str]:
        """Categories in name order, the uncertain bucket last."""
        cats = set(self.traffic_shares) | set(self.golden_shares or {})
        return sorted(cats - {UNCERTAIN}) + ([UNCERTAIN] if UNCERTAIN in cats else [])

    def tabular(self) -> list[Tabular]:
        def pct(v: float | None) -> str:
            return "-" if v is None else f"{100 * v:.1f}%"

        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v:.0f}"

        def share_row(c: str) -> list[str]:
            if c == UNCERTAIN:
                return [c, pct(self.traffic_shares.get(c, 0.0)), "-", "-", "-"]
            mine = self.confident_shares.get(c, 0.0)
            gold = None if self.golden_shares is None else self.golden_shares.get(c, 0.0)
            gap = "-" if gold is None else f"{100 * (mine - gold):+.1f} pts"
            return [c, pct(self.traffic_shares.get(c, 0.0)), pct(mine), pct(gold), gap]

        notes = [f"{self.n} queries in {self.db}"]
        if self.threshold is not None:
            notes.append(
                f"gap: over the {self.n - self.uncertain} confident placements; "
                f"{self.uncertain} ({pct(_rate(self.uncertain, self.n))}) uncertain, left out: "
                f"placed by neighbours or a rule at {self.threshold.describe()}"
            )
        shares = Tabular(
            "Category share: traffic vs golden set",
            ["category", "traffic", "traffic (confident)", "golden", "gap"],
            [share_row(c) for c in self._cats()],
            notes,
        )
        how = Tabular(
            "How queries were classified",
            ["category", "n", *METHODS],
            [
                [
                    c,
                    str(sum(by.values())),
                    *(pct(_rate(by.get(m, 0), sum(by.values()))) for m in METHODS),
                ]
                for c, by in sorted(
                    self.methods_by_category.items(), key=lambda kv: (kv[0] == UNCERTAIN, kv[0])
                )
            ]
            + [["all", str(self.n), *(pct(self.methods.get(m, 0.0)) for m in METHODS)]],
            [
                "golden: the query is a golden entry's (same text, or token-set Jaccard >= "
                "0.8); nearest: its nearest golden neighbours' vote; rule: a wording rule; "
                "none: no evidence (other); uncertain: placed by neighbours or a rule below the "
                "confidence threshold"
            ],
        )
        head = [
            "period",
            "n",
            UNCERTAIN,
            "no hits",
            "abstain",
            "down",
            "p50 ms",
            "p95 ms",
            "drift D (p Holm)",
        ]
        rows = []
        for p in self.periods:
            s = p.stats
            drift = (
                "-"
                if p.drift is None
                else f"{p.drift['statistic']:.3f} ({p.drift.get('pvalue_holm', p.drift['pvalue']):.2g})"
            )
            rows.append(
                [
                    p.period,
                    str(s["n"]),
                    pct(p.categories.get(UNCERTAIN, {}).get("share", 0.0)),
                    pct(s["no_hits_rate"]),
                    pct(s["abstain_rate"]),
                    pct(s["down_rate"]),
                    ms(s["latency_p50"]),
                    ms(s["latency_p95"]),
                    drift,
                ]
            )
        per = Tabular(
            f"Traffic per {self.by}",
            head,
            rows,
            [
                "drift: two-sample KS of top-1 retrieval scores vs the previous period; p "
                "Holm-adjusted over every pair of consecutive periods shown"
            ],
        )
        out = [shares, how, per]
        if self.periods:
            last = self.periods[-1]
            out.append(
                Tabular(
                    f"{last.period} per category",
                    ["category", "n", "share", "no hits", "abstain", "down", "p50 ms", "p95 ms"],
                    [
                        [
                            c,
                            str(v["n"]),
                            pct(v["share"]),
                            pct(v["no_hits_rate"]),
                            pct(v["abstain_rate"]),
                            pct(v["down_rate"]),
                            ms(v["latency_p50"]),
                            ms(v["latency_p95"]),
                        ]
                        for c, v in sorted(
                            last.categories.items(), key=lambda kv: (kv[0] == UNCERTAIN, kv[0])
                        )
                    ],
                )
            )
        ret = [p for p in self.periods if p.retrieval and p.retrieval.get("matched")]
        got = [p.retrieval for p in ret if p.retrieval]
        if ret:
            names: list[str] = next((r["metrics"] for r in got[::-1] if r["metrics"]), [])
            left = sum(r.get("left_out", 0) for r in got)
            rows = []
            for p in ret:
                r = p.retrieval or {}
                for c, vals in r["categories"].items():
                    rows.append(
                        [p.period, c, str(vals["n"])]
                        + ["-" if vals.get(m) is None else f"{vals[m]:.3f}" for m in names]
                    )
            out.append(
                Tabular(
                    "Retrieval on traffic that matches golden entries",
                    ["period", "category", "n", *names],
                    rows,
                    ["matched by normalised query text and as_of; logged hits are the run"]
                    + (
                        [
                            f"{left} matched queries left out: their golden entries' gold does "
                            "not resolve on the chunk table (--skip-missing)"
                        ]
                        if left
                        else []
                    ),
                )
            )
        return out


def _retrieval(
    con: Any,
    col: str,
    golden: Any,
    chunks: Any,
    k: int,
    *,
    level: str = "chunk",
    skip_stale: bool = False,
) -> dict[str, dict[str, Any]]:
    """Per period: the retrieval scores of the logged queries that match golden entries.

    The golden set's gold is resolved once, under the entries' own ids, before any logged query
    is scored (when a logged query asks a golden question at all): gold that does not resolve
    stops the report with each anchor named once (or, with `skip_stale`, its entries are left
    out of every period and counted)."""
    from assay.dataset import Entry
    from assay.gold.resolve import resolve_gold
    from assay.runs.model import Run
    from assay.score import score_retrieval

    by_norm: dict[str, list[Entry]] = defaultdict(list)
    for e in golden.entries:
        by_norm[normalize_query(e.query)].append(e)
    norms = sorted(by_norm)
    matched: dict[str, list[tuple[Entry, dict[str, Any]]]] = defaultdict(list)
    for i in range(0, len(norms), 500):
        part = norms[i : i + 500]
        cur = con.execute(
            f"SELECT {col}, key, norm, as_of, hits FROM queries "
            f"WHERE norm IN ({','.join('?' * len(part))}) ORDER BY {col}, ts, key",
            part,
        ).fetchall()
        for period, key, norm, as_of, hits_json in cur:
            for e in by_norm[norm]:
                if e.as_of is None or e.as_of.isoformat() == as_of:
                    hits = [
                        {"chunk_id": h["chunk_id"]}
                        if h["score"] is None
                        else {"chunk_id": h["chunk_id"], "score": h["score"]}
                        for h in json.loads(hits_json)
                    ]
                    matched[period].append((e, {"id": f"{key}:{e.id}", "retrieved": hits}))
                    break
    if not matched:  # no logged query asks a golden question: no gold to read
        return {}
    lvl: Any = level
    gold = resolve_gold(
        golden.entries,
        chunks=chunks,
        level=lvl,
        file=golden.path or "<golden>",
        lines=golden.lines,
        skip_stale=skip_stale,
    )
    stale = gold.excluded
    out: dict[str, dict[str, Any]] = {}
    for period, every in matched.items():
        pairs = [(e, row) for e, row in every if e.id not in stale]
        if not pairs:  # every matched query asks an entry left out (`skip_stale`)
            out[period] = {"matched": len(every), "scored": 0, "left_out": len(every)}
            out[period].update(metrics=[], overall=None, categories={})
            continue
        entries = [e.model_copy(update={"id": row["id"]}) for e, row in pairs]
        run = Run.from_rows([row for _, row in pairs])
        s = score_retrieval(entries, run, k=k, chunks=chunks, allow_missing=True, level=lvl)
        names = s.metric_names
        out[period] = {
            "matched": len(every),
            "scored": len(s.ids),
            "left_out": len(every) - len(pairs),
            "metrics": names,
            "overall": None
            if s.overall is None
            else {"n": s.overall.n, **{m: s.overall.values[m] for m in names}},
            "categories": {
                c: {"n": row.n, **{m: row.values[m] for m in names}}
                for c, row in sorted(s.categories.items())
                if row.n
            },
        }
    return out


def traffic_report(
    db: str | Path,
    *,
    by: By = "month",
    golden: str | Path | None = None,
    chunks: str | Path | None = None,
    k: int = 5,
    periods: Sequence[str] | None = None,
    level: str = "chunk",
    skip_stale: bool = False,
    min_confidence: float | None = None,
    target_accuracy: float | None = None,
) -> TrafficReport:
    """The traffic report of a log store (see the module's docstring for every definition).

    `golden` (a dataset) adds its category shares and the retrieval metrics of matching traffic;
    `chunks` (a chunk table) resolves anchor gold onto chunk ids; `periods` keeps only those.
    `level` and `skip_stale` are `assay.score.score_retrieval`'s: page-level metrics, and entries
    whose gold does not resolve on the chunk table left out instead of stopping the report.

    `min_confidence` is the threshold below which a neighbour's or a rule's placement is
    uncertain; None chooses it on `golden` by held-out accuracy (`target_accuracy`, default
    `assay.logs.classify.TARGET_ACCURACY`), or takes the default without a golden set.
    """
    if by not in ("month", "week"):
        raise UsageError(f"--by is month or week, not {by!r}")
    if k < 1:
        raise UsageError(f"k must be at least 1, not {k}")
    table = None
    ds = _load(golden) if golden is not None else None
    threshold = resolve_threshold(ds, min_confidence, target_accuracy)
    if chunks is not None:
        from assay.corpus import load_chunks

        table = load_chunks(chunks)
    with connect(db) as con:
        _placed_view(con, threshold)
        total = con.execute("SELECT COUNT(*) FROM queries").fetchone()[0]
        meta = con.execute("SELECT value FROM meta WHERE key = 'classifier'").fetchone()
        stats = con.execute(_STATS.format(col=by, where="")).fetchall()
        out: list[Period] = []
        prev: tuple[str, Any] | None = None
        for i, row in enumerate(stats):
            if not row[2]:
                continue  # a category row: read with its period's row
            name, n = row[0], row[3]
            cats = {}
            for r in stats[i + 1 :]:
                if r[0] != name or r[2]:
                    break
                cats[r[1]] = _stats(r, n)
            scores = con.execute(
                f"SELECT top_score FROM queries WHERE {by} = ? AND top_score IS NOT NULL",
                [name],
            ).fetchnumpy()["top_score"]
            drift = None
            if prev is not None:
                ks = ks_two_sample(scores, prev[1])
                if ks is not None:
                    drift = {"vs": prev[0], **ks.to_dict()}
            prev = (name, scores)
            if periods and name not in periods:
                continue
            out.append(Period(name, _stats(row), dict(sorted(cats.items())), drift))
        # every consecutive pair of periods is one test: Holm over the family shown, so a long
        # history does not find drift by chance somewhere
        tested = [p for p in out if p.drift is not None]
        adjusted = holm([p.drift["pvalue"] for p in tested if p.drift is not None])
        for p, adj in zip(tested, adjusted, strict=True):
            assert p.drift is not None
            p.drift["pvalue_holm"] = float(adj)
            p.drift["family"] = len(tested)
        if ds is not None:
            ret = _retrieval(con, by, ds, table, k, level=level, skip_stale=skip_stale)
            for p in out:
                p.retrieval = ret.get(p.period, {"matched": 0})
        shares = con.execute("SELECT category, COUNT(*) FROM placed GROUP BY category").fetchall()
        how = con.execute(
            "SELECT category, method, COUNT(*) FROM placed GROUP BY category, method"
        ).fetchall()
    by_cat: dict[str, dict[str, int]] = defaultdict(dict)
    for c, m, n in how:
        by_cat[c][m] = int(n)
    methods = Counter[str]()
    for _c, m, n in how:
        methods[m] += int(n)
    golden_shares = None
    if ds is not None:
        cnt = Counter(e.category for e in ds.entries)
        golden_shares = (
            {c: v / len(ds.entries) for c, v in sorted(cnt.items())} if ds.entries else {}
        )
    unsure = sum(int(n) for c, n in shares if c == UNCERTAIN)
    sure = total - unsure
    return TrafficReport(
        db=str(db),
        by=by,
        n=total,
        traffic_shares={c: n / total for c, n in sorted(shares)} if total else {},
        golden_shares=golden_shares,
        periods=out,
        k=k,
        golden_version=ds.version if ds is not None else None,
        classifier=json.loads(meta[0]) if meta else None,
        methods={m: methods[m] / total for m in METHODS if methods[m]} if total else {},
        methods_by_category={c: dict(sorted(v.items())) for c, v in sorted(by_cat.items())},
        threshold=threshold,
        uncertain=unsure,
        confident_shares={c: n / sure for c, n in sorted(shares) if c != UNCERTAIN} if sure else {},
    )
