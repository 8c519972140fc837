from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.audit import (
    apply_corrections,
    audit_labels,
    audit_labels_files,
    bump_version,
    ledger_runs,
)
from assay.audit.label_audit import fact_figures
from assay.cli import app
from assay.corpus import load_chunks
from assay.dataset import load_dataset, load_manifest, save_manifest
from assay.errors import DataError
from assay.runs import load_run
from tests.audit.conftest import write_jsonl

runner = CliRunner()

TEXTS = {
    "c1": "Deposits were $5,000 million at year end.",
    "c2": "Net income was $77 million.",
    "c3": "Loans held for investment were $900 million.",
    "c4": "Revenue was $123 million in fiscal 2023.",
    "c5": "Revenue 948,627 812,000",
    "c9": "Deposits rose to five billion dollars.",
}


def _entries() -> list[dict[str, Any]]:
    return [
        {"id": "e1", "query": "deposits FY23", "category": "a", "evidence_paths": [[["c1"]]]},
        {"id": "e2", "query": "net income FY23", "category": "a", "evidence_paths": [[["c2"]]]},
        {
            "id": "e3",
            "query": "loans FY23",
            "category": "a",
            "evidence_paths": [[["c3"]]],
            "chunk_hashes": {"c3": "0000000000000000"},
        },
        {
            "id": "e4",
            "query": "revenue FY23",
            "category": "b",
            "evidence_paths": [[["c4"]]],
            "key_facts": [{"fact": "revenue for fiscal 2023 (ended 2023-12-31): $999 million"}],
        },
        {
            "id": "e5",
            "query": "revenue FY22",
            "category": "b",
            "evidence_paths": [[["c5"]]],
            "key_facts": [{"fact": "FY2022: $948,627 thousand ($948.6 million)"}],
            "reviewed_by": 1,
        },
        {"id": "e6", "query": "Acme guidance for 2030", "category": "b", "answerable": False},
    ]


def _run(path: Path, hits: dict[str, list[str]]) -> Path:
    return write_jsonl(
        path,
        [
            {
                "id": i,
                "retrieved": [{"chunk_id": c, "score": 1.0 - 0.1 * r} for r, c in enumerate(h)],
            }
            for i, h in hits.items()
        ],
    )


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    golden = write_jsonl(tmp_path / "golden.jsonl", _entries())
    chunks = write_jsonl(
        tmp_path / "chunks.jsonl",
        [{"chunk_id": c, "doc_id": "d", "page": 1, "text": t} for c, t in TEXTS.items()],
    )
    hits = {"e1": ["c9"], "e2": ["c2"], "e4": ["c4"], "e5": ["c5"]}
    (tmp_path / "runs").mkdir()
    r1 = _run(tmp_path / "runs" / "r1.jsonl", hits)
    r2 = _run(tmp_path / "runs" / "r2.jsonl", hits | {"e2": ["c9", "c2"]})
    judged = write_jsonl(
        tmp_path / "judged.jsonl",
        [
            {"id": "e1", "pass": True},
            {"id": "e2", "pass": True},
            {"id": "e6", "verdict": "pass"},
            {"id": "e4", "pass": None},
        ],
    )
    return {"golden": golden, "chunks": chunks, "r1": r1, "r2": r2, "judged": judged}


def test_signals_and_ranking(files: dict[str, Path]) -> None:
    ds = load_dataset(files["golden"])
    rep = audit_labels(
        ds,
        runs=[load_run(files["r1"]), load_run(files["r2"])],
        chunks=load_chunks(files["chunks"]),
        judged={"e1": True, "e2": True, "e6": True},
        confident_learning=False,
    )
    got = [(r.id, r.score, sorted(s.name for s in r.signals)) for r in rep.rows]
    assert got == [
        ("e1", 5.0, ["fails_across_runs", "judge_accepts_off_gold"]),
        ("e6", 3.0, ["judge_accepts_off_gold"]),
        ("e3", 2.0, ["gold_chunk_changed"]),
        ("e4", 1.5, ["key_fact_unsupported"]),
        ("e5", 0.5, ["few_reviewers"]),
    ]
    assert rep.counts()["fails_across_runs"] == 1
    assert any("do not record how many experts" in n for n in rep.notes)


