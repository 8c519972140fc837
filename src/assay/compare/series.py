"""Per-entry series: what every comparison, gate, leaderboard and ledger entry is made of.

A `Series` is one score of one run: a name, a kind, one value per entry id, the entries it
abstained on, and which direction is better. The kind chooses the paired test a comparison runs
on it (`assay.compare.compare_arrays`):

    binary   0/1 per entry                 exact McNemar on the entries that flipped
    graded   a value in [0, 1]             Wilcoxon signed-rank over the entries that moved
                                           (a sign-flip permutation test as a second opinion)
    count    a non-negative integer        exact one-sided sign test: did more entries move the
                                           harmful way than the other (`assay.stats.counts`)

An abstention (None; NaN in the array) says the score does not apply to that entry (a check on
an unanswerable question, numbers_verified without a chunk table). A comparison leaves an entry
out of a series' pairs when either run abstained on it, and counts it.

Producers, by name (`describe` reads a name, `series_for` computes them):

* every registered retrieval metric (``complete@5``, ``recall@5``, ``mrr``, a plug-in's), from
  one `score_retrieval` call per run and level: the shared context is built once however many
  metrics are asked for;
* every registered answer check (``answer_correct``, ``numbers_verified``, ``key_fact_recall``,
  a plug-in's), from one pass of the checks over the run (`assay.judge.check_rows`);
* the LLM judge's verdicts on one question, from a judged-answers file (`series_from_judged`);
* anything else: build a `Series` from a mapping of entry id to value (`Series.from_values`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay._registry import plugin_names
from assay.metrics._registry import MetricError, MetricFamily

if TYPE_CHECKING:
    from assay.corpus import ChunkTable
    from assay.dataset import Dataset, Entry, FreshSession
    from assay.gold import GoldIndex
    from assay.judge.judged import JudgedAnswers
    from assay.runs import Run
    from assay.runs.corpus import RunTable
    from assay.score import RetrievalScores

__all__ = [
    "KINDS",
    "RunSeries",
    "Series",
    "SeriesError",
    "SeriesInfo",
    "SeriesKind",
    "describe",
    "series_for",
    "series_from_checks",
    "series_from_judged",
    "series_from_scores",
    "series_names",
]

OVERALL = "overall"
"""The row of every entry, beside the rows of each group (`RunSeries.groups`)."""

SeriesKind: TypeAlias = Literal["binary", "graded", "count"]
KINDS: tuple[str, ...] = ("binary", "graded", "count")

JUDGE_PREFIX = "judge:"
_CHECKS = "assay.judge.registry"  # the check registry's module


class SeriesError(MetricError):
    """A series that cannot be: an unknown name, a value outside its kind, misaligned ids (a
    `MetricError`, so a `UsageError` and a `ValueError`: exit 2 on the command line)."""


@dataclass(frozen=True, slots=True)
class SeriesInfo:
    """What a series name means: its canonical name, kind, direction and where it comes from
    (``metric``: a registered retrieval metric; ``check``: a registered answer check;
    ``judge``: the LLM judge's verdicts; ``given``: built by the caller)."""

    name: str
    kind: SeriesKind
    higher_is_better: bool = True
    source: str = "given"
    description: str = ""
    ceiling: int | None = None  # a count of harms: a gate fails when a run's total exceeds it

    @property
    def binary(self) -> bool:
        return self.kind == "binary"


def _check_kind(name: str, kind: str) -> SeriesKind:
    if kind not in KINDS:
        raise SeriesError(f"series {name!r}: unknown kind {kind!r}; kinds: {', '.join(KINDS)}")
    return kind  # type: ignore[return-value]


def describe(name: str, *, k: int | None = None) -> SeriesInfo:
    """Read a series name: a registered retrieval metric (a bare cutoff family takes ``k``:
    ``complete`` -> ``complete@5``), a registered answer check, or ``judge:QUESTION``.

    A name registered both as a metric family and as a check is refused as ambiguous; an unknown
    name is a `SeriesError` listing the metrics and the checks.
    """
    from assay.metrics import MetricError, families, listing, parse

    text = name.strip()
    if text.startswith(JUDGE_PREFIX) and len(text) > len(JUDGE_PREFIX):
        return SeriesInfo(text, "binary", True, "judge", "the LLM judge's verdict")
    family = text.split("@", 1)[0].strip().lower()
    metric = next((f for f in families() if f.name == family), None)
    is_metric = metric is not None
    is_check = _names_a_check(text, metric)
    if is_metric and is_check:
        raise SeriesError(
            f"{text!r} is both a registered metric and a registered check; rename one"
        )
    if is_check:
        from assay.judge.registry import get_check

        c = get_check(text)
        return SeriesInfo(
            c.name, c.kind, c.higher_is_better, "check", c.description, getattr(c, "ceiling", None)
        )
    try:
        m = parse(text, k=k)
    except MetricError as exc:
        if is_metric:
            raise
        from assay.judge.registry import check_names

        raise SeriesError(
            f"unknown metric or check {text!r}; registered metrics: {listing()}; registered "
            f"checks: {', '.join(check_names())}"
        ) from exc
    kind: SeriesKind = "binary" if m.binary else "graded"
    return SeriesInfo(m.name, kind, True, "metric", m.spec.description)


def _names_a_check(text: str, metric: MetricFamily | None) -> bool:
    """Whether ``text`` is a registered check's name. A name of one of assay's own metric
    families is looked up among the checks only when a check could bear it: one registered
    in this process (the check registry imported) or one of an ``assay.checks`` plug-in (a
    check of assay's own bears no name of assay's own metric families: a test keeps it so).
    A gate on metrics alone then imports no check."""
    own = metric is not None and getattr(metric.compute, "__module__", "").startswith("assay.")
    if own and _CHECKS not in sys.modules and not plugin_names("assay.checks"):
        return False
    from assay.judge.registry import check_names

    return text in check_names()


def series_names(names: str | Iterable[Any], *, k: int | None = None) -> list[SeriesInfo]:
    """Several names (``"complete@5,answer_correct"`` or a list, each possibly comma-separated)
    read in order, repeats dropped."""
    items = [names] if isinstance(names, str) else [str(n) for n in names]
    out: list[SeriesInfo] = []
    for item in items:
        for part in item.split(","):
            if part.strip():
                info = describe(part, k=k)
                if info.name not in {o.name for o in out}:
                    out.append(info)
    if not out:
        raise SeriesError("no metric or check named")
    return out


def _validate(name: str, kind: SeriesKind, values: NDArray[np.float64], source: str) -> None:
    v = values[~np.isnan(values)]
    if np.any(np.isinf(v)):
        raise SeriesError(f"series {name!r}: values must be finite (None/NaN for an abstention)")
    if source == "metric":
        return  # a registered metric's family declares its values (kept as computed)
    if kind == "binary" and not np.all((v == 0.0) | (v == 1.0)):
        bad = v[(v != 0.0) & (v != 1.0)][0]
        raise SeriesError(f"series {name!r} is binary: every value must be 0 or 1, not {bad!r}")
    if kind == "graded" and not np.all((v >= 0.0) & (v <= 1.0)):
        bad = v[(v < 0.0) | (v > 1.0)][0]
        raise SeriesError(f"series {name!r} is graded: values must lie in [0, 1], not {bad!r}")
    if kind == "count" and not np.all((v >= 0.0) & (v == np.floor(v))):
        bad = v[(v < 0.0) | (v != np.floor(v))][0]
        raise SeriesError(
            f"series {name!r} is a count: values must be non-negative integers, not {bad!r}"
        )


@dataclass(frozen=True, eq=False)
class Series:
    """One run's per-entry values of one score.

    ``values`` is aligned with ``ids``; NaN marks an abstention (the score does not apply).
    Built by the producers (`series_for`, `series_from_scores`, ...) or by hand with
    `Series.from_values`.
    """

    name: str
    kind: SeriesKind
    ids: tuple[str, ...]
    values: NDArray[np.float64]
    higher_is_better: bool = True
    source: str = "given"

    def __post_init__(self) -> None:
        _check_kind(self.name, self.kind)
        ids = self.ids  # a tuple of text as given (a run's ids): not copied again
        if type(ids) is not tuple or not all(type(i) is str for i in ids):
            ids = tuple(map(str, ids))
        vals = np.asarray(self.values, dtype=np.float64)
        if vals.shape != (len(ids),):
            raise SeriesError(
                f"series {self.name!r}: {len(ids)} ids but values of shape {vals.shape}"
            )
        if len(set(ids)) != len(ids):
            raise SeriesError(f"series {self.name!r}: entry ids must be unique")
        _validate(self.name, self.kind, vals, self.source)
        vals.setflags(write=False)
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "values", vals)

    @classmethod
    def from_values(
        cls,
        name: str,
        kind: str,
        values: Mapping[str, bool | float | int | None],
        *,
        higher_is_better: bool = True,
        source: str = "given",
    ) -> Series:
        """A series from ``{entry id: value}`` (None: abstained), in the mapping's order."""
        arr = np.fromiter(
            (math.nan if v is None else float(v) for v in values.values()),
            dtype=np.float64,
            count=len(values),
        )
        return cls(name, _check_kind(name, kind), tuple(values), arr, higher_is_better, source)

    @classmethod
    def from_array(cls, info: SeriesInfo, ids: Sequence[str], values: ArrayLike) -> Series:
        return cls(
            info.name,
            info.kind,
            tuple(ids),
            np.asarray(values, dtype=np.float64),
            info.higher_is_better,
            info.source,
        )

    @property
    def info(self) -> SeriesInfo:
        return SeriesInfo(self.name, self.kind, self.higher_is_better, self.source)

    @property
    def abstained(self) -> tuple[str, ...]:
        """The entries this series abstained on, in order."""
        mask = np.isnan(self.values)
        return tuple(i for i, m in zip(self.ids, mask.tolist(), strict=True) if m)

    @property
    def n_decided(self) -> int:
        return int(np.sum(~np.isnan(self.values)))

    def get(self, entry_id: str) -> float | None:
        """The value on one entry (None: abstained, or not an entry of this series)."""
        try:
            v = float(self.values[self.ids.index(entry_id)])
        except ValueError:
            return None
        return None if math.isnan(v) else v

    def aligned(self, ids: Sequence[str]) -> NDArray[np.float64]:
        """The values in the order of ``ids``; NaN (abstained) for an id this series lacks."""
        if len(ids) == len(self.ids) and tuple(ids) == self.ids:
            return np.array(self.values)  # the same order (the common case): a copy
        pos = {eid: i for i, eid in enumerate(self.ids)}
        idx = np.fromiter((pos.get(eid, -1) for eid in ids), dtype=np.int64, count=len(ids))
        out = np.full(len(ids), np.nan)
        have = idx >= 0
        out[have] = self.values[idx[have]]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "higher_is_better": self.higher_is_better,
            "source": self.source,
            "values": {
                i: (None if math.isnan(v) else v)
                for i, v in zip(self.ids, self.values.tolist(), strict=True)
            },
            "abstained": list(self.abstained),
        }


