"""Driving a system over a dataset: `as_of` on every call, provenance on every row, cached,
resumable.

A system (see `assay.systems.protocol` for the contract) is given as an object or as a spec
string that an adapter of `assay.systems` turns into one, with that adapter's options.

Every row carries its *provenance*: the system's identity hash (spec, arguments, declared
identity or source hash), the corpus hash the system declares, the dataset version, `k`,
whether answers were asked for, and the entry's `as_of`, principal and query text.

- The request cache is keyed on those parts (all but the dataset version), so a rerun of the
  same system reproduces a run without calling it, and a change of code, data, `k`, query,
  `as_of` or the asking principal is a miss (one principal's cached reply is never served to
  another). Each cache entry stores its provenance (`assay cache ls`).
- The key holds the index the system is on: its corpus hash (or ``--corpus-id``), the hash of
  the chunk table it names (``chunks_path``, hashed once per run), and for a system whose
  replies name their index (``respond``: an HTTP system) the index its reply names. That one is
  learnt by calling the run's first entry live (`_Session.learn_index`); every lookup of the
  run is keyed on it, every reply stored under the index it names, so a server now on another
  index gets no row from the cache.
- With `out`, each finished row is journalled to ``<out>.partial`` with its provenance. A rerun
  resumes from the rows whose provenance matches and refuses a journal written by anything else
  (another system, another `k`, an edited entry) with a message naming the difference, and
  one whose rows were made on another index than the system is on now, or on two (DataError,
  naming the journal and the indexes);
  ``restart=True`` (``--restart``) discards it. A torn last line (a crash mid-write) is cut off
  before appending. The run file itself is written only when every row is done.
- Conversations (`assay.dataset.conversations`): a system whose methods name ``history`` gets
  each turn's earlier turns (``history``: ``own`` answers, the ``gold`` reference answers, or
  ``none``). The run goes turn number by turn number: every first turn (and every entry of no
  conversation), then every second turn, ..., so the turns of one conversation are asked in
  order on any executor while conversations run side by side. The cache keys on the history
  the system is given, and a resumed run rebuilds it from the journalled answers, so a run
  killed mid-conversation resumes there. The run's metadata records the mode.
- An exception from the system stops the run with the entry id (`SystemCallError`); Ctrl-C
  raises `RunInterrupted`, which says how many rows are saved and how to resume.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._io import dumps_canonical, json_loads
from assay.cache import RequestCache, cache_key
from assay.corpus import principal_key
from assay.dataset import (
    HISTORY_MODES,
    Dataset,
    Entry,
    by_conversation,
    entry_fingerprint,
    history_of,
)
from assay.errors import DataError, Problem, UsageError
from assay.executors import Executor, WorkerLost, imap, parse_executor
from assay.report import ReportMixin, Tabular
from assay.runs import Hit, Run, RunRow, parse_hit, write_run
from assay.systems import (
    SystemCallError,
    chunk_table_of,
    corpus_hash_of,
    identity_hash,
    identity_parts,
    load_system,
    system_identity,
    table_record,
)
from assay.systems.kinds import CallContext, SystemKind, get_kind, kind_of
from assay.systems.protocol import takes_history, takes_principal

__all__ = ["JournalMismatch", "RunInterrupted", "RunSummary", "call_retrieval", "run_system"]

_MATCHED = (
    "system", "corpus", "dataset", "k", "answers", "as_of", "query", "principal", "inputs",
    "history",
)  # fmt: skip


class JournalMismatch(UsageError):
    """``<out>.partial`` holds rows that another run produced; resuming would mix them in."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: says how many rows are saved and how to resume."""

    def __init__(self, done: int, total: int, partial: Path | None):
        self.done, self.total, self.partial = done, total, partial
        if partial is None:
            msg = f"interrupted after {done} of {total} rows (no output file, nothing was saved)"
        else:
            msg = (
                f"interrupted after {done} of {total} rows; they are saved in {partial}. "
                "Run the same command again to resume (--restart to start over)."
            )
        super().__init__(msg)


# ---------------------------------------------------------------- provenance and journal


def _provenance(base: Mapping[str, Any], entry: Entry, inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **base,
        "as_of": entry.as_of.isoformat() if entry.as_of else None,
        "query": entry.query,
        "principal": principal_key(entry.principal),
        # what a kind hands the system beside the query (a SQL system's schema): only when any
        **({"inputs": dict(inputs)} if inputs else {}),
    }


def _read_journal(partial: Path) -> tuple[list[dict[str, Any]], int]:
    """The journal's records and the byte length of its complete lines (a torn last line,
    from a crash mid-write, is not counted: it is cut off before the run appends)."""
    data = partial.read_bytes()
    records: list[dict[str, Any]] = []
    good = 0
    lines = data.splitlines(keepends=True)
    for lineno, raw in enumerate(lines, start=1):
        last = lineno == len(lines)
        if not raw.endswith(b"\n"):
            break  # torn: the crash came before the newline
        if not raw.strip():
            good += len(raw)
            continue
        try:
            rec = json_loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if last:
                break
            raise DataError(
                "not a journal line (bad JSON); --restart discards the journal",
                file=partial,
                line=lineno,
            ) from None
        if (
            not isinstance(rec, dict)
            or not isinstance(rec.get("provenance"), dict)
            or not isinstance(rec.get("row"), dict)
            or not isinstance(rec["row"].get("id"), str)
        ):
            raise DataError(
                "a journal line has no provenance (written by an older assay or another "
                "tool); --restart discards the journal",
                file=partial,
                line=lineno,
            )
        records.append(rec)
        good += len(raw)
    return records, good


