"""The request cache sees the index a system is on: a server restarted on another index with the
same --system-version gets no row from the cache, a run says which index it was made on, and a
resume over rows made on another index is refused (exit 2, naming the journal and both indexes).
The chunk table an import-path system names is part of the key and of the journal too."""

from __future__ import annotations

import json
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cache import RequestCache
from assay.cli import app
from assay.dataset import Entry, load_dataset
from assay.errors import DataError
from assay.runner import run_system
from assay.systems import SystemCallError

ROWS = [{"id": f"e{i}", "query": f"q{i}", "category": "c"} for i in range(6)]


class Server:
    """A retrieval server on 127.0.0.1 that serves one index at a time and can be restarted on
    another one at the same URL (the same port). Every query it answers is logged."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.fail: set[str] = set()  # queries answered with HTTP 400 (not retried)
        self.index: str = ""
        self.header = False  # name the index in X-Assay-Index instead of the body
        self.port = 0
        self._server: ThreadingHTTPServer | None = None

    def start(self, index: str, *, header: bool = False) -> str:
        self.stop()
        self.index, self.header = index, header
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.calls.append(body["query"])
                status = 400 if body["query"] in owner.fail else 200
                reply: dict[str, Any] = {"hits": [f"{owner.index}/{body['query']}"]}
                if not owner.header:
                    reply["index"] = owner.index
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if owner.header:
                    self.send_header("X-Assay-Index", owner.index)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        self._server = server
        return self.url

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/retrieve"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.stop()


def _dataset(tmp_path: Path) -> Path:
    ds = tmp_path / "golden.jsonl"
    ds.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return ds


def _run(tmp_path: Path, ds: Path, url: str, out: str, *extra: str) -> Any:
    args = ["run", str(ds), "--system", url, "--system-version", "v1", "--k", "1"]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    return CliRunner().invoke(app, [*args, "--out", str(tmp_path / out), *cache, *extra])


def _again(tmp_path: Path, ds: Path, url: str) -> tuple[int, int, list[str]]:
    """The same run through the library, on the same cache: (from cache, called, hits)."""
    cache = RequestCache(tmp_path / "cache" / "requests.sqlite")
    run = run_system(load_dataset(ds), url, options={"system_version": "v1"}, k=1, cache=cache,
                     progress=False)  # fmt: skip
    hits = [h for rid in run.ids for h in run.hits(rid)]
    return run.meta["cache_hits"], run.meta["called_rows"], hits


def _meta(tmp_path: Path, out: str) -> dict[str, Any]:
    return dict(json.loads((tmp_path / f"{out}.meta.json").read_text()))


def _hits(tmp_path: Path, out: str) -> list[str]:
    rows = [json.loads(line) for line in (tmp_path / out).read_text().splitlines()]
    return [h["chunk_id"] for r in rows for h in r["retrieved"]]


@pytest.mark.parametrize("header", [False, True], ids=["index field", "X-Assay-Index"])
def test_a_server_restarted_on_another_index_gets_no_row_from_the_cache(
    server: Server, tmp_path: Path, header: bool
) -> None:
    """The server restarted on another index with the same --system-version got every row from
    the cache, and the old index recorded in the run's metadata."""
    ds = _dataset(tmp_path)
    url = server.start("idx-old", header=header)
    first = _run(tmp_path, ds, url, "old.jsonl")
    assert first.exit_code == 0 and "0 from cache, 6 called" in first.output, first.output
    assert "on index idx-old" in first.output
    # the same server, same index: everything but the one call that learns the index is cached
    cached, called, hits = _again(tmp_path, ds, url)
    assert (cached, called) == (5, 1) and all(h.startswith("idx-old/") for h in hits)
    # restarted on another index, at the same URL, with the same --system-version
    server.calls.clear()
    assert server.start("idx-new", header=header) == url
    new = _run(tmp_path, ds, url, "new.jsonl")
    assert new.exit_code == 0, new.output
    assert "0 from cache, 6 called" in new.output and "on index idx-new" in new.output, new.output
    assert sorted(server.calls) == [r["query"] for r in ROWS]
    assert _meta(tmp_path, "new.jsonl")["corpus_hash"] == "idx-new"
    assert all(h.startswith("idx-new/") for h in _hits(tmp_path, "new.jsonl"))
    # back on the old index: its replies are still in the cache, under their own index
    server.start("idx-old", header=header)
    cached, called, hits = _again(tmp_path, ds, url)
    assert (cached, called) == (5, 1) and all(h.startswith("idx-old/") for h in hits)


def test_a_resume_over_rows_from_another_index_is_refused(server: Server, tmp_path: Path) -> None:
    ds = _dataset(tmp_path)
    url = server.start("idx-a")
    server.fail = {"q3"}
    res = _run(tmp_path, ds, url, "r.jsonl", "--workers", "1")
    assert res.exit_code == 2 and "entry e3" in res.output, res.output
    partial = tmp_path / "r.jsonl.partial"
    before = partial.read_bytes()
    assert len(before.splitlines()) == 3
    # the server comes back on another index: the three journalled rows are not resumed
    server.fail = set()
    server.start("idx-b")
    server.calls.clear()
    res = _run(tmp_path, ds, url, "r.jsonl", "--workers", "1")
    assert res.exit_code == 2, res.output
    flat = " ".join(res.output.split())
    assert "r.jsonl.partial" in flat, res.output
    assert "idx-a" in flat and "idx-b" in flat and "--restart" in flat, res.output
    assert "Traceback" not in res.output
    # one call learnt the index; nothing else was called, the journal is as it was
    assert server.calls == ["q3"]
    assert partial.read_bytes() == before and not (tmp_path / "r.jsonl").exists()
    # --restart: every row made on idx-b (the one live call's reply came from the cache now)
    res = _run(tmp_path, ds, url, "r.jsonl", "--restart")
    assert res.exit_code == 0 and "1 from cache, 5 called" in res.output, res.output
    assert all(h.startswith("idx-b/") for h in _hits(tmp_path, "r.jsonl"))
    assert _meta(tmp_path, "r.jsonl")["corpus_hash"] == "idx-b"


