"""An in-process transport: the "server" is a Python function. For unit tests and labs.

Theory of operation
-------------------
:class:`MemoryTransport` gives the client the same :class:`~mcplab.transports.base.Transport`
shape as stdio, with no process: every message the client sends is encoded, recorded in the
trace, decoded again (so the server sees exactly what a pipe would carry) and passed to
``serve(message)``, which returns the messages the server sends back (a list, possibly empty;
plain or ``async``). :meth:`~MemoryTransport.push` makes the server speak unprompted
(a notification, a request, or a raw line that is not JSON at all), and
:meth:`~MemoryTransport.hang_up` makes it go away as a crashed server would.

``MemoryTransport(serve, channel="http")`` plays an HTTP endpoint instead of a pipe, as far as
the client can tell: frames are recorded on the ``http`` channel, each message sent keeps the
headers the client gave in its frame's ``http`` field, as a POST would, and every reply reads as a
200. That is how the tests see the modern headers without a web server.
"""

from __future__ import annotations

import inspect
from collections import deque
from typing import Any, Callable, Mapping

import anyio

from mcplab.wire import jsonrpc
from mcplab.wire.errors import JSONRPCError, ServerExited, TransportError
from mcplab.trace import Trace
from mcplab.transports.base import Opens

__all__ = ["MemoryTransport"]

Serve = Callable[[jsonrpc.Message], Any]


class MemoryTransport(Opens):
    """The client end of an in-process connection to ``serve``."""

    def __init__(self, serve: Serve, *, channel: str = "stdio") -> None:
        if channel not in ("stdio", "http"):
            raise ValueError(f"channel must be 'stdio' or 'http', got {channel!r}")
        self.serve = serve
        self.channel = channel
        self.trace = Trace()
        self._inbox: deque[jsonrpc.Message | JSONRPCError] = deque()
        self._arrived = anyio.Event()
        self._gone: TransportError | None = None
        self._open = False

    async def open(self) -> None:
        self._open = True

    async def send(self, message: jsonrpc.Message, *, headers: Mapping[str, str] | None = None) -> None:
        await self.send_raw(jsonrpc.encode(message), headers=headers)

    async def send_raw(self, line: str, *, headers: Mapping[str, str] | None = None) -> None:
        if not self._open or self._gone is not None:
            raise self._gone or TransportError("the memory transport is not open")
        message = jsonrpc.decode_as_sent(line)
        head = {"method": "POST", "status": None, "headers": dict(headers or {})}  # what a POST would carry
        self.trace.record("c2s", self.channel, line, message, http=head if self.channel == "http" else None)
        replies = self.serve(message)
        if inspect.isawaitable(replies):
            replies = await replies
        for reply in replies or ():
            self.push(reply)

    def reply_status(self, request_id: jsonrpc.RequestId) -> int | None:
        """Playing HTTP, every reply reads as a 200 (as its frame in the trace says); on stdio, none."""
        return 200 if self.channel == "http" else None

    def push(self, message: jsonrpc.Message | str) -> None:
        """The server sends ``message`` (or a raw line of text) to the client."""
        line = message if isinstance(message, str) else jsonrpc.encode(message)
        try:
            parsed: Any = jsonrpc.decode(line)
        except JSONRPCError as exc:
            parsed = exc
        head = {"method": "POST", "status": 200, "headers": {}} if self.channel == "http" else None
        self.trace.record("s2c", self.channel, line, parsed, http=head)
        self._inbox.append(parsed)
        self._arrived.set()

    def hang_up(self, returncode: int = 1, stderr: str = "") -> None:
        """The server goes away: what is already sent can be read, then ServerExited."""
        for text in stderr.splitlines():
            self.trace.record("s2c", "stderr", text)
        self._gone = ServerExited.ended(returncode, stderr.splitlines())
        self._arrived.set()

    async def receive(self) -> jsonrpc.Message | JSONRPCError:
        while not self._inbox:
            if self._gone is not None:
                raise self._gone
            if not self._open:
                raise TransportError("the memory transport is closed")
            self._arrived = anyio.Event()
            await self._arrived.wait()
        return self._inbox.popleft()

    async def close(self) -> None:
        self._open = False
        self._arrived.set()

