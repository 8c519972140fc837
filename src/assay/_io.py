"""Small file helpers: atomic writes (no partial output), hashing, JSONL reading with line numbers."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import re
import sys
import tempfile
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from assay.errors import DataError, Problem

HELD: list[object] | None = None
"""What `hold_until_exit` holds: None (nothing is held) unless the process is the command line
(`assay.cli.main`), whose one-shot commands leave without tearing the interpreter down."""


def hold_until_exit(obj: object) -> None:
    """Keep ``obj`` (a command's opened inputs) alive until the process ends, when it is the
    command line (`HELD`): its millions of objects are then reclaimed whole by the operating
    system as the command leaves (`assay.cli._common.leave_at_once`), not freed one by one
    once the command is done with them. Anywhere else this does nothing."""
    if HELD is not None:
        HELD.append(obj)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a block builds many long-lived objects (a
    dataset's entries, a chunk table, runs): each of its collections would walk every object
    built so far, a third of the gate's time at 100,000 entries, to find no cycle. The previous
    state is restored on the way out (also on an exception; nested uses keep it paused), and
    reference counting frees everything as before: only cycles wait for the next collection."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Write to a temporary file beside `path` and rename it into place only on success.

    A crash or an exception leaves the old file (or nothing) in place, never a partial file.
    A symlink is followed: its target is replaced and the link kept. An existing file keeps its
    permission bits; a new one gets the usual ones (0666 less the umask).
    """
    path = Path(path)
    if path.is_symlink():
        path = path.resolve()  # write the target, keep the link
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        # name the path the user gave, not the temporary file beside it
        raise _about(exc, path) from None
    try:
        file_mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        file_mode = 0o666 & ~umask  # mkstemp makes 0600; give the file the usual permissions
    os.chmod(tmp, file_mode)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename in (tmp, str(tmp)):
            raise _about(exc, path) from None
        raise


def _about(exc: OSError, path: Path) -> OSError:
    """The same error about `path` (the output the user named) instead of a temporary file."""
    # OSError(errno, ...) builds the matching subclass (PermissionError for EACCES, ...)
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


def check_outputs(
    outputs: Iterable[str | Path | None], inputs: Iterable[str | Path | None] = ()
) -> None:
    """Refuse, before anything is read or written, output paths that would hurt: one that is an
    input (the same file by any name), two outputs that are one file, a directory, a path whose
    parent is a file or a folder that cannot be written. Raises UsageError naming the path."""
    from assay.errors import UsageError

    ins = [Path(p) for p in inputs if p is not None]
    seen: list[Path] = []
    for out in (Path(p) for p in outputs if p is not None):
        for other in ins:
            if _same_file(out, other):
                raise UsageError(f"{out}: this output is an input ({other}); choose another path")
        for other in seen:
            if _same_file(out, other):
                raise UsageError(f"{out}: given for two outputs; choose two paths")
        seen.append(out)
        if out.is_dir():
            raise UsageError(f"{out}: is a directory, not a file")
        parent = next((a for a in out.absolute().parents if a.exists()), None)
        if parent is not None and not parent.is_dir():
            raise UsageError(f"{out}: cannot be written: {parent} is a file, not a folder")
        if parent is not None and not os.access(parent, os.W_OK | os.X_OK):
            raise UsageError(f"{out}: cannot be written: permission denied on {parent}")


def _same_file(a: Path, b: Path) -> bool:
    if a.absolute().resolve() == b.absolute().resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def not_utf8(path: str | Path) -> Problem:
    """The first line of `path` that is not UTF-8, as FILE:LINE: message."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return Problem(str(path), lineno, None, f"not UTF-8: {exc.reason}")
    return Problem(str(path), None, None, "not UTF-8")


def write_text_atomic(path: str | Path, text: str) -> None:
    with atomic_writer(path) as fh:
        fh.write(text)


def write_jsonl_atomic(path: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    n = 0
    with atomic_writer(path) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            n += 1
    return n


def dumps_canonical(obj: Any) -> str:
    """Deterministic JSON (sorted keys, no whitespace) for hashing."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


_LONG_INT = re.compile(rb"\d{19}")
_LONG_INT_TEXT = re.compile(r"\d{19}")
_DIGITS_AS_ZERO = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))


# what an integral float may look like once orjson wrote it (``60.0``, ``1e+16``); a match in a
# string only sends the line through `_canonical`, which leaves strings' digits alone
_MAYBE_INTEGRAL = re.compile(rb"\d\.0\b|\d[eE]")


def _canonical(v: Any) -> Any:
    """A JSON value as what it says: strings (keys too) in Unicode NFC, an integral float
    (``60.0``) as the integer it is (``60``)."""
    t = type(v)
    if t is str:
        return unicodedata.normalize("NFC", v)
    if t is float:
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    if t is dict:
        return {unicodedata.normalize("NFC", k): _canonical(x) for k, x in v.items()}
    if t is list:
        return [_canonical(x) for x in v]
    return v


def jsonl_identity(dataset_path: str | Path) -> str:
    """A JSON-lines file's content identity (the comparisons' ledger indexes datasets by it):
    SHA-256 of its JSON lines each re-encoded canonically (keys sorted, no whitespace, strings
    in Unicode NFC, integral numbers as integers), blank lines and a byte-order mark left out.
    What the file says, not how it spells it: line ends (CRLF), a BOM, key order and spacing,
    NFD text and ``60.0`` for ``60`` do not change it; a value, a line or their order does."""
    h = hashlib.sha256()
    data = Path(dataset_path).read_bytes().removeprefix(b"\xef\xbb\xbf")
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError:  # what the loader read another way: hash it as it is
            h.update(raw.strip())
        else:
            out = orjson.dumps(row, option=orjson.OPT_SORT_KEYS)
            if not out.isascii() or _MAYBE_INTEGRAL.search(out):  # else nothing to normalise
                out = orjson.dumps(_canonical(row), option=orjson.OPT_SORT_KEYS)
            h.update(out)
        h.update(b"\n")
    return h.hexdigest()


