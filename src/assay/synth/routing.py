"""The room's routing set: questions and the filing that answers each (``10-K``, ``10-Q``,
``8-K``, ``DEF 14A``), with label errors planted on purpose, recorded apart from the entries so
the label audit can be scored on them.

Each question is drawn from templates written per filing type over the room's kind of
companies and periods (a seeded `numpy.random.Generator`); some are phrased with cues of
another type (an 8-K about a quarter's results, a proxy question about annual pay), as real
questions are. Then ``errors`` of the entries get a wrong gold label (another type, drawn at
random): ``routing.jsonl`` carries the labels as a careless labeller left them, and
``routing.planted.json`` lists the planted ids with their true labels.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from assay._io import atomic_writer
from assay.errors import UsageError

__all__ = ["LABELS", "generate_routing"]

LABELS = ("10-K", "10-Q", "8-K", "DEF 14A")
COMPANIES = (
    "Averix Technologies",
    "Fernhill Foods",
    "Northwind Bancorp",
    "Castellan Energy",
    "Brightwater Health",
    "Ostrava Motors",
    "Quillon Insurance",
    "Larkspur Retail",
    "Meridian Logistics",
    "Tessaline Materials",
)
TEMPLATES: dict[str, tuple[str, ...]] = {
    "10-K": (
        "What was {c}'s total revenue for fiscal year {y}?",
        "Which risk factors did {c} list in its annual report for FY{y}?",
        "How much long-term debt did {c} carry at the end of fiscal {y}?",
        "What was {c}'s full-year operating margin in {y}?",
        "Who audits {c}, according to its {y} 10-K?",
        "How did {c}'s segment revenue split for the year ended December 31, {y}?",
        "What goodwill impairment did {c} record for fiscal {y}?",
        "How many shares did {c} buy back in the fourth quarter of fiscal {y}?",
        "Which board committee oversees cybersecurity risk at {c}, per its {y} annual report?",
    ),
    "10-Q": (
        "What was {c}'s revenue in the {q} quarter of {y}?",
        "How much cash did {c} hold at the end of Q{n} {y}?",
        "What were {c}'s net sales for the three months ended {m} {y}?",
        "How did {c}'s gross margin move in the quarter ended {m} {y}?",
        "What did {c} report for the six months ended June 30, {y}?",
        "What was {c}'s quarterly EPS in Q{n} {y}?",
        "Did {c} add any risk factors in its report for the {q} quarter of {y}?",
    ),
    "8-K": (
        "When did {c} announce the departure of its chief financial officer?",
        "Which acquisition did {c} announce in {y}?",
        "What material definitive agreement did {c} enter into in {m} {y}?",
        "Who did {c} appoint as chief executive in {y}?",
        "What did {c}'s press release say about the merger completed in {y}?",
        "Did {c} announce a resignation from its board in {y}?",
        "What did {c} announce about its {q} quarter {y} results?",
    ),
    "DEF 14A": (
        "How much was {c}'s chief executive paid in total compensation for {y}?",
        "What is {c}'s CEO pay ratio for {y}?",
        "Which shareholder proposals are on {c}'s {y} proxy?",
        "Who are the director nominees at {c}'s {y} annual meeting?",
        "How did shareholders vote on {c}'s say-on-pay in {y}?",
        "What performance measures drive {c}'s executive bonuses in {y}?",
        "What annual bonus did {c}'s chief executive earn for fiscal {y}?",
    ),
}
QUARTERS = (("first", 1, "March 31"), ("second", 2, "June 30"), ("third", 3, "September 30"))


def _question(label: str, rng: np.random.Generator) -> str:
    t = TEMPLATES[label][int(rng.integers(len(TEMPLATES[label])))]
    q, n, m = QUARTERS[int(rng.integers(len(QUARTERS)))]
    c = COMPANIES[int(rng.integers(len(COMPANIES)))]
    return t.format(c=c, y=int(rng.integers(2019, 2025)), q=q, n=n, m=m)


def generate_routing(
    out: str | Path, *, n: int = 120, errors: int = 10, seed: int = 7
) -> dict[str, Any]:
    """Write ``routing.jsonl`` (n entries, `errors` of them mislabelled) and
    ``routing.planted.json`` into `out`; returns the planted record."""
    if n < 2 * len(LABELS) or not 0 <= errors < n:
        raise ValueError(f"need n >= {2 * len(LABELS)} and 0 <= errors < n")
    rng = np.random.default_rng(seed)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: not a folder (routing.jsonl is written into a folder)")
    out.mkdir(parents=True, exist_ok=True)
    truth = [LABELS[i % len(LABELS)] for i in range(n)]
    rng.shuffle(truth)
    seen: set[str] = set()
    rows: list[dict[str, Any]] = []
    for i, label in enumerate(truth):
        query = _question(label, rng)
        while query in seen:
            query = _question(label, rng)
        seen.add(query)
        rows.append(
            {
                "id": f"route-{i + 1:04d}",
                "query": query,
                "category": "routing",
                "answerable": False,
                "expected_label": {"label": label, "label_set": "filing", "allowed": list(LABELS)},
                "label_tier": "gold",
                "source": "synthetic",
            }
        )
    planted: dict[str, str] = {}
    for i in sorted(int(x) for x in rng.choice(n, size=errors, replace=False)):
        true = truth[i]
        wrong = [lab for lab in LABELS if lab != true]
        rows[i]["expected_label"]["label"] = wrong[int(rng.integers(len(wrong)))]
        planted[rows[i]["id"]] = true
    with atomic_writer(out / "routing.jsonl") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    record = {"seed": seed, "n": n, "planted": planted}
    with atomic_writer(out / "routing.planted.json") as fh:
        fh.write(json.dumps(record, indent=1) + "\n")
    return record
