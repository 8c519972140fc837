"""Connection limits of the workbench server, so idle or trickling clients cannot starve it.

uvicorn closes a keep-alive connection that stays idle after a response, but waits forever for
the first request on a new connection and for a request's headers and body; thousands of
connections that never finish a request hold as many descriptors until the process runs out,
and then every refused accept logs a traceback. `GuardedHttpProtocol` (uvicorn's httptools
protocol with three limits) closes:

- a connection whose request headers have not all arrived `header_timeout` seconds after the
  connection opened or its previous response ended (an idle or slow-header connection);
- a connection whose request body has not all arrived `body_timeout` seconds after its headers;
- a connection whose replies the client does not read: once the server's send buffer is full
  (writing paused), the client must read within `write_timeout` seconds, else the connection is
  dropped (a client that pipelines requests and never reads escapes the other timers: its
  request is complete and the app's reply waits on the socket);
- a connection that pipelines more than `max_pipelined` requests ahead of their replies;
- at once, a new connection from an address that already holds `max_per_address` connections.
  Behind a reverse proxy in `trusted` (``--trusted-proxy``), the address is the client's as the
  proxy's X-Forwarded-For names it (`assay.workbench.routes._web.client_address`), read with
  each request's headers: the proxy's own connections are not capped by its address, and a
  client over its allowance has the connection closed before the request runs.

The protocol also sends each response in one write: uvicorn writes a response's head and its
body separately (two `send` calls, two TCP segments, two wake-ups of the client); what the app
writes in one turn of the event loop goes out together at the end of that turn
(`_CoalescingTransport`), and anything pending is sent before the connection closes.

Refused connections, and accepts the system refuses for lack of descriptors, are logged as one
warning line per `log_interval` seconds with their count, never one line (or traceback) each.
The limits hold per server process. `bench/bench_workbench_idle.py` measures them with 5,000
idle connections (docs/workbench.md).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["ConnectionLimits", "GuardedHttpProtocol", "RefusalLog", "install_accept_log"]

logger = logging.getLogger("assay.workbench")


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_per_address: int = 100
    log_interval: float = 60.0
    write_timeout: float = 30.0
    max_pipelined: int = 32
    trusted: tuple[str, ...] = ()  # reverse proxies whose X-Forwarded-For is believed


class RefusalLog:
    """Counts refused connections and logs them as one line per interval: the first refusal of
    an interval is logged when it happens, the rest at the start of the next one that has any."""

    def __init__(self, interval: float = 60.0) -> None:
        self.interval = interval
        self.pending: Counter[str] = Counter()
        self.last = float("-inf")
        self.lines = 0  # lines logged (for tests)

    def refused(self, why: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self.pending[why] += 1
        if now - self.last >= self.interval:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        if not self.pending:
            return
        self.last = time.monotonic() if now is None else now
        parts = ", ".join(f"{n} {why}" for why, n in sorted(self.pending.items()))
        logger.warning("refused connections (%s) in the last %.0f s", parts, self.interval)
        self.lines += 1
        self.pending.clear()


class _CoalescingTransport:
    """A transport whose writes made in one turn of the event loop go out as one write at the
    end of that turn (module docs). Closing sends what is pending first; aborting drops it.
    Everything else is the real transport's."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(bytes(data))

    def flush(self) -> None:
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._pending.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GuardedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with header and body timeouts and a per-address cap (see
    the module's docstring). `configure` sets the limits of the process."""

    limits = ConnectionLimits()
    refusals = RefusalLog(limits.log_interval)
    per_address: ClassVar[Counter[str]] = Counter()

    @classmethod
    def configure(cls, limits: ConnectionLimits) -> None:
        if limits.header_timeout <= 0 or limits.body_timeout <= 0:
            raise ValueError("header and body timeouts must be positive")
        if limits.max_per_address < 1 or limits.max_pipelined < 1:
            raise ValueError("max_per_address and max_pipelined must be at least 1")
        if limits.write_timeout <= 0:
            raise ValueError("the write timeout must be positive")
        from assay.workbench.routes._web import networks

        cls.limits = limits
        cls.refusals = RefusalLog(limits.log_interval)
        cls.trusted = networks(limits.trusted)

    trusted: ClassVar[list[Any]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._write_deadline: asyncio.TimerHandle | None = None
        self._address: str | None = None
        self._peer = "?"
        self._refused = False

    # -------------------------------------------------------------------- connections

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        self._peer = address
        if self._proxied():  # counted by the client its requests name, not by the proxy
            address = ""
        elif self.per_address[address] >= self.limits.max_per_address:
            self._refused = True
            self.transport = transport
            transport.abort()
            self.refusals.refused(f"over {self.limits.max_per_address} from one address")
            return
        if address:
            self.per_address[address] += 1
            self._address = address
        super().connection_made(_CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]
        self._arm(self.limits.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        self._disarm()
        self._disarm_write()
        self._uncount()
        super().connection_lost(exc)

    def _uncount(self) -> None:
        if self._address is not None:
            self.per_address[self._address] -= 1
            if self.per_address[self._address] <= 0:
                del self.per_address[self._address]
            self._address = None

    def _proxied(self) -> bool:
        from assay.workbench.routes._web import is_trusted

        return is_trusted(self._peer, self.trusted)

    def _count_client(self) -> bool:
        """Behind a trusted proxy: count the connection as its request's client's; False (and
        the connection dropped) when that client is over its allowance."""
        from assay.workbench.routes._web import client_address

        lines = [v.decode("latin-1") for n, v in self.headers if n == b"x-forwarded-for"]
        client = client_address(self._peer, lines, self.trusted)
        if client == self._address:
            return True
        self._uncount()
        if self.per_address[client] >= self.limits.max_per_address:
            self.refusals.refused(f"over {self.limits.max_per_address} from one address")
            self.transport.abort()
            return False
        self.per_address[client] += 1
        self._address = client
        return True

    # -------------------------------------------------------------------- timeouts

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()

    def on_message_begin(self) -> None:
        if self._deadline is None:  # a pipelined request: its headers must arrive in time too
            self._arm(self.limits.header_timeout)
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        if len(self.pipeline) >= self.limits.max_pipelined:
            self.refusals.refused(f"over {self.limits.max_pipelined} pipelined requests")
            self.transport.abort()
            return
        if self.trusted and self._proxied() and not self._count_client():
            return
        self._arm(self.limits.body_timeout)
        super().on_headers_complete()

    # the client must read what it asked for: a full send buffer has `write_timeout` to drain
    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_deadline is None:
            self._write_deadline = self.loop.call_later(self.limits.write_timeout, self._stalled)

    def resume_writing(self) -> None:
        self._disarm_write()
        super().resume_writing()

    def _disarm_write(self) -> None:
        if self._write_deadline is not None:
            self._write_deadline.cancel()
            self._write_deadline = None

    def _stalled(self) -> None:
        self._write_deadline = None
        self.refusals.refused("replies not read in time")
        if not self.transport.is_closing():
            self.transport.abort()  # close() would wait for the unread buffer to drain

    def on_message_complete(self) -> None:
        self._disarm()  # the app has the request: its own time is not limited here
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm(self.limits.header_timeout)  # idle until the next request's headers


def install_accept_log(loop: asyncio.AbstractEventLoop, refusals: RefusalLog) -> None:
    """Turn asyncio's log of accepts refused for lack of descriptors ("socket.accept() out of
    system resource", one traceback per attempt) into `refusals`' one line per interval; every
    other error goes to the handler that was there."""
    previous = loop.get_exception_handler()

    def handler(lp: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if "accept" in str(context.get("message", "")) and isinstance(exc, OSError):
            refusals.refused(f"accepts failed ({exc.strerror or exc})")
            return
        if previous is not None:
            previous(lp, context)
        else:
            lp.default_exception_handler(context)

    loop.set_exception_handler(handler)
