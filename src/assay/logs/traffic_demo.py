"""The production loop on the synthetic room: two months of traffic, then ingest -> report ->
sample -> failures, each step's figure printed.

The traffic is generated, not real, and says so: queries are the room's golden questions asked
the way analysts type (some verbatim, most rewritten with abbreviations, tickers, dropped words
and typos, "sub rev growth y/y"), in a category mix unlike the golden set's; each is run through
a plain BM25 retriever over the room's corpus (as_of enforced), so the logged hits and scores are
real retrieval results; answers abstain when retrieval comes back weak or the question is
unanswerable; feedback is down more often after an abstention; the second month is a little
slower and leans more on temporal questions, so the report has drift to show.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import write_text_atomic
from assay.errors import UsageError
from assay.logs.failures import find_failures
from assay.logs.ingest import ingest_logs
from assay.logs.report import traffic_report
from assay.logs.sample import sample_month

__all__ = ["LogsDemoResult", "generate_traffic", "run_logs_demo"]

# how analysts shorten what the golden set spells out (applied with probability, per phrase)
_SHORTEN = (
    (r"\bsubscription and support\b", "sub"),
    (r"\bsubscription\b", "sub"),
    (r"\bsubs\b", "sub"),
    (r"\brevenue\b", "rev"),
    (r"\byear over year\b", "y/y"),
    (r"\bgrowth\b", "growth y/y"),
    (r"\bfiscal (?:year )?'?(\d\d)\b", r"FY\1"),
    (r"\bnet income\b", "NI"),
    (r"\boperating income\b", "op inc"),
    (r"\bremaining perf(?:ormance)? obligations\b", "RPO"),
    (r"\bquarter\b", "qtr"),
    (r"\bwhat (?:did|does|is|was) \b", ""),
    (r"\bTechnologies\b", ""),
    (r"\bSystems\b", ""),
)
_ABSTAIN = "I could not find this in the filings I searched."
# traffic mix (the golden set's is different: the report's first table shows the gap)
_MIX = {
    "numeric_lookup": 0.34,
    "temporal": 0.2,
    "comparison": 0.16,
    "narrative": 0.1,
    "exact_identifier": 0.05,
    "amendment_restatement": 0.05,
    "ambiguous": 0.04,
    "unanswerable": 0.06,
}


def _typo(word: str, rng: np.random.Generator) -> str:
    if len(word) < 5 or not word.isalpha():
        return word
    i = int(rng.integers(1, len(word) - 2))
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def analyst_phrasing(query: str, rng: np.random.Generator) -> str:
    """`query` rewritten as an analyst might type it (seeded)."""
    q = query
    for pat, rep in _SHORTEN:
        if rng.random() < 0.7:
            q = re.sub(pat, rep, q, flags=re.IGNORECASE)
    words = q.split()
    if len(words) > 3 and rng.random() < 0.35:
        words = [_typo(w, rng) if rng.random() < 0.25 else w for w in words]
    if rng.random() < 0.5:
        words = [w.lower() if not w.isupper() else w for w in words]
    return " ".join(words).strip() or query


def generate_traffic(
    entries: list[Any],
    retriever: Any,
    *,
    months: list[str],
    per_month: int,
    seed: int,
) -> dict[str, list[dict[str, Any]]]:
    """Log lines per month: golden questions in analyst phrasing, retrieved for real."""
    rng = np.random.default_rng(seed)
    by_cat: dict[str, list[Any]] = {}
    for e in entries:
        by_cat.setdefault(e.category, []).append(e)
    cats = [c for c in _MIX if c in by_cat]
    out: dict[str, list[dict[str, Any]]] = {}
    for mi, month in enumerate(months):
        w = np.array([_MIX[c] * (1.6 if (mi and c == "temporal") else 1.0) for c in cats])
        w = w / w.sum()
        start = dt.datetime.fromisoformat(f"{month}-01T00:00:00+00:00")
        days = 30
        lines: list[dict[str, Any]] = []
        for i in range(per_month):
            cat = cats[int(rng.choice(len(cats), p=w))]
            e = by_cat[cat][int(rng.integers(len(by_cat[cat])))]
            verbatim = rng.random() < 0.3
            query = e.query if verbatim else analyst_phrasing(e.query, rng)
            ts = start + dt.timedelta(seconds=float(rng.uniform(0, days * 86400)))
            as_of = e.as_of if e.as_of is not None else ts.date()
            hits = list(retriever.retrieve(query, as_of=as_of, k=10))
            if cat == "unanswerable" and rng.random() < 0.15:
                hits = []
            top = float(hits[0]["score"]) if hits else 0.0
            weak = not hits or top < 1.5 or cat == "unanswerable"
            abstain = weak and rng.random() < 0.8
            answer = _ABSTAIN if abstain else (e.reference_answer or "See the filing.")
            p_down = 0.35 if abstain else (0.12 if weak else 0.04)
            r = rng.random()
            feedback = "down" if r < p_down else ("up" if r > 0.85 else None)
            latency = float(rng.lognormal(np.log(700 + 120 * mi), 0.35))
            lines.append(
                {
                    "ts": ts.isoformat(timespec="seconds").replace("+00:00", "Z"),
                    "query": query,
                    "as_of": as_of.isoformat(),
                    "retrieved": [
                        {"chunk_id": h["chunk_id"], "score": round(float(h["score"]), 4)}
                        for h in hits
                    ],
                    "answer": answer,
                    "citations": [h["chunk_id"] for h in hits[:2]] if not abstain else [],
                    "feedback": feedback,
                    "session": f"s{int(rng.integers(0, per_month // 6 + 1))}",
                    "latency_ms": round(latency, 1),
                    "system": "bm25",
                }
            )
            _ = i
        lines.sort(key=lambda x: x["ts"])
        out[month] = lines
    return out


@dataclass
class LogsDemoResult:
    out_dir: Path
    timings: dict[str, float] = field(default_factory=dict)
    ingest: Any = None
    report: Any = None
    sample: Any = None
    failures: Any = None
    seasonal: Any = None
    files: dict[str, Path] = field(default_factory=dict)


def run_logs_demo(
    out_dir: str | Path = "out/demo/logs",
    *,
    seed: int = 7,
    months: tuple[str, str] = ("2026-09", "2026-10"),
    per_month: int = 1500,
    n_sample: int = 60,
    k: int = 5,
    progress: bool = False,
    log: Callable[[str], None] = print,
) -> LogsDemoResult:
    """Generate the room and two months of traffic; run ingest, report, sample, failures and the
    seasonal audit."""
    from assay.corpus import build_corpus, load_chunks, ocr
    from assay.dataset import load_dataset
    from assay.synth.generate import DEFAULT_SCANS, generate_room
    from assay.systems.bm25 import BM25System

    if per_month < 1 or n_sample < 1:
        raise UsageError("per_month and n_sample must be at least 1")
    out = Path(out_dir)
    res = LogsDemoResult(out)
    t_all = t = time.perf_counter()
    room, corpus = out / "room", out / "corpus"
    # scanned pages need an OCR engine (the `ocr` extra); without one the room has none
    generate_room(room, seed=seed, scans=DEFAULT_SCANS if ocr.available() else 0)
    build_corpus(room, meta=room / "documents.jsonl", out_dir=corpus, progress=progress)
    golden = room / "golden.jsonl"
    ds = load_dataset(golden)
    retriever = BM25System(load_chunks(corpus / "chunks.jsonl"))
    traffic = generate_traffic(
        list(ds.entries), retriever, months=list(months), per_month=per_month, seed=seed
    )
    logs_dir = out / "logs"
    paths = []
    for month, lines in traffic.items():
        p = logs_dir / f"{month}.jsonl"
        text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
        if month == months[-1]:
            text += '{"ts": "2026-10-31T23:59:59Z", "query": ""}\n'  # one bad line, skipped
        write_text_atomic(p, text)
        paths.append(p)
    res.timings["traffic"] = time.perf_counter() - t
    log(
        f"1/6 generated {sum(len(v) for v in traffic.values())} logged queries over "
        f"{', '.join(months)} on the synthetic room ({len(ds.entries)} golden entries), "
        f"analyst phrasing, BM25 hits ({res.timings['traffic']:.1f}s)"
    )

    t = time.perf_counter()
    db = out / "logstore"
    shutil.rmtree(db, ignore_errors=True)
    res.ingest = ingest_logs(paths, db, golden=golden, progress=progress)
    ingest_logs(paths[:1], db, golden=golden, progress=False)  # again: stored once
    res.timings["ingest"] = time.perf_counter() - t
    log(
        f"2/6 ingested {res.ingest.total('added')} queries, {res.ingest.total('bad')} bad line "
        f"skipped ({res.ingest.problems[0] if res.ingest.problems else '-'}); ingesting "
        f"{paths[0].name} again added 0 ({res.timings['ingest']:.1f}s)"
    )

    t = time.perf_counter()
    res.report = traffic_report(db, golden=golden, chunks=corpus / "chunks.jsonl", k=k)
    write_text_atomic(out / "report.json", res.report.to_json() + "\n")
    write_text_atomic(out / "report.md", res.report.to_markdown())
    last = res.report.periods[-1]
    s = last.stats
    ret = last.retrieval or {}
    overall = ret.get("overall") or {}
    res.timings["report"] = time.perf_counter() - t
    log(
        f"3/6 report {last.period}: n={s['n']}, no hits {100 * s['no_hits_rate']:.1f}%, "
        f"abstained {100 * s['abstain_rate']:.1f}%, down {100 * s['down_rate']:.1f}%, "
        f"p50/p95 {s['latency_p50']:.0f}/{s['latency_p95']:.0f} ms, drift KS D="
        f"{last.drift['statistic'] if last.drift else float('nan'):.3f}; "
        f"{ret.get('matched', 0)} queries match golden entries, recall@{k} "
        f"{overall.get(f'recall@{k}', float('nan')):.3f}; classified by "
        + ", ".join(f"{m} {100 * v:.0f}%" for m, v in res.report.methods.items() if m != "none")
        + f" ({res.timings['report']:.1f}s)"
    )

    t = time.perf_counter()
    fresh = out / "fresh.jsonl"
    res.sample = sample_month(db, months[-1], n=n_sample, seed=seed, golden=golden, out=fresh)
    res.timings["sample"] = time.perf_counter() - t
    log(
        f"4/6 fresh sample of {months[-1]}: {len(res.sample.entries)} drafts from "
        f"{res.sample.candidates} distinct queries in {len(res.sample.strata)} strata; "
        f"{res.sample.excluded_in_golden} near-duplicates of the main set and "
        f"{res.sample.excluded_near_duplicates} of each other left out -> {fresh}"
    )

    t = time.perf_counter()
    cand = out / "candidates.jsonl"
    res.failures = find_failures(db, month=months[-1], golden=golden, out=cand)
    res.timings["failures"] = time.perf_counter() - t
    by = ", ".join(f"{r} {n}" for r, n in res.failures.by_rule.items())
    log(
        f"5/6 failures of {months[-1]}: {res.failures.failing} failing queries ({by}) -> "
        f"{len(res.failures.entries)} draft entries after dedup, "
        f"{res.failures.excluded_in_golden} already in the main set -> {cand}"
    )
    t = time.perf_counter()
    from assay.audit import audit_seasonal, load_corpus_documents

    documents, chunk_docs = load_corpus_documents(corpus)
    since = dt.date.fromisoformat(f"{months[0]}-01")
    res.seasonal = audit_seasonal(ds, documents, since=since, chunk_docs=chunk_docs)
    write_text_atomic(out / "seasonal.json", res.seasonal.to_json() + "\n")
    n_words = sum(1 for f in res.seasonal.flagged if f.time_words)
    n_new = sum(1 for f in res.seasonal.flagged if f.arrivals)
    res.timings["audit"] = time.perf_counter() - t
    log(
        f"6/6 seasonal audit since {since}: {len(res.seasonal.flagged)} of {len(ds.entries)} "
        f"entries to re-check ({n_words} say latest/current/this year..., {n_new} have a newer "
        f"filing of their evidence; {len(res.seasonal.recheck)} unanswerable or partial entries "
        f"to re-check against newer filings of their company and period) -> "
        f"{out / 'seasonal.json'}"
    )
    res.timings["total"] = time.perf_counter() - t_all
    res.files = {
        "db": db,
        "report": out / "report.md",
        "fresh": fresh,
        "candidates": cand,
        "seasonal": out / "seasonal.json",
    }
    return res
