"""Stratified, grouped, seeded splits."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401
from assay.cli import app
from assay.dataset import Entry, load_dataset, split_entries
from assay.errors import DataError


def _entries(sizes: dict[str, int], group_size: int = 3) -> list[Entry]:
    out = []
    for cat, n in sizes.items():
        for i in range(n):
            out.append(
                Entry(
                    id=f"{cat}-{i}",
                    query="q",
                    category=cat,
                    metadata={"fact_id": f"{cat}-f{i // group_size}"} if i % 5 else {},
                )
            )
    return out


def test_groups_never_cross_and_strata_balanced() -> None:
    entries = _entries({"lookup": 90, "comparison": 60, "trend": 31})
    res = split_entries(entries, test_size=0.3, group_by="metadata.fact_id", seed=7)
    side = {e.id: "test" for e in res.test} | {e.id: "train" for e in res.train}
    assert len(side) == len(entries)
    by_group: dict[str, set[str]] = {}
    for e in entries:
        g = e.metadata.get("fact_id")
        if g:
            by_group.setdefault(g, set()).add(side[e.id])
    assert all(len(s) == 1 for s in by_group.values())
    for s in res.strata:
        assert abs(s.achieved - 0.3) <= 3 / s.n + 1e-9  # within one group of the target
    assert {s.stratum for s in res.strata} == {"lookup", "comparison", "trend"}


def test_seeded_and_seed_matters() -> None:
    entries = _entries({"a": 50, "b": 50})
    r1 = split_entries(entries, test_size=0.5, seed=1)
    r2 = split_entries(entries, test_size=0.5, seed=1)
    r3 = split_entries(entries, test_size=0.5, seed=2)
    assert [e.id for e in r1.test] == [e.id for e in r2.test]
    assert [e.id for e in r1.test] != [e.id for e in r3.test]


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(1, 40), min_size=1),
    st.floats(0.1, 0.9),
    st.integers(0, 2**31),
)
def test_split_is_a_partition_with_near_target_shares(
    sizes: dict[str, int], ts: float, seed: int
) -> None:
    entries = _entries(sizes, group_size=1)
    res = split_entries(entries, test_size=ts, seed=seed)
    assert sorted(e.id for e in res.train + res.test) == sorted(e.id for e in entries)
    for s in res.strata:
        assert s.n_test == s.target == round(ts * s.n)


def test_missing_stratify_field_is_a_data_error() -> None:
    from assay.errors import DataError

    with pytest.raises(DataError, match=r"metadata\.desk"):
        split_entries(_entries({"a": 4}), stratify="metadata.desk")


def test_split_cli_writes_both_sides(tmp_path: Path) -> None:
    ds = tmp_path / "golden.jsonl"
    ds.write_text(
        "".join(json.dumps(e.to_json_dict()) + "\n" for e in _entries({"a": 20, "b": 10}))
    )
    res = CliRunner().invoke(
        app,
        [
            "split",
            str(ds),
            "--test-size",
            "0.5",
            "--group-by",
            "metadata.fact_id",
            "--seed",
            "7",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    train = load_dataset(tmp_path / "golden.train.jsonl")
    test = load_dataset(tmp_path / "golden.test.jsonl")
    assert len(train) + len(test) == 30 and report["n_test"] == len(test)
    assert {e.split for e in test.entries} == {"test"}
    assert "seed=7" in test.manifest["changelog"][-1]["note"]
    bad = CliRunner().invoke(app, ["split", str(tmp_path / "nope.jsonl")])
    assert bad.exit_code == 2


def test_split_dataset_is_the_library_call_behind_the_command(tmp_path: Path) -> None:
    from assay.dataset import split_dataset
    from assay.errors import UsageError

    ds = tmp_path / "golden.jsonl"
    ds.write_text("".join(json.dumps(e.to_json_dict()) + "\n" for e in _entries({"a": 12})))
    res = split_dataset(ds, test_size=0.25, stratify=None, seed=3, test_out=tmp_path / "t.jsonl")
    test = load_dataset(tmp_path / "t.jsonl")
    train = load_dataset(tmp_path / "golden.train.jsonl")
    assert [e.id for e in test.entries] == [e.id for e in res.test]
    assert test.version.endswith("+test.s3") and train.version.endswith("+train.s3")
    assert "stratify=none" in test.manifest["changelog"][-1]["note"]
    with pytest.raises(UsageError):
        split_dataset(ds, test_out=ds)  # an output that is the input is refused before writing
    with pytest.raises(UsageError):
        split_dataset(ds, test_size=1.0)


def test_a_list_field_groups_by_every_element_transitively() -> None:
    """Entries sharing any fact stay on one side: a chain a-b, b-c, c-d is one group. Keyed as
    its whole JSON list, each entry was its own group and the facts leaked across."""
    rng = random.Random(3)
    entries = []
    for i in range(120):
        facts = sorted({f"f{rng.randrange(60)}" for _ in range(rng.randrange(1, 4))})
        entries.append(
            Entry(id=f"e{i}", query="q", category=["a", "b"][i % 2], metadata={"fact_ids": facts})
        )
    res = split_entries(entries, test_size=0.5, group_by="metadata.fact_ids", seed=1)
    side = {e.id: "test" for e in res.test} | {e.id: "train" for e in res.train}
    by_fact: dict[str, set[str]] = {}
    for e in entries:
        for f in e.metadata["fact_ids"]:
            by_fact.setdefault(f, set()).add(side[e.id])
    assert all(len(s) == 1 for s in by_fact.values()), "a fact is on both sides"
    assert res.test and res.train
    chain = [
        Entry(id=f"c{i}", query="q", category="a", metadata={"fact_ids": [f"x{i}", f"x{i + 1}"]})
        for i in range(6)
    ] + [
        Entry(id=f"s{i}", query="q", category="a", metadata={"fact_ids": [f"y{i}"]})
        for i in range(6)
    ]
    res = split_entries(chain, test_size=0.5, group_by="metadata.fact_ids", seed=0)
    sides = {e.id: "test" for e in res.test} | {e.id: "train" for e in res.train}
    assert len({sides[f"c{i}"] for i in range(6)}) == 1  # the chain is one group
    assert res.strata[0].groups == 7


def test_a_group_field_no_entry_has_stops_the_split(tmp_path: Path) -> None:
    entries = [
        Entry(id=f"e{i}", query="q", category="a", metadata={"fact_ids": [f"f{i}"]})
        for i in range(4)
    ]
    with pytest.raises(DataError, match=r"no entry has 'metadata\.fact_id'") as err:
        split_entries(entries, test_size=0.5, group_by="metadata.fact_id")
    assert "fact_ids" in str(err.value)  # names what the entries do have
    ds = tmp_path / "g.jsonl"
    ds.write_text("".join(json.dumps(e.to_json_dict()) + "\n" for e in entries))
    res = CliRunner().invoke(app, ["split", str(ds), "--group-by", "metadata.fact_id"])
    assert res.exit_code == 2 and "no entry has 'metadata.fact_id'" in res.output, res.output
    assert not (tmp_path / "g.train.jsonl").exists()