@dataclass
class RunSeries:
    """Every series computed for one run on one dataset, with what a comparison reports of it.

    ``groups`` maps entry ids to their row (category, or what ``by`` names); ``scores`` holds
    the retrieval scores the metric series came from (None when no metric was asked for).
    """

    series: dict[str, Series]
    groups: dict[str, str]
    by: str = "category"
    run_hash: str | None = None
    run_path: str | None = None
    dataset_version: str | None = None
    index_version: str | None = None
    room: str | None = None
    k: int | None = None
    level: str = "chunk"
    scores: RetrievalScores | None = field(default=None, repr=False)

    def __getitem__(self, name: str) -> Series:
        return self.series[name]

    @property
    def names(self) -> list[str]:
        return list(self.series)


def _entries(dataset: Dataset | Sequence[Entry]) -> list[Entry]:
    from assay.dataset import Dataset

    return dataset.entries if isinstance(dataset, Dataset) else list(dataset)


def series_for(
    dataset: Dataset,
    run: Run,
    names: str | Iterable[str | SeriesInfo],
    *,
    k: int = 5,
    chunks: ChunkTable | RunTable | None = None,
    level: str = "chunk",
    by: str = "category",
    allow_missing: bool = False,
    skip_stale: bool = False,
    allow_reuse: bool = False,
    allow_changed_entries: bool = False,
    session: FreshSession | None = None,
    gold: GoldIndex | None = None,
    rows: dict[str, str] | None = None,
) -> RunSeries:
    """The series named ``names`` for one run, each computed once.

    Retrieval metrics come from one `score_retrieval` of the run at ``level`` (the gold is
    resolved and the shared context built once for all of them; the chunk table is needed for
    anchors and the page level); answer checks from one pass of the checks over the run, with
    the chunk texts of ``chunks`` (checks that need cited text, such as numbers_verified,
    abstain without it). A metric series holds the answerable entries; a check series holds
    every entry of the dataset (None where the run has no row, no answer, or the check does not
    apply). ``by`` names the rows (`assay.dataset.groups`).

    ``session`` is the use of a sealed fresh sample the caller opened (`assay.compare.
    open_inputs`; without it the scoring and the checks are each a use of their own); ``gold``
    the dataset's gold already resolved on this run's table (`assay.score.retrieval.
    resolve_for`), which runs read against one table share; ``rows`` the dataset's rows by
    ``by`` already read (`assay.dataset.groups`), which every run of a comparison shares.
    """
    from assay.dataset import groups
    from assay.runs import corpus as run_corpus

    bound = chunks
    if isinstance(chunks, run_corpus.RunTable):
        chunks = chunks.table
    infos = (
        series_names(names, k=k)
        if isinstance(names, str) or not any(isinstance(n, SeriesInfo) for n in names)
        else [n if isinstance(n, SeriesInfo) else describe(n, k=k) for n in names]
    )
    entries = _entries(dataset)
    file = getattr(dataset, "path", None) or "<dataset>"
    if rows is None:
        rows = groups(entries, by, file=str(file))
    out: dict[str, Series] = {}
    metric_names = [i.name for i in infos if i.source == "metric"]
    check_infos = [i for i in infos if i.source == "check"]
    judged = [i.name for i in infos if i.source == "judge"]
    if judged:
        raise SeriesError(
            f"{', '.join(judged)}: the judge's verdicts are read from a judged-answers file "
            "(series_from_judged), not computed from a run"
        )
    scores = None
    if metric_names:
        from assay.score import score_retrieval

        scores = score_retrieval(
            dataset, run, k=k, chunks=bound, level=level,  # type: ignore[arg-type]
            metrics=metric_names, allow_missing=allow_missing, skip_stale=skip_stale,
            allow_reuse=allow_reuse, allow_changed_entries=allow_changed_entries,
            session=session, gold=gold,
        )  # fmt: skip
    checked: dict[str, Series] = {}
    if check_infos:
        checked = _check_series(
            dataset, run, check_infos, chunks=chunks, allow_reuse=allow_reuse, session=session
        )
    ids = () if scores is None else tuple(scores.ids)  # one tuple for every metric's series
    for info in infos:
        if info.source == "metric":
            assert scores is not None
            out[info.name] = Series.from_array(info, ids, scores.per_entry[info.name])
        else:
            out[info.name] = checked[info.name]
    version = getattr(dataset, "version", None)
    return RunSeries(
        out,
        rows,
        by,
        run_hash=run.hash or None,
        run_path=run.path,
        dataset_version=version,
        index_version=None if chunks is None else chunks.version,
        room=None if scores is None else scores.room,
        k=k,
        level=level,
        scores=scores,
    )


