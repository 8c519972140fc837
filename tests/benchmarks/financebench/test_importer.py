from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli.bench_cmds
import assay.cli.stats_cmds  # noqa: F401  (assay gate)
from assay.benchmarks.financebench import import_financebench
from assay.cli import app
from assay.corpus import Document
from assay.dataset import Anchor, Source, load_dataset, load_manifest
from assay.errors import DataError

# the FinanceBench dev split, in a `shared/financebench` folder beside the checkout (or above it)
FB = next(
    (p / "shared" / "financebench" for p in Path(__file__).resolve().parents
     if (p / "shared" / "financebench").is_dir()),
    Path("shared") / "financebench",
)  # fmt: skip


def _q(qid: str, evidence: list[tuple[str, int, str]], **kw: object) -> dict[str, object]:
    return {
        "financebench_id": qid,
        "company": "Nike",
        "doc_name": evidence[0][0] if evidence else "NIKE_2019_10K",
        "question_type": kw.get("question_type", "metrics-generated"),
        "question_reasoning": "Information extraction",
        "domain_question_num": None,
        "question": f"question {qid}?",
        "answer": "$1,577",
        "justification": "from the cash flow statement",
        "dataset_subset_label": "OPEN_SOURCE",
        "evidence": [
            {
                "evidence_text": t,
                "doc_name": d,
                "evidence_page_num": p,
                "evidence_text_full_page": "x",
            }
            for d, p, t in evidence
        ],
    }


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _docs() -> list[Document]:
    return [
        Document(
            doc_id="NIKE_2019_10K", company="Nike", form="10-K", accepted_at=dt.date(2019, 7, 23)
        ),
        Document(
            doc_id="NIKE_2018_10K", company="Nike", form="10-K", accepted_at=dt.date(2018, 7, 24)
        ),
    ]


def test_entry_mapping(tmp_path: Path) -> None:
    q = _q(
        "fb-1",
        [("NIKE_2019_10K", 53, "Revenues 39,117 36,397"), ("NIKE_2018_10K", 0, "Form 10-K")],
        question_type="domain-relevant",
    )
    [e] = import_financebench(_write(tmp_path / "q.jsonl", [q]), documents=_docs(), split="dev")
    assert e.id == "fb-1" and e.category == "domain-relevant" and e.split == "dev"
    assert e.source == Source.benchmark and e.answerable is True
    assert e.reference_answer == "$1,577"
    assert e.metadata["justification"] == "from the cash flow statement"
    assert e.metadata["question_reasoning"] == "Information extraction"
    # one path; each evidence item a required piece; zero-based page -> one-based
    assert e.evidence_paths == [
        [
            [Anchor(doc="NIKE_2019_10K", page=54, quote="Revenues 39,117 36,397")],
            [Anchor(doc="NIKE_2018_10K", page=1, quote="Form 10-K")],
        ]
    ]
    assert e.as_of == dt.date(2019, 7, 23), "as_of: every cited filing visible"


def test_same_page_items_stay_required_unless_contained(tmp_path: Path) -> None:
    q = _q(
        "fb-2",
        [
            ("NIKE_2019_10K", 10, "Revenues 39,117 and gross margin 44.7%"),
            ("NIKE_2019_10K", 10, "gross margin 44.7%"),  # contained in the first: merged
            (
                "NIKE_2019_10K",
                10,
                "Inventories 5,622",
            ),  # another fact on the same page: still required
            ("NIKE_2019_10K", 10, "Inventories 5,622"),  # exact duplicate: merged
        ],
    )
    [e] = import_financebench(_write(tmp_path / "q.jsonl", [q]), documents=_docs())
    assert [[a.quote for a in piece] for piece in e.evidence_paths[0]] == [  # type: ignore[union-attr]
        ["Revenues 39,117 and gross margin 44.7%"],
        ["Inventories 5,622"],
    ]
    assert e.metadata["merged_evidence_items"] == 2


