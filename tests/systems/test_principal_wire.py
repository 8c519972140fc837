"""Every adapter passes the entry's principal to the system, as it passes `as_of`: in process,
over HTTP (the ``principal`` field of the request) and to a system in another interpreter
(``--python``). The request cache keys on the principal, so an insider's cached answer is never
served to an outsider."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from assay.cache import RequestCache
from assay.dataset import Entry, Principal
from assay.runner import run_system
from assay.systems import load_system

ASK = "What purchase price does Project Falcon propose?"
TEAM = {"role": "deal_team", "groups": ["deal:ACME", "board:ACME"], "clearance": "internal"}
OUTSIDER = {"role": "outsider", "clearance": "public"}
INSIDER = Entry.model_validate({"id": "ins", "query": ASK, "category": "policy", "principal": TEAM})
OUTSIDE = Entry.model_validate(
    {"id": "out", "query": ASK, "category": "policy", "principal": OUTSIDER}
)
PUBLIC = Entry.model_validate({"id": "pub", "query": ASK, "category": "policy"})
SECRET = "The purchase price is $742 million."
REFUSAL = "I can't share this: it is restricted."


def _reply_for(principal: dict[str, Any] | None) -> dict[str, Any]:
    """What a well-behaved system answers: the deal room only to the deal team."""
    if principal is not None and "deal:ACME" in principal["groups"]:
        return {"hits": [{"chunk_id": "deal/1/0", "score": 1.0}], "answer": SECRET}
    return {"hits": [{"chunk_id": "pub/1/0", "score": 0.5}], "answer": REFUSAL}


# ------------------------------------------------------------------------------------ HTTP


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            out = json.dumps(_reply_for(body["principal"])).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(out)

        def log_message(self, *args: Any) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/retrieve", seen
    srv.shutdown()
    srv.server_close()


def test_http_sends_the_principal_on_the_wire(server: tuple[str, list[dict[str, Any]]]) -> None:
    url, seen = server
    run = run_system(
        [INSIDER, OUTSIDE, PUBLIC], load_system(url), k=1, workers=1,
        cache=RequestCache(enabled=False), progress=False,
    )  # fmt: skip
    by_query = {json.dumps(b["principal"], sort_keys=True): b for b in seen}
    assert set(by_query) == {
        json.dumps({"role": "deal_team", "groups": ["board:ACME", "deal:ACME"],
                    "clearance": "internal"}, sort_keys=True),
        json.dumps({"role": "outsider", "groups": [], "clearance": "public"}, sort_keys=True),
        "null",
    }  # fmt: skip
    assert all(set(b) == {"query", "as_of", "k", "principal"} for b in seen)
    assert run.row("ins").answer == SECRET
    assert run.row("out").answer == REFUSAL and run.row("pub").answer == REFUSAL


def test_an_insiders_cached_reply_is_never_served_to_an_outsider(
    server: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    url, seen = server
    cache = RequestCache(tmp_path / "cache.sqlite")
    first = run_system([INSIDER], load_system(url), k=1, cache=cache, progress=False)
    assert first.row("ins").answer == SECRET and len(seen) == 1
    # the same query, as_of and k, asked by an outsider: a cache miss, called and refused
    second = run_system([OUTSIDE, INSIDER], load_system(url), k=1, cache=cache, progress=False)
    assert second.row("out").answer == REFUSAL
    assert [h.chunk_id for h in second.row("out").retrieved] == ["pub/1/0"]
    assert second.row("ins").answer == SECRET
    assert len(seen) == 2 and seen[1]["principal"]["role"] == "outsider"
    assert second.meta["cache_hits"] == 1
    # a principal with the same role but other groups is another principal
    other = OUTSIDE.model_copy(
        update={"id": "o2", "principal": Principal(role="deal_team", clearance="internal")}
    )
    third = run_system([other], load_system(url), k=1, cache=cache, progress=False)
    assert third.row("o2").answer == REFUSAL and len(seen) == 3


# ------------------------------------------------------------------ in process, by import path


class _Aware:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def retrieve(self, query: str, *, as_of: Any, k: int, principal: Any = None) -> list[Any]:
        self.calls.append(principal)
        wire = None if principal is None else {"groups": list(principal.groups)}
        hits: list[Any] = _reply_for(wire)["hits"]
        return hits

    def answer(self, query: str, *, as_of: Any, hits: list[Any], principal: Any = None) -> str:
        wire = None if principal is None else {"groups": list(principal.groups)}
        out: str = _reply_for(wire)["answer"]
        return out


def test_in_process_cache_keys_on_the_principal(tmp_path: Path) -> None:
    cache = RequestCache(tmp_path / "cache.sqlite")
    sys_ = _Aware()
    run_system([INSIDER], sys_, k=1, cache=cache, progress=False)
    run = run_system([OUTSIDE, INSIDER], sys_, k=1, cache=cache, progress=False)
    assert run.row("out").answer == REFUSAL and run.row("ins").answer == SECRET
    assert [p.role for p in sys_.calls] == ["deal_team", "outsider"]


# ------------------------------------------------------------------ another interpreter


def _interpreter(tmp_path: Path) -> Path:
    where = tmp_path / "elsewhere"
    where.mkdir()
    (where / "principal_sys_demo.py").write_text(
        textwrap.dedent(
            """
            class Aware:
                def retrieve(self, query, *, as_of, k, principal=None):
                    inside = principal is not None and "deal:ACME" in principal.groups
                    who = "none" if principal is None else principal.role + ":" + principal.clearance
                    return [{"chunk_id": ("deal/1/0" if inside else "pub/1/0") + "#" + who,
                             "score": 1.0}]

                def answer(self, query, *, as_of, hits, principal=None):
                    inside = principal is not None and "deal:ACME" in principal.groups
                    return "The purchase price is $742 million." if inside else "I can't share this."

            class Blind:
                def retrieve(self, query, *, as_of, k):
                    return [{"chunk_id": "deal/1/0", "score": 1.0}]
            """
        )
    )
    wrapper = tmp_path / "python-elsewhere"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={where} exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    assert str(where) not in os.environ.get("PYTHONPATH", "")
    return wrapper


def _isolated(python: Path, attr: str) -> Callable[[], Any]:
    return lambda: load_system(f"principal_sys_demo:{attr}", python=python)


def test_a_system_in_another_interpreter_gets_the_principal(tmp_path: Path) -> None:
    python = _interpreter(tmp_path)
    cache = RequestCache(tmp_path / "cache.sqlite")
    aware = _isolated(python, "Aware")
    first = run_system([INSIDER, PUBLIC], aware(), k=1, cache=cache, progress=False)
    assert [h.chunk_id for h in first.row("ins").retrieved] == ["deal/1/0#deal_team:internal"]
    assert first.row("ins").answer == "The purchase price is $742 million."
    assert [h.chunk_id for h in first.row("pub").retrieved] == ["pub/1/0#none"]
    second = run_system([OUTSIDE, INSIDER], aware(), k=1, cache=cache, progress=False)
    assert [h.chunk_id for h in second.row("out").retrieved] == ["pub/1/0#outsider:public"]
    assert second.row("out").answer == "I can't share this."
    assert second.meta["cache_hits"] == 1
    system = aware()
    try:
        assert system.remote_keywords["principal"] == {"retrieve", "answer"}
        assert system.remote_keywords["history"] == frozenset()
    finally:
        system.close()
    # a system that does not name the keyword is called without it (measured, not trusted)
    blind = _isolated(python, "Blind")()
    try:
        assert blind.remote_keywords["principal"] == frozenset()
        run = run_system([OUTSIDE], blind, k=1, cache=RequestCache(enabled=False), progress=False)
        assert [h.chunk_id for h in run.row("out").retrieved] == ["deal/1/0"]
    finally:
        blind.close()
