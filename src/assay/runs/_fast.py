"""Fast paths for run files, through pyarrow's JSON and CSV readers (the `fast` extra).

Each reader here returns the same columns as the checked line-by-line reader beside it, or None
whenever anything is unusual (pyarrow missing, a parse error, a line the checked reader would
refuse or read differently). The caller then runs the checked reader, which names FILE:LINE:
field for every bad line. So a fast path never decides that a file is bad, and never reads a
file differently: `tests/runs/test_fast_paths.py` checks both give identical runs on random files.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.runs.model import NO_DETAILS

__all__: list[str] = []

_BLOCK = 1 << 24  # 16 MiB blocks: one JSON line (a row of hits) must fit in a block
_TREC_BLOCK = 1 << 26  # 64 MiB CSV blocks: fewer chunks to stitch, still one per core
_MIN_BYTES = 1 << 18  # below 256 KiB the checked reader is as fast (no threads to start)


def _pyarrow() -> Any | None:
    try:
        import pyarrow
    except ImportError:
        return None
    return pyarrow


def pyarrow_available() -> bool:
    return _pyarrow() is not None


class _Hasher:
    """SHA-256 of a byte buffer on a thread (hashlib releases the GIL on large updates), so a
    file is hashed while pyarrow parses it."""

    def __init__(self, data: bytes | memoryview) -> None:
        self._h = hashlib.sha256()
        self._t = threading.Thread(target=self._h.update, args=(data,), daemon=True)
        self._t.start()

    def hexdigest(self) -> str:
        self._t.join()
        return self._h.hexdigest()


def _one_object_per_line(data: bytes) -> int | None:
    """The number of lines when every line starts with `{` and ends with `}` (no blank lines,
    no carriage returns, no leading or trailing blanks), else None.

    With that shape a JSON object can neither span lines (a line would have to end inside an
    object with `}` and the next begin with `{`, which is not JSON) nor share one, once the
    parser's row count equals the line count. So rows and line numbers correspond exactly.
    (Counted in place: slicing off the last newline would copy the whole file.)"""
    if not data:
        return 0
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    if not (data.startswith(b"{") and data.endswith(b"}", 0, end)):
        return None
    breaks = data.count(b"\n", 0, end)
    if data.count(b"}\n{", 0, end) != breaks:
        return None
    return breaks + 1


def _finite_or_null(values: Any) -> bool:
    import pyarrow.compute as pc

    return pc.all(pc.is_finite(values)).as_py() is not False  # nulls skipped


def _numpy(values: Any, dtype: type[np.generic]) -> npt.NDArray[Any]:
    """The value buffer of a primitive pyarrow array as a numpy view, nulls' slots undefined
    (pyarrow's own ``to_numpy`` imports pandas, a second of CPU, to ask if it is needed)."""
    buf = values.buffers()[1]
    if buf is None:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(buf, dtype=dtype)[values.offset : values.offset + len(values)]


def _codes(indices: Any) -> npt.NDArray[np.int64]:
    """A dictionary array's indices (of any integer width) as int64."""
    return _numpy(indices, np.dtype(f"int{indices.type.bit_width}").type).astype(np.int64)


def _null_rows(values: Any) -> npt.NDArray[np.int64]:
    """The positions of the nulls of a pyarrow array, in order."""
    import pyarrow.compute as pc

    if values.null_count == 0:
        return np.zeros(0, dtype=np.int64)
    return _numpy(pc.indices_nonzero(pc.is_null(values)), np.uint64).astype(np.int64)


@functools.cache
def parse_pool(pa: Any) -> Any:
    """The memory pool a run file is parsed in: pyarrow's jemalloc pool where the wheel has
    one, which hands the parse's pages back once they are freed (`release_unused`); the default
    (mimalloc) pool kept about 30 MB of them resident for the rest of a gate at 100,000
    entries, 7% of its peak memory. Elsewhere the default pool."""
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc
        return pa.default_memory_pool()


def _load(path: Path) -> tuple[Any, bytes, _Hasher] | None:
    """pyarrow, the file's bytes and their SHA-256 (computed beside the parse), or None when
    pyarrow is missing or the file is too small for the fast path to pay."""
    pa = _pyarrow()
    if pa is None or path.stat().st_size < _MIN_BYTES:
        return None
    data = path.read_bytes()
    return pa, data, _Hasher(data)


def read_jsonl_run(path: Path) -> dict[str, Any] | None:
    """The columns of a JSONL run read by pyarrow, or None (then the checked reader runs).

    Returns ids, index (each id's row), offsets, codes, vocab, scores (NaN where a hit has no
    score), details (the other fields of each row, in file order), unretrieved (the line of
    every row without `retrieved`, by id), the file's SHA-256 and hit_content (False when no
    byte of the file can be a hit's chunk text or content hash)."""
    loaded = _load(path)
    if loaded is None:
        return None
    pa, data, hasher = loaded
    import pyarrow.compute as pc
    import pyarrow.json as pj

    try:
        return _read_jsonl(pa, pc, pj, data, hasher)
    finally:
        hasher.hexdigest()  # join the thread on every exit
        # the parse buffers are freed by now; their allocator would keep the pages (tens of
        # MB per file) for the rest of the command, which never parses as much again
        parse_pool(pa).release_unused()


def _read_jsonl(pa: Any, pc: Any, pj: Any, data: bytes, hasher: _Hasher) -> dict[str, Any] | None:
    lines = _one_object_per_line(data)
    if lines is None:
        return None
    hit = pa.struct([("chunk_id", pa.string()), ("score", pa.float64())])
    schema = pa.schema([("id", pa.string()), ("retrieved", pa.list_(hit))])
    if lines == 0:
        return None  # the checked reader handles an empty file
    try:
        table = pj.read_json(
            pa.BufferReader(data),
            read_options=pj.ReadOptions(block_size=_BLOCK),
            parse_options=pj.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="infer"
            ),
            memory_pool=parse_pool(pa),
        )
    except (pa.ArrowException, ValueError, OverflowError):
        return None
    if table.num_rows != lines:
        return None
    ids_col = table.column("id").combine_chunks()
    ret = table.column("retrieved").combine_chunks()
    if ids_col.null_count:
        return None
    if pc.min(pc.utf8_length(ids_col)).as_py() == 0:  # (a Python scalar argument would
        return None  # import pandas, a second of CPU, to ask whether it is a pandas object)  # an empty id: the checked reader says where
    hits = ret.flatten()
    if hits.null_count:
        return None  # a null hit
    chunk = hits.field("chunk_id")
    if chunk.null_count:
        return None
    score = hits.field("score")
    if not _finite_or_null(score):
        return None  # NaN or an infinity: refused by the checked reader
    offsets = _numpy(ret.offsets, np.int32).astype(np.int64)
    offsets = offsets - offsets[0]
    ids: list[str] = ids_col.to_pylist()
    index = {rid: i for i, rid in enumerate(ids)}  # the run's own index, built here once
    if len(index) != len(ids):
        return None  # a duplicate id: the checked reader names both lines
    unretrieved: dict[str, int | None] = {}
    if ret.null_count:  # rows without `retrieved` (absent or null): no hits, their lines kept
        rows = _null_rows(ret)
        if np.any(offsets[rows] != offsets[rows + 1]):
            return None  # a null list over child values: not what the checked reader reads
        unretrieved = {ids[i]: int(i) + 1 for i in rows}  # one object per line: row i is line i+1
    enc = pc.dictionary_encode(chunk)
    codes = _codes(enc.indices)
    vocab: list[str] = enc.dictionary.to_pylist()
    scores = _numpy(score, np.float64).copy()
    scores[_null_rows(score)] = np.nan
    if table.num_columns == 2:  # nothing but ids and hits: no row has details
        details: list[dict[str, Any]] = [NO_DETAILS] * len(ids)
    else:
        parsed = _details(data)
        if parsed is None:
            return None
        details = parsed
    return {
        "ids": ids,
        "index": index,
        "offsets": offsets,
        "codes": codes,
        "vocab": vocab,
        "scores": scores,
        "details": details,
        "unretrieved": unretrieved,
        "sha256": hasher.hexdigest(),
        # what `assay.runs.corpus.hit_content` looks for first, asked of the bytes in hand
        "hit_content": b'"content_hash"' in data or b'"text"' in data,
    }


