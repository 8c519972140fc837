from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cache import RequestCache
from assay.chat import ChatClient
from assay.cli import app
from assay.corpus import Chunk, ChunkTable
from assay.dataset import Entry
from assay.errors import DataError, UsageError
from assay.stats.plan import plan_mcnemar
from assay.synth.gaps import copying, name_gaps, read_candidates, synth_questions

runner = CliRunner()

CHUNK = "Acme Corp total revenue was $5,000 million in fiscal 2023, up from $4,100 million."
ACME = ["Acme Corp", "ACME"]


def _entries(counts: dict[str, int]) -> list[Entry]:
    return [
        Entry(id=f"{c}-{i}", query=f"q {c} {i}", category=c)
        for c, n in counts.items()
        for i in range(n)
    ]


def _table() -> ChunkTable:
    rows = []
    for i, (tk, name, fy, text) in enumerate(
        [
            (
                "ACME",
                "Acme Corp",
                2023,
                "Total revenues were $5,000 million. Net income was $700 million.",
            ),
            (
                "BETA",
                "Beta Bank",
                2024,
                "Net interest income was $410 million; total deposits rose.",
            ),
            ("ACME", "Acme Corp", 2024, "Subscription and support revenue was $3,200 million."),
        ]
    ):
        rows.append(
            Chunk(
                f"d{i}/1/1",
                f"d{i}",
                text,
                [1],
                extra={"ticker": tk, "company": name, "fiscal_year": fy, "form": "10-K"},
            )
        )
    rows.append(Chunk("x/1/1", "x", "A chunk with no company metadata about revenue.", [1]))
    return ChunkTable(rows)


# -- gaps ----------------------------------------------------------------------------------


def test_gaps_hand_worked() -> None:
    ents = _entries({"lookup": 8, "compare": 2})
    # compare: (2 + x) / (10 + x) >= 0.5  ->  x >= 6; narrative is in traffic only: x/(10+x) >= 0.2 -> 2.5 -> 3
    gaps = name_gaps(ents, traffic_shares={"lookup": 2, "compare": 2, "narrative": 1})
    assert [(g.category, g.needed) for g in gaps] == [("compare", 4), ("narrative", 3)]
    gaps = name_gaps(ents, traffic_shares={"lookup": 0.5, "compare": 0.5})
    assert [(g.category, g.needed) for g in gaps] == [("compare", 6)]
    # a size: lookup needs 2 more, compare 8; compare's traffic shortfall (6) is smaller
    gaps = name_gaps(ents, traffic_shares={"lookup": 0.5, "compare": 0.5}, min_size=10)
    assert [(g.category, g.needed, len(g.reasons)) for g in gaps] == [
        ("compare", 8, 2),
        ("lookup", 2, 1),
    ]
    with pytest.raises(UsageError):
        name_gaps(ents)
    with pytest.raises(ValueError):
        name_gaps(ents, traffic_shares={"a": -1.0})


# -- the copying filter ------------------------------------------------------------------

KEEP = [
    "ACME FY23 total rev",  # shorthand
    "what was Acme Corp total revenue in FY23",  # "acme corp total revenue" is shared but names the company
    "how much did acme sell in 2023",
    "Acme Corp total revenue in fiscal 2023 vs 2022",  # "in fiscal 2023" is only 3 tokens
]
DROP = [
    ("was total revenue was $5,000 million?", "shares 'total revenue was 5000' with its source"),
    (
        "revenue up from 4100 million in fiscal 2023",
        "shares 'up from 4100 million' with its source",
    ),
    ("million fiscal revenue total 2023", "100% of its content words are in its source"),
]


@pytest.mark.parametrize("q", KEEP)
def test_copying_keeps(q: str) -> None:
    assert copying(q, CHUNK, ACME) is None


@pytest.mark.parametrize(("q", "why"), DROP)
def test_copying_drops(q: str, why: str) -> None:
    assert copying(q, CHUNK, ACME) == why


def test_copying_ignores_runs_of_function_words() -> None:
    assert copying("and what was the of it", "this was the of it all", []) is None
    assert copying("revenue in the year", "revenue in the year", [], min_content=5) is not None


# -- generation ----------------------------------------------------------------------------