def _describe(field: str, value: Any) -> str:
    return "none" if value is None else repr(value) if field in ("query", "as_of") else str(value)


_PART_WORDS = {
    "spec": "its spec",
    "args": "its arguments",
    "identity": "its declared identity()",
    "code": "its code (a source file of its package)",
    "data": "its declared data files",
}


def _changed_parts(got: Mapping[str, Any], want: Mapping[str, Any]) -> str:
    """``: its code changed`` when both provenances carry the hash of each identity part."""
    a, b = got.get("system_parts"), want.get("system_parts")
    if not isinstance(a, Mapping) or not isinstance(b, Mapping):
        return ""
    changed = [_PART_WORDS.get(k, k) for k in _PART_WORDS if a.get(k) != b.get(k)]
    return f": {', '.join(changed)} changed" if changed else ""


def _mismatch_message(
    partial: Path,
    records: list[dict[str, Any]],
    expected: dict[str, dict[str, Any]],
) -> str | None:
    """None when every record matches this run; otherwise what differs, in words."""
    unknown: list[str] = []
    fields: dict[str, list[tuple[str, Any, Any]]] = {}
    for rec in records:
        rid = rec["row"]["id"]
        want = expected.get(rid)
        if want is None:
            unknown.append(rid)
            continue
        got = rec["provenance"]
        for f in _MATCHED:
            if got.get(f) != want.get(f):
                fields.setdefault(f, []).append((rid, got.get(f), want.get(f)))
    if not unknown and not fields:
        return None
    parts: list[str] = []
    run_level = {
        "system": "system",
        "corpus": "corpus",
        "dataset": "dataset version",
        "k": "k",
        "answers": "answers",
        "history": "history",
    }
    for f, label in run_level.items():
        if f in fields:
            _, got, want = fields[f][0]
            if f == "system":
                spec = records[0]["provenance"].get("spec")
                now = next(iter(expected.values())).get("spec")
                parts.append(
                    f"system: the journal's rows come from {spec} (identity {got}), "
                    f"this run is {now} (identity {want})"
                    + _changed_parts(records[0]["provenance"], next(iter(expected.values())))
                )
            else:
                parts.append(
                    f"{label}: {_describe(f, got)} in the journal, {_describe(f, want)} now"
                )
    for f in ("query", "as_of", "principal", "inputs"):
        if f in fields:
            ids = [rid for rid, _, _ in fields[f]]
            shown = ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")
            parts.append(f"the {f} of {len(ids)} entries changed ({shown})")
    if unknown:
        shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        parts.append(f"{len(unknown)} rows are for entries this run does not have ({shown})")
    return (
        f"{partial} holds {len(records)} rows of a different run, so they cannot be resumed: "
        + "; ".join(parts)
        + ". Rerun with --restart to discard them, or write to another --out."
    )


# ---------------------------------------------------------------- one entry


def _answer_parts(out: Any) -> tuple[str | None, list[str] | None, Any]:
    if out is None:
        return None, None, None
    if isinstance(out, str):
        return out, None, None
    if isinstance(out, Mapping):
        answer, citations, trace = out.get("answer"), out.get("citations"), out.get("trace")
    elif hasattr(out, "answer"):
        answer = out.answer
        citations = getattr(out, "citations", None)
        trace = getattr(out, "trace", None)
    else:
        raise TypeError(
            f"answer() returned {type(out).__name__}; expected a string, "
            "a dict with 'answer' and 'citations', or None"
        )
    if answer is not None and not isinstance(answer, str):
        raise TypeError(f"answer() gave an answer of type {type(answer).__name__}, not a string")
    if citations is not None:
        citations = list(citations)
        if not all(isinstance(c, str) for c in citations):
            raise TypeError("answer() gave citations that are not all chunk id strings")
    return answer, citations, trace


def _answer_extra(out: Any) -> dict[str, Any]:
    """What an answer adds to its row beyond the answer: the fields of its ``extra`` mapping
    (e.g. ``{"cost": {"prompt_tokens": ..., "usd": ...}}`` from an LLM answerer), kept in the
    row's `extra` except for the row's own fields."""
    extra = out.get("extra") if isinstance(out, Mapping) else getattr(out, "extra", None)
    if not isinstance(extra, Mapping):
        return {}
    reserved = {"id", "retrieved", "answer", "citations", "as_of", "latency_ms", "trace"}
    return {str(k): v for k, v in extra.items() if str(k) not in reserved}


def _tool_calls(out: Any) -> list[dict[str, Any]] | None:
    """The tool calls an answer (or an HTTP reply) says the system made, ``tool_calls``: a list
    of ``{"name", "arguments"}`` (`assay.dataset.toolgold.parse_calls`); None when it says
    nothing."""
    from assay.dataset import parse_calls

    raw = out.get("tool_calls") if isinstance(out, Mapping) else getattr(out, "tool_calls", None)
    if raw is None:
        return None
    try:
        calls = parse_calls(raw)
    except ValueError as exc:
        raise TypeError(str(exc)) from None
    return [{"name": c.name, "arguments": c.arguments} for c in calls]


