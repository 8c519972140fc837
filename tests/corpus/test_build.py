from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli.corpus_cmds  # noqa: F401  (registers the commands)
from assay._io import sha256_file
from assay.cli import app
from assay.corpus import (
    ChunkSettings,
    Document,
    build_corpus,
    load_chunks,
    load_documents,
    load_manifest,
)
from assay.errors import DataError

MakePdf = Callable[[list[list[str]]], bytes]

STATEMENT = [
    "Acme Corp",
    "Consolidated Statements of Income",
    "(in millions, except per share data)",
    "2023 2022",
    "Net sales $ 5,363 $ 4,869",
    "Cost of sales 3,100 2,900",
    "Operating income 1,488 1,544",
    "Net income $ 1,020 $ 998",
]


def _docs() -> list[Document]:
    return [
        Document(
            doc_id="acme-2023-10k",
            company="Acme Corp",
            ticker="ACME",
            form="10-K",
            fiscal_year=2023,
            period_end="2023-06-30",
            accepted_at="2023-08-25",
            file="acme-2023-10k.pdf",
        ),  # type: ignore[arg-type]
        Document(
            doc_id="acme-2024q1-10q",
            company="Acme Corp",
            ticker="ACME",
            form="10-Q",
            fiscal_year=2024,
            fiscal_quarter=1,
            file="acme-2024q1-10q.pdf",
        ),
        Document(doc_id="acme-2023-8k", company="Acme Corp", form="8-K", file="acme-2023-8k.html"),
    ]


def _src(tmp_path: Path, make_pdf: MakePdf) -> Path:
    src = tmp_path / "filings"
    src.mkdir()
    (src / "acme-2023-10k.pdf").write_bytes(
        make_pdf(
            [
                [
                    "Annual report. Acme makes anvils for coyotes.",
                    "Sales rose in the desert and in the canyon this year.",
                ],
                STATEMENT,
                ["Risk factors. Demand may fall."],
            ]
        )
    )
    (src / "acme-2024q1-10q.pdf").write_bytes(
        make_pdf([["Quarterly report.", "Revenue rose 5% in the quarter."]])
    )
    (src / "acme-2023-8k.html").write_text(
        "<p>Item 2.02 Results of operations.</p>", encoding="utf-8"
    )
    return src


def test_build_writes_corpus_bound_by_hash(tmp_path: Path, pdf_factory: MakePdf) -> None:
    src = _src(tmp_path, pdf_factory)
    out = tmp_path / "corpus"
    m = build_corpus(src, meta=_docs(), out_dir=out, workers=1)
    assert m.ok and m.n_documents == 3 and m.n_pages == 5
    assert m.corpus_hash == sha256_file(out / "chunks.jsonl")
    table = load_chunks(out / "chunks.jsonl")
    assert table.version == m.corpus_hash[:16]
    row = next(c for c in table if c.kind == "table")
    assert row.chunk_id == f"acme-2023-10k/2/1~{row.content_hash[:8]}" and row.pages == [2]
    assert row.extra["content_hash"] == row.content_hash and table.content_addressed
    assert m.chunks_fingerprint == table.fingerprint
    assert row.extra["ticker"] == "ACME" and row.extra["accepted_at"] == "2023-08-25"
    assert row.extra["fiscal_year"] == 2023 and row.extra["form"] == "10-K"
    assert "(in millions, except per share data)" in row.text
    assert {d.doc_id for d in load_documents(out / "documents.jsonl")} == {
        d.doc_id for d in _docs()
    }
    pages = [json.loads(x) for x in (out / "pages.jsonl").read_text().splitlines()]
    assert {(p["doc_id"], p["page"]) for p in pages} >= {("acme-2023-10k", 3), ("acme-2023-8k", 1)}
    manifest = load_manifest(out)
    assert manifest.corpus_hash == m.corpus_hash
    assert manifest.chunk_settings == ChunkSettings().to_dict()
    assert manifest.files["acme-2023-10k"]["sha256"] == sha256_file(src / "acme-2023-10k.pdf")
    assert "pdfium" in manifest.parser


def test_corrupt_pdf_is_named_and_the_rest_is_built(tmp_path: Path, pdf_factory: MakePdf) -> None:
    src = _src(tmp_path, pdf_factory)
    (src / "acme-2024q1-10q.pdf").write_bytes(b"%PDF-1.7\n garbage")
    m = build_corpus(src, meta=_docs(), out_dir=tmp_path / "out", workers=2)
    assert not m.ok
    assert [Path(p.file).name for p in m.failures] == ["acme-2024q1-10q.pdf"]
    assert m.n_documents == 2
    assert "acme-2024q1-10q" not in load_chunks(tmp_path / "out" / "chunks.jsonl").doc_ids


