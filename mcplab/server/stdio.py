"""The stdio runner: serve one client over stdin/stdout, one JSON-RPC message per line.

Theory of operation
-------------------
The server reads messages from its stdin and writes messages to its stdout, one per line, and logs
on stderr only (spec "basic/transports"). The runner reads, hands each message to ``Server.handle``
and writes the reply; every decision is the toolkit's.

    stdin ──▶ LineFramer.feed ──▶ StdioSession.receive ──▶ Server.handle ──▶ reply ──▶ stdout

Notifications and ``initialize`` are handled in line, in order (they change the connection's
state); every other request is a task of one task group, so a slow tool does not hold up ``ping``,
and ``notifications/cancelled`` cancels its scope. At the end of stdin or on SIGTERM, running
requests get :data:`EOF_GRACE` s to answer (``printf ... | python servers/weather.py`` prints its
replies), open subscriptions end gracefully, and the rest is cancelled. asyncio or trio (runner.py).
:func:`serve_lines` does all of that over any two byte streams; :func:`serve_stdio` gives it stdin, stdout
and SIGTERM, and the browser edition, with no process, memory streams (transports/in_process.py).
"""

from __future__ import annotations

import logging
import os
from functools import partial
from typing import Any, Awaitable, Callable

import anyio
import anyio.abc

from mcplab import portable
from mcplab.lifecycle import ERROR
from mcplab.server.peer import RunnerPeer
from mcplab.server.toolkit import Server
from mcplab.pipes import Reader
from mcplab.wire import jsonrpc
from mcplab.wire.errors import InvalidRequest, JSONRPCError, TransportError
from mcplab.wire.jsonrpc import ErrorResponse, Message, Notification, Request, RequestId, Response
from mcplab.wire.versions import ServerEra, allows_batches

log = logging.getLogger("mcplab.server.stdio")

EOF_GRACE = 0.5  # seconds running requests get to finish after stdin closes