def test_as_of_unknown_when_a_cited_filing_is_unknown(tmp_path: Path) -> None:
    q = _q("fb-3", [("ACME_2019_NOTAFILING", 1, "text")])
    [e] = import_financebench(_write(tmp_path / "q.jsonl", [q]), documents=_docs())
    assert e.as_of is None


def test_as_of_derived_from_doc_names_without_metadata(tmp_path: Path) -> None:
    q = _q("fb-4", [("NIKE_2019_10K", 1, "text")])
    [e] = import_financebench(_write(tmp_path / "q.jsonl", [q]), documents=[])
    assert e.as_of is not None and e.as_of > dt.date(2019, 5, 31)


def test_bad_lines_reported_with_line_and_field(tmp_path: Path) -> None:
    good = _q("fb-5", [("NIKE_2019_10K", 1, "text")])
    rows: list[dict[str, object]] = [
        good,
        {"financebench_id": "x"},
        good,
        _q("fb-6", [("NIKE_2019_10K", -1, "t")]),
    ]
    path = _write(tmp_path / "q.jsonl", rows)
    with pytest.raises(DataError) as exc:
        import_financebench(path, documents=_docs())
    got = {(p.line, p.field) for p in exc.value.problems}
    assert (2, "question") in got and (2, "evidence") in got
    assert (3, "financebench_id") in got
    assert (4, "evidence[0]") in got


def test_cli_import_writes_dataset(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.jsonl", [_q("fb-7", [("NIKE_2019_10K", 3, "text")])])
    out = tmp_path / "fb.jsonl"
    r = CliRunner().invoke(
        app,
        ["import", "financebench", str(q), "--out", str(out), "--split", "dev", "--format", "json"],
    )
    assert r.exit_code == 0, r.output
    ds = load_dataset(out)
    assert [e.id for e in ds.entries] == ["fb-7"]
    assert load_manifest(out)["n_entries"] == 1
    # one published expert team's labels: silver, so a gate on them must ask for silver
    e = ds.entries[0]
    assert (e.label_tier, e.reviewed_by) == ("silver", 1) and "FinanceBench" in e.metadata[
        "reviewers"
    ]
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"id": "fb-7", "retrieved": ["x"]}) + "\n", encoding="utf-8")
    refused = CliRunner().invoke(app, ["gate", str(out), str(run), str(run)])
    assert refused.exit_code == 2 and "--tiers gold,silver" in refused.output, refused.output
    assert "1 silver" in refused.output
    bad = CliRunner().invoke(
        app,
        [
            "import",
            "financebench",
            str(tmp_path / "missing.jsonl"),
            "--out",
            str(tmp_path / "x.jsonl"),
        ],
    )
    assert bad.exit_code == 2 and not (tmp_path / "x.jsonl").exists()


@pytest.mark.skipif(
    not (FB / "questions_dev.jsonl").exists(), reason="FinanceBench dev split not present"
)
def test_real_dev_split_imports() -> None:
    entries = import_financebench(
        FB / "questions_dev.jsonl", documents=FB / "documents.jsonl", split="dev"
    )
    assert len(entries) == 75
    assert {e.category for e in entries} == {
        "metrics-generated",
        "domain-relevant",
        "novel-generated",
    }
    assert all(e.as_of is not None and e.anchors() for e in entries)
    raw = [
        json.loads(x) for x in (FB / "questions_dev.jsonl").read_text().splitlines() if x.strip()
    ]
    first = raw[0]["evidence"][0]
    a = entries[0].anchors()[0]
    assert (a.doc, a.page) == (first["doc_name"], first["evidence_page_num"] + 1)


@pytest.mark.skipif(
    not (FB / "questions_dev.jsonl").exists(), reason="FinanceBench dev split not present"
)
def test_real_dev_split_is_silver_and_gates_only_when_asked(tmp_path: Path) -> None:
    from assay.benchmarks.financebench.importer import import_dataset
    from assay.dataset import select_tiers
    from assay.errors import DataError

    import_dataset(FB / "questions_dev.jsonl", out=tmp_path / "fb.jsonl", split="dev")
    ds = load_dataset(tmp_path / "fb.jsonl")
    with pytest.raises(DataError, match=r"75 silver; widen it with --tiers gold,silver"):
        select_tiers(ds)
    chosen, report = select_tiers(ds, "gold,silver")
    assert len(chosen) == 75 and report.kept == {"silver": 75}


