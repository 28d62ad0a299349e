"""One write per HTTP request: an httpx transport that sends a request's head and body together.

Theory of operation
-------------------
httpx hands each request to httpcore, whose HTTP/1.1 code writes the head (request line and
headers) and then the body: two writes, so two system calls and two TCP segments for one small
POST. Between two processes on 127.0.0.1 the second segment is not free: the server wakes up for
the head, finds no body, waits, and wakes up again for the body. Over Streamable HTTP every MCP
message is such a POST, so a client pays this on every call (measured against the weather server:
one write instead of two saves the client and the server each some 4 to 8 % of their CPU time per call).

:class:`OneWriteTransport` keeps httpcore's connection pool and HTTP/1.1 code, and gives them a
network stream (:class:`HeldWrites`) that holds what is written until the connection next reads.
HTTP/1.1 writes a whole request before it reads the response, so the head and the body of a
request leave in one write. The bytes on the wire are the same; only their segments are fewer.
A large body is not held whole: past :data:`HOLD_LIMIT` bytes, what is held goes out at once.

It is used for ``http://`` on this machine (``transports/http.py``); anywhere else (TLS, a proxy
from the environment) httpx's own transport runs, unchanged.
"""

from __future__ import annotations

import contextlib
import ssl
from typing import Any, AsyncIterator, Iterable, Iterator

import httpcore
import httpx

__all__ = ["OneWriteTransport", "HeldWrites", "HOLD_LIMIT"]

HOLD_LIMIT = 64 * 1024  # bytes held before they are written anyway (a big body need not wait in memory)


class HeldWrites(httpcore.AsyncNetworkStream):
    """A network stream whose writes wait for the next read (or close), then leave as one."""

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self._stream = stream
        self._held: list[bytes] = []
        self._size = 0

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._held.append(buffer)
        self._size += len(buffer)
        if self._size > HOLD_LIMIT:
            await self._flush(timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            await self._flush(timeout)
        except httpcore.WriteError:
            pass  # as httpcore does for a write: the server may have answered early (413) and closed; read that
        return await self._stream.read(max_bytes, timeout)

    async def _flush(self, timeout: float | None) -> None:
        if self._held:
            data = b"".join(self._held)
            self._held, self._size = [], 0
            await self._stream.write(data, timeout)

    async def aclose(self) -> None:
        self._held, self._size = [], 0  # closing abandons the request being written
        await self._stream.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        await self._flush(timeout)
        return HeldWrites(await self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _HeldWritesBackend(httpcore.AsyncNetworkBackend):
    """httpcore's anyio backend (asyncio and trio alike), each connection wrapped in :class:`HeldWrites`."""

    def __init__(self) -> None:
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        return HeldWrites(await self._backend.connect_tcp(host, port, timeout, local_address, socket_options))

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        return HeldWrites(await self._backend.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    """httpcore's exceptions as httpx's, which share their names (ReadTimeout, ConnectError, …)."""
    try:
        yield
    except httpcore.TimeoutException as exc:
        raise getattr(httpx, type(exc).__name__, httpx.TimeoutException)(str(exc)) from exc
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError, httpcore.UnsupportedProtocol) as exc:
        raise getattr(httpx, type(exc).__name__, httpx.TransportError)(str(exc)) from exc


class _Body(httpx.AsyncByteStream):
    """A response body from httpcore, its errors turned into httpx's while it is read."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for chunk in self._stream:
                yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class OneWriteTransport(httpx.AsyncBaseTransport):
    """An httpx transport over httpcore's pool whose connections write each request in one piece."""

    def __init__(self) -> None:
        self._pool = httpcore.AsyncConnectionPool(network_backend=_HeldWritesBackend())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        core_request = httpcore.Request(request.method, httpcore.URL(scheme=url.raw_scheme, host=url.raw_host,
                                                                     port=url.port, target=url.raw_path),
                                        headers=request.headers.raw, content=request.stream,
                                        extensions=request.extensions)
        with _as_httpx_errors():
            response = await self._pool.handle_async_request(core_request)
        return httpx.Response(response.status, headers=response.headers, stream=_Body(response.stream),
                              extensions=response.extensions)

    async def aclose(self) -> None:
        await self._pool.aclose()
