"""A 2026-07-28 request over Streamable HTTP: one POST, checked against its headers, answered on its own.

Theory of operation
-------------------
A modern request carries its protocol version and client capabilities in ``params._meta``, and
mirrors a few routing facts into headers so a gateway need not parse the body (spec
"basic/transports", Streamable HTTP, "Request Metadata")::

    POST /mcp
    MCP-Protocol-Version: 2026-07-28     = params._meta["io.modelcontextprotocol/protocolVersion"]
    Mcp-Method: tools/call               = method
    Mcp-Name: get_forecast               = params.name (tools/call, prompts/get) or params.uri (resources/read)
    Mcp-Param-City: Beijing              = the argument whose schema says "x-mcp-header": "City"

The body is the source of truth, and the headers must agree with it. :func:`answer` checks, in the
order the official SDK and conformance suite use (the spec leaves it open), each failure a 4xx with
a JSON-RPC error that echoes the request id:

1. the envelope (``modern.read_meta``): ``_meta`` or a required key missing → -32602, 400;
2. the headers (``header_checks.check_headers``): missing, sent twice, not equal to the body (after
   decoding the ``=?base64?…?=`` sentinel) → -32020 HeaderMismatch, 400;
3. the version (``modern.check_version``): not spoken here → -32022 with ``data.supported``, 400;
4. the toolkit (``Server.handle``): an unknown or removed method → -32601 with **404**, a missing
   client capability → -32021 with 400 (:data:`~mcplab.server.streamable_http.replies.ERROR_STATUS`).

``initialize`` skips 1-3. Sent by a legacy client it carries none of the headers every modern POST
carries, so server validation refuses it: -32020 with 400 (versioning, compatibility matrix, "Legacy
client → Modern server"); sent with them, the toolkit answers -32601 (404). Either way the error names
the versions this server speaks (``data.supported``), the one hint a legacy client can show its user.

There is no session. Each POST gets an :class:`Exchange`, the toolkit's ``Peer`` for that request
alone: progress and log messages go on its event stream, and ``hold`` keeps a
``subscriptions/listen`` stream open. Closing the stream *is* the cancellation in 2026-07-28, so
a client that goes away cancels the request, and nothing more is sent for it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import anyio.lowlevel

from starlette.requests import Request as HTTPRequest
from starlette.responses import Response as HTTPResponse
from starlette.responses import StreamingResponse

from mcplab.wire.errors import HEADER_MISMATCH, JSONRPCError, TransportError
from mcplab.wire.jsonrpc import ErrorResponse, Message, Request, RequestId, error_response
from mcplab.server import modern
from mcplab.server.streamable_http.header_checks import check_headers
from mcplab.server.streamable_http.replies import ERROR_STATUS, SSE_TYPE, Stream, json_reply, status_for
from mcplab.wire.versions import HEADER_METHOD, HEADER_PROTOCOL_VERSION, ServerEra

if TYPE_CHECKING:
    from mcplab.server.toolkit import Server

__all__ = ["answer", "Exchange", "DISCONNECT_POLL"]

log = logging.getLogger("mcplab.server.streamable_http")

DISCONNECT_POLL = 0.25  # seconds between checks that a silent request's client is still there
KEEPALIVE_SECONDS = 15.0  # an SSE comment this often on a quiet stream (spec: encouraged for listen streams)


# --- one request, one exchange ----------------------------------------------------------------------

class Exchange:
    """One modern POST as the toolkit's ``Peer``: the stream of its request, and nothing else."""

    def __init__(self, request_id: RequestId) -> None:
        self.request_id = request_id
        self.scope = anyio.CancelScope()  # the running request's, in the app's task group
        # The stream is told the scope's own cancel, not self.abandon: a bound method of ours would make
        # exchange → stream → exchange a reference cycle, garbage only the cycle collector frees.
        self.stream = Stream(on_abandon=self.scope.cancel, keepalive=KEEPALIVE_SECONDS)
        self._held: anyio.Event | None = None

    def post(self, message: Message, *, related_to: RequestId | None = None) -> None:
        if related_to is not None and related_to != self.request_id:
            log.debug("dropped %s: it belongs to request %r, not %r", getattr(message, "method", message),
                      related_to, self.request_id)
            return
        self.stream.put(message)

    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      related_to: RequestId | None = None) -> Any:
        raise TransportError(f"cannot send {method}: a 2026-07-28 server sends no requests (it asks the client "
                             f"with an input_required result instead)")

    def cancel(self, request_id: RequestId) -> None:
        """``notifications/cancelled`` is stdio's; here the client closes the stream (:meth:`abandon`)."""

    async def hold(self, request_id: RequestId) -> None:
        """Keep ``subscriptions/listen`` open: return when the server ends it; the client's leaving cancels the wait."""
        self._held = anyio.Event()
        await self._held.wait()

    def release(self) -> None:
        """The server is stopping: a held subscription ends gracefully (its result goes out)."""
        if self._held is not None:
            self._held.set()

    def abandon(self) -> None:
        """The client closed the stream: in 2026-07-28 that cancels the request."""
        self.scope.cancel()


