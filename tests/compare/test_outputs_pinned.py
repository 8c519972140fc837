"""What `assay compare`, `assay gate` and the leaderboard print, pinned byte for byte.

The small synthetic room (`tests.compare.room_runs`) with runs that break chosen numeric
lookups and miss chosen decoys is compared, gated and ranked in each output format, and every
output must equal the file kept under ``tests/compare/pinned/`` (with the temporary folder
written ``<tmp>``). A change of what the commands print shows here as a diff; one that is meant
regenerates the files (``python -m tests.compare.test_outputs_pinned``) and is reviewed as such.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.compare.room_runs import ids_of, room, write_chunks, write_run_file
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401
from assay.cli import app

PINNED = Path(__file__).parent / "pinned"
FAST = "--resamples 200 --permutations 200"
SERIES = "--metrics complete@5,recall@5,answer_correct,numbers_verified"
PAIR = "{g} {base} {cand}"

# name -> the commands run in order in a fresh copy of the room (the last one's output is
# pinned; a "{summary}" argument is the Markdown summary file, pinned instead), its exit code
CASES: dict[str, tuple[list[str], int]] = {
    "compare.json": ([f"compare {PAIR} {SERIES} -f json"], 0),
    # the second look is the same comparison: the ledger keeps its number
    "compare.table": ([f"compare {PAIR} {SERIES} {FAST}"] * 2, 0),
    "compare.md": (
        [
            f"compare {PAIR} {SERIES} --cluster none --binary-ci newcombe --ci-method percentile "
            f"{FAST} --by format --seed 7 -f markdown"
        ],
        0,
    ),
    "compare-bootstrap.json": (
        [
            f"compare {PAIR} --cluster none --binary-ci bootstrap --ci-method bca {FAST} "
            "--no-record -f json"
        ],
        0,
    ),
    "gate.table": (
        [f"gate {{g}} {{good}} {{five}} --metric answer_correct --max-abstain 1 {FAST}"],
        1,
    ),
    "gate.json": (
        [
            f"compare {PAIR} --no-record",
            "gate {g} {good} {five} --metrics complete@5,answer_correct --require-significance "
            f"{FAST} -f json",
        ],
        1,
    ),
    "gate.md": (
        [f"gate {PAIR} --max-drop 0.4 --cluster none --no-record --summary {{summary}} {FAST}"],
        0,
    ),
    "leaderboard.table": (
        [f"compare {PAIR} {{five}} --metrics complete@5,answer_correct {FAST}"],
        0,
    ),
    "leaderboard.json": ([f"compare {PAIR} {{five}} {SERIES} {FAST} -f json"], 0),
    "leaderboard.md": (
        [f"compare {PAIR} {{five}} {{good}} --cluster none {FAST} --no-record -f markdown"],
        0,
    ),
}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The room, its chunk table and four runs, made once (copied per case)."""
    d = tmp_path_factory.mktemp("pinned-room")
    golden = room(d / "room")
    gold = write_chunks(golden, d / "chunks.jsonl")
    lookups, decoys = ids_of(golden, "numeric_lookup"), ids_of(golden, "decoy")
    write_run_file(golden, gold, d / "base.jsonl", broken=lookups[:3])
    write_run_file(golden, gold, d / "cand.jsonl", broken=lookups[3:10], missed=decoys[:2])
    write_run_file(golden, gold, d / "good.jsonl")
    write_run_file(golden, gold, d / "five.jsonl", broken=lookups[:5])
    return d


def produce(made: Path, where: Path, name: str) -> tuple[str, int]:
    """Run case ``name`` in a copy of the room under ``where``: (its pinned text, exit code)."""
    shutil.copytree(made, where)
    files = {
        "g": where / "room" / "golden.jsonl",
        "summary": where / "summary.md",
        **{n: where / f"{n}.jsonl" for n in ("base", "cand", "good", "five")},
    }
    steps, _ = CASES[name]
    runner = CliRunner()
    # the case's own ledger index and fresh-sample registry: its ledger numbers start at 1
    env = {
        "COLUMNS": "160",
        "NO_COLOR": "1",
        "ASSAY_LEDGER_INDEX": str(where / "ledgers.jsonl"),
        "ASSAY_FRESH_REGISTRY": str(where / "fresh.sqlite"),
    }
    result: Any = None
    for step in steps:
        argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in step.split()]
        if "--chunks" not in argv:
            argv += ["--chunks", str(where / "chunks.jsonl")]
        result = runner.invoke(app, argv, env=env)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    text = files["summary"].read_text("utf-8") if "{summary}" in steps[-1] else result.stdout
    return text.replace(str(where), "<tmp>"), result.exit_code


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_output_is_the_pinned_one(name: str, made: Path, tmp_path: Path) -> None:
    text, code = produce(made, tmp_path / "case", name)
    assert code == CASES[name][1], text
    assert text == (PINNED / name).read_text("utf-8")


if __name__ == "__main__":  # regenerate the pinned outputs (review the diff)
    import tempfile

    base = Path(tempfile.mkdtemp())
    PINNED.mkdir(exist_ok=True)

    class _Factory:
        def mktemp(self, name: str) -> Path:
            path = base / name
            path.mkdir()
            return path

    source = made.__wrapped__(_Factory())  # type: ignore[attr-defined]
    for case in sorted(CASES):
        out, _ = produce(source, base / case, case)
        (PINNED / case).write_text(out, "utf-8")
        sys.stdout.write(f"{case}: {len(out)} characters\n")
