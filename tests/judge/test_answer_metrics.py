"""Answer metrics as checks: citation precision, conflict handling, mention vs home, cost."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import httpx
import pytest

from assay.cache import RequestCache
from assay.chat import ChatClient
from assay.corpus import Chunk, ChunkTable
from assay.dataset import Dataset, Entry
from assay.judge.checking import check_entry, check_rows
from assay.runner import run_system
from assay.runs.model import Run
from assay.score import score_retrieval

CHUNKS = {
    "acme-2023-10k/3/1": "Total revenues 2,534 2,249\nNet income 248 230",
    "acme-2023-10k/7/1": "Risk factors: competition is intense.",
    "acme-2024-10k/3/1": "Total revenues 2,854 2,534\nNet income 283 248",
}


def entry(**kw: Any) -> Entry:
    base: dict[str, Any] = {
        "id": "e1",
        "query": "Acme FY2023 revenue",
        "category": "numeric_lookup",
        "reference_answer": "$2,534 million",
        "evidence_paths": [
            [
                [
                    {"doc": "acme-2023-10k", "page": 3, "quote": "Total revenues 2,534 2,249"},
                    {
                        "doc": "acme-2024-10k",
                        "page": 3,
                        "quote": "Total revenues 2,854 2,534",
                        "role": "mention",
                    },
                ]
            ]
        ],
    }
    base.update(kw)
    return Entry.model_validate(base)


def _value(answer: str, citations: list[str], check: str, **kw: Any) -> Any:
    r = check_entry(entry(**kw), answer, citations=citations, chunk_text=CHUNKS, checks=check)
    return r.values[check]


def test_citation_precision_is_the_share_of_cited_chunks_holding_evidence() -> None:
    both = ["acme-2023-10k/3/1", "acme-2023-10k/7/1"]
    assert _value("Revenue was $2,534 million.", both, "citation_precision") == 0.5
    assert _value("Revenue was $2,534 million.", both[:1], "citation_precision") == 1.0
    # a mention holds evidence too (it states the fact), it only earns no retrieval credit
    assert _value("$2,534 million", ["acme-2024-10k/3/1"], "citation_precision") == 1.0
    assert _value("$2,534 million", [], "citation_precision") is None  # nothing cited
    refusal = "I could not find this in the filings I searched"
    assert _value(refusal, both, "citation_precision") is None


CONFLICT = {
    "fact": "acme:net_income:FY2024",
    "value": "283",
    "authority": {"doc": "acme-2024-10k", "kind": "10-K", "tier": 1},
    "superseded": {"doc": "acme-2024-mgmt", "kind": "management_accounts", "tier": 3,
                   "value": "298"},
}  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "citations", "expected"),
    [
        ("Net income was $283 million per the audited 10-K.", ["acme-2024-10k/3/1"], True),
        ("Net income was $283 million; the management accounts' 298 is superseded.", [], True),
        ("Net income was $298 million.", [], False),
        ("Net income was $283 million.", ["acme-2024-mgmt/1/1"], False),  # cites the lower tier
        ("Net income was $250 million.", [], False),
    ],
)
def test_conflict_handling_follows_the_authority_tier(
    answer: str, citations: list[str], expected: bool
) -> None:
    kw = {
        "query": "which Acme net income for fiscal 2024 is right",
        "reference_answer": "Acme's net income for fiscal 2024 was 283 (millions) per the 10-K.",
        "metadata": {"conflict": CONFLICT},
        "evidence_paths": [[["acme-2024-10k/3/1"]]],
    }
    assert _value(answer, citations, "conflict_handling", **kw) is expected
    assert _value(answer, citations, "conflict_handling") is None  # no planted conflict


def test_a_piece_needs_a_home_and_only_a_home_earns_retrieval_credit() -> None:
    with pytest.raises(ValueError, match="needs a home"):
        Entry.model_validate(
            {"id": "x", "query": "q", "category": "c",
             "evidence_paths": [[[{"doc": "d", "page": 1, "quote": "q", "role": "mention"}]]]}
        )  # fmt: skip
    table = ChunkTable(
        [Chunk(cid, cid.split("/")[0], t, [int(cid.split("/")[1])], "table")
         for cid, t in CHUNKS.items()]
    )  # fmt: skip
    ds = Dataset([entry()])
    mention = Run.from_rows([{"id": "e1", "retrieved": ["acme-2024-10k/3/1"]}])
    home = Run.from_rows([{"id": "e1", "retrieved": ["acme-2023-10k/3/1"]}])
    m = score_retrieval(ds, mention, k=5, chunks=table, metrics="complete@5")
    h = score_retrieval(ds, home, k=5, chunks=table, metrics="complete@5")
    assert m.overall.values["complete@5"] == 0.0
    assert h.overall.values["complete@5"] == 1.0
    # the mention's role is not written out when it is the default
    assert "role" not in str(entry(evidence_paths=[[["acme-2023-10k/3/1"]]]).to_json_dict())
    assert entry().to_json_dict()["evidence_paths"][0][0][1]["role"] == "mention"


class _Priced:
    """A system whose answerer is the LLM answerer on a stub endpoint."""

    def __init__(self, tmp_path: Path) -> None:
        from assay.systems.filings.answer import LLMAnswerer

        def handler(request: httpx.Request) -> httpx.Response:
            return httpx.Response(
                200,
                json={
                    "choices": [{"message": {"content": "Revenue was $2,534 million [c1]."}}],
                    "usage": {"prompt_tokens": 1200, "completion_tokens": 30},
                },
            )

        chat = ChatClient(
            "http://llm.test/v1", "stub-model", transport=httpx.MockTransport(handler),
            cache=RequestCache(tmp_path / "c.sqlite", namespace="t"),
        )  # fmt: skip
        self.llm = LLMAnswerer(chat, price_in=2.5, price_out=10.0)

    def identity(self) -> dict[str, Any]:
        return {"priced": 1}

    def retrieve(self, query: str, *, as_of: dt.date | None, k: int) -> list[str]:
        return ["c1"]

    def answer(self, query: str, *, as_of: dt.date | None, hits: Any) -> dict[str, Any]:
        from assay.systems.filings.query import plan_query

        ev = [{"chunk_id": "c1", "text": "Revenue 2,534", "label": "Acme"}]
        return self.llm.answer(plan_query(query), ev).to_dict()


def test_cost_is_recorded_in_the_row_and_is_a_count_series(tmp_path: Path) -> None:
    ds = Dataset([entry(evidence_paths=[[["c1"]]])])
    run = run_system(ds, _Priced(tmp_path), k=5, cache=RequestCache(enabled=False), progress=False)
    row = run.row("e1")
    cost = row.extra["cost"]
    assert cost["prompt_tokens"] == 1200 and cost["completion_tokens"] == 30
    assert cost["usd"] == pytest.approx((1200 * 2.5 + 30 * 10.0) / 1e6)
    rows, _ = check_rows(ds, run, checks="answer_tokens,answer_cost_musd")
    assert rows[0]["answer_tokens"] == 1230
    assert rows[0]["answer_cost_musd"] == 3300
    from assay.compare.series import series_from_checks

    s = series_from_checks(rows, names=["answer_cost_musd"])["answer_cost_musd"]
    assert s.kind == "count" and not s.higher_is_better


def test_cost_checks_abstain_without_an_llm() -> None:
    r = check_entry(entry(), "$2,534 million", checks="answer_tokens,answer_cost_musd")
    assert r.values == {"answer_tokens": None, "answer_cost_musd": None}
