"""HTTP systems: a per-read timeout and a per-entry deadline (hung and trickling servers end),
replies that are not JSON or carry NaN scores name the entry, --system-version is identity."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cache import RequestCache
from assay.cli import app
from assay.dataset import Entry
from assay.errors import AssayError
from assay.runner import run_system
from assay.systems import HttpSystem, SystemCallError, load_system, system_identity

Reply = Callable[[BaseHTTPRequestHandler, dict[str, Any]], None]


def _send(handler: BaseHTTPRequestHandler, body: bytes, status: int = 200) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@pytest.fixture
def serve() -> Iterator[Callable[[Reply], str]]:
    servers: list[ThreadingHTTPServer] = []
    stop = threading.Event()

    def start(reply: Reply) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    reply(self, {**body, "_stop": stop})

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/retrieve"

    yield start
    stop.set()
    for s in servers:
        s.shutdown()
        s.server_close()


ENTRIES = [Entry(id=f"e{i}", query=f"q{i}", category="c") for i in range(3)]


def _hung(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    body["_stop"].wait(30)  # accepts, never answers


def _trickle(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    while not body["_stop"].is_set():  # one byte every 50 ms: no read ever times out
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(0.05)


@pytest.mark.parametrize("reply", [_hung, _trickle], ids=["hung", "trickling"])
def test_a_hung_or_trickling_server_costs_at_most_the_deadline(
    serve: Callable[[Reply], str], reply: Reply
) -> None:
    url = serve(reply)
    system = load_system(url, timeout=0.5, deadline=1.5, retries=3)
    t0 = time.monotonic()
    with pytest.raises(SystemCallError) as err:
        run_system(ENTRIES, system, k=2, cache=RequestCache(enabled=False), workers=1)
    elapsed = time.monotonic() - t0
    assert elapsed < 3.0, elapsed  # one entry, bounded by the deadline (+ slack)
    assert err.value.entry_id == "e0" and "deadline" in str(err.value)
    system.close()


def test_timeouts_and_deadline_from_the_command_line(
    serve: Callable[[Reply], str], tmp_path: Path
) -> None:
    url = serve(_hung)
    ds = tmp_path / "g.jsonl"
    ds.write_text(json.dumps({"id": "only", "query": "q", "category": "c"}) + "\n")
    t0 = time.monotonic()
    res = CliRunner().invoke(
        app,
        [
            *("run", str(ds), "--system", url, "--out", str(tmp_path / "r.jsonl")),
            *("--no-cache", "--timeout", "0.3", "--deadline", "1"),
        ],
    )
    assert time.monotonic() - t0 < 3.0
    assert res.exit_code == 2, res.output
    assert "entry only:" in res.output and "1 s deadline" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "r.jsonl").exists()


def test_garbage_json_names_the_entry(serve: Callable[[Reply], str], tmp_path: Path) -> None:
    url = serve(lambda h, body: _send(h, b"<html>oops</html>"))
    ds = tmp_path / "g.jsonl"
    ds.write_text(json.dumps({"id": "fd-7", "query": "q", "category": "c"}) + "\n")
    res = CliRunner().invoke(
        app, ["run", str(ds), "--system", url, "--out", str(tmp_path / "r.jsonl"), "--no-cache"]
    )
    assert res.exit_code == 2, res.output
    assert "entry fd-7:" in res.output and "not JSON" in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_scores_in_replies_name_the_entry(
    serve: Callable[[Reply], str], token: str
) -> None:
    body = f'{{"hits": [{{"chunk_id": "a", "score": 1.0}}, {{"chunk_id": "b", "score": {token}}}]}}'
    url = serve(lambda h, _: _send(h, body.encode()))
    with pytest.raises(SystemCallError, match=r"entry e0: .*retrieved\.1\.score: must be a finite"):
        run_system(ENTRIES, load_system(url), k=2, cache=RequestCache(enabled=False), workers=1)


def test_bad_reply_shapes_are_named(serve: Callable[[Reply], str]) -> None:
    for reply, message in [
        (b'{"hits": "a,b"}', "'hits' list"),
        (b'{"hits": [], "answer": 42}', "'answer' must be a string"),
        (b'{"hits": [], "citations": [1]}', "'citations' must be a list of chunk ids"),
    ]:
        url = serve(lambda h, _, r=reply: _send(h, r))
        with pytest.raises(SystemCallError, match=message):
            run_system(ENTRIES[:1], load_system(url), k=2, cache=RequestCache(enabled=False))


def test_client_errors_are_not_retried_and_5xx_are(serve: Callable[[Reply], str]) -> None:
    seen: list[int] = []

    def flaky(h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        seen.append(1)
        if len(seen) < 3:
            _send(h, b"busy", status=503)
        else:
            _send(h, json.dumps({"hits": ["x"]}).encode())

    system = HttpSystem(serve(flaky), timeout=2, deadline=10, retries=3)
    assert system.retrieve("q", as_of=None, k=1) == ["x"] and len(seen) == 3
    bad = HttpSystem(serve(lambda h, _: _send(h, b"no", status=404)), retries=3)
    with pytest.raises(AssayError, match="HTTP 404"):
        bad.retrieve("q", as_of=None, k=1)


def test_system_version_is_identity_and_headers_are_not(serve: Callable[[Reply], str]) -> None:
    url = serve(lambda h, _: _send(h, b'{"hits": []}'))
    v1 = load_system(url, system_version="v1", header=["Authorization: Bearer secret"])
    v2 = load_system(url, system_version="v2")
    ident1 = system_identity(v1, url, {"system_version": "v1", "timeout": 3.0, "header": ["A: b"]})
    ident2 = system_identity(v2, url, {"system_version": "v2"})
    assert ident1 != ident2
    assert "secret" not in json.dumps(ident1) and "timeout" not in json.dumps(ident1)
    assert ident1["args"] == {"system_version": "v1"}


def test_new_system_version_is_a_cache_miss_and_a_note_says_so(
    serve: Callable[[Reply], str], tmp_path: Path
) -> None:
    calls: list[str] = []

    def reply(h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        calls.append(body["query"])
        _send(h, json.dumps({"hits": [body["query"]]}).encode())

    url = serve(reply)
    ds = tmp_path / "g.jsonl"
    ds.write_text("".join(json.dumps({"id": q, "query": q, "category": "c"}) + "\n" for q in "qr"))

    def run(*extra: str) -> Any:
        out = str(tmp_path / "r.jsonl")
        cache = ["--cache-dir", str(tmp_path / "cache")]
        return CliRunner().invoke(
            app, ["run", str(ds), "--system", url, "--out", out, *cache, *extra]
        )

    assert run().exit_code == 0 and calls == ["q", "r"]
    # replayed but for the first entry (the call that learns the index): the note says so
    again = run()
    assert calls == ["q", "r", "q"] and "1 from cache, 1 called" in again.output, again.output
    assert "--system-version" in again.output and "name no index" in again.output
    assert run("--system-version", "v2").exit_code == 0 and calls == ["q", "r", "q", "q", "r"]
