"""The runner and conversations: the history keyword (own, gold, none), turns in order on any
executor, the cache keyed on the history, a killed run resuming mid-conversation, HTTP."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import write_jsonl

from assay.cache import RequestCache
from assay.dataset import load_dataset
from assay.errors import UsageError
from assay.runner import run_system
from assay.systems import SystemCallError, load_system

from . import history_systems as hs


@pytest.fixture
def ds(tmp_path: Path) -> Any:
    p = tmp_path / "conv.jsonl"
    plain = {"id": "plain", "query": "What was Averix's revenue in fiscal 2022?", "category": "x"}
    write_jsonl(p, [plain, *hs.conversations(3)])
    return load_dataset(p)


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    hs.CALLS.clear()
    hs.FAIL_ON.clear()
    yield
    hs.FAIL_ON.clear()


def _run(ds: Any, tmp_path: Path, name: str, **kw: Any) -> Any:
    kw.setdefault("cache", RequestCache(tmp_path / "c.sqlite", enabled=False))
    return run_system(ds, hs.YearBefore(), out=tmp_path / name, progress=False, **kw)


def test_own_history_carries_the_systems_answers_and_resolves_the_follow_up(
    ds: Any, tmp_path: Path
) -> None:
    run = _run(ds, tmp_path, "own.jsonl", workers=4)
    assert run.row("conv-1#2").answer == "Borlan's revenue in fiscal 2022 was $6.4 billion."
    told = dict(hs.CALLS)
    assert told["What was Borlan's total revenue in fiscal 2023?"] == []
    follow = [h for q, h in hs.CALLS if q == "And the year before?"]
    assert len(follow) == 3 and all(len(h or []) == 2 for h in follow)
    first = next(h for h in follow if h and "Borlan" in h[0]["content"])
    assert first[1] == {"role": "assistant", "content": run.row("conv-1#1").answer}
    # an entry of no conversation is called without a history
    assert ("What was Averix's revenue in fiscal 2022?", None) in hs.CALLS
    meta = json.loads((tmp_path / "own.jsonl.meta.json").read_text())
    assert meta["history"] == "own"


def test_gold_and_none(ds: Any, tmp_path: Path) -> None:
    _run(ds, tmp_path, "gold.jsonl", history="gold")
    gold = [h for q, h in hs.CALLS if q == "And the year before?"]
    assert {h[1]["content"] for h in gold if h} == {
        e.reference_answer for e in ds.entries if e.id.endswith("#1")
    }
    hs.CALLS.clear()
    run = _run(ds, tmp_path, "none.jsonl", history="none")
    assert all(h == [] for q, h in hs.CALLS if "fiscal 2022" not in q)
    assert run.row("conv-1#2").answer == "Averix's revenue in fiscal 2023 was $4.2 billion."
    with pytest.raises(UsageError, match="own, gold, none"):
        _run(ds, tmp_path, "bad.jsonl", history="all")


def test_turns_run_in_order_whatever_order_the_executor_returns(
    ds: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An executor that hands items out last first still sees every first turn before any
    second turn (steps by turn number), and the run file is in entry order."""
    import assay.runner as runner_mod

    real = runner_mod.imap

    def backwards(ex: Any, call: Any, items: list[Any], *, setup: Any) -> Any:
        order = list(reversed(range(len(items))))
        got = dict(real(ex, call, items, setup=setup))
        return (pair for pair in [(i, got[i]) for i in order])

    monkeypatch.setattr(runner_mod, "imap", backwards)
    run = _run(ds, tmp_path, "r.jsonl", workers=3)
    queries = [q for q, _ in hs.CALLS]
    last_first = max(i for i, q in enumerate(queries) if "fiscal 2023" in q)
    first_follow = min(i for i, q in enumerate(queries) if q == "And the year before?")
    assert last_first < first_follow
    assert run.ids == [e.id for e in ds.entries]
    assert all("2022" in (run.row(f"conv-{i}#2").answer or "") for i in range(3))