def test_templates_only_for_gaps_and_reproducible() -> None:
    ents = _entries({"numeric_lookup": 8, "comparison": 2})
    shares = {"numeric_lookup": 0.5, "comparison": 0.3, "narrative": 0.2}
    a = synth_questions(ents, _table(), traffic_shares=shares, n=10, seed=3)
    b = synth_questions(ents, _table(), traffic_shares=shares, n=10, seed=3)
    c = synth_questions(ents, _table(), traffic_shares=shares, n=10, seed=4)
    assert [x.query for x in a.candidates] == [x.query for x in b.candidates]
    assert [x.query for x in a.candidates] != [x.query for x in c.candidates]
    assert {x.category for x in a.candidates} == {"comparison", "narrative"}
    assert len(a.candidates) == 10
    assert all(x.source_chunk_id != "x/1/1" for x in a.candidates)  # no company: not usable
    d = a.to_dict()
    assert d["n_candidates"] == 10 and d["n_survivors"] == len(a.entries)
    for e in a.entries:
        assert e.source is not None and e.source.value == "synthetic" and e.label_tier == "draft"
        assert e.evidence_paths == [[[e.metadata["source_chunk_id"]]]]


def test_unanswerable_drafts_carry_no_evidence_path() -> None:
    ents = _entries({"numeric_lookup": 8}) + [
        Entry(id=f"nd-{i}", query=f"not disclosed {i}", category="not_disclosed", answerable=False)
        for i in range(2)
    ]
    shares = {"numeric_lookup": 0.5, "unanswerable": 0.2, "not_disclosed": 0.3}
    rep = synth_questions(ents, _table(), traffic_shares=shares, min_size=12, n=24, seed=5)
    by_cat = Counter(e.category for e in rep.entries)
    assert by_cat["unanswerable"] and by_cat["not_disclosed"] and by_cat["numeric_lookup"]
    for e in rep.entries:
        if e.category == "numeric_lookup":
            assert e.is_answerable and e.evidence_paths == [[[e.metadata["source_chunk_id"]]]]
        else:  # worded from a chunk, but the chunk does not answer it
            assert e.answerable is False and e.evidence_paths == [] and not e.is_answerable
            assert e.behavior().value == "abstain" and e.metadata["source_chunk_id"]


def test_candidates_file_is_filtered_and_counted(tmp_path: Path) -> None:
    f = tmp_path / "cands.jsonl"
    rows: list[dict[str, Any]] = [
        {"query": "ACME FY23 top line", "source_chunk_id": "d0/1/1"},
        {"query": "net income was $700 million for acme?", "source_chunk_id": "d0/1/1"},
        {"query": "BETA NII FY24", "source_chunk_id": "d1/1/1", "category": "numeric_lookup"},
        {"query": "beta nii fy24", "source_chunk_id": "d1/1/1"},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rep = synth_questions([], _table(), candidates=read_candidates(f))
    assert [c.dropped is None for c in rep.candidates] == [True, False, True, False]
    assert rep.candidates[3].dropped == "duplicate of an earlier candidate"
    assert len(rep.survivors) == 2 and rep.candidates[1].line == 2


def test_candidates_file_errors_name_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "cands.jsonl"
    f.write_text('{"query": "ok", "source_chunk_id": "d0/1/1"}\n{"query": ""}\n')
    with pytest.raises(DataError) as exc:
        read_candidates(f)
    msg = str(exc.value)
    assert f"{f}:2: query" in msg and f"{f}:2: source_chunk_id" in msg
    f.write_text('{"query": "ok", "source_chunk_id": "nope"}\n')
    with pytest.raises(DataError) as exc:
        synth_questions([], _table(), candidates=read_candidates(f))
    assert f"{f}:1: source_chunk_id: 'nope' is not in the chunk table" in str(exc.value)


def test_llm_generator_goes_through_the_cache(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        passage = body["messages"][0]["content"]
        q = (
            "Total revenues were $5,000 million?"
            if "Total revenues" in passage
            else "NII FY24 for BETA"
        )
        return httpx.Response(200, json={"choices": [{"message": {"content": q + "\nextra"}}]})

    def client() -> ChatClient:
        return ChatClient(
            "http://llm.test/v1",
            "m",
            cache=RequestCache(tmp_path / "cache.sqlite", namespace="synth"),
            transport=httpx.MockTransport(handler),
        )

    ents = _entries({"numeric_lookup": 5})
    c1 = client()
    rep = synth_questions(
        ents, _table(), min_size=6, n=4, generator="http://llm.test/v1", client=c1, seed=1
    )
    assert len(rep.candidates) == 4 and c1.calls == len(seen) > 0
    for cand in rep.candidates:
        copied = cand.query.startswith("Total revenues")
        assert (
            cand.dropped is not None
        ) == copied or cand.dropped == "duplicate of an earlier candidate"
    c2 = client()
    again = synth_questions(
        ents, _table(), min_size=6, n=4, generator="http://llm.test/v1", client=c2, seed=1
    )
    assert c2.calls == 0  # served from the request cache
    assert [x.query for x in again.candidates] == [x.query for x in rep.candidates]


# -- the command ---------------------------------------------------------------------------


def _files(tmp_path: Path) -> tuple[Path, Path]:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "".join(
            json.dumps(e.to_json_dict()) + "\n"
            for e in _entries({"numeric_lookup": 6, "comparison": 1})
        )
    )
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in _table()))
    return golden, chunks