def _check_series(
    dataset: Dataset,
    run: Run,
    infos: Sequence[SeriesInfo],
    *,
    chunks: ChunkTable | None,
    allow_reuse: bool,
    session: FreshSession | None,
) -> dict[str, Series]:
    from assay.dataset import fresh
    from assay.judge import check_rows

    names = [i.name for i in infos]
    if session is not None:
        rows, _ = check_rows(dataset, run, chunks=chunks, checks=names)
    else:
        with fresh.using(dataset, command="check", allow_reuse=allow_reuse, runs=[run.hash]):
            rows, _ = check_rows(dataset, run, chunks=chunks, checks=names)
    ids = [e.id for e in _entries(dataset)]
    return series_from_checks(rows, ids=ids, infos=infos)


def series_from_checks(
    rows: Sequence[Mapping[str, Any]],
    *,
    ids: Sequence[str] | None = None,
    infos: Sequence[SeriesInfo] | None = None,
    names: Sequence[str] | None = None,
) -> dict[str, Series]:
    """Check series from per-entry check rows (`check_rows`, or a `CheckReport`'s ``rows``).

    ``ids`` (default: the rows' ids) are the entries every series covers; an entry without a
    row abstains. ``infos`` or ``names`` say which checks (default: every registered check that
    appears in the rows).
    """
    if infos is None:
        present = [n for n in (names or _check_columns(rows))]
        infos = [describe(n) for n in present]
    by_id = {str(r["id"]): r for r in rows}
    order = list(ids) if ids is not None else list(by_id)
    out: dict[str, Series] = {}
    for info in infos:
        values = {eid: (None if eid not in by_id else by_id[eid].get(info.name)) for eid in order}
        s = Series.from_values(
            info.name, info.kind, values, higher_is_better=info.higher_is_better, source="check"
        )
        out[info.name] = s
    return out


