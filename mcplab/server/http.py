"""Streamable HTTP, server side: every client message is one POST to one endpoint, ``/mcp``.

Theory of operation
-------------------
Spec "basic/transports", Streamable HTTP, legacy revisions 2025-03-26 … 2025-11-25. What comes back
depends on what was POSTed::

    a notification or a response  →  202 Accepted, no body
    a request                     →  200 application/json: its response, when nothing comes before it
                                  →  200 text/event-stream: progress, log messages and server→client
                                     requests about it, then its response; then the stream ends
    DELETE                        →  204: the session is over (its id gets 404 from now on)
    GET                           →  405: this server offers no standalone stream

Sessions: the reply to ``initialize`` carries ``Mcp-Session-Id``; every later request must send it back
(none → 400, unknown or ended → 404). A :class:`Session` holds one toolkit ``Connection``, so
``Server.handle`` sees a session exactly as it sees a stdio connection, and the session is the ``Peer``
that puts what a tool posts on the stream of the request it belongs to.

Refusals, checked in this order, each an HTTP status with a JSON-RPC error body: ``Host``/``Origin`` not
on the allow-list (403: the DNS-rebinding defence), another HTTP method (405), ``Accept`` without JSON
and SSE (406), ``Content-Type`` not JSON (415), a body over 4 MiB (413), not JSON (400, -32700), not one
JSON-RPC message (400, -32600), the session (400/404), ``MCP-Protocol-Version`` (400, from 2025-06-18).

A session that negotiated 2025-03-26 may POST a JSON-RPC batch (that revision only); it is answered
with one JSON array. Left out: resumability (event ids, ``Last-Event-ID``) and the standalone GET
stream, so a notification that belongs to no request (``list_changed``) is dropped. The 2026-07-28
wire shares the URL: :meth:`Endpoint.wire` picks it per request, and for now such requests are refused
with -32022 naming the revisions served.

:func:`serve_http` binds the socket itself (port 0 picks a free one), prints the URL on stderr and serves
with uvicorn; nothing is written to stdout. With stdin a pipe it exits when stdin reaches EOF, so a child
of a notebook kernel dies with the kernel; run it from a terminal, with ``</dev/null``, or with
``MCPLAB_HTTP_WATCHDOG=off`` to opt out. :func:`launch` starts a server script that way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import secrets
import shlex
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict, deque
from typing import Any, AsyncIterator, Sequence
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import Request as HTTPRequest
from starlette.responses import Response as HTTPResponse
from starlette.responses import StreamingResponse
from starlette.routing import Route

from mcplab import jsonrpc
from mcplab.errors import (
    INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION, JSONRPCError, RemoteError, RemoteProtocolError, ServerExited,
    TransportError,
)
from mcplab.jsonrpc import ErrorResponse, Message, Notification, Request, RequestId, Response
from mcplab.server.toolkit import USER_CODE, Server
from mcplab.versions import (
    HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID, LEGACY_VERSIONS, META_PROTOCOL_VERSION, MODERN_VERSIONS,
    allows_batches, at_least,
)

__all__ = ["create_app", "serve_http", "launch", "ServerProcess", "Endpoint", "Session", "check_host_and_origin",
           "allow_list", "MCP_PATH", "MAX_BODY"]

log = logging.getLogger("mcplab.server.http")

MCP_PATH = "/mcp"
MAX_BODY = 4 * 1024 * 1024       # bytes; a larger POST body gets 413
DRAIN_LIMIT = 16 * MAX_BODY      # bytes of an oversized body read and discarded before answering 413
MAX_SESSIONS = 1000              # beyond this the least recently used session ends
JSON_TYPE, SSE_TYPE = "application/json", "text/event-stream"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]  # all reach the checks; 405 is ours
WATCHDOG_ENV = "MCPLAB_HTTP_WATCHDOG"
BANNER = "mcplab: serving {name} at {url}"
READY = re.compile(r"mcplab: serving .* at (http://\S+)")


class Refusal(Exception):
    """A refused HTTP request: its status, and the JSON-RPC error that goes in the body."""

    def __init__(self, status: int, message: str, *, code: int = INVALID_REQUEST, data: Any = None,
                 request_id: RequestId | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.data = status, code, message, data
        self.request_id, self.headers = request_id, headers

    def response(self) -> HTTPResponse:
        return _json(ErrorResponse(self.request_id, self.code, self.message, self.data), self.status, self.headers)


def _json(message: Message, status: int = 200, headers: dict[str, str] | None = None) -> HTTPResponse:
    return HTTPResponse(jsonrpc.encode(message).encode("utf-8"), status, headers, media_type=JSON_TYPE)


def _sse(message: Message) -> bytes:
    # One event per message, one data line: jsonrpc.encode never puts a newline in its text.
    return b"event: message\ndata: " + jsonrpc.encode(message).encode("utf-8") + b"\n\n"


def _media_type(value: str | None) -> str:
    return (value or "").split(";", 1)[0].strip().lower()


def _accepts_json_and_sse(accept: str | None) -> bool:
    types = {_media_type(part) for part in (accept or "").split(",")}
    return "*/*" in types or (bool(types & {JSON_TYPE, "application/*"}) and bool(types & {SSE_TYPE, "text/*"}))


def hostname(value: str) -> str | None:
    """The host part of a ``Host`` header or an origin: ``"[::1]:8000"`` → ``"::1"``."""
    try:
        return urlsplit(value if "//" in value else "//" + value).hostname
    except ValueError:
        return None


def check_host_and_origin(host: str | None, origin: str | None, hosts: frozenset[str], origins: frozenset[str]) -> None:
    """Raise a 403 :class:`Refusal` unless ``Host`` names this server and ``Origin`` (if any) is a page we trust.

    DNS rebinding: a page from evil.example, whose name now resolves to 127.0.0.1, reaches this port
    from the user's own browser; its requests still say ``Host: evil.example`` and ``Origin: http://evil.example``.
    """
    if host is None or hostname(host) not in hosts:
        raise Refusal(403, f"Host {host!r} is not allowed here (allowed: {', '.join(sorted(hosts))}); "
                           f"a foreign Host is how a DNS-rebinding attack shows")
    if origin is not None:  # only browsers send Origin; a page from another site must not drive this server
        if "//" not in origin or urlsplit(origin).scheme not in ("http", "https") or hostname(origin) not in origins:
            raise Refusal(403, f"Origin {origin!r} is not allowed here: a web page from another site "
                               f"must not drive this server")


class Stream:
    """What goes back for one POSTed request: messages about it, then its response (or nothing, if cancelled)."""
    __slots__ = ("outbox", "wake", "done")

    def __init__(self) -> None:
        self.outbox: deque[Message] = deque()
        self.wake = asyncio.Event()
        self.done = False

    def put(self, message: Message) -> None:
        if not self.done:  # nothing may follow the response
            self.outbox.append(message)
            self.wake.set()

    def finish(self, reply: Message | None) -> None:
        if reply is not None:
            self.put(reply)
        self.done = True
        self.wake.set()

    async def events(self) -> AsyncIterator[bytes]:
        while True:
            while self.outbox:
                yield _sse(self.outbox.popleft())
            if self.done:
                return
            self.wake.clear()
            await self.wake.wait()


class Session:
    """One client's session: a toolkit Connection, its running requests, and the way back (a ``Peer``)."""

    def __init__(self, server: Server, session_id: str) -> None:
        self.server = server
        self.id = session_id
        self.streams: dict[RequestId, Stream] = {}
        self.tasks: dict[RequestId, asyncio.Task] = {}
        self.pending = jsonrpc.PendingRequests()
        self.next_id = jsonrpc.IdAllocator()
        self.connection = server.connect(self)

    # --- Peer: the way back to the client ---------------------------------------------------------
    def post(self, message: Message, *, related_to: RequestId | None = None) -> None:
        stream = self.streams.get(related_to)  # type: ignore[arg-type]
        if stream is None:
            log.debug("dropped %s: no open stream for it (related to %r)", getattr(message, "method", message),
                      related_to)
            return
        stream.put(message)

    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      related_to: RequestId | None = None) -> Any:
        stream = self.streams.get(related_to)  # type: ignore[arg-type]
        if stream is None:
            raise TransportError(f"cannot send {method}: on HTTP it travels on the stream of the request it "
                                 f"serves, and request {related_to!r} has none (no standalone GET stream here)")
        request_id = self.next_id()
        waiter = asyncio.get_running_loop().create_future()
        self.pending.add(request_id, waiter)
        stream.put(Request(request_id, method, params))
        try:
            reply = await waiter
        finally:
            self.pending.discard(request_id)
        if isinstance(reply, ErrorResponse):
            raise RemoteError(reply.code, reply.message, reply.data, method=method)
        return reply.result

    def cancel(self, request_id: RequestId) -> None:
        task = self.tasks.get(request_id)
        if task is not None:
            task.cancel()

    # --- what the client POSTs ----------------------------------------------------------------------
    async def receive(self, message: Notification | Response | ErrorResponse) -> None:
        """A notification goes to the toolkit; a response wakes the tool that asked the client."""
        if isinstance(message, Notification):
            await self.server.handle(message, self.connection)
            return
        try:
            waiter = self.pending.resolve(message)
        except RemoteProtocolError as exc:
            log.warning("%s", exc)
            return
        if not waiter.done():
            waiter.set_result(message)

    async def answer(self, request: Request) -> HTTPResponse:
        """JSON if the reply is all there is; SSE once something is posted before it."""
        if request.method not in USER_CODE:  # answered from the catalogue: nothing can come before the reply
            return _json(await self.server.handle(request, self.connection))  # type: ignore[arg-type]
        if request.id in self.streams:
            return _json(ErrorResponse(request.id, INVALID_REQUEST, f"expected a fresh request id: "
                                       f"{request.id!r} belongs to a request still running"))
        stream = self.streams[request.id] = Stream()
        # The task belongs to the session, not to this HTTP exchange: a client that disconnects has not
        # cancelled its request (spec "transports"); notifications/cancelled or the session's end do.
        self.tasks[request.id] = asyncio.get_running_loop().create_task(self._run(request, stream))
        await stream.wake.wait()
        if stream.done and len(stream.outbox) == 1:
            return _json(stream.outbox.popleft())
        return StreamingResponse(stream.events(), media_type=SSE_TYPE, headers={"Cache-Control": "no-cache"})

    async def _run(self, request: Request, stream: Stream) -> None:
        reply = None
        try:
            reply = await self.server.handle(request, self.connection)
        except asyncio.CancelledError:
            pass  # cancelled by the client or the session ended: no response is sent
        finally:
            self.tasks.pop(request.id, None)
            self.streams.pop(request.id, None)
            stream.finish(reply)

    def close(self) -> None:
        for task in list(self.tasks.values()):
            task.cancel()
        for request_id in list(self.pending):
            waiter = self.pending.discard(request_id)
            if waiter is not None and not waiter.done():
                waiter.set_exception(TransportError("the session ended before the client answered"))