_POOLS = ("candidates", "reranked")


def _retrieval_trace(trace: Any, source: str) -> dict[str, Any] | None:
    """The retrieval trace with its pools normalised to hit dicts (a bad hit names its field)."""
    if trace is None:
        return None
    if not isinstance(trace, Mapping):
        raise TypeError(f"the retrieval trace is a {type(trace).__name__}, not a dict")
    out = dict(trace)
    for name in _POOLS:
        pool = out.get(name)
        if pool is None:
            out.pop(name, None)
            continue
        if isinstance(pool, (str, bytes)) or not isinstance(pool, Sequence):
            raise TypeError(f"trace.{name} is a {type(pool).__name__}, not a list of hits")
        hits: list[Hit] = []
        for j, h in enumerate(pool):
            try:
                hits.append(parse_hit(h, source, None, j))
            except DataError as exc:
                p = exc.problems[0]
                fld = (p.field or "").replace("retrieved.", f"trace.{name}.", 1)
                raise DataError(Problem(source, None, fld, p.message)) from None
        out[name] = [
            {"chunk_id": h.chunk_id}
            if h.score is None
            else {"chunk_id": h.chunk_id, "score": h.score}
            for h in hits
        ]
    return out


def _merge_traces(retrieval: dict[str, Any] | None, answer: Any) -> Any:
    """One trace per row: the retrieval trace's keys, then the answer's (a non-dict answer trace
    goes under "answer")."""
    if retrieval is None:
        return answer
    if answer is None:
        return retrieval
    if isinstance(answer, Mapping):
        return {**answer, **retrieval}
    return {**retrieval, "answer": answer}


def call_retrieval(system: Any, entry: Entry, ctx: CallContext) -> dict[str, Any]:
    """The ``retrieval`` kind's call (`assay.systems.kinds`): one entry's row, uncached."""
    history = None if ctx.history is None else ctx.history.get(entry.id)
    return _call(system, entry, k=ctx.k, answers=ctx.answers, source=ctx.source, history=history)


