"""The documented CI workflow (docs/compare-and-gate.md) keeps the comparison ledger: it restores
it before the gate and saves it after. Run twice (as two CI jobs on fresh checkouts), the second
gate is comparison #2.

The workflow's own shell steps run verbatim under bash; GitHub's side is played by a fake `gh`
(listing and downloading the artifacts saved so far) and by copying what `actions/upload-artifact`
would upload."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import _rows, write_case

from assay.compare.ledger import ledger_path, read_ledger
from assay.runs import write_run

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]

FAKE_GH = """#!{python}
import shutil, sys
from pathlib import Path
store = Path({store!r})
args = sys.argv[1:]
if args[:2] == ["run", "list"]:
    ids = sorted((int(p.name) for p in store.iterdir()), reverse=True) if store.exists() else []
    print("\\n".join(map(str, ids)))
elif args[:2] == ["run", "download"]:
    run_id, name, dest = args[2], args[args.index("--name") + 1], args[args.index("--dir") + 1]
    src = store / run_id / name
    if not src.is_dir():
        sys.exit("no artifact " + name + " in run " + run_id)
    Path(dest).mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        shutil.copy(f, Path(dest) / f.name)
else:
    sys.exit("fake gh: unexpected " + " ".join(args))
"""


def _workflow() -> dict[str, Any]:
    text = (ROOT / "docs" / "compare-and-gate.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    found = [yaml.safe_load(b) for b in blocks if "name: retrieval-gate" in b]
    assert len(found) == 1, "docs/compare-and-gate.md has one CI workflow"
    return dict(found[0])


def _steps() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    steps = _workflow()["jobs"]["gate"]["steps"]
    names = [str(s.get("name", "")) for s in steps]
    restore = next(i for i, n in enumerate(names) if "restore the comparison ledger" in n)
    gate = next(i for i, n in enumerate(names) if n == "gate")
    save = next(i for i, s in enumerate(steps) if "upload-artifact" in str(s.get("uses", "")))
    assert restore < gate < save, "restore before the gate, save after it"
    assert steps[save].get("if") == "always()", "the ledger is saved whatever the verdict"
    return steps[restore], steps[gate], steps[save]


def _job(
    work: Path, restore: dict[str, Any], gate: dict[str, Any], env: dict[str, str], cand: Path
) -> subprocess.CompletedProcess[str]:
    subprocess.run(["bash", "-e", "-c", restore["run"]], cwd=work, env=env, check=True)
    cmd = gate["run"].replace("/tmp/base.jsonl", str(work / "base.jsonl"))
    cmd = cmd.replace("cand.jsonl", str(cand))
    return subprocess.run(
        ["bash", "-e", "-c", cmd], cwd=work, env=env, capture_output=True, text=True
    )


def test_the_documented_workflow_restores_the_ledger_so_the_second_gate_is_comparison_2(
    tmp_path: Path,
) -> None:
    restore, gate, save = _steps()
    gate_args = shlex.split(gate["run"])
    dataset = gate_args[gate_args.index("gate") + 1]
    saved = save["with"]
    assert Path(saved["path"]) == ledger_path(dataset), "the file saved is the gate's ledger"
    assert f"--name {saved['name']}" in restore["run"], "the artifact restored is the one saved"

    # GitHub's side: a store of the artifacts saved by earlier runs, a fake gh, assay on PATH
    store = tmp_path / "artifacts"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH.format(python=sys.executable, store=str(store)))
    (bin_dir / "assay").write_text(f'#!/bin/sh\nexec {sys.executable} -m assay.cli "$@"\n')
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT), env.get("PYTHONPATH", "")])
    env["GH_TOKEN"] = "test"

    outcomes = {"lookup": [(2, 2)] * 6 + [(0, 2)] * 3, "trend": [(1, 2)] * 4 + [(2, 1)] * 2}
    numbers = []
    for run_id, flip in ((101, False), (102, True)):
        work = tmp_path / f"checkout-{run_id}"  # every CI job starts from a clean checkout
        ds, base, cand = write_case(work / "eval", outcomes)
        assert ds == work / dataset
        shutil.move(base, work / "base.jsonl")
        if flip:  # the second pull request: another candidate, another comparison
            rows = _rows(outcomes, 1)
            write_run(cand, [dict(r, retrieved=r["retrieved"][::-1]) for r in rows])
        res = _job(work, restore, gate, env, cand)
        assert res.returncode in (0, 1), res.stdout + res.stderr
        found = re.search(r"Comparison #(\d+) recorded against this dataset", res.stdout)
        assert found, res.stdout
        numbers.append(int(found.group(1)))
        # what actions/upload-artifact saves: the file named by `path`, under the artifact's name
        kept = store / str(run_id) / saved["name"]
        kept.mkdir(parents=True)
        shutil.copy(work / saved["path"], kept / Path(saved["path"]).name)
    assert numbers == [1, 2]
    assert [r["t"] for r in read_ledger(tmp_path / "checkout-102" / dataset)] == [1, 2]
