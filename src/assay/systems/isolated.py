"""A Python system run in its own interpreter (``--system pkg.mod:attr --python PATH``).

The system's dependencies live in their own environment; assay's need not be installed there.
`IsolatedSystem` starts ``PATH -c <assay/systems/_worker.py>``, a standard-library-only server,
and calls the system over JSON lines (the protocol is in that file's docstring). To assay it is
a system like any other: `retrieve`, and `answer` / `trace` when the system has them; its
`identity()`, `corpus_hash`, `data_files` and `chunks_path` are read once, in the other
interpreter (the chunk table is then recorded in the run as in-process, and is part of its
cache keys: `assay.runner`). The
entry's principal crosses too (`assay.corpus.access.principal_json`), and reaches each of the
system's methods that names a ``principal`` keyword; a conversation turn's ``history`` likewise
reaches the methods that name it. `remote_keywords` says which methods name which keyword in the
other interpreter, and `assay.systems.protocol.takes_principal` / `takes_history` read it, so
the runner tells the history (and keys its cache on it) only when the system takes it.

Its identity's code hash covers the top-level packages of the system as *that* interpreter
imported them (the same rule as in-process, `assay.systems.identity.package_files`), plus the
interpreter's version; the ``--python`` path is one of its arguments.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from assay.errors import AssayError, UsageError

if TYPE_CHECKING:
    from assay.corpus import PrincipalLike

__all__ = ["IsolatedSystem", "RemoteSystemError"]

_WORKER = Path(__file__).with_name("_worker.py")


def _code_hash(roots: list[dict[str, Any]], python: str) -> str:
    """The identity's code hash from the worker's report of where its packages live."""
    h = hashlib.sha256()
    files: dict[str, Path] = {}
    extra = [f"python:{python}"]
    for root in roots:
        top = str(root["top"])
        if root.get("dist"):
            extra.append(f"dist:{root['dist']}")
            continue
        paths = [Path(p) for p in root.get("paths") or []]
        if paths:
            for d in paths:
                if d.is_dir():
                    for p in sorted(d.rglob("*.py")):
                        files[f"{top}/{p.relative_to(d).as_posix()}"] = p
        elif root.get("file") and str(root["file"]).endswith(".py"):
            files[f"{top}.py"] = Path(str(root["file"]))
    for name in sorted(files):
        h.update(name.encode("utf-8") + b"\0" + files[name].read_bytes() + b"\0")
    for item in sorted(extra):
        h.update(item.encode("utf-8") + b"\0")
    return h.hexdigest()[:16]


class RemoteSystemError(AssayError):
    """An exception the system raised in the other interpreter. Each remote exception type gets
    a subclass of its name, so ``entry q7: ValueError: ...`` reads as it would in-process."""


_REMOTE: dict[str, type[RemoteSystemError]] = {}


def _remote_error(name: str) -> type[RemoteSystemError]:
    cls = _REMOTE.get(name)
    if cls is None:
        cls = _REMOTE[name] = type(name, (RemoteSystemError,), {"__module__": __name__})
    return cls


class IsolatedSystem:
    """A system served by another Python interpreter (see the module docs)."""

    max_workers = 1

    def __init__(self, python: str | Path, spec: str, kwargs: dict[str, Any] | None = None):
        exe = str(python)
        found = shutil.which(exe) if not Path(exe).exists() else exe
        if found is None:
            raise UsageError(f"--python {exe}: no such interpreter")
        self.python = exe
        self.spec = spec
        self._lock = threading.Lock()
        try:
            self._proc: subprocess.Popen[str] | None = subprocess.Popen(
                [found, "-c", _WORKER.read_text(encoding="utf-8")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                bufsize=1,
            )
        except OSError as exc:
            raise UsageError(f"--python {exe}: cannot start it ({exc.strerror or exc})") from None
        try:
            info = self._ask({"op": "load", "spec": spec, "kwargs": kwargs or {}})
        except BaseException:
            self.close()
            raise
        self.identity = info.get("identity")
        self.corpus_hash = info.get("corpus_hash")
        self.data_files = info.get("data_files")
        self.chunks_path: str | None = info.get("chunks_path")
        self.interpreter = str(info.get("python", ""))
        self._assay_code = _code_hash(list(info.get("roots") or []), self.interpreter)
        told = info.get("keywords") or {}
        self.remote_keywords: dict[str, frozenset[str]] = {
            name: frozenset(told.get(name) or ()) for name in ("principal", "history")
        }
        """Per keyword, the system's methods that name it in the other interpreter (the others
        are called without it)."""
        if info.get("answer"):
            self.answer = self._answer
        if info.get("trace"):
            self.trace = self._trace

    # -- the protocol -------------------------------------------------------------------------

    def _ask(self, request: dict[str, Any]) -> Any:
        proc = self._proc
        if proc is None:
            raise AssayError(f"--python {self.python}: the system was closed")
        stdin: IO[str] | None = proc.stdin
        stdout: IO[str] | None = proc.stdout
        assert stdin is not None and stdout is not None
        with self._lock:
            try:
                stdin.write(json.dumps(request) + "\n")
                stdin.flush()
                line = stdout.readline()
            except (BrokenPipeError, OSError):
                line = ""
        if not line:
            code = proc.poll()
            raise AssayError(
                f"--python {self.python}: the system's interpreter exited"
                + (f" (code {code})" if code is not None else "")
                + "; its error output is above"
            )
        reply = json.loads(line)
        if not reply.get("ok"):
            message = str(reply.get("error"))
            if reply.get("usage"):
                raise UsageError(f"--system {self.spec} (--python {self.python}): {message}")
            kind, sep, text = message.partition(": ")
            if sep and kind.isidentifier():
                raise _remote_error(kind)(text)
            raise RemoteSystemError(message)
        return reply.get("result")

    def _query(
        self,
        op: str,
        query: str,
        as_of: dt.date | None,
        principal: PrincipalLike | None,
        history: Sequence[Mapping[str, str]] | None,
        **more: Any,
    ) -> Any:
        """Ask the other interpreter `op` about `query` (as of `as_of`, for `principal`, after
        the conversation's `history`)."""
        from assay.corpus import principal_json  # here: loading the adapter stays light

        request: dict[str, Any] = {
            "op": op,
            "query": query,
            "as_of": as_of.isoformat() if as_of is not None else None,
            **more,
            "principal": principal_json(principal),
        }
        if history is not None:
            request["history"] = [dict(m) for m in history]
        return self._ask(request)

    def retrieve(
        self,
        query: str,
        *,
        as_of: dt.date | None,
        k: int,
        principal: PrincipalLike | None = None,
        history: Sequence[Mapping[str, str]] | None = None,
    ) -> Sequence[Any]:
        out: Sequence[Any] = self._query("retrieve", query, as_of, principal, history, k=k)
        return out

    def _trace(
        self,
        query: str,
        *,
        as_of: dt.date | None,
        k: int,
        principal: PrincipalLike | None = None,
        history: Sequence[Mapping[str, str]] | None = None,
    ) -> Any:
        return self._query("trace", query, as_of, principal, history, k=k)

    def _answer(
        self,
        query: str,
        *,
        as_of: dt.date | None,
        hits: list[Any],
        principal: PrincipalLike | None = None,
        history: Sequence[Mapping[str, str]] | None = None,
    ) -> Any:
        sent = [{"chunk_id": h.chunk_id, "score": h.score} for h in hits]
        return self._query("answer", query, as_of, principal, history, hits=sent)

    def close(self) -> None:
        """End the other interpreter (it closes the system first, when it has `close`)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def __del__(self) -> None:  # a system dropped without close() still ends its interpreter
        with contextlib.suppress(Exception):
            self.close()
