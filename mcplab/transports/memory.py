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
"""

from __future__ import annotations

import inspect
from collections import deque
from typing import Any, Callable

import anyio

from mcplab import jsonrpc
from mcplab.errors import JSONRPCError, ServerExited, TransportError
from mcplab.trace import Trace

__all__ = ["MemoryTransport"]

Serve = Callable[[jsonrpc.Message], Any]


class MemoryTransport:
    """The client end of an in-process connection to ``serve``."""

    channel = "stdio"

    def __init__(self, serve: Serve) -> None:
        self.serve = serve
        self.trace = Trace()
        self._inbox: deque[jsonrpc.Message | JSONRPCError] = deque()
        self._arrived = anyio.Event()
        self._gone: TransportError | None = None
        self._open = False

    async def open(self) -> None:
        self._open = True

    async def __aenter__(self) -> MemoryTransport:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def send(self, message: jsonrpc.Message) -> None:
        await self.send_raw(jsonrpc.encode(message))

    async def send_raw(self, line: str) -> None:
        if not self._open or self._gone is not None:
            raise self._gone or TransportError("the memory transport is not open")
        try:
            message: Any = jsonrpc.decode(line, mcp=False)
        except JSONRPCError as exc:
            message = exc
        self.trace.record("c2s", "stdio", line, message)
        replies = self.serve(message)
        if inspect.isawaitable(replies):
            replies = await replies
        for reply in replies or ():
            self.push(reply)

    def push(self, message: jsonrpc.Message | str) -> None:
        """The server sends ``message`` (or a raw line of text) to the client."""
        line = message if isinstance(message, str) else jsonrpc.encode(message)
        try:
            parsed: Any = jsonrpc.decode(line)
        except JSONRPCError as exc:
            parsed = exc
        self.trace.record("s2c", "stdio", line, parsed)
        self._inbox.append(parsed)
        self._arrived.set()

    def hang_up(self, returncode: int = 1, stderr: str = "") -> None:
        """The server goes away: what is already sent can be read, then ServerExited."""
        for text in stderr.splitlines():
            self.trace.record("s2c", "stderr", text)
        self._gone = ServerExited(f"the server exited with code {returncode}",
                                  returncode=returncode, stderr_tail=stderr.splitlines())
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
