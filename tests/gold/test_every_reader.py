"""Every gold-reading command reads gold the same way: --level page and --skip-missing on each,
and each unresolved anchor is named by its true cause (document absent, page beyond the
document, quote longer than this chunking can hold, quote not in the page's text, chunk text
changed). A page beyond its document's end is stale gold at page level too. Quotes no one chunk
holds are one message naming their entries in retrieval commands (validate lists each), and no
problem for answer checks, which read them at page level by default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app
from assay.corpus import Chunk, ChunkTable
from assay.dataset import Anchor, Entry
from assay.gold import GoldResolver, resolve_gold

PAGE1 = (
    "Net revenue for fiscal 2023 was 4,210 million dollars, up 7 percent from the prior year, "
    "driven by higher volumes in the industrial segment and favourable pricing across regions."
)
PAGE2 = "Operating margin improved to 12.4 percent as input costs eased in the second half."


def _chunks() -> list[dict[str, Any]]:
    words = PAGE1.split()
    thirds = [" ".join(words[i : i + 10]) for i in range(0, len(words), 10)]
    rows = [
        {"chunk_id": f"d/1/{i}", "doc_id": "d", "page": 1, "text": t} for i, t in enumerate(thirds)
    ]
    rows.append({"chunk_id": "d/2/0", "doc_id": "d", "page": 2, "text": PAGE2})
    return rows


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _entry(eid: str, doc: str, page: int, quote: str) -> dict[str, Any]:
    return {
        "id": eid,
        "query": f"question {eid}",
        "category": "lookup",
        "reference_answer": "Operating margin was 12.4 percent.",
        "evidence_paths": [[[{"doc": doc, "page": page, "quote": quote}]]],
    }


TABLE = ChunkTable([Chunk.from_dict(r) for r in _chunks()])


def test_each_cause_is_named() -> None:
    r = GoldResolver(TABLE)
    long = r.resolve(Anchor(doc="d", page=1, quote=PAGE1))
    assert long.kind == "quote_too_long"
    assert long.message.startswith("quote longer than this chunking can hold")
    assert "--level page" in long.message
    beyond = r.resolve(Anchor(doc="d", page=9, quote="net revenue"))
    assert beyond.kind == "page_beyond_doc"
    assert beyond.message.startswith("page beyond the document: the anchor names page 9 of 'd'")
    assert "last page in the chunk table is 2" in beyond.message
    absent = r.resolve(Anchor(doc="zz", page=1, quote="net revenue"))
    assert absent.kind == "missing_doc" and absent.message.startswith("document absent")
    wrong = r.resolve(Anchor(doc="d", page=2, quote="net revenue for fiscal 2023 was 4,210"))
    assert wrong.kind == "unmatched_anchor" and "the quote is not in its text" in wrong.message
    changed = r.resolve("d/2/0", hashes={"d/2/0": "0" * 16})
    assert changed.kind == "changed_chunk" and "changed since it was labelled" in changed.message
    # at page level the long quote is no problem; the page beyond the document still is
    page = GoldResolver(TABLE, level="page")
    assert page.resolve(Anchor(doc="d", page=1, quote=PAGE1)).keys == ("d#1",)
    assert page.resolve(Anchor(doc="d", page=9, quote="net revenue")).kind == "page_beyond_doc"


def test_a_page_beyond_its_document_is_stale_at_page_level() -> None:
    """It used to be keyed d#9, a key no hit can match: a retrieval miss, exit 0."""
    entries = [Entry.model_validate(_entry("beyond", "d", 9, "net revenue"))]
    with pytest.raises(Exception, match="page beyond the document"):
        resolve_gold(entries, chunks=TABLE, level="page")
    gold = resolve_gold(entries, chunks=TABLE, level="page", skip_stale=True)
    assert gold.excluded_kinds == {"beyond": "page_beyond_doc"}


@pytest.fixture
def case(tmp_path: Path) -> dict[str, Path]:
    chunks = _write(tmp_path / "chunks.jsonl", _chunks())
    rows = [
        _entry("long", "d", 1, PAGE1),  # a whole-page quote: only the page level can score it
        _entry("ok", "d", 2, "operating margin improved to 12.4 percent"),
        _entry("beyond", "d", 9, "net revenue"),  # stale at both levels
    ]
    ds = _write(tmp_path / "golden.jsonl", rows)
    hits = {"long": ["d/1/1", "d/2/0"], "ok": ["d/2/0"], "beyond": ["d/1/0"]}
    base = _write(
        tmp_path / "base.jsonl",
        [{"id": k, "retrieved": v, "answer": "12.4 percent"} for k, v in hits.items()],
    )
    cand = _write(
        tmp_path / "cand.jsonl",
        [{"id": k, "retrieved": v[::-1], "answer": "12.4 percent"} for k, v in hits.items()],
    )
    return {"chunks": chunks, "ds": ds, "base": base, "cand": cand, "dir": tmp_path}


