from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from typer.testing import CliRunner

import assay.cli
import assay.cli.judge_cmds
from assay.corpus import load_chunks
from assay.dataset import Entry, load_dataset
from assay.judge.checking import check_entry, check_run
from assay.judge.numeric import asks_for_figure, check_numeric
from assay.runs import load_run

TABLE = (
    "Consolidated Statement of Cash Flows (Millions) 2018 2017 2016\n"
    "Purchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)\n"
    "Net cash provided by operating activities 6,439 6,240 6,662\n"
)


def entry(**kw: Any) -> Entry:
    base: dict[str, Any] = {
        "id": "e1",
        "query": "What was FY2018 capex (in USD millions)?",
        "category": "lookup",
        "reference_answer": "$1,577 million",
    }
    base.update(kw)
    return Entry.model_validate(base)


def test_conclusion_figure_is_the_answer_not_the_working() -> None:
    ans = "Capex was $1,373 million in 2017. For FY2018, capex was $1,577 million."
    assert check_numeric("$1,577 million", ans, question="What is capex?").status == "pass"
    wrong = "Capex was $1,577 million in 2018. So the FY2018 figure is $1,373 million."
    v = check_numeric("$1,577 million", wrong, question="What is capex?")
    assert v.status == "fail" and v.reason == "mismatch"


def test_scale_error_is_named() -> None:
    v = check_numeric("$1,577 million", "Capex was $1,577 billion.", question="What is capex?")
    assert v.status == "fail" and v.reason == "scale_error" and "scale error" in v.note


def test_prior_period_from_the_same_table_row_is_flagged() -> None:
    v = check_numeric(
        "1577",
        "FY2018 capex was $1,373 million.",
        question="What is capex (in USD millions)?",
        evidence=[TABLE],
    )
    assert v.status == "fail" and v.reason == "prior_period" and "prior-period" in v.note


def test_prior_period_when_pdf_text_puts_each_cell_on_a_line() -> None:
    pdf = "(Millions)\n2018\n2017\nPurchases of PP&E\n \n(1,577) \n \n(1,373) \nOther\n9\n(6)\n"
    v = check_numeric(
        "1577",
        "Capex was $1,373 million.",
        question="What is capex (in USD millions)?",
        evidence=[pdf],
    )
    assert v.reason == "prior_period"
    v = check_numeric(
        "1577",
        "Capex was $6 million.",
        question="What is capex (in USD millions)?",
        evidence=[pdf],
    )
    assert v.reason == "mismatch"  # another row's figure is not the prior period


def test_prior_period_from_a_ledger_is_flagged() -> None:
    v = check_numeric(
        "$1,577 million",
        "Capex was $1,420 million.",
        question="What is capex?",
        ledger={"FY2018": "1577 million", "FY2016": "1420 million"},
        period="FY2018",
    )
    assert v.reason == "prior_period" and "FY2016" in v.note


def test_refusal_fails_and_non_figure_questions_abstain() -> None:
    v = check_numeric(
        "$1,577 million",
        "I'm sorry, but the context does not contain the data.",
        question="What is capex?",
    )
    assert v.status == "fail" and v.reason == "refusal"
    v = check_numeric("Yes. 40% of revenue.", "Yes.", question="Is the US government a customer?")
    assert v.status == "abstain"
    assert check_numeric("Customer deposits", "x", question="What was it?").status == "abstain"


def test_asks_for_figure() -> None:
    assert asks_for_figure("Assume you are an analyst: what is the FY2018 net PPNE for 3M?")
    assert asks_for_figure("How much did it pay in dividends?")
    assert asks_for_figure("What percentage of revenue came from services in FY2022?")
    assert asks_for_figure("Compute the FY2019 EBITDA margin for Acme.")
    assert not asks_for_figure("Does Acme have positive working capital?")
    assert not asks_for_figure("Which region had the highest EBITDAR?")
    assert not asks_for_figure("Has Acme paid dividends in FY2022?")


def test_multi_figure_reference_needs_every_figure() -> None:
    ref = "The effective tax rate changed from 24.6% in FY2021 to 21.6% in FY2022."
    q = "How much has the effective tax rate changed between FY2021 and FY2022?"
    assert check_numeric(ref, "It fell to 21.6% from 24.6%.", question=q).status == "pass"
    v = check_numeric(ref, "It fell to 21.6%.", question=q)
    assert v.status == "fail" and v.reason == "missing_figure"