def test_cache_keys_on_the_history(ds: Any, tmp_path: Path) -> None:
    cache = RequestCache(tmp_path / "c.sqlite")
    _run(ds, tmp_path, "1.jsonl", cache=cache)
    hs.CALLS.clear()
    again = _run(ds, tmp_path, "2.jsonl", cache=cache)
    assert hs.CALLS == [] and again.meta["cache_hits"] == 7
    gold = _run(ds, tmp_path, "3.jsonl", cache=cache, history="gold")
    # first turns are told [] in both modes (cached); the follow-ups are told other answers
    assert gold.meta["cache_hits"] == 4 and gold.meta["called_rows"] == 3


def test_a_killed_run_resumes_mid_conversation(ds: Any, tmp_path: Path) -> None:
    hs.FAIL_ON.add("And the year before?")
    with pytest.raises(SystemCallError, match="killed"):
        _run(ds, tmp_path, "r.jsonl")
    journal = (tmp_path / "r.jsonl.partial").read_text().splitlines()
    assert {json.loads(line)["row"]["id"] for line in journal} == {
        "plain", "conv-0#1", "conv-1#1", "conv-2#1",
    }  # fmt: skip
    hs.FAIL_ON.clear()
    hs.CALLS.clear()
    run = _run(ds, tmp_path, "r.jsonl")
    assert run.meta["resumed_rows"] == 4 and run.meta["called_rows"] == 3
    assert [q for q, _ in hs.CALLS] == ["And the year before?"] * 3
    # the resumed turn 1 answers came back from the journal as the follow-ups' history
    assert run.row("conv-2#2").answer == "Cendra's revenue in fiscal 2022 was $2.2 billion."
    # a journal made with another history mode is another run: refused, naming it
    hs.FAIL_ON.add("And the year before?")
    with pytest.raises(SystemCallError):
        _run(ds, tmp_path, "s.jsonl")
    hs.FAIL_ON.clear()
    with pytest.raises(UsageError, match="history: own in the journal, gold now"):
        _run(ds, tmp_path, "s.jsonl", history="gold")


def test_a_system_without_the_keyword_is_called_as_before(ds: Any, tmp_path: Path) -> None:
    run = run_system(ds, hs.NoHistory(), progress=False)
    assert run.row("conv-0#2").answer == "about And the year before?"


def test_the_http_adapter_sends_the_history(ds: Any, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            out = json.dumps({"hits": [], "answer": f"answer to {body['query']}"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/r"
        run_system(ds, load_system(url), progress=False, cache=RequestCache(tmp_path / "c"))
    finally:
        server.shutdown()
        server.server_close()
    by_query = {b["query"]: b for b in seen}
    assert "history" not in by_query["What was Averix's revenue in fiscal 2022?"]
    assert by_query["What was Borlan's total revenue in fiscal 2023?"]["history"] == []
    follow = [b for b in seen if b["query"] == "And the year before?"]
    assert len(follow) == 3
    assert follow[0]["history"][1]["content"].startswith("answer to What was")


def test_a_system_in_another_interpreter_gets_the_history(ds: Any, tmp_path: Path) -> None:
    """``--python``: the history crosses to the other interpreter and reaches the methods that
    name it there; the runner reads which ones from the worker (a system that names none is
    told nothing, and its cache keys do not carry a history)."""
    wrapper = tmp_path / "python-elsewhere"
    here = Path(hs.__file__).parent
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={here} exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    system = load_system("history_systems:YearBefore", python=wrapper)
    try:
        assert system.remote_keywords["history"] == {"retrieve", "answer"}
        cache = RequestCache(tmp_path / "c.sqlite", enabled=False)
        own = run_system(ds, system, out=tmp_path / "own.jsonl", progress=False, cache=cache)
        none = run_system(
            ds, system, out=tmp_path / "none.jsonl", progress=False, cache=cache, history="none"
        )
    finally:
        system.close()
    assert own.row("conv-1#2").answer == "Borlan's revenue in fiscal 2022 was $6.4 billion."
    assert none.row("conv-1#2").answer == "Averix's revenue in fiscal 2023 was $4.2 billion."