def _logs_db(case: dict[str, Path]) -> Path:
    log = _write(
        case["dir"] / "log.jsonl",
        [
            {"ts": "2026-10-03T14:05:11Z", "query": f"question {eid}", "retrieved": hits}
            for eid, hits in (("long", ["d/1/1"]), ("ok", ["d/2/0"]), ("beyond", ["d/1/0"]))
        ],
    )
    db = case["dir"] / "logs.db"
    res = CliRunner().invoke(app, ["logs", "ingest", str(log), "--db", str(db)])
    assert res.exit_code == 0, res.output
    return db


COMMANDS = [
    "validate",
    "score",
    "compare",
    "gate",
    "check",
    "attribute",
    "export",
    "report",
    "trec export",
    "logs report",
]


def _args(cmd: str, case: dict[str, Path]) -> list[str]:
    ds, base, cand, chunks, d = case["ds"], case["base"], case["cand"], case["chunks"], case["dir"]
    c = ["--chunks", str(chunks)]
    if cmd == "logs report":
        return ["logs", "report", str(_logs_db(case)), "--golden", str(ds), *c]
    return {
        "validate": ["validate", str(ds), *c],
        "score": ["score", str(ds), str(base), *c, "--k", "2"],
        "compare": ["compare", str(ds), str(base), str(cand), *c, "--k", "2", "--no-record"],
        "gate": ["gate", str(ds), str(base), str(cand), *c, "--k", "2", "--no-record"],
        "check": ["check", str(ds), str(base), *c],
        "attribute": ["attribute", str(ds), str(base), *c, "-k", "2"],
        "export": ["export", str(ds), str(base), str(cand), *c, "--out", str(d / "b.json")],
        "report": ["report", str(ds), str(base), *c, "--out", str(d / "site")],
        "trec export": ["trec", "export", str(ds), *c, "--qrels", str(d / "q.qrels")],
    }[cmd]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_gold_reading_command_takes_level_and_skip_missing(
    cmd: str, case: dict[str, Path]
) -> None:
    args = _args(cmd, case)
    # without either option, stale gold stops the command and is named by its cause
    res = CliRunner().invoke(app, args)
    expected = 1 if cmd == "validate" else 2
    assert res.exit_code == expected, res.output
    out = " ".join(res.output.split())
    assert "page beyond the document" in out, out
    if cmd == "validate":  # every anchor, with its figures
        assert "quote longer than this chunking can hold" in out, out
    elif cmd == "check":  # answer checks read the long quote at page level (--level auto)
        assert "quote" not in out.replace("page beyond", ""), out
    elif cmd != "attribute":  # retrieval: one message naming the entry, suggesting page level
        assert "1 entry has gold that resolves only at page level" in out, out
        assert "long (d page 1: 29-token quote" in out and "--level page" in out, out
    # --level page reads the long quote by its page; the page beyond its document is still stale
    res = CliRunner().invoke(app, [*args, "--level", "page"])
    assert res.exit_code == expected, res.output
    out = " ".join(res.output.split())
    assert "page beyond the document" in out and "quote longer" not in out, out
    assert "only at page level" not in out, out
    # --skip-missing leaves both out at chunk level, and says why
    res = CliRunner().invoke(app, [*args, "--skip-missing"])
    assert res.exit_code in (0, 1), res.output  # gate may fail on its merits
    # --level page --skip-missing scores the long quote and leaves out only the stale page
    res = CliRunner().invoke(app, [*args, "--level", "page", "--skip-missing"])
    assert res.exit_code in (0, 1), res.output


def test_skip_missing_says_why_entries_were_left_out(case: dict[str, Path]) -> None:
    args = _args("score", case)
    res = CliRunner().invoke(app, [*args, "--skip-missing"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "2 entries left out because their gold does not resolve on this chunk table" in out
    assert "1 page beyond the document" in out and "1 quote no one chunk holds" in out
    assert "--level page scores them" in out
    res = CliRunner().invoke(app, [*args, "--level", "page", "--skip-missing", "-f", "json"])
    body = json.loads(res.stdout)
    assert body["overall"]["n"] == 2 and list(body["excluded_stale_gold"]["entries"]) == ["beyond"]
    # validate --skip-missing: what scoring would leave out is listed, not a problem
    res = CliRunner().invoke(app, [*_args("validate", case), "--skip-missing", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.stdout)["skipped"]) == 2
    # compare says it in its notes
    res = CliRunner().invoke(app, [*_args("compare", case), "--skip-missing", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert any("left out" in n for n in json.loads(res.stdout)["notes"])


def test_trec_export_at_page_level_writes_pages(case: dict[str, Path]) -> None:
    d = case["dir"]
    args = [
        *_args("trec export", case),
        "--run",
        str(case["base"]),
        "--run-out",
        str(d / "run.trec"),
        "--level",
        "page",
        "--skip-missing",
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    qrels = (d / "q.qrels").read_text().split("\n")
    assert (
        "long 0 d#1 1" in qrels and "ok 0 d#2 1" in qrels and not any("beyond" in q for q in qrels)
    )
    run = (d / "run.trec").read_text().splitlines()
    assert run[:2] == ["long Q0 d#1 1 2 assay", "long Q0 d#2 2 1 assay"]
