"""The store: migrations shipped in the package, SQLite WAL, schema equal to the models."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import inspect

from assay.errors import UsageError
from assay.workbench.db import HEAD, Database, normalize_url, schema_version
from assay.workbench.models import Base


def test_migrations_reach_head_and_match_the_models(empty_db: Database) -> None:
    assert schema_version(empty_db.engine) == HEAD
    empty_db.migrate()  # idempotent
    insp = inspect(empty_db.engine)
    tables = set(insp.get_table_names())
    for table in Base.metadata.sorted_tables:
        assert table.name in tables
        cols = {c["name"] for c in insp.get_columns(table.name)}
        assert {c.name for c in table.columns} <= cols, table.name


def test_sqlite_is_in_wal_mode_with_foreign_keys(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'x.db'}")
    db.migrate()
    with db.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
    db.dispose()
    with pytest.raises(UsageError):
        Database(f"sqlite:///{tmp_path / 'y.db'}", sqlite_synchronous="OFF")


def test_downgrade_then_upgrade(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    db = Database(f"sqlite:///{tmp_path / 'x.db'}")
    db.migrate()
    cfg = Config()
    cfg.set_main_option(
        "script_location",
        str(Path(__file__).resolve().parents[2] / "src/assay/workbench/migrations"),
    )
    with db.engine.connect() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "base")
        conn.commit()
    assert "labels" not in inspect(db.engine).get_table_names()
    db.migrate()
    assert "labels" in inspect(db.engine).get_table_names()
    db.dispose()


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ("labels.db", "sqlite:///labels.db"),
        ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
        ("sqlite:///x.db", "sqlite:///x.db"),
    ],
)
def test_url_forms(given: str, want: str) -> None:
    assert normalize_url(given) == want


def test_unsupported_url() -> None:
    with pytest.raises(UsageError):
        normalize_url("mysql://x/y")


def test_writers_of_other_processes_queue_on_the_store_file_lock(tmp_path: Path) -> None:
    """`serve --workers N` on SQLite: a write transaction waits for the advisory lock of
    `<store>.writelock` that another process holds (the kernel hands it over on release),
    instead of racing it into SQLite's sleeping busy handler."""
    import subprocess
    import sys
    import time

    from sqlalchemy import text

    db = Database(f"sqlite:///{tmp_path / 's.db'}")
    db.migrate()
    holder = (
        "import fcntl, os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "time.sleep(0.8)\n"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", holder, str(tmp_path / "s.db.writelock")], stdout=subprocess.PIPE
    )
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == b"held"
        t0 = time.monotonic()
        with db.write() as s:
            s.execute(text("SELECT 1"))
        waited = time.monotonic() - t0
    finally:
        p.wait(10)
        if p.stdout is not None:
            p.stdout.close()
        db.dispose()
    assert waited >= 0.4, f"the write did not wait for the other process's lock ({waited:.2f} s)"
    with db.write() as s:  # and the lock is free again afterwards
        s.execute(text("SELECT 1"))
    db.dispose()


def test_the_store_writes_every_label_version_itself(db: Database) -> None:
    """The revision history is kept by a trigger on labels: a label written by any path (here
    the ORM, not the submission code) gets a revision row per insert and per payload change,
    and none for other changes."""
    from sqlalchemy import func, select, update

    from assay.workbench.models import Assignment, Label, LabelRevision, Task, User

    with db.write() as s:
        uid = s.scalars(select(User.id).where(User.username == "ana")).one()
        tid = s.scalars(select(Task.id).where(Task.kind == "judge").order_by(Task.id)).first()
        s.add(Assignment(task_id=tid, user_id=uid))
        lab = Label(task_id=tid, user_id=uid, client_id="orm-1", payload={"v": 1}, seconds=2.0)
        s.add(lab)
        s.flush()
        lid = lab.id
    with db.write() as s:
        s.execute(update(Label).where(Label.id == lid).values(payload={"v": 2}))
        s.execute(update(Label).where(Label.id == lid).values(seconds=9.0))  # not a new version

    with db.read() as s:
        revs = s.scalars(
            select(LabelRevision).where(LabelRevision.label_id == lid).order_by(LabelRevision.id)
        ).all()
        assert [(r.payload, r.seconds, r.after_seen, r.task_id) for r in revs] == [
            ({"v": 1}, 2.0, False, tid),
            ({"v": 2}, 2.0, False, tid),
        ]
        assert s.scalar(select(func.count()).select_from(LabelRevision)) == len(revs)