SMALL = (
    "AMCOR_2023Q4_EARNINGS",
    "FOOTLOCKER_2022_8K_dated_2022-08-19",
    "ULTABEAUTY_2023Q4_EARNINGS",
)


@pytest.mark.skipif(
    not all((FB / "pdfs" / f"{d}.pdf").exists() for d in SMALL),
    reason="FinanceBench PDFs not present",
)
def test_real_filings_build_and_anchors_resolve(tmp_path: Path) -> None:
    from assay.corpus import build_corpus, load_chunks, load_documents
    from assay.gold.align import resolve_anchor

    src = tmp_path / "pdfs"
    src.mkdir()
    for d in SMALL:
        (src / f"{d}.pdf").symlink_to(FB / "pdfs" / f"{d}.pdf")
    m = build_corpus(
        src, meta=FB / "documents.jsonl", out_dir=tmp_path / "c", workers=1, follow_symlinks=True
    )
    assert m.ok and m.n_documents == 3
    docs = {d.doc_id: d for d in load_documents(tmp_path / "c" / "documents.jsonl")}
    ulta = docs[
        "ULTABEAUTY_2023Q4_EARNINGS"
    ]  # the release of Q4 fiscal 2022, read from its headline
    assert (ulta.fiscal_year, ulta.fiscal_quarter, ulta.accepted_at) == (
        2022,
        4,
        dt.date(2023, 3, 9),
    )
    assert docs["FOOTLOCKER_2022_8K_dated_2022-08-19"].accepted_at == dt.date(2022, 8, 25)
    table = load_chunks(tmp_path / "c" / "chunks.jsonl")
    entries = import_financebench(
        FB / "questions_dev.jsonl", documents=tmp_path / "c" / "documents.jsonl"
    )
    anchors = [a for e in entries for a in e.anchors() if a.doc in SMALL]
    assert anchors
    held = [resolve_anchor(a, table).ok for a in anchors]
    assert sum(held) / len(held) >= 0.75


# ------------------------------------------------------------------------- issue 11 items


