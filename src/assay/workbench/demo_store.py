"""A small example store so a new user can click through every task in a minute.

The demo accounts have published passwords, so they are made only in a throwaway store: one
that had no users when the demo was first loaded into it (the store is then marked as a demo
store). A store with other users is refused unless forced, and even then its demo accounts get
fresh random passwords, printed once, never the published ones.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from assay.errors import UsageError
from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.db import Database
from assay.workbench.models import GuidelineVersion, Setting, User

__all__ = ["DEMO_DIR", "DEMO_MARK", "DEMO_USERS", "load_demo"]

DEMO_MARK = "demo_store"

DEMO_DIR = Path(__file__).with_name("demo_data")
# name, password, role: printed by `assay workbench demo`; for local demos only.
DEMO_USERS = (
    ("admin", "admin-demo-pw", "admin"),
    ("adjudicator", "adjudicator-demo-pw", "adjudicator"),
    ("ana", "ana-demo-pw", "annotator"),
    ("ben", "ben-demo-pw", "annotator"),
)


def load_demo(db: Database, *, fast_hash: bool = False, force: bool = False) -> dict[str, Any]:
    """Import the demo corpus (two companies, five filings), six questions with evidence,
    reference and judging tasks (overlap 2, one calibration item) and a run, plus demo users
    and a first guideline version. Safe to run twice (imports update in place).

    Refuses (UsageError) a store that has users and is not a demo store, unless `force`; in such
    a store the demo accounts get random passwords (returned), never the published ones."""
    db.migrate()
    with db.read() as s:
        n_users = s.scalar(select(func.count()).select_from(User)) or 0
        is_demo = s.get(Setting, DEMO_MARK) is not None
    throwaway = n_users == 0 or is_demo
    if not throwaway and not force:
        raise UsageError(
            f"this store already has {n_users} user(s) and is not a demo store: the demo would "
            "add accounts to it; use a new store, or --force (the demo accounts then get random "
            "passwords, never the published ones)"
        )
    if n_users == 0:
        with db.write() as s:
            s.merge(Setting(key=DEMO_MARK, value="1"))
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
    for name, published, role in DEMO_USERS:
        if name in existing:
            pw = published if throwaway else "(unchanged: the account existed)"
        else:
            pw = published if throwaway else secrets.token_urlsafe(12)
            # published passwords are weak on purpose (and printed): only in a throwaway store
            create_user(db, name, pw, role, fast_hash=fast_hash, check_policy=not throwaway)
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
