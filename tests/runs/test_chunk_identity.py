"""A chunk is what it says it is: content-addressed ids, a table fingerprint, and every run read
against the table it was made on (a wrong table refused, a foreign run checked by the text its
hits carry, or called unbound)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cache import RequestCache
from assay.cli import app
from assay.corpus import ChunkSettings, chunk_document, load_chunks
from assay.dataset import load_dataset
from assay.errors import DataError
from assay.runner import run_system
from assay.runs import load_run
from assay.runs.corpus import bind_run
from assay.score import score_retrieval

WORDS = [
    "the",
    "company",
    "reported",
    "results",
    "for",
    "operations",
    "in",
    "the",
    "segment",
    "during",
    "fiscal",
    "year",
]


def _pages(doc: int) -> list[str]:
    """Three pages of prose, each sentence unique (its numbers), so a quote names one place."""
    pages = []
    for p in range(1, 4):
        lines = []
        for s in range(40):
            filler = " ".join(WORDS[(s + j) % len(WORDS)] for j in range(6))
            lines.append(f"Item {doc}.{p}.{s}: {filler} with revenue {doc}{p}{s:02d} million.")
        pages.append("\n".join(lines))
    return pages


DOCS = {f"doc{d}": _pages(d) for d in range(1, 4)}


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _table(d: Path, name: str, target: int) -> Path:
    settings = ChunkSettings(target_tokens=target, max_tokens=target + 20, overlap_tokens=10)
    rows = [c.to_row() for doc, pages in DOCS.items() for c in chunk_document(doc, pages, settings)]
    return _write(d / f"chunks-{name}.jsonl", rows)


def _dataset(d: Path) -> Path:
    rows = []
    for i, (doc, p, s) in enumerate([(1, 1, 3), (1, 2, 30), (2, 3, 11), (3, 1, 25), (3, 3, 39)]):
        quote = DOCS[f"doc{doc}"][p - 1].splitlines()[s]
        rows.append(
            {
                "id": f"e{i}",
                "query": quote.split(":")[0].lower() + " revenue " + quote.split()[-2],
                "category": "lookup",
                "evidence_paths": [[[{"doc": f"doc{doc}", "page": p, "quote": quote}]]],
            }
        )
    return _write(d / "golden.jsonl", rows)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The two chunkings and a BM25 run on each (made once: the runs record their tables)."""
    d = tmp_path_factory.mktemp("chunkings")
    small, large = _table(d, "small", 60), _table(d, "large", 200)
    out = {"small": small, "large": large}
    dataset = load_dataset(_dataset(d))
    for name in ("small", "large"):
        out[f"run_{name}"] = d / f"bm25-{name}.jsonl"
        run_system(
            dataset, "bm25", options={"chunks": out[name]}, k=3, out=out[f"run_{name}"],
            cache=RequestCache(enabled=False), progress=False,
        )  # fmt: skip
    return out