def test_key_facts_recall_and_answer_correct() -> None:
    e = entry(
        key_facts=[
            {"fact": "capex was $1,577 million"},
            {"fact": "purchases of property plant equipment"},
            {"fact": "context only", "critical": False},
        ]
    )
    good = check_entry(e, "Purchases of property, plant and equipment were $1,577 million.")
    assert good.key_fact_recall == 1.0 and good.values["answer_correct"] is True
    half = check_entry(e, "It was $1,577 million.")
    assert half.key_fact_recall == 0.5 and half.values["answer_correct"] is False
    assert half.values["contradiction_free"] is True


def test_refusal_correctness_is_scored_both_ways() -> None:
    answerable = entry()
    unanswerable = entry(answerable=False, reference_answer=None)
    refusal = "I could not find this in the filings searched; I cannot answer."
    r = check_entry(answerable, refusal)
    assert r.values["abstained_when_should_answer"] is True
    assert r.values["answered_when_should_abstain"] is None and r.values["refusal_ok"] is False
    r = check_entry(unanswerable, "Capex was $9 million.")
    assert r.values["answered_when_should_abstain"] is True and r.values["refusal_ok"] is False
    assert r.values["abstained_when_should_answer"] is None
    r = check_entry(unanswerable, refusal)
    assert r.values["refusal_ok"] is True and r.values["answered_when_should_abstain"] is False
    clar = check_entry(entry(expected_behavior="clarify"), "Which year do you mean?")
    assert clar.values["refusal_ok"] is None


def test_not_disclosed_claim_is_flagged_on_answerable_entries() -> None:
    r = check_entry(entry(), "The company does not disclose its capex.")
    assert r.values["not_disclosed_unsupported"] is True
    assert any("could not find" in n for n in r.notes)
    r = check_entry(entry(), "I could not find capex in the filings searched.")
    assert r.values["not_disclosed_unsupported"] is False


def test_scale_error_against_a_cited_span_is_a_contradiction() -> None:
    chunks = {"c1": "Capex was $1,577 million in FY2018."}
    e = entry(reference_answer=None, query="Describe capex.")
    r = check_entry(e, "Capex was $1,577 billion.", citations=["c1"], chunk_text=chunks)
    assert r.values["contradiction_free"] is False
    r = check_entry(e, "Capex was $1.577 billion.", citations=["c1"], chunk_text=chunks)
    assert r.values["contradiction_free"] is True


def test_numbers_verified_against_cited_spans() -> None:
    chunks = {"c1": TABLE, "c2": "Nothing numeric here."}
    ok = check_entry(entry(), "Capex was $1,577 million.", citations=["c1"], chunk_text=chunks)
    assert ok.values["numbers_verified"] is True
    scaled = check_entry(entry(), "Capex was $1.58 billion.", citations=["c1"], chunk_text=chunks)
    assert scaled.values["numbers_verified"] is True  # the table is in millions
    bad = check_entry(entry(), "Capex was $1,599 million.", citations=["c1"], chunk_text=chunks)
    assert bad.values["numbers_verified"] is False
    none = check_entry(entry(), "Capex was $1,577 million.", citations=[], chunk_text=chunks)
    assert none.values["numbers_verified"] is False
    assert check_entry(entry(), "Capex was $1,577 million.").values["numbers_verified"] is None


def test_fiscal_year_flag() -> None:
    e = entry(metadata={"fiscal_year": 2018})
    assert check_entry(e, "In FY2017, capex was $1,577 million.").values["fiscal_year_ok"] is False
    assert check_entry(e, "In FY2018, capex was $1,577 million.").values["fiscal_year_ok"] is True
    assert (
        check_entry(entry(query="What was capex?"), "In 2017 it was $1,577 million.").values[
            "fiscal_year_ok"
        ]
        is None
    )


