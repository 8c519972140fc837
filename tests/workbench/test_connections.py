"""Idle and trickling connections cannot starve the server (issue 25): header and body
timeouts, a per-address connection cap, and refused connections logged as one line per
interval. A real server process on the loopback; the 5,000-connection figure is measured by
bench/bench_workbench_idle.py (docs/workbench.md)."""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from assay.workbench.app import SESSION_COOKIE
from assay.workbench.auth import AuthPolicy, start_session
from assay.workbench.models import User
from assay.workbench.protect import RefusalLog

from .serverutil import running_server


def _connect(base: str, source: str = "127.0.0.1") -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=5, source_address=(source, 0))
    return s


def _closed_by_server(s: socket.socket, within: float) -> bool:
    """The server closes the connection within `within` seconds (whatever it answers first)."""
    deadline = time.monotonic() + within
    try:
        while (left := deadline - time.monotonic()) > 0:
            s.settimeout(left)
            if s.recv(4096) == b"":
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return False


def test_idle_slow_and_excess_connections_are_closed(tmp_path: Path) -> None:
    pytest.importorskip("httptools")
    from assay.workbench.db import Database
    from assay.workbench.demo_store import load_demo

    url = f"sqlite:///{tmp_path / 'w.db'}"
    d = Database(url)
    d.migrate()
    load_demo(d, fast_hash=True)
    with d.read() as sess:
        uid = sess.scalar(select(User.id).where(User.username == "ana"))
    token, csrf = start_session(d, uid, AuthPolicy())
    d.dispose()
    extra = ("--header-timeout", "1", "--body-timeout", "1", "--max-per-address", "20")
    with running_server(url, extra=extra) as (proc, base):
        idle = [_connect(base, "127.0.0.2") for _ in range(20)]  # the address's whole allowance
        time.sleep(0.2)
        # the 21st from that address is refused at once
        extra_conn = _connect(base, "127.0.0.2")
        assert _closed_by_server(extra_conn, 2.0)
        # a slow client: headers begun, never finished
        slow = _connect(base, "127.0.0.3")
        slow.sendall(b"GET /login HTTP/1.1\r\nHost: x\r\n")
        # a trickling body: a logged-in submission whose body never completes (the route
        # waits for it)
        body = _connect(base, "127.0.0.4")
        body.sendall(
            b"POST /api/labels HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n"
            b"Content-Type: application/json\r\n"
            + f"Cookie: {SESSION_COOKIE}={token}\r\nX-CSRF-Token: {csrf}\r\n\r\n".encode()
            + b'{"task_id": 1,'
        )
        # a normal request is still answered at once, from another address
        t0 = time.perf_counter()
        assert httpx.get(base + "/login", timeout=5).status_code == 200
        assert time.perf_counter() - t0 < 1.0
        # after the timeout, the idle, slow and trickling connections are closed by the server
        started = time.monotonic()
        for s in [*idle, slow]:
            assert _closed_by_server(s, max(0.1, 3.0 - (time.monotonic() - started)))
        body.settimeout(3.0 - (time.monotonic() - started))
        assert body.recv(4096) == b""  # closed, and never answered: the body did not arrive
        assert time.monotonic() - started < 3.0
        # the address has its allowance back
        again = _connect(base, "127.0.0.2")
        again.sendall(b"GET /login HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        again.settimeout(5)
        assert again.recv(12).startswith(b"HTTP/1.1 200")
        for s in [*idle, extra_conn, slow, body, again]:
            s.close()
        proc.terminate()
        proc.wait(10)
        assert proc.stderr is not None
        log = proc.stderr.read().decode()
    assert "Traceback" not in log
    lines = [x for x in log.splitlines() if "refused connections" in x]
    assert len(lines) == 1 and "1 over 20 from one address" in lines[0], log


def test_refusals_are_one_line_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    log = RefusalLog(interval=60)
    with caplog.at_level(logging.WARNING, logger="assay.workbench"):
        for i in range(10_000):
            log.refused("over 100 from one address", now=1000.0 + i * 0.001)  # 10 s
        log.refused("over 100 from one address", now=1061.0)  # the next interval
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert "1 over 100 from one address" in lines[0]
    assert "10000 over 100 from one address" in lines[1]
