"""The workbench under load: claims under contention, and `serve --workers N`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from sqlalchemy import func, select, update

from assay.workbench import service as svc
from assay.workbench.auth import create_user
from assay.workbench.db import Database
from assay.workbench.models import Assignment, Task, User

from .conftest import judge_payload
from .serverutil import SRC, free_port, running_server, session_client

N_ANNOTATORS, N_TASKS, OVERLAP = 50, 300, 2  # 600 slots; all 50 annotators see the same first tasks


def test_claims_never_answer_empty_while_a_slot_is_free(db: Database, tmp_path: Path) -> None:
    """50 annotators at once (a real server, one HTTP client each) claim and label 300 judging
    tasks of overlap 2 (600 slots) until they are told the queue is empty. Nobody may be told so while a slot they could take is
    free: at the end every slot is filled."""
    entries, run = tmp_path / "e.jsonl", tmp_path / "r.jsonl"
    entries.write_text(
        "".join(
            json.dumps({"id": f"l-{i:03d}", "query": f"q {i}", "category": "metric"}) + "\n"
            for i in range(N_TASKS)
        )
    )
    run.write_text(
        "".join(
            json.dumps({"id": f"l-{i:03d}", "retrieved": [], "answer": f"a {i}"}) + "\n"
            for i in range(N_TASKS)
        )
    )
    with db.write() as s:  # only the new tasks are open
        s.execute(update(Task).values(overlap=0))
    svc.import_entries(db, entries, kinds=(), overlap=OVERLAP)
    svc.import_run(db, run, run_name="load", overlap=OVERLAP)
    for i in range(N_ANNOTATORS):
        create_user(db, f"load{i:02d}", "tulip-basin-4821", fast_hash=True)
    with db.read() as s:
        users = list(s.scalars(select(User).where(User.username.like("load%"))))
    errors: list[str] = []
    told_empty_while_free: list[tuple[str, int]] = []

    def free_slots_for(user: User) -> int:
        with db.read() as s:
            n = s.scalar(
                select(func.sum(Task.overlap - Task.n_claimed)).where(
                    Task.kind == "judge",
                    Task.calibration.is_(False),
                    Task.n_claimed < Task.overlap,
                    Task.id.not_in(select(Assignment.task_id).where(Assignment.user_id == user.id)),
                )
            )
        return int(n or 0)

    with running_server(db.url) as (_proc, base):
        clients = [session_client(base, db, u.username) for u in users]
        barrier = threading.Barrier(N_ANNOTATORS)

        def work(i: int) -> None:
            user, (client, csrf) = users[i], clients[i]
            h = {"X-CSRF-Token": csrf}
            try:
                barrier.wait(60)
                n = 0
                while (
                    t := client.post("/api/next/judge", headers=h).json()["task_id"]
                ) is not None:
                    body = {"task_id": t, "payload": judge_payload(), "client_id": f"{i}-{t}"}
                    r = client.post("/api/labels", json=body, headers=h)
                    assert r.status_code == 200, r.text
                    n += 1
                if n < N_TASKS and free_slots_for(user):
                    told_empty_while_free.append((user.username, n))
            except Exception as exc:  # reported below
                errors.append(f"{user.username}: {exc!r}")
            finally:
                client.close()

        threads = [threading.Thread(target=work, args=(i,)) for i in range(N_ANNOTATORS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
    assert not errors, errors[:3]
    with db.read() as s:
        claimed = s.scalar(
            select(func.sum(Task.n_claimed)).where(Task.kind == "judge", Task.overlap == OVERLAP)
        )
    assert int(claimed or 0) == N_TASKS * OVERLAP
    assert not told_empty_while_free, told_empty_while_free[:5]


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(d.name))
    return out


def test_serve_workers_runs_that_many_processes(tmp_path: Path) -> None:
    """`assay workbench serve --workers 2`: two worker processes serve the port."""
    from assay.workbench.demo_store import load_demo

    url = f"sqlite:///{tmp_path / 'w.db'}"
    store = Database(url)
    load_demo(store, fast_hash=True)
    store.dispose()
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "assay.cli", "workbench", "serve", "--db", url]
    proc = subprocess.Popen(
        [*cmd, "--port", str(port), "--workers", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
            try:
                if httpx.get(base + "/login", timeout=2).status_code == 200:
                    workers = [
                        c
                        for c in _children(proc.pid)
                        if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()
                    ]
                    if len(workers) == 2:
                        break
            except (httpx.HTTPError, OSError):
                pass
            time.sleep(0.2)
        assert len(workers) == 2, workers
        for _ in range(10):
            assert httpx.get(base + "/login", timeout=10).status_code == 200
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()
