"""What the client needs from a transport, as a ``typing.Protocol``.

Theory of operation
-------------------
A transport moves whole JSON-RPC messages between the client and one server and records
every frame, in both directions, in its :class:`~mcplab.trace.Trace` before anything else
looks at it. It knows nothing about MCP methods, ids or the handshake: that is the client's
and the lifecycle's business.

The client *pulls*: whoever is waiting for a response calls :meth:`Transport.receive` (see
``client/connection.py`` for who reads when). So a transport needs no task of its own for the main
channel, and a connection is not tied to one task group, which is what lets a notebook open
it in one cell and use it in the next.

``receive`` returns a decoded message, or the :class:`~mcplab.wire.errors.JSONRPCError` that a
frame which did not decode turned into (the client decides what a bad frame means), or a
:class:`StreamEnded` when a modern HTTP reply stream broke before its response, and
raises :class:`~mcplab.wire.errors.TransportError` (for stdio, :class:`~mcplab.wire.errors.ServerExited`)
once nothing more can arrive. The stdio transport (``stdio.py``) and the Streamable HTTP one
(``http.py``) both fit this shape; ``memory.py`` is an in-process pair for unit tests.

Over HTTP a reply also has a status. The client reads it only where the spec gives it a meaning of
its own (a dual-era client's probe): :func:`reply_status` asks a transport that has statuses
(:class:`AnswersWithStatus`) for the one an answer came with, and gets None from one that has none.

``send`` and ``receive`` have twins that never wait, as anyio's memory streams do: ``send_nowait``
(False: nothing was sent, use ``send``) and ``receive_nowait`` (None: nothing has arrived yet). The
connection tries them first, so an exchange that need not wait sets no timer.

``send`` may be given ``headers``: in the modern era the client mirrors each request's routing
facts into HTTP headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``;
see ``wire/headers.py``). A transport with headers sends them with that one message, over any it
would set itself; a transport without (stdio) ignores them, as the spec allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, runtime_checkable

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


@runtime_checkable
class Transport(Protocol):
    """A connection to one server that moves whole messages and records every frame."""

    trace: Trace

    async def open(self) -> None:
        """Connect (for stdio: spawn the server). Called once, before anything is sent."""

    async def send(self, message: Message, *, headers: Mapping[str, str] | None = None) -> None:
        """Encode one message and send it as one frame (with ``headers``, if the transport has any)."""

    def send_nowait(self, message: Message, *, headers: Mapping[str, str] | None = None) -> bool:
        """Send one message if that needs no waiting at all, else send nothing and return False."""

    async def send_raw(self, line: str) -> None:
        """Send text exactly as given, as one frame (the labs use it to show raw bytes)."""

    async def receive(self) -> Message | JSONRPCError | StreamEnded:
        """The next message from the server; raises TransportError once the connection is gone."""

    def receive_nowait(self) -> Message | JSONRPCError | StreamEnded | None:
        """The next message if it has arrived already, else None (never waits, never raises)."""

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
