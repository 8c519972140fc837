"""``--system http://host:port/path``: a system behind an HTTP endpoint.

assay POSTs ``{"query": str, "as_of": "YYYY-MM-DD" | null, "k": int, "principal": {"role":
str, "groups": [str, ...], "clearance": "public" | "internal" | "insider" | "director"} | null}``
and expects ``{"hits": [{"chunk_id": str, "score": float}, ...], "answer": str?, "citations":
[str]?, "trace": any?}``. ``principal`` is who asks the entry (null: the public, or an entry
that names none); on a conversation's turn the request also has ``"history": [{"role": "user"
| "assistant", "content": str}, ...]`` (the earlier turns, `assay run --history`); the server
must not return evidence that principal may not see
(`assay.corpus.access`), as it must not return evidence that was not public on ``as_of``. The
request cache keys on the principal too, so one principal's cached reply is never another's. Calls run 8 at a time (``--workers``). Transport errors, timeouts and 5xx
replies are retried (``--retries``) while the entry's deadline allows.

Time is bounded twice: ``--timeout`` for each read (connecting, each piece of the reply) and
``--deadline`` for the whole entry, retries included, so neither a hung server nor one that
trickles its reply byte by byte holds a run for longer than the deadline per entry.

A reply may say which index it was retrieved from, so the run records its corpus: a field
``"index": "<hash>"`` (or ``{"hash": ..., "chunks": "path/to/chunks.jsonl"}``, the chunk table's
location too) or the header ``X-Assay-Index: <hash>``. Every reply of a run must name the same
index. Without it, ``assay run --corpus-id`` sets the corpus by hand.

The index is part of the request cache key, and only the server knows which one it is on now,
so the runner (`assay.runner`) calls the first entry of every run live, never from the cache
(`respond` marks a system whose replies name their index), and keys every lookup of the run on
the index that reply names; each reply is stored under the index *it* names. A server restarted
on another index therefore gets no row from the cache, whatever ``--system-version`` says, and
a journal of rows made on another index is refused on resume. The price is one call per run
when every other row is cached (a rerun needs the server up). A server whose replies name no
index is keyed as before: it is not told apart when it changes index.

An HTTP system's identity is its URL and ``--system-version``: assay cannot see the server's
code, so give a new ``--system-version`` (a commit, a model name) when the server changes, or
the request cache replays the old replies. Headers (``--header``) are not part of the identity
and are never stored.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assay._io import json_loads
from assay.errors import AssayError, UsageError
from assay.systems.registry import Adapter, Option, register_adapter

if TYPE_CHECKING:
    from assay.corpus import PrincipalLike

__all__ = ["ADAPTER", "INDEX_HEADER", "HttpSystem"]

MAX_REPLY_BYTES = 64 << 20
INDEX_HEADER = "X-Assay-Index"


class _Retryable(Exception):
    pass


class HttpSystem:
    """A system behind an HTTP endpoint (see the module docs for the wire format)."""

    max_workers = 8

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        deadline: float = 60.0,
        retries: int = 3,
        headers: dict[str, str] | None = None,
        system_version: str | None = None,
    ):
        import httpx

        if timeout <= 0 or deadline <= 0:
            raise UsageError("--timeout and --deadline must be positive (seconds)")
        if retries < 0:
            raise UsageError("--retries must be 0 or more")
        self.url = url
        self.timeout = float(timeout)
        self.deadline = float(deadline)
        self.retries = retries
        self.system_version = system_version
        self._client = httpx.Client(headers=headers or {}, timeout=self.timeout)

    def identity(self) -> dict[str, Any]:
        return {"kind": "http", "url": self.url, "system_version": self.system_version}

    # -- one entry ----------------------------------------------------------------------------

    def respond(
        self,
        query: str,
        *,
        as_of: dt.date | None,
        k: int,
        principal: PrincipalLike | None = None,
        history: list[dict[str, str]] | None = None,
    ) -> dict[str, Any]:
        """POST one query asked by `principal` (None: the public); the reply as a dict with a
        `hits` list, within the deadline. `history`: a conversation turn's earlier turns, sent
        in the request's ``history`` field (left out for an entry of no conversation)."""
        from assay.corpus import principal_json  # here: loading the adapter stays light

        payload: dict[str, Any] = {
            "query": query,
            "as_of": as_of.isoformat() if as_of else None,
            "k": k,
            "principal": principal_json(principal),
        }
        if history is not None:
            payload["history"] = history
        deadline = time.monotonic() + self.deadline
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["reply"] = self._with_retries(payload, deadline)
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=work, name="assay-http", daemon=True)
        worker.start()
        # the worker checks the deadline itself; this join is the guarantee when a read blocks
        worker.join(max(0.0, deadline - time.monotonic()) + 0.25)
        if worker.is_alive():
            raise AssayError(f"{self.url}: {self._late()}")
        if "error" in box:
            raise box["error"]
        reply: dict[str, Any] = box["reply"]
        return reply

    def _late(self) -> str:
        return (
            f"no complete reply within the {self.deadline:g} s deadline "
            "(--deadline; each read may take --timeout)"
        )

    def _with_retries(self, payload: dict[str, Any], deadline: float) -> dict[str, Any]:
        delay = 0.5
        tries = 0
        while True:
            tries += 1
            try:
                return self._post(payload, deadline)
            except _Retryable as exc:
                remaining = deadline - time.monotonic()
                if tries > self.retries or remaining <= delay:
                    why = (
                        f"failed after {tries} tries"
                        if tries > self.retries
                        else f"{self._late()}; {tries} tries"
                    )
                    raise AssayError(f"{self.url}: {why}: {exc}") from None
                time.sleep(delay)
                delay *= 2

    def _post(self, payload: dict[str, Any], deadline: float) -> dict[str, Any]:
        import httpx

        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Retryable("no time left")
        timeout = httpx.Timeout(min(self.timeout, remaining))
        try:
            with self._client.stream("POST", self.url, json=payload, timeout=timeout) as resp:
                body = bytearray()
                for chunk in resp.iter_bytes():
                    body += chunk
                    if time.monotonic() > deadline:
                        raise AssayError(f"{self.url}: {self._late()} (the reply was trickling)")
                    if len(body) > MAX_REPLY_BYTES:
                        raise AssayError(f"{self.url}: the reply exceeds {MAX_REPLY_BYTES} bytes")
                status = resp.status_code
                index_header = resp.headers.get(INDEX_HEADER)
        except httpx.TimeoutException as exc:
            raise _Retryable(
                f"timed out ({type(exc).__name__}, --timeout {self.timeout:g} s)"
            ) from None
        except httpx.TransportError as exc:
            raise _Retryable(f"{type(exc).__name__}: {exc}") from None
        if status >= 500:
            raise _Retryable(f"HTTP {status}")
        if status >= 400:
            text = bytes(body[:200]).decode("utf-8", "replace")
            raise AssayError(f"{self.url}: HTTP {status}: {text}")
        data = self._parse(bytes(body))
        if data.get("index") is None and index_header:
            data["index"] = index_header.strip()
        return data

    def _parse(self, body: bytes) -> dict[str, Any]:
        try:
            data = json_loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            shown = body[:80].decode("utf-8", "replace")
            raise AssayError(f"{self.url}: the reply is not JSON ({exc}): {shown!r}") from None
        if not isinstance(data, dict) or not isinstance(data.get("hits"), list):
            raise AssayError(f"{self.url}: the reply must be a JSON object with a 'hits' list")
        if data.get("answer") is not None and not isinstance(data["answer"], str):
            raise AssayError(f"{self.url}: 'answer' must be a string or null")
        cites = data.get("citations")
        if cites is not None and (
            not isinstance(cites, list) or not all(isinstance(c, str) for c in cites)
        ):
            raise AssayError(f"{self.url}: 'citations' must be a list of chunk ids")
        index = data.get("index")
        if index is not None and not (
            (isinstance(index, str) and index)
            or (isinstance(index, dict) and isinstance(index.get("hash"), str))
        ):
            raise AssayError(
                f"{self.url}: 'index' must be the index's hash (a string) or "
                '{"hash": str, "chunks": path}'
            )
        return data

    # -- the System protocol ------------------------------------------------------------------

    def retrieve(
        self,
        query: str,
        *,
        as_of: dt.date | None,
        k: int,
        principal: PrincipalLike | None = None,
    ) -> Sequence[Any]:
        hits: list[Any] = self.respond(query, as_of=as_of, k=k, principal=principal)["hits"]
        return hits

    def close(self) -> None:
        self._client.close()