def test_incremental_rebuild_reparses_only_changed_files(
    tmp_path: Path, pdf_factory: MakePdf
) -> None:
    src = _src(tmp_path, pdf_factory)
    out = tmp_path / "out"
    first = build_corpus(src, meta=_docs(), out_dir=out, workers=1)
    assert sorted(first.parsed) == sorted(d.doc_id for d in _docs()) and not first.reused
    again = build_corpus(src, meta=_docs(), out_dir=out, workers=1)
    assert not again.parsed and again.corpus_hash == first.corpus_hash
    (src / "acme-2024q1-10q.pdf").write_bytes(
        pdf_factory([["Quarterly report.", "Revenue fell 2% in the quarter."]])
    )
    third = build_corpus(src, meta=_docs(), out_dir=out, workers=1)
    assert third.parsed == ["acme-2024q1-10q"]
    assert load_manifest(out).reused == sorted(
        d.doc_id for d in _docs() if d.doc_id != "acme-2024q1-10q"
    )
    assert len(list((out / ".parse-cache").glob("*.json"))) == 3, (
        "the old version's cache entry is pruned"
    )
    assert third.corpus_hash != first.corpus_hash
    # new chunker settings: nothing re-parsed, chunks rebuilt
    fourth = build_corpus(
        src,
        meta=_docs(),
        out_dir=out,
        workers=1,
        settings=ChunkSettings(target_tokens=5, max_tokens=8, overlap_tokens=0),
    )
    assert not fourth.parsed and fourth.n_chunks > third.n_chunks
    assert load_manifest(out).chunk_settings["target_tokens"] == 5


def test_missing_files_and_unlisted_files_are_skipped(tmp_path: Path, pdf_factory: MakePdf) -> None:
    src = _src(tmp_path, pdf_factory)
    (src / "stray.txt").write_text("not in the metadata", encoding="utf-8")
    docs = [*_docs(), Document(doc_id="ghost", company="Ghost", form="10-K")]
    m = build_corpus(src, meta=docs, out_dir=tmp_path / "out", workers=1)
    assert m.ok
    assert any(s.startswith("ghost:") for s in m.skipped)
    assert any(s.startswith("stray.txt:") for s in m.skipped)


def test_without_metadata_every_file_is_a_document(tmp_path: Path, pdf_factory: MakePdf) -> None:
    src = _src(tmp_path, pdf_factory)
    m = build_corpus(src, meta=None, out_dir=tmp_path / "out", workers=1)
    assert m.n_documents == 3


