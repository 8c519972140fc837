"""Text-to-SQL systems: the template baseline (measured per category, as docs/sql.md says), a
Python import path, an HTTP endpoint and an OpenAI-compatible model behind local stub servers."""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.sql.conftest import sql_run

from assay.dataset import Dataset
from assay.errors import UsageError
from assay.judge import check_run
from assay.sql import SQL_CHECKS
from assay.sql.systems import load_sql_system
from assay.systems import SystemCallError

ROOT = Path(__file__).resolve().parents[2]


def _subset(golden: Dataset, n_per_category: int = 2) -> Dataset:
    seen: dict[str, int] = {}
    keep = []
    for e in golden.entries:
        if seen.get(e.category, 0) < n_per_category:
            seen[e.category] = seen.get(e.category, 0) + 1
            keep.append(e)
    return Dataset(keep, path=golden.path)


def test_template_baseline_matches_the_docs(golden: Dataset) -> None:
    run = sql_run(golden, "template")
    assert len(run) == len(golden.entries)
    declined = [r.id for r in run.rows if r.extra["sql"] is None]
    assert sorted(declined) == sorted(e.id for e in golden.entries if e.category == "unanswerable")
    report = check_run(golden, run, checks=SQL_CHECKS)  # what `assay sql check` runs
    text = (ROOT / "docs" / "sql.md").read_text(encoding="utf-8")
    block = text.split("<!-- baseline:start -->")[1].split("<!-- baseline:end -->")[0]
    documented = {}
    for line in block.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        documented[cells[0]] = cells[1:]
    measured = {}
    for cat, cells in report.rates.items():
        if cat == "unanswerable":
            continue
        em, ts = cells["exec_match"], cells["test_suite_match"]
        measured[cat] = [str(em.n), _fmt(em), _fmt(ts)]
    assert documented == measured
    for cat, cells in report.rates.items():
        for c in ("sql_valid", "sql_safe", "sql_refusal_ok"):
            assert cells[c].rate in (1.0, None), (cat, c)


def _fmt(cell: Any) -> str:
    iv = cell.interval
    return f"{iv.value:.2f} [{iv.low:.2f}, {iv.high:.2f}]"


def test_rows_carry_the_sql(golden: Dataset) -> None:
    ds = _subset(golden)
    run = sql_run(ds, "template")
    row = run.row("sql:filings_by_form:AVER")
    assert row.extra["dialect"] == "duckdb" and row.answer == row.extra["sql"]
    assert row.extra["sql"].startswith("SELECT")
    refused = next(r for r in run.rows if r.id.startswith("sql:credit_rating"))
    assert refused.extra["sql"] is None and "cannot answer" in (refused.answer or "")
    assert run.meta["system"]["spec"] == "sql-template" and run.meta["kind"] == "sql"
    assert refused.retrieved is None and "retrieved" not in refused.to_dict()  # no fake []


def test_python_import_path(
    golden: Dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold = {
        e.query: (e.sql.queries[0] if e.sql and e.sql.queries else None) for e in golden.entries
    }
    (tmp_path / "my_sql_system.py").write_text(
        "SEEN = []\n"
        "GOLD = " + repr(gold) + "\n"
        "def answer(question, *, schema, as_of):\n"
        "    SEEN.append((question, schema.name, as_of))\n"
        "    return GOLD[question]\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = _subset(golden)
    run = sql_run(ds, "my_sql_system:answer")
    report = check_run(ds, run, checks=SQL_CHECKS, n_boot=50)
    assert report.rates["overall"]["exec_match"].rate == 1.0
    assert report.rates["overall"]["sql_refusal_ok"].rate == 1.0
    seen = sys.modules["my_sql_system"].SEEN
    assert {s[1] for s in seen} == {"warehouse"}
    with_dates = [s for s in seen if s[2] is not None]
    assert with_dates and all(hasattr(s[2], "isoformat") for s in with_dates)  # a date object
    with pytest.raises(UsageError, match="cannot import"):
        load_sql_system("no_such_module_xyz:answer")
    with pytest.raises(UsageError, match="unknown SQL system"):
        load_sql_system("nonsense")


@pytest.fixture
def stub_server() -> Iterator[Callable[[Callable[[str, dict[str, Any]], Any]], str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(reply: Callable[[str, dict[str, Any]], Any]) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, payload = reply(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def test_http_system(golden: Dataset, stub_server: Any) -> None:
    ds = _subset(golden)
    gold = {e.query: (e.sql.queries[0] if e.sql and e.sql.queries else None) for e in ds.entries}
    seen: list[dict[str, Any]] = []

    def reply(path: str, body: dict[str, Any]) -> Any:
        seen.append(body)
        return 200, {"sql": gold[body["question"]], "dialect": "duckdb"}

    url = stub_server(reply) + "/sql"
    run = sql_run(ds, url, timeout=5.0)
    rates = check_run(ds, run, checks=SQL_CHECKS, n_boot=50).rates
    assert rates["overall"]["exec_match"].rate == 1.0
    assert {t["name"] for t in seen[0]["schema"]["tables"]} >= {"companies", "facts", "customers"}
    assert seen[0]["schema"]["glossary"]["version"] == "2"
    dated = [b["as_of"] for b in seen if b["as_of"]]
    assert dated and all(re.fullmatch(r"\d{4}-\d\d-\d\d", d) for d in dated)

    broken = stub_server(lambda p, b: (500, {"error": "boom"})) + "/sql"
    with pytest.raises(SystemCallError, match=r"entry sql:\S+: .*answered HTTP 500"):
        sql_run(ds, broken)


def test_openai_compatible_system_is_cached(
    golden: Dataset, stub_server: Any, tmp_path: Path
) -> None:
    ds = _subset(golden)
    gold = {e.query: (e.sql.queries[0] if e.sql and e.sql.queries else None) for e in ds.entries}
    calls: list[dict[str, Any]] = []

    def reply(path: str, body: dict[str, Any]) -> Any:
        calls.append(body)
        assert path == "/v1/chat/completions"
        user = body["messages"][-1]["content"]
        question = user.rsplit("Question: ", 1)[1].strip()
        sql = gold[question]
        content = "NO_ANSWER" if sql is None else f"Here:\n```sql\n{sql}\n```"
        return 200, {"choices": [{"message": {"role": "assistant", "content": content}}]}

    base = stub_server(reply) + "/v1"
    opts = {"base_url": base, "cache_dir": tmp_path / "cache"}
    first = sql_run(ds, load_sql_system("openai:stub-model", **opts))
    assert len(calls) == len(ds.entries)
    assert "GLOSSARY version 2" in calls[0]["messages"][-1]["content"]
    report = check_run(ds, first, checks=SQL_CHECKS, n_boot=50)
    assert report.rates["overall"]["exec_match"].rate == 1.0
    assert report.rates["overall"]["sql_refusal_ok"].rate == 1.0
    second = sql_run(ds, load_sql_system("openai:stub-model", **opts))
    assert len(calls) == len(ds.entries)  # every reply came from the request cache
    assert [r.extra for r in second.rows] == [r.extra for r in first.rows]
