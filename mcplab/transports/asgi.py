"""HTTP without a network: httpx talking to an ASGI app in this process, its reply streamed as it is sent.

Theory of operation
-------------------
A page (Pyodide) has no sockets, so there a Streamable HTTP server cannot listen on a port. It still
has its ASGI app, the very one uvicorn serves on a machine, and an ASGI app is only a coroutine that
reads messages and sends messages. :class:`ASGIDriver` is an httpx transport that calls it::

    httpx.AsyncClient(transport=ASGIDriver(app))
        request  →  scope (method, path, headers as sent) + one http.request message (the body)
        reply    ←  the Response returned at http.response.start: the app's status and headers,
                    its body read chunk by chunk as the app sends each http.response.body
        close    →  http.disconnect for the app (a reply stream closed early is the client leaving)

httpx's own ASGITransport waits for the whole body before it returns, so an event stream would
arrive in one piece at its end; here the app's ``send`` hands each chunk over a zero-buffer memory
stream, and waits until the client has taken it, as a socket's window holds a fast server back.
An app that raises (or returns) before starting its reply gives 500, as uvicorn answers; one that
fails halfway ends the body with :class:`httpx.RemoteProtocolError`, as a dropped connection does.
The client's read timeout bounds each wait for the app's next message (:class:`httpx.ReadTimeout`),
as it bounds each read of a socket; the app then hears the client leave.

The app runs in a task of a :class:`~mcplab.transports.background.Background`, whose host is the
driver's own unless the caller hands in one it owns (an in-page server: its tasks end when it
stops); :meth:`ASGIDriver.aclose` ends the driver's own. No lifespan is run here: the app's owner
runs it (:func:`run_lifespan`) before it lets requests in.

The page's loopback: :data:`LISTENING` maps an origin (``http://127.0.0.1:PORT``) to the driver of
the app "listening" there, and :class:`PageNetwork` routes each request by its URL's origin, the
way the loopback interface routes by port. No socket exists: the port only names the app, and an
origin nobody listens at is a :class:`httpx.ConnectError` naming it, as a refused connection is.
There is one user in a page, so the check of who connects (owner.py) has nothing to compare.
"""

from __future__ import annotations

import itertools
import logging
import sys
from typing import Any, AsyncIterator, Awaitable, Callable, MutableMapping

import anyio
import httpx

from mcplab.transports.background import Background

__all__ = ["ASGIDriver", "PageNetwork", "LISTENING", "IN_BROWSER", "listen", "unlisten", "run_lifespan"]

IN_BROWSER = sys.platform == "emscripten"  # Pyodide, in a page: no sockets, so HTTP goes through PageNetwork

Message = MutableMapping[str, Any]
App = Callable[[Message, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]

log = logging.getLogger("mcplab.asgi")
CLIENT = ("127.0.0.1", 50000)  # what the app sees as the peer: this process, as a loopback connection looks
FIRST_PORT = 49152             # the first of the ephemeral ports (RFC 6335): an in-page app's URL looks like a child's

LISTENING: dict[str, ASGIDriver] = {}  # origin → the driver of the app there: the page's one port table
_ports = itertools.count(FIRST_PORT)


class ASGIDriver(httpx.AsyncBaseTransport):
    """An httpx transport whose server is ``app``, called in this process (``tasks``: who owns its runs)."""

    def __init__(self, app: App, *, tasks: Background | None = None) -> None:
        self.app = app
        self._tasks = tasks if tasks is not None else Background()
        self._owned = tasks is None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        sent, taken = anyio.create_memory_object_stream[Message](0)
        exchange = _Exchange(body, taken, request)
        url = request.url
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
                 "method": request.method, "scheme": url.scheme, "path": url.path,
                 "raw_path": url.raw_path.split(b"?")[0], "query_string": url.query, "root_path": "",
                 "headers": [(name.lower(), value) for name, value in request.headers.raw],
                 "client": CLIENT, "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
                 "state": {}}

        async def run() -> None:
            async with sent:
                try:
                    await self.app(scope, exchange.receive, exchange.send_to(sent))
                except Exception as exc:  # noqa: BLE001  (the client gets a 500, or a broken body, as from uvicorn)
                    exchange.failure = exc
                    log.error("Exception in ASGI application", exc_info=exc)  # what uvicorn logs on stderr
        self._tasks.start_soon(run)
        try:
            start = await exchange.next_message()
        except BaseException:
            await exchange.aclose()
            raise
        if start is None:  # the app ended without a reply: uvicorn's answer
            await exchange.aclose()
            return httpx.Response(500, headers={"content-type": "text/plain; charset=utf-8"},
                                  content=b"Internal Server Error", request=request)
        headers = [(bytes(k), bytes(v)) for k, v in start.get("headers", ())]
        return httpx.Response(start["status"], headers=headers, stream=exchange, request=request)

    async def aclose(self) -> None:
        if self._owned:
            await self._tasks.aclose()


