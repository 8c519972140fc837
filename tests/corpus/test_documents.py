from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from assay.corpus import (
    Document,
    detect_amendment,
    enrich_from_text,
    from_financebench,
    link_amendments,
    load_documents,
    load_documents_any,
)
from assay.errors import DataError

GOOD = {
    "doc_id": "acme-2023-10k",
    "company": "Acme Corp",
    "ticker": "ACME",
    "aliases": ["Acme"],
    "sector": "Information Technology",
    "form": "10-K",
    "fiscal_year": 2023,
    "fiscal_quarter": None,
    "period_end": "2023-06-30",
    "fiscal_year_end": "06-30",
    "accepted_at": "2023-08-25",
    "amends": None,
    "amended_items": [],
    "file": "acme-2023-10k.pdf",
    "version_date": "2023-08-25",
}


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_brief_example_loads_and_round_trips(tmp_path: Path) -> None:
    amend = GOOD | {
        "doc_id": "acme-2023-10ka",
        "form": "10-K/A",
        "amends": "acme-2023-10k",
        "amended_items": ["Part III"],
    }
    docs = load_documents(_write(tmp_path / "d.jsonl", [GOOD, amend]))
    assert docs[0].period_end == dt.date(2023, 6, 30)
    assert docs[1].is_amendment and not docs[0].is_amendment
    assert Document.model_validate(docs[1].to_json_dict()) == docs[1]
    assert docs[0].chunk_fields()["accepted_at"] == "2023-08-25"


def test_every_problem_named_with_line_and_field(tmp_path: Path) -> None:
    rows = [
        GOOD,
        GOOD | {"doc_id": "b", "form": "10K"},
        GOOD | {"doc_id": "c", "fiscal_year_end": "6/30", "surprise": 1},
        GOOD,
        GOOD | {"doc_id": "e", "amends": "nope"},
    ]
    path = _write(tmp_path / "d.jsonl", rows)
    with pytest.raises(DataError) as exc:
        load_documents(path)
    got = {(p.line, p.field) for p in exc.value.problems}
    assert (2, "form") in got
    assert (3, "fiscal_year_end") in got and (3, "surprise") in got
    assert (4, "doc_id") in got  # duplicate
    assert (5, "amends") in got
    assert all(p.file == str(path) for p in exc.value.problems)


@pytest.mark.parametrize(
    "form", ["10-K", "10-K/A", "10-Q/A", "8-K/A", "DEF 14A", "EARNINGS", "OTHER"]
)
def test_known_forms(form: str) -> None:
    assert Document.model_validate(GOOD | {"form": form}).form == form


@pytest.mark.parametrize("form", ["10K", "EARNINGS/A", "10-K/B", ""])
def test_unknown_forms(form: str) -> None:
    with pytest.raises(ValueError):
        Document.model_validate(GOOD | {"form": form})


def test_doc_id_may_not_contain_a_slash() -> None:
    with pytest.raises(ValueError):
        Document.model_validate(GOOD | {"doc_id": "a/b"})


