"""What a system is, for caches and run journals: its spec, arguments, code and data.

`system_identity` is what the request cache keys on and what every run journal row records, so
that a result is replayed only for the system that produced it. Its parts:

- ``spec``: how the system was named (``bm25``, ``pkg.mod:build``, a URL);
- ``args``: the options it was built with that change its answers (paths as strings);
- ``identity``: what the system declares through ``identity()`` (or an attribute of that name),
  when it does. It is combined with the code hash, never used instead of it;
- ``code``: a hash of every ``.py`` file of the *top-level package* of the system's class (for
  ``mypkg.retrieval.dense.Dense``: every file under ``mypkg/``), of the top-level package of the
  module an import path names, and of any extra `modules`. A single-module system (``mysys.py``)
  is that file. A top-level package installed in ``site-packages`` (not an editable install) is
  known by its distribution's name and version instead of its files. Editing any of those files
  is a cache miss; file names relative to the package, not absolute paths, enter the hash;
- ``data``: a hash of the contents of the files the system declares through ``data_files()``
  (or an attribute of that name): paths of files or folders (every file below a folder). A
  declared path that does not exist enters the hash as missing.

What is not seen: code outside the system's top-level package (another package of yours that it
imports, a library's version in an editable install elsewhere), files the system reads without
declaring them, environment variables, and anything behind a network call. Declare those through
``identity()`` or ``data_files()``.

`corpus_hash_of` reads the optional ``corpus_hash`` of a system (attribute or method).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from assay._io import dumps_canonical, sha256_bytes
from assay.errors import UsageError
from assay.systems.registry import find_adapter

__all__ = [
    "chunk_table_of",
    "corpus_hash_of",
    "data_files_of",
    "data_hash",
    "identity_hash",
    "identity_parts",
    "package_files",
    "package_hash",
    "source_hash",
    "system_identity",
]

_IMPORT_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
_INSTALLED = ("site-packages", "dist-packages")


def _module(module: str | ModuleType) -> ModuleType | None:
    if isinstance(module, ModuleType):
        return module
    mod = sys.modules.get(module)
    if mod is None:
        try:
            mod = importlib.import_module(module)
        except ImportError:
            return None
    return mod


def _module_files(module: str | ModuleType) -> list[tuple[str, Path]]:
    mod = _module(module)
    if mod is None:
        return []
    file = getattr(mod, "__file__", None)
    if not file:
        return []  # built in, or a namespace package
    path = Path(file)
    if path.suffix != ".py" or not path.exists():
        return []  # compiled extension or frozen: nothing to read
    if path.name == "__init__.py":
        root = path.parent
        return [
            (f"{mod.__name__}/{p.relative_to(root).as_posix()}", p)
            for p in sorted(root.rglob("*.py"))
        ]
    return [(mod.__name__, path)]


def _hash_files(files: Mapping[str, Path], extra: Iterable[str] = ()) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode("utf-8") + b"\0")
        h.update(files[name].read_bytes())
        h.update(b"\0")
    for item in sorted(extra):
        h.update(item.encode("utf-8") + b"\0")
    return h.hexdigest()[:16]


def source_hash(*modules: str | ModuleType) -> str | None:
    """A hash of the source files of `modules` themselves (a package's ``__init__`` stands for
    the whole package folder), or None when none has a readable ``.py`` file. Names, not
    locations, enter the hash: moving a checkout does not change it, editing a file does.

    (`package_hash` widens each module to its top-level package: what a system's identity uses.)
    """
    files: dict[str, Path] = {}
    for m in modules:
        if isinstance(m, str) and m in ("builtins", "__builtin__"):
            continue
        files.update(_module_files(m))
    return _hash_files(files) if files else None


def _installed_as(top: str, roots: list[Path]) -> str | None:
    """``name==version`` of the distribution that installed top-level package `top` into
    site-packages (not an editable install), else None."""
    if not roots or not all(any(p in _INSTALLED for p in r.parts) for r in roots):
        return None
    dists = sorted(set(importlib.metadata.packages_distributions().get(top, [])))
    if not dists:
        return None
    out = []
    for name in dists:
        try:
            out.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            return None
    return ",".join(out)


def package_files(module: str | ModuleType) -> tuple[dict[str, Path], str | None]:
    """The source files of `module`'s top-level package (name -> path, names relative to the
    package: ``mypkg/sub/x.py``), or, for a package installed in site-packages, ({},
    "dist==version"). A single-module top level is its one file; ``__main__`` is the script."""
    name = module.__name__ if isinstance(module, ModuleType) else str(module)
    top = name.partition(".")[0]
    if top in ("builtins", "__builtin__") or top in sys.builtin_module_names:
        return {}, None
    mod = module if isinstance(module, ModuleType) and name == top else _module(top)
    if mod is None:
        return {}, None
    paths = [Path(p) for p in getattr(mod, "__path__", [])]
    if paths:  # a package (regular or namespace): every .py file under its folder(s)
        dist = _installed_as(top, paths)
        if dist is not None:
            return {}, dist
        files: dict[str, Path] = {}
        for root in paths:
            if root.is_dir():
                for p in sorted(root.rglob("*.py")):
                    files[f"{top}/{p.relative_to(root).as_posix()}"] = p
        return files, None
    file = getattr(mod, "__file__", None)
    if not file or Path(file).suffix != ".py" or not Path(file).exists():
        return {}, None
    dist = _installed_as(top, [Path(file).parent])
    if dist is not None:
        return {}, dist
    return {Path(file).name if top == "__main__" else f"{top}.py": Path(file)}, None


def package_hash(*modules: str | ModuleType) -> str | None:
    """A hash of the top-level packages of `modules` (see `package_files`), or None when none
    has source to read or a distribution to name."""
    files: dict[str, Path] = {}
    dists: set[str] = set()
    for m in modules:
        found, dist = package_files(m)
        files.update(found)
        if dist is not None:
            dists.add(f"dist:{dist}")
    if not files and not dists:
        return None
    return _hash_files(files, dists)


def _declared(system: Any) -> Any:
    ident = getattr(system, "identity", None)
    return ident() if callable(ident) else ident


def data_files_of(system: Any) -> list[str] | None:
    """The paths a system declares through ``data_files`` (attribute or method), or None."""
    value = getattr(system, "data_files", None)
    if callable(value):
        value = value()
    if value is None:
        return None
    if isinstance(value, (str, Path)):
        value = [value]
    try:
        return [str(v) for v in value]
    except TypeError:
        raise UsageError(
            f"{type(system).__name__}.data_files must be a list of paths, not "
            f"{type(value).__name__}"
        ) from None


def data_hash(paths: Iterable[str | Path]) -> str:
    """A hash of the contents of `paths`, in the order given: a file's name and bytes, a
    folder's name and every file below it (relative names, sorted); a missing path as missing."""
    h = hashlib.sha256()
    for i, raw in enumerate(paths):
        p = Path(raw)
        h.update(f"{i}\0{p.name}\0".encode())
        if p.is_file():
            h.update(b"file\0" + hashlib.sha256(p.read_bytes()).digest())
        elif p.is_dir():
            h.update(b"dir\0")
            for f in sorted(q for q in p.rglob("*") if q.is_file()):
                h.update(f.relative_to(p).as_posix().encode("utf-8") + b"\0")
                h.update(hashlib.sha256(f.read_bytes()).digest())
        else:
            h.update(b"missing\0")
    return h.hexdigest()[:16]


