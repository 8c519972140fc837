"""The results bundle: one JSON file holding everything the explorer site shows.

`build_bundle` scores every run per category with intervals, compares every later run with the
first (one Holm family across all candidates, as `assay compare` with several runs), runs the
answer checks on runs that answered, asks failure attribution per run when it is available,
adds an ablation ladder when given, and writes one row per entry: its query, as_of, category,
gold paths (each piece's document, page and quote, and the chunks it resolves to), and per run
the top-k retrieved chunks with the gold they satisfy, the metrics, the answer with its check
results and the judge's critique, and the stage that lost it.

The bundle holds no clock time and no absolute paths, so the same inputs give the same bytes;
it records the assay version and the hashes of the dataset, the chunk table and every run.
The site (`assay.explorer.site`) is rendered from the bundle alone.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from assay._io import json_loads, write_text_atomic
from assay._version import __version__
from assay.errors import DataError, UsageError
from assay.explorer._rows import (
    canonical_json,
    check_values,
    compared_runs,
    dataset_head,
    entry_head,
    file_names,
    judged_of,
    run_head,
)
from assay.metrics import DEFAULT_PAIR, HEADLINE, default_metrics
from assay.report import ReportMixin, Tabular

if TYPE_CHECKING:
    from assay.corpus import ChunkTable
    from assay.dataset import Dataset, Entry, FreshSession
    from assay.judge.judged import JudgedAnswers
    from assay.judge.report import CheckReport
    from assay.runs import Run

__all__ = ["SCHEMA", "Bundle", "build_bundle", "export_bundle", "load_bundle"]

SCHEMA = "assay.bundle/1"

SQL_PAIR = ("exec_match", "test_suite_match")
"""What a bundle of SQL questions only compares by default."""

SQL_HEADLINE = "exec_match"
"""The score a bundle of SQL questions only shows per run."""


@dataclass
class Bundle(ReportMixin):
    """A results bundle (``data`` is the JSON document); a report of what it holds."""

    data: dict[str, Any]
    path: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return self.data

    def to_json(self, indent: int | None = 2) -> str:
        return canonical_json(self.data, indent=indent)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(canonical_json(self.data, indent=None).encode()).hexdigest()

    def tabular(self) -> Tabular:
        d = self.data
        rows = []
        k = d["k"]
        headline = d.get("headline") or f"{HEADLINE}@{k}"
        for run in d["runs"]:
            name = run["name"]
            overall = d["scores"][name]["overall"]
            fails = sum(1 for e in d["entries"] if e["runs"].get(name, {}).get("status") == "fail")
            att = d["attribution"].get(name)
            rows.append(
                [
                    name,
                    str(run["hash"])[:12],
                    _fmt(overall.get(headline)),
                    str(fails),
                    "yes" if name in d["checks"] else "-",
                    "yes" if att is not None else "-",
                ]
            )
        foot = [
            f"{len(d['entries'])} entries · dataset {d['dataset']['version']} · "
            + {"sql": "SQL questions · ", "answers": "answers · "}.get(
                str(d.get("kind")), f"k={d['k']} · "
            )
            + f"assay {d['assay_version']}"
            + (f" · written to {self.path}" if self.path else ""),
            *d.get("notes", []),
            *self.notes,
        ]
        return Tabular(
            "Results bundle",
            ["run", "hash", headline, "failing", "checks", "attribution"],
            rows,
            foot,
            emphasis=set(),
        )


def _fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}"


def _attribution(
    dataset: Dataset,
    run: Run,
    chunks: ChunkTable | None,
    corpus: str | Path | None,
    k: int,
    *,
    level: Any = "chunk",
    skip_stale: bool = False,
    session: FreshSession,
) -> dict[str, Any]:
    """Failure attribution by stage for one run (`assay.attribution`): parse and chunk need the
    corpus folder's page text; without it those stages are listed as unseen."""
    from assay.attribution import attribute

    d = dict(
        attribute(
            dataset, run, chunks=chunks, corpus=corpus, k=k, level=level, skip_stale=skip_stale,
            session=session,
        ).to_dict()
    )  # fmt: skip
    for e in d["entries"]:  # the site names a piece "path.piece", 1-based, as everywhere else
        if isinstance(e.get("group"), int) and isinstance(e.get("path"), int):
            e["piece"] = f"{e['path'] + 1}.{e['group'] + 1}"
    return d


