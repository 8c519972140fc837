"""The server sends each response in one write (`assay.workbench.protect._CoalescingTransport`):
uvicorn's separate writes of a response's head and body reach the socket together."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("httptools")

from uvicorn.config import Config
from uvicorn.server import ServerState

from assay.workbench.protect import GuardedHttpProtocol, _CoalescingTransport


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = self.aborted = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "written after close"
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.9", 5555), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def set_write_buffer_limits(self, *a: Any, **k: Any) -> None:
        pass


def test_writes_of_one_loop_turn_go_out_as_one() -> None:
    async def main() -> FakeTransport:
        real = FakeTransport()
        t = _CoalescingTransport(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        t.write(b"HTTP/1.1 200 OK\r\n\r\n")
        t.write(b"")
        t.write(b'{"ok":true}')
        assert real.writes == []  # nothing before the turn ends
        await asyncio.sleep(0)
        assert real.writes == [b'HTTP/1.1 200 OK\r\n\r\n{"ok":true}']
        t.write(b"next")
        t.close()  # what is pending goes out before the close
        assert real.writes[-1] == b"next" and real.closed
        await asyncio.sleep(0)  # the scheduled flush finds nothing left
        assert len(real.writes) == 2
        return real

    asyncio.run(main())


def test_an_abort_drops_what_is_pending() -> None:
    async def main() -> None:
        real = FakeTransport()
        t = _CoalescingTransport(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        t.write(b"partial")
        t.abort()
        await asyncio.sleep(0)
        assert real.writes == [] and real.aborted

    asyncio.run(main())


def test_the_server_protocol_answers_a_request_in_one_write() -> None:
    """A request through the server's protocol and a small ASGI app that sends head and body
    separately (as every Starlette response does): one write on the socket."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await receive()
        body = b'{"task_id": 1}'
        headers = [(b"content-type", b"application/json"), (b"content-length", b"14")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def main() -> FakeTransport:
        config = Config(app=app, lifespan="off", access_log=False)
        config.load()
        real = FakeTransport()
        proto = GuardedHttpProtocol(config=config, server_state=ServerState(), app_state={})
        proto.connection_made(real)  # type: ignore[arg-type]
        proto.data_received(b"GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
        for _ in range(20):
            await asyncio.sleep(0)
        proto.connection_lost(None)
        return real

    real = asyncio.run(main())
    assert len(real.writes) == 1, real.writes
    assert real.writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert real.writes[0].endswith(b'\r\n\r\n{"task_id": 1}')