class Endpoint:
    """The ``/mcp`` endpoint: the checks, the sessions, then ``Server.handle``."""

    def __init__(self, server: Server, *, allowed_hosts: Sequence[str], allowed_origins: Sequence[str],
                 era: str = "dual", max_body: int = MAX_BODY, max_sessions: int = MAX_SESSIONS) -> None:
        if era not in ("dual", "legacy"):
            raise ValueError(f"era={era!r}: this HTTP runner serves the legacy revisions (era 'dual' or 'legacy')")
        self.server, self.era = server, era
        self.allowed_hosts = frozenset(h.lower() for h in allowed_hosts)
        self.allowed_origins = frozenset(h.lower() for h in allowed_origins)
        self.max_body, self.max_sessions = max_body, max_sessions
        self.sessions: OrderedDict[str, Session] = OrderedDict()

    async def handle(self, request: HTTPRequest) -> HTTPResponse:
        try:
            check_host_and_origin(request.headers.get("host"), request.headers.get("origin"),
                                  self.allowed_hosts, self.allowed_origins)
            if request.method == "POST":
                return await self.post(request)
            if request.method == "DELETE":
                return self.delete(request.headers.get(HEADER_SESSION_ID))
            raise Refusal(405, f"{request.method} is not served: POST each message to {MCP_PATH} (this server "
                               f"offers no standalone GET stream)", headers={"Allow": "POST, DELETE"})
        except Refusal as refusal:
            return refusal.response()

    async def post(self, request: HTTPRequest) -> HTTPResponse:
        headers = request.headers
        if not _accepts_json_and_sse(headers.get("accept")):
            raise Refusal(406, f"expected Accept to list both {JSON_TYPE} and {SSE_TYPE} (the reply may be "
                               f"either), got {headers.get('accept')!r}")
        if _media_type(headers.get("content-type")) != JSON_TYPE:
            raise Refusal(415, f"expected Content-Type: {JSON_TYPE}, got {headers.get('content-type')!r}")
        body = await self.read_body(request)
        session_id = headers.get(HEADER_SESSION_ID)
        known = self.sessions.get(session_id) if session_id is not None else None
        try:  # a batch is JSON-RPC too, but MCP allowed it in 2025-03-26 only
            message = jsonrpc.decode(body, allow_batch=known is not None and allows_batches(known.connection.version))
        except JSONRPCError as exc:
            raise Refusal(400, exc.message, code=exc.code, data=exc.data, request_id=exc.request_id) from None
        if isinstance(message, list):
            return await self.batch(message, self.session(session_id))
        if self.wire(headers.get(HEADER_PROTOCOL_VERSION), message, session_id) == "modern":
            return self.modern(headers.get(HEADER_PROTOCOL_VERSION), message)
        if isinstance(message, Request) and message.method == "initialize":
            return await self.initialize(message)
        session = self.session(session_id, message)
        self.check_version(headers.get(HEADER_PROTOCOL_VERSION), session, message)
        if isinstance(message, Request):
            return await session.answer(message)
        await session.receive(message)  # type: ignore[arg-type]
        return HTTPResponse(status_code=202)

    async def batch(self, batch: list, session: Session) -> HTTPResponse:
        """A 2025-03-26 batch: responses to the server's requests are taken, the rest answered as one JSON array."""
        for item in batch:
            if isinstance(item, (Response, ErrorResponse)):
                await session.receive(item)
        replies = await self.server.handle_batch([m for m in batch if not isinstance(m, (Response, ErrorResponse))],
                                                 session.connection)
        if not replies:
            return HTTPResponse(status_code=202)
        return HTTPResponse(jsonrpc.encode(replies).encode("utf-8"), media_type=JSON_TYPE)

    async def read_body(self, request: HTTPRequest) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and not declared.isdigit():
            raise Refusal(400, f"Content-Length is not a number: {declared!r}")
        too_big = Refusal(413, f"the body is larger than {self.max_body} bytes, the most this server reads")
        if declared is not None and int(declared) > DRAIN_LIMIT:
            raise too_big
        body, size = bytearray(), 0
        async for chunk in request.stream():
            size += len(chunk)
            if size <= self.max_body:
                body += chunk
            elif size > DRAIN_LIMIT:
                raise too_big
        # A body over the limit is read to its end (up to DRAIN_LIMIT) and thrown away before the 413:
        # closing a connection that still has unread bytes resets it, and the client may lose the answer.
        if size > self.max_body:
            raise too_big
        return bytes(body)

    def wire(self, version_header: str | None, message: Message, session_id: str | None) -> str:
        """``"legacy"`` or ``"modern"``: a 2026-07-28 request carries no session and names its revision."""
        if self.era == "legacy" or session_id is not None:
            return "legacy"
        params = message.params if isinstance(message, Request) and isinstance(message.params, dict) else {}
        meta = params.get("_meta")
        if version_header in MODERN_VERSIONS or (isinstance(meta, dict) and META_PROTOCOL_VERSION in meta):
            return "modern"
        return "legacy"

    def modern(self, version_header: str | None, message: Message) -> HTTPResponse:
        # The seam for the 2026-07-28 per-request path. Until it exists, say which revisions are served.
        raise Refusal(400, "this server speaks the legacy revisions only; open with initialize",
                      code=UNSUPPORTED_PROTOCOL_VERSION,
                      data={"supported": list(LEGACY_VERSIONS), "requested": version_header or MODERN_VERSIONS[-1]},
                      request_id=getattr(message, "id", None))

    async def initialize(self, request: Request) -> HTTPResponse:
        session = Session(self.server, secrets.token_hex(16))  # 128 random bits, visible ASCII as required
        reply = await self.server.handle(request, session.connection)
        if not isinstance(reply, Response):
            return _json(reply)  # type: ignore[arg-type]  # refused: no session is kept
        self.sessions[session.id] = session
        while len(self.sessions) > self.max_sessions:
            _, oldest = self.sessions.popitem(last=False)
            oldest.close()
        return _json(reply, headers={HEADER_SESSION_ID: session.id})

    def session(self, session_id: str | None, message: Message | None = None) -> Session:
        request_id = message.id if isinstance(message, Request) else None
        if session_id is None:
            raise Refusal(400, f"expected the {HEADER_SESSION_ID} header from the initialize reply: every "
                               f"message after initialize must carry it", request_id=request_id)
        session = self.sessions.get(session_id)
        if session is None:  # the client MUST then start over with a fresh initialize
            raise Refusal(404, "unknown or ended session: send initialize again to start a new one",
                          request_id=request_id)
        self.sessions.move_to_end(session_id)
        return session

    def check_version(self, value: str | None, session: Session, message: Message) -> None:
        # A missing header is allowed: the spec's fallback is the version the session already knows.
        negotiated = session.connection.version
        if value is None or negotiated is None or not at_least(negotiated, "2025-06-18"):
            return
        if value != negotiated:
            raise Refusal(400, f"{HEADER_PROTOCOL_VERSION}: {value} does not match the version this session "
                               f"negotiated, {negotiated}", request_id=getattr(message, "id", None))

    def delete(self, session_id: str | None) -> HTTPResponse:
        session = self.session(session_id)
        del self.sessions[session.id]
        session.close()
        return HTTPResponse(status_code=204)

    def close(self) -> None:
        while self.sessions:
            self.sessions.popitem()[1].close()