def _alt_dict(alt: Any, resolver: Any, chunk_ids: set[str], keys_out: set[str]) -> dict[str, Any]:
    # no resolver: runs that retrieve nothing were given no chunk table; the gold is shown as is
    res = resolver.resolve(alt) if resolver is not None else None
    ok = res is not None and res.ok
    keys = [c.chunk_id for c in res.chunks] if res is not None and ok else []
    keys_out.update(res.keys if res is not None and ok else ())
    chunk_ids.update(keys)
    if isinstance(alt, str):
        chunk = resolver.chunks.by_id.get(alt) if resolver and resolver.chunks is not None else None
        d: dict[str, Any] = {
            "kind": "chunk",
            "chunk_id": alt,
            "doc": chunk.doc_id if chunk else None,
            "page": chunk.pages[0] if chunk and chunk.pages else None,
            "quote": None,
        }
    else:
        d = {"kind": "anchor", "chunk_id": None, "doc": alt.doc, "page": alt.page}
        d["quote"] = alt.quote
    d["chunks"] = keys
    d["stale"] = None if res is None or res.ok else (res.message or res.needs_chunks)
    return d


def _entry_gold(
    entry: Entry, resolver: Any, chunk_ids: set[str]
) -> tuple[list[list[dict[str, Any]]], list[list[set[str]]]]:
    """The entry's paths as the bundle shows them (each alternative with the chunks it resolves
    to) and, per piece, the item keys it is scored on (chunk ids, or ``doc#page``)."""
    shown: list[list[dict[str, Any]]] = []
    keys: list[list[set[str]]] = []
    for path in entry.evidence_paths:
        shown.append([])
        keys.append([])
        for piece in path:
            found: set[str] = set()
            alts = [_alt_dict(a, resolver, chunk_ids, found) for a in piece]
            shown[-1].append({"alternatives": alts})
            keys[-1].append(found)
    return shown, keys


def _mark(
    paths: list[list[set[str]]], retrieved: list[list[str]]
) -> tuple[list[list[str]], int | None, list[str]]:
    """For each retrieved chunk (given by the item keys it counts as: its id, or its pages), the
    gold pieces it satisfies (``"path.piece"``, 1-based); the best path (largest share of its
    pieces found, first on ties) and its pieces not found."""
    marks: list[list[str]] = [[] for _ in retrieved]
    best: int | None = None
    best_found = -1.0
    best_missing: list[str] = []
    pos: dict[str, int] = {}  # each key at its first retrieved chunk
    for i, item in enumerate(retrieved):
        for key in item:
            pos.setdefault(key, i)
    for pi, path in enumerate(paths):
        found = 0
        missing = []
        for qi, keys in enumerate(path):
            label = f"{pi + 1}.{qi + 1}"
            hit = False
            for key in keys:
                if key in pos:
                    marks[pos[key]].append(label)
                    hit = True
            found += hit
            if not hit:
                missing.append(label)
        share = found / len(path) if path else 0.0
        if share > best_found:
            best, best_found, best_missing = pi + 1, share, missing
    return [sorted(set(m)) for m in marks], best, best_missing


