"""Label submission latency with 50 concurrent annotators (real server on 127.0.0.1).

    PYTHONPATH=src python bench/bench_workbench_submit.py [--annotators 50] [--labels 8]
        [--think-ms 0] [--db sqlite|postgresql+psycopg://...] [--workers N] [--compare-routing]
        [--client asyncio|threads]
        [--prev DIR [--rounds 2]] [--src DIR] [--json]

`--prev DIR` compares this tree with another one (the previous release, checked out in a
worktree: `git worktree add /tmp/prev main`) in the same minutes: `--rounds` rounds, each
running this tree's server and then DIR's (alternating, each in a child process of this script
with `--src`, on a fresh store of its own, with its own peer run), then prints every run and
the ratio of the median p99s and CPU per label. `--src DIR` runs the server and builds the
store with the `assay` of DIR (a tree's `src`); `--json` prints one JSON object per run.

`--compare-routing` also runs the server with `--no-hot-path` (claim and submit through FastAPI's
routing) on a fresh store of its own, and prints the ratio. For a slower machine, run it under
`bench/cpu_quota.sh`.

Each annotator is a thread with its own session. It asks for its next judging task and submits
a Pass/Fail label, `--labels` times. Between labels it reads the item for a random time,
exponential with mean `--think-ms` (seeded), and starts at a random offset in the first mean
think time, so arrivals are Poisson-like; `--think-ms 0` is a closed loop where all annotators
hammer the server at once (far harsher than people who read for a minute per item). Only the
submission (POST /api/labels: session, CSRF, blind-claim check, validation, write, commit) is
timed.

The load generator (`--client asyncio`, the default) runs every annotator as a coroutine on one
event loop, each on a keep-alive connection written and read by hand: on a 2-core machine the
generator shares the CPUs with the server, and a heavy client would measure itself (0.11-0.12
CPU ms per label against 0.42-0.43 for `--client threads`, a thread per annotator on the standard
library's `http.client`, itself far lighter than httpx). Peer and workbench use the same one.

Peer, measured in the same run under the same load: the floor of the stack, a bare Starlette
endpoint on the same uvicorn that inserts the JSON body into a SQLite table (WAL) with the
sqlite3 module, no auth, no validation. The ratio says what the workbench's checks cost.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import inspect
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
# `--src DIR`: another tree's assay, for the store and the server (read before any import)
SRC = Path(sys.argv[sys.argv.index("--src") + 1]) if "--src" in sys.argv[:-1] else ROOT / "src"
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(ROOT / "tests" / "workbench"))

import serverutil  # noqa: E402
from serverutil import free_port, start_server  # noqa: E402

serverutil.SRC = SRC

from assay.workbench import service as svc  # noqa: E402
from assay.workbench.app import SESSION_COOKIE  # noqa: E402
from assay.workbench.auth import AuthPolicy, create_user, start_session  # noqa: E402
from assay.workbench.db import Database  # noqa: E402
from assay.workbench.demo_store import load_demo  # noqa: E402
from assay.workbench.models import User  # noqa: E402

PASS = {
    "verdicts": {"correct": "pass", "complete": "pass", "faithful": "pass", "policy": "fail"},
    "critiques": {"policy": "Recommends buying the stock."},
}

PEER_APP = textwrap.dedent(
    """
    import json, sqlite3, sys, threading
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    import uvicorn

    path, port = sys.argv[1], int(sys.argv[2])
    local = threading.local()
    lock = threading.Lock()
    def conn():
        if not hasattr(local, "c"):
            local.c = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            local.c.execute("PRAGMA journal_mode=WAL"); local.c.execute("PRAGMA synchronous=NORMAL")
            local.c.execute("PRAGMA busy_timeout=30000")
        return local.c
    conn().execute("CREATE TABLE IF NOT EXISTS labels (id INTEGER PRIMARY KEY, body TEXT)")
    def login(request):
        return JSONResponse({"ok": True})
    async def submit(request):
        body = await request.body()
        from starlette.concurrency import run_in_threadpool
        def write():
            with lock:
                c = conn(); c.execute("BEGIN IMMEDIATE")
                cur = c.execute("INSERT INTO labels(body) VALUES (?)", (body.decode(),))
                c.execute("COMMIT")
                return cur.lastrowid
        return JSONResponse({"label_id": await run_in_threadpool(write)})
    app = Starlette(routes=[Route("/login", login), Route("/api/labels", submit, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    """
)


class Client:
    """One keep-alive HTTP/1.1 connection with a session cookie."""

    made = 0  # clients so far: each connects from an address of its own (127.0.x.y)

    def __init__(self, base: str, cookie: str = "", csrf: str = "") -> None:
        host, port = base.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        # one loopback address per annotator, as people on their own machines: the server's
        # per-address connection cap (100) would otherwise refuse every annotator past the
        # hundredth, all connecting from 127.0.0.1
        n = Client.made
        Client.made += 1
        self.source = (f"127.0.{1 + n // 250}.{1 + n % 250}", 0)
        self.conn = self._connect()
        self.headers = {"Cookie": cookie, "X-CSRF-Token": csrf, "Content-Type": "application/json"}

    def request(self, method: str, path: str, body: object = None) -> tuple[int, object]:
        data = None if body is None else json.dumps(body).encode()
        for attempt in (1, 2):  # the server closes keep-alive connections idle for 5 s
            try:
                self.conn.request(method, path, body=data, headers=self.headers)
                r = self.conn.getresponse()
                raw = r.read()
                return r.status, json.loads(raw) if raw else None
            except (http.client.RemoteDisconnected, ConnectionError):
                self.conn.close()
                self.conn = self._connect()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(
            self.host, self.port, timeout=60, source_address=self.source
        )

    def close(self) -> None:
        self.conn.close()


class AsyncClient:
    """The same keep-alive connection and headers as `Client`, driven by asyncio: every
    annotator is a coroutine on one event loop in this process (`--client asyncio`, the
    default). HTTP/1.1 written and read by hand (a request line and headers, a
    Content-Length body): a fraction of `http.client`'s CPU and no GIL hand-offs between 200
    threads, so the generator takes less of the CPUs it shares with the server and measures
    less of its own queueing."""

    def __init__(self, base: str, cookie: str = "", csrf: str = "") -> None:
        host, port = base.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        n = Client.made  # one loopback address per annotator, as `Client`
        Client.made += 1
        self.source = (f"127.0.{1 + n // 250}.{1 + n % 250}", 0)
        self.head = (
            f"Host: {host}:{port}\r\nCookie: {cookie}\r\nX-CSRF-Token: {csrf}\r\n"
            "Content-Type: application/json\r\n"
        ).encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: object = None) -> tuple[int, object]:
        data = b"" if body is None else json.dumps(body).encode()
        wire = (
            f"{method} {path} HTTP/1.1\r\n".encode()
            + self.head
            + f"Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
        for attempt in (1, 2):  # the server closes keep-alive connections idle for 5 s
            try:
                if self.writer is None:
                    self.reader, self.writer = await asyncio.open_connection(
                        self.host, self.port, local_addr=self.source
                    )
                assert self.reader is not None
                self.writer.write(wire)
                head = await self.reader.readuntil(b"\r\n\r\n")
                status, length, close = _parse_head(head)
                raw = await self.reader.readexactly(length)
                if close:
                    self.close()
                return status, json.loads(raw) if raw else None
            except (ConnectionError, asyncio.IncompleteReadError):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def _parse_head(head: bytes) -> tuple[int, int, bool]:
    """Status, Content-Length and whether the server closes: of a response's header block."""
    lines = head.decode("latin-1").split("\r\n")
    status, length, close = int(lines[0].split(" ", 2)[1]), 0, False
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "connection":
            close = value.strip().lower() == "close"
        elif name == "transfer-encoding":
            raise SystemExit("the async client reads Content-Length bodies only")
    return status, length, close


def drive(
    make: Callable[[int], Any],
    n: int,
    steps: Callable[[int, int], Any],
    labels: int,
    think: float,
    client: str,
    meter: CpuMeter,
) -> float:
    """Every annotator labels `labels` times, reading for a random time between labels as the
    module docstring says; on threads with `Client` or on one event loop with `AsyncClient`.
    A label's requests come from the generator `steps(i, k)`: it yields (method, path, body)
    and is sent back (status, answer, seconds); it returns False to stop the annotator. The
    wall time of the whole."""
    conns = [make(i) for i in range(n)]

    async def work(i: int) -> None:
        rng = random.Random(i)
        if think:
            await asyncio.sleep(rng.uniform(0, think))
        for k in range(labels):
            gen, answer = steps(i, k), None
            try:
                while True:
                    method, path, body = gen.send(answer)
                    t0 = time.perf_counter()
                    got = conns[i].request(method, path, body)  # Client's returns, AsyncClient's
                    status, value = await got if inspect.isawaitable(got) else got
                    answer = (status, value, time.perf_counter() - t0)
            except StopIteration as stop:
                if stop.value is False:
                    return
            if think:
                await asyncio.sleep(rng.expovariate(1 / think))

    async def together() -> None:
        try:
            await asyncio.gather(*(work(i) for i in range(n)))
        finally:
            for c in conns:
                c.close()  # on the loop that opened them

    barrier = threading.Barrier(n)

    def alone(i: int) -> None:  # a thread of its own, its requests blocking it alone
        barrier.wait()
        try:
            asyncio.run(work(i))
        finally:
            conns[i].close()

    threads = [threading.Thread(target=alone, args=(i,)) for i in range(n)]
    with meter:
        t0 = time.perf_counter()
        if client == "threads":
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        else:
            asyncio.run(together())
        return time.perf_counter() - t0


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (Linux /proc; 0 when unreadable)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    """`pid` and its live descendants (Linux /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo.extend(int(c) for c in task.read_text().split())
    return out


class CpuMeter:
    """CPU seconds spent in the timed window by the server (its process tree), the store's
    server processes (PostgreSQL backends of the bench's database, when the server is on this
    machine) and the load generator itself (this process): where a label's time goes when the
    CPUs are the limit. Backends that exit inside the window are not counted."""

    def __init__(self, server_pid: int, db: Database | None) -> None:
        self.server_pid, self.db = server_pid, db
        self.server = self.store = self.client = 0.0

    def _backends(self) -> dict[int, float]:
        if self.db is None or self.db.dialect != "postgresql":
            return {}
        with self.db.engine.connect() as conn:
            pids = conn.exec_driver_sql(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()"
            ).scalars()
            return {int(p): _cpu_seconds(int(p)) for p in pids}

    def __enter__(self) -> CpuMeter:
        self._server0 = sum(_cpu_seconds(p) for p in _tree(self.server_pid))
        self._store0 = self._backends()
        self._client0 = time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.client = time.process_time() - self._client0
        self.server = sum(_cpu_seconds(p) for p in _tree(self.server_pid)) - self._server0
        after = self._backends()
        self.store = sum(t - self._store0.get(p, 0.0) for p, t in after.items())


def summarize(
    name: str, lat: list[float], wall: float, cpu: CpuMeter | None = None
) -> dict[str, float]:
    ms = [x * 1000 for x in lat]
    per = 1000 / max(1, len(ms))  # CPU ms per label
    return {
        "cpu_server_ms": cpu.server * per if cpu else float("nan"),
        "cpu_store_ms": cpu.store * per if cpu else float("nan"),
        "cpu_client_ms": cpu.client * per if cpu else float("nan"),
        "n": len(ms),
        "p50_ms": statistics.median(ms),
        "p95_ms": pct(ms, 0.95),
        "p99_ms": pct(ms, 0.99),
        "max_ms": max(ms),
        "labels_per_s": len(ms) / wall,
    }


def prepare(db: Database, tmp: Path, annotators: int, labels: int) -> list[str]:
    load_demo(db, fast_hash=True)
    (tmp / "e.jsonl").write_text(
        "".join(
            json.dumps({"id": f"b-{i:04d}", "query": f"question {i}", "category": "metric"}) + "\n"
            for i in range(labels)
        )
    )
    (tmp / "r.jsonl").write_text(
        "".join(
            json.dumps(
                {"id": f"b-{i:04d}", "retrieved": ["acme-2023-10k#segments"], "answer": f"a{i}"}
            )
            + "\n"
            for i in range(labels)
        )
    )
    svc.import_entries(db, tmp / "e.jsonl", kinds=(), overlap=annotators)
    svc.import_run(db, tmp / "r.jsonl", run_name="bench", overlap=annotators)
    names = [f"b{i:03d}" for i in range(annotators)]
    for n in names:
        create_user(db, n, "tulip-basin-4821", fast_hash=True)
    return names


def run_workbench(
    db: Database,
    names: list[str],
    labels: int,
    think: float,
    workers: int,
    db_threads: int | None,
    hot_path: bool = True,
    client: str = "asyncio",
) -> tuple[list[float], float, CpuMeter]:
    extra = ("--db-threads", str(db_threads)) if db_threads else ()
    extra += () if hot_path else ("--no-hot-path",)
    proc, base = start_server(db.url, workers=workers, extra=extra)
    lat: list[float] = []
    acked: dict[str, int] = {}  # client id -> the label id the server acknowledged
    try:
        with db.read() as s:
            ids = {u.username: u.id for u in s.query(User).filter(User.username.in_(names))}
        sessions = []
        for n in names:
            token, csrf = start_session(db, ids[n], AuthPolicy())
            sessions.append((f"{SESSION_COOKIE}={token}", csrf))
        kind = AsyncClient if client == "asyncio" else Client

        def steps(i: int, k: int) -> Any:
            status, nxt, _ = yield ("POST", "/api/next/judge", None)
            assert status == 200 and isinstance(nxt, dict), nxt
            if nxt["task_id"] is None:
                return False
            body = {"task_id": nxt["task_id"], "payload": PASS, "client_id": f"{i}-{k}"}
            status, res, dt = yield ("POST", "/api/labels", body)
            assert status == 200 and isinstance(res, dict), res
            lat.append(dt)
            acked[body["client_id"]] = int(res["label_id"])
            return True

        cpu = CpuMeter(proc.pid, db)
        wall = drive(
            lambda i: kind(base, *sessions[i]), len(names), steps, labels, think, client, cpu
        )
    finally:
        proc.terminate()  # the supervisor stops its workers
        proc.wait()
    check_stored(db, acked)
    return lat, wall, cpu


def check_stored(db: Database, acked: dict[str, int]) -> None:
    """Every acknowledged label is in the store exactly once, under the id it was answered
    with, and no label of the run is there that was not acknowledged."""
    from sqlalchemy import text

    with db.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT client_id, id FROM labels WHERE client_id LIKE :run"), {"run": "%-%"}
        ).all()
    stored: dict[str, list[int]] = {}
    for cid, lid in rows:
        stored.setdefault(str(cid), []).append(int(lid))
    dup = {c: v for c, v in stored.items() if len(v) > 1}
    lost = {c: i for c, i in acked.items() if stored.get(c) != [i]}
    extra = sorted(set(stored) - set(acked))
    if dup or lost or extra:
        raise SystemExit(
            f"labels lost or duplicated: {len(lost)} acknowledged not stored as answered "
            f"{list(lost.items())[:5]}, {len(dup)} duplicated {list(dup.items())[:5]}, "
            f"{len(extra)} stored unacknowledged {extra[:5]}"
        )


def run_peer(
    tmp: Path, n: int, labels: int, think: float, client: str = "asyncio"
) -> tuple[list[float], float, CpuMeter]:
    script = tmp / "peer.py"
    script.write_text(PEER_APP)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp / "peer.db"), str(port)], stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.get(base + "/login", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    lat: list[float] = []
    kind = AsyncClient if client == "asyncio" else Client

    def steps(i: int, k: int) -> Any:
        yield ("GET", "/login", None)  # the same round trips as the workbench (next + submit)
        status, _, dt = yield ("POST", "/api/labels", {"payload": PASS, "client_id": f"{i}-{k}"})
        assert status == 200
        lat.append(dt)
        return True

    try:
        cpu = CpuMeter(proc.pid, None)
        wall = drive(lambda i: kind(base), n, steps, labels, think, client, cpu)
    finally:
        proc.kill()
        proc.wait()
    return lat, wall, cpu


@contextlib.contextmanager
def store(spec: str, tmp: Path, name: str) -> Iterator[Database]:
    """A fresh store: a SQLite file in `tmp`, or a scratch database on a PostgreSQL server,
    dropped at the end."""
    if spec == "sqlite":
        db = Database(f"sqlite:///{tmp / (name + '.db')}")
        try:
            yield db
        finally:
            db.dispose()
        return
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    admin = create_engine(spec, isolation_level="AUTOCOMMIT")
    scratch = f"assay_bench_{os.getpid()}_{name}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {scratch}")
    db = Database(make_url(spec).set(database=scratch).render_as_string(hide_password=False))
    try:
        yield db
    finally:
        db.dispose()
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {scratch} WITH (FORCE)")
        admin.dispose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--annotators", type=int, default=50)
    ap.add_argument("--labels", type=int, default=8, help="labels per annotator")
    ap.add_argument("--think-ms", type=float, default=0.0)
    ap.add_argument("--db", default="sqlite", help="sqlite, or a PostgreSQL URL")
    ap.add_argument("--workers", type=int, default=1, help="server processes")
    ap.add_argument(
        "--db-threads", type=int, default=None, help="the server's --db-threads (default: its own)"
    )
    ap.add_argument(
        "--compare-routing",
        action="store_true",
        help="also run the server with --no-hot-path (claim and submit through FastAPI's routing)",
    )
    ap.add_argument("--src", type=Path, default=None, help="a tree's src to run (see above)")
    ap.add_argument("--prev", type=Path, default=None, help="another tree to compare with")
    ap.add_argument("--rounds", type=int, default=2, help="with --prev: alternating rounds")
    ap.add_argument("--json", action="store_true", help="one JSON object per run")
    ap.add_argument(
        "--client",
        choices=("asyncio", "threads"),
        default="asyncio",
        help="the load generator: coroutines on one event loop (AsyncClient), or a thread per "
        "annotator on http.client (Client)",
    )
    args = ap.parse_args()
    if args.prev is not None:
        compare_trees(args)
        return
    think = args.think_ms / 1000
    rows: list[tuple[str, dict[str, float]]] = []
    variants = [("assay workbench", True)]
    if args.compare_routing:
        variants.append(("  via FastAPI routing", False))
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for i, (name, hot) in enumerate(variants):
            with store(args.db, tmp, f"v{i}") as db:
                names = prepare(db, tmp, args.annotators, args.labels)
                lat, wall, cpu = run_workbench(
                    db, names, args.labels, think, args.workers, args.db_threads, hot, args.client
                )
            rows.append((name, summarize(name, lat, wall, cpu)))
        peer_lat, peer_wall, peer_cpu = run_peer(
            tmp, args.annotators, args.labels, think, args.client
        )
    wb = rows[0][1]
    peer = summarize("peer", peer_lat, peer_wall, peer_cpu)
    rows.append(("peer: bare insert", peer))
    if args.json:
        print(json.dumps({"workbench": wb, "peer": peer, "src": str(SRC)}))
        return
    print(
        f"{args.annotators} concurrent annotators x {args.labels} labels, think {args.think_ms:g} ms, "
        f"store {'SQLite (WAL)' if args.db == 'sqlite' else 'PostgreSQL'}, "
        f"{args.workers} server process(es), {os.cpu_count()} CPUs, client {args.client}"
    )
    print(
        f"{'':24s} {'n':>5s} {'p50 ms':>8s} {'p95 ms':>8s} {'p99 ms':>8s} {'max ms':>8s} {'labels/s':>9s}"
        f"  CPU ms/label: {'server':>6s} {'store':>6s} {'client':>6s}"
    )
    for name, r in rows:
        print(
            f"{name:24s} {r['n']:5.0f} {r['p50_ms']:8.1f} {r['p95_ms']:8.1f} {r['p99_ms']:8.1f} "
            f"{r['max_ms']:8.1f} {r['labels_per_s']:9.1f}                "
            f"{r['cpu_server_ms']:6.2f} {r['cpu_store_ms']:6.2f} {r['cpu_client_ms']:6.2f}"
        )
    if args.compare_routing:
        routed = rows[1][1]
        print(f"ratio p99 via FastAPI routing / direct: {routed['p99_ms'] / wb['p99_ms']:.2f}")
    print(f"ratio p99 workbench / peer: {wb['p99_ms'] / peer['p99_ms']:.2f}")
    print(f"target p99 < 200 ms: {'met' if wb['p99_ms'] < 200 else 'NOT met'}")


def compare_trees(args: argparse.Namespace) -> None:
    """This tree against `args.prev`, alternating, each run in a child process (see above)."""
    trees = {"this tree": ROOT / "src", "previous": args.prev.resolve() / "src"}
    if not (trees["previous"] / "assay").is_dir():
        raise SystemExit(f"--prev {args.prev}: no src/assay there")
    passed = [
        *("--annotators", str(args.annotators), "--labels", str(args.labels)),
        *("--think-ms", str(args.think_ms), "--db", args.db, "--workers", str(args.workers)),
        *(("--db-threads", str(args.db_threads)) if args.db_threads else ()),
        *("--client", args.client),
    ]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for r in range(args.rounds):
        for name, src in trees.items():
            out = subprocess.run(
                [sys.executable, __file__, *passed, "--src", str(src), "--json"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            got = json.loads(out.strip().splitlines()[-1])
            runs[name].append(got["workbench"])
            wb, peer = got["workbench"], got["peer"]
            print(
                f"round {r + 1} {name:10s} {time.strftime('%H:%M:%S')}  p50 {wb['p50_ms']:7.1f}  "
                f"p99 {wb['p99_ms']:7.1f} ms  {wb['labels_per_s']:6.1f} labels/s  "
                f"CPU ms/label server {wb['cpu_server_ms']:5.2f} store {wb['cpu_store_ms']:5.2f} "
                f"client {wb['cpu_client_ms']:5.2f}  | peer p99 {peer['p99_ms']:6.1f} ms "
                f"{peer['labels_per_s']:6.1f} labels/s",
                flush=True,
            )
    med = {n: {k: statistics.median(x[k] for x in rs) for k in rs[0]} for n, rs in runs.items()}
    this, prev = med["this tree"], med["previous"]
    print(
        f"{args.annotators} annotators x {args.labels} labels, think {args.think_ms:g} ms, store "
        f"{'SQLite' if args.db == 'sqlite' else 'PostgreSQL'}, {args.rounds} rounds, medians:"
    )
    print(
        f"p99 this/previous: {this['p99_ms']:.1f} / {prev['p99_ms']:.1f} ms "
        f"(ratio {this['p99_ms'] / prev['p99_ms']:.2f}); labels/s {this['labels_per_s']:.1f} / "
        f"{prev['labels_per_s']:.1f}; server CPU ms/label {this['cpu_server_ms']:.2f} / "
        f"{prev['cpu_server_ms']:.2f}"
    )
    print(f"target p99 < 200 ms (this tree): {'met' if this['p99_ms'] < 200 else 'NOT met'}")


if __name__ == "__main__":
    main()
