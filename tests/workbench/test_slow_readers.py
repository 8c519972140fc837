"""Slow readers and proxies (issue 40): a client that pipelines requests and never reads the
replies is dropped after the write timeout, a connection pipelining past the cap is dropped at
once, and behind a trusted proxy the per-address cap counts the clients its X-Forwarded-For
names, not the proxy. A real server process on the loopback."""

from __future__ import annotations

import contextlib
import re
import socket
import time
from pathlib import Path

import pytest

from assay.workbench.db import Database
from assay.workbench.demo_store import load_demo

from .serverutil import running_server

pytest.importorskip("httptools")


def _store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'w.db'}"
    d = Database(url)
    d.migrate()
    load_demo(d, fast_hash=True)
    d.dispose()
    return url


def _connect(base: str, source: str = "127.0.0.1", rcvbuf: int | None = None) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((source, 0))
    s.settimeout(5)
    s.connect((host, int(port)))
    return s


def _read_all(s: socket.socket, within: float) -> tuple[bytes, bool]:
    """(bytes read, closed by the server) within `within` seconds."""
    got = b""
    deadline = time.monotonic() + within
    try:
        while (left := deadline - time.monotonic()) > 0:
            s.settimeout(left)
            chunk = s.recv(65536)
            if not chunk:
                return got, True
            got += chunk
    except ConnectionResetError:
        return got, True
    except TimeoutError:
        return got, False
    return got, False


def _whole_reply(got: bytes) -> bool:
    """`got` holds one whole reply: its head and as many bytes of body as it announces."""
    head, sep, body = got.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:[ \t]*(\d+)", head)
    return bool(sep and length and len(body) >= int(length.group(1)))


def _read_reply(s: socket.socket, within: float) -> tuple[bytes, bool]:
    """(bytes read, closed by the server) once one whole reply is in, the server closed the
    connection, or `within` seconds passed: a connection kept open is not waited on to the end."""
    got = b""
    deadline = time.monotonic() + within
    try:
        while (left := deadline - time.monotonic()) > 0:
            s.settimeout(left)
            chunk = s.recv(65536)
            if not chunk:
                return got, True
            got += chunk
            if _whole_reply(got):
                return got, False
    except ConnectionResetError:
        return got, True
    except TimeoutError:
        return got, False
    return got, False


def _get(path: str, extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode()


def test_a_client_that_never_reads_is_dropped_and_pipelining_is_capped(tmp_path: Path) -> None:
    url = _store(tmp_path)
    extra = ("--header-timeout", "10", "--write-timeout", "1")
    with running_server(url, extra=extra) as (_proc, base):
        # 300 pipelined requests for a 32 KB file (9.6 MB of replies, more than the kernel's
        # socket buffers hold), none of them read
        slow = _connect(base, "127.0.0.2", rcvbuf=4096)
        slow.settimeout(0.5)
        with contextlib.suppress(TimeoutError, ConnectionError):
            for _ in range(20):
                slow.sendall(_get("/static/workbench.js") * 15)
                time.sleep(0.05)
        time.sleep(2.5)  # past the write timeout: the server dropped the connection
        got, closed = _read_all(slow, 2.0)
        assert closed and got.count(b"HTTP/1.1 200") < 300
        # 40 requests pipelined in one packet: over the cap of 32, dropped at once
        burst = _connect(base, "127.0.0.3")
        burst.sendall(_get("/login") * 40)
        got, closed = _read_all(burst, 3.0)
        assert closed and got.count(b"HTTP/1.1 200") < 40
        # a client pipelining a few and reading them is served in full
        fine = _connect(base, "127.0.0.4")
        fine.sendall(_get("/login") * 4 + _get("/login", "Connection: close\r\n"))
        got, closed = _read_all(fine, 5.0)
        assert got.count(b"HTTP/1.1 200") == 5
        for s in (slow, burst, fine):
            s.close()


def test_the_per_address_cap_counts_the_clients_behind_a_trusted_proxy(tmp_path: Path) -> None:
    url = _store(tmp_path)
    extra = ("--trusted-proxy", "127.0.0.5", "--max-per-address", "3")
    with running_server(url, extra=extra) as (_proc, base):
        # six clients behind the proxy, one connection each, all kept open: all served
        conns = []
        for i in range(6):
            c = _connect(base, "127.0.0.5")
            c.sendall(_get("/login", f"X-Forwarded-For: 203.0.113.{i + 1}\r\n"))
            got, _ = _read_reply(c, 0.8)
            assert got.startswith(b"HTTP/1.1 200"), (i, got[:40])
            conns.append(c)
        # one client behind the proxy on four connections: the fourth is dropped
        same = []
        for _ in range(4):
            c = _connect(base, "127.0.0.5")
            c.sendall(_get("/login", "X-Forwarded-For: 198.51.100.7\r\n"))
            got, closed = _read_reply(c, 0.8)
            same.append((got.startswith(b"HTTP/1.1 200"), closed))
            conns.append(c)
        assert [ok for ok, _ in same] == [True, True, True, False]
        assert same[3][1]
        # an address that is not a trusted proxy is capped by its own address as before
        direct = [_connect(base, "127.0.0.6") for _ in range(4)]
        got, closed = _read_all(direct[3], 1.0)
        assert closed
        for c in conns + direct:
            c.close()
