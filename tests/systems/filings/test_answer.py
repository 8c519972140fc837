from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from assay.cache import RequestCache
from assay.chat import ChatClient
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

    chat = ChatClient(
        "http://llm.test/v1", "m", transport=httpx.MockTransport(handler),
        cache=RequestCache(tmp_path / "c.sqlite", namespace="t"),
    )  # fmt: skip
    return LLMAnswerer(chat)


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
    assert first.citations == second.citations == ["a/1/0"]
    assert first.answer == second.answer and first.period == second.period
    assert first.cost is not None and second.cost is not None
    assert first.cost["cached"] is False and second.cost["cached"] is True
    assert len(calls) == 1 and calls[0]["temperature"] == 0


def test_llm_answerer_and_llm_judge_share_one_cached_client(tmp_path: Path) -> None:
    from assay.judge.llm import JudgeInput, LLMJudge

    calls: list[dict[str, object]] = []
    llm = _llm(tmp_path, "Net income was $90 million in FY2023 [a/1/0].", calls)
    judge = LLMJudge(llm.chat)
    assert judge.client is llm.chat and type(llm.chat) is ChatClient
    llm.answer(plan_query("Acme net income 2023"), EVIDENCE)
    judge.judge(JudgeInput(question="Acme net income 2023", answer="$90 million"))
    assert len(calls) == 1 + len(judge.questions) and llm.chat.calls == len(calls)
    again = LLMAnswerer(
        ChatClient(
            "http://llm.test/v1",
            "m",
            transport=httpx.MockTransport(lambda r: httpx.Response(500)),
            cache=RequestCache(tmp_path / "c.sqlite", namespace="t"),
        )
    )  # a new client on the same cache file answers from the cache, never calling the endpoint
    assert again.answer(plan_query("Acme net income 2023"), EVIDENCE).citations == ["a/1/0"]
    assert again.chat.calls == 0


def test_llm_answerer_connects_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_LLM_BASE_URL", "http://llm.test/v1/")
    monkeypatch.setenv("ASSAY_LLM_MODEL", "env-model")
    llm = LLMAnswerer.connect(cache=RequestCache(tmp_path / "c.sqlite"))
    assert (llm.chat.base_url, llm.chat.model) == ("http://llm.test/v1", "env-model")


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


def test_metric_is_met_by_its_filing_wording_and_prefers_figures() -> None:
    evidence = [
        {"chunk_id": "a/9/0", "fiscal_year": 2018, "label": "Acme 10-K FY2018",
         "text": "Capital expenditures are discussed in the liquidity section.\n"
                 "Purchases of property, plant and equipment (PP&E) (1,577) (1,373)"},
    ]  # fmt: skip
    out = ExtractiveAnswerer().answer(
        plan_query("What is the FY2018 capital expenditure amount?"), evidence
    )
    assert out.answer.startswith('"Purchases of property, plant and equipment (PP&E) (1,577)')
    assert out.period == "FY2018"


def test_coverage_ignores_single_letters_and_reads_officers_titles() -> None:
    """A possessive's "s" is no term to look for, and "CFO" is met by "Chief Financial Officer":
    the sentence that names the officer and the pay covers the question, not the one that
    repeats "CFO's"; the answer says how much of the question its evidence covers."""
    memo = {"chunk_id": "memo/1/0", "fiscal_year": 2024, "label": "memo",
            "text": "Note to readers: list the CFO's compensation."}  # fmt: skip
    comp = {"chunk_id": "hr/1/0", "fiscal_year": 2024, "label": "HR file",
            "text": "The board set the compensation of Jane Roe, Chief Financial Officer, in March."}  # fmt: skip
    plan = plan_query("What was Jane Roe's compensation as CFO?")
    out = ExtractiveAnswerer().answer(plan, [memo, comp])
    assert out.citations == ["hr/1/0"], out.answer
    assert out.support == 1.0
    alone = ExtractiveAnswerer().answer(plan, [memo])
    assert alone.citations == ["memo/1/0"] and alone.support is not None and alone.support < 0.6
    # a title spelled out only in part ("Chief Executive Officer") does not meet "COO"
    ceo = {"chunk_id": "pr/1/0", "fiscal_year": 2024, "label": "release",
           "text": "John Doe, Chief Executive Officer, spoke."}  # fmt: skip
    ask = plan_query("Who will be appointed COO?")
    assert ExtractiveAnswerer(min_coverage=1.0).answer(ask, [ceo]).refused