def test_fact_figures() -> None:
    assert fact_figures("revenue for fiscal 2023 (ended 2023-12-31): $1,234.50 million") == {
        "1234.5"
    }
    assert fact_figures("FY2022: 2,103,686 vs Q2 FY21 17%") == {"2103686", "17"}


def test_files_judged_and_ledger_runs(files: dict[str, Path]) -> None:
    # the ledger names runs by hash: r1 is found under the dataset's folder, one is lost
    h1 = hashlib.sha256(files["r1"].read_bytes()).hexdigest()[:16]
    h2 = hashlib.sha256(files["r2"].read_bytes()).hexdigest()[:16]
    ledger = files["golden"].with_name("golden.ledger.jsonl")
    write_jsonl(
        ledger,
        [
            {"t": 1, "base_run": h1, "cand_run": h2},
            {"t": 2, "base_run": h1, "cand_run": "feedfacefeedface"},
        ],
    )
    found, lost = ledger_runs(files["golden"])
    assert [p.name for p in found] == ["r1.jsonl", "r2.jsonl"] and lost == ["feedfacefeedface"]
    rep = audit_labels_files(
        files["golden"], chunks=files["chunks"], judged=files["judged"], confident_learning=False
    )
    assert [r.id for r in rep.rows][:2] == ["e1", "e6"]
    assert len(rep.runs) == 2 and rep.judged is not None
    assert any("1 ledger run(s) not found" in n for n in rep.notes)


def test_bad_judged_file_names_line(files: dict[str, Path], tmp_path: Path) -> None:
    bad = write_jsonl(
        tmp_path / "bad.jsonl", [{"id": "e1", "pass": True}, {"id": "e2", "pass": "maybe"}]
    )
    with pytest.raises(DataError) as exc:
        audit_labels_files(
            files["golden"], runs=[files["r1"]], judged=bad, confident_learning=False
        )
    assert f"{bad}:2: pass" in str(exc.value)


@pytest.mark.skipif(importlib.util.find_spec("cleanlab") is None, reason="cleanlab not installed")
def test_confident_learning_finds_a_mislabelled_category(tmp_path: Path) -> None:
    words = {
        "lookup": ["revenue", "deposits", "eps", "loans", "income", "margin", "assets", "debt"],
        "compare": [
            "growth y/y",
            "vs prior year",
            "change y/y",
            "increase vs",
            "yoy delta",
            "versus last",
            "growth rate",
            "compared with",
        ],
        "filing": [
            "commission file number",
            "cik",
            "state of incorporation",
            "auditor name",
            "registrant address",
            "ein",
            "exchange listing",
            "ticker symbol",
        ],
    }
    rows = []
    for cat, ws in words.items():
        for i, w in enumerate(ws):
            rows.append({"id": f"{cat}-{i}", "query": f"{w} {cat} acme fy2{i}", "category": cat})
    rows[3]["category"] = "filing"  # "loans lookup acme fy23" labelled as a filing question
    ds = load_dataset(write_jsonl(tmp_path / "g.jsonl", rows))
    rep = audit_labels(ds, seed=0)
    flagged = {r.id for r in rep.rows if any(s.name == "confident_learning" for s in r.signals)}
    assert "lookup-3" in flagged
    assert len(flagged) <= 3


def test_cleanlab_missing_is_a_note(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "cleanlab" else real(name, *a)
    )
    rep = audit_labels(load_dataset(files["golden"]))
    assert any("cleanlab is not installed" in n and "assay[audit]" in n for n in rep.notes)


def test_bump_version() -> None:
    assert bump_version("1.4.2") == "1.4.3"
    assert bump_version("v7") == "v8"
    assert bump_version("2026.10-rc9") == "2026.10-rc10"
    assert bump_version("draft") == "draft.1"
    assert bump_version(None) == "1"


