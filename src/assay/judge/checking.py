"""Running the registered checks: on one answer (`check_entry`), on every row of a run
(`check_rows`), rated per category with intervals (`check_run`) and on files (`check_files`,
what `assay check` runs).

The checks themselves are the modules of `assay.checks`, one per group, found by the registry on
its first read (`assay.judge.registry`); what each built-in check decides is its docstring there
and the table of docs/answers.md ("assay check").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from assay.corpus import ChunkTable
from assay.dataset import Dataset, Entry
from assay.errors import UsageError
from assay.gold.resolve import answer_level, resolve_gold, skipped_note
from assay.judge.context import AskingJudge, CheckContext
from assay.judge.numeric import NumericVerdict
from assay.judge.refusal import RefusalResult
from assay.judge.registry import Check, default_checks, resolve_checks
from assay.judge.report import CI_METHOD, CheckReport, rate_table
from assay.runs import Run, load_run
from assay.runs.model import RunRow

if TYPE_CHECKING:
    from assay.dataset import FreshSession
    from assay.runs.corpus import RunTable

__all__ = [
    "CHECKS_VERSION",
    "EntryChecks",
    "check_entry",
    "check_files",
    "check_rows",
    "check_run",
    "default_checks_for",
    "groupings_for",
]

CHECKS_VERSION = "checks-6"
"""Version of the deterministic rules; bump when a rule changes what a check decides."""


# ------------------------------------------------------------------------------ one entry


@dataclass(slots=True)
class EntryChecks:
    """The checks' values for one entry and its run row."""

    id: str
    category: str
    numeric: NumericVerdict
    refusal: RefusalResult
    values: dict[str, bool | float | int | None] = field(default_factory=dict)
    key_fact_recall: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def faithful(self) -> bool | None:
        """Faithfulness: every figure verified in cited spans and none contradicts them."""
        v = self.values.get("numbers_verified")
        return None if v is None else bool(v)

    @property
    def correct(self) -> bool | None:
        v = self.values.get("answer_correct")
        return None if v is None else bool(v)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            **self.values,
            "key_fact_recall": self.values.get("key_fact_recall", self.key_fact_recall),
            "numeric_reason": self.numeric.reason,
            "refused": self.refusal.refused,
            "notes": self.notes,
        }


def check_entry(
    entry: Entry,
    answer: str | None,
    *,
    citations: Sequence[str] | None = None,
    chunk_text: Mapping[str, str] | None = None,
    evidence_text: Iterable[str] = (),
    checks: str | Iterable[str] | None = None,
    row: RunRow | None = None,
    dataset: Dataset | None = None,
    chunks: ChunkTable | None = None,
    judge: AskingJudge | None = None,
    run: Run | None = None,
) -> EntryChecks:
    """Run the registered checks (`checks`: names, default the default set) on one answer.

    `chunk_text` maps chunk ids to text (needed for numbers_verified); `evidence_text` is the
    entry's gold evidence text where known (it lets a wrong figure be named as another period's);
    `row` is the run row the answer came from (`CheckContext.row`), `dataset` the dataset the
    entry belongs to (`CheckContext.dataset`). With a row and no
    `citations`, the row's citations are used. A check that needs an answer
    (`Check.needs_answer`) abstains when `answer` is None and a row is given. `judge` (an
    `assay.judge.llm.LLMJudge`) is asked what no rule decides (`clarify_ok` and
    `premise_corrected` on entries that do not say what to ask or correct); without one those
    checks abstain there. `run` (the whole run) lets the conversation checks read the answers
    to the entry's earlier turns (`CheckContext.turn_answer`).
    """
    if row is not None and citations is None:
        citations = row.citations
    ctx = CheckContext(
        entry,
        answer,
        citations=citations,
        chunk_text=chunk_text,
        evidence_text=evidence_text,
        row=row,
        dataset=dataset,
        chunks=chunks,
        judge=judge,
        run=run,
    )
    return _checked(ctx, resolve_checks(checks))


def _checked(ctx: CheckContext, resolved: Sequence[Check[CheckContext]]) -> EntryChecks:
    """The resolved checks (resolved once per run, not once per entry) on one context."""
    entry, answer, row = ctx.entry, ctx.answer, ctx.row
    values: dict[str, bool | float | int | None] = {}
    notes: list[str] = []
    for c in resolved:
        if row is not None and answer is None and c.needs_answer:
            values[c.name] = None
            continue
        out = ctx.run(c)
        values[c.name] = out.value
        notes.extend(out.notes)
    return EntryChecks(
        entry.id, entry.category, ctx.numeric, ctx.refusal, values, ctx.key_fact_recall, notes
    )