def _calls_ok(value: Any) -> bool:
    from assay.dataset import parse_calls

    try:
        parse_calls(value)
    except ValueError:
        return False
    return True


def _details(data: bytes) -> list[dict[str, Any]] | None:
    """Every row's fields other than id and retrieved, as the checked reader keeps them (parsed
    by orjson when installed, else json; a line either refuses sends the caller back)."""
    try:
        import orjson

        loads: Any = orjson.loads
        errors: tuple[type[Exception], ...] = (orjson.JSONDecodeError,)
        if re.search(rb"\d{19}", data):
            raise ImportError  # orjson reads integers beyond 64 bits as floats; json keeps them
    except ImportError:
        import json

        loads = json.loads
        errors = (ValueError,)
    out: list[dict[str, Any]] = []
    try:
        for raw in data.splitlines():
            obj = loads(raw)
            if obj.get("tool_calls") is not None and not _calls_ok(obj["tool_calls"]):
                return None  # the checked reader names the line and the field
            out.append({k: v for k, v in obj.items() if k != "id" and k != "retrieved"})
    except errors:
        return None
    return out


def _no_empty_fields(data: bytes, step: int = 1 << 22) -> bool:
    """No two blank bytes in a row (a blank here: a space, a newline or any control byte), no
    space at the start or the end, and no control byte but newlines: every field between single
    spaces is then non-empty, and no other whitespace splits a field.
    (A blank line or a control byte also answers False: the checked reader then reads the file,
    correctly, only slower.) Vectorised over 4 MiB slices: a byte string's two-byte search is
    several times slower on text that is one-sixth spaces."""
    if data.startswith(b" ") or data.endswith(b" "):
        return False
    arr = np.frombuffer(data, dtype=np.uint8)
    for lo in range(0, arr.size, step):
        part = arr[lo : lo + step + 1]  # one byte of overlap with the next slice
        blank = part <= 32
        if bool((blank[1:] & blank[:-1]).any()):
            return False
        if bool((blank & (part != 32) & (part != 10)).any()):
            return False  # a tab, a carriage return, any other control byte
    return True


