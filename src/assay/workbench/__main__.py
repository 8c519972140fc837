"""`python -m assay.workbench --db URL [--host H --port P]`: the same as `assay workbench serve`."""

from __future__ import annotations

import argparse
import os


def main() -> None:
    import uvicorn

    from assay.workbench.app import WorkbenchConfig, create_app

    ap = argparse.ArgumentParser(prog="python -m assay.workbench")
    ap.add_argument("--db", default="sqlite:///labels.db")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    if args.workers > 1:
        create_app(WorkbenchConfig(db_url=args.db))  # migrate once, before the workers start
        os.environ["ASSAY_WORKBENCH_DB"] = args.db
        uvicorn.run(
            "assay.workbench.app:app_from_env",
            factory=True,
            workers=args.workers,
            host=args.host,
            port=args.port,
            log_level="warning",
            access_log=False,
        )
        return
    app = create_app(WorkbenchConfig(db_url=args.db))
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