def allow_list(host: str, extra: Sequence[str] = ()) -> list[str]:
    """The host names a server bound to ``host`` answers to: the loopback names, ``host``, ``extra``."""
    names = set(LOOPBACK) | {h.strip() for h in extra if h.strip()}
    if host not in ("0.0.0.0", "::", ""):
        names.add(host.strip("[]"))
    return sorted(names)


def create_app(server: Server, *, host: str = "127.0.0.1", allowed_hosts: Sequence[str] | None = None,
               allowed_origins: Sequence[str] | None = None, era: str = "dual", max_body: int = MAX_BODY) -> Starlette:
    """A Starlette app serving ``server`` at ``/mcp``; ``app.state.endpoint`` holds the sessions.

    Allow-lists default to :func:`allow_list` of ``host`` plus ``$MCPLAB_ALLOWED_HOSTS`` (comma-separated).
    """
    extra = [h for h in os.environ.get("MCPLAB_ALLOWED_HOSTS", "").split(",") if h]
    hosts = list(allowed_hosts) if allowed_hosts is not None else allow_list(host, extra)
    endpoint = Endpoint(server, allowed_hosts=hosts, era=era, max_body=max_body,
                        allowed_origins=list(allowed_origins) if allowed_origins is not None else hosts)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        endpoint.close()

    app = Starlette(routes=[Route(MCP_PATH, endpoint.handle, methods=METHODS)], lifespan=lifespan)
    app.state.endpoint = endpoint
    return app


