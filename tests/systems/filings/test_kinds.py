"""The facts answerer's question kinds (`assay.systems.filings.kinds`) on a handmade corpus: a
software company (fiscal year ending in June) and a bank, with XBRL company facts, deal-room
documents and phrasings of our own (not the synthetic room's)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from assay.judge.refusal import detect_refusal
from assay.systems.filings import build
from assay.systems.filings.facts_answer import FactsAnswerer
from assay.systems.filings.kinds import comparison_years, latest_kind
from assay.systems.filings.query import plan_query

from .conftest import write_corpus


def _doc(doc_id: str, company: str, ticker: str, form: str, fy: int, fq: int | None,
         end: str, fye: str, accepted: str, doc_type: str | None = None) -> dict[str, Any]:  # fmt: skip
    return {
        "doc_id": doc_id, "company": company, "ticker": ticker, "aliases": [], "form": form,
        "fiscal_year": fy, "fiscal_quarter": fq, "period_end": end, "fiscal_year_end": fye,
        "accepted_at": accepted, "amends": None, "amended_items": [],
        "metadata": {"doc_type": doc_type or form},
    }  # fmt: skip


B, P = "Borealis Software Inc.", "Pinecrest Bank Corp"
DOCS = [
    _doc("bor-2023-10k", B, "BORL", "10-K", 2023, None, "2023-06-30", "06-30", "2023-08-20"),
    _doc("bor-2024-q1-10q", B, "BORL", "10-Q", 2024, 1, "2023-09-30", "06-30", "2023-11-02"),
    _doc("bor-2024-q2-10q", B, "BORL", "10-Q", 2024, 2, "2023-12-31", "06-30", "2024-02-01"),
    _doc("bor-2024-10k", B, "BORL", "10-K", 2024, None, "2024-06-30", "06-30", "2024-08-22"),
    _doc("bor-2024-mgmt", B, "BORL", "OTHER", 2024, None, "2024-06-30", "06-30", "2024-07-15",
         "management_accounts"),
    _doc("pine-2023-10k", P, "PINE", "10-K", 2023, None, "2023-12-31", "12-31", "2024-02-25"),
    _doc("pine-2023-q2-10q", P, "PINE", "10-Q", 2023, 2, "2023-06-30", "12-31", "2023-08-01"),
]  # fmt: skip
CHUNKS = [
    {"chunk_id": "bor-2023-10k/3/0", "doc_id": "bor-2023-10k", "page": 3, "kind": "table",
     "text": "(In thousands) 2023 2022\nSubscription revenue 410,500 352,000\nNet income 61,200 48,900"},
    {"chunk_id": "bor-2024-q1-10q/2/0", "doc_id": "bor-2024-q1-10q", "page": 2, "kind": "table",
     "text": "(In thousands) Three months ended September 30, 2023 2022\nTotal revenues 121,300 101,800"},
    {"chunk_id": "bor-2024-q2-10q/2/0", "doc_id": "bor-2024-q2-10q", "page": 2, "kind": "table",
     "text": "(In thousands) Three months ended December 31, 2023 2022\nTotal revenues 127,900 108,100"},
    {"chunk_id": "bor-2024-10k/3/0", "doc_id": "bor-2024-10k", "page": 3, "kind": "table",
     "text": "(In thousands) 2024 2023\nSubscription revenue 471,300 410,500\nNet income 70,400 61,200"},
    {"chunk_id": "bor-2024-10k/5/0", "doc_id": "bor-2024-10k", "page": 5,
     "text": "For fiscal 2025 we expect total revenues of $560 million to $575 million."},
    {"chunk_id": "bor-2024-mgmt/1/0", "doc_id": "bor-2024-mgmt", "page": 1, "kind": "table",
     "text": "Borealis management accounts, fiscal 2024 (USD thousands, unaudited)"},
    {"chunk_id": "bor-2024-mgmt/1/1", "doc_id": "bor-2024-mgmt", "page": 1, "kind": "table",
     "text": "Line item FY2024 actual FY2024 budget\nNet income 73,900 75,000"},
    {"chunk_id": "pine-2023-10k/2/0", "doc_id": "pine-2023-10k", "page": 2,
     "text": "Net interest margin was 3.12% in 2023 compared with 3.30% in 2022, as deposit costs rose."},
    {"chunk_id": "pine-2023-10k/3/0", "doc_id": "pine-2023-10k", "page": 3, "kind": "table",
     "text": "(In thousands) 2023 2022\nNet income 88,000 91,500"},
    {"chunk_id": "pine-2023-q2-10q/2/0", "doc_id": "pine-2023-q2-10q", "page": 2, "kind": "table",
     "text": "(In thousands) Three months ended June 30, 2023\nProvision for credit losses 9,400\nNet charge-offs 7,100"},
]  # fmt: skip


def _obs(val: float, start: str | None, end: str, form: str, filed: str) -> dict[str, Any]:
    o: dict[str, Any] = {"end": end, "val": val, "form": form, "filed": filed}
    if start:
        o["start"] = start
    return o


def _facts(name: str, concepts: dict[str, tuple[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    return {
        "entityName": name,
        "facts": {
            "us-gaap": {
                c: {"label": label, "description": label.lower(), "units": {"USD": rows}}
                for c, (label, rows) in concepts.items()
            }
        },
    }


BOR_FACTS = _facts(B, {
    "SubscriptionRevenue": ("Subscription revenue", [
        _obs(352_000_000, "2021-07-01", "2022-06-30", "10-K", "2023-08-20"),
        _obs(410_500_000, "2022-07-01", "2023-06-30", "10-K", "2023-08-20"),
        _obs(471_300_000, "2023-07-01", "2024-06-30", "10-K", "2024-08-22"),
    ]),
    "Revenues": ("Total revenues", [
        _obs(121_300_000, "2023-07-01", "2023-09-30", "10-Q", "2023-11-02"),
        _obs(127_900_000, "2023-10-01", "2023-12-31", "10-Q", "2024-02-01"),
    ]),
    "NetIncomeLoss": ("Net income", [
        _obs(61_200_000, "2022-07-01", "2023-06-30", "10-K", "2023-08-20"),
        _obs(70_400_000, "2023-07-01", "2024-06-30", "10-K", "2024-08-22"),
    ]),
})  # fmt: skip
PINE_FACTS = _facts(P, {
    "NetIncomeLoss": ("Net income", [
        _obs(88_000_000, "2023-01-01", "2023-12-31", "10-K", "2024-02-25"),
    ]),
    "ProvisionForLoanLeaseAndOtherLosses": ("Provision for credit losses", [
        _obs(9_400_000, "2023-04-01", "2023-06-30", "10-Q", "2023-08-01"),
    ]),
    "NetChargeOffs": ("Net charge-offs", [
        _obs(7_100_000, "2023-04-01", "2023-06-30", "10-Q", "2023-08-01"),
    ]),
})  # fmt: skip


@pytest.fixture
def system(tmp_path: Path) -> Any:
    corpus = write_corpus(tmp_path / "corpus", DOCS, CHUNKS)
    xbrl = tmp_path / "xbrl"
    xbrl.mkdir()
    for name, facts in (("BORL", BOR_FACTS), ("PINE", PINE_FACTS)):
        (xbrl / f"companyfacts-{name}.json").write_text(json.dumps(facts), encoding="utf-8")
    s = build(corpus, mode="bm25", answerer="facts", xbrl=xbrl)
    assert isinstance(s.answerer, FactsAnswerer)
    return s


def _ask(system: Any, q: str, as_of: dt.date | None = None) -> dict[str, Any]:
    hits = system.retrieve(q, as_of=as_of, k=5)
    out: dict[str, Any] = system.answer(q, as_of=as_of, hits=hits)
    return out


def _route(out: dict[str, Any]) -> str | None:
    return (out.get("trace") or {}).get("answer_route", {}).get("route")


@pytest.mark.parametrize(
    "question",
    [
        "How did Borealis's subscription revenue change in FY2024 compared with the prior year?",
        "Borealis subscription revenue FY24 vs FY23",
        "BORL subscription revenue y/y fiscal 2024",
        "Borealis Software subscription revenue growth, fiscal year 2023 to 2024",
    ],
)
def test_a_comparison_names_both_years_and_the_change(system: Any, question: str) -> None:
    out = _ask(system, question)
    text = out["answer"]
    assert _route(out) == "comparison", text
    assert "$471.3 million" in text and "$410.5 million" in text, text
    assert "+14.8%" in text and "fiscal 2024" in text and "fiscal 2023" in text, text
    assert out["citations"] and not detect_refusal(text).refused


def test_one_company_against_another(system: Any) -> None:
    out = _ask(system, "Compare net income of Borealis and Pinecrest Bank in fiscal 2023")
    text = out["answer"]
    assert _route(out) == "comparison", text
    assert "$61.2 million" in text and "$88 million" in text, text
    assert "Pinecrest Bank Corp's is the higher" in text


def test_the_latest_quarter_is_the_one_filed_by_as_of(system: Any) -> None:
    q = "What were Borealis's total revenues in its most recent quarter?"
    first = _ask(system, q, as_of=dt.date(2023, 12, 15))
    assert _route(first) == "latest", first["answer"]
    assert "$121.3 million" in first["answer"] and "Q1 FY2024" in first["answer"]
    later = _ask(system, "Borealis latest qtr total revenues", as_of=dt.date(2024, 3, 1))
    assert "$127.9 million" in later["answer"] and "Q2 FY2024" in later["answer"]
    assert "2023-12-31" in later["answer"]  # the quarter's end, in the company's calendar


def test_latest_fiscal_year_end(system: Any) -> None:
    out = _ask(system, "Borealis net income at the last FYE", as_of=dt.date(2024, 1, 10))
    assert _route(out) == "latest", out["answer"]
    assert "$61.2 million" in out["answer"] and "2023-06-30" in out["answer"]


def test_period_words_are_read_generally() -> None:
    class _NoResolver:
        def resolve(self, text: str) -> list[Any]:
            return []

    def plan(q: str) -> Any:
        return plan_query(q, _NoResolver())  # type: ignore[arg-type]

    assert comparison_years("NIM 22 vs 23, did it expand", plan("NIM 22 vs 23")) == [
        (2022, None),
        (2023, None),
    ]
    assert comparison_years("revenue growth FY2024", plan("revenue growth FY2024")) == [
        (2023, None),
        (2024, None),
    ]
    assert comparison_years("Q2 FY24 revenue y/y", plan("Q2 FY24 revenue y/y")) == [
        (2023, 2),
        (2024, 2),
    ]
    assert comparison_years("revenue FY2024", plan("revenue FY2024")) is None
    assert latest_kind("what did they just report for quarterly revenue", plan("x")) == "quarter"
    assert latest_kind("deposits at the most recent year-end", plan("x")) == "year"
    assert latest_kind("revenue in FY2023", plan("revenue in FY2023")) is None


def test_a_period_not_yet_reported_is_refused_and_says_what_is_missing(system: Any) -> None:
    out = _ask(system, "What was Borealis's total revenue for fiscal 2025?")
    assert detect_refusal(out["answer"]).refused, out["answer"]
    assert "fiscal 2025" in out["answer"] and "10-K FY2024" in out["answer"]
    # as of a date before any filing of fiscal 2024, fiscal 2024 is not reported either
    early = _ask(system, "Borealis FY2024 net income", as_of=dt.date(2023, 9, 1))
    assert detect_refusal(early["answer"]).refused, early["answer"]
    # once a 10-Q of the year is out, the question is not declined on that ground
    later = _ask(system, "Borealis FY2024 net income", as_of=dt.date(2024, 3, 1))
    assert _route(later) != "unreported"
    # nor is a quarter already filed
    filed = _ask(system, "Borealis Q2 FY2024 total revenues", as_of=dt.date(2024, 3, 1))
    assert _route(filed) != "unreported" and "$127.9 million" in filed["answer"]
    # guidance for that year is a question the filings answer
    guidance = _ask(system, "What revenue does Borealis expect for fiscal 2025?")
    assert _route(guidance) != "unreported"


def test_a_metric_the_company_never_reports_is_refused(system: Any) -> None:
    out = _ask(system, "Borealis NIM for fiscal 2024")
    assert _route(out) == "not_applicable" and detect_refusal(out["answer"]).refused
    assert "net interest margin" in out["answer"]
    # the bank does report it: not refused on that ground
    bank = _ask(system, "Pinecrest NIM 2023")
    assert _route(bank) != "not_applicable"


def test_a_conflict_names_both_figures_and_why_the_audited_one_wins(system: Any) -> None:
    out = _ask(
        system, "Borealis FY2024 net income: is the 10-K or the management accounts correct?"
    )
    text = out["answer"]
    assert _route(out) == "conflict", text
    assert text.index("70,400") < text.index("73,900"), text  # the audited figure leads
    assert "audited 10-K" in text and "management accounts" in text and "unaudited" in text
    assert set(out["citations"]) == {"bor-2024-10k/3/0", "bor-2024-mgmt/1/1"}


def test_reserve_build_is_provision_against_charge_offs(system: Any) -> None:
    out = _ask(system, "Did Pinecrest build its reserves in Q2 2023?")
    text = out["answer"]
    assert _route(out) == "reserve_build", text
    assert (
        "$9.4 million" in text
        and "$7.1 million" in text
        and "reserve build of $2.3 million" in text
    )
