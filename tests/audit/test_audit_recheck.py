"""Re-verification when filings arrive: on the synthetic room with one more quarter of filings
revealed, the seasonal audit lists exactly the unanswerable entries whose company and fiscal
period the new filings cover, each with the filings that trigger it."""

from __future__ import annotations

import datetime as dt
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.audit import audit_seasonal
from assay.cli import app
from assay.corpus import Document
from assay.dataset import load_dataset
from tests.audit.conftest import doc, write_jsonl

runner = CliRunner()
_FACT = re.compile(r"^(?P<cid>[a-z]+):[a-z_]+:FY(?P<fy>\d{4})(?:Q(?P<q>[1-4]))?$")


@cache
def _room() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The demo room's filings (metadata) and golden entries (seed 7, default scale)."""
    from assay.synth.generate import build_room

    room = build_room(seed=7)
    return [dict(d.meta) for d in room.docs], [dict(e) for e in room.golden]


def _reveal(
    tmp_path: Path, written: dt.date, revealed: dt.date
) -> tuple[Path, Path, Path, list[Document]]:
    """golden.jsonl written on `written` (its `added`), the room's filings public by then (old
    corpus) and by `revealed` (one more quarter); returns the paths and the new filings."""
    docs, golden = _room()
    old = [d for d in docs if dt.date.fromisoformat(d["accepted_at"]) <= written]
    new = [d for d in docs if dt.date.fromisoformat(d["accepted_at"]) <= revealed]
    g = write_jsonl(tmp_path / "golden.jsonl", [e | {"added": written.isoformat()} for e in golden])
    old_p = write_jsonl(tmp_path / "old.jsonl", old)
    new_p = write_jsonl(tmp_path / "new.jsonl", new)
    arrived = [Document.model_validate(d) for d in new if d not in old]
    return g, old_p, new_p, arrived


def _expected(golden: list[dict[str, Any]], arrived: list[Document]) -> dict[str, set[str]]:
    """The oracle, from the generator's own record of what each unanswerable entry asks (its
    absent fact id: company id, fiscal year, quarter), not from the query text: entry id -> the
    arrived filings of that company of that fiscal period (annual report or Q4 release for a
    year; that quarter's filings, or the annual report for Q4, for a quarter)."""
    out: dict[str, set[str]] = {}
    for e in golden:
        if e.get("answerable") is not False:
            continue
        m = _FACT.match(e["metadata"]["absent"]["facts"][0])
        assert m is not None
        cid, fy, q = m["cid"], int(m["fy"]), int(m["q"]) if m["q"] else None
        hits = set()
        for d in arrived:
            if not d.doc_id.startswith(cid + "-") or d.fiscal_year != fy:
                continue
            annual = d.form.startswith("10-K")
            if q is None:
                ok = annual or (d.fiscal_quarter == 4 and d.form in ("8-K", "EARNINGS"))
            else:
                ok = (d.fiscal_quarter == q and not annual) or (q == 4 and annual)
            if ok:
                hits.add(d.doc_id)
        if hits:
            out[e["id"]] = hits
    return out


# (entries written, one more quarter revealed): the Q3 filings; then the year-end filings
WINDOWS = [
    (dt.date(2024, 9, 30), dt.date(2024, 12, 31)),
    (dt.date(2024, 12, 31), dt.date(2025, 3, 31)),
]


@pytest.mark.parametrize(("written", "revealed"), WINDOWS)
def test_one_more_quarter_flags_exactly_the_unanswerable_entries_it_covers(
    tmp_path: Path, written: dt.date, revealed: dt.date
) -> None:
    g, old_p, new_p, arrived = _reveal(tmp_path, written, revealed)
    ds = load_dataset(g)
    before = audit_seasonal(ds, [Document.model_validate(d) for d in _read(old_p)])
    assert before.recheck == []  # nothing arrived since the entries were written
    rep = audit_seasonal(ds, [Document.model_validate(d) for d in _read(new_p)])
    got = {r.id: {c.doc_id for c in r.filings} for r in rep.recheck}
    want = _expected(_room()[1], arrived)
    assert want, "the revealed quarter must answer some unanswerable entry"
    assert got == want
    n_unanswerable = sum(1 for e in ds.entries if e.answerable is False)
    assert len(got) < n_unanswerable  # and others stay unflagged
    for r in rep.recheck:
        assert r.answerable == "false" and r.reference_date == written
        assert all(c.accepted_at > written for c in r.filings)