# --- running it --------------------------------------------------------------------------------------

def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: the system picks a free one, with no race)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.listen(128)  # from here connections queue, even before uvicorn accepts them
    return sock


def endpoint_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{MCP_PATH}"


def serve_http(server: Server, *, host: str = "127.0.0.1", port: int = 8000, era: str = "dual") -> None:
    """Serve ``server`` at ``http://HOST:PORT/mcp`` until interrupted (or until stdin closes, if it is a pipe)."""
    if era == "modern":  # the per-request 2026-07-28 path plugs in at Endpoint.wire; not served yet
        print("mcplab: --http with --era modern (2026-07-28) is not implemented yet; use --era dual or legacy",
              file=sys.stderr)
        raise SystemExit(2)
    sock = bind(host, port)
    app = create_app(server, host=host, era=era)
    if hostname(host) not in LOOPBACK:
        print(f"mcplab: warning: listening on {host}, reachable from other machines; a local server should bind "
              f"127.0.0.1. Host names allowed: {', '.join(sorted(app.state.endpoint.allowed_hosts))} "
              f"(add more with MCPLAB_ALLOWED_HOSTS)", file=sys.stderr, flush=True)
    os.dup2(2, 1)  # nothing reaches stdout, not even a stray print() in a tool
    try:
        asyncio.run(_serve(app, sock, BANNER.format(name=server.info["name"], url=endpoint_url(sock))))
    except KeyboardInterrupt:
        raise SystemExit(130) from None


