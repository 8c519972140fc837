"""The facts answerer: XBRL company facts and statement facts, on the room and by hand; the
answerers on the command line (the LLM one against a stub server on 127.0.0.1)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli
import assay.cli._register
from assay.cache import RequestCache
from assay.corpus import build_corpus, load_chunks
from assay.dataset import Dataset, Entry, load_dataset
from assay.judge.checking import check_rows
from assay.runner import run_system
from assay.runs import load_run
from assay.synth.generate import generate_room
from assay.systems.filings import build
from assay.systems.filings.facts_answer import FactsAnswerer, XbrlFacts

from .conftest import write_corpus


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("facts-room")
    generate_room(base / "room", formats=("html",), seed=11, companies=4, years=2)
    build_corpus(base / "room", meta=base / "room" / "documents.jsonl", out_dir=base / "corpus")
    return base


def test_facts_answerer_answers_the_rooms_numeric_lookups(room: Path) -> None:
    ds = load_dataset(room / "room" / "golden.jsonl")
    lookups = Dataset([e for e in ds.entries if e.category == "numeric_lookup"])
    system = build(
        room / "corpus", mode="full", ranker="bm25", rerank=False, answerer="facts",
        xbrl=room / "room" / "xbrl",
    )  # fmt: skip
    run = run_system(lookups, system, k=5, cache=RequestCache(enabled=False), progress=False)
    rows, _ = check_rows(
        lookups, run, chunks=load_chunks(room / "corpus" / "chunks.jsonl"),
        checks="answer_correct,numbers_verified",
    )  # fmt: skip
    correct = sum(bool(r["answer_correct"]) for r in rows) / len(rows)
    assert len(rows) >= 40 and correct >= 0.9, correct
    assert sum(bool(r["numbers_verified"]) for r in rows) / len(rows) >= 0.9
    routes = {run.row(e.id).extra["trace"]["answer_route"]["route"] for e in lookups.entries}
    assert "xbrl" in routes
    # the extractive answerer quotes rows and sentences: fewer right answers
    plain = build(room / "corpus", mode="full", ranker="bm25", rerank=False,
                  answerer="extractive")  # fmt: skip
    run2 = run_system(lookups, plain, k=5, cache=RequestCache(enabled=False), progress=False)
    rows2, _ = check_rows(lookups, run2, checks="answer_correct")
    assert sum(bool(r["answer_correct"]) for r in rows2) / len(rows2) < correct


ACME_FACTS = {
    "cik": 1,
    "entityName": "Acme Corp",
    "facts": {
        "us-gaap": {
            "Revenues": {
                "label": "Net sales",
                "description": "net sales",
                "units": {
                    "USD": [
                        {"start": "2023-01-01", "end": "2023-12-31", "val": 1200000000,
                         "fy": 2023, "fp": "FY", "form": "10-K", "filed": "2024-02-20"},
                        {"start": "2023-01-01", "end": "2023-12-31", "val": 1150000000,
                         "fy": 2023, "fp": "FY", "form": "10-K/A", "filed": "2024-09-10"},
                    ]
                },
            }
        }
    },
}  # fmt: skip


@pytest.fixture
def acme(tmp_path: Path) -> tuple[Path, Path]:
    corpus = write_corpus(tmp_path / "corpus")
    xbrl = tmp_path / "xbrl"
    xbrl.mkdir()
    (xbrl / "companyfacts-ACME.json").write_text(json.dumps(ACME_FACTS), encoding="utf-8")
    return corpus, xbrl


def test_xbrl_lookup_takes_the_figure_filed_by_as_of_and_cites_its_filing(
    acme: tuple[Path, Path],
) -> None:
    import datetime as dt

    corpus, xbrl = acme
    system = build(corpus, mode="bm25", answerer="facts", xbrl=xbrl)
    assert isinstance(system.answerer, FactsAnswerer)
    before = system.answer("Acme FY2023 net sales", as_of=dt.date(2024, 3, 1), hits=[])
    after = system.answer("Acme FY2023 net sales", as_of=None, hits=[])
    assert "$1,200 million" in before["answer"] and before["citations"] == ["acme-2023-10k/1/0"]
    assert "$1,150 million" in after["answer"] and after["citations"] == ["acme-2023-10ka-r/1/0"]
    assert after["trace"]["answer_route"]["form"] == "10-K/A"
    # a question no fact answers goes to the extractive answerer
    other = system.answer("Who are Acme's directors?", as_of=None, hits=["acme-2023-10ka-p3/1/0"])
    assert "trace" not in other
    assert len(XbrlFacts.load(xbrl)) == 2


class _Stub:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 that cites the first excerpt."""

    def __init__(self) -> None:
        self.calls = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.calls += 1
                user = body["messages"][-1]["content"]
                first = user.split("[", 1)[1].split("]", 1)[0]
                reply = {
                    "choices": [{"message": {"content": f"Net income was $90 million [{first}]."}}],
                    "usage": {"prompt_tokens": 400, "completion_tokens": 12},
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def stub() -> Iterator[_Stub]:
    s = _Stub()
    yield s
    s.server.shutdown()
    s.server.server_close()


def _golden(path: Path) -> Path:
    e = Entry.model_validate(
        {"id": "q1", "query": "Acme net income 2023", "category": "lookup",
         "reference_answer": "$90 million", "evidence_paths": [[["acme-2023-10k/1/0"]]]}
    )  # fmt: skip
    path.write_text(json.dumps(e.to_json_dict()) + "\n", encoding="utf-8")
    return path


def test_cli_llm_answerer_is_cached_and_records_cost(
    tmp_path: Path, stub: _Stub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    corpus = write_corpus(tmp_path / "corpus")
    golden = _golden(tmp_path / "golden.jsonl")
    runner = CliRunner()
    base = ["run", str(golden), "--system", "filings", "--corpus", str(corpus), "--mode", "bm25",
            "--answerer", "llm", "--llm-base-url", stub.url, "--llm-model", "stub-1",
            "--llm-price-in", "2", "--llm-price-out", "8", "--no-cache"]  # fmt: skip
    res = runner.invoke(assay.cli.app, [*base, "--out", str(tmp_path / "a.jsonl")])
    assert res.exit_code == 0, res.output
    row = load_run(tmp_path / "a.jsonl").row("q1")
    assert row.answer is not None and "$90 million" in row.answer and row.citations
    cost = row.extra["cost"]
    assert (cost["model"], cost["prompt_tokens"], cost["completion_tokens"]) == ("stub-1", 400, 12)
    assert cost["usd"] == pytest.approx((400 * 2 + 12 * 8) / 1e6) and cost["cached"] is False
    assert stub.calls == 1
    # the same prompt and model again: served by the chat cache, the cost says so
    res = runner.invoke(assay.cli.app, [*base, "--out", str(tmp_path / "b.jsonl")])
    assert res.exit_code == 0, res.output
    assert stub.calls == 1
    assert load_run(tmp_path / "b.jsonl").row("q1").extra["cost"]["cached"] is True
    # another model is another prompt identity: a new call
    other = ["stub-2" if a == "stub-1" else a for a in base]
    res = runner.invoke(assay.cli.app, [*other, "--out", str(tmp_path / "c.jsonl")])
    assert res.exit_code == 0, res.output
    assert stub.calls == 2


def test_cli_facts_answerer_and_bad_answerer(
    tmp_path: Path, acme: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    corpus, xbrl = acme
    golden = _golden(tmp_path / "golden.jsonl")
    golden.write_text(golden.read_text().replace("net income", "net sales"), encoding="utf-8")
    runner = CliRunner()
    out = tmp_path / "run.jsonl"
    res = runner.invoke(
        assay.cli.app,
        ["run", str(golden), "--system", "filings", "--corpus", str(corpus), "--mode", "bm25",
         "--answerer", "facts", "--xbrl", str(xbrl), "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "$1,150 million" in (load_run(out).row("q1").answer or "")
    res = runner.invoke(
        assay.cli.app,
        ["run", str(golden), "--system", "filings", "--corpus", str(corpus),
         "--answerer", "oracle", "--out", str(tmp_path / "x.jsonl")],
    )  # fmt: skip
    assert res.exit_code == 2 and "extractive, facts, llm" in res.output
    assert not (tmp_path / "x.jsonl").exists()
