"""The labels audit: a ranked review list of likely label errors.

The audit never changes a label: it ranks rows for an expert to adjudicate (`--to-workbench`
queues them), and `apply_corrections` records what the experts decided in the dataset's
changelog. Each signal adds its weight (`WEIGHTS`) to a row's score; rows are ranked by score,
then id. The signals, their weights and when each fires: docs/audit.md ("Labels").
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._io import iter_jsonl_lenient, sha256_file
from assay.audit.overlap import STOPWORDS, tokens
from assay.dataset import Anchor, Dataset, Entry, bump_version
from assay.errors import DataError, Problem
from assay.report import ReportMixin, Tabular

if TYPE_CHECKING:
    from assay.corpus import ChunkTable
    from assay.runs import Run

__all__ = [
    "WEIGHTS",
    "CorrectionReport",
    "LabelAuditReport",
    "ReviewRow",
    "Signal",
    "apply_corrections",
    "audit_labels",
    "audit_labels_files",
    "bump_version",
    "fact_figures",
    "ledger_runs",
]

WEIGHTS = {
    "judge_contradicts_gold": 3.0,
    "judge_accepts_off_gold": 3.0,
    "fails_across_runs": 2.0,
    "gold_chunk_changed": 2.0,
    "key_fact_unsupported": 1.5,
    "confident_learning": 2.0,
    "few_reviewers": 0.5,
}
CLEANLAB_MIN_CLASS = 5


@dataclass(frozen=True)
class Signal:
    name: str
    weight: float
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "weight": self.weight, "detail": self.detail}


@dataclass
class ReviewRow:
    id: str
    line: int | None
    category: str
    query: str
    signals: list[Signal] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(s.weight for s in self.signals)

    def flag(self, name: str, detail: str, share: float | None = None) -> None:
        """Add the signal `name` at its weight (times `share` when given)."""
        weight = WEIGHTS[name] if share is None else WEIGHTS[name] * share
        self.signals.append(Signal(name, weight, detail))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "line": self.line,
            "category": self.category,
            "query": self.query,
            "score": self.score,
            "signals": [s.to_dict() for s in self.signals],
        }


@dataclass
class LabelAuditReport(ReportMixin):
    dataset: str | None
    dataset_version: str
    n_entries: int
    runs: list[dict[str, Any]]
    rows: list[ReviewRow]
    judged: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    queued: dict[str, Any] | None = None

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(WEIGHTS, 0)
        for r in self.rows:
            for name in {s.name for s in r.signals}:
                out[name] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "assay.audit.labels/1",
            "dataset": self.dataset,
            "dataset_version": self.dataset_version,
            "n_entries": self.n_entries,
            "n_flagged": len(self.rows),
            "signal_counts": self.counts(),
            "weights": WEIGHTS,
            "runs": self.runs,
            "judged": self.judged,
            "rows": [r.to_dict() for r in self.rows],
            "notes": self.notes,
            "queued": self.queued,
        }

    def tabular(self) -> Tabular:
        rows = [
            [
                str(i),
                r.id,
                r.category,
                f"{r.score:.1f}",
                "; ".join(s.detail for s in r.signals)[:120],
            ]
            for i, r in enumerate(self.rows, start=1)
        ]
        counts = ", ".join(f"{k} {v}" for k, v in self.counts().items() if v)
        footer = [
            f"{len(self.rows)} of {self.n_entries} rows to review ({counts or 'no signal fired'}); "
            f"{len(self.runs)} run(s); dataset {self.dataset_version}; never flipped automatically",
            *self.notes,
        ]
        if self.queued is not None:
            footer.append(f"queued for adjudication in the workbench: {self.queued}")
        return Tabular(
            title="Labels audit: rows to adjudicate, most suspect first",
            header=["rank", "entry", "category", "score", "signals"],
            rows=rows,
            footer=footer,
            emphasis=set(),
        )


# --------------------------------------------------------------------------------------------
# key facts against the evidence text

_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def fact_figures(text: str) -> set[str]:
    """The figures a fact states: its numbers, other than ISO dates and years (1900-2100);
    tokens mixing letters and digits ("FY2022", "Q2") are period labels, not figures."""
    out: set[str] = set()
    for t in tokens(_ISO_DATE.sub(" ", text)):
        if not re.fullmatch(r"\d+(?:\.\d+)?", t) or re.fullmatch(r"(19|20)\d\d|2100", t):
            continue
        out.add(t.rstrip("0").rstrip(".") if "." in t else t)
    return out


def _numbers(text: str) -> set[str]:
    return {t.rstrip("0").rstrip(".") if "." in t else t for t in tokens(text)}


def _alt_texts(alt: str | Anchor, chunks: ChunkTable | None) -> list[str]:
    if isinstance(alt, Anchor):
        out = [alt.quote]
        if chunks is not None and alt.page is not None:
            out += [c.text for c in chunks.on_page(alt.doc, alt.page)]
        return out
    if chunks is not None and alt in chunks.by_id:
        return [chunks.by_id[alt].text]
    return []


def _unsupported_facts(e: Entry, chunks: ChunkTable | None) -> tuple[list[str], bool]:
    """Key facts found in no evidence text, and whether any evidence text could be read."""
    texts: list[str] = []
    alts: list[str | Anchor] = [a for path in e.evidence_paths for piece in path for a in piece]
    for kf in e.key_facts:
        alts += kf.supporting
    seen: set[str] = set()
    for a in alts:
        key = a if isinstance(a, str) else a.key()
        if key in seen:
            continue
        seen.add(key)
        texts += _alt_texts(a, chunks)
    if not texts:
        return [], False
    bags = [(_numbers(t), set(tokens(t))) for t in texts]
    missing: list[str] = []
    for kf in e.key_facts:
        figs = fact_figures(kf.fact)
        if figs:
            need = (len(figs) + 1) // 2  # one amount is often stated two ways
            ok = any(len(figs & nums) >= need for nums, _ in bags)
        else:
            words = {t for t in tokens(kf.fact) if t not in STOPWORDS}
            ok = not words or any(len(words & bag) >= 0.6 * len(words) for _, bag in bags)
        if not ok:
            missing.append(kf.fact)
    return missing, True


# --------------------------------------------------------------------------------------------
# confident learning on categories


def _confident_learning(entries: Sequence[Entry], seed: int) -> tuple[dict[str, str], str | None]:
    """Entry id -> suggested category for rows cleanlab flags; or a note when skipped."""
    if importlib.util.find_spec("cleanlab") is None:
        return {}, (
            "confident learning skipped: cleanlab is not installed (pip install 'assay[audit]')"
        )
    from collections import Counter

    import numpy as np

    counts = Counter(e.category for e in entries)
    keep_cats = sorted(c for c, n in counts.items() if n >= CLEANLAB_MIN_CLASS)
    if len(keep_cats) < 2:
        return {}, (
            f"confident learning skipped: fewer than two categories with {CLEANLAB_MIN_CLASS}+ rows"
        )
    rows = [e for e in entries if e.category in set(keep_cats)]
    from cleanlab.filter import find_label_issues
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    code = {c: i for i, c in enumerate(keep_cats)}
    y = np.array([code[e.category] for e in rows])
    x = TfidfVectorizer(analyzer=lambda s: tokens(s), sublinear_tf=True).fit_transform(
        [e.query for e in rows]
    )
    folds = min(5, CLEANLAB_MIN_CLASS)
    probs = cross_val_predict(
        LogisticRegression(max_iter=2000, C=10.0),
        x,
        y,
        cv=StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed),
        method="predict_proba",
    )
    issues = find_label_issues(y, probs, return_indices_ranked_by="self_confidence")
    out = {rows[int(i)].id: keep_cats[int(np.argmax(probs[int(i)]))] for i in issues}
    return out, None


# --------------------------------------------------------------------------------------------
# runs


def ledger_runs(
    dataset_path: str | Path, search: str | Path | None = None
) -> tuple[list[Path], list[str]]:
    """Run files for every run the dataset's comparison ledger has seen: the ledger stores run
    hashes (the first 16 hex digits of the file's SHA-256), matched against the ``*.jsonl``
    files under `search` (default: the dataset's folder). Returns the files found and the
    hashes no file matched."""
    from assay.compare.ledger import ledger_path, read_ledger

    wanted: dict[str, None] = {}
    for rec in read_ledger(dataset_path):
        for key in ("base_run", "cand_run"):
            h = rec.get(key)
            if isinstance(h, str) and h:
                wanted[h] = None
    root = Path(search) if search is not None else Path(dataset_path).parent
    skip = {Path(dataset_path).resolve(), ledger_path(dataset_path).resolve()}
    found: dict[str, Path] = {}
    if wanted:
        for p in sorted(root.rglob("*.jsonl")):
            if p.resolve() in skip or not p.is_file():
                continue
            h = sha256_file(p)[:16]
            if h in wanted and h not in found:
                found[h] = p
    return [found[h] for h in wanted if h in found], [h for h in wanted if h not in found]


def _is_assay_judged(path: str | Path) -> bool:
    """Whether the file's first row is in the format `assay judge run --out` writes."""
    for _line, row in iter_jsonl_lenient(path, []):
        return isinstance(row, dict) and "critiques" in row and "judge_hash" in row
    return False


def _read_judged(path: str | Path, field_name: str | None) -> dict[str, bool]:
    from assay.label_files import VERDICT_FIELDS, read_verdict

    problems: list[Problem] = []
    out: dict[str, bool] = {}
    for line, row in iter_jsonl_lenient(path, problems):
        if not isinstance(row, dict):
            problems.append(Problem(str(path), line, None, "expected a JSON object"))
            continue
        item = row.get("id", row.get("item"))
        if not isinstance(item, str | int) or isinstance(item, bool):
            problems.append(
                Problem(str(path), line, "id", "required: the entry id (`id` or `item`)")
            )
            continue
        name = field_name or next((f for f in VERDICT_FIELDS if f in row), None)
        if name is None or name not in row:
            problems.append(
                Problem(
                    str(path), line, name, f"no verdict field (tried {', '.join(VERDICT_FIELDS)})"
                )
            )
            continue
        if row[name] is None:
            continue  # a reply the judge's parser could not read
        try:
            out[str(item)] = read_verdict(row[name], file=str(path), line=line, field_name=name)
        except DataError as exc:
            problems.extend(exc.problems)
    if problems:
        raise DataError(problems)
    return out


# --------------------------------------------------------------------------------------------


def audit_labels(
    dataset: Dataset,
    *,
    runs: Sequence[Run] = (),
    chunks: ChunkTable | None = None,
    judged: Mapping[str, bool] | None = None,
    contradicted: Collection[str] | None = None,
    k: int = 5,
    fail_share: float = 0.75,
    confident_learning: bool = True,
    seed: int = 0,
) -> LabelAuditReport:
    """Rank the dataset's rows by how likely their labels are wrong (see the module docstring).

    `judged` maps entry id -> a calibrated judge's PASS/FAIL on the system's answer;
    `contradicted` names the entries whose answer the judge found supported by its context but
    not matching the gold reference.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    if not 0 < fail_share <= 1:
        raise ValueError("fail_share must be in (0, 1]")
    from assay.gold.align import chunk_fingerprint

    rows = {
        e.id: ReviewRow(e.id, dataset.lines.get(e.id), e.category, e.query) for e in dataset.entries
    }
    notes: list[str] = []

    # retrieval outcome per run
    failed: dict[str, list[bool]] = {e.id: [] for e in dataset.entries}
    run_info: list[dict[str, Any]] = []
    if runs:
        from assay.score import score_retrieval

        for run in runs:
            s = score_retrieval(
                dataset, run, k=k, chunks=chunks, allow_missing=True, skip_stale=True
            )
            name = f"complete@{k}"
            vals = s.per_entry[name]
            for eid, v in zip(s.ids, vals, strict=True):
                failed[eid].append(bool(v < 0.5))
            run_info.append({"path": run.path, "hash": run.hash, "scored": len(s.ids)})
    for e in dataset.entries:
        outcomes = failed[e.id]
        n_fail = sum(outcomes)
        if len(outcomes) >= 2 and n_fail / len(outcomes) >= fail_share:
            share = n_fail / len(outcomes)
            rows[e.id].flag(
                "fails_across_runs",
                f"missed its gold evidence in {n_fail} of {len(outcomes)} runs",
                share,
            )
    if judged is not None:
        for e in dataset.entries:
            if judged.get(e.id) is not True:
                continue
            off_gold = e.answerable is False or (bool(failed[e.id]) and all(failed[e.id]))
            if off_gold:
                why = (
                    "gold says unanswerable"
                    if e.answerable is False
                    else "every run missed the gold evidence"
                )
                rows[e.id].flag(
                    "judge_accepts_off_gold", f"the judge passed the system's answer but {why}"
                )
        unknown = sorted(set(judged) - set(rows))
        if unknown:
            notes.append(f"{len(unknown)} judged ids are not in the dataset (ignored)")
        if not runs:
            notes.append("no runs: judge_accepts_off_gold looked only at unanswerable gold")

    for eid in sorted(set(contradicted or ()) & set(rows)):
        rows[eid].flag(
            "judge_contradicts_gold",
            "the judge found the system's answer supported by its context but not matching "
            "the gold reference",
        )

    # gold chunks whose text changed
    if chunks is not None:
        for e in dataset.entries:
            for cid, h in sorted(e.chunk_hashes.items()):
                c = chunks.by_id.get(cid)
                if c is None:
                    detail = f"{cid} is no longer in the chunk table"
                elif chunk_fingerprint(c.text) != h:
                    detail = f"the text of {cid} changed since it was labelled"
                else:
                    continue
                rows[e.id].flag("gold_chunk_changed", detail)
    elif any(e.chunk_hashes for e in dataset.entries):
        notes.append("no chunk table: gold chunk texts were not checked (give --chunks)")

    # key facts in no evidence text
    unread = 0
    for e in dataset.entries:
        if not e.key_facts:
            continue
        missing, readable = _unsupported_facts(e, chunks)
        if not readable:
            unread += 1
        for fact in missing:
            rows[e.id].flag("key_fact_unsupported", f"key fact in no evidence text: {fact[:80]}")
    if unread:
        notes.append(
            f"{unread} entries with key facts have no evidence text to read (chunk ids need --chunks)"
        )

    # too few reviewers
    unrecorded = 0
    for e in dataset.entries:
        if e.reviewed_by is None:
            unrecorded += 1
        elif e.reviewed_by < 2:
            rows[e.id].flag(
                "few_reviewers",
                f"reviewed by {e.reviewed_by} expert{'s' if e.reviewed_by != 1 else ''}",
            )
    if unrecorded:
        notes.append(f"{unrecorded} entries do not record how many experts reviewed them")

    if confident_learning:
        suggested, note = _confident_learning(dataset.entries, seed)
        if note:
            notes.append(note)
        for eid, cat in suggested.items():
            rows[eid].flag(
                "confident_learning",
                f"category {rows[eid].category!r} looks like {cat!r} (cleanlab)",
            )

    ranked = sorted((r for r in rows.values() if r.signals), key=lambda r: (-r.score, r.id))
    return LabelAuditReport(
        dataset=dataset.path,
        dataset_version=dataset.version,
        n_entries=len(dataset),
        runs=run_info,
        rows=ranked,
        notes=notes,
    )


def audit_labels_files(
    dataset_path: str | Path,
    *,
    runs: Sequence[str | Path] | None = None,
    runs_dir: str | Path | None = None,
    chunks: str | Path | None = None,
    judged: str | Path | None = None,
    judged_field: str | None = None,
    calibration: str | Path | None = None,
    k: int = 5,
    fail_share: float = 0.75,
    confident_learning: bool = True,
    seed: int = 0,
) -> LabelAuditReport:
    """`audit_labels` on files. A judged file in the format `assay judge run --out` writes
    (rows with `critiques` and a `judge_hash`) gives `contradicted` (its `supported` and
    `matches_reference` questions), checked against the judge's `calibration` when given; any
    other JSONL of ids and PASS/FAIL verdicts gives `judged`. Without `runs`, every run the comparison ledger has seen (found
    by hash under `runs_dir`, default the dataset's folder)."""
    from assay.dataset import load_dataset
    from assay.runs import load_run

    ds = load_dataset(dataset_path)
    table = None
    if chunks is not None:
        from assay.corpus import load_chunks

        table = load_chunks(chunks)
    notes: list[str] = []
    if runs:
        paths = [Path(r) for r in runs]
    else:
        paths, lost = ledger_runs(dataset_path, runs_dir)
        notes.append(f"runs from the comparison ledger: {len(paths)} found")
        if lost:
            notes.append(
                f"{len(lost)} ledger run(s) not found by hash under "
                f"{runs_dir or Path(dataset_path).parent}: {', '.join(lost[:5])}"
            )
    loaded = [load_run(p) for p in paths]
    verdicts: dict[str, bool] | None = None
    contradicted: set[str] | None = None
    judge_hash: str | None = None
    if judged is not None:
        if _is_assay_judged(judged):
            from assay.judge.judged import read_judged

            answers = read_judged(judged)
            judge_hash = answers.judge_hash
            need = {"supported", "matches_reference"}
            if not need <= set(answers.questions):
                raise DataError(
                    "the judge must ask 'supported' and 'matches_reference' "
                    f"(it asks {', '.join(answers.questions)})",
                    file=judged,
                    field="critiques",
                )
            sup, match = answers.verdicts("supported"), answers.verdicts("matches_reference")
            contradicted = {i for i, v in sup.items() if v and match.get(i) is False}
            if calibration is not None:
                from assay.judge.calibrated import JudgeCalibration

                JudgeCalibration.read(calibration, judge_hash=judge_hash)
            else:
                notes.append(
                    "the judge's calibration was not checked (give --calibration): its "
                    "disagreements are a weaker signal until it is calibrated"
                )
        else:
            verdicts = _read_judged(judged, judged_field)
    rep = audit_labels(
        ds,
        runs=loaded,
        chunks=table,
        judged=verdicts,
        contradicted=contradicted,
        k=k,
        fail_share=fail_share,
        confident_learning=confident_learning,
        seed=seed,
    )
    rep.notes = notes + rep.notes
    if judged is not None:
        rep.judged = {
            "path": str(judged),
            "sha256": sha256_file(judged),
            "judge_hash": judge_hash,
            "calibration": str(calibration) if calibration is not None else None,
        }
    return rep


# --------------------------------------------------------------------------------------------
# corrections: what the experts decided, in the changelog


@dataclass
class CorrectionReport(ReportMixin):
    dataset: str
    old_version: str | None
    new_version: str
    corrections: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "assay.audit.corrections/1",
            "dataset": self.dataset,
            "old_version": self.old_version,
            "new_version": self.new_version,
            "n_corrected": len(self.corrections),
            "corrections": self.corrections,
        }

    def tabular(self) -> Tabular:
        return Tabular(
            title=f"Corrections recorded: {self.old_version or '-'} -> {self.new_version}",
            header=["entry", "fields", "reason"],
            rows=[[c["id"], ", ".join(c["fields"]) or "-", c["reason"]] for c in self.corrections],
            footer=[
                f"{len(self.corrections)} entries corrected in {self.dataset}; changelog updated"
            ],
            emphasis=set(),
        )


def apply_corrections(
    dataset_path: str | Path, corrections_path: str | Path, *, version: str | None = None
) -> CorrectionReport:
    """Replace adjudicated entries and record each correction in the changelog.

    `corrections_path` is JSONL, one ``{"reason": str, "entry": {...}}`` per line: the whole
    corrected entry (the golden schema) and why it changed. Every entry must already be in the
    dataset (a correction never adds a row). The dataset is rewritten atomically with the
    version bumped (`bump_version`, or `version`), and the manifest's changelog gets one record
    ``{"version", "date", "note", "kind": "corrections", "corrections": [{"id", "reason",
    "fields"}]}`` naming the fields each correction changed. A bad line is a `DataError` naming
    FILE:LINE: field, and nothing is written.
    """
    from assay.dataset import load_dataset, save_manifest, write_dataset

    ds = load_dataset(dataset_path)
    problems: list[Problem] = []
    fixes: dict[str, tuple[Entry, str]] = {}
    file = str(corrections_path)
    for line, row in iter_jsonl_lenient(corrections_path, problems):
        if not isinstance(row, dict):
            problems.append(Problem(file, line, None, "expected a JSON object"))
            continue
        reason = row.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            problems.append(Problem(file, line, "reason", "required: why the label changed"))
        raw = row.get("entry")
        if not isinstance(raw, dict):
            problems.append(Problem(file, line, "entry", "required: the corrected entry (object)"))
            continue
        from assay.dataset import parse_entries

        parsed, _, more = parse_entries([(line, raw)], file=file)
        problems.extend(
            Problem(p.file, p.line, f"entry.{p.field}" if p.field else "entry", p.message)
            for p in more
        )
        if not parsed:
            continue
        e = parsed[0]
        if e.id not in ds.by_id:
            problems.append(Problem(file, line, "entry.id", f"{e.id!r} is not in {dataset_path}"))
            continue
        if e.id in fixes:
            problems.append(Problem(file, line, "entry.id", f"{e.id!r} is corrected twice"))
            continue
        if isinstance(reason, str) and reason.strip():
            fixes[e.id] = (e, reason.strip())
    if problems:
        raise DataError(problems)
    if not fixes:
        raise DataError("no corrections in the file", file=file)
    records: list[dict[str, Any]] = []
    new_entries: list[Entry] = []
    for old in ds.entries:
        if old.id not in fixes:
            new_entries.append(old)
            continue
        new, reason = fixes[old.id]
        a, b = old.to_json_dict(), new.to_json_dict()
        changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        records.append({"id": old.id, "reason": reason, "fields": changed})
        new_entries.append(new)
    old_version = ds.manifest.get("version")
    new_version = version or bump_version(str(old_version) if old_version else None)
    note = f"{len(records)} label correction(s) after adjudication"
    out = write_dataset(
        dataset_path,
        new_entries,
        version=new_version,
        changelog=note,
        index_version=ds.manifest.get("index_version"),
    )
    manifest = out.manifest
    manifest["changelog"][-1].update({"kind": "corrections", "corrections": records})
    save_manifest(dataset_path, manifest)
    return CorrectionReport(str(dataset_path), old_version, new_version, records)