class _Exchange(httpx.AsyncByteStream):
    """One request's run of the app: what it reads (the body, then a disconnect) and what it sends."""

    def __init__(self, body: bytes, taken: anyio.abc.ObjectReceiveStream[Message], request: httpx.Request) -> None:
        self._body: bytes | None = body
        self._taken = taken
        self._request = request
        # httpx hands its timeouts to the transport: the read timeout bounds each wait for the app's next message
        self._read_timeout = request.extensions.get("timeout", {}).get("read")
        self._gone = anyio.Event()  # the client closed the reply, or it was read to its end
        self._ended = False         # the app sent its last chunk
        self.failure: Exception | None = None

    async def receive(self) -> Message:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self._gone.wait()  # an app listening for a disconnect hears it when the client leaves
        return {"type": "http.disconnect"}

    def send_to(self, sent: anyio.abc.ObjectSendStream[Message]) -> Callable[[Message], Awaitable[None]]:
        async def send(message: Message) -> None:
            if self._gone.is_set():
                return  # the client left; the app learns it from receive(), as over a socket
            try:
                await sent.send(message)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
        return send

    async def next_message(self) -> Message | None:
        """The app's next ``http.response.*`` message; None once it has ended."""
        while True:
            try:
                with anyio.fail_after(self._read_timeout):
                    message = await self._taken.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return None
            except TimeoutError:
                raise httpx.ReadTimeout(f"no reply within {self._read_timeout:g} s (the client's read timeout)",
                                        request=self._request) from None
            if message["type"] in ("http.response.start", "http.response.body"):
                return message

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while not self._ended:
            message = await self.next_message()
            if message is None:
                if self.failure is not None or not self._gone.is_set():
                    what = type(self.failure).__name__ if self.failure else "it returned"
                    raise httpx.RemoteProtocolError(f"the app ended its reply before its last chunk ({what})")
                return
            self._ended = not message.get("more_body", False)
            if message.get("body"):
                yield bytes(message["body"])
        self._gone.set()

    async def aclose(self) -> None:
        self._gone.set()
        await self._taken.aclose()  # a send still waiting is released; the app reads http.disconnect


class PageNetwork(httpx.AsyncBaseTransport):
    """Routes each request to the app listening at its URL's origin in this page (:data:`LISTENING`)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        origin = _origin(request.url)
        driver = LISTENING.get(origin)
        if driver is None:
            raise httpx.ConnectError(f"nothing listens at {origin} in this page (no server was launched there, "
                                     "or it was stopped); in the page a server is an app of this process, "
                                     f"listening: {', '.join(sorted(LISTENING)) or 'none'}", request=request)
        return await driver.handle_async_request(request)


def _origin(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.host}:{url.port or (443 if url.scheme == 'https' else 80)}"


def listen(driver: ASGIDriver, path: str = "/mcp") -> str:
    """Give ``driver``'s app the next free in-page port; its URL (``http://127.0.0.1:49152/mcp``)."""
    origin = f"http://127.0.0.1:{next(_ports)}"
    LISTENING[origin] = driver
    return origin + path


def unlisten(url: str) -> None:
    """The app at ``url`` stops listening: from now on a request there is refused."""
    LISTENING.pop(_origin(httpx.URL(url)), None)


async def run_lifespan(app: App, started: anyio.Event, stopping: anyio.Event) -> None:
    """Run ``app``'s ASGI lifespan: startup, ``started`` set, then shutdown once ``stopping`` is set.
    An app whose startup fails raises :class:`RuntimeError` with what it said."""
    said: list[Message] = []
    asked = iter([{"type": "lifespan.startup"}])

    async def receive() -> Message:
        for message in asked:
            return message
        await stopping.wait()
        return {"type": "lifespan.shutdown"}

    async def send(message: Message) -> None:
        said.append(message)
        if message["type"] == "lifespan.startup.complete":
            started.set()
        elif message["type"] == "lifespan.startup.failed":
            raise RuntimeError(f"the app's startup failed: {message.get('message', '')}")

    await app({"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}, receive, send)
    if not started.is_set():
        raise RuntimeError(f"the app ended its lifespan without starting (it said {[m['type'] for m in said]})")