def build_bundle(
    dataset: Dataset,
    runs: Mapping[str, Run],
    *,
    chunks: ChunkTable | Mapping[str, ChunkTable | None] | None,
    corpus: str | Path | None = None,
    ladder: Mapping[str, Any] | None = None,
    judged: Mapping[str, JudgedAnswers] | None = None,
    k: int = 5,
    seed: int = 0,
    n_resamples: int = 2000,
    n_permutations: int = 2000,
    allow_reuse: bool = False,
    metrics: Sequence[str] | None = None,
    level: str = "chunk",
    skip_stale: bool = False,
    sql_timeout: float = 5.0,
    sql_max_rows: int = 10_000,
    cluster: str | None = "auto",
    session: FreshSession | None = None,
) -> Bundle:
    """Everything the explorer shows, for ``runs`` (the first is the baseline) on ``dataset``.

    ``chunks`` is one chunk table for every run, or one per run (run name -> table): each
    run's gold is resolved, scored and shown against its own table, and each run's hits are
    shown with its own table's text (two chunkings may use the same id for other text).

    ``metrics`` names the series the comparisons compare (default: complete@k and recall@k):
    any registered retrieval metric or answer check (`assay.compare.series`).

    ``level`` and ``skip_stale`` read the gold as `assay score` does (page level; entries whose
    gold does not resolve on the chunk table left out, and counted in the notes).

    ``judged`` maps a run name to its judged-answers file (`assay judge run --out`): the
    critiques and verdicts are shown on the entry pages. The comparisons are not recorded in
    the dataset's ledger (a bundle is a rendering; `assay compare` records). On a sealed fresh
    sample the whole export is one use of it (refused a second time unless ``allow_reuse``), or
    part of the use the caller opened (``session``: `assay report` renders what it exports).

    An entry with `sql` gold also gets its gold queries and result, and per run the system's
    query, its result and the rows only in either (`assay.explorer.sqlview`): queries run
    read-only on the entry's database, each under ``sql_timeout`` seconds and ``sql_max_rows``
    rows, and only when the `sql` extra is installed (the notes say so otherwise).

    A dataset of SQL questions only needs no chunk table (``chunks`` may be None; the bundle's
    ``kind`` is ``"sql"``): its scores are the rates of the gold SQL checks per category with
    their 95% intervals (as `assay check` gives them), the comparisons compare exec_match and
    test_suite_match by default (a retrieval metric is refused), and there is no attribution.

    ``cluster`` (default ``auto``: by evidence document when the dataset has more than one
    entry per document, as `assay score`, `check` and `compare` do;
    `assay.dataset.clustering`): every interval, p-value and rate treats a cluster as one draw,
    and the bundle's ``clustering`` (shown on the overview page) says how.
    """
    from assay.compare.series import (
        RunSeries,
        series_from_checks,
        series_from_scores,
        series_names,
    )
    from assay.dataset import fresh, has_conversations
    from assay.gold import GoldResolver
    from assay.judge import check_rows as checked_rows
    from assay.judge import check_run
    from assay.judge.checking import default_checks_for
    from assay.score import score_retrieval

    hashes = [str(r.hash) for r in runs.values()]
    with (
        fresh.using(dataset, command="export", allow_reuse=allow_reuse, runs=hashes)
        if session is None
        else nullcontext(session)
    ) as own:
        if not runs:
            raise DataError("no run to export", file=dataset.path or "<dataset>")
        names = list(runs)
        notes: list[str] = []
        # nothing retrieved (SQL questions only, or a kind that answers without retrieving): no
        # chunk table; the runs are rated by their checks (by default the gold SQL checks, compared
        # on exec_match and test_suite_match, or the dataset's default checks), with no attribution
        kind = bundle_kind(dataset, runs.values())
        retrieval = kind is None
        given = (
            {n: chunks[n] for n in names}
            if isinstance(chunks, Mapping)
            else dict.fromkeys(names, chunks)
        )
        tables: dict[str, ChunkTable | None] = {}
        for n, t in given.items():
            if t is None and retrieval:
                raise UsageError(
                    f"no chunk table for run {n}: the bundle shows the text of gold and hits"
                )
            tables[n] = t if retrieval else None
        base_table = tables[names[0]]
        default = DEFAULT_PAIR if retrieval else SQL_PAIR if kind == "sql" else None
        wanted = series_names(metrics or default or default_checks_for(dataset), k=k)
        shown = [m.name for m in default_metrics(k)]
        extra = [i.name for i in wanted if i.source == "metric" and i.name not in shown]
        if not retrieval and any(i.source != "check" for i in wanted):
            raise UsageError(
                ", ".join(i.name for i in wanted if i.source != "check")
                + (
                    f": every entry of {dataset.path or 'the dataset'} is a SQL question, with no "
                    "evidence to retrieve; compare checks such as " + ", ".join(SQL_PAIR)
                    if kind == "sql"
                    else ": no run retrieves anything (each row is an answer); compare checks"
                )
            )
        from assay.dataset import clustering_for

        clusters = clustering_for(dataset.entries, cluster, file=dataset.path or "<dataset>")
        scores = {}
        if level not in ("chunk", "page"):
            raise ValueError(f"level must be 'chunk' or 'page', not {level!r}")
        lvl: Any = level
        for name, run in runs.items() if retrieval else ():
            # the default score table, and any other metric the comparisons ask for
            s = score_retrieval(
                dataset,
                run,
                k=k,
                chunks=tables[name],
                metrics=[*shown, *extra] if extra else None,
                level=lvl,
                skip_stale=skip_stale,
                session=own,
            )
            s.add_ci(seed=seed, n_resamples=n_resamples, clusters=clusters)
            scores[name] = s
        left_out = next(iter(scores.values())).excluded if scores else None
        if left_out:
            from assay.gold.resolve import skipped_note

            notes.append(skipped_note(left_out, next(iter(scores.values())).excluded_kinds))
        checks: dict[str, Any] = {}
        check_rows: dict[str, dict[str, dict[str, Any]]] = {}
        reports = {}
        # SQL questions only: the gold SQL checks `assay check` runs, and those compared
        named = list(dict.fromkeys([*default_checks_for(dataset), *(i.name for i in wanted)]))
        # conversations' turns: the checks `assay check` runs on them, the conversation checks too
        conversations = has_conversations(dataset.entries)
        if conversations and retrieval:
            named = default_checks_for(dataset)
        for name, run in runs.items():
            if not retrieval or any(r.answer is not None for r in run.rows):
                rep = check_run(
                    dataset,
                    run,
                    chunks=tables[name],
                    rng=np.random.default_rng(seed),
                    checks=None if retrieval and not conversations else named,
                    level=level,
                    skip_stale=skip_stale,
                    cluster=cluster,
                    session=own,
                )
                reports[name] = rep
                d = rep.to_dict()
                check_rows[name] = {row["id"]: row for row in d.pop("rows")}
                checks[name] = file_names(d)
                if not retrieval:
                    notes.extend(f"{name}: {w}" for w in rep.warnings)
        groups = {e.id: e.category for e in dataset.entries}
        comparisons: dict[str, Any] = {}
        leaderboard: dict[str, Any] | None = None
        if len(names) > 1:
            metric_names = [i.name for i in wanted if i.source == "metric"]
            check_infos = [i for i in wanted if i.source == "check"]
            ids = [e.id for e in dataset.entries]
            computed = {}
            for name, run in runs.items():
                if retrieval:
                    rs = series_from_scores(scores[name], metrics=metric_names)
                else:
                    rs = RunSeries({}, groups, run_hash=run.hash or None, run_path=run.path)
                    rs.dataset_version = dataset.version
                if check_infos:
                    rows = (
                        checked_rows(
                            dataset, run, chunks=tables[name], checks=[i.name for i in check_infos]
                        )[0]
                        if retrieval
                        else list(check_rows[name].values())
                    )
                    rs.series.update(series_from_checks(rows, ids=ids, infos=check_infos))
                    rs.groups = groups
                rs.series = {i.name: rs.series[i.name] for i in wanted}
                computed[name] = rs
            comparisons, leaderboard = compared_runs(
                computed,
                [i.name for i in wanted],
                notes,
                seed=seed,
                n_resamples=n_resamples,
                n_permutations=n_permutations,
                clusters=clusters,
            )
        attribution: dict[str, Any] = {}
        stage_of: dict[str, dict[str, dict[str, Any]]] = {}
        for name, run in runs.items() if retrieval else ():  # no pipeline stage to lose SQL in
            att = _attribution(
                dataset, run, tables[name], corpus, k, level=lvl, skip_stale=skip_stale,
                session=own,
            )  # fmt: skip
            attribution[name] = att
            stage_of[name] = {e["id"]: e for e in att.get("entries", [])}

        positions = {n: {eid: i for i, eid in enumerate(s.ids)} for n, s in scores.items()}

        # one resolver and one set of chunks shown per table: a run on another chunking is read
        # against its own table, and its hits are shown with its own table's text
        def tkey(t: ChunkTable | None) -> str:
            return t.version if t is not None and t.version is not None else f"table-{id(t)}"

        resolvers = {tkey(t): t and GoldResolver(t, level=lvl) for t in tables.values()}
        used: dict[str, set[str]] = {v: set() for v in resolvers}
        entries = []

        def items(cid: str, table: ChunkTable | None) -> list[str]:
            return table.page_keys(cid) if level == "page" and table is not None else [cid]

        from assay.explorer.agentview import label_gold, label_run, tools_gold, tools_run
        from assay.explorer.convview import conversation_of
        from assay.explorer.sqlview import SqlViews

        sql_views = SqlViews(
            Path(dataset.path).parent if dataset.path else None,
            timeout=sql_timeout,
            max_rows=sql_max_rows,
        )

        for entry in dataset.entries:
            gold, piece_keys = _entry_gold(
                entry, resolvers[tkey(base_table)], used[tkey(base_table)]
            )
            per_run: dict[str, Any] = {}
            for name, run in runs.items():
                table = tables[name]
                own_gold, own_keys = gold, piece_keys
                if tkey(table) != tkey(base_table):
                    own_gold, own_keys = _entry_gold(
                        entry, resolvers[tkey(table)], used[tkey(table)]
                    )
                row = run.row(entry.id) if entry.id in run else None
                head = (row.retrieved or [])[:k] if row else []
                top = [h.chunk_id for h in head]
                hit_scores = [h.score for h in head]
                used[tkey(table)].update(top)
                marks, best, missing = _mark(own_keys, [items(c, table) for c in top])
                idx = positions.get(name, {}).get(entry.id)
                per_entry = scores[name].per_entry if idx is not None else {}
                values = {m: float(v[idx]) for m, v in per_entry.items()}
                complete = values.get(f"{HEADLINE}@{k}")
                status = "unscored" if complete is None else ("pass" if complete >= 1.0 else "fail")
                lost = stage_of.get(name, {}).get(entry.id, {})
                r: dict[str, Any] = {
                    "status": status,
                    "metrics": values,
                    "retrieved": [
                        {"rank": i + 1, "chunk_id": cid, "score": sc, "gold": mk}
                        for i, (cid, sc, mk) in enumerate(zip(top, hit_scores, marks, strict=True))
                    ],
                    "best_path": best,
                    "missing_pieces": missing if gold and retrieval else [],
                    "answer": row.answer if row else None,
                    "citations": list(row.citations or []) if row else [],
                    "checks": check_values(
                        check_rows.get(name, {}).get(entry.id),
                        None if retrieval else [*named, "notes"],
                    ),
                    "judge": judged_of(judged, name, entry.id),
                    "stage": lost.get("stage"),
                    "group": lost.get("piece") or lost.get("group"),
                    "in_run": row is not None,
                }
                if own_gold is not gold:  # this run's table resolves the gold to other chunks
                    r["paths"] = own_gold
                # chunks the entry's principal may not see, retrieved (at any rank) or cited
                r["leaked"] = _leaked(entry, row, table) if row and table else []
                used[tkey(table)].update(r["leaked"])
                if entry.sql is not None:  # a SQL entry: its query, result and diff with the gold
                    r["sql"] = sql_views.run(entry, row)
                    if r["sql"] is not None and status == "unscored":
                        r["status"] = r["sql"]["status"]
                    if (r["checks"] or {}).get("test_suite_match") is False:
                        r["status"] = "fail"  # the same rows here, told apart by a database variant
                if kind == "answers" and status == "unscored":  # the headline check's verdict
                    verdict = (r["checks"] or {}).get(wanted[0].name)
                    r["status"] = "unscored" if verdict is None else "pass" if verdict else "fail"
                if entry.expected_tool_calls is not None:  # an agent's calls against the gold's
                    r["tools"] = tools_run(entry, row)
                if entry.expected_label is not None:  # a router's label against the gold label
                    r["label"] = label_run(entry, row)
                per_run[name] = r
            conv = conversation_of(entry)
            entries.append(
                entry_head(entry)
                | ({} if conv is None else {"conversation": conv})
                | {
                    "paths": gold,
                    "sql": None if entry.sql is None else sql_views.gold(entry),
                    "tools": tools_gold(entry),
                    "label": label_gold(entry),
                    "runs": per_run,
                }
            )

        def shown_chunks(table: ChunkTable | None) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for cid in sorted(used[tkey(table)]):
                c = table.by_id.get(cid) if table is not None else None
                if c is None:
                    continue
                out[cid] = {"doc": c.doc_id, "pages": list(c.pages), "kind": c.kind, "text": c.text}
                access = c.access if c.extra.get("access") is not None else None
                if access is not None and access.restricts:  # who may see it, in words and rules
                    out[cid]["access"] = access.to_json_dict()
            return out

        chunk_rows = shown_chunks(base_table)
        run_chunk_text = {
            n: shown_chunks(tables[n]) for n in names if tkey(tables[n]) != tkey(base_table)
        }
        if run_chunk_text:
            notes.append(
                "Runs on another chunk table than the baseline's ("
                + ", ".join(f"{n}: {getattr(tables[n], 'version', None)}" for n in run_chunk_text)
                + f"; the baseline's: {getattr(base_table, 'version', None)}) are scored and shown "
                "against their own."
            )
        if sql_views.missing_extra is not None:
            notes.append(sql_views.missing_extra)
        data = {
            "schema": SCHEMA,
            "assay_version": __version__,
            "k": k,
            "level": level,
            "seed": seed,
            "n_resamples": n_resamples,
            "dataset": dataset_head(dataset),
            "chunks": base_table
            and {
                "version": base_table.version,
                "n_chunks": len(base_table),
                "sha256": _chunks_hash(base_table),
            },
            "runs": [run_head(n, runs[n], getattr(tables[n], "version", None)) for n in names],
            "baseline": names[0],
            "scores": {
                n: scores[n].to_dict() if retrieval else _rates(reports[n], groups) for n in names
            },
            "comparisons": comparisons,
            "leaderboard": leaderboard,
            "checks": checks,
            "attribution": attribution,
            "ladder": dict(ladder) if ladder is not None else None,
            "entries": entries,
            "chunk_text": chunk_rows,
            "run_chunk_text": run_chunk_text,
            "notes": notes,
            "fresh": None,
            "clustering": None
            if clusters is None
            else clusters.summary([e.id for e in dataset.entries]).to_dict(),
        }
        headline = (
            f"{HEADLINE}@{k}" if retrieval else SQL_HEADLINE if kind == "sql" else wanted[0].name
        )
        if not retrieval:
            data |= {"kind": kind, "headline": headline}
        if conversations:  # the turns gathered back per conversation (`assay.explorer.convview`)
            from assay.explorer.convview import conversation_rows

            data["conversations"] = conversation_rows(
                dataset.entries,
                scores,
                {n: (reports[n].checks, check_rows[n]) for n in reports},
                headline=headline,
            )
        bundle = Bundle(json.loads(canonical_json(data, indent=None)))
    if own.use is not None:  # a use of its own (the caller's is known when its block ends)
        bundle.data["fresh"] = json.loads(canonical_json(own.use.to_dict(), indent=None))
        bundle.data["notes"].append(own.use.message)
    if dataset.tiers is not None:  # the entries were selected by label tier: say what was not
        bundle.data["tiers"] = dataset.tiers.to_dict()
        bundle.data["notes"][:0] = dataset.tier_notes()
    return bundle