@pytest.mark.parametrize(
    ("rec", "form", "fy", "fq", "period_end", "fye"),
    [
        (
            {
                "doc_name": "MICROSOFT_2023_10K",
                "company": "Microsoft",
                "doc_type": "10k",
                "doc_period": 2023,
            },
            "10-K",
            2023,
            None,
            dt.date(2023, 6, 30),
            "06-30",
        ),
        (
            {"doc_name": "NIKE_2019_10K", "company": "Nike", "doc_type": "10k", "doc_period": 2019},
            "10-K",
            2019,
            None,
            dt.date(2019, 5, 31),
            "05-31",
        ),
        (
            {
                "doc_name": "WALMART_2020_10K",
                "company": "Walmart",
                "doc_type": "10k",
                "doc_period": 2020,
            },
            "10-K",
            2020,
            None,
            dt.date(2020, 1, 31),
            "01-31",
        ),
        (
            {
                "doc_name": "FOOTLOCKER_2022_10K",
                "company": "Foot Locker",
                "doc_type": "10k",
                "doc_period": 2022,
            },
            "10-K",
            2022,
            None,
            dt.date(2023, 1, 31),
            "01-31",
        ),
        (
            {
                "doc_name": "AMCOR_2023Q2_10Q",
                "company": "Amcor",
                "doc_type": "10q",
                "doc_period": 2023,
            },
            "10-Q",
            2023,
            2,
            dt.date(2022, 12, 31),
            "06-30",
        ),
        (
            {"doc_name": "3M_2018_10K", "company": "3M", "doc_type": "10k", "doc_period": 2018},
            "10-K",
            2018,
            None,
            dt.date(2018, 12, 31),
            "12-31",
        ),
        (
            {
                "doc_name": "PEPSICO_2023Q1_EARNINGS",
                "company": "PepsiCo",
                "doc_type": "Earnings",
                "doc_period": 2023,
            },
            "EARNINGS",
            2023,
            1,
            dt.date(2023, 3, 31),
            "12-31",
        ),
        (
            {
                "doc_name": "AMCOR_2022_8K_dated-2022-07-01",
                "company": "Amcor",
                "doc_type": "8k",
                "doc_period": 2022,
            },
            "8-K",
            2022,
            None,
            dt.date(2022, 7, 1),
            "06-30",
        ),
    ],
)
def test_financebench_conversion(
    rec: dict[str, object], form: str, fy: int, fq: int | None, period_end: dt.date, fye: str
) -> None:
    d = from_financebench(rec)
    assert (d.doc_id, d.form, d.fiscal_year, d.fiscal_quarter, d.period_end, d.fiscal_year_end) == (
        rec["doc_name"],
        form,
        fy,
        fq,
        period_end,
        fye,
    )
    assert d.accepted_at is not None and d.accepted_at > d.period_end
    assert d.accepted_at_estimated


def test_load_any_detects_financebench_and_filters(tmp_path: Path) -> None:
    rows = [
        {
            "doc_name": "NIKE_2019_10K",
            "company": "Nike",
            "gics_sector": "Consumer Discretionary",
            "doc_type": "10k",
            "doc_period": 2019,
            "doc_link": "x",
            "pdf_in_corpus": True,
        },
        {
            "doc_name": "NIKE_2018_10K",
            "company": "Nike",
            "gics_sector": "Consumer Discretionary",
            "doc_type": "10k",
            "doc_period": 2018,
            "doc_link": "x",
            "pdf_in_corpus": False,
        },
    ]
    path = _write(tmp_path / "fb.jsonl", rows)
    assert [d.doc_id for d in load_documents_any(path)] == ["NIKE_2019_10K", "NIKE_2018_10K"]
    docs = load_documents_any(path, only_in_corpus=True)
    assert [d.doc_id for d in docs] == ["NIKE_2019_10K"]
    assert docs[0].ticker == "NKE" and docs[0].sector == "Consumer Discretionary"
    bad = _write(tmp_path / "bad.jsonl", [rows[0] | {"doc_type": "proxy"}])
    with pytest.raises(DataError) as exc:
        load_documents_any(bad)
    assert (exc.value.problems[0].line, exc.value.problems[0].field) == (1, "doc_type")


def test_enrich_reads_cover_page_and_signature_date() -> None:
    d = from_financebench(
        {"doc_name": "ACME_2022_10K", "company": "Nike", "doc_type": "10k", "doc_period": 2022}
    )
    pages = [
        "FORM 10-K\nANNUAL REPORT\nFor the fiscal year ended May 31,\n2022\nCommission file number 1-10635",
        "Item 1. Business",
        "SIGNATURES\nPursuant to the requirements of Section 13 or 15(d) of the Securities Exchange Act of 1934,"
        " the Registrant has duly caused this report to be signed.\nDate: July 21, 2022\nBy: /s/ CEO\n"
        "Leases expire on December 31, 2030",
    ]
    e = enrich_from_text(d, pages)
    assert e.period_end == dt.date(2022, 5, 31)
    assert e.accepted_at == dt.date(2022, 7, 21)
    assert not e.accepted_at_estimated
    assert e.metadata["accepted_at_source"] == "signature date"


def test_enrich_keeps_derived_values_when_text_is_silent() -> None:
    d = from_financebench(
        {"doc_name": "ACME_2022_10K", "company": "3M", "doc_type": "10k", "doc_period": 2022}
    )
    assert enrich_from_text(d, ["nothing useful here"]) == d


