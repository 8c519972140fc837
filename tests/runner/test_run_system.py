from __future__ import annotations

import datetime as dt
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tests.conftest import write_jsonl
from typer.testing import CliRunner

from assay.cache import RequestCache
from assay.dataset import Entry
from assay.errors import UsageError
from assay.runner import run_system
from assay.runs import load_run
from assay.systems import SystemCallError, load_system

from . import fake_systems

ENTRIES = [
    Entry(id="a", query="qa", category="c", as_of=dt.date(2024, 3, 31)),
    Entry(id="b", query="qb", category="c"),
    Entry(id="c", query="qc", category="d", as_of=dt.date(2022, 1, 1)),
    Entry(id="d", query="qd", category="d", as_of=dt.date(2023, 6, 30)),
]


def test_as_of_reaches_every_call_and_is_recorded(tmp_path: Path) -> None:
    fake_systems.CALLS.clear()
    cache = RequestCache(tmp_path / "c.sqlite")
    run = run_system(
        ENTRIES,
        fake_systems.Echo(),
        k=3,
        cache=cache,
        out=tmp_path / "new" / "r.jsonl",
        progress=False,
    )
    assert [(q, a) for q, a, _ in fake_systems.CALLS] == [(e.query, e.as_of) for e in ENTRIES]
    assert run.row("a").as_of == "2024-03-31" and run.row("b").as_of is None
    assert run.row("a").answer == "answer to qa as of 2024-03-31"
    assert run.hits("a") == ["qa-0", "qa-1", "qa-2"]
    meta = json.loads((tmp_path / "new" / "r.jsonl.meta.json").read_text())
    assert meta["system"]["identity"] == {"kind": "echo", "version": 1} and meta["k"] == 3


def test_cache_reproduces_without_calling_and_no_cache_bypasses(tmp_path: Path) -> None:
    cache = RequestCache(tmp_path / "c.sqlite")
    first = run_system(
        ENTRIES, fake_systems.Echo(), k=3, cache=cache, out=tmp_path / "1.jsonl", progress=False
    )
    fake_systems.CALLS.clear()
    second = run_system(
        ENTRIES, fake_systems.Echo(), k=3, cache=cache, out=tmp_path / "2.jsonl", progress=False
    )
    assert fake_systems.CALLS == []
    assert (tmp_path / "1.jsonl").read_bytes() == (tmp_path / "2.jsonl").read_bytes()
    assert first.hash == second.hash
    # a different k is a different request
    run_system(ENTRIES, fake_systems.Echo(), k=2, cache=cache, progress=False)
    assert len(fake_systems.CALLS) == 4
    fake_systems.CALLS.clear()
    run_system(
        ENTRIES,
        fake_systems.Echo(),
        k=3,
        cache=RequestCache(tmp_path / "c.sqlite", enabled=False),
        progress=False,
    )
    assert len(fake_systems.CALLS) == 4


