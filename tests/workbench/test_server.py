"""A real server on 127.0.0.1: 50 simultaneous annotators, and a SIGKILL during a burst."""

from __future__ import annotations

import json
import signal
import threading
from collections import Counter
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select, update

from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.db import Database
from assay.workbench.models import Label, Task, User

from .conftest import judge_payload
from .serverutil import login, running_server, session_client, start_server

N_ANNOTATORS = 50


def _add_items(db: Database, tmp_path: Path, n: int, overlap: int) -> None:
    """n extra questions with a system answer each, judged by `overlap` experts."""
    entries = tmp_path / "extra.jsonl"
    run = tmp_path / "extra-run.jsonl"
    entries.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"x-{i:03d}",
                    "query": f"extra question {i}",
                    "category": "metric",
                    "metadata": {"company": "Acme Devices"},
                }
            )
            + "\n"
            for i in range(n)
        )
    )
    run.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"x-{i:03d}",
                    "retrieved": ["acme-2023-10k#segments"],
                    "answer": f"answer {i}",
                }
            )
            + "\n"
            for i in range(n)
        )
    )
    svc.import_entries(db, entries, kinds=(), overlap=overlap)
    svc.import_run(db, run, run_name="extra", overlap=overlap)


def _make_users(db: Database, n: int) -> list[str]:
    names = [f"ann{i:02d}" for i in range(n)]
    for name in names:
        create_user(db, name, "tulip-basin-4821", fast_hash=True)
    return names


def test_fifty_simultaneous_annotators_lose_and_duplicate_nothing(
    db: Database, tmp_path: Path
) -> None:
    """50 annotators at once claim and judge the same 3 outputs (overlap 50): 150 labels."""
    with db.write() as s:
        s.execute(update(Task).where(Task.kind == "judge").values(overlap=0))
        s.execute(
            update(Task)
            .where(Task.kind == "judge", Task.calibration.is_(False), Task.item_id <= "demo-003")
            .values(overlap=N_ANNOTATORS)
        )
    names = _make_users(db, N_ANNOTATORS)
    with db.read() as s:
        n_tasks = s.query(Task).filter(Task.kind == "judge", Task.overlap > 0).count()
    assert n_tasks == 3
    acked: list[tuple[str, int, int]] = []
    errors: list[str] = []
    lock = threading.Lock()
    with running_server(db.url) as (_proc, base):
        clients = [session_client(base, db, n) for n in names]
        barrier = threading.Barrier(N_ANNOTATORS)

        def work(i: int) -> None:
            client, csrf = clients[i]
            try:
                barrier.wait(timeout=60)
                while True:
                    nxt = client.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).json()
                    if nxt["task_id"] is None:
                        break
                    body = {
                        "task_id": nxt["task_id"],
                        "payload": judge_payload(),
                        "client_id": f"{i}-{nxt['task_id']}",
                    }
                    r = client.post("/api/labels", json=body, headers={"X-CSRF-Token": csrf})
                    if r.status_code != 200:
                        raise AssertionError(r.text)
                    if i % 5 == 0:  # a retried submission must not duplicate
                        r2 = client.post("/api/labels", json=body, headers={"X-CSRF-Token": csrf})
                        assert r2.json()["label_id"] == r.json()["label_id"]
                    with lock:
                        acked.append((names[i], nxt["task_id"], r.json()["label_id"]))
            except Exception as exc:  # collected and reported below
                with lock:
                    errors.append(f"{names[i]}: {exc!r}")
            finally:
                client.close()

        threads = [threading.Thread(target=work, args=(i,)) for i in range(N_ANNOTATORS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    assert not errors, errors[:5]
    assert len(acked) == N_ANNOTATORS * n_tasks
    with db.read() as s:
        rows = s.execute(
            select(Label.id, User.username, Label.task_id)
            .join(User, User.id == Label.user_id)
            .where(User.username.like("ann%"))
        ).all()
    stored = {(u, t, i) for i, u, t in rows}
    assert stored == set(acked)  # none lost, none extra
    assert max(Counter((u, t) for u, t, _ in acked).values()) == 1  # none duplicated


@pytest.mark.slow
def test_sigkill_during_a_burst_keeps_every_acknowledged_label(
    db: Database, tmp_path: Path
) -> None:
    n_users, n_items = 16, 12
    _add_items(db, tmp_path, n_items, overlap=n_users)
    names = _make_users(db, n_users)
    acked: list[tuple[str, int, int]] = []
    lock = threading.Lock()
    proc, base = start_server(db.url)
    try:
        clients = [session_client(base, db, n) for n in names]
        enough = threading.Event()

        def work(i: int) -> None:
            client, csrf = clients[i]
            try:
                while True:
                    nxt = client.post("/api/next/judge", headers={"X-CSRF-Token": csrf}).json()
                    if nxt["task_id"] is None:
                        return
                    body = {
                        "task_id": nxt["task_id"],
                        "payload": judge_payload(),
                        "client_id": f"k{i}-{nxt['task_id']}",
                    }
                    r = client.post("/api/labels", json=body, headers={"X-CSRF-Token": csrf})
                    if r.status_code == 200:
                        with lock:
                            acked.append((names[i], nxt["task_id"], r.json()["label_id"]))
                            if len(acked) >= 40:
                                enough.set()
            except httpx.HTTPError:
                return  # the server died mid-request: that submission was never acknowledged

        threads = [threading.Thread(target=work, args=(i,)) for i in range(n_users)]
        for t in threads:
            t.start()
        assert enough.wait(60), "the burst did not get going"
        proc.send_signal(signal.SIGKILL)  # in the middle of the burst
        proc.wait(10)
        for t in threads:
            t.join(30)
        for c, _ in clients:
            c.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        if proc.stderr:
            proc.stderr.close()
    total = n_users * (n_items + 5)
    assert 40 <= len(acked) < total, "the kill should land inside the burst"
    # restart on the same store: it comes back, and every acknowledged label is there
    with running_server(db.url) as (_p, base2):
        sample = acked[-1]  # read back by its author (the task is not fully labelled: blind)
        author, _ = login(base2, sample[0], "tulip-basin-4821")
        labels = author.get(f"/api/tasks/{sample[1]}/labels").json()["labels"]
        assert sample[2] in {lab["id"] for lab in labels}
        author.close()
    fresh = Database(db.url)
    try:
        with fresh.read() as s:
            stored = {
                (u, t, i)
                for i, u, t in s.execute(
                    select(Label.id, User.username, Label.task_id).join(
                        User, User.id == Label.user_id
                    )
                )
            }
        assert set(acked) <= stored
        if fresh.dialect == "sqlite":
            with fresh.engine.connect() as conn:
                assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    finally:
        fresh.dispose()
