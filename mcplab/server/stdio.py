"""The stdio runner: serve one client over stdin/stdout, one JSON-RPC message per line.

Theory of operation
-------------------
MCP's stdio transport: the client starts the server as a child process, writes messages to its
stdin and reads messages from its stdout, one per line; the server logs on stderr and MUST NOT write
anything to stdout that is not an MCP message. The runner reads, hands each message to
``Server.handle``, and writes the reply; every decision is the toolkit's.

    stdin ──▶ LineFramer.feed ──▶ StdioSession.receive ──▶ Server.handle ──▶ reply ──▶ stdout
                                       │ a response: wakes the tool that asked the client
                                       └ a line that did not decode: its error reply (-32700:
                                         no "id" from 2025-11-25 on, "id": null before)

* Order: notifications and ``initialize`` are handled in line, in arrival order: they change the
  connection's state, and what comes after them must see the change. Every other request runs as a
  task of the session's task group, so a slow tool does not hold up ``ping``;
  ``notifications/cancelled`` cancels that task's scope, and no response is sent for it. While a
  dual-era connection (``--era dual``, the default) has not decided its era, the next line waits
  until the new task has taken its first step: the first request served decides (modern.py).
* A modern ``subscriptions/listen`` stays open in :meth:`StdioSession.hold` until the client cancels
  it or the session ends; then its closing result goes out (spec "subscriptions", graceful closure),
  then the ``notifications/cancelled`` naming it that a stdio server sends (2026-07-28 "cancellation").
* Server→client requests (sampling, elicitation, roots) get ids 1, 2, 3 … and wait for the matching
  response (``RunnerPeer``, and the endpoint both sides share: mcplab/endpoint.py).
* Batches (a JSON array on one line) are answered only in a session that negotiated 2025-03-26.
* End: at the end of stdin the client is gone (a killed notebook kernel closes its end too). Running
  requests get :data:`EOF_GRACE` seconds to answer, so that ``printf ... | python servers/weather.py``
  prints its replies; then the rest are cancelled. SIGTERM ends the session the same way. Every task
  lives in the one task group of :func:`serve_stdio`, on asyncio (the default) or trio (runner.py).
"""

from __future__ import annotations

import logging
import os
import signal
from typing import Any

import anyio
import anyio.abc

from mcplab.lifecycle import ERROR
from mcplab.server.peer import RunnerPeer
from mcplab.server.toolkit import Server
from mcplab.transports.pipes import Reader
from mcplab.wire import jsonrpc
from mcplab.wire.errors import InvalidRequest, JSONRPCError, TransportError
from mcplab.wire.jsonrpc import ErrorResponse, Message, Notification, Request, RequestId, Response
from mcplab.wire.versions import ServerEra, allows_batches

log = logging.getLogger("mcplab.server.stdio")

EOF_GRACE = 0.5  # seconds running requests get to finish after stdin closes
CANCELLED = "notifications/cancelled"
NO_BATCHES = "expected one JSON object, got an array: JSON-RPC batches were allowed only in MCP 2025-03-26"