def test_cli_shares_and_out(tmp_path: Path) -> None:
    golden, chunks = _files(tmp_path)
    shares = tmp_path / "shares.json"
    shares.write_text(json.dumps({"numeric_lookup": 0.6, "comparison": 0.4}))
    out = tmp_path / "synth.jsonl"
    res = runner.invoke(
        app,
        [
            "synth",
            "questions",
            "--corpus",
            str(chunks),
            "--golden",
            str(golden),
            "--shares",
            str(shares),
            "--n",
            "6",
            "--out",
            str(out),
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["gaps"][0]["category"] == "comparison" and d["n_candidates"] == 6
    assert len(out.read_text().splitlines()) == d["n_survivors"]


def test_cli_plan_size_and_missing_logs(tmp_path: Path) -> None:
    golden, chunks = _files(tmp_path)
    res = runner.invoke(
        app,
        [
            "synth",
            "questions",
            "--corpus",
            str(chunks),
            "--golden",
            str(golden),
            "--delta",
            "0.1",
            "--discordant",
            "0.2",
            "--n",
            "4",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    need = plan_mcnemar(delta=0.1, discordant=0.2, categories=2).n
    assert {g["min_size"] for g in json.loads(res.output)["gaps"]} == {need}
    res = runner.invoke(
        app,
        [
            "synth",
            "questions",
            "--corpus",
            str(chunks),
            "--golden",
            str(golden),
            "--logs",
            str(tmp_path / "logs.db"),
        ],
    )
    assert res.exit_code == 2 and "log store not found" in res.output


def test_cli_gaps_from_a_log_store(tmp_path: Path) -> None:
    """--logs reads each category's share of traffic from an ingested store: traffic that asks
    one question over and over puts that question's category in a gap."""
    from assay.logs import category_shares, ingest_logs

    golden, chunks = _files(tmp_path)
    query = json.loads(golden.read_text().splitlines()[0])["query"]
    log = tmp_path / "traffic.jsonl"
    log.write_text(
        "".join(
            json.dumps({"ts": f"2026-10-{1 + i:02d}T10:00:00Z", "query": query, "retrieved": []})
            + "\n"
            for i in range(20)
        )
    )
    db = tmp_path / "logs.db"
    ingest_logs([log], db, golden=golden, progress=False)
    shares = category_shares(db).shares
    assert len(shares) == 1 and next(iter(shares.values())) == 1.0
    res = runner.invoke(
        app,
        [
            *("synth", "questions", "--corpus", str(chunks), "--golden", str(golden)),
            *("--logs", str(db), "--n", "4", "-f", "json"),
        ],
    )
    assert res.exit_code == 0, res.output
    gaps = json.loads(res.output)["gaps"]
    assert [(g["category"], g["traffic_share"]) for g in gaps] == list(shares.items())


def test_cli_gaps_from_a_log_store_leave_uncertain_placements_out(tmp_path: Path) -> None:
    """Half the traffic asks the golden comparison question; the other half a query the
    neighbours place in numeric_lookup at confidence 0.07. The gap figures read the confident
    placements only (comparison: all of them) and say how many were uncertain; the guesses used
    to count as half the traffic in numeric_lookup."""
    from assay.logs import category_shares, ingest_logs

    golden, chunks = _files(tmp_path)
    queries = ["q comparison 0"] * 10 + ["q xx yy zz ww"] * 10
    log = tmp_path / "traffic.jsonl"
    log.write_text(
        "".join(
            json.dumps({"ts": f"2026-10-{1 + i:02d}T10:00:00Z", "query": q, "retrieved": []}) + "\n"
            for i, q in enumerate(queries)
        )
    )
    db = tmp_path / "logs.db"
    ingest_logs([log], db, golden=golden, progress=False)
    got = category_shares(db, golden=golden)
    assert got.shares == {"comparison": 1.0}
    assert (got.n, got.uncertain) == (20, 10) and got.threshold.value > 0.07
    assert category_shares(db, min_confidence=0.0).shares == {
        "comparison": 0.5,
        "numeric_lookup": 0.5,
    }
    res = runner.invoke(
        app,
        [
            *("synth", "questions", "--corpus", str(chunks), "--golden", str(golden)),
            *("--logs", str(db), "--n", "4", "-f", "json"),
        ],
    )
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert [(g["category"], g["traffic_share"]) for g in d["gaps"]] == [("comparison", 1.0)]
    assert d["notes"][0].startswith(
        "traffic shares over the 10 confident placements of 20 logged queries; 10 uncertain"
    )