# ------------------------------------------------------------------------------ over a whole run


def check_run(
    dataset: Dataset,
    run: Run,
    *,
    chunks: ChunkTable | str | Path | RunTable | None = None,
    rng: np.random.Generator | None = None,
    n_boot: int = 1000,
    checks: str | Iterable[str] | None = None,
    allow_reuse: bool = False,
    level: str = "auto",
    skip_stale: bool = False,
    by: str | Sequence[str] | None = None,
    allow_corpus_change: bool = False,
    judge: AskingJudge | None = None,
    allow_changed_entries: bool = False,
    cluster: str | None = "auto",
    session: FreshSession | None = None,
) -> CheckReport:
    """The deterministic checks on every entry the run answered, rated per category with CIs.

    The run is read against the chunk table it was made on (`assay.runs.corpus.bind_run`, as
    `assay score` reads it): the one it recorded; ``chunks`` only for runs that recorded none;
    another table refused unless ``allow_corpus_change``; the binding in ``meta["chunks"]``.

    With `chunks`, the gold is read as `assay score` reads it (`assay.gold.resolve_gold` at
    ``level``): gold that does not resolve on the table stops the check with the list, unless
    ``skip_stale``, which leaves those entries out and says so in the warnings. ``level="auto"``
    (what `assay check` passes by default) reads it at chunk level where every anchor resolves
    onto a chunk, and otherwise at page level, saying so in the warnings
    (`assay.gold.resolve.answer_level`): answer checks need no chunk-level gold.

    `checks` names the checks to run ("a,b" or a list; default: the default answer checks,
    `assay.judge.registry.resolve_checks`; `check_files`, what `assay check` runs, picks the
    groups the dataset calls for, `default_checks_for`); an unknown name is a `UsageError`
    that lists the registered ones. `by` names how the rates' rows are grouped
    (`groupings_for`): ``category``, ``principal.role`` (per role of the asking principal), any
    field `assay.dataset.groups` reads, or several ("category,principal.role": one table each);
    default: per category, and per role too when an entry names a principal.

    Faithfulness (`numbers_verified`: the answer's figures are in the spans it cites) and
    correctness (`answer_correct`) are separate columns; entries where they disagree are listed,
    "faithful but wrong" first (faithful to the wrong quarter is the failure that matters).
    Needs `chunks` for numbers_verified; without it that column abstains.

    `judge` (an `assay.judge.llm.LLMJudge`) decides what the entries do not (`check_entry`).

    Checking a sealed fresh sample is one use of it (refused a second time unless
    ``allow_reuse``; see `assay.dataset.fresh.using`), or part of the use the caller opened
    (``session``: an export, which guards its files once). Rows whose entry's query or `as_of`
    changed since the run was made are refused, as `assay score` refuses them
    (`assay.runs.binding.check_binding`), unless ``allow_changed_entries``: then the warnings
    name them.

    ``cluster`` (`assay.dataset.clustering.clustering_for`: ``doc``, ``company``, an entry
    field, ``none``; default ``auto``: by evidence document when the dataset has more than one
    entry per document): entries in one cluster are not independent, and each rate's interval
    treats a cluster as one draw; the report's ``clustering`` and header say how.
    """
    from assay.dataset import clustering_for, fresh
    from assay.runs.binding import changed_note, check_binding
    from assay.runs.corpus import bind_run

    changed = check_binding(dataset, run, allow_changed=allow_changed_entries)
    bound = bind_run(
        run, given=chunks, allow_change=allow_corpus_change, label="checked", max_share=1.0
    )
    chunks = bound.table
    left_out: str | None = None
    read_at: str | None = None
    if level not in ("auto", "chunk", "page"):
        raise ValueError(f"level must be auto, chunk or page, not {level!r}")
    if chunks is not None:
        lvl: Any = level
        if level == "auto":
            lvl, read_at = answer_level(dataset.entries, chunks)
        gold = resolve_gold(
            dataset.entries,
            chunks=chunks,
            level=lvl,
            file=dataset.path or "<dataset>",
            lines=dataset.lines,
            skip_stale=skip_stale,
        )
        if gold.excluded:
            from assay.dataset import Dataset

            keep = [e for e in dataset.entries if e.id not in gold.excluded]
            left_out = skipped_note(gold.excluded, gold.excluded_kinds)
            dataset = Dataset(
                keep,
                path=dataset.path,
                lines=dataset.lines,
                manifest=dataset.manifest,
                content_hash=dataset.content_hash,
                tiers=dataset.tiers,
            )
    clusters = clustering_for(dataset.entries, cluster, file=dataset.path or "<dataset>")
    with (
        fresh.using(dataset, command="check", allow_reuse=allow_reuse, runs=[run.hash])
        if session is None
        else nullcontext(session)
    ) as own:
        resolved = resolve_checks(checks)
        selected = [c.name for c in resolved]
        rng = rng if rng is not None else np.random.default_rng(0)
        rows, missing = check_rows(dataset, run, chunks=chunks, checks=selected, judge=judge)
        # (numbers_verified, answer_correct) that disagree: every "faithful but wrong" row first
        disagreements = [
            {
                "id": r["id"],
                "category": r["category"],
                "kind": kind,
                "why": "; ".join(r["notes"]) or (r["numeric_reason"] if faithful else ""),
            }
            for faithful, kind in ((True, "faithful but wrong"), (False, "correct but unverified"))
            for r in rows
            if r.get("numbers_verified") is faithful and r.get("answer_correct") is (not faithful)
        ]
        warnings: list[str] = []
        if missing:
            warnings.append(f"{missing} entries have no row in the run and are not checked")
        if chunks is None and "numbers_verified" in selected:
            warnings.append("no chunk table given (--chunks): numbers_verified abstains")
        kinds = {c.name: c.kind for c in resolved}
        # every grouping draws the same base seed (a copy of the generator's state), so the overall
        # row is the same in each table and adding a grouping moves no interval
        state = rng.bit_generator.state

        def same() -> np.random.Generator:
            g = np.random.Generator(type(rng.bit_generator)())
            g.bit_generator.state = state
            return g

        rates = {
            b: rate_table(
                _regrouped(dataset, rows, b),
                selected,
                same(),
                n_boot,
                kinds=kinds,
                clusters=clusters,
            )
            for b in groupings_for(dataset, by)
        }
        rng.integers(0, 2**31 - 1)  # the caller's generator moves on as one table's draw moves it
        first, *rest = rates
        from assay.dataset import rollup

        rolled = rollup(
            [str(r["id"]) for r in rows],
            {c: [r.get(c) for r in rows] for c in selected},
            dataset.entries,
            binary=[c for c in selected if kinds[c] == "binary"],
            failures=[c.name for c in resolved if not c.higher_is_better],
        )
        report = CheckReport(
            conversations=rolled,
            rows=rows,
            checks=selected,
            by=first,
            rates=rates[first],
            also={b: rates[b] for b in rest},
            disagreements=disagreements,
            clustering=None if clusters is None else clusters.summary([str(r["id"]) for r in rows]),
            meta={
                "dataset": {"path": dataset.path, "version": dataset.version},
                "run": {"path": run.path, "hash": run.hash},
                "chunks": None
                if chunks is None
                else {
                    "path": getattr(chunks, "path", None),
                    "version": getattr(chunks, "version", None),
                },
                "checks_version": CHECKS_VERSION,
                **({"judge": getattr(judge, "identity_hash", repr(judge))} if judge else {}),
                "ci": {"method": CI_METHOD, "level": 0.95, "n_boot": n_boot},
            },
            warnings=warnings,
        )
    if read_at is not None:
        report.warnings.append(read_at)
    report.warnings[:0] = dataset.tier_notes()
    if dataset.tiers is not None:
        report.meta["tiers"] = dataset.tiers.to_dict()
    if left_out is not None:
        report.warnings.append(left_out)
    report.warnings.extend(bound.notes(run, "checked"))
    if changed:
        report.warnings.append(changed_note([c.id for c in changed], run.path))
        report.meta["changed"] = {c.id: c.message for c in changed}
    if bound.table is not None:
        report.meta["chunks"] = bound.to_dict()
    if own.use is not None:  # a use of its own (the caller's is known when its block ends)
        report.meta["fresh"] = own.use.to_dict()
        report.warnings.append(own.use.message)
    return report


