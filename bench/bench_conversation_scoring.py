"""Conversation scoring at scale: turn metrics, the roll-up per conversation and the
conversation checks on 100,000 turn entries, timed next to the retrieval scorer on 100,000
plain entries in the same run.

The conversations are two-turn (50,000 of them for 100,000 turns): a revenue question, then
"And the year before?" depending on it, each with chunk-id gold and a key-fact figure; the run
answers a tenth of the follow-ups for the wrong year. Each side is timed end to end from loaded
objects, best of ``--repeat``:

* loading: the conversation lines parsed into turn entries (`assay.dataset.parse_entries`),
  next to the same turns written as single-turn lines (the conversation's fields and the
  turn's, merged, as the loader merges them) parsed by the same function;
* turn metrics + roll-up: `score_retrieval` (recall@5, complete@5, mrr, ndcg@5) on the turns,
  which rolls them up per conversation;
* conversation checks: `check_run` with ``kept_context``, ``no_contradiction`` and
  ``clarified`` (each reads the earlier turns' answers from the run), rates and roll-up;
* the peer: `score_retrieval` on 100,000 entries of no conversation, the same gold and hits.

Prints seconds, entries per second and the ratio to the retrieval scorer.

    PYTHONPATH=src .venv/bin/python bench/bench_conversation_scoring.py [--entries 100000] \
        [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from assay.dataset import Dataset, parse_entries
from assay.judge.checking import check_run
from assay.runs import Run
from assay.score import score_retrieval

COMPANIES = [f"Company{i}" for i in range(200)]


def _best(fn: Any, repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def _hits(gold: str, rng: np.random.Generator) -> list[str]:
    hits = [f"d{int(x)}#{int(y)}" for x, y in zip(rng.integers(0, 5000, 10),
                                                 rng.integers(0, 7, 10), strict=True)]  # fmt: skip
    if rng.random() < 0.6:
        hits[int(rng.integers(10))] = gold
    return list(dict.fromkeys(hits))


def conversation_case(n: int, rng: np.random.Generator) -> tuple[list[dict[str, Any]], Run]:
    """`n` turn entries as n/2 conversation lines, and a run answering them."""
    lines, rows = [], []
    for c in range(n // 2):
        company = COMPANIES[c % len(COMPANIES)]
        now, before = 1000 + c % 900, 900 + c % 90
        lines.append(
            {
                "id": f"c{c}",
                "category": f"cat{c % 6}",
                "metadata": {"company": company},
                "turns": [
                    {
                        "query": f"What was {company}'s total revenue in fiscal 2023?",
                        "evidence_paths": [[[f"d{(2 * c) % 5000}#{c % 7}"]]],
                        "key_facts": [{"fact": f"${now} million"}],
                    },
                    {
                        "query": "And the year before?",
                        "depends_on": [1],
                        "evidence_paths": [[[f"d{(2 * c + 1) % 5000}#{c % 7}"]]],
                        "key_facts": [{"fact": f"${before} million"}],
                    },
                ],
                "criteria": ["kept_context", "no_contradiction"],
            }
        )
        wrong = rng.random() < 0.1
        answers = [
            f"{company}'s total revenue in fiscal 2023 was ${now} million.",
            f"{company}'s total revenue in fiscal 2023 was ${now + 7} million."
            if wrong
            else f"{company}'s total revenue in fiscal 2022 was ${before} million.",
        ]
        for t in (1, 2):
            gold = lines[-1]["turns"][t - 1]["evidence_paths"][0][0][0]
            rows.append(
                {"id": f"c{c}#{t}", "retrieved": _hits(gold, rng), "answer": answers[t - 1]}
            )
    return lines, Run.from_rows(rows)


def single_turn_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turns of conversation `lines` as single-turn entry lines with the same fields."""
    out = []
    for line in lines:
        base = {k: v for k, v in line.items() if k not in ("turns", "criteria")}
        for n, turn in enumerate(line["turns"], start=1):
            flat = base | {k: v for k, v in turn.items() if k != "depends_on"}
            flat["id"] = f"{line['id']}#{n}"
            out.append(flat)
    return out


def retrieval_case(n: int, rng: np.random.Generator) -> tuple[Dataset, Run]:
    raw, rows = [], []
    for i in range(n):
        gold = f"d{i % 5000}#{i % 7}"
        raw.append((i + 1, {"id": f"q{i}", "query": f"q {i}", "category": f"cat{i % 6}",
                            "evidence_paths": [[[gold]]]}))  # fmt: skip
        rows.append({"id": f"q{i}", "retrieved": _hits(gold, rng)})
    entries, _, problems = parse_entries(raw)
    assert not problems
    return Dataset(entries, path="ret.jsonl", content_hash="2" * 64), Run.from_rows(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    n = a.entries
    ret_ds, ret_run = retrieval_case(n, rng)
    lines, conv_run = conversation_case(n, rng)
    numbered = [(i + 1, line) for i, line in enumerate(lines)]
    t_load, parsed = _best(lambda: parse_entries(numbered), a.repeat)
    entries, line_of, problems = parsed
    assert not problems and len(entries) == n
    flat = list(enumerate(single_turn_lines(lines), start=1))
    t_flat, (flat_entries, _, flat_problems) = _best(lambda: parse_entries(flat), a.repeat)
    assert not flat_problems and len(flat_entries) == n
    conv_ds = Dataset(entries, path="conv.jsonl", content_hash="3" * 64, lines=line_of)
    t_ret, _ = _best(lambda: score_retrieval(ret_ds, ret_run, k=5), a.repeat)
    t_turn, scored = _best(lambda: score_retrieval(conv_ds, conv_run, k=5), a.repeat)
    assert scored.conversations is not None and scored.conversations.conversations == n // 2
    checks = "kept_context,no_contradiction,clarified"
    t_conv, report = _best(
        lambda: check_run(conv_ds, conv_run, checks=checks, n_boot=200, cluster="none"),
        a.repeat,
    )
    rolled = report.conversations.values
    print(f"{n:,} entries each ({n // 2:,} two-turn conversations), best of {a.repeat}")
    print(
        f"kept_context passes in {rolled['kept_context']['every_turn']:.3f} of conversations, "
        f"no_contradiction in {rolled['no_contradiction']['every_turn']:.3f}"
    )
    print(f"{'':<44}{'seconds':>10}{'entries/s':>14}{'vs retrieval':>14}")
    for name, t in (
        ("retrieval scorer, plain entries (4 metrics)", t_ret),
        ("loading the turns as single-turn lines", t_flat),
        ("loading conversation lines", t_load),
        ("turn metrics + roll-up per conversation", t_turn),
        ("conversation checks (3) + roll-up", t_conv),
        ("all of conversation scoring", t_load + t_turn + t_conv),
    ):
        print(f"{name:<44}{t:>10.2f}{n / t:>14,.0f}{t / t_ret:>13.1f}x")
    print(f"loading conversation lines: {t_load / t_flat:.2f}x the same turns as single-turn lines")
    print(f"conversation checks per turn: {t_conv / n * 1e6:,.0f} us "
          f"(retrieval scorer per entry: {t_ret / n * 1e6:,.1f} us)")  # fmt: skip


if __name__ == "__main__":
    main()
