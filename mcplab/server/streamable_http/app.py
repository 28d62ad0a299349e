"""Streamable HTTP, server side: every client message is one POST to one endpoint, ``/mcp``, in either era.

Theory of operation
-------------------
Spec "basic/transports", Streamable HTTP. Legacy revisions (2025-03-26 … 2025-11-25) open a
session with ``initialize``; 2026-07-28 has no session, and every request stands alone. A dual-era
server (``--era dual``, the default) serves both on the same URL and decides **per request**
(:meth:`Endpoint.wire`)::

    a known Mcp-Session-Id                                  → legacy: that session (session.py)
    _meta["io.modelcontextprotocol/protocolVersion"],
      server/discover, or an MCP-Protocol-Version that is
      not a legacy revision                                 → modern: this request alone (exchange.py)
    anything else (initialize, a legacy header, none)       → legacy

What comes back::

    a notification (or, legacy, a response)   →  202 Accepted, no body
    a request                                 →  200 application/json: its response, when nothing comes first
                                              →  200 text/event-stream: progress, log messages (legacy: also
                                                 server→client requests) about it, then its response
    a modern error                            →  its status: 404 for -32601, 400 for -32020/-32021/-32022/-32602
    GET with a session (legacy)               →  200 text/event-stream: the session's standalone stream, for
                                                 what belongs to no request (list changes, resource updates)
    DELETE with a session                     →  204: the session is over (its id gets 404 from now on)
    GET, DELETE (modern-only)                 →  405: 2026-07-28 has neither a GET stream nor sessions

Refusals, checked before either era sees the message, each an HTTP status with a JSON-RPC error
body: ``Host``/``Origin`` not on the allow-list, or sent twice (403: the DNS-rebinding defence; an
``Origin`` must be this server's own, port included), another HTTP method (405), ``Accept`` without
JSON and SSE (406), ``Content-Type`` not JSON (415), a body over 4 MiB (413) or slower than 30 s
(408), not JSON (400, -32700), not one JSON-RPC message (400, -32600). Then legacy checks the session
(400/404, 400 also when the header is sent twice) and ``MCP-Protocol-Version`` (400 for a value that
is not a legacy revision, in any session, or one sent twice; from 2025-06-18 also for one that is not
the session's); modern checks the envelope, the routing headers and the version (exchange.py). A
refusal whose request id could not be read leaves the id out, as 2025-11-25 and 2026-07-28 say, except
in a session of an older revision, where JSON-RPC's ``"id": null`` is the only form
(``jsonrpc.keeps_null_id``). A client too slow to send its request's headers is disconnected
(deadlines.py).

A legacy session answers only the identity that opened it. Middleware in front that checks who a
request speaks for (``--auth``: the token's issuer, client and subject, mcplab/auth/middleware.py)
puts that in the ASGI scope's state under ``IDENTITY_KEY``; ``initialize`` binds the new session to
it, and a POST, GET or DELETE under another identity finds no session there: 404, as for an unknown
id. The spec's Session Hijacking advice ("basic/security_best_practices": bind session ids to
user-specific information, as a ``<user_id>:<session_id>`` key would) gives exactly that answer, and
404 rather than 403 tells the other identity nothing of the session, while the spec's answer to a
404, a fresh ``initialize``, opens one of its own. Without such middleware every request's identity
is the same (none), and sessions work as before.

A session that negotiated 2025-03-26 may POST a JSON-RPC batch (that revision only); it is answered
with one JSON array. Left out: replaying events after ``Last-Event-ID`` (resumption is a MAY; a
2025-11-25 stream still opens with a priming event). A modern client hears about changes on a
``subscriptions/listen`` stream instead of GET.

Running it as a process (``serve_http``, ``launch``) is process.py; what a reply looks like
(``Refusal``, ``Stream``, the status table) is replies.py.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
from collections import OrderedDict
from typing import AsyncIterator, Sequence
from urllib.parse import urlsplit

import anyio
import anyio.abc
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect
from starlette.requests import Request as HTTPRequest
from starlette.responses import Response as HTTPResponse
from starlette.routing import Route

from mcplab.wire import jsonrpc
from mcplab.wire.errors import JSONRPCError
from mcplab.wire.jsonrpc import Message, Notification, Request, Response, keeps_null_id
from mcplab.server.streamable_http import deadlines as http_deadlines, exchange as http_modern
from mcplab.server.streamable_http.session import Session
from mcplab.server.streamable_http.replies import JSON_TYPE, SSE_TYPE, Refusal, json_reply
from mcplab.server.streamable_http.address import LOOPBACK, MCP_PATH, hostname
from mcplab.server.toolkit import Server
from mcplab.wire.versions import (
    HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID, LEGACY_VERSIONS, MODERN_VERSIONS, ServerEra, allows_batches, at_least,
)

__all__ = ["create_app", "Endpoint", "Session", "Refusal", "check_host_and_origin", "allow_list", "hostname",
           "MCP_PATH", "MAX_BODY"]

MAX_BODY = 4 * 1024 * 1024       # bytes; a larger POST body gets 413
DRAIN_LIMIT = 16 * MAX_BODY      # bytes of an oversized body read and discarded before answering 413
MAX_SESSIONS = 1000              # beyond this the least recently used session ends
IDENTITY_KEY = "mcplab.identity"  # who a request speaks for, in the ASGI scope's state (mcplab/auth/middleware.py)
SHUTDOWN_GRACE = 1.0             # seconds released subscriptions get to end before the rest is cancelled
SINGLE_HEADERS = {"host": 403, "origin": 403}
SINGLE_IN_SESSION = (HEADER_SESSION_ID, HEADER_PROTOCOL_VERSION)
"""Headers a request may carry once only (a proxy reading one copy and this server another would disagree):
the first two on every request (403), the others on a legacy session's (400; exchange.py refuses a
doubled routing header with -32020)."""
log = logging.getLogger("mcplab.server.streamable_http")
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]  # all reach the checks; 405 is ours


def _once(request: HTTPRequest, name: str, status: int, message: Message | None = None) -> None:
    copies = len(request.headers.getlist(name))
    if copies > 1:
        raise Refusal(status, f"{name} was sent {copies} times; send it once",
                      request_id=message.id if isinstance(message, Request) else None)


def _media_type(value: str | None) -> str:
    return (value or "").split(";", 1)[0].strip().lower()


def _accepts_json_and_sse(accept: str | None) -> bool:
    types = {_media_type(part) for part in (accept or "").split(",")}
    return "*/*" in types or (bool(types & {JSON_TYPE, "application/*"}) and bool(types & {SSE_TYPE, "text/*"}))


def _port(value: str, scheme: str = "http") -> int | None:
    try:
        return urlsplit(value if "//" in value else "//" + value).port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        return None


def check_host_and_origin(host: str | None, origin: str | None, hosts: frozenset[str], origins: frozenset[str]) -> None:
    """Raise a 403 :class:`Refusal` unless ``Host`` names this server and ``Origin`` (if any) is this server's own.

    DNS rebinding: a page from evil.example, whose name now resolves to 127.0.0.1, reaches this port
    from the user's own browser; its requests still say ``Host: evil.example`` and ``Origin: http://evil.example``.
    An origin is scheme, host *and* port: a page from another program on this machine
    (``http://localhost:3000``) is another site, and must not drive this server either; the origin
    must be the one ``Host`` names. ``origins`` may also list whole origins (``https://lab.example.org``),
    allowed as they are, for a page served elsewhere on purpose.
    """
    if host is None or hostname(host) not in hosts:
        raise Refusal(403, f"Host {host!r} is not allowed here (allowed: {', '.join(sorted(hosts))}); "
                           f"a foreign Host is how a DNS-rebinding attack shows")
    if origin is None or origin.lower().rstrip("/") in origins:  # only browsers send Origin
        return
    scheme = urlsplit(origin).scheme if "//" in origin else ""
    if (scheme != "http" or hostname(origin) not in origins or hostname(origin) != hostname(host)
            or _port(origin, scheme) != _port(host)):
        raise Refusal(403, f"Origin {origin!r} is not allowed here: a web page from another site (another scheme, "
                           f"host or port) must not drive this server")


class Endpoint:
    """The ``/mcp`` endpoint: the checks, the choice of era, then the session or the single request."""

    def __init__(self, server: Server, *, allowed_hosts: Sequence[str], allowed_origins: Sequence[str],
                 era: ServerEra = "dual", max_body: int = MAX_BODY, max_sessions: int = MAX_SESSIONS) -> None:
        if era not in ("dual", "legacy", "modern"):
            raise ValueError(f"era must be 'dual', 'legacy' or 'modern', got {era!r}")
        self.server, self.era = server, era
        self.allowed_hosts = frozenset(h.lower() for h in allowed_hosts)
        self.allowed_origins = frozenset(h.lower() for h in allowed_origins)
        self.max_body, self.max_sessions = max_body, max_sessions
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.exchanges: set[http_modern.Exchange] = set()  # modern requests still running
        self.group: anyio.abc.TaskGroup | None = None  # every request's task; open while the app runs (lifespan)

    async def handle(self, request: HTTPRequest) -> HTTPResponse:
        try:
            for name, status in SINGLE_HEADERS.items():
                _once(request, name, status)
            check_host_and_origin(request.headers.get("host"), request.headers.get("origin"),
                                  self.allowed_hosts, self.allowed_origins)
            if request.method == "POST":
                return await self.post(request)
            legacy = self.era != "modern" and request.headers.get(HEADER_PROTOCOL_VERSION) not in MODERN_VERSIONS
            if request.method == "GET" and legacy:
                return self.listen(request)
            if request.method == "DELETE" and self.era != "modern":
                return self.delete(request)
            allow = {"Allow": "POST" if self.era == "modern" else "GET, POST, DELETE"}
            if self.era == "modern" or request.method == "GET":
                raise Refusal(405, f"{request.method} is not served: 2026-07-28 has no standalone stream and no "
                                   f"sessions; POST each message to {MCP_PATH}", headers=allow)
            raise Refusal(405, f"{request.method} is not served: POST each message to {MCP_PATH}, GET opens a "
                               f"session's stream, DELETE ends a session", headers=allow)
        except Refusal as refusal:
            return refusal.response(null_id=keeps_null_id(self._session_version(request)))
        except ClientDisconnect:  # nobody is left to answer: one line in the log, no traceback
            log.warning("a client went away in the middle of sending its request body")
            return HTTPResponse(status_code=400)

    def _session_version(self, request: HTTPRequest) -> str | None:
        """The revision of the session a request names, if it names one that is open (and its own)."""
        session = self._find(request)
        return session.connection.version if session is not None else None

    def _find(self, request: HTTPRequest) -> Session | None:
        """The open session the request names, if the identity that opened it sends the request."""
        session_id = request.headers.get(HEADER_SESSION_ID)
        session = self.sessions.get(session_id) if session_id is not None and self.era != "modern" else None
        return session if session is not None and session.owner == _speaker(request) else None

    async def post(self, request: HTTPRequest) -> HTTPResponse:
        headers = request.headers
        if not _accepts_json_and_sse(headers.get("accept")):
            raise Refusal(406, f"expected Accept to list both {JSON_TYPE} and {SSE_TYPE} (the reply may be "
                               f"either), got {headers.get('accept')!r}")
        if _media_type(headers.get("content-type")) != JSON_TYPE:
            raise Refusal(415, f"expected Content-Type: {JSON_TYPE}, got {headers.get('content-type')!r}")
        body = await self.read_body(request)
        known = self._find(request)
        try:  # a batch is JSON-RPC too, but MCP allowed it in 2025-03-26 only
            message = jsonrpc.decode(body, allow_batch=known is not None and allows_batches(known.connection.version))
        except JSONRPCError as exc:
            raise Refusal(400, exc.message, code=exc.code, data=exc.data, request_id=exc.request_id) from None
        if isinstance(message, list):
            return await self.batch(message, self.session(request))
        if self.wire(headers.get(HEADER_PROTOCOL_VERSION), message, known is not None) == "modern":
            return await self.modern(message, request)
        for name in SINGLE_IN_SESSION:
            _once(request, name, 400, message)
        if isinstance(message, Request) and message.method == "initialize":
            return await self.initialize(message, _speaker(request))
        session = self.session(request, message)
        self.check_version(headers.get(HEADER_PROTOCOL_VERSION), session, message)
        if isinstance(message, Request):
            return await session.answer(message)
        await session.receive(message)  # type: ignore[arg-type]
        return HTTPResponse(status_code=202)

    def wire(self, version_header: str | None, message: Message, in_session: bool) -> str:
        """``"legacy"`` or ``"modern"``: which era answers this one message (see the module docstring)."""
        if self.era != "dual":
            return self.era
        if in_session:
            return "legacy"
        return "modern" if Server.era_for(message, version_header=version_header) == "modern" else "legacy"

    async def modern(self, message: Message, request: HTTPRequest) -> HTTPResponse:
        """One 2026-07-28 message: a request runs on its own (exchange.py); a notification is taken."""
        if isinstance(message, Request):
            return await http_modern.answer(self.server, self.era, message, request, self.exchanges, self._group())
        if isinstance(message, Notification):
            # 2026-07-28 defines no client→server notification over HTTP (cancelling is closing the
            # stream); with no session there is nothing for one to act on. Taken, and dropped.
            return HTTPResponse(status_code=202)
        raise Refusal(400, "a 2026-07-28 client sends no responses: a server asks for input inside a result "
                           "(input_required), and the client answers by retrying its request")

    async def batch(self, batch: list, session: Session) -> HTTPResponse:
        """A 2025-03-26 batch: responses to the server's requests are taken, the rest answered as one JSON array."""
        replies = await session.answer_batch(session.take_responses(batch))
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
        try:
            with anyio.fail_after(http_deadlines.BODY_TIMEOUT):  # a body trickled in forever holds a connection
                async for chunk in request.stream():
                    size += len(chunk)
                    if size <= self.max_body:
                        body += chunk
                    elif size > DRAIN_LIMIT:
                        raise too_big
        except TimeoutError:
            raise Refusal(408, f"the body did not arrive within {http_deadlines.BODY_TIMEOUT:g} s "
                               f"({size} bytes came)") from None
        # A body over the limit is read to its end (up to DRAIN_LIMIT) and thrown away before the 413:
        # closing a connection that still has unread bytes resets it, and the client may lose the answer.
        if size > self.max_body:
            raise too_big
        return bytes(body)

    async def initialize(self, request: Request, owner: object = None) -> HTTPResponse:
        session = Session(self.server, secrets.token_hex(16), self._group(), owner)  # 128 random bits, visible ASCII
        reply = await self.server.handle(request, session.connection)
        if not isinstance(reply, Response):
            return json_reply(reply)  # type: ignore[arg-type]  # refused: no session is kept
        self.sessions[session.id] = session
        while len(self.sessions) > self.max_sessions:
            _, oldest = self.sessions.popitem(last=False)
            oldest.close()
        return json_reply(reply, headers={HEADER_SESSION_ID: session.id})

    def session(self, request: HTTPRequest, message: Message | None = None) -> Session:
        """The session a request names: 400 without one, 404 if it is unknown, ended, or another identity's."""
        request_id = message.id if isinstance(message, Request) else None
        session_id = request.headers.get(HEADER_SESSION_ID)
        if session_id is None:
            raise Refusal(400, f"expected the {HEADER_SESSION_ID} header from the initialize reply: every "
                               f"message after initialize must carry it", request_id=request_id)
        session = self._find(request)
        if session is None:  # the client MUST then start over with a fresh initialize
            if session_id in self.sessions:  # for the operator's eyes only: the reply says no more than "unknown"
                log.warning("refused a request for session %s…: another identity opened it", session_id[:8])
            raise Refusal(404, "unknown or ended session: send initialize again to start a new one",
                          request_id=request_id)
        self.sessions.move_to_end(session_id)
        return session

    def check_version(self, value: str | None, session: Session, message: Message | None) -> None:
        """400 for an ``MCP-Protocol-Version`` this session cannot use (spec "transports", Protocol
        Version Header: an invalid or unsupported value MUST get 400, whatever the session's revision)."""
        # A missing header is allowed: the spec's fallback is the version the session already knows.
        if value is None:
            return
        request_id = getattr(message, "id", None)
        if value not in LEGACY_VERSIONS:
            raise Refusal(400, f"{HEADER_PROTOCOL_VERSION}: {value!r} is not a revision a session can speak "
                               f"(this server's sessions speak {', '.join(reversed(LEGACY_VERSIONS))})",
                          request_id=request_id)
        negotiated = session.connection.version
        # The header exists since 2025-06-18, and from then on it must name the negotiated version.
        if negotiated is not None and at_least(negotiated, "2025-06-18") and value != negotiated:
            raise Refusal(400, f"{HEADER_PROTOCOL_VERSION}: {value} does not match the version this session "
                               f"negotiated, {negotiated}", request_id=request_id)

    def listen(self, request: HTTPRequest) -> HTTPResponse:
        """GET: the session's standalone stream (406 without SSE in Accept, 400/404 without a session)."""
        if SSE_TYPE not in {_media_type(part) for part in (request.headers.get("accept") or "").split(",")}:
            raise Refusal(406, f"expected Accept to list {SSE_TYPE}: GET opens an event stream, got "
                               f"{request.headers.get('accept')!r}")
        session = self.session(request)
        self.check_version(request.headers.get(HEADER_PROTOCOL_VERSION), session, None)
        return session.listen()

    def delete(self, request: HTTPRequest) -> HTTPResponse:
        session = self.session(request)
        del self.sessions[session.id]
        session.close()
        return HTTPResponse(status_code=204)

    def _group(self) -> anyio.abc.TaskGroup:
        if self.group is None:
            raise RuntimeError("the app is not running: serve it with its lifespan on (uvicorn's lifespan='on')")
        return self.group

    def close(self) -> None:
        """The server is stopping: end every session, and every open subscription gracefully."""
        while self.sessions:
            self.sessions.popitem()[1].close()
        for exchange in list(self.exchanges):
            exchange.release()


def _speaker(request: HTTPRequest) -> object:
    """Who the request speaks for, as middleware in front vouched for it; None: nobody checks."""
    return request.scope.get("state", {}).get(IDENTITY_KEY)


def allow_list(host: str, extra: Sequence[str] = ()) -> list[str]:
    """The host names a server bound to ``host`` answers to: the loopback names, ``host``, ``extra``."""
    names = set(LOOPBACK) | {h.strip() for h in extra if h.strip()}
    if host not in ("0.0.0.0", "::", ""):
        names.add(host.strip("[]"))
    return sorted(names)


def create_app(server: Server, *, host: str = "127.0.0.1", allowed_hosts: Sequence[str] | None = None,
               allowed_origins: Sequence[str] | None = None, era: ServerEra = "dual",
               max_body: int = MAX_BODY) -> Starlette:
    """A Starlette app serving ``server`` at ``/mcp``; ``app.state.endpoint`` holds the sessions.

    Allow-lists default to :func:`allow_list` of ``host`` plus ``$MCPLAB_ALLOWED_HOSTS`` (comma-separated).
    """
    extra = [h for h in os.environ.get("MCPLAB_ALLOWED_HOSTS", "").split(",") if h]
    hosts = list(allowed_hosts) if allowed_hosts is not None else allow_list(host, extra)
    endpoint = Endpoint(server, allowed_hosts=hosts, era=era, max_body=max_body,
                        allowed_origins=list(allowed_origins) if allowed_origins is not None else hosts)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # The requests' tasks outlive the HTTP exchange that started them (a reply streams on), so they
        # live in a task group as long as the app itself, not in a request handler's.
        async with anyio.create_task_group() as endpoint.group:
            yield
            endpoint.close()
            with anyio.move_on_after(SHUTDOWN_GRACE):  # released subscriptions send their closing result
                while endpoint.exchanges:
                    await anyio.sleep(0.01)
            endpoint.group.cancel_scope.cancel()
        endpoint.group = None

    app = Starlette(routes=[Route(MCP_PATH, endpoint.handle, methods=METHODS)], lifespan=lifespan)
    app.state.endpoint = endpoint
    return app