class StdioSession(RunnerPeer):
    """One client on a pair of file descriptors; implements the toolkit's ``Peer``.

    Requests run in ``group``, the task group of :func:`serve_stdio`; ``tasks`` maps each running
    request's id to its cancel scope."""

    def __init__(self, server: Server, out_fd: int, era: ServerEra, group: anyio.abc.TaskGroup) -> None:
        super().__init__(server)
        self.out_fd = out_fd
        self.group = group
        self.holds: dict[RequestId, anyio.Event] = {}
        self.closing = False
        self._idle: anyio.Event | None = None  # set when the last running request ends (close waits on it)
        self.connection = server.connect(self, era)

    # --- Peer: the way back to the client -----------------------------------------------------------
    def post(self, message: Message, *, related_to: RequestId | None = None) -> None:
        self._write(message)

    def deliver(self, request: Request, related_to: RequestId | None) -> None:
        if self.closing:
            raise TransportError(f"cannot send {request.method}: the client closed stdin")
        self._write(request)

    async def hold(self, request_id: RequestId) -> None:
        """Keep a request open: return when this session ends it; the client's cancel cancels the wait."""
        self.holds[request_id] = ended = anyio.Event()
        try:
            await ended.wait()
        finally:
            self.holds.pop(request_id, None)

    # --- incoming ------------------------------------------------------------------------------------
    async def receive(self, item: Message | JSONRPCError | list) -> None:
        """Act on one framed message, batch, or the error framing or decoding it."""
        null_id = jsonrpc.keeps_null_id(self.connection.version)
        if isinstance(item, list):
            if not allows_batches(self.connection.version or "2024-11-05"):  # known only once earlier lines are handled
                self._write(jsonrpc.error_response(InvalidRequest(NO_BATCHES), null_id=null_id))
            elif rest := self.take_responses(item):  # answered as one line, so one task (not cancellable)
                await self._start(("batch", id(rest)), rest)
        elif isinstance(item, JSONRPCError):
            self._write(jsonrpc.error_response(item, null_id=null_id))
        elif isinstance(item, (Response, ErrorResponse)):
            self.settle(item)
        elif isinstance(item, Notification) or item.method == "initialize":
            reply = await self.server.handle(item, self.connection)
            if reply is not None:
                self._write(reply)
        elif item.id in self.tasks:
            self._write(self.id_in_use(item.id))
        else:
            await self._start(item.id, item)

    async def _start(self, key: Any, item: Request | list) -> None:
        # The scope is registered now, not when the task first runs: a cancellation or a reused id
        # on the very next line must find it.
        scope = self.tasks[key] = anyio.CancelScope()
        if self.connection.era is None:  # undecided: start() returns once the task took its first step
            await self.group.start(self._answer, key, item, scope)
        else:
            self.group.start_soon(self._answer, key, item, scope)

    async def _answer(self, key: Any, item: Request | list, scope: anyio.CancelScope, *,
                      task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run one request (or a batch) in its cancel scope; no response once it is cancelled."""
        reply: Any = None
        with scope:
            try:
                task_status.started()
                if not scope.cancel_called:  # else it was cancelled before it began: the handler never runs
                    if isinstance(item, list):
                        reply = await self.answer_batch(item)
                    else:
                        reply = await self.server.handle(item, self.connection)
            finally:
                self.tasks.pop(key, None)
                if not self.tasks and self._idle is not None:
                    self._idle.set()
        if not scope.cancel_called and reply:  # the client cancelled it (no response), or the session is ending
            self._write(reply)

    # --- outgoing ------------------------------------------------------------------------------------
    def _write(self, message: Message | list[Message]) -> None:
        if self.connection.lifecycle.state is ERROR:
            return  # stdout is gone: nobody reads our replies any more
        data = (jsonrpc.encode(message) + "\n").encode("utf-8")
        try:
            written = 0
            while written < len(data):  # a full pipe takes a long reply in parts
                written += os.write(self.out_fd, data[written:])
        except OSError as exc:  # BrokenPipeError: the client closed our stdout
            log.warning("stdout closed (%s); dropping further replies", exc)
            self.connection.lifecycle.fail(exc)  # a failed send: this connection's lifecycle is in ERROR for good

    async def close(self, why: str = "the client closed stdin") -> None:
        """The session ends: end the subscriptions gracefully, let running requests finish briefly,
        then cancel the rest and wait for them."""
        self.closing = True
        ending = [request_id for request_id, held in self.holds.items() if not held.is_set()]
        for request_id in ending:
            self.holds[request_id].set()  # a graceful end: each subscription answers before we go
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
            self._write(Notification(CANCELLED, {"requestId": request_id, "reason": f"the server is stopping: {why}"}))
        self.connection.lifecycle.close()  # the session is over: CLOSED (a failed stdout stays in ERROR)


async def serve_stdio(server: Server, *, stdin: int = 0, stdout: int = 1, era: ServerEra = "dual") -> None:
    """Serve one client on file descriptors ``stdin``/``stdout`` until stdin reaches EOF (or SIGTERM).

    ``era``: ``"legacy"`` (initialize only), ``"modern"`` (2026-07-28 only) or ``"dual"`` (the first
    served request decides). Runs on any anyio backend.
    """
    stopping: list[str] = []
    framer = jsonrpc.LineFramer(allow_batch=True)
    reader = Reader(stdin, name="stdin")  # left blocking: O_NONBLOCK would be shared with a terminal's shell
    async with anyio.create_task_group() as group:
        session = StdioSession(server, stdout, era, group)
        with anyio.CancelScope() as reading:
            group.start_soon(_on_sigterm, lambda: (stopping.append("SIGTERM"), reading.cancel()))
            while data := await reader.read():
                with anyio.CancelScope(shield=True):  # SIGTERM ends the reading, never a message half handled
                    for message in framer.feed(data):
                        await session.receive(message)
        if framer.pending and not stopping:
            log.warning("stdin ended inside a message (%d bytes without a newline); ignored", framer.pending)
        await session.close("it received SIGTERM" if stopping else "the client closed stdin")
        group.cancel_scope.cancel()  # the signal watcher


async def _on_sigterm(stop: Any) -> None:
    # SIGTERM is the lifecycle's second step ("basic/lifecycle": close stdin, then SIGTERM): end the
    # way EOF does, so open subscriptions still get their closing result. Only the main thread may
    # watch signals (and not every platform can); elsewhere SIGTERM keeps its default.
    try:
        with anyio.open_signal_receiver(signal.SIGTERM) as signals:
            async for _ in signals:
                stop()
                return
    except (ValueError, RuntimeError, NotImplementedError):
        pass