def test_fiscal_calendar_decides_which_quarter_a_filing_covers(tmp_path: Path) -> None:
    """Kestrel's fiscal year ends in June: its 'Q3 FY24' ended in March 2024, long filed, so the
    calendar Q3 2024 filings arriving in the autumn must not flag it; Summit Trail's (December
    year end) 'Q3' entry is flagged by its Q3 10-Q, 8-K and release."""
    g, _, new_p, _ = _reveal(tmp_path, *WINDOWS[0])
    rep = audit_seasonal(load_dataset(g), [Document.model_validate(d) for d in _read(new_p)])
    by_query = {r.query: r for r in rep.recheck}
    assert "Kestrel $100k+ customers Q3 FY24" not in by_query
    summ = by_query["criticized loans at end of 3Q24 SUMM"]
    assert summ.periods == ["Q3 FY2024"]
    assert [(c.doc_id, c.kind) for c in summ.filings] == [
        ("summ-2024-q3-8k", "same period"),
        ("summ-2024-q3-ex99", "same period"),
        ("summ-2024-q3-10q", "same period"),
    ]


def _read(p: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in p.read_text().splitlines()]


def _small(tmp_path: Path) -> tuple[Path, Path]:
    """ACME (fiscal year ends in June, named by its end) and BETA; four unanswerable entries
    written on 2024-08-01, one partial."""
    docs = write_jsonl(
        tmp_path / "documents.jsonl",
        [
            doc("acme-2024-10k", "ACME", "10-K", "2024-06-30", "2024-08-20", fiscal_year=2024),
            doc(
                "acme-2023-10ka",
                "ACME",
                "10-K/A",
                "2023-06-30",
                "2024-09-01",
                fiscal_year=2023,
                amends="acme-2023-10k",
            ),
            doc("acme-2023-10k", "ACME", "10-K", "2023-06-30", "2023-08-20", fiscal_year=2023),
            doc(
                "acme-2025-q1-10q",
                "ACME",
                "10-Q",
                "2024-09-30",
                "2024-11-05",
                fiscal_year=2025,
                fiscal_quarter=1,
            ),
            doc("acme-8k-event", "ACME", "8-K", "2024-10-01", "2024-10-01", fiscal_year=2025),
            doc("beta-2024-10k", "BETA", "10-K", "2024-12-31", "2025-02-20", fiscal_year=2024),
            doc(
                "beta-2024-q2-10q",
                "BETA",
                "10-Q",
                "2024-06-30",
                "2024-07-30",
                fiscal_year=2024,
                fiscal_quarter=2,
            ),
        ],
    )
    base = {"category": "unanswerable", "answerable": False, "added": "2024-08-01"}
    golden = write_jsonl(
        tmp_path / "golden.jsonl",
        [
            {"id": "fy24", "query": "ACME segment margin FY2024", **base},  # 10-K came 08-20
            {"id": "fy23", "query": "ACME segment margin fiscal 2023", **base},  # its 10-K/A
            {"id": "q1", "query": "ACME backlog Q1 fiscal 2025", **base},  # the 10-Q
            {"id": "q2", "query": "ACME backlog Q2 FY25", **base},  # nothing yet
            {"id": "beta", "query": "BETA RPO FY2023", **base},  # other period
            {
                "id": "part",
                "query": "Beta Corp FY2024 NII and its outlook",
                "category": "numeric_lookup",
                "answerable": "partial",
                "added": "2024-08-01",
                "reference_answer": "x",
                "evidence_paths": [[[{"doc": "beta-2024-q2-10q", "page": 1, "quote": "NII"}]]],
            },
            {"id": "undated", "query": "ACME backlog Q1 fiscal 2025", "category": "u"}
            | {"answerable": False},
        ],
    )
    return golden, docs