async def answer(server: Server, era: ServerEra, request: Request, http: HTTPRequest,
                 exchanges: set[Exchange], group: anyio.abc.TaskGroup) -> HTTPResponse:
    """Check one modern request against its headers, run it, and reply with JSON or an event stream."""
    if request.method == "initialize":
        refusal = _initialize_without_headers(_pairs(http), request, era)
        if refusal is not None:
            return json_reply(refusal, ERROR_STATUS[refusal.code])
    else:
        try:
            meta = modern.read_meta(request)
            name = request.params.get("name") if request.method == "tools/call" else None  # type: ignore[union-attr]
            check_headers(_pairs(http), request, meta.protocol_version,
                          server.tools.get(name) if isinstance(name, str) else None)
            modern.check_version(meta, era)
        except JSONRPCError as exc:
            return json_reply(error_response(exc, request_id=request.id), ERROR_STATUS[exc.code])
    exchange = Exchange(request.id)
    connection = server.connect(exchange, era)
    connection.era = "modern"  # this request decided it (a dual-era connection starts undecided)

    async def run() -> None:
        reply = None
        with exchange.scope:  # the client closed the stream, or the server is stopping: no response is sent
            try:
                reply = await server.handle(request, connection)
            finally:
                exchanges.discard(exchange)
                exchange.stream.finish(None if exchange.scope.cancel_called else reply)

    exchanges.add(exchange)
    group.start_soon(run)  # the request outlives this handler: its reply may stream on after we return
    if not await _first_message(exchange, http):
        return HTTPResponse(status_code=499)  # nobody is listening any more; this never reaches the client
    stream = exchange.stream
    if stream.done and len(stream.outbox) == 1:
        reply = stream.outbox.popleft()
        return json_reply(reply, status_for(reply, "modern"))
    return StreamingResponse(stream.events(), media_type=SSE_TYPE,
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def _first_message(exchange: Exchange, http: HTTPRequest) -> bool:
    """Wait until the request has something to send; False if its client left first (then it is cancelled)."""
    # One turn of the loop first: a request that needs no more (most do) is answered by then, and
    # the timer below is never set.
    await anyio.lowlevel.checkpoint()
    if exchange.stream.wake.is_set():
        return True
    while True:
        with anyio.move_on_after(DISCONNECT_POLL):
            await exchange.stream.wake.wait()
            return True
        if await http.is_disconnected():
            exchange.abandon()
            return False


def _initialize_without_headers(pairs: list[tuple[str, str]], request: Request, era: ServerEra) -> ErrorResponse | None:
    """The -32020 a legacy ``initialize`` gets for the modern headers it lacks (None if it has them)."""
    sent = {name.lower() for name, _ in pairs}
    missing = [name for name in (HEADER_PROTOCOL_VERSION, HEADER_METHOD) if name.lower() not in sent]
    if not missing:
        return None
    supported = modern.supported_versions(era)
    return ErrorResponse(request.id, HEADER_MISMATCH,
                         f"Header mismatch: {' and '.join(missing)} missing; every request to this server carries "
                         f"them, and initialize, a legacy handshake, does not exist here: this server speaks "
                         f"{', '.join(supported)}", {"supported": supported})


def _pairs(http: HTTPRequest) -> list[tuple[str, str]]:
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in http.headers.raw]
