"""Suite-wide fixtures and helpers: tiny datasets and runs with chosen outcomes, JSONL writing,
the issue's example entry, and an isolated fresh-sample registry and ledger index for every
test."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.runs import write_run

# the semantic second opinion (assay.judge.semantic) loads a sentence encoder: the suite runs
# the deterministic rules alone, and tests/judge/test_semantic.py and test_polarity.py turn it on
os.environ.setdefault("ASSAY_SEMANTIC_OPINION", "off")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Monte-Carlo studies of minutes (marker ``simulation``) are not part of `make test`: they
    run when asked for, ``pytest -m simulation`` (or ``ASSAY_SIMULATIONS=1``); each has a seeded
    fast version that always runs."""
    asked = "simulation" in (config.getoption("markexpr") or "")
    if asked or os.environ.get("ASSAY_SIMULATIONS") == "1":
        return
    skip = pytest.mark.skip(reason="a Monte-Carlo study of minutes: pytest -m simulation")
    for item in items:
        if item.get_closest_marker("simulation") is not None:
            item.add_marker(skip)


CHROMIUM = "/usr/bin/chromium"
# the marks of a module that drives a real browser: skipped where Debian's chromium is absent
NEEDS_CHROMIUM = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium"
    ),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium, one for a module (the modules marked `NEEDS_CHROMIUM`)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield b
        b.close()


@pytest.fixture(autouse=True)
def _isolated_fresh_registry(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets its own fresh-sample registry, never the user's."""
    path = tmp_path_factory.mktemp("fresh-registry") / "fresh.sqlite"
    monkeypatch.setenv("ASSAY_FRESH_REGISTRY", str(path))
    # and its own index of ledgers by dataset content (`assay.compare.ledger.ledger_index_path`)
    monkeypatch.setenv("ASSAY_LEDGER_INDEX", str(path.with_name("ledgers.jsonl")))
    return path


EXAMPLE_ENTRY = (
    '{"id": "fd-0183", "query": "bank-04 NIM 22 vs 23, did it expand", "category": "comparison",\n'
    ' "answerable": true, "as_of": "2024-03-31",\n'
    ' "evidence_paths": [\n'
    '   [["bank-04/10-K/fy2023#mdna-nii-table"]],\n'
    '   [["bank-04/10-K/fy2022#mdna-nii-table"],\n'
    '    ["bank-04/10-K/fy2023#mdna-nii-table", "bank-04/10-K/fy2023#mdna-nim-text"]]\n'
    " ],\n"
    ' "reference_answer": "NIM expanded by roughly 40 bp year over year; higher asset yields outpaced rising deposit costs.",\n'
    ' "source": "log", "reviewed_by": 2, "added": "2026-08-14"}'
)


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def example_entry() -> dict[str, Any]:
    return json.loads(EXAMPLE_ENTRY)


Outcomes = Mapping[str, Sequence[tuple[int, int]]]
"""category -> [(baseline pieces found, candidate pieces found)], each 0, 1 or 2 of 2 pieces."""

CaseFactory = Callable[..., tuple[Path, Path, Path]]


def _rows(outcomes: Outcomes, which: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for cat, pairs in outcomes.items():
        for i, pair in enumerate(pairs):
            eid = f"{cat}-{i:03d}"
            found = [f"{eid}-a", f"{eid}-b"][: pair[which]]
            fill = [f"noise-{j}" for j in range(6 - len(found))]
            rows.append({"id": eid, "retrieved": found + fill})
    return rows


def write_case(
    directory: Path, outcomes: Outcomes, name: str = "golden"
) -> tuple[Path, Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    ds = directory / f"{name}.jsonl"
    with open(ds, "w", encoding="utf-8") as fh:
        for cat, pairs in outcomes.items():
            for i in range(len(pairs)):
                eid = f"{cat}-{i:03d}"
                entry = {
                    "id": eid,
                    "query": f"question {eid}",
                    "category": cat,
                    "evidence_paths": [[[f"{eid}-a"], [f"{eid}-b"]]],
                    "metadata": {"fact_id": f"fact-{i // 3}"},
                }
                fh.write(json.dumps(entry) + "\n")
    base = directory / "base.jsonl"
    cand = directory / "cand.jsonl"
    write_run(base, _rows(outcomes, 0))
    write_run(cand, _rows(outcomes, 1))
    return ds, base, cand


@pytest.fixture
def make_case(tmp_path: Path) -> CaseFactory:
    def make(outcomes: Outcomes, name: str = "golden") -> tuple[Path, Path, Path]:
        return write_case(tmp_path, outcomes, name)

    return make
