"""One write per HTTP request (mcplab/transports/one_write.py): the held writes, then the transport
under httpx against a real server on 127.0.0.1, then which connections use it."""

from __future__ import annotations

import asyncio
import socket

import httpcore
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from http_helpers import served
from mcplab.transports.http import HTTPTransport
from mcplab.transports.one_write import HOLD_LIMIT, HeldWrites, OneWriteTransport

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the served app and the scripted server below run on asyncio


class Recorder(httpcore.AsyncNetworkStream):
    """A network stream that records each write and answers reads from a script."""

    def __init__(self, replies: list[bytes], fail_writes: bool = False) -> None:
        self.writes: list[bytes] = []
        self.replies, self.fail_writes, self.closed = replies, fail_writes, False

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self.fail_writes:
            raise httpcore.WriteError("the peer closed the connection")
        self.writes.append(buffer)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.replies.pop(0) if self.replies else b""

    async def aclose(self) -> None:
        self.closed = True


# --- held writes ---------------------------------------------------------------------------------------

async def test_a_head_and_a_body_leave_in_one_write_when_the_connection_reads():
    raw = Recorder([b"HTTP/1.1 200 OK\r\n"])
    held = HeldWrites(raw)
    await held.write(b"POST /mcp HTTP/1.1\r\nContent-Length: 2\r\n\r\n")
    await held.write(b"{}")
    assert raw.writes == []  # nothing leaves before the connection waits for an answer
    assert await held.read(1024) == b"HTTP/1.1 200 OK\r\n"
    assert raw.writes == [b"POST /mcp HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"]
    assert await held.read(1024) == b""
    assert len(raw.writes) == 1  # a read with nothing held writes nothing


async def test_a_large_body_is_not_held_whole():
    raw = Recorder([])
    held = HeldWrites(raw)
    await held.write(b"h" * 100)
    await held.write(b"b" * HOLD_LIMIT)
    assert raw.writes == [b"h" * 100 + b"b" * HOLD_LIMIT]
    await held.write(b"tail")
    await held.read(10)
    assert raw.writes[1:] == [b"tail"]


async def test_a_failed_write_still_lets_the_connection_read_the_early_answer():
    # httpcore's own rule: a server may answer (413, say) and close before it took the whole request
    raw = Recorder([b"HTTP/1.1 413 Payload Too Large\r\n"], fail_writes=True)
    held = HeldWrites(raw)
    await held.write(b"POST / HTTP/1.1\r\n\r\n")
    assert await held.read(1024) == b"HTTP/1.1 413 Payload Too Large\r\n"


async def test_closing_drops_what_was_held():
    raw = Recorder([])
    held = HeldWrites(raw)
    await held.write(b"half a request")
    await held.aclose()
    assert raw.closed and raw.writes == []


# --- the transport under httpx, against a real server --------------------------------------------------

async def echo(request: Request) -> Response:
    body = await request.body()
    return Response(body, headers={"X-Length": str(len(body))}, media_type="application/json")


async def test_requests_through_the_transport_get_their_answers_on_one_kept_connection():
    app = Starlette(routes=[Route("/mcp", echo, methods=["POST"])])
    async with served(app) as url:
        async with httpx.AsyncClient(transport=OneWriteTransport()) as client:
            big = b"[" + b"1," * HOLD_LIMIT + b"1]"  # longer than what is held: it goes out in pieces
            peers = set()
            for body in (b'{"jsonrpc":"2.0"}', big, b"{}"):
                response = await client.post(url, content=body)
                assert (response.status_code, response.content) == (200, body)
                assert response.headers["x-length"] == str(len(body))
                peers.add(response.extensions["network_stream"].get_extra_info("client_addr"))
            assert len(peers) == 1  # keep-alive: every request went over the same connection


async def test_a_refused_connection_is_httpx_connect_error():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with httpx.AsyncClient(transport=OneWriteTransport()) as client:
        with pytest.raises(httpx.ConnectError):
            await client.post(f"http://127.0.0.1:{port}/mcp", content=b"{}")


async def test_a_reply_cut_short_is_an_httpx_error_while_the_body_is_read():
    async def half_reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(half_reply, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, httpx.AsyncClient(transport=OneWriteTransport()) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.post(f"http://127.0.0.1:{port}/mcp", content=b"{}")


# --- which connections use it ----------------------------------------------------------------------------

@pytest.mark.parametrize("url, used", [
    ("http://127.0.0.1:8000/mcp", True),
    ("http://localhost:8000/mcp", True),
    ("https://127.0.0.1:8000/mcp", False),     # TLS: httpx's own transport, with its certificate checks
    ("http://mcp.example.org/mcp", False),     # another machine: httpx's own, with the environment's proxy
])
async def test_plain_http_on_this_machine_uses_one_write_per_request(url, used):
    transport = HTTPTransport(url)
    await transport.open()
    try:
        assert isinstance(transport._client._transport, OneWriteTransport) is used
    finally:
        await transport.close()
