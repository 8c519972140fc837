"""Inputs that cannot hurt (issue 11): every command that reads files, fed a directory instead of
a file, a binary or non-UTF-8 run, k of 0 or below, an empty dataset, one with no answerable
entry, NaN and Infinity scores, an unwritable output path and an output path equal to an input.

Each must exit 2 with FILE:LINE: field: message or a one-line error naming the path, show no
traceback, leave every input byte-identical and write no file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from tests.cli.test_every_command import assert_clean_failure

runner = CliRunner()
FAST = ["--resamples", "200", "--permutations", "200"]


def _entries(n: int = 8, answerable: bool = True) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(n):
        cat = "lookup" if i % 2 else "trend"
        e: dict[str, object] = {"id": f"e{i}", "query": f"question {i}", "category": cat}
        if answerable:
            e["evidence_paths"] = [[[f"doc/1/{i}"]]]
        else:
            e["answerable"] = False
        out.append(e)
    return out


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run_rows(n: int = 8, score: float | str = 1.0) -> list[dict[str, object]]:
    rows = []
    for i in range(n):
        hits = [{"chunk_id": f"doc/1/{i}", "score": score}, {"chunk_id": "doc/9/9", "score": 0.5}]
        rows.append({"id": f"e{i}", "retrieved": hits})
    return rows


@dataclass
class Room:
    tmp: Path
    golden: Path
    base: Path
    cand: Path
    empty: Path
    unanswerable: Path
    adir: Path
    binary: Path
    latin1: Path
    nan_run: Path
    inf_run: Path
    trec: Path
    labels: Path
    afile: Path  # a plain file, used as the parent of an "unwritable" output path

    def snapshot(self) -> dict[str, bytes | None]:
        return {
            str(p.relative_to(self.tmp)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(self.tmp.rglob("*"))
        }


@pytest.fixture
def room(tmp_path: Path) -> Room:
    return make_room(tmp_path)


def make_room(t: Path) -> Room:
    (t / "adir").mkdir()
    bad_nan = "".join(
        f'{{"id": "e{i}", "retrieved": [{{"chunk_id": "doc/1/{i}", "score": NaN}}]}}\n'
        for i in range(8)
    )
    bad_inf = "".join(
        f'{{"id": "e{i}", "retrieved": [{{"chunk_id": "doc/1/{i}", "score": -Infinity}}]}}\n'
        for i in range(8)
    )
    (t / "nan.jsonl").write_text(bad_nan, encoding="utf-8")
    (t / "inf.jsonl").write_text(bad_inf, encoding="utf-8")
    (t / "binary.jsonl").write_bytes(bytes(range(256)) * 4)
    (t / "latin1.jsonl").write_bytes(
        json.dumps({"id": "e0", "retrieved": ["doc/1/0"]}).encode()
        + b"\n"
        + '{"id": "e1", "retrieved": ["caf\xe9"]}\n'.encode("latin-1")
    )
    (t / "run.trec").write_text("e0 Q0 doc/1/0 1 NaN tag\n", encoding="utf-8")
    labels = [
        {"item": f"i{i}", "rater": r, "label": (i + j) % 2}
        for i in range(6)
        for j, r in enumerate("ab")
    ]
    (t / "afile").write_text("not a folder\n", encoding="utf-8")
    return Room(
        tmp=t,
        golden=_write(t / "golden.jsonl", _entries()),
        base=_write(t / "base.jsonl", _run_rows()),
        cand=_write(t / "cand.jsonl", _run_rows(score=0.9)),
        empty=_write(t / "empty.jsonl", []),
        unanswerable=_write(t / "unans.jsonl", _entries(answerable=False)),
        adir=t / "adir",
        binary=t / "binary.jsonl",
        latin1=t / "latin1.jsonl",
        nan_run=t / "nan.jsonl",
        inf_run=t / "inf.jsonl",
        trec=t / "run.trec",
        labels=_write(t / "labels.jsonl", labels),  # type: ignore[arg-type]
        afile=t / "afile",
    )


Case = Callable[[Room], list[str]]

# (input kind, command) -> argv; each must exit 2 and leave everything untouched.
CASES: dict[str, Case] = {
    # a directory where a file is expected
    "dir/validate": lambda r: ["validate", str(r.adir)],
    "dir/score-dataset": lambda r: ["score", str(r.adir), str(r.base)],
    "dir/score-run": lambda r: ["score", str(r.golden), str(r.adir)],
    "dir/score-chunks": lambda r: ["score", str(r.golden), str(r.base), "--chunks", str(r.adir)],
    "dir/compare": lambda r: ["compare", str(r.golden), str(r.base), str(r.adir), *FAST],
    "dir/gate": lambda r: ["gate", str(r.golden), str(r.adir), str(r.cand), *FAST],
    "dir/gate-margins": lambda r: [
        "gate",
        str(r.golden),
        str(r.base),
        str(r.cand),
        "--margins",
        str(r.adir),
        *FAST,
    ],
    "dir/check": lambda r: ["check", str(r.golden), str(r.adir)],
    "dir/split": lambda r: ["split", str(r.adir)],
    "dir/trec-export": lambda r: ["trec", "export", str(r.adir), "--qrels", str(r.tmp / "q.qrels")],
    "dir/trec-import": lambda r: ["trec", "import", str(r.adir), "--out", str(r.tmp / "r.jsonl")],
    "dir/agreement": lambda r: ["agreement", str(r.adir)],
    "dir/judge-calibrate": lambda r: [
        *("judge", "calibrate", "--human", str(r.adir), "--judge", str(r.labels))
    ],
    "dir/fresh-seal": lambda r: ["fresh", "seal", str(r.adir)],
    "dir/plan": lambda r: [
        "plan",
        "--delta",
        "0.1",
        "--dataset",
        str(r.golden),
        "--base",
        str(r.adir),
        "--cand",
        str(r.cand),
    ],
    "dir/import-financebench": lambda r: [
        "import",
        "financebench",
        str(r.adir),
        "--out",
        str(r.tmp / "fb.jsonl"),
    ],
    "dir/corpus-build-meta": lambda r: [
        "corpus",
        "build",
        str(r.tmp),
        "--meta",
        str(r.adir),
        "--out",
        str(r.tmp / "corpus"),
    ],
    "dir/synth-check": lambda r: ["synth", "check", str(r.adir)],
    "dir/run": lambda r: [
        "run",
        str(r.adir),
        "--system",
        "bm25",
        "--out",
        str(r.tmp / "run.jsonl"),
    ],
    # a binary or non-UTF-8 run file
    "binary/score": lambda r: ["score", str(r.golden), str(r.binary)],
    "latin1/score": lambda r: ["score", str(r.golden), str(r.latin1)],
    "binary/compare": lambda r: ["compare", str(r.golden), str(r.binary), str(r.cand), *FAST],
    "latin1/gate": lambda r: ["gate", str(r.golden), str(r.base), str(r.latin1), *FAST],
    "binary/check": lambda r: ["check", str(r.golden), str(r.binary)],
    "binary/trec-import": lambda r: [
        "trec",
        "import",
        str(r.binary),
        "--out",
        str(r.tmp / "r.jsonl"),
    ],
    "binary/trec-export": lambda r: [
        "trec",
        "export",
        str(r.golden),
        "--run",
        str(r.binary),
        "--run-out",
        str(r.tmp / "r.trec"),
    ],
    "binary/validate-dataset": lambda r: ["validate", str(r.binary)],
    "binary/split": lambda r: ["split", str(r.binary)],
    "binary/agreement": lambda r: ["agreement", str(r.binary)],
    "binary/fresh-seal": lambda r: ["fresh", "seal", str(r.binary)],
    # k of 0 and below
    "k0/score": lambda r: ["score", str(r.golden), str(r.base), "--k", "0"],
    "k-1/score": lambda r: ["score", str(r.golden), str(r.base), "--k", "-1"],
    "k0/compare": lambda r: ["compare", str(r.golden), str(r.base), str(r.cand), "--k", "0", *FAST],
    "k-1/gate": lambda r: ["gate", str(r.golden), str(r.base), str(r.cand), "--k", "-1", *FAST],
    "k0/run": lambda r: [
        "run",
        str(r.golden),
        "--system",
        "bm25",
        "--out",
        str(r.tmp / "run.jsonl"),
        "--k",
        "0",
    ],
    "k0/plan": lambda r: [
        "plan",
        "--delta",
        "0.1",
        "--dataset",
        str(r.golden),
        "--base",
        str(r.base),
        "--cand",
        str(r.cand),
        "--k",
        "0",
    ],
    "k0/metric": lambda r: ["score", str(r.golden), str(r.base), "--metrics", "recall@0"],
    # an empty dataset, and one with no answerable entry
    "empty/score": lambda r: ["score", str(r.empty), str(r.base)],
    "empty/compare": lambda r: ["compare", str(r.empty), str(r.base), str(r.cand), *FAST],
    "empty/gate": lambda r: ["gate", str(r.empty), str(r.base), str(r.cand), *FAST],
    "empty/split": lambda r: ["split", str(r.empty)],
    "empty/trec-export": lambda r: [
        "trec",
        "export",
        str(r.empty),
        "--qrels",
        str(r.tmp / "q.qrels"),
    ],
    "empty/fresh-seal": lambda r: ["fresh", "seal", str(r.empty)],
    "unanswerable/score": lambda r: ["score", str(r.unanswerable), str(r.base)],
    "unanswerable/compare": lambda r: [
        "compare",
        str(r.unanswerable),
        str(r.base),
        str(r.cand),
        *FAST,
    ],
    "unanswerable/gate": lambda r: ["gate", str(r.unanswerable), str(r.base), str(r.cand), *FAST],
    "unanswerable/trec-export": lambda r: [
        "trec",
        "export",
        str(r.unanswerable),
        "--qrels",
        str(r.tmp / "q.qrels"),
    ],
    # NaN and Infinity scores in run files
    "nan/score": lambda r: ["score", str(r.golden), str(r.nan_run)],
    "inf/compare": lambda r: ["compare", str(r.golden), str(r.base), str(r.inf_run), *FAST],
    "nan/trec-export": lambda r: [
        "trec",
        "export",
        str(r.golden),
        "--run",
        str(r.nan_run),
        "--run-out",
        str(r.tmp / "r.trec"),
        "--scores",
        "system",
    ],
    "nan/trec-import": lambda r: ["trec", "import", str(r.trec), "--out", str(r.tmp / "r.jsonl")],
    # an output path that cannot be written (its parent is a file)
    "unwritable/score": lambda r: [
        "score",
        str(r.golden),
        str(r.base),
        "--per-entry",
        str(r.afile / "x.jsonl"),
    ],
    "unwritable/compare": lambda r: [
        "compare",
        str(r.golden),
        str(r.base),
        str(r.cand),
        "--out",
        str(r.afile / "c.json"),
        *FAST,
    ],
    "unwritable/gate": lambda r: [
        "gate",
        str(r.golden),
        str(r.base),
        str(r.cand),
        "--summary",
        str(r.afile / "pr.md"),
        *FAST,
    ],
    "unwritable/split": lambda r: ["split", str(r.golden), "--test-out", str(r.afile / "t.jsonl")],
    "unwritable/trec-export": lambda r: [
        "trec",
        "export",
        str(r.golden),
        "--qrels",
        str(r.afile / "q.qrels"),
    ],
    "unwritable/trec-import": lambda r: [
        "trec",
        "import",
        str(r.trec),
        "--out",
        str(r.afile / "r.jsonl"),
    ],
    "unwritable/schema": lambda r: ["schema", "--out", str(r.afile / "s.json")],
    "unwritable/run": lambda r: [
        "run",
        str(r.golden),
        "--system",
        "bm25",
        "--out",
        str(r.afile / "r.jsonl"),
    ],
    "unwritable/agreement": lambda r: [
        "agreement",
        str(r.labels),
        "--out",
        str(r.afile / "a.json"),
    ],
    # an output path equal to an input path
    "same/split-train": lambda r: ["split", str(r.golden), "--train-out", str(r.golden)],
    "same/split-test": lambda r: ["split", str(r.golden), "--test-out", str(r.golden)],
    "same/split-sides": lambda r: [
        "split",
        str(r.golden),
        "--train-out",
        str(r.tmp / "x.jsonl"),
        "--test-out",
        str(r.tmp / "x.jsonl"),
    ],
    "same/score-per-entry": lambda r: [
        "score",
        str(r.golden),
        str(r.base),
        "--per-entry",
        str(r.base),
    ],
    "same/compare-out": lambda r: [
        "compare",
        str(r.golden),
        str(r.base),
        str(r.cand),
        "--out",
        str(r.golden),
        *FAST,
    ],
    "same/gate-summary": lambda r: [
        "gate",
        str(r.golden),
        str(r.base),
        str(r.cand),
        "--summary",
        str(r.cand),
        *FAST,
    ],
    "same/trec-export-qrels": lambda r: ["trec", "export", str(r.golden), "--qrels", str(r.golden)],
    "same/trec-export-run": lambda r: [
        "trec",
        "export",
        str(r.golden),
        "--run",
        str(r.base),
        "--run-out",
        str(r.base),
    ],
    "same/trec-import": lambda r: ["trec", "import", str(r.trec), "--out", str(r.trec)],
    "same/run": lambda r: ["run", str(r.golden), "--system", "bm25", "--out", str(r.golden)],
    "same/check-out": lambda r: ["check", str(r.golden), str(r.base), "--out", str(r.base)],
    "same/agreement-out": lambda r: ["agreement", str(r.labels), "--out", str(r.labels)],
    "same/judge-calibrate-out": lambda r: [
        *("judge", "calibrate", "--human", str(r.labels), "--judge", str(r.labels)),
        *("--out", str(r.labels)),
    ],
    "same/import-financebench": lambda r: [
        "import",
        "financebench",
        str(r.labels),
        "--out",
        str(r.labels),
    ],
    "same/corpus-build": lambda r: ["corpus", "build", str(r.tmp), "--out", str(r.tmp)],
}


# `validate` is the check of a dataset: a file with problems is its failing verdict (exit 1)
EXIT = {"binary/validate-dataset": 1}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_input(case: str, room: Room) -> None:
    argv = CASES[case](room)
    before = room.snapshot()
    result = runner.invoke(app, argv)
    text = assert_clean_failure(result, EXIT.get(case, 2))
    # the message names the file at fault (FILE or FILE:LINE), or the option at fault
    if case.startswith("k"):  # names the cutoff at fault
        assert "'--k'" in text or "k must" in text, text
    else:
        assert str(room.tmp) in text.replace("\n", ""), text
    after = room.snapshot()
    assert after == before, f"{case}: files changed: {sorted(set(after) ^ set(before))}\n{text}"


def test_the_room_is_valid(room: Room) -> None:
    """The hostile cases fail for their hostile input, not because the room itself is broken."""
    out = room.tmp / "out"
    for argv in (
        ["validate", str(room.golden)],
        ["score", str(room.golden), str(room.base), "--per-entry", str(out / "pe.jsonl")],
        ["compare", str(room.golden), str(room.base), str(room.cand), *FAST, "--no-record"],
        [
            "split",
            str(room.golden),
            "--train-out",
            str(out / "a.jsonl"),
            "--test-out",
            str(out / "b.jsonl"),
        ],
        ["trec", "export", str(room.golden), "--qrels", str(out / "q.qrels")],
        ["agreement", str(room.labels), "--out", str(out / "a.json")],
    ):
        result = runner.invoke(app, argv)
        assert result.exit_code == 0, (argv, result.output)


@pytest.mark.parametrize(
    ("flag", "argv"),
    [
        ("--delta", ["plan", "--delta", "nan", "--discordant", "0.06"]),
        ("--delta", ["plan", "--delta", "inf", "--rate", "0.8"]),
        ("--rate", ["plan", "--delta", "0.03", "--rate", "nan"]),
        ("--discordant", ["plan", "--delta", "0.03", "--discordant", "-inf"]),
        ("--power", ["plan", "--delta", "0.03", "--rate", "0.8", "--power", "nan"]),
    ],
)
def test_plan_names_the_option_that_is_not_a_number(flag: str, argv: list[str]) -> None:
    text = assert_clean_failure(runner.invoke(app, argv), 2)
    assert f"{flag}: must be a finite number" in text, text