def _check_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    from assay.judge.registry import check_names

    registered = check_names()
    seen: dict[str, None] = {}
    for r in rows:
        for key in r:
            if key in registered:
                seen.setdefault(key, None)
    return list(seen)


def series_from_scores(
    scores: RetrievalScores, *, metrics: Sequence[str] | None = None
) -> RunSeries:
    """The metric series of already computed retrieval scores (every metric scored, or
    ``metrics``), with their rows, run and dataset."""
    names = list(metrics) if metrics is not None else list(scores.per_entry)
    out: dict[str, Series] = {}
    for name in names:
        if name not in scores.per_entry:
            raise SeriesError(f"metric {name!r} was not scored; scored: {sorted(scores.per_entry)}")
        info = describe(name, k=scores.k)
        out[name] = Series.from_array(info, scores.ids, scores.per_entry[name])
    return RunSeries(
        out,
        dict(zip(scores.ids, scores.categories_of, strict=True)),
        scores.by,
        run_hash=scores.run_hash,
        dataset_version=scores.dataset_version,
        index_version=scores.index_version,
        room=scores.room,
        k=scores.k,
        level=scores.level,
        scores=scores,
    )


def series_from_judged(judged: JudgedAnswers, question: str) -> Series:
    """The LLM judge's verdicts on ``question`` as a binary series named ``judge:QUESTION``
    (an unreadable reply, null in the file, abstains)."""
    if question not in judged.questions:
        raise SeriesError(
            f"{judged.path}: the judge was not asked {question!r} (asked: "
            f"{', '.join(judged.questions)})"
        )
    values = {r.id: r.verdicts.get(question) for r in judged.rows}
    return Series.from_values(f"{JUDGE_PREFIX}{question}", "binary", values, source="judge")
