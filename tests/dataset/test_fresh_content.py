"""A sealed fresh sample is known by its content: renamed ids and a one-character edit are still
the sample; attribute, export, report and the explorer record a use as score does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app
from assay.dataset import Entry, fresh, load_dataset

PAGES = [
    "Subscription and support revenue was $5,050 million in fiscal 2024.",
    "Income from operations was $577 million in fiscal 2024, up 31 percent.",
    "Net leverage stood at 2.1 times at year end, inside the 3.5 times covenant.",
]
ENTRIES: list[dict[str, Any]] = [
    {
        "id": f"s-{i}",
        "query": q,
        "category": "lookup",
        "evidence_paths": [[[{"doc": "fern-10k", "page": i + 1, "quote": PAGES[i]}]]],
    }
    for i, q in enumerate(
        [
            "Fernleaf FY2024 subscription revenue",
            "Fernleaf FY2024 operating income",
            "FERN net leverage at year end",
        ]
    )
]
CHUNKS = [
    {"chunk_id": f"fern/{i + 1}", "doc_id": "fern-10k", "page": i + 1, "text": t}
    for i, t in enumerate(PAGES)
]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _entries(rows: list[dict[str, Any]]) -> list[Entry]:
    return [Entry.model_validate(r) for r in rows]


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    p = _write(tmp_path / "fresh-2026-12.jsonl", ENTRIES)
    fresh.seal(p)
    assert fresh.record_use(p, command="score") is not None
    return p


def test_renamed_ids_are_still_the_sample(sealed: Path) -> None:
    renamed = [dict(r, id=f"new-{i}") for i, r in enumerate(ENTRIES)]
    with pytest.raises(fresh.FreshReuseError, match="already used 1 time"):
        fresh.record_use(_entries(renamed), command="score")


def test_a_one_character_edit_is_still_the_sample(sealed: Path) -> None:
    edited = [dict(ENTRIES[0], id="x-0", query="Fernleaf FY2024 subscription revenues")]
    with pytest.raises(fresh.FreshReuseError):
        fresh.record_use(_entries(edited), command="score")
    # an edited quote (one word) with renamed ids and a reworded query case is too
    quote = dict(ENTRIES[2]["evidence_paths"][0][0][0], quote=PAGES[2].replace("2.1", "2.2"))
    edited = [
        dict(
            ENTRIES[2], id="x-2", query="FERN  net leverage at year-end", evidence_paths=[[[quote]]]
        )
    ]
    with pytest.raises(fresh.FreshReuseError):
        fresh.record_use(_entries(edited), command="score")


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Please tell me: ", " Thanks"),
        ("Hi! Could you please tell me ", "? Thank you."),
        ("I would like to know ", ", thanks"),
        ("Can you give me ", ""),
    ],
)
def test_a_query_wrapped_in_asking_words_is_still_the_sample(
    sealed: Path, before: str, after: str
) -> None:
    """Attack: every id renamed and each query wrapped in "Please tell me: ... Thanks" escaped the
    seal (the wrapper is more character edits than a query may differ by)."""
    wrapped = [
        dict(r, id=f"w-{i}", query=before + r["query"] + after) for i, r in enumerate(ENTRIES)
    ]
    with pytest.raises(fresh.FreshReuseError, match="already used 1 time"):
        fresh.record_use(_entries(wrapped), command="score")


def test_another_question_on_the_same_evidence_is_not_the_sample(sealed: Path) -> None:
    """Templated questions differ by a word and name other pages; distinct questions on one
    page differ by more than a few characters."""
    other = [
        dict(ENTRIES[0], id="o-1", query="Fernleaf FY2024 subscription revenue growth rate y/y"),
        dict(ENTRIES[1], id="o-2", query="Fernleaf FY2024 operating income", evidence_paths=[
            [[{"doc": "fern-10k", "page": 9, "quote": "Income from operations was $441 million"}]]
        ]),
    ]  # fmt: skip
    assert fresh.record_use(_entries(other), command="score") is None


def test_near_duplicate_rule() -> None:
    ev = frozenset({"page:d#1", "net", "leverage", "covenant", "times"})
    assert fresh.near_duplicate("fern max net leverage", ev, "fern max net leverages", ev)
    assert not fresh.near_duplicate("fern max net leverage", ev, "ffnl max net leverage", ev)
    assert not fresh.near_duplicate(
        "fern max net leverage", ev, "fern max net leverage", frozenset({"page:d#7", "revenue"})
    )
    # the words that only ask or thank are set aside; the words of the question are not
    wrapped = "please tell me fern max net leverage thanks"
    assert fresh.near_duplicate("fern max net leverage", ev, wrapped, ev)
    assert not fresh.near_duplicate("fern max net leverage", ev, "fern max net leverage us", ev)
    assert not fresh.near_duplicate("fern net leverage", ev, "please tell me fern debt", ev)
    # two entries without evidence are judged by their queries alone
    assert fresh.near_duplicate("is fern solvent", frozenset(), "is fern solvent?", frozenset())
    assert fresh.content_key(_entries([ENTRIES[0]])[0]) == fresh.content_key(
        _entries([dict(ENTRIES[0], id="renamed", query="FERNLEAF  fy2024 subscription revenue")])[0]
    )


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    ds = _write(tmp_path / "fresh-2027-01.jsonl", ENTRIES)
    chunks = _write(tmp_path / "chunks.jsonl", CHUNKS)
    run = _write(
        tmp_path / "run.jsonl",
        [{"id": e["id"], "retrieved": [f"fern/{i + 1}"]} for i, e in enumerate(ENTRIES)],
    )
    return ds, chunks, run


@pytest.mark.parametrize("first", ["attribute", "export", "report", "report-bundle"])
def test_every_reader_of_per_entry_results_records_a_use(first: str, tmp_path: Path) -> None:
    ds, chunks, run = _files(tmp_path)
    runner = CliRunner()
    bundle = tmp_path / "bundle.json"
    if first == "report-bundle":  # a bundle exported before the sample was sealed
        res = runner.invoke(
            app, ["export", str(ds), str(run), "--chunks", str(chunks), "--out", str(bundle)]
        )
        assert res.exit_code == 0, res.output
    assert runner.invoke(app, ["fresh", "seal", str(ds)]).exit_code == 0
    args = {
        "attribute": ["attribute", str(ds), str(run), "--chunks", str(chunks)],
        "export": ["export", str(ds), str(run), "--chunks", str(chunks), "--out", str(bundle)],
        "report": [
            "report",
            str(ds),
            str(run),
            "--chunks",
            str(chunks),
            "--out",
            str(tmp_path / "s"),
        ],
        "report-bundle": ["report", str(bundle), "--out", str(tmp_path / "s2")],
    }[first]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert [u["command"] for u in fresh.uses(ds)] == [first.split("-")[0]]
    again = runner.invoke(app, ["score", str(ds), str(run), "--chunks", str(chunks)])
    assert again.exit_code == 2 and "already used 1 time" in again.output, again.output
    # and the reader itself refuses a second look unless --allow-reuse
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "already used" in res.output, res.output
    res = runner.invoke(app, [*args, "--allow-reuse"])
    assert res.exit_code == 0, res.output
    assert [u["reuse"] for u in fresh.uses(ds)] == [False, True]
    assert load_dataset(ds)  # the sample itself is untouched