@pytest.fixture
def room(built: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    """The shared tables and runs, and a dataset of this test's own (its ledger beside it)."""
    return {**built, "dir": tmp_path, "ds": _dataset(tmp_path)}


def _invoke(*args: Any) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


def test_two_chunkings_of_the_same_documents_share_no_id_that_names_other_text(
    room: dict[str, Path],
) -> None:
    small, large = load_chunks(room["small"]), load_chunks(room["large"])
    positions = {c.chunk_id.split("~")[0] for c in small} & {
        c.chunk_id.split("~")[0] for c in large
    }
    assert len(positions) >= 9  # the same doc/page/n positions exist in both chunkings...
    for cid in set(small.by_id) & set(large.by_id):  # ...and an id both hold is one chunk
        assert small.by_id[cid].text == large.by_id[cid].text
    assert len(set(small.by_id) & set(large.by_id)) < len(positions)
    assert small.content_addressed and large.content_addressed
    assert small.fingerprint != large.fingerprint
    # the fingerprint is the chunks, not the file's bytes: keys reordered, one more field
    rows = [json.loads(x) for x in room["small"].read_text().splitlines()]
    again = _write(
        room["dir"] / "again.jsonl", [dict(sorted(r.items())) | {"note": "x"} for r in rows]
    )
    same = load_chunks(again)
    assert same.version != small.version and same.fingerprint == small.fingerprint


def test_a_chunk_whose_text_was_edited_after_it_was_made_is_refused(
    room: dict[str, Path],
) -> None:
    rows = [json.loads(x) for x in room["small"].read_text().splitlines()]
    rows[3]["text"] = rows[3]["text"].replace("revenue", "income", 1)
    bad = _write(room["dir"] / "edited.jsonl", rows)
    with pytest.raises(DataError) as exc:
        load_chunks(bad)
    p = exc.value.problems[0]
    assert (p.file, p.line, p.field) == (str(bad), 4, "content_hash")
    assert "edited after it was made" in p.message


def test_a_run_read_against_its_own_recorded_table_needs_no_chunks_flag(
    room: dict[str, Path],
) -> None:
    for name in ("small", "large"):
        run = load_run(room[f"run_{name}"])
        assert run.meta["chunks"]["fingerprint"] == load_chunks(room[name]).fingerprint
        res = _invoke("score", room["ds"], room[f"run_{name}"], "--k", 3, "-f", "json")
        explicit = _invoke(
            "score", room["ds"], room[f"run_{name}"], "--k", 3, "--chunks", room[name], "-f", "json"
        )
        assert res.exit_code == 0 and explicit.exit_code == 0, res.output + explicit.output
        got, want = json.loads(res.stdout), json.loads(explicit.stdout)
        assert got["overall"] == want["overall"]
        assert got["chunk_table"]["binding"] == "bound"
        assert got["chunk_table"]["fingerprint"] == load_chunks(room[name]).fingerprint


def test_a_table_given_by_hand_that_is_not_the_runs_is_refused_naming_both(
    room: dict[str, Path],
) -> None:
    small, large = load_chunks(room["small"]), load_chunks(room["large"])
    ds, run = room["ds"], room["run_large"]
    for cmd in (
        ["score", ds, run, "--chunks", room["small"]],
        ["check", ds, run, "--chunks", room["small"]],
        ["compare", ds, room["run_small"], run, "--cand-chunks", room["small"]],
        ["gate", ds, room["run_small"], run, "--cand-chunks", room["small"]],
    ):
        res = _invoke(*cmd, "--k", 3) if cmd[0] != "check" else _invoke(*cmd)
        out = " ".join(res.output.split())
        assert res.exit_code == 2, (cmd, res.output)
        assert large.fingerprint in out and small.fingerprint in out, out
        assert str(room["small"]) in out.replace(" ", "") or "chunks-small" in out
    assert not (room["dir"] / "golden.ledger.jsonl").exists()
    # overridden on purpose: scored, and the result says so (and names the flag)
    res = _invoke("score", ds, run, "--chunks", room["small"], "--allow-corpus-change", "--k", 3)
    assert res.exit_code == 0, res.output
    assert "as asked (--allow-corpus-change)" in " ".join(res.output.split())


def test_two_runs_on_two_chunkings_compare_each_on_its_own_table_without_the_flag_note(
    room: dict[str, Path],
) -> None:
    res = _invoke(
        "compare", room["ds"], room["run_small"], room["run_large"], "--k", 3,
        "--resamples", 200, "-f", "json",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    cmp = json.loads(res.stdout)
    notes = " ".join(cmp["notes"])
    assert "--allow-corpus-change" not in notes  # never passed, never claimed
    assert "each was read against its own chunk table" in notes
    ledger = [json.loads(x) for x in (room["dir"] / "golden.ledger.jsonl").read_text().splitlines()]
    tables = ledger[-1]["chunk_tables"]
    assert tables["baseline"]["binding"] == tables["candidate"]["binding"] == "bound"
    assert tables["baseline"]["fingerprint"] == load_chunks(room["small"]).fingerprint


def test_score_reads_the_recorded_table_so_a_label_on_a_vanished_chunk_is_named_stale(
    room: dict[str, Path],
) -> None:
    """Without --chunks, gold naming a chunk the run's table no longer has scored 0.000."""
    e0 = json.loads(room["ds"].read_text().splitlines()[0])
    e0["evidence_paths"] = [[["doc1/1/1~00000000"]]]
    gone = _write(room["dir"] / "ids.jsonl", [e0])
    res = _invoke("score", gone, room["run_small"], "--k", 3, "--allow-missing")
    assert res.exit_code == 2, res.output
    assert "doc1/1/1~00000000" in res.output


def _foreign(room: dict[str, Path], name: str, with_text: bool) -> Path:
    """A user's own run file made on chunking `name`: no metadata, maybe the hits' text."""
    table = load_chunks(room[name])
    rows = []
    for r in load_run(room[f"run_{name}"]).rows:
        hits = [
            {"chunk_id": h.chunk_id, "score": h.score}
            | ({"text": table.by_id[h.chunk_id].text} if with_text else {})
            for h in r.retrieved
        ]
        rows.append({"id": r.id, "retrieved": hits})
    return _write(room["dir"] / f"foreign-{name}-{with_text}.jsonl", rows)


def test_a_foreign_run_with_chunk_text_is_checked_by_content(room: dict[str, Path]) -> None:
    run = load_run(_foreign(room, "small", True))
    assert bind_run(run, given=room["small"]).binding == "checked"
    # the same ids read against a table whose text differs under them: refused
    rows = [json.loads(x) for x in room["small"].read_text().splitlines()]
    for r in rows:  # another parse: same ids (written by an old tool), other text
        r["text"] = r["text"].replace("million", "thousand")
        del r["content_hash"]
    other = _write(room["dir"] / "reparsed.jsonl", rows)
    with pytest.raises(DataError) as exc:
        bind_run(run, given=other)
    assert "hold other content than" in exc.value.problems[0].message
    res = _invoke("score", room["ds"], run.path, "--chunks", other, "--k", 3)
    assert res.exit_code == 2 and "another chunking or parse" in " ".join(res.output.split())


def test_a_foreign_run_without_text_is_scored_and_called_unbound(room: dict[str, Path]) -> None:
    path = _foreign(room, "small", False)
    res = _invoke("score", room["ds"], path, "--chunks", room["small"], "--k", 3, "-f", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["chunk_table"]["binding"] == "unbound"
    table = _invoke("score", room["ds"], path, "--chunks", room["small"], "--k", 3)
    assert "is unbound" in " ".join(table.output.split())
    # and the ledger records it
    res = _invoke(
        "compare", room["ds"], room["run_small"], path, "--k", 3, "--chunks", room["small"],
        "--resamples", 100,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    rec = json.loads((room["dir"] / "golden.ledger.jsonl").read_text().splitlines()[-1])
    assert rec["chunk_tables"]["candidate"]["binding"] == "unbound"


def test_a_table_written_before_content_hashes_still_reads_and_says_so(
    room: dict[str, Path],
) -> None:
    rows = [json.loads(x) for x in room["small"].read_text().splitlines()]
    for r in rows:
        del r["content_hash"]
        r["chunk_id"] = r["chunk_id"].split("~")[0]
    old = _write(room["dir"] / "old.jsonl", rows)
    table = load_chunks(old)
    assert not table.content_addressed
    note = table.unaddressed_note()
    assert note is not None and "carries no content hashes" in note
    run = _write(
        room["dir"] / "old-run.jsonl",
        [{"id": f"e{i}", "retrieved": [rows[i]["chunk_id"]]} for i in range(5)],
    )
    scores = score_retrieval(load_dataset(room["ds"]), load_run(run), chunks=table, k=3)
    assert any("carries no content hashes" in n for n in scores.notes())
