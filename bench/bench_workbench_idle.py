"""Idle connections against the workbench server (real server process on the loopback).

    PYTHONPATH=src python bench/bench_workbench_idle.py [--idle 5000] [--header-timeout 10]
        [--max-per-address 100] [--requests 20]

Opens `--idle` TCP connections to the server that never send a byte (spread over loopback
source addresses 127.0.0.2, 127.0.0.3, ... so that none passes the per-address cap), then:

1. times `--requests` normal requests (GET /login, a new connection each, from 127.0.0.1)
   while the idle connections are held: the slowest must be under 1 s;
2. waits for the server to close the idle connections and reports when the last one closed
   (it must be within the header timeout, plus a second of slack);
3. opens `--max-per-address` + 50 connections from one address and counts those refused at
   once, and counts the server's log lines about refused connections (one per interval).

Both processes raise their open-file limit to what the connections need (within the hard
limit). Only loopback addresses are used; the script stops by itself.
"""

from __future__ import annotations

import argparse
import os
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def _raise_nofile(need: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, need))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return want


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(db_url: str, port: int, args: argparse.Namespace) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [
        sys.executable,
        *("-m", "assay.workbench", "--db", db_url, "--port", str(port)),
        *("--header-timeout", str(args.header_timeout)),
        *("--max-per-address", str(args.max_per_address)),
    ]
    # the child inherits the raised descriptor limit
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /login HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if s.recv(12).startswith(b"HTTP/1.1 200"):
                    return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("server did not start")


def _get(port: int) -> float:
    t0 = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /login HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 200"), data[:100]
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle", type=int, default=5000)
    ap.add_argument("--header-timeout", type=float, default=10.0)
    ap.add_argument("--max-per-address", type=int, default=100)
    ap.add_argument("--requests", type=int, default=20)
    args = ap.parse_args()
    limit = _raise_nofile(args.idle + args.max_per_address + 500)
    if limit < args.idle + 200:
        raise SystemExit(f"the open-file limit ({limit}) is too low for {args.idle} connections")

    from assay.workbench.db import Database
    from assay.workbench.demo_store import load_demo

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'w.db'}"
        d = Database(url)
        d.migrate()
        load_demo(d, fast_hash=True)
        d.dispose()
        port = _free_port()
        proc = _start(url, port, args)
        per_addr = args.max_per_address - 10
        idle: list[socket.socket] = []
        try:
            t0 = time.monotonic()
            for i in range(args.idle):
                src = f"127.0.{2 + i // per_addr // 250}.{2 + (i // per_addr) % 250}"
                idle.append(
                    socket.create_connection(
                        ("127.0.0.1", port), timeout=10, source_address=(src, 0)
                    )
                )
            opened = time.monotonic()
            print(f"opened {len(idle)} idle connections in {opened - t0:.2f} s")
            times = [_get(port) for _ in range(args.requests)]
            print(
                f"normal requests while held: {len(times)}, median {statistics.median(times) * 1000:.1f} ms, "
                f"max {max(times) * 1000:.1f} ms (limit 1000 ms)"
            )
            sel = selectors.DefaultSelector()
            for s in idle:
                s.setblocking(False)
                sel.register(s, selectors.EVENT_READ)
            open_left = len(idle)
            last = opened
            deadline = opened + args.header_timeout + 30
            while open_left and time.monotonic() < deadline:
                for key, _ in sel.select(timeout=1):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    try:
                        data = sock.recv(1)
                    except ConnectionResetError:
                        data = b""
                    if data == b"":
                        sel.unregister(sock)
                        open_left -= 1
                        last = time.monotonic()
            print(
                f"idle connections closed by the server: {len(idle) - open_left}/{len(idle)}, "
                f"the last {last - opened:.2f} s after they were all open "
                f"(header timeout {args.header_timeout:.0f} s)"
            )
            burst = []
            refused = 0
            for _ in range(args.max_per_address + 50):
                s = socket.create_connection(
                    ("127.0.0.1", port), timeout=10, source_address=("127.0.0.250", 0)
                )
                burst.append(s)
            time.sleep(0.5)  # well within the header timeout: only refusals are closed
            for s in burst:
                s.setblocking(False)
                try:
                    if s.recv(1) == b"":
                        refused += 1
                except ConnectionResetError:
                    refused += 1
                except BlockingIOError:
                    pass  # open: accepted, waiting for a request
            print(
                f"from one address: {len(burst)} opened, {refused} refused at once "
                f"(cap {args.max_per_address})"
            )
            for s in burst:
                s.close()
        finally:
            for s in idle:
                s.close()
            proc.terminate()
            proc.wait(10)
        err = proc.stderr.read().decode() if proc.stderr else ""
        lines = [x for x in err.splitlines() if "refused connections" in x]
        print(f"server log: {len(err.splitlines())} lines, {len(lines)} about refused connections")
        for x in lines:
            print("  " + x)
        if "Traceback" in err:
            print("server log has a traceback:\n" + err[-3000:])


if __name__ == "__main__":
    main()