async def _serve(app: Starlette, sock: socket.socket, banner: str) -> None:
    import uvicorn

    # log_config=None: uvicorn's own config sends access lines to stdout; ours sends everything to stderr.
    config = uvicorn.Config(app, log_config=None, access_log=False, timeout_graceful_shutdown=1, lifespan="on")
    runner = uvicorn.Server(config)
    loop = asyncio.get_running_loop()
    if _stdin_is_pipe() and os.environ.get(WATCHDOG_ENV, "on").lower() not in ("0", "off", "no", "false"):
        _watch_stdin(loop, lambda: setattr(runner, "should_exit", True))
    serving = loop.create_task(runner.serve(sockets=[sock]))
    while not runner.started and not serving.done():
        await asyncio.sleep(0.005)
    if runner.started:
        print(banner, file=sys.stderr, flush=True)
    await serving


def _stdin_is_pipe() -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(0).st_mode)
    except OSError:
        return False


def _watch_stdin(loop: asyncio.AbstractEventLoop, on_eof: Any) -> None:
    # Why a thread: as in stdio.py, a blocking read works on any stdin without touching its flags. The
    # parent holds the other end of the pipe; when it dies (even by SIGKILL) the read returns EOF.
    def watch() -> None:
        while True:
            try:
                if not os.read(0, 1 << 16):
                    break
            except OSError:
                break
        with contextlib.suppress(RuntimeError):  # the loop already closed: the server stopped by itself
            loop.call_soon_threadsafe(on_eof)

    threading.Thread(target=watch, name="mcplab-stdin-watchdog", daemon=True).start()


