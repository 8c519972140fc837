"""The quote detector on real text: false positives, what it catches, and its speed.

FinanceBench (dev split): the evidence pages of the questions (real 10-K/10-Q pages) are the
chunks. The pages of every other company (sorted by name) are *restricted*, the rest public; the
index is built over the restricted pages less what the public pages say
(`assay.workbench.service.quotes.QuoteIndex.build`). Then every answer -- the 75 reference
answers and the 1,200 model answers of `graded_answers_dev.jsonl` -- is checked:

- answers to a question whose evidence is public: any match is a false positive (the answer
  shares phrases or figures with a restricted filing of another company) -- the rate reported,
  and the matches printed;
- answers to a question whose evidence is restricted: the share found quoting it (an answer
  that states the page's figure with its words is a quote by this rule; a yes/no or a ratio the
  page does not print is not).

Public pages held out of the index (every third public page) are checked too: ordinary filing
text of other companies, which must not match.

The policy room (`assay.synth.room_access`, 6 companies): its restricted documents (term sheets,
draft 8-Ks, compensation files, whose labels restrict) are the restricted chunks, its public
ones (the facilities memos) the public chunks. Checked: every public text of the room -- the
public memos' paragraphs, every question, the reference answers of questions answered from a
public document, the FinanceBench answers (ordinary financial prose, which must never match a
synthetic term sheet) -- and, as the catch rate, the insiders' reference answers of questions on
restricted documents.

Then the speed: the index build, and the check of one answer (median, p99, over the answers).

    PYTHONPATH=src .venv/bin/python bench/bench_quote_index.py [--fb /work/shared/financebench]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from assay.workbench.service.quotes import QuoteIndex


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fb", type=Path, default=Path("/work/shared/financebench"))
    args = ap.parse_args()
    qs = [json.loads(x) for x in (args.fb / "questions_dev.jsonl").read_text().splitlines()]
    graded = [
        json.loads(x) for x in (args.fb / "graded_answers_dev.jsonl").read_text().splitlines()
    ]
    companies = sorted({q["company"] for q in qs})
    restricted_co = set(companies[0::2])
    pages: dict[tuple[str, int], tuple[str, str]] = {}
    for q in qs:
        for ev in q["evidence"]:
            key = (ev["doc_name"], ev["evidence_page_num"])
            pages[key] = (q["company"], ev["evidence_text_full_page"])
    restricted = [(f"{d}#p{p}", t) for (d, p), (c, t) in pages.items() if c in restricted_co]
    public_all = [t for (_d, _p), (c, t) in sorted(pages.items()) if c not in restricted_co]
    held = public_all[0::3]
    public = [t for i, t in enumerate(public_all) if i % 3]
    t0 = time.perf_counter()
    index = QuoteIndex.build(restricted, public)
    build_s = time.perf_counter() - t0
    print(
        f"index: {len(restricted)} restricted pages ({len(restricted_co)} companies), "
        f"{len(public)} public pages subtracted; {len(index.shingles)} shingles, "
        f"{sum(len(v) for v in index.figures.values())} figures; built in {build_s:.3f} s"
    )
    by_id = {q["financebench_id"]: q for q in qs}
    answers: list[tuple[str, str, str]] = []  # (who, question id, text)
    for q in qs:
        answers.append(("reference", q["financebench_id"], str(q["answer"])))
    for g in graded:
        if g["financebench_id"] in by_id:
            answers.append((g["model_name"], g["financebench_id"], str(g["model_answer"] or "")))
    fp: list[tuple[str, str, set[str]]] = []
    n_pub = n_res = hit_res = 0
    times: list[float] = []
    for who, qid, text in answers:
        t0 = time.perf_counter()
        got = index.quoted(text)
        times.append(time.perf_counter() - t0)
        if by_id[qid]["company"] in restricted_co:
            n_res += 1
            hit_res += bool(got)
        else:
            n_pub += 1
            if got:
                fp.append((who, qid, got))
    print(
        f"answers on public questions: {n_pub}, hidden (false positive): {len(fp)} "
        f"= {len(fp) / max(1, n_pub):.2%}"
    )
    for who, qid, got in fp[:10]:
        print(f"  FP {who} {qid}: {sorted(got)[:3]}")
    print(
        f"answers on restricted questions: {n_res}, found quoting a restricted page: {hit_res} "
        f"= {hit_res / max(1, n_res):.1%}"
    )
    held_fp = sum(bool(index.quoted(t)) for t in held)
    print(
        f"held-out public pages: {len(held)}, matched: {held_fp} = {held_fp / max(1, len(held)):.2%}"
    )
    ms = sorted(t * 1000 for t in times)
    chars = statistics.median(len(t) for _w, _q, t in answers)
    print(
        f"check per answer (median {chars:.0f} chars): median {statistics.median(ms):.3f} ms, "
        f"p99 {ms[int(0.99 * (len(ms) - 1))]:.3f} ms, max {ms[-1]:.3f} ms"
    )
    room(answers)
    long_text = " ".join(held)[:20000]
    t0 = time.perf_counter()
    for _ in range(20):
        index.quoted(long_text)
    print(f"check of a 20,000-character text: {(time.perf_counter() - t0) / 20 * 1000:.2f} ms")


def room(fb_answers: list[tuple[str, str, str]]) -> None:
    from assay.synth.facts_ledger import build_ledger
    from assay.synth.room_access import policy_room

    bounds = policy_room(build_ledger(7, companies=6, years=3), 7)
    restricted_docs = {d.doc_id for d in bounds.docs if d.access is not None and d.access.restricts}
    restricted = [
        (f"{d.doc_id}#{i}", p)
        for d in bounds.docs
        if d.doc_id in restricted_docs
        for i, p in enumerate(d.paragraphs)
    ]
    public_paras = [p for d in bounds.docs if d.doc_id not in restricted_docs for p in d.paragraphs]
    index = QuoteIndex.build(restricted, public_paras)
    public_texts = list(public_paras)
    caught = n_restricted = 0
    for e in bounds.entries:
        public_texts.append(e["query"])
        doc = e["metadata"]["policy"]["doc"]
        ref = e.get("reference_answer")
        if not ref:
            continue
        if doc in restricted_docs:
            n_restricted += 1
            caught += bool(index.quoted(ref))
        else:
            public_texts.append(ref)
    fp = [t for t in public_texts if index.quoted(t)]
    fb_fp = sum(bool(index.quoted(t)) for _w, _q, t in fb_answers)
    print(
        f"policy room: {len(restricted)} restricted paragraphs of {len(restricted_docs)} documents; "
        f"public texts of the room {len(public_texts)}, hidden {len(fp)} "
        f"= {len(fp) / max(1, len(public_texts)):.2%}; FinanceBench answers hidden {fb_fp} of "
        f"{len(fb_answers)}; insiders' answers from restricted documents found quoting "
        f"{caught} of {n_restricted}"
    )
    for t in fp[:5]:
        print(f"  FP {t[:100]!r}")


if __name__ == "__main__":
    main()