def test_a_resume_on_the_same_index_goes_on(server: Server, tmp_path: Path) -> None:
    ds = _dataset(tmp_path)
    url = server.start("idx-a")
    server.fail = {"q3"}
    assert _run(tmp_path, ds, url, "r.jsonl", "--workers", "1").exit_code == 2
    server.fail = set()
    server.start("idx-a")
    res = _run(tmp_path, ds, url, "r.jsonl", "--workers", "1")
    assert res.exit_code == 0 and "3 resumed, 0 from cache, 3 called" in res.output, res.output


def test_a_journal_whose_rows_name_two_indexes_is_refused(tmp_path: Path) -> None:
    """Rows journalled while the server switched indexes (by an older assay): refused before
    any call, even though this run's index is one of the two."""
    out = tmp_path / "r.jsonl"
    partial = tmp_path / "r.jsonl.partial"
    with pytest.raises(SystemCallError, match="entry e2"):
        run_system(ENTRIES, _Replies("idx-a", fail="q2"), k=1, spec="replies", out=out,
                   cache=RequestCache(enabled=False), progress=False)  # fmt: skip
    lines = partial.read_text().splitlines()
    assert len(lines) == 2
    partial.write_text(lines[0] + "\n" + lines[1].replace("idx-a", "idx-b") + "\n")
    system = _Replies("idx-a")
    with pytest.raises(DataError, match=r"r\.jsonl\.partial: index: .*idx-a.*idx-b"):
        run_system(ENTRIES, system, k=1, spec="replies", out=out,
                   cache=RequestCache(enabled=False), progress=False)  # fmt: skip
    assert system.calls == 0


ENTRIES = [Entry.model_validate(r) for r in ROWS]


class _Replies:
    """An in-process system that answers as an HTTP one does: one reply with its hits and the
    index it came from."""

    def __init__(self, index: str, fail: str = "") -> None:
        self.index, self.fail = index, fail
        self.calls = 0

    def retrieve(self, query: str, *, as_of: Any, k: int) -> list[str]:
        return []

    def respond(self, query: str, *, as_of: Any, k: int) -> dict[str, Any]:
        self.calls += 1
        if query == self.fail:
            raise RuntimeError("stop")
        # the index as an object, with the chunk table's location (the other spelling)
        return {"hits": [f"{self.index}/{query}"], "index": {"hash": self.index, "chunks": "c"}}


# ------------------------------------------------------ an import-path system's chunk table


SYSTEM = textwrap.dedent(
    """
    from pathlib import Path

    class System:
        def __init__(self, chunks, fail=""):
            self.chunks_path = Path(chunks)
            self.fail = fail

        def retrieve(self, query, *, as_of, k):
            if query == self.fail:
                raise RuntimeError("stop")
            return [f"{query}-{i}" for i in range(k)]
    """
)


def test_an_import_path_systems_chunk_table_is_in_the_cache_key_and_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A system that names its chunk table (no corpus hash) kept its replies across a rechunked
    table, and resumed rows made on the old one."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "chunk_table_sys.py").write_text(SYSTEM)
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text('{"chunk_id": "a", "doc_id": "d", "page": 1, "text": "one"}\n')
    ds = _dataset(tmp_path)
    args = ["run", str(ds), "--system", "chunk_table_sys:System", "--k", "1",
            "--system-arg", f"chunks={chunks}", "--cache-dir", str(tmp_path / "cache")]  # fmt: skip

    def run(out: str, *extra: str) -> Any:
        return CliRunner().invoke(app, [*args, "--out", str(tmp_path / out), *extra])

    assert "0 from cache, 6 called" in run("1.jsonl").output
    assert "6 from cache, 0 called" in run("2.jsonl").output
    old = _meta(tmp_path, "2.jsonl")["chunks"]["hash"]
    failing = ("--system-arg", "fail=q3")
    assert run("r.jsonl", *failing, "--no-cache").exit_code == 2
    chunks.write_text('{"chunk_id": "a", "doc_id": "d", "page": 1, "text": "two"}\n')
    res = run("3.jsonl")
    assert "0 from cache, 6 called" in res.output, res.output
    new = _meta(tmp_path, "3.jsonl")["chunks"]["hash"]
    assert new != old
    partial = tmp_path / "r.jsonl.partial"
    before = partial.read_bytes()
    res = run("r.jsonl", *failing, "--no-cache")
    assert res.exit_code == 2, res.output
    flat = " ".join(res.output.split())
    assert old in flat and new in flat and "r.jsonl.partial" in flat, res.output
    assert partial.read_bytes() == before
