"""The speed of `assay.corpus.normal_chunk_id`, the form the leak check and the chunk lookup
compare respelled ids in: 200,000 ASCII ids of assay's own shape (``DOC/PAGE/N~HASH`` in upper
case), and 40,000 non-ASCII respellings of them (a hyphen look-alike and a no-break space, or
full-width low lines). Best of five runs each.

    PYTHONPATH=src .venv/bin/python bench/bench_chunk_ids.py
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from assay.corpus import normal_chunk_id


def best(fn: Callable[[], object], runs: int = 5) -> float:
    out = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t0)
    return out


def main() -> None:
    rng = random.Random(1)
    ids = [
        f"ACME_{i % 500}_10K/{i % 300}/{i % 7}~{rng.getrandbits(32):08x}" for i in range(200_000)
    ]
    uni = [s.replace("-", "\u2010") + "\u00a0" for s in ids[:20_000]]
    uni += [s.replace("_", "\uff3f") for s in ids[:20_000]]
    a = best(lambda: [normal_chunk_id(s) for s in ids])
    u = best(lambda: [normal_chunk_id(s) for s in uni])
    print(f"{len(ids):,} ASCII ids: {a:.3f} s; {len(uni):,} non-ASCII ids: {u:.3f} s")


if __name__ == "__main__":
    main()