def _rates(report: CheckReport, groups: Mapping[str, str]) -> dict[str, Any]:
    """A check report's rates as a score table: per row (category, and overall) each check's
    rate, its interval as ``<check>_ci`` and ``n``, the entries in the row."""
    counts = Counter(groups.values())

    def cell(row: str) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(groups) if row == "overall" else counts[row]}
        for name, rc in report.rates.get(row, {}).items():
            out[name] = rc.rate
            out[f"{name}_ci"] = rc.interval.to_dict()
        return out

    cats = sorted(c for c in report.rates if c != "overall")
    return {"overall": cell("overall"), "categories": {c: cell(c) for c in cats}}


def is_sql_only(dataset: Dataset) -> bool:
    """Every entry carries gold SQL: the bundle is made without chunks (`build_bundle`)."""
    return bool(dataset.entries) and all(e.sql is not None for e in dataset.entries)


def bundle_kind(dataset: Dataset, runs: Iterable[Run]) -> str | None:
    """What a bundle shows when nothing is retrieved: ``"sql"`` when every entry is a SQL
    question, ``"answers"`` when no row of any run carries hits (a system kind that answers
    without retrieving, such as a plug-in's); None for retrieval runs, shown with their hits."""
    if is_sql_only(dataset):
        return "sql"
    if all(r.retrieved is None for run in runs for r in run.rows):
        return "answers"
    return None