def test_corrections_land_in_the_changelog(files: dict[str, Path], tmp_path: Path) -> None:
    g = files["golden"]
    save_manifest(g, {"version": "1.2"})
    fixed = _entries()[3] | {"key_facts": [{"fact": "revenue for fiscal 2023: $123 million"}]}
    corr = write_jsonl(
        tmp_path / "corr.jsonl", [{"reason": "key fact misread: 123, not 999", "entry": fixed}]
    )
    rep = apply_corrections(g, corr)
    assert (rep.old_version, rep.new_version) == ("1.2", "1.3")
    ds = load_dataset(g)
    assert ds.version == "1.3" and ds.by_id["e4"].key_facts[0].fact.endswith("$123 million")
    assert len(ds) == 6
    last = load_manifest(g)["changelog"][-1]
    assert last["kind"] == "corrections" and last["version"] == "1.3"
    assert last["corrections"] == [
        {"id": "e4", "reason": "key fact misread: 123, not 999", "fields": ["key_facts"]}
    ]


def test_bad_corrections_write_nothing(files: dict[str, Path], tmp_path: Path) -> None:
    g = files["golden"]
    before = g.read_bytes()
    corr = write_jsonl(
        tmp_path / "corr.jsonl",
        [
            {"entry": _entries()[0]},
            {"reason": "x", "entry": {"id": "zz", "query": "q", "category": "c"}},
        ],
    )
    res = runner.invoke(app, ["audit", "correct", str(g), str(corr)])
    assert res.exit_code == 2
    assert f"{corr}:1: reason" in res.output and f"{corr}:2: entry.id" in res.output
    assert g.read_bytes() == before


def test_cli_labels_to_workbench(files: dict[str, Path], tmp_path: Path) -> None:
    wb = tmp_path / "wb.db"
    res = runner.invoke(
        app,
        [
            "audit",
            "labels",
            str(files["golden"]),
            "--runs",
            str(files["r1"]),
            "--runs",
            str(files["r2"]),
            "--chunks",
            str(files["chunks"]),
            "--judged",
            str(files["judged"]),
            "--no-cleanlab",
            "--top",
            "2",
            "--to-workbench",
            f"sqlite:///{wb}",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert [r["id"] for r in out["rows"]][:2] == ["e1", "e6"]
    assert out["queued"]["added"] == 2


def _assay_judged(path: Path, verdicts: dict[str, tuple[bool, bool]]) -> Path:
    return write_jsonl(
        path,
        [
            {
                "id": i,
                "category": "a",
                "judge_hash": "j" * 64,
                "supported": s,
                "matches_reference": m,
                "critiques": {"supported": "-", "matches_reference": "-"},
            }
            for i, (s, m) in verdicts.items()
        ],
    )


def test_judge_run_file_system_and_judge_disagree_with_gold(
    files: dict[str, Path], tmp_path: Path
) -> None:
    judged = _assay_judged(
        tmp_path / "judged_run.jsonl",
        {"e2": (True, False), "e4": (False, False), "e5": (True, True)},
    )
    rep = audit_labels_files(
        files["golden"],
        runs=[files["r1"]],
        chunks=files["chunks"],
        judged=judged,
        confident_learning=False,
    )
    flagged = {r.id for r in rep.rows if any(s.name == "judge_contradicts_gold" for s in r.signals)}
    assert flagged == {"e2"}
    assert rep.judged is not None and rep.judged["judge_hash"] == "j" * 64
    assert any("calibration was not checked" in n for n in rep.notes)
    from assay.stats.calibration import CALIBRATION_KIND

    other = tmp_path / "cal.json"
    other.write_text(json.dumps({"kind": CALIBRATION_KIND, "judge_hash": "k" * 64}))
    with pytest.raises(DataError, match="judge_hash"):
        audit_labels_files(
            files["golden"], judged=judged, calibration=other, confident_learning=False
        )
