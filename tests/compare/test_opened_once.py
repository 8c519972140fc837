"""From the gate command down, the inputs are opened once: the dataset loaded once, the
fresh-sample guard entered once (and the dataset fingerprinted once for it), the gold resolved
once per chunk table, whatever number of runs, metrics and checks the gate reads."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from tests.conftest import write_jsonl
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.dataset import fresh, load_dataset
from assay.gold import resolve_gold

OUTCOMES = {"lookup": [(2, 2)] * 8 + [(0, 2)] * 3, "comparison": [(2, 0)] * 3 + [(2, 2)] * 8}


@contextmanager
def counting(**functions: Callable[..., Any]) -> Iterator[Counter[str]]:
    """Count the calls of each function (by its code, wherever it was imported from; a
    generator's resumptions are not calls)."""
    codes = {f.__code__: name for name, f in functions.items()}
    seen: set[int] = set()
    frames: list[FrameType] = []  # kept alive so that no two counted frames share an id
    counts: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code in codes and id(frame) not in seen:
            seen.add(id(frame))
            frames.append(frame)
            counts[codes[frame.f_code]] += 1

    sys.setprofile(profile)
    try:
        yield counts
    finally:
        sys.setprofile(None)


def _seal_another_sample(tmp_path: Path) -> None:
    """A registry holding a sealed sample, so the guard has something to fingerprint against."""
    sample = write_jsonl(
        tmp_path / "other_fresh.jsonl",
        [
            {"id": f"f{i}", "query": f"an unrelated question {i}", "category": "x",
             "evidence_paths": [[[f"zz-{i}"]]]}
            for i in range(3)
        ],
    )  # fmt: skip
    fresh.seal(sample)


COMMON = ["--resamples", "200", "--permutations", "200", "--no-record"]


@pytest.mark.parametrize(
    "command",
    [
        ["gate", "{ds}", "{base}", "{cand}", "--metrics", "complete@5,answer_correct",
         "--max-abstain", "1"],
        ["compare", "{ds}", "{base}", "{cand}", "--metrics", "complete@5,answer_correct"],
        ["compare", "{ds}", "{base}", "{cand}", "{cand2}", "--metrics",
         "complete@5,answer_correct"],  # a leaderboard
    ],
    ids=["gate", "compare", "leaderboard"],
)  # fmt: skip
def test_command_opens_dataset_and_guard_once(
    make_case, tmp_path: Path, command: list[str]
) -> None:  # type: ignore[no-untyped-def]
    ds, base, cand = make_case(OUTCOMES)
    _seal_another_sample(tmp_path)
    n = len(load_dataset(ds).entries)
    cand2 = tmp_path / "cand2.jsonl"
    cand2.write_bytes(cand.read_bytes())
    args = [a.format(ds=ds, base=base, cand=cand, cand2=cand2) for a in command] + COMMON
    with counting(
        load_dataset=load_dataset,
        using=fresh.using.__wrapped__,  # type: ignore[attr-defined]
        content_key=fresh.content_key,
        evidence_tokens=fresh.evidence_tokens,
        resolve_gold=resolve_gold,
    ) as counts:
        res = CliRunner().invoke(app, args)
    assert res.exit_code in (0, 1), res.output
    assert "complete@5" in res.output and "answer_correct" in res.output
    assert counts["load_dataset"] == 1
    assert counts["using"] == 1
    assert counts["resolve_gold"] == 1  # every run read against one table
    # the guard reads an entry's evidence tokens only when it names a place (page, chunk,
    # document) a sealed entry names, once (none does here: the sealed sample is unrelated;
    # `tests/dataset/test_gate_path_helpers.py`); the registry keeps every sealed entry's
    # contents, so the near-duplicate match covers exact copies and nothing is hashed
    assert n > 0 and counts["evidence_tokens"] == 0
    assert counts["content_key"] == 0


def test_sealed_entries_left_out_by_tier_are_still_a_use(make_case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The guard covers the whole file read, not only the entries of the tiers compared."""
    ds, base, cand = make_case(OUTCOMES)
    sealed = [
        {"id": f"f{i}", "query": f"a sealed question {i}", "category": "lookup",
         "evidence_paths": [[[f"sealed-{i}"]]], "label_tier": "draft"}
        for i in range(3)
    ]  # fmt: skip
    fresh.seal(write_jsonl(tmp_path / "sample.jsonl", sealed))
    rows = [json.loads(line) | {"label_tier": "gold"} for line in ds.read_text().splitlines()]
    write_jsonl(ds, rows + sealed)
    args = ["gate", str(ds), str(base), str(cand), *COMMON]
    first = CliRunner().invoke(app, args)
    assert first.exit_code in (0, 1), first.output
    assert "left out" in first.output or "draft" in first.output
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 2 and "already used" in second.output, second.output


def _reentries(args: list[str]) -> tuple[Counter[str], list[str]]:
    """Run the command, noting each time the call enters an assay package (a module of the
    ground floor, `dataset/fresh.py` apart from the rest of dataset/) from outside it: how many
    times each is entered, and every entry into one that is already on the stack below another
    (the call went down and came back up: a re-entry)."""
    import assay

    root = str(Path(assay.__file__).parent) + "/"
    entered: Counter[str] = Counter()
    again: list[str] = []
    stack: list[tuple[FrameType, str]] = []

    def where(frame: FrameType) -> str | None:
        name = frame.f_code.co_filename
        if not name.startswith(root) or frame.f_code.co_name == "<module>":
            return None  # outside assay, or a module's import (not a call of the path)
        rel = name[len(root) :]
        return rel if rel == "dataset/fresh.py" else rel.split("/")[0]

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and (here := where(frame)) is not None:
            below = [g for _, g in stack]
            if not below or below[-1] != here:
                entered[here] += 1
                if here in below:  # the packages from its first entry, each once in a row
                    path = [*below[below.index(here) :], here]
                    again.append(
                        " > ".join(g for i, g in enumerate(path) if path[i - 1 : i] != [g])
                    )
            stack.append((frame, here))
        elif event == "return" and stack and stack[-1][0] is frame:
            stack.pop()

    sys.setprofile(profile)
    try:
        res = CliRunner().invoke(app, args)
    finally:
        sys.setprofile(None)
    assert res.exit_code in (0, 1), res.output
    return entered, again


def test_the_gate_enters_no_module_again_after_leaving_it_for_a_lower_one(
    make_case, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """From the gate command down (a metric and a check gated at once, a sealed sample in the
    registry), no package is re-entered once the call has left it for a lower one: compare/ is
    entered from the command only, dataset/fresh.py for the one guard. The first command of a
    process loads the registries (assay's own check and metric modules, then the plug-ins, each
    registering itself), so the path is measured on the second."""
    ds, base, cand = make_case(OUTCOMES)
    _seal_another_sample(tmp_path)
    args = ["gate", str(ds), str(base), str(cand), "--metrics", "complete@5,answer_correct",
            "--max-abstain", "1", *COMMON]  # fmt: skip
    assert CliRunner().invoke(app, args).exit_code in (0, 1)  # the registries loaded
    entered, again = _reentries(args)
    assert again == []
    # the guard's block: entered, and resumed when it closes (a generator's resumption)
    assert entered["dataset/fresh.py"] == 2
    assert 1 <= entered["compare"] <= 4  # each from the command (was 8 in one gate)