_COLUMNS = ["q", "z", "d", "r", "s", "t"]


def read_trec_columns(path: Path) -> tuple[Any, list[str], Any, list[str], Any, str] | None:
    """(query codes, query ids, doc codes, doc ids, scores, SHA-256) of a TREC run read by
    pyarrow's CSV reader, or None: then the checked reader runs. Only a strictly regular file is
    read here (six non-empty fields split by single spaces, ASCII, no other whitespace), so
    pyarrow's fields are exactly the checked reader's `str.split()` tokens.

    Only the query, docno and score columns are converted (the parser still counts six fields on
    every line, and refuses the file otherwise); an empty field anywhere, which pyarrow would
    read as a field and `str.split()` would not, is ruled out by `_no_empty_fields` beforehand.
    """
    loaded = _load(path)
    if loaded is None:
        return None
    pa, data, hasher = loaded
    import pyarrow.csv as pcsv

    try:
        if not (data.isascii() and _no_empty_fields(data)):
            return None
        try:
            table = pcsv.read_csv(
                pa.BufferReader(data),
                read_options=pcsv.ReadOptions(column_names=_COLUMNS, block_size=_TREC_BLOCK),
                parse_options=pcsv.ParseOptions(
                    delimiter=" ", quote_char=False, double_quote=False, escape_char=False
                ),
                convert_options=pcsv.ConvertOptions(
                    column_types={"q": pa.string(), "d": pa.string(), "s": pa.float64()},
                    include_columns=["q", "d", "s"],
                    null_values=[],
                    strings_can_be_null=False,
                    quoted_strings_can_be_null=False,
                    check_utf8=False,  # ASCII: checked above
                ),
                memory_pool=parse_pool(pa),
            )
        except (pa.ArrowException, ValueError, OverflowError):
            return None
        if table.num_rows == 0 or any(col.null_count for col in table.columns):
            return None
        q = table.column("q")
        d = table.column("d")
        with ThreadPoolExecutor(2) as pool:  # pyarrow releases the GIL: encode both at once
            qe, de = pool.map(_dictionary_codes, (q, d))
        s = table.column("s")
        scores = np.concatenate([_numpy(c, np.float64) for c in s.chunks])
        return (
            qe[0],
            qe[1],
            de[0],
            de[1],
            scores.astype(np.float64, copy=False),
            hasher.hexdigest(),
        )
    finally:
        hasher.hexdigest()


def _dictionary_codes(column: Any) -> tuple[npt.NDArray[np.int64], list[str]]:
    """(codes, distinct values in first-seen order) of a chunked string column: one hash table
    across the chunks (no copy of the strings into one array)."""
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(column)
    if enc.num_chunks == 0:
        return np.zeros(0, dtype=np.int64), []
    codes = np.concatenate([_codes(c.indices) for c in enc.chunks])
    values: list[str] = enc.chunk(enc.num_chunks - 1).dictionary.to_pylist()
    return codes, values