def _write(tmp: Path) -> tuple[Path, Path, Path]:
    entries = [
        {
            "id": "a",
            "query": "What was FY2018 capex (in USD millions)?",
            "category": "lookup",
            "reference_answer": "$1,577 million",
            "evidence_paths": [[["c1"]]],
        },
        {
            "id": "b",
            "query": "What was FY2018 operating cash flow (in USD millions)?",
            "category": "lookup",
            "reference_answer": "$6,439 million",
            "evidence_paths": [[["c1"]]],
        },
        {
            "id": "c",
            "query": "What is FY2019 capex?",
            "category": "unanswerable",
            "answerable": False,
        },
    ]
    ds = tmp / "golden.jsonl"
    ds.write_text("".join(json.dumps(e) + "\n" for e in entries))
    run = tmp / "run.jsonl"
    rows = [
        {
            "id": "a",
            "retrieved": ["c1"],
            "answer": "FY2018 capex was $1,577 million.",
            "citations": ["c1"],
        },
        # faithful to the cited span, but the prior-year column: the failure that matters
        {
            "id": "b",
            "retrieved": ["c1"],
            "answer": "FY2018 operating cash flow was $6,240 million.",
            "citations": ["c1"],
        },
        {"id": "c", "retrieved": ["c1"], "answer": "I'm sorry, but the filings do not contain it."},
    ]
    run.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ch = tmp / "chunks.jsonl"
    ch.write_text(json.dumps({"chunk_id": "c1", "doc_id": "d", "page": 1, "text": TABLE}) + "\n")
    return ds, run, ch


def test_check_run_rates_and_faithful_but_wrong(tmp_path: Path) -> None:
    ds, run, ch = _write(tmp_path)
    rep = check_run(
        load_dataset(ds),
        load_run(run),
        chunks=load_chunks(ch),
        rng=np.random.default_rng(1),
        n_boot=200,
    )
    by = {r["id"]: r for r in rep.rows}
    assert by["b"]["numbers_verified"] is True and by["b"]["answer_correct"] is False
    assert by["b"]["numeric_reason"] == "prior_period"
    assert [d["id"] for d in rep.disagreements] == ["b"]
    assert rep.disagreements[0]["kind"] == "faithful but wrong"
    cell = rep.rates["lookup"]["answer_correct"]
    assert (cell.n, cell.passed) == (2, 1) and cell.ci is not None
    assert rep.rates["unanswerable"]["refusal_ok"].passed == 1
    assert rep.rates["overall"]["numeric_correct"].abstained == 1