def test_periods_amendments_and_event_8ks(tmp_path: Path) -> None:
    golden, docs = _small(tmp_path)
    rep = audit_seasonal(load_dataset(golden), [Document.model_validate(d) for d in _read(docs)])
    got = {r.id: [(c.doc_id, c.kind) for c in r.filings] for r in rep.recheck}
    assert got == {
        "fy24": [("acme-2024-10k", "same period")],
        "fy23": [("acme-2023-10ka", "amendment")],
        "q1": [("acme-2025-q1-10q", "same period")],
        "part": [("beta-2024-10k", "same period")],
    }
    assert rep.undated_unanswerable == ["undated"]
    # undated entries are placed by --since
    rep = audit_seasonal(
        load_dataset(golden),
        [Document.model_validate(d) for d in _read(docs)],
        since=dt.date(2024, 11, 1),
    )
    assert sorted(r.id for r in rep.recheck) == ["part", "q1", "undated"]


def test_cli_formats_and_queue_to_workbench(tmp_path: Path) -> None:
    golden, docs = _small(tmp_path)
    wb = tmp_path / "wb.db"
    args = ["audit", "seasonal", str(golden), "--corpus", str(docs)]
    res = runner.invoke(app, [*args, "--queue", f"sqlite:///{wb}", "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert [r["id"] for r in out["recheck"]] == ["fy24", "fy23", "q1", "part"]
    assert out["recheck"][2]["filings"][0]["doc_id"] == "acme-2025-q1-10q"
    assert out["queued_recheck"]["added"] == 4
    from assay.workbench.db import Database
    from assay.workbench.models import Item, Task

    db = Database(f"sqlite:///{wb}")
    with db.read() as s:
        item = s.get(Item, "q1")
        assert item is not None
        audit = item.entry["metadata"]["audit"]
        assert audit["audit"] == "recheck" and "acme-2025-q1-10q" in audit["reasons"][0]
        assert s.get(Item, "q2") is None and s.get(Item, "beta") is None
        assert any(t.item_id == "q1" for t in s.query(Task).all())
    for fmt in ("table", "markdown"):
        res = runner.invoke(app, [*args, "-f", fmt])
        assert res.exit_code == 0, res.output
        assert "acme-2025-q1-10q" in res.output and "re-check Q1 FY2025" in res.output


FB = next(
    (p / "shared" / "financebench" for p in Path(__file__).resolve().parents
     if (p / "shared" / "financebench").is_dir()),
    Path("shared") / "financebench",
)  # fmt: skip


@pytest.mark.skipif(
    not (FB / "questions_dev.jsonl").exists(), reason="FinanceBench dev split not present"
)
def test_financebench_questions_written_the_day_before_their_filing() -> None:
    """Real queries and real fiscal calendars (Walmart, Nike, Adobe...): each FinanceBench
    question, posed as an unanswerable entry written the day before the filing that answers it
    became public, is flagged with that filing among its triggers, except where the query names
    no period or only an event 8-K (a date, a CEO change) answers it."""
    from assay.audit.recheck import recheck_entries
    from assay.corpus import load_documents_any
    from assay.dataset import Entry

    docs = load_documents_any(FB / "documents.jsonl")
    by_id = {d.doc_id: d for d in docs}
    entries, answer = [], {}
    for i, q in enumerate(_read(FB / "questions_dev.jsonl")):
        d = by_id[q["doc_name"]]
        assert d.accepted_at is not None
        added = (d.accepted_at - dt.timedelta(days=1)).isoformat()
        e = {"id": f"fb{i}", "query": q["question"], "category": "u", "answerable": False}
        entries.append(Entry.model_validate(e | {"added": added}))
        answer[f"fb{i}"] = d.doc_id
    found, undated = recheck_entries(entries, docs)
    hit = [r for r in found if answer[r.id] in {c.doc_id for c in r.filings}]
    assert undated == [] and len(entries) >= 75
    assert len(hit) >= 65  # measured: 65 of 75
    # no filing listed is of another company or public before the entry was written
    for r in found:
        for c in r.filings:
            assert by_id[c.doc_id].company == by_id[answer[r.id]].company
            assert c.accepted_at > r.reference_date