def _leaked(entry: Entry, row: Any, table: ChunkTable) -> list[str]:
    """The chunks of the row (retrieved at any rank, then cited) that the entry's principal may
    not see at its as_of: what the ``leak`` check counts (`assay.checks.policy.leaked_chunks`)."""
    from assay.checks.policy import leaked_chunks
    from assay.judge.context import CheckContext

    ctx = CheckContext(entry, row.answer, citations=row.citations, row=row, chunks=table)
    return leaked_chunks(ctx)


def _chunks_hash(chunks: ChunkTable) -> str:
    h = hashlib.sha256()
    for c in chunks:
        h.update(canonical_json(c.to_dict(), indent=None).encode())
        h.update(b"\n")
    return h.hexdigest()


def export_bundle(
    dataset: str | Path | Dataset,
    runs: Sequence[str | Path],
    *,
    chunks: str | Path | None = None,
    out: str | Path | None = None,
    corpus: str | Path | None = None,
    ladder: str | Path | None = None,
    judged: Mapping[str, str | Path] | None = None,
    base_chunks: str | Path | None = None,
    cand_chunks: Sequence[str | Path | None] | None = None,
    max_unknown_share: float | None = None,
    tiers: str | Sequence[str] | None = None,
    **kwargs: Any,
) -> Bundle:
    """Load the files (``dataset`` may be one already loaded), build the bundle and (with
    ``out``) write it atomically.

    The bundle holds the dataset's entries of ``tiers`` (gold by default, an untiered dataset
    whole: `assay.dataset.tiers.select_tiers`); its notes and ``tiers`` say what was left out.

    Each run is read against the chunk table it was made on (`assay.runs.corpus.bind_run`): the
    table it recorded; ``base_chunks`` for the first run, ``cand_chunks`` one per other run, or
    ``chunks``, for runs that recorded none (a table that is not the recorded one is refused).
    A run without any table is refused (the bundle shows chunk text), and so is a run whose
    hits its table does not know (another index); a dataset of SQL questions only needs no
    table (`build_bundle`)."""
    from assay.compare.leaderboard import run_names
    from assay.corpus import load_chunks
    from assay.dataset import Dataset, open_dataset, select_tiers
    from assay.judge.judged import read_judged
    from assay.runs import load_run
    from assay.runs.corpus import bind_run

    # a dataset the caller opened (`assay report` guards it) is not read again
    ds = (
        select_tiers(dataset, tiers)[0]
        if isinstance(dataset, Dataset)
        else open_dataset(dataset, tiers)
    )
    shared = load_chunks(chunks) if chunks is not None else None
    names = run_names(list(runs))
    loaded = {n: load_run(p) for n, p in zip(names, runs, strict=True)}
    retrieved = bundle_kind(ds, loaded.values()) is None
    if len(loaded) != len(runs):
        raise DataError("the same run file is given twice", file=runs[0])
    given = [base_chunks, *(cand_chunks or [None] * (len(runs) - 1))]
    if len(given) != len(runs):
        raise UsageError(
            f"--cand-chunks: one chunk table per run after the first ({len(runs) - 1}), "
            f"not {len(given) - 1}"
        )
    tables: dict[str, ChunkTable | None] = {}
    for i, (name, g) in enumerate(zip(names, given, strict=True)):
        if not retrieved:  # nothing is retrieved (SQL questions only): no chunk text is shown
            tables[name] = None
            continue
        found = bind_run(
            loaded[name],
            given=g,
            shared=shared,
            label="baseline" if i == 0 else "candidate",
            flag="--base-chunks" if i == 0 else "--cand-chunks",
            max_share=max_unknown_share,
        )
        if found.table is None:
            raise UsageError(
                f"no chunk table for run {name}: the bundle shows the text of gold and hits. "
                "Pass --chunks (or the run's own: --base-chunks, --cand-chunks)"
            )
        tables[name] = found.table
    judged_files = {}
    for name, path in (judged or {}).items():
        if name not in loaded:
            raise DataError(f"no run named {name!r} (runs: {', '.join(names)})", file=path)
        judged_files[name] = read_judged(path)
    ladder_data = _load_json_object(ladder) if ladder is not None else None
    bundle = build_bundle(
        ds, loaded, chunks=tables, corpus=corpus, ladder=ladder_data, judged=judged_files, **kwargs
    )
    if out is not None:
        write_text_atomic(out, bundle.to_json() + "\n")
        bundle.path = str(out)
    return bundle