def _call(
    system: Any,
    entry: Entry,
    *,
    k: int,
    answers: bool,
    source: str,
    history: Sequence[Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """Call the system for one entry; the run row as a dict (no caching here).

    The entry's principal reaches `retrieve`, `trace` and `answer` when they take a
    ``principal`` keyword (`assay.systems.protocol.takes_principal`); a system that does not is
    called as before, and the policy checks measure what it shows. `history` (a conversation
    turn's earlier turns) reaches each method that names a ``history`` keyword."""
    as_of = entry.as_of
    who: dict[str, Any] = {}
    if entry.principal is not None and takes_principal(system, "retrieve"):
        who = {"principal": entry.principal}

    def said(method: str) -> dict[str, Any]:
        if history is None or not takes_history(system, method):
            return {}
        return {"history": [dict(m) for m in history]}

    t0 = time.perf_counter()
    respond = getattr(system, "respond", None)
    trace: Any = None
    answer: str | None = None
    citations: list[str] | None = None
    index: Any = None
    tool_calls: list[dict[str, Any]] | None = None
    if callable(respond):  # one reply carries hits and answer (an HTTP endpoint)
        asked = (
            {"principal": entry.principal}
            if entry.principal is not None and takes_principal(system, "respond")
            else {}
        )
        data = respond(entry.query, as_of=as_of, k=k, **asked, **said("respond"))
        raw_hits = data["hits"]
        index = data.get("index")  # the index the reply says it came from
        answer, citations, trace = _answer_parts(
            {kk: data.get(kk) for kk in ("answer", "citations", "trace")}
        )
        tool_calls = _tool_calls(data)
    else:
        raw_hits = system.retrieve(entry.query, as_of=as_of, k=k, **who, **said("retrieve"))
    retrieval_trace: Any = None
    if isinstance(raw_hits, Mapping):  # {"hits": [...], "trace": {"candidates", "reranked"}}
        if "hits" not in raw_hits:
            raise TypeError("retrieve() returned a dict without 'hits'")
        retrieval_trace = raw_hits.get("trace")
        raw_hits = raw_hits["hits"]
    elif not callable(respond) and callable(getattr(system, "trace", None)):
        retrieval_trace = system.trace(
            entry.query,
            as_of=as_of,
            k=k,
            **(who if takes_principal(system, "trace") else {}),
            **said("trace"),
        )
    if isinstance(raw_hits, (str, bytes)) or not isinstance(raw_hits, Sequence):
        raise TypeError(f"retrieve() returned {type(raw_hits).__name__}, not a list of hits")
    hits: list[Hit] = [parse_hit(h, source, None, j) for j, h in enumerate(raw_hits)]
    answer_extra: dict[str, Any] = {}
    if not callable(respond) and answers and callable(getattr(system, "answer", None)):
        out = system.answer(
            entry.query,
            as_of=as_of,
            hits=hits,
            **(who if takes_principal(system, "answer") else {}),
            **said("answer"),
        )
        answer, citations, trace = _answer_parts(out)
        answer_extra = _answer_extra(out)
        tool_calls = _tool_calls(out)
    trace = _merge_traces(_retrieval_trace(retrieval_trace, source), trace)
    if isinstance(trace, Mapping) and any(p in trace for p in _POOLS):
        trace = _retrieval_trace(trace, source)  # pools of a respond() reply, normalised alike
    latency = (time.perf_counter() - t0) * 1000.0
    row = RunRow(
        entry.id,
        hits,
        answer=answer,
        citations=citations,
        as_of=as_of.isoformat() if as_of else None,
        latency_ms=round(latency, 3),
        extra={
            **answer_extra,
            **({} if trace is None else {"trace": trace}),
            **({} if index is None else {"index": index}),
            **({} if tool_calls is None else {"tool_calls": tool_calls}),
        },
    )
    return row.to_dict()


# ---------------------------------------------------------------- the run


@dataclass
class RunSummary(ReportMixin):
    """What `assay run` did: rows resumed from the journal, served by the cache, and called."""

    out: str | None
    rows: int
    resumed: int
    cached: int
    called: int
    run_hash: str
    system: str
    identity: str
    corpus: str | None
    dataset_version: str | None
    k: int

    @classmethod
    def from_run(cls, run: Run) -> RunSummary:
        m = run.meta
        return cls(
            out=run.path,
            rows=len(run),
            resumed=int(m.get("resumed_rows", 0)),
            cached=int(m.get("cache_hits", 0)),
            called=int(m.get("called_rows", 0)),
            run_hash=run.hash,
            system=str(m.get("system", {}).get("spec", "")),
            identity=str(m.get("system_hash", "")),
            corpus=m.get("corpus_hash"),
            dataset_version=m.get("dataset_version"),
            k=int(m.get("k", 0)),
        )

    def line(self) -> str:
        where = f"wrote {self.out}" if self.out else "ran"
        return (
            f"{where} ({self.rows} rows: {self.resumed} resumed, {self.cached} from cache, "
            f"{self.called} called; run {self.run_hash or '-'})"
            + (f" on index {self.corpus}" if self.corpus else "")
        )

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def tabular(self) -> Tabular:
        rows = [
            ["system", self.system],
            ["identity", self.identity],
            ["corpus", self.corpus or "-"],
            ["dataset", self.dataset_version or "-"],
            ["k", str(self.k)],
            ["rows", str(self.rows)],
            ["resumed from the journal", str(self.resumed)],
            ["from the request cache", str(self.cached)],
            ["called", str(self.called)],
            ["run", self.run_hash or "-"],
        ]
        return Tabular(
            title=f"run {self.out or ''}".strip(),
            header=["", "value"],
            rows=rows,
            emphasis=set(),
        )


def run_system(
    dataset: Dataset | Sequence[Entry],
    system: Any,
    *,
    k: int = 10,
    spec: str | None = None,
    options: Mapping[str, Any] | None = None,
    cache: RequestCache | None = None,
    out: str | Path | None = None,
    workers: int | None = None,
    answers: bool = True,
    restart: bool = False,
    progress: bool = True,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    executor: str | Executor | None = None,
    corpus_id: str | None = None,
    history: str = "own",
) -> Run:
    """Run `system` over every entry; returns the Run (and writes it to `out` when given).

    The run's metadata records the corpus it was made on (`assay.runs.corpus`): the system's
    ``corpus_hash`` (or ``corpus_id``, for a system that declares none; a different one is
    refused), the location and hash of its chunk table when the system says where it is
    (``chunks_path``), or the index an HTTP system's replies name (every reply must name the
    same one).

    `system` is an object or a spec string for `load_system` (built with `options`); `spec`
    names an object in its identity (default: its class). `workers` defaults to the system's
    `max_workers` (8 for HTTP systems) or 1 (Python systems are rarely thread-safe). With
    `out`, rows are journalled to ``<out>.partial`` and a rerun resumes; a journal of another
    run raises `JournalMismatch` unless `restart`.

    `executor` (`assay.executors`): "local" (default) calls the system here, on `workers`
    threads; "ray" or "ray:ADDRESS" builds one system per Ray actor (from the spec string and
    options, or the pickled object) and sends it the entries the request cache misses, in
    batches, `workers` actors at most (default: the cluster's CPUs). Rows return to this
    process, which keeps the cache, the journal, the provenance and the row order, so the file is
    the one the local executor writes (up to `latency_ms`, the measured wall time of each call).

    `history` (``own``, ``gold`` or ``none``): what a system that takes a ``history`` keyword
    is told of a conversation's earlier turns (`assay.dataset.history_of`); the turns of a
    conversation are asked in order (module docs).
    """
    if k < 1:
        raise UsageError(f"k must be at least 1, not {k}")
    if history not in HISTORY_MODES:
        raise UsageError(f"history must be one of {', '.join(HISTORY_MODES)}, not {history!r}")
    entries = dataset.entries if isinstance(dataset, Dataset) else list(dataset)
    ex = parse_executor(executor, workers=None if executor is None else workers)
    plan = _plan(
        dataset, entries, system, spec=spec, options=options, k=k, answers=answers,
        corpus_id=corpus_id, history=history,
    )  # fmt: skip
    entries = plan.entries  # the entries the system's kind asks
    if ex.is_local:
        threads = workers or int(getattr(plan.system, "max_workers", 1) or 1)
        ex = ex.with_workers(ex.workers or threads)
    try:
        partial, done, journalled = _open_journal(out, restart, plan)
        session = _Session(plan, cache if cache is not None else RequestCache(), partial, on_row)
        session.results.update(done)
        todo = [e for e in entries if e.id not in done]
        try:
            with session.journal(), _progress(len(entries), len(done), progress) as advance:
                session.advance = advance
                learn = plan.replies
                for step in _steps(todo):
                    session.tell_history(step)
                    if learn and step:
                        session.learn_index(step.pop(0), journalled)
                        learn = False
                    _drive(session, ex, step)
        except KeyboardInterrupt:
            raise RunInterrupted(len(session.results), len(entries), partial) from None
    finally:
        if plan.owned and callable(getattr(plan.system, "close", None)):
            plan.system.close()
    return _finish_run(plan, session, out, partial, resumed=len(done))


# ---------------------------------------------------------------- the steps of a run


@dataclass
class _Plan:
    """What a run is before any call: the system (built here when given by spec), what a worker
    builds its own from (`remote`), its identity, and every entry's expected provenance."""

    dataset: Dataset | None
    entries: list[Entry]
    system: Any
    remote: Any  # a spec string or the object itself
    options: dict[str, Any]
    owned: bool  # built here, so closed here
    ident_obj: dict[str, Any]
    ident: str  # canonical JSON of the identity (part of every cache key)
    ident_h: str
    corpus: str | None
    k: int
    answers: bool
    expected: dict[str, dict[str, Any]]
    kind: SystemKind  # how it is asked (`assay.systems.kinds`)
    ctx: CallContext
    chunks: dict[str, str] | None = None  # the chunk table's location and hash, when known
    replies: bool = False  # its replies name their index (an HTTP system): learnt by a call
    index: str | None = None  # the index it is on: part of every cache key (`_index_of`)
    skipped: int = 0  # entries its kind does not ask
    history: str = "own"  # what a conversation turn is told of the earlier ones
    takes_history: bool = False  # a method of the system names `history`
    turns: dict[str, list[Entry]] | None = None  # conversation id -> its turns (None: none)

    @property
    def source(self) -> str:
        return str(self.ident_obj["spec"])

    def call(self, entry: Entry) -> dict[str, Any]:
        """One entry asked of the system as its kind asks it (no cache)."""
        return self.kind.call(self.system, entry, self.ctx)

    @property
    def dataset_version(self) -> str | None:
        return self.dataset.version if self.dataset is not None else None

    def key_of(self, entry: Entry, index: str | None) -> str:
        """The cache key of `entry` asked of the system on `index` (`self.index` for a lookup;
        for a reply that names its index, that one)."""
        who = principal_key(entry.principal)
        inputs = self.expected[entry.id].get("inputs")
        told = None
        if self.takes_history and self.ctx.history is not None:
            told = self.ctx.history.get(entry.id)
        return cache_key(
            system=self.ident,
            corpus=self.corpus,
            query=entry.query,
            as_of=entry.as_of.isoformat() if entry.as_of else None,
            k=self.k,
            answers=self.answers,
            # only when the entry names one: keys of entries without a principal are unchanged
            **({} if who is None else {"principal": who}),
            # only when it says more than the corpus hash (a bm25 run's keys are unchanged)
            **({} if index is None or index == self.corpus else {"index": index}),
            # only for a kind that hands the system more than the query (a SQL schema)
            **({} if inputs is None else {"inputs": inputs}),
            # only for a conversation turn asked of a system that is told the history
            **({} if told is None else {"history": [dict(m) for m in told]}),
        )

    def index_of(self, row: Mapping[str, Any]) -> str | None:
        """The index a row was made on: the one its reply names, or the run's."""
        return _index_hash(row.get("index")) if self.replies else self.index

    def learnt(self, index: str | None) -> None:
        """The index the system's first reply named: every later key and provenance has it."""
        self.index = index
        for prov in self.expected.values():
            prov["index"] = index


def _plan(
    dataset: Dataset | Sequence[Entry],
    entries: list[Entry],
    system: Any,
    *,
    spec: str | None,
    options: Mapping[str, Any] | None,
    k: int,
    answers: bool,
    corpus_id: str | None = None,
    history: str = "own",
) -> _Plan:
    """Build (or check) the system and work out its identity and the rows' provenance."""
    opts = dict(options or {})
    remote = system
    owned = isinstance(system, str)
    if isinstance(system, str):
        spec = spec or system
        system = load_system(system, **opts)
    kind = kind_of(system, spec or type(system).__name__)
    if not kind.uses_k:
        k = 0  # k means nothing to it: left out of its keys, its journal and its run
    skipped = len(entries)
    entries = [e for e in entries if kind.applies(e)]
    skipped -= len(entries)
    ident_obj = system_identity(system, spec, opts)
    corpus = corpus_hash_of(system)
    if corpus_id is not None:
        if corpus is not None and corpus != corpus_id:
            raise UsageError(
                f"--corpus-id {corpus_id}: the system says it searches corpus {corpus}"
            )
        corpus = corpus_id
    chunks = chunk_table_of(system, corpus)
    replies = callable(getattr(system, "respond", None))
    index = chunks["hash"] if chunks is not None and not replies else None
    ds = dataset if isinstance(dataset, Dataset) else None
    ctx = CallContext(
        k=k,
        answers=answers,
        source=str(ident_obj["spec"]),
        base=Path(ds.path).parent if ds is not None and ds.path else None,
    )
    base = {
        "system": identity_hash(ident_obj),
        "system_parts": identity_parts(ident_obj),
        "spec": ident_obj["spec"],
        "corpus": corpus,
        "dataset": ds.version if ds is not None else None,
        "k": k,
        "answers": answers,
        "index": index,
    }
    turns = by_conversation(entries) or None
    if turns is not None:
        base["history"] = history  # a journal of another mode is another run
    return _Plan(
        dataset=ds,
        entries=entries,
        system=system,
        remote=remote,
        options=opts,
        owned=owned,
        ident_obj=ident_obj,
        ident=dumps_canonical(ident_obj),
        ident_h=base["system"],
        corpus=corpus,
        k=k,
        answers=answers,
        expected={
            e.id: _provenance(base, e, kind.inputs(e, ctx) if kind.inputs else {}) for e in entries
        },
        chunks=chunks,
        replies=replies,
        index=index,
        kind=kind,
        ctx=ctx,
        skipped=skipped,
        history=history,
        takes_history=any(
            takes_history(system, m) for m in ("retrieve", "trace", "answer", "respond")
        ),
        turns=turns,
    )


def _open_journal(
    out: str | Path | None, restart: bool, plan: _Plan
) -> tuple[Path | None, dict[str, dict[str, Any]], dict[str, str | None]]:
    """``<out>.partial``, the rows it already holds (after checking they belong to this run
    and cutting a torn last line off) and the index each was made on, where the journal says;
    (None, {}, {}) without `out`."""
    if out is None:
        return None, {}, {}
    partial = Path(str(out) + ".partial")
    partial.parent.mkdir(parents=True, exist_ok=True)
    if restart and partial.exists():
        partial.unlink()
    if not partial.exists():
        return partial, {}, {}
    records, good = _read_journal(partial)
    problem = _mismatch_message(partial, records, plan.expected)
    if problem is not None:
        raise JournalMismatch(problem)
    indexes: dict[str, str | None] = {}
    for rec in records:
        row, prov = rec["row"], rec["provenance"]
        if plan.replies or "index" in row:  # the index the reply named (none: it named none)
            indexes[row["id"]] = _index_hash(row.get("index"))
        elif "index" in prov:  # a journal of an older assay does not say: its corpus matched
            indexes[row["id"]] = prov["index"]
    # a system that replies with its index is on the one its next reply names (`_learn_index`)
    _check_journal_index(partial, indexes, plan.index, known=not plan.replies)
    if good < partial.stat().st_size:
        with open(partial, "r+b") as fh:  # cut the torn last line off
            fh.truncate(good)
    return partial, {rec["row"]["id"]: rec["row"] for rec in records}, indexes


def _check_journal_index(
    partial: Path | None, indexes: Mapping[str, str | None], now: str | None, *, known: bool
) -> None:
    """Refuse (DataError) a journal whose rows were made on several indexes, or (when the index
    the system is on is `known`) on another one than `now`: a run is made on one index."""
    groups: dict[str | None, list[str]] = {}
    for rid, idx in indexes.items():
        groups.setdefault(idx, []).append(rid)
    if partial is None or (len(groups) <= 1 and (not known or set(groups) <= {now})):
        return
    shown = "; ".join(
        f"index {_describe('index', idx)} ({len(ids)} rows, e.g. {ids[0]})"
        for idx, ids in groups.items()
    )
    raise DataError(
        f"the journal's rows were made on {shown}"
        + (f", and the system is on index {_describe('index', now)} now" if known else "")
        + ": a run is made on one index, so they cannot be resumed. Rerun with --restart "
        "to discard them, or write to another --out.",
        file=partial,
        field="index",
    )


@contextlib.contextmanager
def _progress(total: int, completed: int, enabled: bool) -> Iterator[Callable[[], None]]:
    """A progress bar over the rows (hidden when not `enabled`); yields its advance()."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("[bold]run[/]"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, disable=not enabled, transient=True) as bar:
        task = bar.add_task("run", total=total, completed=completed)
        yield lambda: bar.advance(task)


class _Session:
    """One run in progress: the rows so far, the cache and the journal they go to, the counts."""

    def __init__(
        self,
        plan: _Plan,
        cache: RequestCache,
        partial: Path | None,
        on_row: Callable[[dict[str, Any]], None] | None,
    ) -> None:
        self.plan, self.cache, self.partial, self.on_row = plan, cache, partial, on_row
        self.results: dict[str, dict[str, Any]] = {}
        self.counts = {"cached": 0, "called": 0}
        self.advance: Callable[[], None] = lambda: None
        self._fh: Any = None
        self._cached: set[str] = set()  # entries a local call served from the cache

    @contextlib.contextmanager
    def journal(self) -> Iterator[None]:
        if self.partial is None:
            yield
            return
        with open(self.partial, "a", encoding="utf-8") as fh:
            self._fh = fh
            try:
                yield
            finally:
                self._fh = None

    def tell_history(self, step: list[Entry]) -> None:
        """Work out the history of each conversation turn of `step` (its earlier turns are
        done: run, resumed or cached) and hand it to the calls (`CallContext.history`)."""
        p = self.plan
        if p.turns is None:
            return

        def answer(eid: str) -> str | None:
            row = self.results.get(eid)
            return None if row is None else row.get("answer")

        told = {
            e.id: tuple(history_of(e, p.turns[e.conversation.id], p.history, answer))
            for e in step
            if e.conversation is not None
        }
        p.ctx = dataclasses.replace(p.ctx, history=told)

    def lookup(self, entry: Entry) -> dict[str, Any] | None:
        hit = self.cache.get(self.plan.key_of(entry, self.plan.index))
        return None if hit is None else {"id": entry.id, **hit}

    def store(self, entry: Entry, row: dict[str, Any]) -> None:
        self.cache.put(
            self.plan.key_of(entry, self.plan.index_of(row)),
            {kk: vv for kk, vv in row.items() if kk != "id"},
            provenance=self.plan.expected[entry.id],
        )

    def learn_index(self, entry: Entry, journalled: Mapping[str, str | None]) -> None:
        """Call a system whose replies name their index for `entry` (never from the cache) and
        take the index its reply names as the run's: every cache key has it, so replies cached
        on another index are not served, and rows journalled on another one are refused."""
        p = self.plan
        try:
            row = p.call(entry)
        except Exception as exc:
            raise self.failed(entry, exc) from exc
        p.learnt(_index_hash(row.get("index")))
        self.store(entry, row)
        _check_declared(p, p.index)
        _check_journal_index(self.partial, journalled, p.index, known=True)
        self.finish(entry, row, "called")

    def call_here(self, _state: Any, entry: Entry) -> _Outcome:
        """One entry in this process: from the cache, or called and cached."""
        try:
            row = self.lookup(entry)
            if row is not None:
                self._cached.add(entry.id)
                return row, None
            p = self.plan
            row = p.call(entry)
            self.store(entry, row)
            return row, None
        except Exception as exc:
            return None, exc

    def keep(self, entry: Entry, row: dict[str, Any], *, here: bool) -> None:
        """A row from the executor: `call_here` cached it already; a worker's row is cached now."""
        if here:
            how = "cached" if entry.id in self._cached else "called"
        else:
            self.store(entry, row)
            how = "called"
        self.finish(entry, row, how)

    def finish(self, entry: Entry, row: dict[str, Any], how: str) -> None:
        """A row is done: keep it, journal it with its provenance, tell `on_row`."""
        self.results[row["id"]] = row
        self.counts[how] += 1
        if self._fh is not None:
            rec = {"provenance": self.plan.expected[entry.id], "source": how, "row": row}
            self._fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            self._fh.flush()
        if self.on_row is not None:
            self.on_row(row)
        self.advance()

    def failed(self, entry: Entry, exc: BaseException) -> SystemCallError:
        """The error that stops the run at `entry`, saying how many rows are saved and where."""
        if isinstance(exc, SystemCallError):
            return exc
        if isinstance(exc, WorkerLost):
            msg = (
                "the worker running this entry died (its process ended), and so did the "
                "worker it was retried on"
            )
        else:
            text = str(exc) if isinstance(exc, (DataError, UsageError)) else None
            msg = text or f"{type(exc).__name__}: {exc}"
        if self.partial is not None:
            msg += (
                f" ({len(self.results)} of {len(self.plan.entries)} rows are saved in "
                f"{self.partial}: rerun the same command to resume)"
            )
        return SystemCallError(entry.id, msg)


_Outcome = tuple[dict[str, Any] | None, BaseException | None]


def _steps(todo: list[Entry]) -> list[list[Entry]]:
    """`todo` in steps by turn number: the first turns and the entries of no conversation, then
    the second turns, ...; each step keeps the entries' order."""
    by_turn: dict[int, list[Entry]] = {}
    for e in todo:
        by_turn.setdefault(1 if e.conversation is None else e.conversation.turn, []).append(e)
    return [by_turn[t] for t in sorted(by_turn)]


def _drive(session: _Session, ex: Executor, todo: list[Entry]) -> None:
    """Get a row for every entry of `todo` from `ex` and finish each.

    In this process (local), each entry is looked up in the cache and called on a miss, in
    order (or on threads). Elsewhere (Ray), the driver owns the cache: hits are finished here,
    only the misses go to the workers, and their rows are cached here.

    Rows arrive as workers finish them, not in entry order. When an entry fails, the rows of
    the entries before it are still awaited and saved (none is lost), rows after it are saved
    only if they were back before (the local executor would not have called them), and the
    earliest failure is the one raised."""
    p = session.plan
    if ex.is_local:
        items, call, setup = todo, session.call_here, None
    else:
        items = []
        for e in todo:
            hit = session.lookup(e)
            if hit is None:
                items.append(e)
            else:
                session.finish(e, hit, "cached")
        setup = functools.partial(_worker_system, p.remote, p.options)
        call = functools.partial(_call_entry, p.kind.name, p.ctx)
    stream = imap(ex, call, items, setup=setup)
    fail: tuple[int, BaseException | None] | None = None
    arrived: set[int] = set()
    try:
        for i, (row, error) in stream:
            arrived.add(i)
            if error is not None or row is None:
                if fail is None or i < fail[0]:
                    fail = (i, error)
            elif fail is None or i < fail[0]:
                session.keep(items[i], row, here=ex.is_local)
            if fail is not None and all(j in arrived for j in range(fail[0])):
                break
        if fail is not None:
            at, error = fail
            raise session.failed(items[at], error or TypeError("no row")) from error
    except (SystemCallError, UsageError):
        raise
    except WorkerLost as exc:
        raise session.failed(items[exc.index], exc) from exc
    except Exception as exc:  # the system could not be built on a worker
        raise session.failed(items[0], exc) from exc
    finally:
        stream.close()


def _finish_run(
    plan: _Plan, session: _Session, out: str | Path | None, partial: Path | None, *, resumed: int
) -> Run:
    """The Run, in entry order, with its metadata; written to `out` (then the journal goes)."""
    # every row is bound to the entry it answered: the entry's fingerprint (normalised query and
    # as_of) and the dataset version, so scoring can refuse rows whose entry changed since
    rows = [_bind(session.results[e.id], e, plan.dataset_version) for e in plan.entries]
    corpus, chunks = _replied_index(plan, rows)
    meta = {
        "system": plan.ident_obj,
        "system_hash": plan.ident_h,
        "corpus_hash": corpus,
        "chunks": chunks,
        "k": plan.k,
        "answers": plan.answers,
        "dataset_version": plan.dataset_version,
        "dataset_path": plan.dataset.path if plan.dataset is not None else None,
        "n_entries": len(plan.entries),
        "kind": plan.kind.name,
        # entries the kind does not ask (a text-to-SQL system is asked the ones with sql gold)
        **({"not_asked": plan.skipped} if plan.skipped else {}),
        **({} if plan.turns is None else {"history": plan.history}),
        "resumed_rows": resumed,
        "cache_hits": session.counts["cached"],
        "called_rows": session.counts["called"],
    }
    if out is None:
        return Run.from_rows(rows, meta=meta)
    h = write_run(out, rows, meta=meta)
    if partial is not None and partial.exists():
        os.unlink(partial)
    return Run.from_rows(rows, path=str(out), hash=h, meta=meta)


def _replied_index(plan: _Plan, rows: list[dict[str, Any]]) -> tuple[Any, Any]:
    """The run's corpus hash and chunk table: the system's, else the index its replies named
    (an HTTP system's ``index`` field or header; every reply must name the same one)."""
    named: dict[str, dict[str, Any]] = {}
    for r in rows:
        idx = r.get("index")
        if idx is None:
            continue
        rec = idx if isinstance(idx, Mapping) else {"hash": str(idx)}
        named.setdefault(dumps_canonical(rec), {"rec": rec, "ids": []})["ids"].append(r["id"])
    if len(named) > 1:
        shown = "; ".join(
            f"{v['rec'].get('hash')} ({len(v['ids'])} rows, e.g. {v['ids'][0]})"
            for v in named.values()
        )
        raise DataError(
            Problem(
                plan.source,
                None,
                "index",
                f"the replies name several indexes: {shown}. A run is made on one index; "
                "rerun when the server serves one",
            )
        )
    corpus, chunks = plan.corpus, plan.chunks
    if named:
        rec = next(iter(named.values()))["rec"]
        said = _index_hash(rec)
        _check_declared(plan, said)
        corpus = corpus or said
        if chunks is None and rec.get("chunks"):
            # the table the server names, as it is here (its hash and content fingerprint);
            # only the server's word for it when this machine cannot read it
            chunks = table_record(str(rec["chunks"])) or (
                {"path": str(rec["chunks"]), "hash": said} if said else None
            )
    return corpus, chunks


def _index_hash(index: Any) -> str | None:
    """The hash of an index as a reply names it (``"<hash>"`` or ``{"hash", "chunks"}``)."""
    if isinstance(index, Mapping):
        index = index.get("hash")
    return None if index is None else str(index)


def _check_declared(plan: _Plan, said: str | None) -> None:
    """Refuse replies that name another index than the corpus the run was declared on."""
    if plan.corpus is not None and said is not None and said != plan.corpus:
        raise DataError(
            Problem(
                plan.source,
                None,
                "index",
                f"the replies name index {said}, but the run was declared on {plan.corpus} "
                "(--corpus-id)",
            )
        )


def _bind(row: dict[str, Any], entry: Entry, dataset_version: str | None) -> dict[str, Any]:
    out = {**row, "entry_fp": entry_fingerprint(entry)}
    if dataset_version is not None:
        out["dataset_version"] = dataset_version
    return out


def _worker_system(system: Any, options: dict[str, Any]) -> Any:
    """A worker's own system: built from the spec string, or the shipped object as is."""
    return load_system(system, **options) if isinstance(system, str) else system


def _call_entry(
    kind: str, ctx: CallContext, system: Any, entry: Entry
) -> tuple[dict[str, Any] | None, BaseException | None]:
    """One call on a worker: the row, or the exception (returned, so the driver knows which
    entry failed and says so as the local executor does)."""
    try:
        return get_kind(kind).call(system, entry, ctx), None
    except Exception as exc:
        return None, exc
