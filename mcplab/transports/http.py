"""Streamable HTTP, client side: every message is one POST; the reply is JSON or a stream of events.

Theory of operation
-------------------
Spec "basic/transports", Streamable HTTP. The legacy revisions (2025-03-26 … 2025-11-25)::

    POST /mcp   Accept: application/json, text/event-stream      a request
        ← 200 application/json      {"jsonrpc":"2.0","id":3,"result":{...}}
        ← 200 text/event-stream     event: message / data: {progress...} … data: {"id":3,"result":...}
    POST /mcp   a notification or a response                    ← 202 Accepted, no body
    GET  /mcp   Accept: text/event-stream (optional)            ← a stream of server-initiated messages
    DELETE /mcp Mcp-Session-Id: …                               the session ends (on close)

2026-07-28 keeps the POST and drops the rest (no session, no GET stream, no DELETE); instead each
request carries routing headers mirrored from its body, which the client computes (``wire/headers.py``)
and hands to :meth:`HTTPTransport.send` with the message::

    POST /mcp   MCP-Protocol-Version: 2026-07-28, Mcp-Method: tools/call, Mcp-Name: get_forecast, …
        ← 200 (JSON or SSE, as above)     ← 400/404 + a JSON-RPC error: -32020/-32022 … or -32601

:meth:`HTTPTransport.send` makes the POST. A JSON reply is read at once and queued for
:meth:`~HTTPTransport.receive`. An SSE reply stays open, and a reader task of its own takes its events
as they come, so a server→client request on it (legacy sampling, elicitation) reaches the client,
whose answer goes out as another POST while the stream is still open. The reader tasks belong to the
transport: :meth:`~HTTPTransport.close` stops them. Why tasks, when the stdio transport needs none:
several streams may be open at once (the GET stream, two calls, a ``subscriptions/listen``), and a
read that is cancelled halfway closes an HTTP stream for good, so each stream is read by a task of
its own, which no caller's timeout cancels. Those tasks are children of one task group the transport
owns (:class:`~mcplab.transports.background.Background`), open from the first stream until close. In
2026-07-28 closing a request's stream *is* its cancellation: a ``notifications/cancelled`` sent with
modern headers is not POSTed; the stream it names is closed.

Two facts from the legacy wire turn into headers, because the spec asks the client to echo them:
the ``Mcp-Session-Id`` of the initialize reply, and the ``protocolVersion`` of the initialize result
(sent as ``MCP-Protocol-Version`` from 2025-06-18 on). Once the session is initialized the transport
opens the session's GET stream if the server advertised something only it carries (``listChanged``,
``resources.subscribe``: messages that answer no request), or always with ``listen=True`` (never
with ``False``); a server may answer 405 (no such stream). A 404 for a request that named the
session means the server ended it: :class:`~mcplab.wire.errors.SessionExpired`, and the client starts over.

Every exchange lands in :attr:`HTTPTransport.trace` with its HTTP method, status and headers: the
request as sent, the JSON body, each SSE event (its ``event``/``id``/``retry`` fields under
``http["sse"]``; a "priming" event has empty data), an empty frame for 202 and for DELETE. An error
status raises :class:`~mcplab.wire.errors.HTTPStatusError` (status, body, headers), unless its body is a
JSON-RPC error answering the request, which then reaches the client as that request's error; its
status is kept for :meth:`HTTPTransport.reply_status` (a 404 with -32601 is how a modern server says
"no such method", and a dual-era client reads eras from it). A stream that ends before its response but gave an event id
is resumed: after the ``retry`` delay, ``GET`` with ``Last-Event-ID`` (2025-11-25 "polling").
2026-07-28 removed resumption: a modern reply stream that ends (or breaks) before its response
hands :class:`~mcplab.transports.base.StreamEnded` to the client, which sends the request again.
The event-stream parser is ``mcplab/wire/sse.py``; ``render_http`` (``mcplab/trace/http_text.py``) prints
the frames as HTTP text.

The HTTP itself is httpx's, with nothing of ours in between: one ``httpx.AsyncClient`` per transport,
whose pool keeps a connection alive from one POST to the next (an open event stream holds one of its
own). A proxy the environment names counts only for a server on another machine. In the browser
edition there are no sockets: the client's requests go to the server's ASGI app in the page
(``transports/asgi.py``), with the same statuses, headers and events, each event as it is sent.

With ``auth=OAuth(...)`` every request carries the bearer token, and a 401 (or a 403
``insufficient_scope``) hands over to the OAuth flow (mcplab/auth/client.py), which records its own
exchanges here and sends the request again; an ``Authorization`` header is masked in every frame.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Mapping

import anyio
import httpx

from mcplab import __version__
from mcplab.i18n import _
from mcplab.wire import jsonrpc
from mcplab.auth.wire import mask_headers, verify_with
from mcplab.wire.errors import HTTPStatusError, JSONRPCError, SessionExpired, TransportError
from mcplab.wire.jsonrpc import ErrorResponse, Notification, Request, RequestId, Response
from mcplab.wire.sse import SSEEvent, SSEParser
from mcplab.trace import Trace
from mcplab.transports import asgi
from mcplab.transports.background import Background, Job
from mcplab.transports.base import Opens, StreamEnded
from mcplab.trace.http_text import render_http
from mcplab.wire.versions import HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID, LEGACY_VERSIONS, MODERN_VERSIONS, at_least

__all__ = ["HTTPTransport", "http", "SSEParser", "SSEEvent", "render_http"]

JSON_TYPE, SSE_TYPE = "application/json", "text/event-stream"
ACCEPT = f"{JSON_TYPE}, {SSE_TYPE}"
USER_AGENT = f"mcplab/{__version__}"
DEFAULT_RETRY_MS = 1000   # reconnection delay when the server sent no "retry:" field
DRAIN_GRACE = 0.1         # seconds to let a stream end by itself after it delivered its response
CANCELLED = "notifications/cancelled"
MAX_MESSAGE = 16 << 20    # bytes of one reply body or one event this client reads (16 MiB)
INBOX = 1024              # messages the stream readers may queue before they wait for the client to take some
STATUSES = 64             # reply statuses kept for reply_status(): the oldest unread one goes first


def http(url: str, *, headers: dict[str, str] | None = None, timeout: float = 60.0,
         listen: bool | None = None, auth: Any = None, verify: Any = True, trace: Trace | None = None,
         max_message: int = MAX_MESSAGE) -> HTTPTransport:
    """A transport that POSTs to the Streamable HTTP endpoint at ``url``.

    ``listen``: open the legacy session's GET stream always (True), never (False), or when the server
    advertises something only that stream carries (None, the default).

    ``auth``: an :class:`mcplab.auth.client.OAuth` (or a started ``OAuthFlow``, to share its tokens):
    401 and 403 insufficient_scope then run the OAuth flow (mcplab/auth/client.py). ``verify``: a CA
    bundle file for ``https://`` (or False, never on a real network).

    ``trace`` records the frames (default: a bounded :class:`~mcplab.trace.Trace`); a reply body or
    an event larger than ``max_message`` bytes fails the transport instead of filling memory.

    >>> http("http://127.0.0.1:8000/mcp").url
    'http://127.0.0.1:8000/mcp'
    """
    return HTTPTransport(url, headers=headers, timeout=timeout, listen=listen, auth=auth, verify=verify,
                         trace=trace, max_message=max_message)


# --- the transport -------------------------------------------------------------------------------------


def _on_this_machine(url: str) -> bool:
    host = (httpx.URL(url).host or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


class _Stream:
    """An open event stream: the reply it is (POST, or a GET), the request it answers, its reader task."""

    def __init__(self, response: httpx.Response, request_id: RequestId | None, max_event: int,
                 modern: bool = False) -> None:
        self.response = response
        self.request_id = request_id
        self.modern = modern    # a 2026-07-28 reply: not resumable; if it breaks, the request is sent again
        self.parser = SSEParser(max_event)
        self.answered = False
        self.recorded = False   # the first frame of a response carries its status and headers
        self.last_id_shown: str | None = None
        self.reader: Job | None = None


class HTTPTransport(Opens):
    """A connection to one Streamable HTTP endpoint; implements :class:`mcplab.transports.base.Transport`."""

    channel = "http"

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 60.0,
                 listen: bool | None = None, auth: Any = None, verify: Any = True, trace: Trace | None = None,
                 max_message: int = MAX_MESSAGE) -> None:
        self.url = url
        self.auth = auth.start(url) if hasattr(auth, "start") else auth  # the OAuth flow, when authorizing
        self.verify = verify
        self.trace = trace if trace is not None else Trace()
        self.max_message = max_message
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.extra_headers = dict(headers or {})
        self.listen = listen
        # the read timeout: how long a reply may keep us waiting for its next byte
        self.timeout = httpx.Timeout(timeout, connect=10.0)
        self._client: httpx.AsyncClient | None = None
        self._endpoint: httpx.URL | None = None  # the URL, parsed once by open() (not once per request)
        self._inbox: deque[jsonrpc.Message | JSONRPCError] = deque()
        self._arrived = anyio.Event()
        self._room = anyio.Event()  # set when receive() takes a message: a waiting stream reader reads on
        self._streams: list[_Stream] = []
        self._failure: TransportError | None = None
        self._initialize_id: RequestId | None = None
        self._advertised: dict[str, Any] = {}  # the server capabilities of the initialize result
        self._statuses: dict[RequestId, int] = {}  # request id → status of the reply that answered it (bounded)
        self._readers = Background()  # the stream readers' task group, open from the first stream until close()
        self._closed = False

    async def open(self) -> None:
        if self._client is not None:
            raise TransportError("this HTTP transport is already open; make a new one per connection")
        # A proxy from the environment is never right for a server on this machine (and httpx would
        # send even 127.0.0.1 through HTTP_PROXY): trust the environment only for remote servers.
        self._endpoint = httpx.URL(self.url)
        # In the page there is no socket: the request goes to the app listening at the URL in this process.
        network = {"transport": asgi.PageNetwork()} if asgi.IN_BROWSER else {}
        self._client = httpx.AsyncClient(timeout=self.timeout, headers={"User-Agent": USER_AGENT},
                                         trust_env=not _on_this_machine(self.url), verify=verify_with(self.verify),
                                         **network)

    # --- sending -------------------------------------------------------------------------------------
    def headers(self, accept: str = ACCEPT) -> dict[str, str]:
        """The headers of the next request: Accept, the session, the negotiated version, your extras."""
        headers = {"Accept": accept, **self.extra_headers}
        if accept == ACCEPT:
            headers["Content-Type"] = JSON_TYPE
        if self.session_id is not None:
            headers[HEADER_SESSION_ID] = self.session_id
        if self.protocol_version is not None and at_least(self.protocol_version, "2025-06-18"):
            headers[HEADER_PROTOCOL_VERSION] = self.protocol_version
        if self.auth is not None:
            headers.update(self.auth.headers())  # Authorization: Bearer, on every request once there is a token
        return headers

    async def send(self, message: jsonrpc.Message, *, headers: Mapping[str, str] | None = None) -> None:
        """POST one message; ``headers`` (a modern request's routing headers) go with it, over ours."""
        if isinstance(message, Request) and message.method == "initialize":
            self._initialize_id = message.id
        if isinstance(message, Notification) and message.method == CANCELLED and _is_modern(headers):
            await self._cancel(message)
            return
        await self._post(jsonrpc.encode(message), message, headers)
        if isinstance(message, Notification) and message.method == "notifications/initialized" and self._listens():
            await self._get()

    def _listens(self) -> bool:
        """Open the session's GET stream? As told, or if the server advertised a message only it carries."""
        if self.listen is not None:
            return self.listen
        return any(isinstance(c, dict) and (c.get("listChanged") is True or c.get("subscribe") is True)
                   for c in self._advertised.values())

    async def send_raw(self, line: str, *, headers: Mapping[str, str] | None = None) -> None:
        """POST ``line`` as the body exactly as given (it may be invalid: that is the point)."""
        await self._post(line, jsonrpc.decode_as_sent(line), headers)

    async def _cancel(self, note: Notification) -> None:
        """2026-07-28 over HTTP: cancelling a request is closing its stream (nothing is POSTed)."""
        request_id = (note.params or {}).get("requestId")
        for stream in list(self._streams):
            if stream.request_id == request_id and stream.reader is not None:
                await stream.reader.stop()

    async def _post(self, raw: str, message: Any, extra: Mapping[str, str] | None = None) -> None:
        client = self._open_client()
        headers = httpx.Headers(self.headers())
        for name, value in (extra or {}).items():
            headers[name] = value  # case-insensitive: a header given for this message replaces ours
        request = client.build_request("POST", self._endpoint, content=raw.encode("utf-8"), headers=headers)
        self.trace.record("c2s", "http", raw, message, http=_head(request))
        # A session belongs to the legacy era: a 2026-07-28 exchange never starts one, whatever the reply says.
        modern = _is_modern(extra)
        sent_session = headers.get(HEADER_SESSION_ID)
        response = await self._exchange(client, request, sessions=not modern)
        request_id = message.id if isinstance(message, Request) else None
        if response.status_code < 300 and _media_type(response) == SSE_TYPE:
            self._read_events(response, request_id, modern=modern)
            return
        body = await self._body(response)
        parsed = _decode(body) if body.strip() else None
        self.trace.record("s2c", "http", body, parsed, http=_head(response))
        if response.status_code == 202 or (response.status_code < 300 and not isinstance(message, Request)):
            return
        if response.status_code == 404 and sent_session is not None and not modern:
            raise self._session_expired(response, body)  # the session is over, whatever the body says
        if response.status_code < 300 and _media_type(response) == JSON_TYPE and parsed is not None:
            self._answered(request_id, parsed, response.status_code)
            self._deliver(parsed)
            return
        if (response.status_code >= 400 and isinstance(parsed, ErrorResponse) and request_id is not None
                and parsed.id == request_id):
            self._answered(request_id, parsed, response.status_code)
            self._deliver(parsed)  # a refusal the server tied to this request: that request fails, not the link
            return
        raise self._status_error(response, body)

    async def _get(self, last_event_id: str | None = None, request_id: RequestId | None = None) -> bool:
        """Open a GET event stream: the standalone one, or a resumption after ``last_event_id``."""
        client = self._open_client()
        headers = self.headers(accept=SSE_TYPE)
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        request = client.build_request("GET", self._endpoint, headers=headers)
        self.trace.record("c2s", "http", "", None, http=_head(request))
        response = await self._exchange(client, request)
        if response.status_code == 200 and _media_type(response) == SSE_TYPE:
            standalone = last_event_id is None
            if standalone:
                # The standalone stream may stay silent for the whole session: its 200 goes in the
                # trace now, right after the GET, not with a first event that may never come.
                self.trace.record("s2c", "http", "", None, http=_head(response))
            self._read_events(response, request_id, last_event_id, recorded=standalone)
            return True
        body = await self._body(response)  # 405: this server offers no such stream, which is allowed
        self.trace.record("s2c", "http", body, _decode(body) if body.strip() else None, http=_head(response))
        return False

    async def _exchange(self, client: httpx.AsyncClient, request: httpx.Request, *,
                        sessions: bool = True) -> httpx.Response:
        try:
            if self.auth is not None:  # the OAuth flow answers 401 / 403 insufficient_scope, then resends
                response = await self.auth.send(client, request, self.trace)
            else:
                response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise TransportError(f"{request.method} {self.url} failed: {type(exc).__name__}: {exc}") from exc
        if sessions and self.session_id is None and HEADER_SESSION_ID in response.headers:
            self.session_id = response.headers[HEADER_SESSION_ID]
        return response

    async def _body(self, response: httpx.Response) -> str:
        body = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self.max_message:
                    raise TransportError(f"the reply from {self.url} is larger than {self.max_message} bytes, the "
                                         f"most this client reads in one message")
            return body.decode("utf-8", errors="replace")
        except httpx.HTTPError as exc:
            raise TransportError(f"reading the reply from {self.url} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            await response.aclose()

    def _session_expired(self, response: httpx.Response, body: str) -> SessionExpired:
        self.session_id = None  # the spec: start over with a fresh initialize, without the old id
        self._advertised = {}
        explained = _("the server ended this session (404); a new session starts with initialize")
        return SessionExpired(f"{response.request.method} {self.url}: {explained}\n{body[:500]}".rstrip(),
                              status=response.status_code,
                              body=body, headers=dict(response.headers))

    def _status_error(self, response: httpx.Response, body: str) -> HTTPStatusError:
        status = response.status_code
        if status == 404 and self.session_id is not None:
            return self._session_expired(response, body)
        if status < 300:
            what = f"expected {JSON_TYPE} or {SSE_TYPE}, got {response.headers.get('content-type')!r}"
        else:
            what = f"{status} {response.reason_phrase}"
        return HTTPStatusError(f"{response.request.method} {self.url}: {what}\n{body[:500]}".rstrip(), status=status,
                               body=body, headers=dict(response.headers))

    def _deliver(self, message: jsonrpc.Message | JSONRPCError | StreamEnded) -> None:
        if (isinstance(message, Response) and message.id == self._initialize_id
                and isinstance(message.result, dict) and message.result.get("protocolVersion") in LEGACY_VERSIONS):
            self.protocol_version = message.result["protocolVersion"]
            advertised = message.result.get("capabilities")
            self._advertised = advertised if isinstance(advertised, dict) else {}
        self._inbox.append(message)
        self._arrived.set()

    def _answered(self, request_id: RequestId | None, message: Any, status: int) -> None:
        """Keep the status of the reply that answered ``request_id``, for :meth:`reply_status`."""
        if request_id is None or not isinstance(message, (Response, ErrorResponse)) or message.id != request_id:
            return
        self._statuses[request_id] = status
        if len(self._statuses) > STATUSES:
            del self._statuses[next(iter(self._statuses))]  # nobody asked for it: a dict keeps insertion order

    def reply_status(self, request_id: RequestId) -> int | None:
        """The HTTP status of the reply that answered ``request_id`` (a 404 carrying -32601 is a modern
        server's "no such method"); each is handed back once. None if unknown, or asked for already."""
        return self._statuses.pop(request_id, None)

    def _open_client(self) -> httpx.AsyncClient:
        if self._client is None or self._closed:
            raise TransportError("the HTTP transport is not open")
        return self._client

    # --- receiving -----------------------------------------------------------------------------------
    async def receive(self) -> jsonrpc.Message | JSONRPCError | StreamEnded:
        while not self._inbox:
            if self._failure is not None:
                raise TransportError(str(self._failure))
            self._open_client()
            self._arrived = anyio.Event()
            await self._arrived.wait()  # a JSON reply from a POST, or an event a stream's reader took
        self._room.set()
        return self._inbox.popleft()

    async def _wait_for_room(self) -> None:
        """A stream reader with messages to queue waits while the inbox is full: a flood is held back
        (by TCP, on the server's side) instead of piling up here."""
        while len(self._inbox) >= INBOX and not self._closed:
            if self._room.is_set():
                self._room = anyio.Event()
            await self._room.wait()

    def _read_events(self, response: httpx.Response, request_id: RequestId | None,
                     last_event_id: str | None = None, *, modern: bool = False, recorded: bool = False) -> None:
        stream = _Stream(response, request_id, self.max_message, modern)
        stream.recorded = recorded
        stream.parser.last_id = stream.last_id_shown = last_event_id
        self._streams.append(stream)
        stream.reader = self._readers.start_soon(lambda: self._reader(stream))

    async def _reader(self, stream: _Stream) -> None:
        """Take the stream's events as they come; resume it (legacy) or report it (modern) if it ends
        early; never raise."""
        chunks = stream.response.aiter_bytes()
        broke = "it ended"
        try:
            async for chunk in chunks:
                for event in stream.parser.feed(chunk):
                    await self._wait_for_room()  # per event: one chunk may hold thousands
                    self._event(stream, event)
                if stream.answered:
                    break
            for event in stream.parser.end():
                self._event(stream, event)
            if stream.answered and stream.response.request.method == "POST":
                with anyio.move_on_after(DRAIN_GRACE):  # reading to the end lets the connection be reused
                    async for chunk in chunks:
                        for event in stream.parser.feed(chunk):
                            await self._wait_for_room()
                            self._event(stream, event)
        except Exception as exc:  # nobody awaits this task: whatever went wrong, the next receive() says so
            if not stream.modern or stream.request_id is None or stream.answered:
                self._fail(TransportError(f"the event stream from {self.url} broke: {type(exc).__name__}: {exc}"))
                return
            broke = f"it broke: {type(exc).__name__}: {exc}"  # one request is lost, not the connection
        finally:
            self._streams.remove(stream)
            with anyio.CancelScope(shield=True):
                await stream.response.aclose()
        if not stream.recorded:
            self.trace.record("s2c", "http", "", None, http=_head(stream.response))
        if stream.modern:  # 2026-07-28: no resumption; the client sends the request again
            if not stream.answered and stream.request_id is not None:
                self._deliver(StreamEnded(stream.request_id, f"its response stream {broke} before the response"))
            return
        resumable = stream.request_id is not None and stream.parser.last_id is not None
        if stream.answered or not resumable:
            return  # a request left without its answer times out in the client
        await anyio.sleep((stream.parser.retry if stream.parser.retry is not None else DEFAULT_RETRY_MS) / 1000)
        try:
            await self._get(stream.parser.last_id, stream.request_id)
        except Exception as exc:  # as above: report it to the reader of this transport
            self._fail(exc if isinstance(exc, TransportError) else TransportError(f"{type(exc).__name__}: {exc}"))

    def _event(self, stream: _Stream, event: SSEEvent) -> None:
        head = _head(stream.response)
        if stream.recorded:
            head["headers"] = {}  # the headers went with the first event of this response
        # An event's id is the stream's last id (SSE keeps it until a new one comes); the trace shows it
        # on the event that set it only, as it was on the wire.
        new_id = event.id if event.id != stream.last_id_shown else None
        stream.last_id_shown = event.id
        head["sse"] = {k: v for k, v in (("event", event.event), ("id", new_id), ("retry", event.retry))
                       if v is not None}
        stream.recorded = True
        parsed = _decode(event.data) if event.data.strip() else None
        self.trace.record("s2c", "http", event.data, parsed, http=head)
        if parsed is None:
            return  # a priming event: only its id and retry matter
        if isinstance(parsed, (Response, ErrorResponse)) and parsed.id == stream.request_id:
            stream.answered = True
            self._answered(stream.request_id, parsed, stream.response.status_code)
        self._deliver(parsed)

    def _fail(self, error: TransportError) -> None:
        if self._failure is None and not self._closed:
            self._failure = error
        self._arrived.set()

    # --- closing -------------------------------------------------------------------------------------
    async def close(self) -> None:
        """Stop the stream readers, end the session with DELETE (if there is one), close. Safe twice."""
        if self._closed or self._client is None:
            self._closed = True
            return
        client = self._client
        # Shielded: the session should end on the server even when the task closing it is cancelled.
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await self._readers.aclose()  # cancels every stream reader and waits for each
            if self.session_id is not None:
                headers = self.headers()
                headers.pop("Content-Type")
                request = client.build_request("DELETE", self._endpoint, headers=headers)
                self.trace.record("c2s", "http", "", None, http=_head(request))
                try:
                    response = await client.send(request)
                    self.trace.record("s2c", "http", response.text, None, http=_head(response))
                except httpx.HTTPError:
                    pass  # the server is gone already, and the session with it
                self.session_id = None
            self._closed = True
            self._arrived.set()
            self._room.set()
            await client.aclose()
        self._closed = True


def _is_modern(headers: Mapping[str, str] | None) -> bool:
    """Were these headers made for a 2026-07-28 request (its version header names a modern revision)?"""
    return any(name.lower() == HEADER_PROTOCOL_VERSION.lower() and value in MODERN_VERSIONS
               for name, value in (headers or {}).items())


def _media_type(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def _head(exchange: httpx.Request | httpx.Response) -> dict[str, Any]:
    """The trace's ``http`` field: method, status (responses only) and headers as they were on the wire."""
    if isinstance(exchange, httpx.Response):
        method, status = exchange.request.method, exchange.status_code
    else:
        method, status = exchange.method, None
    headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in exchange.headers.raw}
    return {"method": method, "status": status, "headers": mask_headers(headers)}  # a token never lands in a trace


def _decode(text: str) -> jsonrpc.Message | JSONRPCError:
    try:
        return jsonrpc.decode(text)  # type: ignore[return-value]
    except JSONRPCError as exc:
        return exc

