"""The dataset file read in one pass (`assay.dataset.io._read_valid`): on a valid file it gives
exactly what the checked line-by-line reader gives (entries, their lines, the file's hash);
any file the checked reader must read (a bad line, a duplicate id, a conversation, a long
integer) it leaves to it, so `load_dataset` still names FILE:LINE:field."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from assay._io import iter_jsonl_lenient
from assay.dataset import load_dataset
from assay.dataset.io import _read_valid, parse_entries
from assay.errors import DataError, Problem

ROWS: list[dict[str, Any]] = [
    {"id": "q1", "query": "What was revenue?", "category": "revenue",
     "evidence_paths": [[["c1"], ["c2", "c3"]]], "label_tier": "gold"},
    {"id": "q2", "query": "Any risk?", "category": "risk", "answerable": False},
    {"id": "q3", "query": "Where is it said?", "category": "revenue",
     "evidence_paths": [[[{"doc": "d1", "page": 3, "quote": "revenue rose"}]]],
     "label_tier": "silver", "as_of": "2024-01-02", "metadata": {"company": "A"}},
    {"id": "q4", "query": "Graded?", "category": "risk", "evidence_paths": [[["c4"]]],
     "metadata": {"relevance": {"c4": 2}}, "source": "hand", "reviewed_by": 2},
]  # fmt: skip


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_bytes("".join(lines).encode("utf-8"))
    return path


def _checked(path: Path) -> tuple[list[Any], dict[str, int], str, list[Problem]]:
    problems: list[Problem] = []
    hasher = hashlib.sha256()
    entries, lines, more = parse_entries(
        iter_jsonl_lenient(path, problems, hasher=hasher), file=str(path)
    )
    return entries, lines, hasher.hexdigest(), problems + more


def test_a_valid_file_reads_as_the_checked_reader_reads_it(tmp_path: Path) -> None:
    lines = [json.dumps(r) + "\n" for r in ROWS]
    lines.insert(2, "\n")  # a blank line: skipped, the line numbers after it kept
    lines[3] = lines[3].replace("\n", "\r\n")  # a CRLF line
    path = _write(tmp_path, lines)
    fast = _read_valid(path)
    assert fast is not None
    entries, where, digest = fast
    want, want_lines, want_digest, problems = _checked(path)
    assert not problems
    assert where == want_lines == {"q1": 1, "q2": 2, "q3": 4, "q4": 5}
    assert digest == want_digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [e.model_dump() for e in entries] == [e.model_dump() for e in want]
    assert [e.model_fields_set for e in entries] == [e.model_fields_set for e in want]
    loaded = load_dataset(path)
    assert loaded.content_hash == digest and loaded.lines == where
    assert [e.to_json_dict() for e in loaded.entries] == [e.to_json_dict() for e in want]


def test_shared_strings_do_not_tie_entries_together(tmp_path: Path) -> None:
    path = _write(tmp_path, [json.dumps(r) + "\n" for r in (ROWS[0], ROWS[0] | {"id": "q9"})])
    ds = load_dataset(path)
    a, b = ds.entries
    assert a.category is b.category  # one string for the two lines' category
    a.metadata["x"] = 1
    a.evidence_paths[0].append(["c9"])
    assert b.metadata == {} and b.evidence_paths == [[["c1"], ["c2", "c3"]]]


@pytest.mark.parametrize(
    ("bad", "line", "field"),
    [
        ('{"id": "q5", "query": "x", "category": "risk", "label_tier": "platinum"}', 3,
         "label_tier"),
        ('{"id": "q1", "query": "again", "category": "risk"}', 3, "id"),
        ('{"id": "q5", "query": "x", "category": "risk", "evidence_paths": [[[]]]}', 3,
         "evidence_paths"),
        ('{"id": "q5", "query": "x"', 3, None),
        ("[1, 2]", 3, None),
    ],
)  # fmt: skip
def test_a_bad_line_is_named_by_the_checked_reader(
    tmp_path: Path, bad: str, line: int, field: str | None
) -> None:
    lines = [*(json.dumps(r) + "\n" for r in ROWS[:2]), bad + "\n", json.dumps(ROWS[2]) + "\n"]
    path = _write(tmp_path, lines)
    assert _read_valid(path) is None
    with pytest.raises(DataError) as err:
        load_dataset(path)
    got = [(p.file, p.line, p.field) for p in err.value.problems]
    assert (str(path), line, field) in got, got


def test_conversations_go_to_the_checked_reader(tmp_path: Path) -> None:
    turns = ROWS[1] | {"id": "t1", "turns": [{"role": "user", "content": "hi"}]}
    path = _write(tmp_path, [json.dumps(r) + "\n" for r in [*ROWS, turns]])
    assert _read_valid(path) is None


def test_long_integers_read_as_the_checked_reader_reads_them(tmp_path: Path) -> None:
    # an integer beyond 64 bits (orjson would read it as a float) and a run of 19 digits in a
    # string: each line is parsed as the checked reader parses it (`loads_line`), so the file
    # is still read in one pass and the integer is exact
    long = ROWS[1] | {"id": "n1", "metadata": {"n": 12345678901234567890123}}
    digits = ROWS[0] | {"id": "n2", "query": "Which account is 1234567890123456789012?"}
    path = _write(tmp_path, [json.dumps(r) + "\n" for r in [*ROWS, long, digits]])
    fast = _read_valid(path)
    assert fast is not None
    entries, where, digest = fast
    want, want_lines, want_digest, problems = _checked(path)
    assert not problems and (where, digest) == (want_lines, want_digest)
    assert [e.model_dump() for e in entries] == [e.model_dump() for e in want]
    assert entries[4].metadata["n"] == 12345678901234567890123
    assert load_dataset(path).by_id["n1"].metadata["n"] == 12345678901234567890123


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    assert _read_valid(missing) is None
    with pytest.raises(DataError, match="file not found"):
        load_dataset(missing)


def test_a_line_orjson_refuses_is_read_as_the_checked_reader_reads_it(tmp_path: Path) -> None:
    # no long integer in the file: lines are parsed by orjson directly, and a line orjson
    # refuses but `json` reads (a lone surrogate escape) goes through `loads_line`, as before
    lone = ROWS[1] | {"id": "s1"}
    text = json.dumps(lone).replace('"Any risk?"', '"Any risk \\ud800?"')
    path = _write(tmp_path, [*(json.dumps(r) + "\n" for r in ROWS), text + "\n"])
    fast = _read_valid(path)
    assert fast is not None
    entries, where, digest = fast
    want, want_lines, want_digest, problems = _checked(path)
    assert not problems and (where, digest) == (want_lines, want_digest)
    assert [e.model_dump() for e in entries] == [e.model_dump() for e in want]
    assert entries[4].query == "Any risk \ud800?"


def test_the_line_of_each_entry_is_kept_compact_and_built_on_first_use(tmp_path: Path) -> None:
    # entry id -> line was a dictionary of every entry (7 MB at 100,000 entries) that a gate
    # never reads: kept as the ids and, only when a blank line shifts them, the line numbers
    from assay.compare import gate_files
    from assay.dataset.io import LineIndex
    from tests.conftest import write_case

    path = _write(tmp_path, [json.dumps(r) + "\n" for r in ROWS])
    lines = load_dataset(path).lines
    assert isinstance(lines, LineIndex) and lines._numbers is None and lines._map is None
    assert len(lines) == 4 and lines._map is None  # its length asks for no dictionary
    assert lines == {"q1": 1, "q2": 2, "q3": 3, "q4": 4} and lines.get("q9") is None
    shifted = _write(tmp_path, ["\n", *(json.dumps(r) + "\n" for r in ROWS[:2])])
    assert dict(load_dataset(shifted).lines) == {"q1": 2, "q2": 3}
    # a whole gate leaves it unbuilt
    ds, base, cand = write_case(tmp_path, {"a": [(1, 2), (2, 2), (0, 2)] * 4})
    seen: list[LineIndex] = []
    real = LineIndex.__init__

    def spy(self: LineIndex, *args: Any) -> None:
        real(self, *args)
        seen.append(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(LineIndex, "__init__", spy)
        gate_files(ds, base, cand, n_resamples=100, n_permutations=100, record=False)
    assert len(seen) == 1 and seen[0]._map is None