def check_rows(
    dataset: Dataset,
    run: Run,
    *,
    chunks: ChunkTable | None = None,
    checks: str | Iterable[str] | None = None,
    judge: AskingJudge | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The checks' values on every entry the run answered: (one dict per entry as
    `EntryChecks.to_dict` gives it, the number of entries without a row in the run).

    Rows without an answer are checked only when a selected check reads the rest of the row
    (`Check.needs_answer` False); the checks that need an answer abstain there. No rates, no
    intervals: what `check_run` rates and what a comparison pairs (`assay.compare.series`).
    """
    resolved = resolve_checks(checks)
    # rows without an answer are checked only by checks that read the rest of the row
    without_answer = any(not c.needs_answer for c in resolved)
    chunk_text = {c.chunk_id: c.text for c in chunks} if chunks is not None else None
    rows: list[dict[str, Any]] = []
    missing = 0
    for entry in dataset.entries:
        if entry.id not in run:
            missing += 1
            continue
        rr = run.row(entry.id)
        if rr.answer is None and not without_answer:
            continue
        evidence = [a.quote for a in entry.anchors()]
        if chunk_text is not None:
            evidence += [chunk_text[c] for c in sorted(entry.chunk_ids()) if c in chunk_text]
        ctx = CheckContext(
            entry,
            rr.answer,
            citations=rr.citations,
            chunk_text=chunk_text,
            evidence_text=evidence,
            row=rr,
            dataset=dataset,
            chunks=chunks,
            judge=judge,
            run=run,
        )
        res = _checked(ctx, resolved)
        rows.append(res.to_dict())
    return rows, missing


def groupings_for(dataset: Dataset, by: str | Sequence[str] | None = None) -> list[str]:
    """How `assay check` groups its rates' rows: `by` as given ("a,b" or a list), or by
    default ``category``, then ``principal.role`` when an entry names a principal."""
    if by is None:
        asked = any(e.principal is not None for e in dataset.entries)
        return ["category", "principal.role"] if asked else ["category"]
    items = [b.strip() for b in by.split(",")] if isinstance(by, str) else [*by]
    out = list(dict.fromkeys(b for b in items if b))
    if not out:
        raise UsageError("--by names no grouping (category, principal.role, ...)")
    return out


def _regrouped(dataset: Dataset, rows: list[dict[str, Any]], by: str) -> list[dict[str, Any]]:
    """The rows with ``category`` replaced by the row each entry falls in when grouped ``by``
    (a role: ``principal.role``; any field `assay.dataset.groups` reads)."""
    if by == "category":
        return rows
    from assay.dataset import groups

    rows_of = groups(dataset.entries, by, file=str(dataset.path or "<dataset>"))
    return [r | {"category": rows_of[str(r["id"])]} for r in rows]


def default_checks_for(dataset: Dataset) -> list[str]:
    """The checks `assay check` runs when none are named: the default checks of every check
    group that applies to some entry (`assay.judge.registry.default_checks`): the answer checks
    for entries without gold SQL, the gold SQL checks on entries with it (a dataset of SQL
    questions only is rated on the SQL checks alone), and the policy checks (``leak``,
    ``policy_ok``, ``overall_pass``) when an entry names a principal or expects a refusal or an
    escalation. Without the sql extra the SQL group is not declared: its checks say so when
    named."""
    return default_checks(dataset.entries)


def check_files(
    dataset: str | Path,
    run: str | Path,
    *,
    chunks: str | Path | None = None,
    checks: str | Iterable[str] | None = None,
    seed: int = 0,
    n_boot: int = 1000,
    allow_reuse: bool = False,
    level: str = "auto",
    skip_stale: bool = False,
    by: str | Sequence[str] | None = None,
    allow_corpus_change: bool = False,
    tiers: str | Sequence[str] | None = None,
    allow_changed_entries: bool = False,
    cluster: str | None = "auto",
) -> CheckReport:
    """`check_run` on files (what `assay check` runs): the check names are resolved before any
    file is read, so an unknown check fails fast. The entries of ``tiers`` are checked (gold
    by default: `assay.dataset.tiers.select_tiers`; the report says what was left out)."""
    from assay.dataset import open_dataset, parse_tiers

    # named checks are resolved first (an unknown one fails fast); none named: the default
    # checks of every group the dataset calls for (answer, gold SQL, policy)
    selected = None if checks is None else [c.name for c in resolve_checks(checks)]
    parse_tiers(tiers)  # an unknown tier fails fast too
    ds = open_dataset(dataset, tiers)
    if selected is None:
        selected = default_checks_for(ds)
    rn = load_run(run)
    return check_run(
        ds,
        rn,
        chunks=chunks,
        allow_corpus_change=allow_corpus_change,
        rng=np.random.default_rng(seed),
        n_boot=n_boot,
        checks=selected,
        allow_reuse=allow_reuse,
        level=level,
        skip_stale=skip_stale,
        by=by,
        allow_changed_entries=allow_changed_entries,
        cluster=cluster,
    )
