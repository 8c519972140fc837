"""The pyarrow fast paths read every run file exactly as the checked readers do, or hand it back."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.errors import DataError, UsageError
from assay.runs import Run, _fast, load_run, read_parquet_run, read_trec_run, write_run

pytest.importorskip("pyarrow")


@pytest.fixture(autouse=True, scope="module")
def _fast_path_for_small_files() -> Any:
    """The fast paths skip files under 256 KiB; here every file takes them."""
    before = _fast._MIN_BYTES
    _fast._MIN_BYTES = 0
    yield
    _fast._MIN_BYTES = before


_ids = st.text(alphabet="abcxyz-_09é", min_size=0, max_size=4)
_score = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.just(float("nan")),
    st.just("1.5"),
)
_hit = st.one_of(
    st.fixed_dictionaries({"chunk_id": _ids}, optional={"score": _score, "rank": st.integers()}),
    _ids,
    st.fixed_dictionaries({"score": _score}),
)
_extra = st.dictionaries(
    st.sampled_from(["answer", "as_of", "latency_ms", "trace", "citations"]),
    st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3)),
    max_size=3,
)


@st.composite
def _run_lines(draw: st.DrawFn) -> list[str]:
    n = draw(st.integers(1, 6))
    clean = draw(st.booleans())  # half the files are well-formed, so the fast path is exercised
    lines: list[str] = []
    for _ in range(n):
        rid = draw(_ids.filter(bool) if clean else _ids)
        if clean:
            hits: list[Any] = [
                {"chunk_id": draw(_ids), "score": draw(st.floats(-9, 9))}
                for _ in range(draw(st.integers(0, 4)))
            ]
        else:
            hits = draw(st.lists(_hit, max_size=4))
        obj: dict[str, Any] = {"id": rid, "retrieved": hits}
        shape = draw(st.sampled_from(["list", "list", "list", "absent", "null"]))
        if shape == "absent":  # a text-to-SQL row
            del obj["retrieved"]
        elif shape == "null":
            obj["retrieved"] = None
        if draw(st.booleans()):
            obj.update(draw(_extra))
        text = json.dumps(obj, allow_nan=True)
        if not clean:
            text = draw(st.sampled_from([text, text, "", "  ", text + " ", "[1]", text[:-1]]))
        lines.append(text)
    if clean:  # distinct ids
        seen: set[str] = set()
        out = []
        for ln in lines:
            rid = json.loads(ln)["id"]
            if rid not in seen:
                seen.add(rid)
                out.append(ln)
        lines = out
    return lines


def _same(a: Run, b: Run) -> None:
    assert a.ids == b.ids
    assert a.offsets.tolist() == b.offsets.tolist()
    assert a.vocab == b.vocab
    assert a.codes.tolist() == b.codes.tolist()
    assert a.scores is not None and b.scores is not None
    np.testing.assert_array_equal(a.scores, b.scores)  # NaN == NaN here
    assert a.details == b.details
    assert [type(v) for d in a.details for v in d.values()] == [
        type(v) for d in b.details for v in d.values()
    ]
    assert a.hash == b.hash and a.meta == b.meta
    assert a.unretrieved == b.unretrieved


def _outcome(fn: Any) -> Run | list[tuple[int | None, str | None, str]]:
    try:
        return fn()  # type: ignore[no-any-return]
    except DataError as exc:
        return [(p.line, p.field, p.message) for p in exc.problems]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=_run_lines(), trailing_newline=st.booleans())
def test_jsonl_fast_and_checked_paths_agree(lines: list[str], trailing_newline: bool) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "run.jsonl"
        p.write_text("\n".join(lines) + ("\n" if trailing_newline else ""), encoding="utf-8")
        fast = _outcome(lambda: load_run(p, format="jsonl"))
        checked = _outcome(lambda: load_run(p, format="jsonl", fast=False))
        if isinstance(checked, Run):
            assert isinstance(fast, Run)
            _same(fast, checked)
        else:
            assert fast == checked


def test_a_clean_file_takes_the_fast_path(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    p.write_text(
        '{"id": "a", "retrieved": [{"chunk_id": "x", "score": 2}, {"chunk_id": "y"}]}\n'
        '{"id": "b", "retrieved": [], "answer": "hi", "latency_ms": 4, "trace": {"t": [1]}}\n'
    )
    cols = _fast.read_jsonl_run(p)
    assert cols is not None
    assert cols["vocab"] == ["x", "y"] and cols["offsets"].tolist() == [0, 2, 2]
    assert cols["details"] == [{}, {"answer": "hi", "latency_ms": 4, "trace": {"t": [1]}}]
    _same(load_run(p), load_run(p, fast=False))


def test_run_files_are_parsed_in_a_pool_that_hands_its_pages_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the default (mimalloc) pool kept ~30 MB of a 40 MB run's parse resident for the rest of
    # a gate; jemalloc's returns them on `release_unused`. A pyarrow without it: the default.
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.json as pj

    jsonl, trec = tmp_path / "run.jsonl", tmp_path / "run.trec"
    jsonl.write_text('{"id": "a", "retrieved": [{"chunk_id": "x", "score": 2}]}\n')
    trec.write_text("q1 Q0 d1 1 0.5 t\n")
    pools: list[str] = []
    for module, name in ((pj, "read_json"), (pcsv, "read_csv")):
        real = getattr(module, name)

        def spy(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            pools.append(kwargs["memory_pool"].backend_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    expected = "jemalloc" if "jemalloc" in pa.supported_memory_backends() else None
    _fast.parse_pool.cache_clear()
    assert _fast.read_jsonl_run(jsonl) is not None and _fast.read_trec_columns(trec) is not None
    assert pools == [expected or pa.default_memory_pool().backend_name] * 2

    def unbuilt() -> Any:
        raise pa.ArrowNotImplementedError("this build of Arrow has no jemalloc")

    monkeypatch.setattr(pa, "jemalloc_memory_pool", unbuilt)
    _fast.parse_pool.cache_clear()
    try:
        cols = _fast.read_jsonl_run(jsonl)
    finally:
        _fast.parse_pool.cache_clear()
    assert cols is not None and cols["vocab"] == ["x"]
    assert pools[-1] == pa.default_memory_pool().backend_name


def test_the_fast_reader_indexes_the_ids_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the run's index by id is built by the reader, which finds a duplicate id by it (pyarrow
    # is not asked to count the distinct ids first)
    import pyarrow.compute as pc

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the ids were counted apart from the index")

    monkeypatch.setattr(pc, "count_distinct", refused)
    p = tmp_path / "run.jsonl"
    x, y = '{"chunk_id": "x", "score": 2}', '{"chunk_id": "y", "score": 1}'
    p.write_text(f'{{"id": "b", "retrieved": [{x}]}}\n{{"id": "a", "retrieved": [{y}, {x}]}}\n')
    cols = _fast.read_jsonl_run(p)
    assert cols is not None and cols["index"] == {"b": 0, "a": 1}
    run = load_run(p)
    assert run.index == {"b": 0, "a": 1} and run.hits("a") == ["y", "x"]
    p.write_text(f'{{"id": "b", "retrieved": [{x}]}}\n{{"id": "b", "retrieved": []}}\n')
    assert _fast.read_jsonl_run(p) is None  # the checked reader names both lines


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"id": "b", "retrieved": [{"chunk_id": "x", "score": NaN}]}', "retrieved.0.score"),
        ('{"id": "b", "retrieved": [{"chunk_id": "x", "score": "high"}]}', "retrieved.0.score"),
        ('{"id": "b", "retrieved": [{"score": 1}]}', "retrieved.0"),
        ('{"id": "", "retrieved": []}', "id"),
        ('{"id": "a", "retrieved": []}', "id"),  # a duplicate of line 1
        ('{"id": "b", "retrieved": "x"}', "retrieved"),
        ('{"id": "b", "retrieved": {"chunk_id": "x"}}', "retrieved"),
        ('{"id": "b", "retrieved": [', None),
    ],
)
def test_a_bad_line_is_named_by_the_fallback(tmp_path: Path, line: str, field: str | None) -> None:
    p = tmp_path / "run.jsonl"
    p.write_text('{"id": "a", "retrieved": ["x"]}\n{"id": "z", "retrieved": []}\n' + line + "\n")
    assert _fast.read_jsonl_run(p) is None
    with pytest.raises(DataError) as ei:
        load_run(p)
    assert [(pr.file, pr.line, pr.field) for pr in ei.value.problems] == [(str(p), 3, field)]


def test_an_object_across_two_lines_is_refused_as_the_checked_reader_does(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    p.write_text('{"id": "a",\n"retrieved": []}\n')
    assert _fast.read_jsonl_run(p) is None
    with pytest.raises(DataError, match=":1"):
        load_run(p)


def test_without_pyarrow_the_checked_readers_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "run.jsonl"
    p.write_text('{"id": "a", "retrieved": [{"chunk_id": "x", "score": 1}]}\n')
    t = tmp_path / "run.trec"
    t.write_text("q1 Q0 d1 1 1.0 t\n")
    monkeypatch.setattr(_fast, "_pyarrow", lambda: None)
    assert _fast.read_jsonl_run(p) is None and _fast.read_trec_columns(t) is None
    assert load_run(p).hits("a") == ["x"] and read_trec_run(t).hits("q1") == ["d1"]


_tok = st.text(alphabet="abq01-_.é", min_size=1, max_size=3)
_num = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-9, 9).map(str),
    st.sampled_from(["nan", "inf", "NA", "1_0", "+2", "x", "1e3", ""]),
)
_sep = st.sampled_from([" ", " ", " ", "  ", "\t"])


@st.composite
def _trec_text(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        fields = [draw(_tok), "Q0", draw(_tok), str(draw(st.integers(1, 9))), draw(_num), "t"]
        if draw(st.integers(0, 9)) == 0:
            fields = fields[: draw(st.integers(0, 5))]
        line = fields[0] if fields else ""
        for f in fields[1:]:
            line += draw(_sep) + f
        lines.append(line + draw(st.sampled_from(["", "", "", " ", "\r"])))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_trec_text())
def test_trec_fast_and_checked_paths_agree(text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "run.trec"
        p.write_bytes(text.encode("utf-8"))
        fast = _outcome(lambda: read_trec_run(p))
        checked = _outcome(lambda: read_trec_run(p, fast=False))
        if isinstance(checked, Run):
            assert isinstance(fast, Run)
            _same(fast, checked)
        else:
            assert fast == checked


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_trec_text())
def test_without_pyarrow_pandas_and_the_checked_reader_agree(text: str) -> None:
    """Without pyarrow, pandas' C parser reads a TREC file, or hands it to the checked reader."""
    pytest.importorskip("pandas")
    with tempfile.TemporaryDirectory() as d, pytest.MonkeyPatch.context() as mp:
        mp.setattr(_fast, "_pyarrow", lambda: None)
        p = Path(d) / "run.trec"
        p.write_bytes(text.encode("utf-8"))
        fast = _outcome(lambda: read_trec_run(p))
        checked = _outcome(lambda: read_trec_run(p, fast=False))
        if isinstance(checked, Run):
            assert isinstance(fast, Run)
            _same(fast, checked)
        else:
            assert fast == checked


