"""How well a sealed fresh sample's near-duplicate rule separates edits from other questions.

For FinanceBench's questions (their evidence pages and quotes) and the synthetic room's golden
entries, counts the pairs of distinct entries the rule calls the same entry (false matches; the
target is none), and the share of one-character query edits and one-token evidence edits it
still recognises (the target is all), and the share of queries wrapped in asking words
("Please tell me: ... Thanks") it recognises. The rule is `assay.dataset.fresh.near_duplicate`.

    .venv/bin/python bench/bench_fresh_match.py [--financebench /work/shared/financebench]
        [--edits 20] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path

from assay.dataset import Entry, fresh, load_dataset
from assay.dataset.fresh import _query


def financebench(root: Path) -> list[Entry]:
    out = []
    for line in (root / "questions_dev.jsonl").read_text().splitlines():
        d = json.loads(line)
        anchors = [
            {
                "doc": ev["doc_name"],
                "page": int(ev["evidence_page_num"]) + 1,
                "quote": ev["evidence_text"],
            }
            for ev in d["evidence"]
            if ev.get("evidence_text")
        ]
        out.append(
            Entry.model_validate(
                {
                    "id": d["financebench_id"],
                    "query": d["question"],
                    "category": d["question_type"],
                    "evidence_paths": [[[a] for a in anchors]] if anchors else [],
                }
            )
        )
    return out


def room(seed: int) -> list[Entry]:
    from assay.synth import generate_room

    tmp = Path(tempfile.mkdtemp())
    generate_room(tmp / "room", seed=seed)
    return load_dataset(tmp / "room" / "golden.jsonl").entries


def measure(name: str, entries: list[Entry], edits: int, rng: random.Random) -> None:
    feats = [(_query(e), fresh.evidence_tokens(e)) for e in entries]
    false = 0
    pairs = 0
    for i in range(len(feats)):
        for j in range(i + 1, len(feats)):
            if feats[i][0] == feats[j][0] and feats[i][1] == feats[j][1]:
                continue  # the same question twice is the same entry
            pairs += 1
            false += fresh.near_duplicate(*feats[i], *feats[j])
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    hit_q = hit_e = total_e = 0
    for q, ev in feats:
        for _ in range(edits):
            k = rng.randrange(len(q))
            op = rng.choice(("sub", "ins", "del"))
            c = rng.choice(alphabet)
            edited = (
                q[:k] + c + q[k + 1 :]
                if op == "sub"
                else q[:k] + c + q[k:]
                if op == "ins"
                else q[:k] + q[k + 1 :]
            )
            hit_q += fresh.near_duplicate(q, ev, edited, ev)
        words = sorted(t for t in ev if ":" not in t)
        if words:
            w = rng.choice(words)
            total_e += 1
            hit_e += fresh.near_duplicate(q, ev, q, (ev - {w}) | {w + "x"})
    hit_w = 0
    for q, ev in feats:
        before, after = rng.choice(WRAPPERS)
        hit_w += fresh.near_duplicate(
            q, ev, _query(Entry(id="w", query=before + q + after, category="c")), ev
        )
    print(
        f"{name}: {len(entries)} entries, {false} false matches among {pairs} distinct pairs; "
        f"one-character query edits recognised {hit_q}/{len(feats) * edits}; one-token evidence "
        f"edits recognised {hit_e}/{total_e}; wrapped queries recognised {hit_w}/{len(feats)}"
    )


WRAPPERS = [
    ("Please tell me: ", " Thanks"),
    ("Hi! Could you please tell me ", "? Thank you."),
    ("I would like to know ", ", thanks"),
    ("Can you give me ", ""),
    ("", " Cheers"),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--financebench", type=Path, default=Path("/work/shared/financebench"))
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if (args.financebench / "questions_dev.jsonl").exists():
        measure("FinanceBench", financebench(args.financebench), args.edits, rng)
    measure("synthetic room (seed 7)", room(7), args.edits, rng)


if __name__ == "__main__":
    main()
