"""The answer checks on a contrast set written from the synthetic room's facts.

Builds a room in memory (no files), writes paraphrases, negations, antonyms and swaps of entity,
period, unit and figure for its entries (`assay.synth.contrast`), runs the deterministic checks
on every answer and prints the share classified correctly (a paraphrase must pass
`answer_correct` and `contradiction_free`; a contradiction must fail `contradiction_free`), per
kind, with every miss.

    PYTHONPATH=src .venv/bin/python bench/bench_contrast.py [--seed 7] [--companies 6] [--years 3]
"""

from __future__ import annotations

import argparse
import time

from assay.synth.contrast import contrast_cases, score_contrast
from assay.synth.generate import build_room


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--companies", type=int, default=6)
    ap.add_argument("--years", type=int, default=3)
    ap.add_argument("--per-kind", type=int, default=None, help="cases per (family, kind)")
    ap.add_argument("--format", choices=("table", "markdown", "json"), default="markdown")
    args = ap.parse_args()
    t0 = time.perf_counter()
    room = build_room(seed=args.seed, companies=args.companies, years=args.years)
    cases = contrast_cases(room, per_kind=args.per_kind)
    report = score_contrast(cases)
    if args.format == "json":
        print(report.to_json())
    elif args.format == "markdown":
        print(report.to_markdown())
    else:
        print(report.to_table())
    print(
        f"room seed {args.seed}, {args.companies} companies x {args.years} years: "
        f"{report.correct} of {report.n} classified correctly ({report.accuracy:.3f}) "
        f"in {time.perf_counter() - t0:.1f} s"
    )


if __name__ == "__main__":
    main()