def test_enrich_8k_and_earnings_release() -> None:
    k8 = from_financebench(
        {
            "doc_name": "X_2022_8K_dated-2022-05-20",
            "company": "Foot Locker",
            "doc_type": "8k",
            "doc_period": 2022,
        }
    )
    e = enrich_from_text(
        k8, ["FORM 8-K\nDate of Report (Date of earliest event reported): May 20, 2022"]
    )
    assert e.accepted_at == dt.date(2022, 5, 26) and not e.accepted_at_estimated
    rel = from_financebench(
        {
            "doc_name": "ULTABEAUTY_2023Q4_EARNINGS",
            "company": "Ulta Beauty",
            "doc_type": "Earnings",
            "doc_period": 2023,
        }
    )
    page = (
        "March 9, 2023\nUlta Beauty Announces Fourth Quarter\nFiscal 2022 Results\n"
        "announced financial results for the thirteen-week period (\u201cfourth quarter\u201d) and fifty-two-week\n"
        "period (\u201cfiscal year\u201d) ended January 28, 2023 compared to the same periods"
    )
    r = enrich_from_text(rel, [page])
    assert (r.fiscal_year, r.fiscal_quarter) == (2022, 4)
    assert r.period_end == dt.date(2023, 1, 28)
    assert r.accepted_at == dt.date(2023, 3, 9)
    assert r.metadata["period_end_source"] == "release text"
    assert r.metadata["period_end_estimated"] is False
    assert r.metadata["fiscal_period_from_name"] == [2023, 4]


def test_enrich_two_column_cover_page() -> None:
    d = from_financebench(
        {
            "doc_name": "JPMORGAN_2021Q1_10Q",
            "company": "JPMorgan",
            "doc_type": "10q",
            "doc_period": 2021,
        }
    )
    e = enrich_from_text(
        d,
        ["FORM 10-Q\nFor the quarterly period ended Commission file\nMarch 31, 2021 number 1-5805"],
    )
    assert e.period_end == dt.date(2021, 3, 31)
    assert e.metadata["period_end_source"] == "cover page"


AMENDMENT_COVER = [
    "UNITED STATES SECURITIES AND EXCHANGE COMMISSION\nFORM 10-K/A\n(Amendment No. 1)\n"
    "For the fiscal year ended June 30, 2023",
    "EXPLANATORY NOTE\nAcme Corp is filing this Amendment No. 1 to amend Part III, Items 10 through 14,"
    " of its Annual Report on Form 10-K. In addition, new certifications are filed as exhibits under Part IV,"
    " Item 15.",
]


def test_detect_amendment_reads_form_and_items() -> None:
    base = Document(doc_id="acme-2023-10ka", company="Acme Corp", form="10-K", fiscal_year=2023)
    d = detect_amendment(base, AMENDMENT_COVER)
    assert d.form == "10-K/A" and d.is_amendment
    assert d.amended_items == [
        "Part III",
        "Item 10",
        "Item 11",
        "Item 12",
        "Item 13",
        "Item 14",
        "Part IV",
        "Item 15",
    ]
    assert detect_amendment(base, ["FORM 10-K\nAnnual report"]) == base
    kept = base.model_copy(update={"amended_items": ["Item 8"]})
    assert detect_amendment(kept, AMENDMENT_COVER).amended_items == ["Item 8"]


def test_link_amendments_to_the_one_original() -> None:
    orig = Document(doc_id="acme-2023-10k", company="Acme Corp", form="10-K", fiscal_year=2023)
    other = Document(doc_id="acme-2022-10k", company="Acme Corp", form="10-K", fiscal_year=2022)
    amend = Document(doc_id="acme-2023-10ka", company="Acme Corp", form="10-K/A", fiscal_year=2023)
    linked = {d.doc_id: d for d in link_amendments([orig, other, amend])}
    assert linked["acme-2023-10ka"].amends == "acme-2023-10k"
    assert linked["acme-2023-10k"].amends is None
    twin = orig.model_copy(update={"doc_id": "acme-2023-10k-dup"})
    assert {d.doc_id: d for d in link_amendments([orig, twin, amend])}[
        "acme-2023-10ka"
    ].amends is None