def corpus_hash_of(system: Any) -> str | None:
    """The system's ``corpus_hash`` (attribute or method), or None when it declares none."""
    value = getattr(system, "corpus_hash", None)
    if callable(value):
        value = value()
    return None if value is None else str(value)


def chunk_table_of(system: Any, corpus: str | None = None) -> dict[str, str] | None:
    """``{"path", "hash", "fingerprint"}`` of the chunk table a system searches, when it says
    where it is (``chunks_path``, attribute or method): the absolute path, the file's hash (16
    hex digits of its SHA-256, as `assay.corpus.ChunkTable.version`) and the table's content
    fingerprint (`assay.corpus.ChunkTable.fingerprint`); None otherwise."""
    value = getattr(system, "chunks_path", None)
    if callable(value):
        value = value()
    if value is None:
        return None
    return table_record(value)


def table_record(path: str | Path) -> dict[str, str] | None:
    """What a run records of the chunk table at `path` (see `chunk_table_of`); None when there
    is no file there. Read once per file version in a process."""
    path = Path(str(path))
    if not path.is_file():
        return None
    st = path.stat()
    return dict(_table_record(str(path.resolve()), st.st_size, st.st_mtime_ns))


@functools.lru_cache(maxsize=16)
def _table_record(path: str, size: int, mtime_ns: int) -> tuple[tuple[str, str], ...]:
    from assay.corpus import load_chunks

    table = load_chunks(path)
    assert table.version is not None
    return (("path", path), ("hash", table.version), ("fingerprint", table.fingerprint))


def _arg(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_arg(v) for v in value]
    return value


def system_identity(
    system: Any,
    spec: str | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    modules: Iterable[str] = (),
) -> dict[str, Any]:
    """What makes a system's answers what they are (see the module docs).

    `options` are the arguments it was built with (None values and options an adapter marks as
    not changing answers are left out); `modules` adds modules whose top-level packages count.
    A system run in another interpreter (``--python``) brings its code hash with it
    (``_assay_code``), computed from the files that interpreter imported.
    """
    out: dict[str, Any] = {"spec": spec or f"{type(system).__module__}.{type(system).__qualname__}"}
    if options:
        adapter = None
        if spec is not None:
            try:
                adapter = find_adapter(spec)
            except UsageError:  # an ad-hoc spec (a label): every option counts
                adapter = None
        args = {}
        for name, value in sorted(options.items()):
            opt = adapter.option(name) if adapter is not None else None
            if value is None or (opt is not None and not opt.identity):
                continue
            args[name] = _arg(value)
        if args:
            out["args"] = args
    declared = _declared(system)
    if declared is not None:
        out["identity"] = declared
    code = getattr(system, "_assay_code", None)
    if code is None:
        mods = [type(system).__module__, *modules]
        # the module an import path names (only when it was imported: a spec may be a label)
        if spec is not None and _IMPORT_SPEC.match(spec) and spec.partition(":")[0] in sys.modules:
            mods.append(spec.partition(":")[0])
        code = package_hash(*dict.fromkeys(mods))
    if code is not None:
        out["code"] = code
    files = data_files_of(system)
    if files is not None:
        out["data"] = data_hash(files)
    return out


def identity_parts(identity: Mapping[str, Any]) -> dict[str, str]:
    """A short hash of each part of an identity (spec, args, identity, code, data), so that a
    journal of another run can say which part changed."""
    return {k: sha256_bytes(dumps_canonical(v).encode("utf-8"))[:12] for k, v in identity.items()}


def identity_hash(identity: Mapping[str, Any]) -> str:
    """A short stable hash of an identity (what journal rows and cache listings show)."""
    return sha256_bytes(dumps_canonical(dict(identity)).encode("utf-8"))[:16]
