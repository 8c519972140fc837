from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import assay.synth.generate as gen
from assay.dataset import Entry
from assay.errors import UsageError
from assay.synth.facts_ledger import build_ledger
from assay.synth.filings import build_filings
from assay.synth.generate import build_room, generate_room

DOC_FIELDS = {
    "metadata",
    "doc_id",
    "company",
    "ticker",
    "aliases",
    "sector",
    "form",
    "fiscal_year",
    "fiscal_quarter",
    "period_end",
    "fiscal_year_end",
    "accepted_at",
    "amends",
    "amended_items",
    "file",
    "version_date",
}
RESTRICTED_TYPES = {
    "management_accounts",
    "covenant_compliance",
    "board_minutes",
    "credit_agreement",
    "email",
    "term_sheet",
    "draft_8k",
    "compensation_file",
}
CATEGORIES = {
    "numeric_lookup",
    "narrative",
    "exact_identifier",
    "temporal",
    "comparison",
    "amendment_restatement",
    "ambiguous",
    "unanswerable",
    "conflict",
    "decoy",
}


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    generate_room(a, seed=3, companies=2, years=2)
    generate_room(b, seed=3, companies=2, years=2)
    generate_room(c, seed=4, companies=2, years=2)
    ta, tb = _tree(a), _tree(b)
    assert ta.keys() == tb.keys() and len(ta) > 50
    assert [k for k in ta if ta[k] != tb[k]] == []
    assert _tree(c)["golden.jsonl"] != ta["golden.jsonl"]
    manifest = json.loads(ta["manifest.json"])
    assert manifest["seed"] == 3 and manifest["generator"] == gen.GENERATOR_VERSION
    assert set(manifest["files"]) == set(ta) - {"manifest.json"}


def test_default_scale_has_every_category() -> None:
    room = build_room()
    assert len(room.golden) >= 200
    cats = Counter(e["category"] for e in room.golden)
    assert set(cats) == CATEGORIES and min(cats.values()) >= 5, cats
    ids = [e["id"] for e in room.golden]
    assert len(set(ids)) == len(ids)
    for e in room.golden:
        entry = Entry.model_validate(e)
        if entry.answerable is not False:
            assert entry.evidence_paths and e["metadata"]["fact_ids"], e["id"]
        else:
            assert entry.expected_behavior is not None and not entry.evidence_paths
        if e["category"] == "ambiguous":
            assert e["expected_behavior"] == "clarify"
        if e["category"] == "temporal":
            assert entry.as_of is not None
    assert 200 <= len(room.docs) <= 400


def test_benchmark_scale_is_about_2100_filings() -> None:
    docs = build_filings(build_ledger(7, companies=30, years=5))
    assert 2_050 <= len(docs) <= 2_300


def test_room_files_and_documents_jsonl(small_room: Path) -> None:
    rows = [json.loads(x) for x in (small_room / "documents.jsonl").read_text().splitlines()]
    forms = Counter(r["form"] for r in rows)
    assert {"10-K", "10-Q", "10-K/A", "8-K", "EARNINGS"} <= set(forms)
    ids = {r["doc_id"] for r in rows}
    for r in rows:
        # room v3: a restricted document carries its access label; a public one has none
        assert set(r) - {"access"} == DOC_FIELDS
        assert ("access" in r) == (r["metadata"]["doc_type"] in RESTRICTED_TYPES)
        assert (small_room / r["file"]).exists()
        assert r["metadata"]["format"] == r["file"].rsplit(".", 1)[1]
        if r["form"] == "OTHER":  # room v2: the deal documents beside the filings
            assert r["metadata"]["format"] in (
                "xlsx",
                "docx",
                "eml",
                "html",
            )  # v3: boundary documents
            continue
        stem = small_room / "docs" / r["doc_id"]
        assert stem.with_suffix(".pdf").exists() and stem.with_suffix(".html").exists()
        assert r["file"].endswith(".html" if r["form"] in ("8-K", "EARNINGS") else ".pdf")
        if r["form"] == "10-K/A":
            assert r["amends"] in ids and r["amended_items"] in (["Part III"], ["Item 8"])
    assert {tuple(r["amended_items"]) for r in rows if r["form"] == "10-K/A"} == {
        ("Part III",),
        ("Item 8",),
    }
    units = {
        ("in thousands" in (small_room / f"docs/{r['doc_id']}.html").read_text())
        for r in rows
        if r["form"] == "10-K"
    }
    assert units == {True, False}  # some companies report in thousands, some in millions
    assert list((small_room / "xbrl").glob("companyfacts-*.json"))


def test_formats_option(tmp_path: Path) -> None:
    generate_room(tmp_path / "r", seed=1, companies=2, years=1, formats=("pdf",))
    rows = [json.loads(x) for x in (tmp_path / "r" / "documents.jsonl").read_text().splitlines()]
    # the filings only as PDF; the room's own documents keep their format (xlsx, docx, eml,
    # and the single-page HTML of the boundary documents of room v3)
    side = {r["doc_id"] for r in rows if r["form"] == "OTHER"}
    assert not [p for p in (tmp_path / "r" / "docs").glob("*.html") if p.stem not in side]
    assert all(r["file"].endswith(".pdf") for r in rows if r["form"] != "OTHER")
    with pytest.raises(UsageError):
        generate_room(tmp_path / "s", formats=("docx",))


def test_refuses_foreign_directory_and_replaces_a_room(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(UsageError):
        generate_room(foreign, seed=1, companies=2, years=1)
    assert (foreign / "notes.txt").read_text() == "mine"
    room = tmp_path / "room"
    generate_room(room, seed=1, companies=2, years=1)
    first = (room / "manifest.json").read_bytes()
    generate_room(room, seed=2, companies=2, years=1)
    assert (room / "manifest.json").read_bytes() != first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foreign", "room"]


def test_failure_leaves_no_partial_room(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    real = gen.write_pdf

    def flaky(*a: object, **k: object) -> bytes:
        calls["n"] += 1
        if calls["n"] == 5:
            raise RuntimeError("disk full")
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(gen, "write_pdf", flaky)
    with pytest.raises(RuntimeError):
        generate_room(tmp_path / "room", seed=1, companies=2, years=1)
    assert list(tmp_path.iterdir()) == []


def test_bytes_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    code = (
        "import sys; from assay.synth.generate import generate_room; "
        "print(generate_room(sys.argv[1], seed=9, companies=2, years=1).room_hash)"
    )
    src = str(Path(gen.__file__).parents[2])
    hashes = set()
    for h in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": h, "PYTHONPATH": src}
        out = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / h)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        hashes.add(out.stdout.strip())
    assert len(hashes) == 1
