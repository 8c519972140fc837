"""A small example store so a new user can click through every task in a minute."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.db import Database
from assay.workbench.models import GuidelineVersion, User

__all__ = ["DEMO_DIR", "DEMO_USERS", "load_demo"]

DEMO_DIR = Path(__file__).with_name("demo_data")
# name, password, role: printed by `assay workbench demo`; for local demos only.
DEMO_USERS = (
    ("admin", "admin-demo-pw", "admin"),
    ("adjudicator", "adjudicator-demo-pw", "adjudicator"),
    ("ana", "ana-demo-pw", "annotator"),
    ("ben", "ben-demo-pw", "annotator"),
)


def load_demo(db: Database, *, fast_hash: bool = False) -> dict[str, Any]:
    """Import the demo corpus (two companies, five filings), six questions with evidence,
    reference and judging tasks (overlap 2, one calibration item) and a run, plus demo users
    and a first guideline version. Safe to run twice (imports update in place)."""
    db.migrate()
    out: dict[str, Any] = {}
    out["corpus"] = svc.import_corpus(
        db, DEMO_DIR / "chunks.jsonl", DEMO_DIR / "documents.jsonl"
    ).to_dict()
    out["entries"] = svc.import_entries(db, DEMO_DIR / "entries.jsonl", overlap=2).to_dict()
    out["run"] = svc.import_run(
        db, DEMO_DIR / "run.jsonl", run_name="demo-pipeline", overlap=2, calibration=["demo-006"]
    ).to_dict()
    with db.read() as s:
        existing = {u.username for u in s.query(User)}
    users = []
    for name, pw, role in DEMO_USERS:
        if name not in existing:
            create_user(db, name, pw, role, fast_hash=fast_hash)
        users.append({"username": name, "password": pw, "role": role})
    out["users"] = users
    with db.write() as s:
        if s.query(GuidelineVersion).count() == 0:
            s.add(
                GuidelineVersion(
                    version=1,
                    text=(DEMO_DIR / "guidelines.md").read_text(encoding="utf-8").strip(),
                    change="initial guidelines",
                )
            )
    return out
