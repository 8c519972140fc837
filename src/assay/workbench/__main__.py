"""`python -m assay.workbench --db URL [--host H --port P --workers N --trusted-proxy ADDR
--max-body BYTES --db-threads N --header-timeout S --body-timeout S --max-per-address N
--write-timeout S --max-pipelined N --no-hot-path]`: the same as `assay workbench serve`."""

from __future__ import annotations

import argparse


def main() -> None:
    from assay.workbench.app import DEFAULT_MAX_BODY, WorkbenchConfig, serve

    ap = argparse.ArgumentParser(prog="python -m assay.workbench")
    ap.add_argument("--db", default="sqlite:///labels.db")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--trusted-proxy", action="append", default=[])
    ap.add_argument("--max-body", type=int, default=DEFAULT_MAX_BODY)
    ap.add_argument("--db-threads", type=int, default=None)
    ap.add_argument("--header-timeout", type=float, default=10.0)
    ap.add_argument("--body-timeout", type=float, default=30.0)
    ap.add_argument("--max-per-address", type=int, default=100)
    ap.add_argument("--write-timeout", type=float, default=30.0)
    ap.add_argument("--max-pipelined", type=int, default=32)
    ap.add_argument(
        "--no-hot-path",
        action="store_true",
        help="serve claim and submit through FastAPI's routing too (to compare; slower)",
    )
    args = ap.parse_args()
    config = WorkbenchConfig(
        db_url=args.db,
        trusted_proxies=tuple(args.trusted_proxy),
        max_body_bytes=args.max_body,
        db_threads=args.db_threads,
        hot_path=not args.no_hot_path,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        max_per_address=args.max_per_address,
        write_timeout=args.write_timeout,
        max_pipelined=args.max_pipelined,
    )
    serve(config, host=args.host, port=args.port, workers=args.workers)


if __name__ == "__main__":
    main()