def _headers(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header {item!r}: expected 'Name: value'")
        out[name.strip()] = value.strip()
    return out


def _build(spec: str, options: dict[str, Any]) -> HttpSystem:
    return HttpSystem(
        spec,
        timeout=options["timeout"],
        deadline=options["deadline"],
        retries=options["retries"],
        headers=_headers(options["header"]),
        system_version=options["system_version"],
    )


ADAPTER = register_adapter(
    Adapter(
        name="http",
        usage="http(s)://HOST/PATH",
        help='POST {"query", "as_of", "k", "principal"} -> {"hits": [...], "answer"?, '
        '"citations"?}; '
        "called 8 at a time, retried on transport errors and 5xx within the deadline.",
        build=_build,
        matches=lambda spec: spec.startswith(("http://", "https://")),
        options=(
            Option(
                "system_version",
                str,
                "what the server runs (a commit, a model): part of the system's identity, so a "
                "new version is a cache miss",
            ),
            Option(
                "timeout",
                float,
                "seconds to wait for each read (connect, each piece of the reply)",
                default=30.0,
                identity=False,
            ),
            Option(
                "deadline",
                float,
                "seconds one entry may take in all, retries included",
                default=60.0,
                identity=False,
            ),
            Option("retries", int, "retries on errors and 5xx", default=3, identity=False),
            Option(
                "header",
                str,
                "'Name: value' sent with every request (repeatable; never stored)",
                multiple=True,
                identity=False,
            ),
        ),
        examples=(
            "assay run golden.jsonl --system http://localhost:8000/retrieve "
            "--system-version v2 --out run.jsonl",
        ),
    )
)
