"""Benchmark: PDF -> page text for the FinanceBench filings, assay (pypdfium2) against pypdf.

    python bench/bench_corpus_parse.py [PDF_DIR] [--every K] [--workers N] [--no-peer]

Both parsers read the same files in the same run, one process each, in the same order; the
script prints pages/s for each and the ratio. `--every K` takes every K-th file (sorted by name)
to keep the run short on a busy machine (pypdf is pure Python and slow). Pages per CPU-second
(process time) are printed too: on a shared machine they are the steadier figure. `--workers N` also
times assay's parallel path (a process pool, as `assay corpus build` uses). The peer is the
`pypdf` package (`pip install pypdf`); it is a benchmark-only dependency.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from assay.corpus import parse_pdf, parser_version

DEFAULT_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "financebench" / "pdfs"


def _pypdf_pages(path: Path) -> list[str]:
    import pypdf

    reader = pypdf.PdfReader(str(path))
    return [page.extract_text() or "" for page in reader.pages]


def _assay_count(path: str) -> int:
    return len(parse_pdf(path))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("pdf_dir", nargs="?", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--every", type=int, default=1, help="take every K-th file (default: all)")
    ap.add_argument("--workers", type=int, default=0, help="also time a process pool of N workers")
    ap.add_argument("--no-peer", action="store_true", help="skip pypdf")
    args = ap.parse_args(argv)
    files = sorted(args.pdf_dir.glob("*.pdf"))[:: args.every]
    if not files:
        print(f"no PDFs in {args.pdf_dir}", file=sys.stderr)
        return 2
    print(f"files: {len(files)} from {args.pdf_dir}   parser: {parser_version()}")

    peer = None
    if not args.no_peer:
        try:
            import pypdf

            peer = pypdf.__version__
        except ImportError:
            print(
                "peer pypdf not installed (pip install pypdf); timing assay only", file=sys.stderr
            )

    # Per file: assay, then the peer, on the same bytes. Files the peer cannot open (pypdf needs
    # the `cryptography` package for AES-encrypted PDFs) are left out of both sides of the ratio.
    t_assay = t_peer = 0.0
    cpu_assay = cpu_peer = 0.0
    pages = peer_pages = 0
    both_assay_t = both_assay_cpu = 0.0
    both_pages = 0
    peer_failed: list[str] = []
    for f in files:
        t0, c0 = time.perf_counter(), time.process_time()
        n = len(parse_pdf(f))
        dt_a = time.perf_counter() - t0
        t_assay += dt_a
        dc_a = time.process_time() - c0
        cpu_assay += dc_a
        pages += n
        if peer is None:
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            m = len(_pypdf_pages(f))
        except Exception as exc:  # the peer's failure on one file is reported, not fatal
            peer_failed.append(f"{f.name} ({type(exc).__name__})")
            continue
        t_peer += time.perf_counter() - t0
        cpu_peer += time.process_time() - c0
        peer_pages += m
        both_assay_t += dt_a
        both_assay_cpu += dc_a
        both_pages += n
    rate = pages / t_assay
    print(
        f"assay (pypdfium2), 1 process : {pages:6d} pages in {t_assay:7.2f} s = {rate:7.1f} pages/s"
        f"   ({pages / cpu_assay:.1f} pages per CPU-second)"
    )

    if args.workers > 1:
        t0 = time.perf_counter()
        with ProcessPoolExecutor(args.workers) as pool:
            pages_par = sum(pool.map(_assay_count, [str(f) for f in files]))
        t_par = time.perf_counter() - t0
        print(
            f"assay, {args.workers} processes        : {pages_par:6d} pages in {t_par:7.2f} s = {pages_par / t_par:7.1f} pages/s"
        )

    if peer is not None and peer_pages:
        peer_rate = peer_pages / t_peer
        both_rate = both_pages / both_assay_t
        print(f"on the {len(files) - len(peer_failed)} files both parse:")
        print(
            f"  assay                      : {both_pages:6d} pages in {both_assay_t:7.2f} s = {both_rate:7.1f} pages/s"
        )
        print(
            f"  pypdf {peer:<20} : {peer_pages:6d} pages in {t_peer:7.2f} s = {peer_rate:7.1f} pages/s"
        )
        print(f"  ratio assay/pypdf (pages/s, 1 process): {both_rate / peer_rate:.1f}x")
        cpu_ratio = (both_pages / both_assay_cpu) / (peer_pages / cpu_peer)
        print(f"  ratio assay/pypdf (pages per CPU-second): {cpu_ratio:.1f}x")
        if peer_failed:
            print(f"  pypdf could not read: {', '.join(peer_failed)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