class ServerProcess:
    """A server started by :func:`launch`: its ``url``, its ``process``, what it wrote; ``stop()`` ends it."""

    def __init__(self, process: subprocess.Popen, url: str, stderr_file: Any, stdout_file: Any) -> None:
        self.process, self.url = process, url
        self._stderr, self._stdout = stderr_file, stdout_file

    def stderr(self) -> str:
        return os.pread(self._stderr.fileno(), 1 << 20, 0).decode("utf-8", errors="replace")

    def stdout(self) -> str:
        return os.pread(self._stdout.fileno(), 1 << 20, 0).decode("utf-8", errors="replace")

    def stop(self, timeout: float = 3.0) -> int | None:
        """Close its stdin (the watchdog ends it), then SIGTERM, then SIGKILL; return the exit code."""
        process = self.process
        if process.stdin and not process.stdin.closed:
            with contextlib.suppress(OSError):
                process.stdin.close()
        for signal_it in (None, process.terminate, process.kill):
            if signal_it is not None:
                with contextlib.suppress(OSError):
                    signal_it()
            with contextlib.suppress(subprocess.TimeoutExpired):
                return process.wait(timeout)
        return process.returncode

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<ServerProcess {self.url} {'running' if self.process.poll() is None else 'exited'}>"


def launch(argv: str | Sequence[str], *, host: str = "127.0.0.1", timeout: float = 20.0,
           env: dict[str, str] | None = None, cwd: str | None = None) -> ServerProcess:
    """Start a server script with ``--http --host HOST --port 0``; return once it prints its URL.

    >>> server = launch(["python", "servers/weather.py"]); server.url   # doctest: +SKIP
    'http://127.0.0.1:40123/mcp'
    """
    argv = shlex.split(argv) if isinstance(argv, str) else [os.fspath(a) for a in argv]
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    stderr_file, stdout_file = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    # stdin is a pipe we hold: when this process dies, the server's watchdog sees EOF and it exits too.
    process = subprocess.Popen([*argv, "--http", "--host", host, "--port", "0"], stdin=subprocess.PIPE,
                               stdout=stdout_file, stderr=stderr_file, cwd=cwd, start_new_session=True,
                               env={**os.environ, **(env or {})})
    child = ServerProcess(process, "", stderr_file, stdout_file)
    deadline = time.monotonic() + timeout
    while not (ready := READY.search(child.stderr())):
        if process.poll() is not None:
            raise ServerExited(f"{shlex.join(argv)} exited with code {process.returncode} before serving",
                               returncode=process.returncode, stderr_tail=child.stderr().splitlines()[-12:])
        if time.monotonic() > deadline:
            child.stop()
            raise TransportError(f"{shlex.join(argv)} printed no URL within {timeout:g} s",
                                 stderr_tail=child.stderr().splitlines()[-12:])
        time.sleep(0.01)
    child.url = ready.group(1)
    return child