def _load_json_object(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    data = json_loads(p.read_text(encoding="utf-8"), p)
    if not isinstance(data, dict):
        raise DataError("expected a JSON object", file=p)
    return data


def bundle_entries(bundle: Bundle | Mapping[str, Any]) -> list[Entry]:
    """The entries a bundle holds, as far as it holds them (id, query, category, as_of and
    evidence): enough for `assay.dataset.fresh` to know a sealed fresh sample's entries when
    the explorer shows a bundle's per-entry results."""
    from assay.dataset import Entry

    data = bundle.data if isinstance(bundle, Bundle) else bundle
    out: list[Entry] = []
    for e in data.get("entries") or []:
        paths = [
            [
                [
                    a["chunk_id"]
                    if a.get("kind") == "chunk"
                    else {"doc": a["doc"], "page": a.get("page"), "quote": a["quote"]}
                    for a in piece.get("alternatives", [])
                ]
                for piece in path
            ]
            for path in e.get("paths") or []
        ]
        try:
            out.append(
                Entry.model_validate(
                    {
                        "id": e["id"],
                        "query": e["query"],
                        "category": e.get("category") or "-",
                        "as_of": e.get("as_of"),
                        "evidence_paths": paths,
                    }
                )
            )
        except (KeyError, TypeError, ValueError):
            continue  # an entry the bundle does not describe fully cannot be matched
    return out


def load_bundle(path: str | Path) -> Bundle:
    """Read a bundle written by `export_bundle`, refusing anything else by name."""
    data = _load_json_object(path)
    if data.get("schema") != SCHEMA:
        raise DataError(
            f"not a results bundle (schema {data.get('schema')!r}, expected {SCHEMA!r}); "
            "write one with assay export",
            file=path,
            field="schema",
        )
    for key in ("runs", "entries", "scores", "dataset", "k"):
        if key not in data:
            raise DataError("required field of a bundle", file=path, field=key)
    return Bundle(data, str(path))