def test_check_cli_formats_and_exit_codes(tmp_path: Path) -> None:
    ds, run, ch = _write(tmp_path)
    runner = CliRunner()
    res = runner.invoke(
        assay.cli.app,
        ["check", str(ds), str(run), "--chunks", str(ch), "--format", "json", "--n-boot", "100"],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["rates"]["lookup"]["numeric_correct"]["passed"] == 1
    assert data["disagreements"][0]["id"] == "b"
    res = runner.invoke(assay.cli.app, ["check", str(ds), str(run), "--format", "markdown"])
    assert res.exit_code == 0 and "| category |" in res.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    out = tmp_path / "out.jsonl"
    res = runner.invoke(assay.cli.app, ["check", str(bad), str(run), "--out", str(out)])
    assert res.exit_code == 2 and not out.exists()


def test_renaming_ids_and_reordering_rows_changes_no_rate(tmp_path: Path) -> None:
    ds, run, ch = _write(tmp_path)
    base = check_run(load_dataset(ds), load_run(run), chunks=load_chunks(ch), n_boot=50)
    ren = {"a": "zz-9", "b": "aa-1", "c": "mm-5"}
    ds2, run2 = tmp_path / "g2.jsonl", tmp_path / "r2.jsonl"
    ds2.write_text(
        "".join(
            json.dumps({**(e := json.loads(x)), "id": ren[e["id"]]}) + "\n"
            for x in ds.read_text().splitlines()
        )
    )
    run2.write_text(
        "".join(
            json.dumps({**(r := json.loads(x)), "id": ren[r["id"]]}) + "\n"
            for x in reversed(run.read_text().splitlines())
        )
    )
    other = check_run(load_dataset(ds2), load_run(run2), chunks=load_chunks(ch), n_boot=50)
    for cat, cells in base.rates.items():
        for name, cell in cells.items():
            o = other.rates[cat][name]
            assert (o.n, o.passed, o.abstained) == (cell.n, cell.passed, cell.abstained)


THOUSANDS = (
    "Selected results\n(in thousands, except per share data)\nFiscal 2023 Fiscal 2022 % change\n"
    "Total revenues 476,173 389,100 22%\nDiluted earnings per share 0.16 0.15\n"
)


def test_a_unit_line_in_the_cited_chunk_sets_the_scale() -> None:
    e = entry(query="QUIL FY2023 revenue", reference_answer="$476.2 million")
    chunks = {"c1": THOUSANDS}

    def run(answer: str) -> dict[str, bool | None]:
        return check_entry(e, answer, citations=["c1"], chunk_text=chunks).values

    quoted = run('"Total revenues 476,173 389,100" [quil-2023-10k/1/3; Quillon 10-K FY2023]')
    assert quoted["answer_correct"] is True and quoted["numbers_verified"] is True
    assert run("Revenue was $476.2 million in FY2023.")["numbers_verified"] is True
    off = run("Revenue was $476,173 million in FY2023.")  # the table is in thousands
    assert off["numbers_verified"] is False and off["answer_correct"] is False
    assert off["contradiction_free"] is False
    eps = check_entry(
        entry(query="QUIL FY2023 diluted EPS", reference_answer="$0.16"),
        "Diluted EPS was $0.16 in FY2023.",
        citations=["c1"],
        chunk_text=chunks,
    )  # "except per share data": the EPS row is in dollars
    assert eps.values["numbers_verified"] is True and eps.values["answer_correct"] is True


def test_citation_ids_and_iso_dates_are_not_figures() -> None:
    e = entry(
        query="Averix RPO FY2022",
        reference_answer="Averix reported RPO of $6,931 million as of the end of fiscal 2022 "
        "(2022-12-31).",
        key_facts=[{"fact": "RPO as of the end of fiscal 2022 (2022-12-31): $6,931 million"}],
    )
    chunks = {"aver-2022-10k/3/1": "Remaining performance obligations were $6,931 million."}
    r = check_entry(
        e,
        "RPO was $6,931 million at 2022-12-31 [aver-2022-10k/3/1].",
        citations=["aver-2022-10k/3/1"],
        chunk_text=chunks,
    )
    assert r.values["numeric_correct"] is True and r.values["key_fact_recall_full"] is True
    assert r.values["answer_correct"] is True and r.values["numbers_verified"] is True


def test_an_answer_about_another_year_is_not_correct() -> None:
    e = entry(query="What was FY2018 capex (in USD millions)?")
    assert check_entry(e, "In FY2018, capex was $1,577 million.").values["answer_correct"] is True
    wrong = check_entry(e, "In FY2017, capex was $1,577 million.").values
    assert wrong["fiscal_year_ok"] is False and wrong["answer_correct"] is False


def test_disagreements_list_faithful_but_wrong_first_then_correct_but_unverified(
    tmp_path: Path, monkeypatch: Any
) -> None:
    ds, run, ch = _write(tmp_path)
    rows = [
        {"id": i, "category": "lookup", "notes": notes, "numeric_reason": reason}
        | {"numbers_verified": nv, "answer_correct": ac}
        for i, nv, ac, notes, reason in [
            ("u1", False, True, [], None),
            ("w1", True, False, [], "prior_period"),
            ("ok", True, True, [], None),
            ("u2", False, True, ["cites no figure"], None),
            ("w2", True, False, ["wrong unit"], "unit"),
            ("na", None, True, [], None),
        ]
    ]
    import assay.judge.checking as checks_mod

    monkeypatch.setattr(checks_mod, "check_rows", lambda *a, **k: (rows, 0))
    rep = check_run(
        load_dataset(ds),
        load_run(run),
        chunks=load_chunks(ch),
        rng=np.random.default_rng(1),
        n_boot=50,
        checks=["numbers_verified", "answer_correct"],
    )
    assert [(d["id"], d["kind"], d["why"]) for d in rep.disagreements] == [
        ("w1", "faithful but wrong", "prior_period"),
        ("w2", "faithful but wrong", "wrong unit"),
        ("u1", "correct but unverified", ""),
        ("u2", "correct but unverified", "cites no figure"),
    ]
