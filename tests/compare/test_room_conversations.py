"""The issue's measure on the room: the filings pipeline run by `assay run` over the room's
conversations (conversations.jsonl, loaded as a dataset) passes more follow-up turns with its own
history than with none, and `compare` shows it with a paired test clustered by conversation."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.cache import RequestCache
from assay.compare import compare_files
from assay.corpus import build_corpus
from assay.dataset import load_dataset
from assay.judge import check_run
from assay.runner import run_system
from assay.runs import load_run
from assay.score import score_retrieval
from assay.synth.generate import generate_room
from assay.systems.filings import build


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("room-conversations")
    generate_room(base / "room", formats=("pdf",), seed=11, companies=4, years=2, scans=0)
    build_corpus(base / "room", meta=base / "room" / "documents.jsonl", out_dir=base / "corpus")
    ds = load_dataset(base / "room" / "conversations.jsonl")
    system = build(base / "corpus", mode="full", ranker="bm25", rerank=False)
    out = {"ds": base / "room" / "conversations.jsonl", "chunks": base / "corpus" / "chunks.jsonl"}
    for mode in ("own", "none"):
        out[mode] = base / f"{mode}.jsonl"
        run_system(
            ds, system, history=mode, out=out[mode], progress=False,
            cache=RequestCache(base / "c.sqlite", enabled=False),
        )  # fmt: skip
    return out


@pytest.mark.slow
def test_history_passes_more_follow_ups_and_compare_shows_it(runs: dict[str, Path]) -> None:
    ds = load_dataset(runs["ds"])
    follow = {e.id for e in ds.entries if e.conversation and e.conversation.depends_on}
    assert len({e.conversation.id for e in ds.entries if e.conversation}) >= 30
    passed = {}
    for mode in ("own", "none"):
        scores = score_retrieval(ds, load_run(runs[mode]), k=5, chunks=runs["chunks"])
        done = dict(zip(scores.ids, scores.per_entry["complete@5"].tolist(), strict=True))
        passed[mode] = sum(done[i] for i in follow if i in done)
        assert scores.conversations is not None
    assert passed["own"] > passed["none"] + 0.3 * len(follow), passed
    # the answers too: kept_context on the follow-ups (measured: 49 of 49 with history, 12
    # without; 36 and 2 when kept_context also asked answer_correct: it judges context only)
    kept = {}
    for mode in ("own", "none"):
        report = check_run(ds, load_run(runs[mode]), chunks=runs["chunks"], checks="kept_context")
        kept[mode] = sum(1 for r in report.rows if r["kept_context"] is True)
    assert kept["own"] >= kept["none"] + 20, kept
    cmp = compare_files(runs["ds"], runs["none"], runs["own"], chunks=runs["chunks"],
                        metrics=["complete@5"], record=False)  # fmt: skip
    assert cmp.clustering is not None and cmp.clustering.field == "conversation"
    mc = cmp.overall.metrics["complete@5"]
    assert len(mc.up) > len(mc.down) and mc.p < 0.001
    by_conv = compare_files(runs["ds"], runs["none"], runs["own"], chunks=runs["chunks"],
                            metrics=["complete@5"], record=False, pair="conversation")  # fmt: skip
    assert by_conv.overall.metrics["complete@5"].p < 0.001
    assert 30 <= by_conv.overall.metrics["complete@5"].n <= cmp.clustering.clusters