def has_long_int(data: bytes) -> bool:
    """Whether ``data`` holds a run of 19 ASCII digits (where `loads_line` asks `json`, not
    orjson), asked of a whole file at once: every digit made ``0`` and every other byte a
    blank, then one substring search (the regex `loads_line` uses per line would try a match at
    every digit of the file, ten times slower). A run never spans a line break, so a file
    without one has none on any line."""
    return b"0" * 19 in data.translate(_DIGITS_AS_ZERO)


def loads_line(raw: bytes | str, parse_constant: Callable[[str], Any] | None = None) -> Any:
    """`json.loads` of one line, through orjson (several times faster) when it gives the same
    value: orjson refuses what the standard library accepts (NaN and Infinity, a lone surrogate
    escape, a byte order mark, UTF-16) and reads an integer beyond 64 bits as a float, so a line
    orjson refuses, or one with a run of 19 digits, is read by `json.loads` (with
    ``parse_constant``), whose value or error is the answer. Every failure is a
    `json.JSONDecodeError` at its place: nesting past `MAX_DEPTH` ("nested too deeply", where
    `json` raised RecursionError) and an integer of more digits than Python converts ("an
    integer of more than 4,300 digits", where it raised ValueError) too."""
    long = _LONG_INT.search(raw) if isinstance(raw, bytes) else _LONG_INT_TEXT.search(raw)
    if not long:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(raw, parse_constant=parse_constant)
    except RecursionError:
        raise too_deep(raw) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
        raise too_long(raw) from None


def json_loads(raw: bytes | str, path: str | Path | None = None) -> Any:
    """A JSON text read as `loads_line` reads it: every reader of a whole JSON file (a manifest,
    a margin file, a schema, a calibration) reads through this. With `path`, a bad text is a
    DataError at FILE:LINE ("bad JSON: nested too deeply ..."), else the `json.JSONDecodeError`."""
    try:
        return loads_line(raw)
    except json.JSONDecodeError as exc:
        if path is None:
            raise
        raise DataError(f"bad JSON: {exc.msg}", file=path, line=exc.lineno) from None


def too_long(raw: bytes | str) -> json.JSONDecodeError:
    """The decode error of a JSON text holding an integer of more digits than Python converts
    to an int (`sys.get_int_max_str_digits`, 4,300), at the first such run of digits."""
    doc = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    limit = sys.get_int_max_str_digits() or 4300
    m = re.search(rf"\d{{{limit + 1},}}", doc)
    return json.JSONDecodeError(
        f"an integer of more than {limit:,} digits", doc, m.start() if m else 0
    )


def too_deep(raw: bytes | str) -> json.JSONDecodeError:
    """The decode error of a JSON text nested deeper than a parser goes (`json` raises
    RecursionError, orjson refuses past 1,024 levels): "nested too deeply", at the bracket
    where the nesting passed `MAX_DEPTH`, so every reader that reports a bad line reports it."""
    doc = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    depth, at, quoted, escaped = 0, 0, False, False
    for i, ch in enumerate(doc):
        if quoted:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                at = i
                break
        elif ch in "]}":
            depth -= 1
    return json.JSONDecodeError(f"nested too deeply (more than {MAX_DEPTH} levels)", doc, at)


MAX_DEPTH = 500
"""The nesting depth "nested too deeply" names (json's own limit is the interpreter's recursion
limit, about 1,000 levels less the caller's stack)."""


def _iter_jsonl(
    path: str | Path,
    problems: list[Problem] | None,
    hasher: Any | None,
    parse_constant: Callable[[str], Any] | None = None,
) -> Iterator[tuple[int, Any]]:
    path = Path(path)

    def report(problem: Problem) -> None:
        if problems is None:
            raise DataError(problem)
        problems.append(problem)

    if not path.exists():
        report(Problem(str(path), None, None, "file not found"))
        return
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if hasher is not None:
                hasher.update(raw)
            if not raw.strip():
                continue
            try:
                yield lineno, loads_line(raw, parse_constant)
            except json.JSONDecodeError as exc:
                report(
                    Problem(str(path), lineno, None, f"bad JSON: {exc.msg} (column {exc.colno})")
                )
            except UnicodeDecodeError as exc:
                report(Problem(str(path), lineno, None, f"not UTF-8: {exc.reason}"))


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield (line_number, parsed_object) for each non-blank line; bad JSON raises DataError.

    Use `iter_jsonl_lenient` to collect problems instead of stopping at the first.
    """
    return _iter_jsonl(path, None, None)


def iter_jsonl_lenient(
    path: str | Path,
    problems: list[Problem],
    *,
    hasher: Any | None = None,
    parse_constant: Callable[[str], Any] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Like iter_jsonl but appends problems to `problems` and goes on. With `hasher` (a hashlib
    object) every byte read is fed to it, so a reader hashes the file without reading it twice.
    `parse_constant` is json's hook for the non-JSON tokens NaN, Infinity and -Infinity."""
    return _iter_jsonl(path, problems, hasher, parse_constant)