def test_null_question_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """Today's main imports `"question": null` as the query "None" and exits 0."""
    good = _q("fb-8", [("NIKE_2019_10K", 3, "text")])
    null = _q("fb-9", [("NIKE_2019_10K", 4, "text")]) | {"question": None}
    q = _write(tmp_path / "q.jsonl", [good, null])
    with pytest.raises(DataError) as exc:
        import_financebench(q, documents=_docs())
    assert [(p.line, p.field) for p in exc.value.problems] == [(2, "question")]
    out = tmp_path / "fb.jsonl"
    r = CliRunner().invoke(app, ["import", "financebench", str(q), "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert f"{q}:2: question: must not be null" in r.output
    assert "Traceback" not in r.output
    assert not out.exists() and not list(tmp_path.glob("fb*"))


def test_blank_question_is_refused(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.jsonl", [_q("fb-10", [("NIKE_2019_10K", 1, "t")]) | {"question": " "}])
    with pytest.raises(DataError) as exc:
        import_financebench(q, documents=_docs())
    assert [(p.line, p.field) for p in exc.value.problems] == [(1, "question")]


def _text_corpus(tmp_path: Path, doc_ids: list[str]) -> Path:
    """A built corpus holding only `doc_ids` (plain-text filings)."""
    from assay.corpus import build_corpus

    src = tmp_path / "filings"
    src.mkdir()
    docs = [d for d in _docs() if d.doc_id in doc_ids]
    for d in docs:
        (src / f"{d.doc_id}.txt").write_text(f"{d.company} annual report. Revenues 39,117.\n")
    out = tmp_path / "corpus"
    m = build_corpus(src, meta=docs, out_dir=out, workers=1, enrich=False)
    assert m.ok and m.n_documents == len(docs)
    return out


@pytest.mark.parametrize("fmt", ["table", "json", "markdown"])
def test_import_lists_questions_citing_filings_the_corpus_lacks(tmp_path: Path, fmt: str) -> None:
    """Today's main says nothing about questions whose filings are not in the corpus."""
    corpus = _text_corpus(tmp_path, ["NIKE_2019_10K"])
    q = _write(
        tmp_path / "q.jsonl",
        [
            _q("fb-in", [("NIKE_2019_10K", 3, "text")]),
            _q("fb-out", [("NIKE_2018_10K", 3, "text")]),
            _q("fb-both", [("NIKE_2019_10K", 3, "text"), ("NIKE_2018_10K", 5, "more")]),
        ],
    )
    out = tmp_path / "fb.jsonl"
    r = CliRunner().invoke(
        app,
        ["import", "financebench", str(q), "--corpus", str(corpus), "--out", str(out), "-f", fmt],
    )
    assert r.exit_code == 0, r.output
    assert [e.id for e in load_dataset(out).entries] == ["fb-in", "fb-out", "fb-both"]
    if fmt == "json":
        data = json.loads(r.stdout)
        assert data["questions_citing_missing_filings"] == 2
        assert data["missing_filings"] == {
            "fb-out": ["NIKE_2018_10K"],
            "fb-both": ["NIKE_2018_10K"],
        }
        assert data["missing_documents"] == ["NIKE_2018_10K"]
        assert data["entries"] == 3
    else:
        text = r.stdout
        assert re.search(r"questions citing filings the corpus lacks\s*[│|]\s*2\s*[│|]", text)
        assert "fb-out" in text and "fb-both" in text and "NIKE_2018_10K" in text
        assert "fb-in" not in text


def test_missing_filings_from_financebench_documents(tmp_path: Path) -> None:
    """Without a built corpus, FinanceBench's `pdf_in_corpus: false` marks a filing absent."""
    from assay.benchmarks.financebench import import_dataset

    fb_docs = [
        {"doc_name": "NIKE_2019_10K", "company": "Nike", "doc_type": "10k", "doc_period": 2019,
         "pdf_in_corpus": True},
        {"doc_name": "NIKE_2018_10K", "company": "Nike", "doc_type": "10k", "doc_period": 2018,
         "pdf_in_corpus": False},
    ]  # fmt: skip
    _write(tmp_path / "documents.jsonl", fb_docs)
    q = _write(
        tmp_path / "q.jsonl",
        [
            _q("fb-a", [("NIKE_2019_10K", 3, "text")]),
            _q("fb-b", [("NIKE_2018_10K", 3, "text")]),
            _q("fb-c", [("NIKE_2017_10K", 3, "text")]),  # not listed at all
        ],
    )
    rep = import_dataset(q, out=tmp_path / "fb.jsonl")  # documents.jsonl beside the questions
    assert rep.missing == {"fb-b": ["NIKE_2018_10K"], "fb-c": ["NIKE_2017_10K"]}
    assert rep.to_dict()["questions_citing_missing_filings"] == 2
    # nothing says which filings are present: unknown, not "none missing"
    alone = tmp_path / "alone"
    alone.mkdir()
    q2 = _write(alone / "q.jsonl", [_q("fb-d", [("NIKE_2019_10K", 3, "text")])])
    rep2 = import_dataset(q2, out=alone / "fb.jsonl")
    assert rep2.missing is None
    d = rep2.to_dict()
    assert d["questions_citing_missing_filings"] is None and "unknown" in d["corpus"]


def test_import_refuses_to_overwrite_its_questions(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.jsonl", [_q("fb-11", [("NIKE_2019_10K", 3, "text")])])
    before = q.read_bytes()
    r = CliRunner().invoke(app, ["import", "financebench", str(q), "--out", str(q)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert q.read_bytes() == before


@pytest.mark.skipif(
    not (FB / "questions_dev.jsonl").exists(), reason="FinanceBench dev split not present"
)
def test_real_dev_split_names_the_five_questions_without_their_filing(tmp_path: Path) -> None:
    """The shared dev split: 70 of 75 questions have every cited PDF (its README)."""
    from assay.benchmarks.financebench import import_dataset

    rep = import_dataset(
        FB / "questions_dev.jsonl", out=tmp_path / "fb.jsonl", documents=FB / "documents.jsonl"
    )
    assert rep.entries == 75 and rep.missing is not None and len(rep.missing) == 5
    assert rep.missing_documents == ["AES_2022_10K", "AMCOR_2020_10K", "COCACOLA_2021_10K"]


def test_import_judges_missing_filings_against_the_users_own_chunk_table(tmp_path: Path) -> None:
    """FinanceBench's documents.jsonl lists both filings; the user's index holds only one."""
    docs = tmp_path / "documents.jsonl"
    docs.write_text("".join(json.dumps(d.model_dump(mode="json")) + "\n" for d in _docs()))
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(
        json.dumps({"chunk_id": "c1", "doc_id": "NIKE_2019_10K", "pages": [3], "text": "Revenues"})
        + "\n"
    )
    q = _write(
        tmp_path / "q.jsonl",
        [_q("fb-in", [("NIKE_2019_10K", 3, "text")]), _q("fb-out", [("NIKE_2018_10K", 3, "x")])],
    )
    out = tmp_path / "fb.jsonl"
    argv = ["import", "financebench", str(q), "--out", str(out), "-f", "json"]
    r = CliRunner().invoke(app, [*argv, "--documents", str(docs), "--chunks", str(chunks)])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["missing_filings"] == {"fb-out": ["NIKE_2018_10K"]}
    assert data["corpus"] == f"the chunk table {chunks}"
    manifest = load_manifest(out)
    assert manifest["index_version"] and manifest["index_version"] == data["index_version"]
    # the changelog names the version it records, never null
    assert manifest["changelog"][-1]["version"] == manifest["version"]
    assert manifest["version"].startswith("financebench-q-")
    assert all(e.created_by == "import financebench" for e in load_dataset(out).entries)
    # without --chunks the documents file decides: both filings present
    r2 = CliRunner().invoke(app, [*argv, "--documents", str(docs)])
    assert json.loads(r2.stdout)["missing_filings"] == {}


@pytest.mark.skipif(
    not (FB / "graded_answers_dev.jsonl").exists(), reason="FinanceBench dev split not present"
)
def test_an_answers_only_run_is_checked_and_refused_by_retrieval_scoring(tmp_path: Path) -> None:
    """One model's graded FinanceBench answers as a run of `{"id", "answer"}` rows (no
    `retrieved`, as a closed-book or text-to-SQL run is): the answer checks read it; retrieval
    scoring refuses every row, by line, as the dataset has page-level retrieval gold."""
    from assay.dataset import Dataset
    from assay.judge.checking import check_rows
    from assay.runs import load_run
    from assay.score import score_retrieval

    ds = Dataset(
        import_financebench(
            FB / "questions_dev.jsonl", documents=FB / "documents.jsonl", split="dev"
        )
    )
    rows = []
    for line in (FB / "graded_answers_dev.jsonl").read_text().splitlines():
        g = json.loads(line)
        if (g["model_name"], g["eval_mode"]) == ("claude-2", "inContext"):
            rows.append({"id": g["financebench_id"], "answer": g["model_answer"]})
    assert len(rows) == len(ds.entries) == 75
    p = tmp_path / "answers.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = load_run(p)
    assert len(run.unretrieved) == 75
    checked, missing = check_rows(ds, run, checks="answer_correct")
    assert missing == 0 and len(checked) == 75
    assert sum(r["answer_correct"] is True for r in checked) > 0
    with pytest.raises(DataError) as ei:
        score_retrieval(ds, run, k=5, level="page")
    got = [(x.file, x.line, x.field) for x in ei.value.problems]
    assert got == [(str(p), i, "retrieved") for i in range(1, 76)]
