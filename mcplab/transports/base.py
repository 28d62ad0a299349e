"""What the client needs from a transport, as a ``typing.Protocol``.

Theory of operation
-------------------
A transport moves whole JSON-RPC messages between the client and one server and records every
frame, in both directions, in its :class:`~mcplab.trace.Trace` before anything else looks at it.
Ids, the handshake and what a message means are the client's and the lifecycle's business; a
transport reads a message only where its own spec section says how it travels (Streamable HTTP
answers a request on its POST and a notification with a 202, ``http.py``).

The client *pulls*: whoever waits for a response calls :meth:`Transport.receive` (see
``client/connection.py``). So the main channel needs no task of its own, and a notebook can open a
connection in one cell and use it in the next.

``receive`` returns a decoded message, or the :class:`~mcplab.wire.errors.JSONRPCError` that a
frame which did not decode turned into (the client decides what a bad frame means), or a
:class:`StreamEnded` when a modern HTTP reply stream broke before its response, and raises
:class:`~mcplab.wire.errors.TransportError` (for stdio, :class:`~mcplab.wire.errors.ServerExited`)
once nothing more can arrive. ``stdio.py`` and ``http.py`` fit this shape; ``memory.py`` is an
in-process pair for unit tests.

``channel`` names the trace channel, ``"stdio"`` or ``"http"``. An ``"http"`` transport's ``send``
also takes ``headers``: in the modern era the client mirrors each request's routing facts into
them (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``; ``wire/headers.py``)
and builds them only for such a transport: stdio has no headers. Over HTTP a reply also has a
status: :func:`reply_status` asks a transport that has statuses (:class:`AnswersWithStatus`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from mcplab.wire.errors import JSONRPCError
from mcplab.wire.jsonrpc import Message, RequestId
from mcplab.trace import Trace


@dataclass(frozen=True)
class StreamEnded:
    """What ``receive`` returns when the reply stream of request ``request_id`` ended before its
    response (Streamable HTTP, 2026-07-28: no resumption, so the request is lost; the client MUST
    re-issue it with a new id). It is no message: nothing of it crossed the wire."""
    request_id: RequestId
    reason: str


class Opens:
    """What makes ``async with transport:`` open a transport and close it again, for each transport here."""

    async def __aenter__(self):  # type: ignore[no-untyped-def]
        await self.open()  # type: ignore[attr-defined]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()  # type: ignore[attr-defined]


@runtime_checkable
class Transport(Protocol):
    """A connection to one server that moves whole messages and records every frame."""

    trace: Trace
    channel: str  # "stdio" or "http": an "http" transport's send() takes headers= too

    async def open(self) -> None:
        """Connect (for stdio: spawn the server). Called once, before anything is sent."""

    async def send(self, message: Message) -> None:
        """Encode one message and send it as one frame."""

    async def send_raw(self, line: str) -> None:
        """Send text exactly as given, as one frame (the labs use it to show raw bytes)."""

    async def receive(self) -> Message | JSONRPCError | StreamEnded:
        """The next message from the server; raises TransportError once the connection is gone."""

    async def close(self) -> None:
        """Disconnect the way the transport's spec section says; safe to call twice."""


@runtime_checkable
class AnswersWithStatus(Protocol):
    """A transport whose replies come with an HTTP status (Streamable HTTP, or the memory pair playing it)."""

    def reply_status(self, request_id: RequestId) -> int | None:
        """The HTTP status of the reply that carried the answer to ``request_id``, once (None: not known)."""


def reply_status(transport: object, request_id: RequestId) -> int | None:
    """The HTTP status the answer to ``request_id`` came with, as the transport saw it; None over stdio.

    A dual-era client needs it: a 404 carrying -32601 is how a modern HTTP server says "no such method"
    (``client/eras.py``), so the status is handed back by the transport, not read out of the trace.
    """
    return transport.reply_status(request_id) if isinstance(transport, AnswersWithStatus) else None