def test_resume_after_interruption(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    cache = RequestCache(tmp_path / "c.sqlite", enabled=False)
    # the same system (one spec, one declared identity) failing once, then resumed
    with pytest.raises(SystemCallError, match="entry c: RuntimeError: boom"):
        run_system(
            ENTRIES, fake_systems.Flaky(), k=2, spec="echo", cache=cache, out=out, progress=False
        )
    assert not out.exists()  # no partial output posing as complete
    partial = Path(str(out) + ".partial")
    assert len(partial.read_text().splitlines()) == 2
    fake_systems.CALLS.clear()
    run = run_system(
        ENTRIES, fake_systems.Echo(), k=2, spec="echo", cache=cache, out=out, progress=False
    )
    assert [q for q, _, _ in fake_systems.CALLS] == ["qc", "qd"]
    assert run.ids == ["a", "b", "c", "d"] and not partial.exists()
    assert load_run(out).ids == ["a", "b", "c", "d"]


def test_protocol_requires_as_of() -> None:
    with pytest.raises(UsageError, match="as_of"):
        load_system("tests.runner.fake_systems:NoAsOf")
    with pytest.raises(UsageError, match="cannot import"):
        load_system("no.such.module:x")
    assert isinstance(load_system("tests.runner.fake_systems:build"), fake_systems.Echo)


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.lock:
            self.seen.append(body)
        hits = [
            {"chunk_id": f"{body['query']}-{i}", "score": 1.0 / (i + 1)} for i in range(body["k"])
        ]
        data = json.dumps({"hits": hits, "answer": "ok"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def test_http_system_parallel(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/retrieve"
        sysobj = load_system(url)
        entries = [
            Entry(id=f"e{i}", query=f"q{i}", category="c", as_of=dt.date(2024, 1, 1))
            for i in range(40)
        ]
        run = run_system(
            entries,
            sysobj,
            k=3,
            spec=url,
            cache=RequestCache(tmp_path / "c.sqlite"),
            progress=False,
        )
        assert run.ids == [e.id for e in entries]  # order kept despite parallel calls
        assert run.hits("e7") == ["q7-0", "q7-1", "q7-2"] and run.row("e7").answer == "ok"
        assert all(b["as_of"] == "2024-01-01" and b["k"] == 3 for b in _Handler.seen)
        sysobj.close()
    finally:
        server.shutdown()
        server.server_close()


def test_cli_run_then_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import assay.cli._register  # noqa: F401
    from assay.cli import app

    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    ds = write_jsonl(
        tmp_path / "g.jsonl",
        [
            {
                "id": "a",
                "query": "qa",
                "category": "x",
                "as_of": "2024-01-01",
                "evidence_paths": [[["qa-0"]]],
            },
            {"id": "b", "query": "qb", "category": "y", "evidence_paths": [[["qb-9"]]]},
            {"id": "u", "query": "qu", "category": "y", "answerable": False},
        ],
    )
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "run",
            str(ds),
            "--system",
            "tests.runner.fake_systems:build",
            "--out",
            str(tmp_path / "r.jsonl"),
            "--k",
            "3",
        ],
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(
        app, ["score", str(ds), str(tmp_path / "r.jsonl"), "--k", "3", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (
        out["k"] == 3
        and out["categories"]["x"]["recall@3"] == 1.0
        and out["categories"]["y"]["recall@3"] == 0.0
    )
    assert set(out["categories"]["x"]) >= {"n", "recall@3", "complete@3", "mrr", "ndcg@3"}
    assert out["overall"]["n"] == 2 and out["unanswerable_n"] == 1
    assert out["dataset_version"].startswith("sha256:") and out["run_hash"]
    res = runner.invoke(app, ["score", str(ds), str(tmp_path / "r.jsonl"), "--format", "markdown"])
    assert "| **overall** | 2 |" in res.stdout
    res = runner.invoke(app, ["score", str(ds), str(tmp_path / "r.jsonl")])
    assert "overall" in res.stdout


def test_cli_score_refuses_missing_gold_chunks(tmp_path: Path) -> None:
    import assay.cli._register  # noqa: F401
    from assay.cli import app

    chunks = write_jsonl(
        tmp_path / "chunks.jsonl", [{"chunk_id": "x", "doc_id": "d", "page": 1, "text": "t"}]
    )
    ds = write_jsonl(
        tmp_path / "g.jsonl",
        [{"id": "a", "query": "q", "category": "c", "evidence_paths": [[["x"], ["ghost-1"]]]}],
    )
    run = write_jsonl(tmp_path / "r.jsonl", [{"id": "a", "retrieved": ["x"]}])
    res = CliRunner().invoke(app, ["score", str(ds), str(run), "--chunks", str(chunks)])
    assert res.exit_code == 2
    assert "ghost-1" in res.output and "entry a" in res.output


def test_cli_validate_exit_codes_and_writes_nothing(tmp_path: Path) -> None:
    import assay.cli._register  # noqa: F401
    from assay.cli import app

    good = write_jsonl(tmp_path / "g.jsonl", [{"id": "a", "query": "q", "category": "c"}])
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"id": "a", "query": "q"}\n{oops\n')
    before = sorted(p.name for p in tmp_path.iterdir())
    r = CliRunner().invoke(app, ["validate", str(good)])
    assert r.exit_code == 0
    r = CliRunner().invoke(app, ["validate", str(bad)])
    assert r.exit_code == 1
    assert f"{bad}:1: category: required field is missing" in r.output
    assert f"{bad}:2: bad JSON" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    r = CliRunner().invoke(app, ["schema"])
    assert r.exit_code == 0 and json.loads(r.stdout)["title"] == "Entry"


def test_score_on_a_sealed_fresh_sample_refuses_a_second_use_without_allow_reuse(
    tmp_path: Path,
) -> None:
    import assay.cli._register  # noqa: F401
    from assay.cli import app

    ds = write_jsonl(
        tmp_path / "fresh-2026-11.jsonl",
        [{"id": "a", "query": "q", "category": "c", "evidence_paths": [[["x"]]]}],
    )
    run = write_jsonl(tmp_path / "r.jsonl", [{"id": "a", "retrieved": ["x"]}])
    runner = CliRunner()
    assert runner.invoke(app, ["fresh", "seal", str(ds)]).exit_code == 0
    first = runner.invoke(app, ["score", str(ds), str(run)])
    assert first.exit_code == 0, first.output
    assert "first use recorded" in first.output
    second = runner.invoke(app, ["score", str(ds), str(run)])
    assert second.exit_code == 2 and "already used 1 time" in second.output
    third = runner.invoke(app, ["score", str(ds), str(run), "--allow-reuse"])
    assert third.exit_code == 0, third.output
    assert "WARNING" in third.output and "use 2" in third.output


def run_on_ray_until_c_fails(tmp_path: Path) -> SystemCallError:
    """Run ENTRIES on the Ray executor (one worker) with a system that cannot answer entry c;
    the error raised (the journal stays at tmp_path / "r.jsonl.partial")."""
    with pytest.raises(SystemCallError) as ei:
        run_system(
            ENTRIES,
            fake_systems.FailsOn("qc"),
            k=2,
            cache=RequestCache(tmp_path / "c.sqlite"),
            out=tmp_path / "r.jsonl",
            progress=False,
            executor="ray",
            workers=1,
        )
    return ei.value


@pytest.mark.parametrize(
    ("order", "saved_ids"),
    [
        ([0, 2, 3, 1], ["a", "b"]),  # c fails before b is back: b is awaited, d is not saved
        ([2, 3, 1, 0], ["a", "b"]),
        ([3, 0, 2, 1], ["a", "b", "d"]),  # d was back (and saved) before c failed
    ],
)
def test_rows_from_workers_in_any_order_keep_every_row_before_the_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: list[int], saved_ids: list[str]
) -> None:
    """Workers hand rows back as they finish: the failure of entry c may arrive before entry b's
    row. Every row before c is still saved, a row after c only if it was back before c failed,
    and c is the entry named."""
    import assay.runner as runner_mod

    def out_of_order(_ex: Any, call: Any, items: list[Any], *, setup: Any) -> Any:
        state = setup()
        results = [(i, call(state, item)) for i, item in enumerate(items)]
        for i in order:
            yield results[i]

    monkeypatch.setattr(runner_mod, "imap", out_of_order)
    assert run_on_ray_until_c_fails(tmp_path).entry_id == "c"
    partial = tmp_path / "r.jsonl.partial"
    saved = sorted(json.loads(x)["row"]["id"] for x in partial.read_text().splitlines())
    assert saved == saved_ids
    assert not (tmp_path / "r.jsonl").exists()
