from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from assay.cache import RequestCache
from assay.systems.filings.answer import REFUSAL, ExtractiveAnswerer, LLMAnswerer
from assay.systems.filings.index import FilingsIndex
from assay.systems.filings.query import plan_query
from assay.systems.filings.system import FilingsSystem


def test_refusal_wording_is_exact() -> None:
    assert REFUSAL == "I could not find this in the filings I searched"
    assert "not disclosed" not in REFUSAL


def test_extractive_quotes_best_sentence_with_citation_and_period(corpus_dir: Path) -> None:
    system = FilingsSystem(FilingsIndex.load(corpus_dir))
    out = system.answer("Acme net income 2023", hits=["acme-2023-10k/1/0", "acme-2023-10k/2/0"])
    assert "net income was $90 million" in out["answer"]
    assert out["citations"] == ["acme-2023-10k/1/0"]
    assert out["period"] == "FY2023"


def test_extractive_quotes_table_row(corpus_dir: Path) -> None:
    system = FilingsSystem(FilingsIndex.load(corpus_dir))
    out = system.answer("Microsoft operating income fiscal 2024", hits=["msft-2024-10k/2/0"])
    assert "Operating income 109,433 88,523" in out["answer"]


@pytest.mark.parametrize(
    ("query", "hits"),
    [
        ("Acme goodwill impairment 2023", ["acme-2023-10k/1/0"]),  # not in the evidence
        ("Microsoft net income FY2024", ["acme-2023-10k/1/0"]),  # evidence about another company
        ("Acme net income 2023", []),  # no evidence at all
    ],
)
def test_insufficient_evidence_refuses_in_exact_words(
    corpus_dir: Path, query: str, hits: list[str]
) -> None:
    system = FilingsSystem(FilingsIndex.load(corpus_dir))
    out = system.answer(query, hits=hits)
    assert out["answer"] == REFUSAL and out["citations"] == []


def _llm(tmp_path: Path, reply: str, calls: list[dict[str, object]]) -> LLMAnswerer:
    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(json.loads(request.content))
        return httpx.Response(200, json={"choices": [{"message": {"content": reply}}]})

    return LLMAnswerer(
        base_url="http://llm.test/v1", model="m", client=httpx.Client(transport=httpx.MockTransport(handler)),
        cache=RequestCache(tmp_path / "c.sqlite", namespace="t"),
    )  # fmt: skip


EVIDENCE = [
    {
        "chunk_id": "a/1/0",
        "text": "Net income was $90 million.",
        "label": "Acme 10-K FY2023",
        "fiscal_year": 2023,
    }
]


def test_llm_answer_cites_and_is_cached(tmp_path: Path) -> None:
    calls: list[dict[str, object]] = []
    llm = _llm(tmp_path, "Net income was $90 million in FY2023 [a/1/0].", calls)
    plan = plan_query("Acme net income 2023")
    first = llm.answer(plan, EVIDENCE)
    second = llm.answer(plan, EVIDENCE)
    assert first == second and first.citations == ["a/1/0"]
    assert len(calls) == 1 and calls[0]["temperature"] == 0


@pytest.mark.parametrize(
    "reply", ["The amount is not disclosed.", "The excerpts do not contain this.", ""]
)
def test_llm_declines_are_normalised_to_refusal(tmp_path: Path, reply: str) -> None:
    llm = _llm(tmp_path, reply, [])
    assert llm.answer(plan_query("Acme goodwill"), EVIDENCE).answer == REFUSAL


def test_extractive_min_coverage_is_respected() -> None:
    strict = ExtractiveAnswerer(min_coverage=1.0)
    plan = plan_query("net income and goodwill")
    assert strict.answer(plan, EVIDENCE).answer == REFUSAL
    assert ExtractiveAnswerer(min_coverage=0.5).answer(plan, EVIDENCE).answer != REFUSAL