def test_cli_build_exit_codes(tmp_path: Path, pdf_factory: MakePdf) -> None:
    src = _src(tmp_path, pdf_factory)
    meta = tmp_path / "documents.jsonl"
    meta.write_text("".join(json.dumps(d.to_json_dict()) + "\n" for d in _docs()), encoding="utf-8")
    runner = CliRunner()
    ok = runner.invoke(
        app,
        [
            "corpus",
            "build",
            str(src),
            "--meta",
            str(meta),
            "--out",
            str(tmp_path / "c"),
            "--workers",
            "1",
            "--format",
            "json",
            "--no-progress",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["documents"] == 3
    (src / "acme-2023-10k.pdf").write_bytes(b"not a pdf")
    bad = runner.invoke(
        app,
        [
            "corpus",
            "build",
            str(src),
            "--meta",
            str(meta),
            "--out",
            str(tmp_path / "c"),
            "--workers",
            "1",
            "--no-progress",
        ],
    )
    assert bad.exit_code == 1
    assert "acme-2023-10k.pdf" in bad.stderr
    meta.write_text('{"doc_id": "x"}\n', encoding="utf-8")
    worse = runner.invoke(
        app,
        [
            "corpus",
            "build",
            str(src),
            "--meta",
            str(meta),
            "--out",
            str(tmp_path / "d"),
            "--no-progress",
        ],
    )
    assert worse.exit_code == 2
    assert f"{meta}:1" in worse.stderr
    assert not (tmp_path / "d" / "chunks.jsonl").exists()


def test_load_manifest_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="file not found"):
        load_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text('{"format": "other"}', encoding="utf-8")
    with pytest.raises(DataError, match="format"):
        load_manifest(tmp_path)


def test_amendment_detected_and_linked_in_build(tmp_path: Path, pdf_factory: MakePdf) -> None:
    src = tmp_path / "filings"
    src.mkdir()
    (src / "acme-2023-10k.pdf").write_bytes(
        pdf_factory([["FORM 10-K", "For the fiscal year ended June 30, 2023"], STATEMENT])
    )
    (src / "acme-2023-10ka.pdf").write_bytes(
        pdf_factory(
            [
                ["FORM 10-K/A", "(Amendment No. 1)"],
                ["EXPLANATORY NOTE", "This Amendment No. 1 amends Part III only."],
            ]
        )
    )
    docs = [
        Document(
            doc_id="acme-2023-10k",
            company="Acme Corp",
            form="10-K",
            fiscal_year=2023,
            accepted_at="2023-08-25",
        ),  # type: ignore[arg-type]
        Document(
            doc_id="acme-2023-10ka",
            company="Acme Corp",
            form="10-K",
            fiscal_year=2023,
            accepted_at="2023-10-20",
        ),  # type: ignore[arg-type]
    ]
    m = build_corpus(src, meta=docs, out_dir=tmp_path / "out", workers=1)
    assert m.ok
    built = {d.doc_id: d for d in load_documents(tmp_path / "out" / "documents.jsonl")}
    amend = built["acme-2023-10ka"]
    assert (amend.form, amend.amends, amend.amended_items) == (
        "10-K/A",
        "acme-2023-10k",
        ["Part III"],
    )
    assert built["acme-2023-10k"].form == "10-K"
    rows = [
        c for c in load_chunks(tmp_path / "out" / "chunks.jsonl") if c.doc_id == "acme-2023-10ka"
    ]
    assert rows and all(c.extra["form"] == "10-K/A" for c in rows)


def test_html_filing_tables_become_table_chunks(tmp_path: Path) -> None:
    src = tmp_path / "filings"
    src.mkdir()
    rows = "".join(
        f"<tr><td>Segment {name}</td><td>$</td><td>{a:,}</td><td>$</td><td>{b:,}</td></tr>"
        for name, a, b in [
            ("North", 1200, 1100),
            ("South", 900, 950),
            ("West", 3100, 2800),
            ("East", 40, 55),
        ]
    )
    (src / "acme-2023-10k.html").write_text(
        "<html><body><p>Segment revenue grew in most regions during the year.</p>"
        "<p>Revenue by segment</p><p>(in thousands)</p>"
        f"<table><tr><td></td><td>2023</td><td>2022</td></tr>{rows}</table></body></html>",
        encoding="utf-8",
    )
    docs = [Document(doc_id="acme-2023-10k", company="Acme Corp", form="10-K", fiscal_year=2023)]
    build_corpus(
        src,
        meta=docs,
        out_dir=tmp_path / "out",
        workers=1,
        settings=ChunkSettings(table_max_tokens=25),
    )
    tables = [c for c in load_chunks(tmp_path / "out" / "chunks.jsonl") if c.kind == "table"]
    assert len(tables) >= 2
    body = []
    for t in tables:
        lines = t.text.splitlines()
        assert "(in thousands)" in lines and "2023 2022" in lines
        assert t.extra["unit"] == "(in thousands)"
        body += [ln for ln in lines if ln.startswith("Segment ") and "$" in ln]
    assert body == [
        "Segment North $ 1,200 $ 1,100",
        "Segment South $ 900 $ 950",
        "Segment West $ 3,100 $ 2,800",
        "Segment East $ 40 $ 55",
    ]


def test_metadata_that_names_no_file_under_the_folder_stops_before_writing(tmp_path: Path) -> None:
    """A room's documents.jsonl names `docs/NAME.pdf`; pointing SRC_DIR at docs/ itself used to
    build an empty corpus (every record skipped, exit 0). It is now an error naming the file,
    line and field, the folder that holds the files, and nothing is written."""
    room = tmp_path / "room"
    (room / "docs").mkdir(parents=True)
    (room / "docs" / "a.html").write_text("<p>Revenue was $5 million.</p>", encoding="utf-8")
    (room / "docs" / "b.html").write_text("<p>Revenue was $6 million.</p>", encoding="utf-8")
    meta = room / "documents.jsonl"
    meta.write_text(
        "\n".join(
            json.dumps({"doc_id": d, "company": "Acme", "form": "8-K", "file": f"docs/{d}.html"})
            for d in ("b", "a")
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "corpus"
    with pytest.raises(DataError) as err:
        build_corpus(room / "docs", meta=meta, out_dir=out)
    first = err.value.problems[0]
    assert (first.file, first.line, first.field) == (str(meta), 1, "file")
    assert "b: no file docs/b.html" in first.message and f"under {room}" in first.message
    assert not out.exists()
    res = CliRunner().invoke(
        app, ["corpus", "build", str(room / "docs"), "--meta", str(meta), "--out", str(out)]
    )
    assert res.exit_code == 2 and f"{meta}:2: file: a: no file docs/a.html" in res.output
    assert not out.exists()
    manifest = build_corpus(room, meta=meta, out_dir=out)
    assert manifest.n_documents == 2 and not manifest.skipped
