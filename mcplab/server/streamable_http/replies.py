"""What the HTTP endpoint sends back, in either era: a refusal, one JSON reply, or an event stream.

Theory of operation
-------------------
A POSTed request is answered one of three ways (spec "basic/transports", Streamable HTTP)::

    refused before it reached the server   →  4xx, application/json: a JSON-RPC error (a Refusal)
    nothing came before its response       →  application/json: the response
    something came first (progress, logs)  →  text/event-stream: one event per message, response last

A :class:`Stream` collects what one request produces. The runner waits for its first message: if
that is already the response, the reply is JSON with the status :func:`status_for` gives the
response (2026-07-28 ties a status to some error codes: 404 for -32601, 400 for the others in
:data:`ERROR_STATUS`; the legacy revisions answer every JSON-RPC error with 200); otherwise the
reply is an event stream that ends after the response.

Each SSE event is ``event: message`` plus exactly one ``data:`` line: ``jsonrpc.encode`` never puts
a newline in its text, and clients (the conformance suite among them) read streams line by line.
A 2025-11-25 stream opens with a *priming* event, an event id and empty data (transports: the
server SHOULD send one at once, so that the client has an id to reconnect with); earlier revisions
never defined it, and 2026-07-28 removed event ids with resumability.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, AsyncIterator, Callable

from starlette.responses import Response as HTTPResponse

from mcplab.wire import jsonrpc
from mcplab.wire.errors import (
    HEADER_MISMATCH, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION,
)
from mcplab.wire.jsonrpc import ErrorResponse, Message, RequestId

__all__ = ["Refusal", "Stream", "json_reply", "sse_event", "status_for", "ERROR_STATUS", "JSON_TYPE", "SSE_TYPE"]

JSON_TYPE, SSE_TYPE = "application/json", "text/event-stream"
KEEPALIVE = b": keep-alive\n\n"  # an SSE comment: it keeps a quiet connection open and carries nothing

ERROR_STATUS = {
    PARSE_ERROR: 400, INVALID_REQUEST: 400, INVALID_PARAMS: 400, HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400, UNSUPPORTED_PROTOCOL_VERSION: 400, METHOD_NOT_FOUND: 404,
}
"""2026-07-28, Streamable HTTP: the HTTP status of a reply carrying each JSON-RPC error code.

The spec fixes 404 for -32601 (that 404 plus its body is how a client tells a modern server from a
legacy one) and 400 for -32020/-32021/-32022 and a malformed ``_meta`` (-32602); the rest follows
the official SDK's table, so that one table decides whatever produced the error. Other codes: 200."""


class Refusal(Exception):
    """A refused HTTP request: its status, and the JSON-RPC error that goes in the body."""

    def __init__(self, status: int, message: str, *, code: int = INVALID_REQUEST, data: Any = None,
                 request_id: RequestId | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.data = status, code, message, data
        self.request_id, self.headers = request_id, headers

    def response(self, *, null_id: bool = False) -> HTTPResponse:
        """The refusal as an HTTP response; ``null_id``: the revision in force answers an unreadable
        request with ``"id": null`` (before 2025-11-25; ``jsonrpc.keeps_null_id``), else the id is left out."""
        error = ErrorResponse(self.request_id, self.code, self.message, self.data,
                              null_id=null_id and self.request_id is None)
        return json_reply(error, self.status, self.headers)


def json_reply(message: Message, status: int = 200, headers: dict[str, str] | None = None) -> HTTPResponse:
    return HTTPResponse(jsonrpc.encode(message).encode("utf-8"), status, headers, media_type=JSON_TYPE)


def sse_event(message: Message) -> bytes:
    return b"event: message\ndata: " + jsonrpc.encode(message).encode("utf-8") + b"\n\n"


def status_for(message: Message, era: str) -> int:
    """The HTTP status of a JSON reply: 200, except a modern error response (:data:`ERROR_STATUS`)."""
    if era == "modern" and isinstance(message, ErrorResponse):
        return ERROR_STATUS.get(message.code, 200)
    return 200


class Stream:
    """What goes back for one POSTed request: messages about it, then its response (or nothing, if cancelled).

    ``on_abandon`` runs if the client goes away while the stream is still open: in 2026-07-28 closing
    the stream is how a client cancels; in the legacy revisions it is not (a session outlives a POST).
    With ``keepalive`` (seconds), a quiet stream sends an SSE comment that often, so that a proxy does
    not close a long ``subscriptions/listen`` for being idle; clients ignore comments.
    """
    __slots__ = ("outbox", "wake", "done", "on_abandon", "keepalive", "prime")

    def __init__(self, on_abandon: Callable[[], None] | None = None, keepalive: float | None = None,
                 prime: str | None = None) -> None:
        self.outbox: deque[Message] = deque()
        self.wake = asyncio.Event()
        self.done = False
        self.on_abandon = on_abandon
        self.keepalive = keepalive
        self.prime = prime  # the event id of a priming event to open the stream with (2025-11-25)

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
        try:
            if self.prime is not None:
                yield b"id: " + self.prime.encode("ascii") + b"\ndata: \n\n"
            while True:
                while self.outbox:
                    yield sse_event(self.outbox.popleft())
                if self.done:
                    return
                self.wake.clear()
                try:
                    await asyncio.wait_for(self.wake.wait(), self.keepalive)
                except asyncio.TimeoutError:
                    yield KEEPALIVE
        finally:  # the client closed the stream (Starlette cancels the response), or we ended it
            if not self.done and self.on_abandon is not None:
                self.on_abandon()