class StdioSession(RunnerPeer):
    """One client on a pair of byte streams; the toolkit's ``Peer``. ``tasks`` maps each running
    request's id to its cancel scope in ``group``."""

    def __init__(self, server: Server, write: Callable[[bytes], int], era: ServerEra,
                 group: anyio.abc.TaskGroup) -> None:
        super().__init__(server)
        self.write, self.group, self.closing = write, group, False  # write(data) → bytes written, as os.write
        self.holds: dict[RequestId, anyio.Event] = {}
        self._idle: anyio.Event | None = None  # set when the last running request ends (close waits on it)
        self.exited: SystemExit | None = None
        self.connection = server.connect(self, era)

    def post(self, message: Message, *, related_to: RequestId | None = None) -> None:
        self._write(message)

    def deliver(self, request: Request, related_to: RequestId | None) -> None:
        if self.closing:
            raise TransportError(f"cannot send {request.method}: the client closed stdin")
        self._write(request)

    async def hold(self, request_id: RequestId) -> None:
        """Keep a request open until this session ends it; the client's cancel cancels the wait."""
        try:
            await self.holds.setdefault(request_id, anyio.Event()).wait()
        finally:
            self.holds.pop(request_id, None)

    async def receive(self, item: Message | JSONRPCError | list) -> None:
        """Act on one framed message, a batch, or the error framing or decoding it."""
        null_id = jsonrpc.keeps_null_id(self.connection.version)  # -32700: no "id" from 2025-11-25 on
        if isinstance(item, list):  # batches exist in 2025-03-26 only: known once earlier lines are handled
            if not allows_batches(self.connection.version or "2024-11-05"):
                return self._write(jsonrpc.error_response(InvalidRequest(jsonrpc.NO_BATCHES), null_id=null_id))
            if not (item := self.take_responses(item)):  # it held responses only
                return
            key: Any = ("batch", id(item))  # answered as one line, so one task (not cancellable)
        elif isinstance(item, JSONRPCError):
            return self._write(jsonrpc.error_response(item, null_id=null_id))
        elif isinstance(item, (Response, ErrorResponse)):
            return self.settle(item)  # wakes the tool that asked the client
        elif isinstance(item, Notification) or item.method == "initialize":
            if (reply := await self.server.handle(item, self.connection)) is not None:
                self._write(reply)
            return
        elif item.id in self.tasks:
            return self._write(self.id_in_use(item.id))
        else:
            key = item.id
        scope = self.tasks[key] = anyio.CancelScope()  # now: a cancel or a reused id on the next line finds it
        if self.connection.era is None:  # undecided: start() returns once the task took its first step
            await self.group.start(self._answer, key, item, scope)
        else:
            self.group.start_soon(self._answer, key, item, scope)

    async def _answer(self, key: Any, item: Request | list, scope: anyio.CancelScope, *,
                      task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        reply: Any = None
        with scope:
            try:
                task_status.started()
                if not scope.cancel_called:  # cancelled before it began: the handler never runs
                    reply = await (self.answer_batch(item) if isinstance(item, list)
                                   else self.server.handle(item, self.connection))
            except SystemExit as exc:  # sys.exit() in a tool ends the server: serve_lines raises it again
                self.exited = exc
                self.group.cancel_scope.cancel()
            finally:
                self.tasks.pop(key, None)
                if not self.tasks and self._idle is not None:
                    self._idle.set()
        if reply and not scope.cancel_called:  # cancelled by the client (no response) or the session's end
            self._write(reply)

    def _write(self, message: Message | list[Message]) -> None:
        if self.connection.lifecycle.state is ERROR:
            return  # stdout is gone: nobody reads our replies any more
        data = (jsonrpc.encode(message) + "\n").encode("utf-8")
        try:
            while data:  # a full pipe takes a long reply in parts
                data = data[self.write(data):]
        except OSError as exc:  # BrokenPipeError: the client closed our stdout
            log.warning("stdout closed (%s); dropping further replies", exc)
            self.connection.lifecycle.fail(exc)  # in ERROR for good

    async def close(self, why: str = "the client closed stdin") -> None:
        """End the subscriptions gracefully, let running requests finish briefly, cancel the rest."""
        self.closing = True
        ending = [request_id for request_id, held in self.holds.items() if not held.is_set()]
        for request_id in ending:
            self.holds[request_id].set()  # each subscription answers before we go
        self.outgoing.fail_all(TransportError("the client closed stdin before answering"))
        if self.tasks:
            self._idle = anyio.Event()
            with anyio.move_on_after(EOF_GRACE):
                await self._idle.wait()
            for scope in list(self.tasks.values()):
                scope.cancel()
            while self.tasks:  # a cancelled request's cleanup may still await (shielded) work
                self._idle = anyio.Event()
                await self._idle.wait()
        for request_id in ending:
            self._write(Notification("notifications/cancelled",
                                     {"requestId": request_id, "reason": f"the server is stopping: {why}"}))
        self.connection.lifecycle.close()  # CLOSED (a failed stdout stays in ERROR)


async def serve_lines(server: Server, read: Callable[[], Awaitable[bytes]], write: Callable[[bytes], int], *,
                      era: ServerEra = "dual", stop_on: Callable[[], Awaitable[None]] | None = None) -> None:
    """Serve one client whose lines come from ``read()`` (``b""``: their end) and go to ``write(data)``;
    once ``stop_on()`` returns (serve_stdio's SIGTERM), the session ends as at the end of its input."""
    framer = jsonrpc.LineFramer(allow_batch=True)

    async def watch() -> None:
        await stop_on()
        reading.cancel()
    async with anyio.create_task_group() as group:
        session = StdioSession(server, write, era, group)
        # A stop cancels the reading, never a message half handled: what is handled in line here
        # (initialize, a notification) never waits, and each request's task is outside this scope.
        with anyio.CancelScope() as reading:
            if stop_on is not None:
                group.start_soon(watch)
            while data := await read():
                for message in framer.feed(data):
                    await session.receive(message)
        if framer.pending and not reading.cancel_called:
            log.warning("stdin ended inside a message (%d bytes without a newline); ignored", framer.pending)
        await session.close("it received SIGTERM" if reading.cancel_called else "the client closed stdin")
        group.cancel_scope.cancel()  # the watch
    if session.exited is not None:
        raise session.exited


async def serve_stdio(server: Server, *, stdin: int = 0, stdout: int = 1, era: ServerEra = "dual") -> None:
    """Serve one client on ``stdin``/``stdout`` until stdin ends or SIGTERM comes, on any anyio backend;
    ``era``: ``"legacy"`` (initialize only), ``"modern"`` (2026-07-28 only) or ``"dual"``."""
    # SIGTERM, the lifecycle's second step, ends the session as end of file does (subscriptions close).
    await serve_lines(server, Reader(stdin, name="stdin").read, partial(os.write, stdout), era=era,
                      stop_on=portable.sigterm)
