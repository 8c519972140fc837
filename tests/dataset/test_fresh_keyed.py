"""A sealed sample is recognised whichever way the registry knows it: by its entries' contents
(near-duplicate matching, which covers exact copies without hashing the dataset), or, for a
sample sealed before the registry kept contents, by its entries' fingerprints alone."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from assay.dataset import fresh, load_dataset
from tests.conftest import write_jsonl

ROWS = [
    {"id": f"s{i}", "query": f"What was segment {i} revenue in 2023?", "category": "lookup",
     "evidence_paths": [[[f"doc{i}#p{i}"]]]}
    for i in range(4)
]  # fmt: skip


def _copy_with_other_ids(tmp_path: Path) -> Path:
    other = [r | {"id": f"renamed-{r['id']}"} for r in ROWS]
    more = [{"id": "m1", "query": "Another question", "category": "x",
             "evidence_paths": [[["zz"]]]}]  # fmt: skip
    return write_jsonl(tmp_path / "main.jsonl", more + other[::-1])


def test_copy_of_a_sealed_sample_is_a_use_without_hashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh.seal(write_jsonl(tmp_path / "sample.jsonl", ROWS))
    calls: list[int] = []
    real = fresh.content_key
    monkeypatch.setattr(fresh, "content_key", lambda *a: calls.append(1) or real(*a))
    use = fresh.record_use(load_dataset(_copy_with_other_ids(tmp_path)), command="score")
    assert use is not None and use.name == "sample" and use.uses == 1
    assert calls == []  # found by contents; the dataset was not fingerprinted


def test_sample_sealed_before_contents_is_found_by_fingerprints(
    tmp_path: Path, registry: Path
) -> None:
    fresh.seal(write_jsonl(tmp_path / "sample.jsonl", ROWS))
    with sqlite3.connect(registry) as con:  # as a registry written before contents were kept
        con.execute("DELETE FROM contents")
    use = fresh.record_use(load_dataset(_copy_with_other_ids(tmp_path)), command="score")
    assert use is not None and use.name == "sample"
    with pytest.raises(fresh.FreshReuseError):
        fresh.record_use(load_dataset(_copy_with_other_ids(tmp_path)), command="score")


def test_sample_sealed_before_content_keys_is_found_by_id_and_query(
    tmp_path: Path, registry: Path
) -> None:
    sample = write_jsonl(tmp_path / "sample.jsonl", ROWS)
    fresh.seal(sample)
    legacy = [fresh._fingerprint(e) for e in load_dataset(sample).entries]
    with sqlite3.connect(registry) as con:  # the oldest registries: id + query fingerprints
        con.execute("DROP TABLE contents")
        con.execute("DELETE FROM fingerprints")
        con.executemany(
            "INSERT INTO fingerprints SELECT ?, content_hash FROM samples", [(f,) for f in legacy]
        )
    main = write_jsonl(tmp_path / "main.jsonl", [*ROWS[::-1], json.loads(json.dumps(ROWS[0]))
                                                  | {"id": "extra"}])  # fmt: skip
    use = fresh.record_use(load_dataset(main), command="score")
    assert use is not None and use.name == "sample"


@pytest.fixture
def registry(_isolated_fresh_registry: Path) -> Path:
    return _isolated_fresh_registry
