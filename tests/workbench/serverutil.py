"""Run the workbench as a real server process on 127.0.0.1 for tests and benchmarks."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

SRC = Path(__file__).resolve().parents[2] / "src"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    db_url: str, port: int | None = None, workers: int = 1, extra: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[bytes], str]:
    port = port or free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [
            sys.executable,
            *("-m", "assay.workbench", "--db", db_url),
            *("--port", str(port), "--workers", str(workers)),
            *extra,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"server exited: {err[-2000:]}")
        try:
            if httpx.get(base + "/login", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


@contextlib.contextmanager
def running_server(
    db_url: str, extra: tuple[str, ...] = ()
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    proc, base = start_server(db_url, extra=extra)
    try:
        yield proc, base
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr:
            proc.stderr.close()


def login(base: str, username: str, password: str, timeout: float = 60) -> tuple[httpx.Client, str]:
    """An httpx client logged in to a running server, and its CSRF token."""
    c = httpx.Client(base_url=base, timeout=timeout)
    page = c.get("/login").text
    m = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert m
    r = c.post(
        "/login", data={"username": username, "password": password, "csrf_token": m.group(1)}
    )
    assert r.status_code in (200, 303), r.status_code
    me = c.get("/api/me")
    assert me.status_code == 200, me.text
    return c, str(me.json()["csrf"])


def session_client(
    base: str, db: Any, username: str, timeout: float = 60
) -> tuple[httpx.Client, str]:
    """An httpx client holding a session opened directly in the store (no password round trip:
    logging in over HTTP is tested on its own) and its CSRF token."""
    from assay.workbench.app import SESSION_COOKIE
    from assay.workbench.auth import AuthPolicy, start_session
    from assay.workbench.models import User

    with db.read() as s:
        uid = s.query(User.id).filter(User.username == username).scalar()
    token, csrf = start_session(db, uid, AuthPolicy())
    c = httpx.Client(
        base_url=base, timeout=timeout, cookies={SESSION_COOKIE: token}, transport=_transport()
    )
    return c, csrf


class _SharedTransport(httpx.HTTPTransport):
    def close(self) -> None:  # shared by many clients: closing one client must not close it
        pass


_TRANSPORT: httpx.HTTPTransport | None = None


def _transport() -> httpx.HTTPTransport:
    """One connection pool for every test client (building an httpx client's own transport
    loads TLS certificates: slow when fifty are made)."""
    global _TRANSPORT
    if _TRANSPORT is None:
        _TRANSPORT = _SharedTransport(limits=httpx.Limits(max_connections=200))
    return _TRANSPORT
