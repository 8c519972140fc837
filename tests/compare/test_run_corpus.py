"""A run knows its corpus: each run's gold is resolved against that run's own chunk table, two
chunkings of the same documents compare honestly, and a run made on another index stops the
comparison (exit 2) before anything goes into the ledger."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cache import RequestCache
from assay.cli import app
from assay.dataset import load_dataset
from assay.runner import run_system
from assay.runs import load_run

# four filings of two pages; each page holds two sentences, one of them the gold
PAGES = {
    (f"doc{d}", p): (
        f"Revenue of segment {d}{p} was {100 * d + p} million dollars in fiscal 2024.",
        f"Headcount at segment {d}{p} reached {10 * d + p} thousand people at year end.",
    )
    for d in range(1, 5)
    for p in (1, 2)
}


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _chunkings(d: Path) -> tuple[Path, Path]:
    """A: one chunk per page (ids doc/p). B: two chunks per page, other ids (doc-p-s)."""
    a = [
        {"chunk_id": f"{doc}/{p}", "doc_id": doc, "page": p, "text": " ".join(text)}
        for (doc, p), text in PAGES.items()
    ]
    b = [
        {"chunk_id": f"{doc}-{p}-{s}", "doc_id": doc, "page": p, "text": text[s]}
        for (doc, p), text in PAGES.items()
        for s in (0, 1)
    ]
    return _write(d / "chunks-a.jsonl", a), _write(d / "chunks-b.jsonl", b)


def _dataset(d: Path) -> Path:
    rows = [
        {
            "id": f"e{i}",
            "query": f"revenue of segment {i}1",
            "category": "lookup",
            "evidence_paths": [
                [[{"doc": f"doc{i}", "page": 1, "quote": PAGES[(f"doc{i}", 1)][0]}]]
            ],
        }
        for i in range(1, 5)
    ]
    return _write(d / "golden.jsonl", rows)


@pytest.fixture
def case(tmp_path: Path) -> dict[str, Path]:
    a, b = _chunkings(tmp_path)
    ds = _dataset(tmp_path)
    # run A (on chunking A) finds 3 of 4: e4 gets the wrong page
    run_a = _write(
        tmp_path / "a.jsonl",
        [
            {"id": f"e{i}", "retrieved": [f"doc{i}/{1 if i < 4 else 2}", "doc1/2"]}
            for i in range(1, 5)
        ],
    )
    # run B (on chunking B) finds 4 of 4: the revenue half of page 1
    run_b = _write(
        tmp_path / "b.jsonl",
        [{"id": f"e{i}", "retrieved": [f"doc{i}-1-0", f"doc{i}-1-1"]} for i in range(1, 5)],
    )
    return {"dir": tmp_path, "ds": ds, "a": a, "b": b, "run_a": run_a, "run_b": run_b}


def _json(args: list[str]) -> dict[str, Any]:
    res = CliRunner().invoke(app, [*args, "-f", "json"])
    assert res.exit_code == 0, res.output
    out: dict[str, Any] = json.loads(res.stdout)
    return out


def test_two_chunkings_compare_at_chunk_level_through_each_tables_alignment(
    case: dict[str, Path],
) -> None:
    args = ["compare", str(case["ds"]), str(case["run_a"]), str(case["run_b"]), "--k", "2"]
    tables = ["--base-chunks", str(case["a"]), "--cand-chunks", str(case["b"])]
    cmp = _json([*args, *tables, "--resamples", "200"])
    m = cmp["overall"]["metrics"]["complete@2"]
    assert (m["base"], m["cand"]) == (0.75, 1.0)
    assert (m["fixed"], m["broken"]) == (1, 0) and m["fixed_ids"] == ["e4"]
    assert any("its own chunk table" in n for n in cmp["notes"])
    table = CliRunner().invoke(app, [*args, *tables, "--resamples", "200", "--no-record"])
    assert "+1 -0" in table.stdout
    # and at page level
    page = _json([*args, *tables, "--level", "page", "--resamples", "200", "--no-record"])
    pm = page["overall"]["metrics"]["complete@2"]
    assert (pm["fixed"], pm["broken"]) == (1, 0)


def test_one_shared_table_for_two_chunkings_stops_instead_of_a_bogus_regression(
    case: dict[str, Path],
) -> None:
    """With one --chunks the second table was never read: run B's hits were unknown ids and its
    4 of 4 read as 0 of 4, a significant drop. Now it stops, naming the share and the cause."""
    ledger = case["dir"] / "golden.ledger.jsonl"
    for cmd in ("compare", "gate"):
        res = CliRunner().invoke(
            app,
            [cmd, str(case["ds"]), str(case["run_a"]), str(case["run_b"]), "--k", "2",
             "--chunks", str(case["a"])],
        )  # fmt: skip
        out = " ".join(res.output.split())
        assert res.exit_code == 2, res.output
        assert "100% of the candidate run's hits (8 of 8" in out
        assert "the run was made on another index" in out and "--cand-chunks" in out
    assert not ledger.exists()  # nothing went into the ledger


def test_a_run_with_renamed_ids_is_refused_by_compare_gate_and_the_leaderboard(
    case: dict[str, Path],
) -> None:
    """What a run on another index looks like: every chunk id renamed."""
    d = case["dir"]
    renamed = _write(
        d / "renamed.jsonl",
        [
            {"id": r["id"], "retrieved": [f"x-{c}" for c in r["retrieved"]]}
            for r in map(json.loads, case["run_a"].read_text().splitlines())
        ],
    )
    c = ["--chunks", str(case["a"]), "--k", "2"]
    ds, a = str(case["ds"]), str(case["run_a"])
    for args in (
        ["compare", ds, a, str(renamed), *c],
        ["gate", ds, a, str(renamed), *c],
        ["compare", ds, a, str(renamed), a, *c],  # a leaderboard
    ):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2 and "made on another index" in res.output, (args, res.output)
    assert not (d / "golden.ledger.jsonl").exists()
    # a few unknown hits are not another index: under the share, compared as usual
    some = _write(
        d / "some.jsonl",
        [{"id": "e1", "retrieved": ["doc1/1", "gone"]}]
        + [{"id": f"e{i}", "retrieved": [f"doc{i}/1"] * 10} for i in range(2, 5)],
    )
    res = CliRunner().invoke(app, ["compare", ds, a, str(some), *c, "--no-record"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(
        app, ["compare", ds, a, str(some), *c, "--no-record", "--max-unknown-hits", "0.01"]
    )
    assert res.exit_code == 2 and "3% of the candidate run's hits" in res.output, res.output


def test_runs_record_their_chunk_table_and_compare_reads_each_runs_own(
    case: dict[str, Path],
) -> None:
    d = case["dir"]
    ds = load_dataset(case["ds"])
    runs = {}
    for name in ("a", "b"):
        runs[name] = d / f"bm25-{name}.jsonl"
        run_system(
            ds, "bm25", options={"chunks": case[name]}, k=2, out=runs[name],
            cache=RequestCache(enabled=False), progress=False,
        )  # fmt: skip
        meta = load_run(runs[name]).meta
        assert meta["chunks"]["path"] == str(case[name].resolve())
        assert meta["chunks"]["hash"] == meta["corpus_hash"]
    # no --chunks at all: each run's gold is resolved on the table it recorded
    cmp = _json(["compare", str(case["ds"]), str(runs["a"]), str(runs["b"]), "--k", "2",
                 "--no-record", "--resamples", "200"])  # fmt: skip
    assert cmp["overall"]["metrics"]["complete@2"]["n"] == 4
    assert any("its own chunk table" in n for n in cmp["notes"])
    # the same chunks written in another order are the same table (its content fingerprint)
    rows = case["b"].read_text().splitlines()
    case["b"].write_text("\n".join(reversed(rows)) + "\n")
    res = CliRunner().invoke(
        app, ["compare", str(case["ds"]), str(runs["a"]), str(runs["b"]), "--k", "2",
              "--no-record", "--resamples", "200"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    # a table re-chunked in place since the run: its ids hold other text now
    shifted = [json.loads(r) for r in rows]
    for r, nxt in zip(shifted, shifted[1:] + shifted[:1], strict=True):
        r["text"] = nxt["text"]
    _write(case["b"], shifted)
    res = CliRunner().invoke(
        app, ["compare", str(case["ds"]), str(runs["a"]), str(runs["b"]), "--k", "2"]
    )
    assert res.exit_code == 2 and "has changed since" in res.output, res.output


@pytest.fixture
def serve() -> Iterator[Callable[[dict[str, Any], dict[str, str]], str]]:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    servers: list[ThreadingHTTPServer] = []

    def start(extra: dict[str, Any], headers: dict[str, str]) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply = {"hits": [f"{body['query']}-0"], **extra}
                if callable(extra.get("index")):
                    reply["index"] = extra["index"](body)
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/retrieve"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def test_an_http_run_records_the_index_its_replies_name(
    serve: Callable[[dict[str, Any], dict[str, str]], str], tmp_path: Path
) -> None:
    """HTTP runs carried corpus_hash null, so the corpus guard never fired for them."""
    ds = _dataset(tmp_path)
    base = ["run", str(ds), "--no-cache", "--k", "1"]

    def meta(url: str, out: str, *extra: str) -> dict[str, Any]:
        res = CliRunner().invoke(
            app, [*base, "--system", url, "--out", str(tmp_path / out), *extra]
        )
        assert res.exit_code == 0, res.output
        return dict(json.loads((tmp_path / f"{out}.meta.json").read_text()))

    body = serve({"index": {"hash": "idx-7", "chunks": str(tmp_path / "c.jsonl")}}, {})
    m = meta(body, "body.jsonl")
    assert m["corpus_hash"] == "idx-7" and m["chunks"]["path"] == str(tmp_path / "c.jsonl")
    header = serve({}, {"X-Assay-Index": "idx-8"})
    assert meta(header, "header.jsonl")["corpus_hash"] == "idx-8"
    silent = serve({}, {})
    assert meta(silent, "silent.jsonl")["corpus_hash"] is None
    assert meta(silent, "byhand.jsonl", "--corpus-id", "idx-9")["corpus_hash"] == "idx-9"
    res = CliRunner().invoke(
        app, [*base, "--system", header, "--out", str(tmp_path / "x.jsonl"), "--corpus-id", "other"]
    )
    assert res.exit_code == 2 and "replies name index idx-8" in res.output, res.output
    mixed = serve({"index": lambda b: "idx-a" if b["query"].endswith("11") else "idx-b"}, {})
    res = CliRunner().invoke(app, [*base, "--system", mixed, "--out", str(tmp_path / "m.jsonl")])
    assert res.exit_code == 2 and "the replies name several indexes" in res.output, res.output
    # two HTTP runs on different indexes are now told apart
    res = CliRunner().invoke(
        app,
        ["compare", str(ds), str(tmp_path / "body.jsonl"), str(tmp_path / "header.jsonl"),
         "--no-record"],
    )  # fmt: skip
    assert res.exit_code == 2 and "made on corpus idx-8, the baseline on idx-7" in res.output


def test_export_and_the_explorer_show_each_run_against_its_own_table(
    case: dict[str, Path],
) -> None:
    """The explorer showed one run's hits with the other table's text."""
    d = case["dir"]
    args = ["export", str(case["ds"]), str(case["run_a"]), str(case["run_b"]), "--k", "2"]
    bundle = d / "bundle.json"
    res = CliRunner().invoke(
        app,
        [*args, "--base-chunks", str(case["a"]), "--cand-chunks", str(case["b"]), "--out",
         str(bundle), "--resamples", "200"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(bundle.read_text())
    assert data["scores"]["a"]["overall"]["complete@2"] == 0.75
    assert data["scores"]["b"]["overall"]["complete@2"] == 1.0
    e1 = next(e for e in data["entries"] if e["id"] == "e1")
    hit = e1["runs"]["b"]["retrieved"][0]
    assert hit["chunk_id"] == "doc1-1-0" and hit["gold"] == ["1.1"]
    assert data["run_chunk_text"]["b"]["doc1-1-0"]["text"] == PAGES[("doc1", 1)][0]
    assert "doc1-1-0" not in data["chunk_text"]  # not mixed into the baseline's table
    assert e1["runs"]["b"]["paths"][0][0]["alternatives"][0]["chunks"] == ["doc1-1-0"]
    cmp = data["comparisons"]["b"]["overall"]["metrics"]["complete@2"]
    assert (cmp["fixed"], cmp["broken"]) == (1, 0)
    site = d / "site"
    res = CliRunner().invoke(app, ["report", str(bundle), "--out", str(site)])
    assert res.exit_code == 0, res.output
    page = next(p for p in site.rglob("*.html") if "e1" in p.name).read_text()
    assert PAGES[("doc1", 1)][0] in page and "doc1-1-0" in page
    # one table for both: the candidate's hits are unknown to it, the export stops
    res = CliRunner().invoke(app, [*args, "--chunks", str(case["a"]), "--out", str(d / "x.json")])
    assert res.exit_code == 2 and "made on another index" in res.output, res.output
    assert not (d / "x.json").exists()