def test_a_regular_trec_file_takes_the_fast_path(tmp_path: Path) -> None:
    p = tmp_path / "run.trec"
    p.write_text("q2 Q0 d1 1 0.5 t\nq1 Q0 d2 1 3.0 t\nq1 Q0 d1 2 3.5 t\n")
    cols = _fast.read_trec_columns(p)
    assert cols is not None and cols[1] == ["q2", "q1"] and cols[3] == ["d1", "d2"]
    r = read_trec_run(p)
    assert r.ids == ["q2", "q1"] and r.hits("q1") == ["d1", "d2"]  # sorted by score
    _same(r, read_trec_run(p, fast=False))


@pytest.mark.parametrize(
    "line",
    [
        "q1 Q0 d1  0.5 t",  # six fields to pyarrow (one empty), five tokens
        "q1  d1 1 0.5 t",
        " q1 Q0 d1 1 0.5",
        "q1 Q0 d1 1 0.5 ",
        "q1 Q0 d1 1 0.5",  # five fields
    ],
)
@pytest.mark.parametrize("reader", ["pyarrow", "pandas"])
def test_an_empty_field_leaves_the_fast_path(
    tmp_path: Path, line: str, reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line whose fields are not `str.split()`'s six tokens goes to the checked reader, which
    names it, whichever fast reader saw it first."""
    p = tmp_path / "run.trec"
    p.write_text(f"q1 Q0 d2 1 0.9 t\n{line}\nq2 Q0 d1 1 0.1 t\n")
    assert _fast.read_trec_columns(p) is None
    if reader == "pandas":
        monkeypatch.setattr(_fast, "_pyarrow", lambda: None)
    with pytest.raises(DataError) as ei:
        read_trec_run(p)
    assert [(pr.file, pr.line) for pr in ei.value.problems] == [(str(p), 2)]


def test_two_blanks_are_found_across_a_slice_boundary() -> None:
    line = b"q1 Q0 d1 1 0.5 t\n"
    for cut in range(1, 40):
        data = line * 3
        assert _fast._no_empty_fields(data, step=cut)
        for i in range(len(data) - 1):
            if data[i : i + 1] == b" ":
                bad = data[:i] + b" " + data[i:]  # a second space next to this one
                assert not _fast._no_empty_fields(bad, step=cut), (cut, i)


def test_the_fast_trec_path_stitches_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of many CSV blocks: the codes of every block index one vocabulary."""
    rng = np.random.default_rng(5)
    lines = [
        f"q{rng.integers(0, 40)} Q0 d{rng.integers(0, 300)} 1 {rng.random():.6f} t"
        for _ in range(3000)
    ]
    p = tmp_path / "run.trec"
    p.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(_fast, "_TREC_BLOCK", 1 << 12)
    cols = _fast.read_trec_columns(p)
    assert cols is not None
    qcodes, qids, codes, vocab, scores, _ = cols
    assert [
        f"{qids[a]} Q0 {vocab[b]} 1 {c:.6f} t"
        for a, b, c in zip(qcodes, codes, scores, strict=True)
    ] == lines
    assert qids == list(dict.fromkeys(x.split()[0] for x in lines))
    _same(read_trec_run(p), read_trec_run(p, fast=False))


# ------------------------------------------------------------------------------ Parquet


def test_parquet_roundtrip_keeps_every_field(tmp_path: Path) -> None:
    src = tmp_path / "run.jsonl"
    src.write_text(
        '{"id": "a", "retrieved": [{"chunk_id": "x", "score": 2}, "y"]}\n'
        '{"id": "b", "retrieved": [], "answer": "hi", "latency_ms": 4, "trace": {"t": [1, null]}}\n'
        '{"id": "c", "retrieved": [{"chunk_id": "y", "score": -1.5}], "answer": null}\n'
    )
    run = load_run(src)
    h = write_run(tmp_path / "run.parquet", run, meta={"k": 10})
    back = load_run(tmp_path / "run.parquet")
    assert back.hash == h and back.meta["run_hash"] == h and back.meta["k"] == 10
    assert back.ids == run.ids and back.offsets.tolist() == run.offsets.tolist()
    assert [back.hits(i) for i in back.ids] == [run.hits(i) for i in run.ids]
    np.testing.assert_array_equal(back.scores, run.scores)  # type: ignore[arg-type]
    assert back.details == run.details
    assert [back.row(i).to_dict() for i in back.ids] == [run.row(i).to_dict() for i in run.ids]
    # and back to JSONL: the same bytes as the source rewritten
    write_run(tmp_path / "a.jsonl", run)
    write_run(tmp_path / "b.jsonl", back)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    import pyarrow.parquet as pq

    md = pq.read_schema(tmp_path / "run.parquet").metadata
    assert md[b"assay.format"] == b"assay-run/1" and b"assay.version" in md


def test_parquet_bad_values_name_row_and_field(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    hit = pa.struct([("chunk_id", pa.string()), ("score", pa.float64())])
    table = pa.table(
        {
            "id": ["a", "a", ""],
            "retrieved": pa.array(
                [[{"chunk_id": "x", "score": 1.0}], [], [{"chunk_id": "y", "score": math.inf}]],
                type=pa.list_(hit),
            ),
        }
    )
    pq.write_table(table, tmp_path / "bad.parquet")
    with pytest.raises(DataError) as ei:
        read_parquet_run(tmp_path / "bad.parquet")
    got = {(p.line, p.field) for p in ei.value.problems}
    assert got == {(2, "id"), (3, "id"), (3, "retrieved.0.score")}
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(DataError, match="not a Parquet run"):
        load_run(tmp_path / "junk.parquet")


def test_parquet_without_pyarrow_says_which_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(UsageError, match=r"assay\[fast\]"):
        write_run(tmp_path / "run.parquet", [{"id": "a", "retrieved": ["x"]}])
    assert not (tmp_path / "run.parquet").exists()


def test_a_run_written_as_parquet_by_the_runner(tmp_path: Path) -> None:
    from tests.runner import fake_systems
    from tests.runner.test_run_system import ENTRIES

    from assay.cache import RequestCache
    from assay.runner import run_system

    made = run_system(
        ENTRIES,
        fake_systems.Echo(),
        k=3,
        cache=RequestCache(tmp_path / "c.sqlite"),
        out=tmp_path / "r.parquet",
        progress=False,
    )
    back = load_run(tmp_path / "r.parquet")
    assert back.hash == made.hash and back.meta["system_hash"] == made.meta["system_hash"]
    assert [back.row(i).to_dict() for i in back.ids] == [made.row(i).to_dict() for i in made.ids]


def test_the_fast_paths_import_no_pandas(tmp_path: Path) -> None:
    """pyarrow's own conversions to numpy import pandas (a second of CPU in `assay gate`):
    the fast paths read the buffers themselves."""
    p = tmp_path / "run.jsonl"
    p.write_text(
        '{"id": "a", "retrieved": [{"chunk_id": "x", "score": 2}, {"chunk_id": "y"}]}\n'
        '{"id": "b"}\n{"id": "c", "retrieved": null, "answer": "hi"}\n'
    )
    t = tmp_path / "run.trec"
    t.write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d1 1 3 t\n")
    code = (
        "import sys\nfrom pathlib import Path\nfrom assay.runs import _fast, load_run\n"
        "_fast._MIN_BYTES = 0\n"
        f"j = _fast.read_jsonl_run(Path({str(p)!r}))\n"
        f"t = _fast.read_trec_columns(Path({str(t)!r}))\n"
        "assert j is not None and t is not None\n"
        "print(j['offsets'].tolist(), j['codes'].tolist(), j['scores'].tolist()[1],\n"
        "      j['unretrieved'], t[0].tolist(), t[2].tolist(), t[4].tolist())\n"
        "print('pandas' in sys.modules)\n"
    )
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == [
        "[0, 2, 2, 2] [0, 1] nan {'b': 2, 'c': 3} [0, 0, 1] [0, 1, 0] [1.0, 0.5, 3.0]",
        "False",
    ]
