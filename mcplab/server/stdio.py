"""The stdio runner: serve one client over stdin/stdout, one JSON-RPC message per line.

Theory of operation
-------------------
MCP's stdio transport: the client starts the server as a child process, writes messages to its
stdin and reads messages from its stdout, one message per line; the server logs on stderr and MUST NOT
write anything to stdout that is not an MCP message. This module only moves bytes; every decision is
``Server.handle``'s.

    stdin ──(event loop, or a thread)──▶ LineFramer.feed ──▶ Server.handle ──▶ reply ──▶ stdout
                                                      │ a response ──▶ wakes the tool that asked the client
                                                      └ a framing/decoding error ──▶ its error reply
                                                        (-32700 for a line that is not JSON: no "id" from
                                                        2025-11-25 on, "id": null before; wire/jsonrpc.py)

* Order: notifications and ``initialize`` are handled inline, in arrival order: they change the
  connection's state, and everything after them must see that change. Every other request runs as
  its own task, so a slow tool does not hold up ``ping``; ``notifications/cancelled`` cancels the
  task, and no response is sent for it. While a dual-era connection (``--era dual``, the default)
  has not decided its era, each new task takes its first step before the next line is read: the
  first request that is served decides (modern.py), and a later ``initialize`` must not overtake it.
* A modern ``subscriptions/listen`` stays open in :meth:`StdioSession.hold` until the client cancels
  it (no response) or the server ends it, when stdin ends or on SIGTERM: its closing result goes out
  (spec "subscriptions", graceful closure), then ``notifications/cancelled`` naming it, which on stdio
  is how a server tears a subscription down (2026-07-28 "cancellation").
* Server→client requests (sampling, elicitation, roots) get ids 1, 2, 3 … and wait for the matching
  response line (``PendingRequests``).
* Batches (a JSON array on one line) are decoded only in a session that negotiated 2025-03-26, the one
  revision that has them; elsewhere an array is refused with -32600.
* End: when stdin reaches EOF the client is gone (or killed: a SIGKILLed notebook kernel closes its end
  of the pipe too). Requests still running get :data:`EOF_GRACE` seconds to answer, so that
  ``printf ... | python servers/weather.py`` prints its replies; then the rest are cancelled and the
  process exits.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any

from mcplab.wire import jsonrpc
from mcplab import portable
from mcplab.wire.errors import InvalidRequest, JSONRPCError, RemoteProtocolError, TransportError
from mcplab.wire.jsonrpc import ErrorResponse, Message, Notification, Request, RequestId, Response
from mcplab.server.peer import RunnerPeer
from mcplab.server.toolkit import Server
from mcplab.wire.versions import ServerEra, allows_batches

log = logging.getLogger("mcplab.server.stdio")

EOF_GRACE = 0.5  # seconds running requests get to finish after stdin closes
CHUNK = 1 << 16
CANCELLED = "notifications/cancelled"
# jsonrpc.decode's words for an array where batches are not allowed: the same refusal, decided per line
NO_BATCHES = "expected one JSON object, got an array: JSON-RPC batches were allowed only in MCP 2025-03-26"


class StdioSession(RunnerPeer):
    """One client on a pair of file descriptors; implements the toolkit's ``Peer``."""

    def __init__(self, server: Server, out_fd: int, era: ServerEra = "dual") -> None:
        super().__init__(server)
        self.out_fd = out_fd
        self.holds: dict[RequestId, asyncio.Future] = {}
        self.closing = False
        self.broken = False  # stdout is gone: nobody reads our replies any more
        self.connection = server.connect(self, era)

    # --- Peer: the way back to the client -----------------------------------------------------------

    def post(self, message: Message, *, related_to: RequestId | None = None) -> None:
        self._write(message)

    def deliver(self, request: Request, related_to: RequestId | None) -> None:
        if self.closing:
            raise TransportError(f"cannot send {request.method}: the client closed stdin")
        self._write(request)

    async def hold(self, request_id: RequestId) -> None:
        """Keep a request open: return when this session ends it, raise CancelledError if the client does."""
        self.holds[request_id] = asyncio.get_running_loop().create_future()
        try:
            await self.holds[request_id]
        finally:
            self.holds.pop(request_id, None)

    # --- incoming ------------------------------------------------------------------------------------

    async def receive(self, item: Message | JSONRPCError | list) -> None:
        """Act on one framed message, batch, or the error framing or decoding it."""
        if isinstance(item, list):
            if allows_batches(self.connection.version or "2024-11-05"):
                self._receive_batch(item)
            else:  # decided here, not by the framer: the revision is known only once earlier lines are handled
                self._write(jsonrpc.error_response(InvalidRequest(NO_BATCHES),
                                                   null_id=jsonrpc.keeps_null_id(self.connection.version)))
        elif isinstance(item, JSONRPCError):
            self._write(jsonrpc.error_response(item, null_id=jsonrpc.keeps_null_id(self.connection.version)))
        elif isinstance(item, (Response, ErrorResponse)):
            self._resolve(item)
        elif isinstance(item, Notification) or item.method == "initialize":
            reply = await self.server.handle(item, self.connection)
            if reply is not None:
                self._write(reply)
        elif item.id in self.tasks:
            self._write(ErrorResponse(item.id, jsonrpc.INVALID_REQUEST,
                                      f"expected a fresh request id: {item.id!r} belongs to a request still running"))
        else:
            self.tasks[item.id] = asyncio.get_running_loop().create_task(self._answer(item))
            if self.connection.era is None:
                # Undecided dual era: let the task take its first step, which decides the era if this
                # request is the one that does (modern.answer decides before it awaits anything), so
                # that the next line is judged by a decided connection.
                await asyncio.sleep(0)

    def _resolve(self, response: Response | ErrorResponse) -> None:
        """Wake the tool waiting for this response to one of our requests."""
        try:
            waiter = self.pending.resolve(response)
        except RemoteProtocolError as exc:
            log.warning("%s", exc)
            return
        if not waiter.done():
            waiter.set_result(response)

    def _receive_batch(self, batch: list) -> None:
        for response in [m for m in batch if isinstance(m, (Response, ErrorResponse))]:
            self._resolve(response)
        rest = [m for m in batch if not isinstance(m, (Response, ErrorResponse))]
        if rest:  # a batch is answered as one line, so it runs as one task (its members are not cancellable)
            key = ("batch", id(batch))
            self.tasks[key] = asyncio.get_running_loop().create_task(self._answer_batch(key, rest))

    async def _answer_batch(self, key: Any, batch: list) -> None:
        try:
            replies = await self.server.handle_batch(batch, self.connection)
        except asyncio.CancelledError:
            return
        finally:
            self.tasks.pop(key, None)
        if replies:
            self._write(replies)

    async def _answer(self, request: Request) -> None:
        try:
            reply = await self.server.handle(request, self.connection)
        except asyncio.CancelledError:
            return  # the client cancelled it (it expects no response), or we are shutting down
        finally:
            self.tasks.pop(request.id, None)
        if reply is not None:
            self._write(reply)

    # --- outgoing ------------------------------------------------------------------------------------

    def _write(self, message: Message | list[Message]) -> None:
        if self.broken:
            return
        data = memoryview((jsonrpc.encode(message) + "\n").encode("utf-8"))
        try:
            while data:
                data = data[os.write(self.out_fd, data):]
        except OSError as exc:  # BrokenPipeError: the client closed our stdout
            log.warning("stdout closed (%s); dropping further replies", exc)
            self.broken = True

    async def close(self, why: str = "the client closed stdin") -> None:
        """The session ends (stdin ended, or the server is stopping): end the subscriptions gracefully,
        let running requests finish briefly, then cancel the rest."""
        self.closing = True
        ending = [request_id for request_id, held in self.holds.items() if not held.done()]
        for request_id in ending:
            self.holds[request_id].set_result(None)  # a graceful end: each subscription answers before we go
        for request_id in list(self.pending):
            waiter = self.pending.discard(request_id)
            if waiter is not None and not waiter.done():
                waiter.set_exception(TransportError("the client closed stdin before answering"))
        running = list(self.tasks.values())
        if running:
            _, late = await asyncio.wait(running, timeout=EOF_GRACE)
            for task in late:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
        for request_id in ending:  # 2026-07-28 "cancellation": the one notifications/cancelled a server sends
            self._write(Notification(CANCELLED, {"requestId": request_id,
                                                 "reason": f"the server is stopping: {why}"}))


def _watch_stdin(fd: int, loop: asyncio.AbstractEventLoop, chunks: asyncio.Queue) -> None:
    """Put every chunk read from ``fd`` on ``chunks``; an empty chunk means end of file."""
    # The event loop watches stdin for readability and reads it in its own callback: no thread hop
    # per line. The descriptor is left blocking on purpose: O_NONBLOCK is a flag on the open file,
    # shared with the shell when a student runs the server in a terminal. After a readiness event a
    # read returns what is there without blocking.
    def readable() -> None:
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        chunks.put_nowait(data)
        if not data:
            loop.remove_reader(fd)

    if portable.WATCHES_PIPES:
        try:
            loop.add_reader(fd, readable)
            return
        except (OSError, ValueError, NotImplementedError):
            pass  # epoll refuses regular files (`python servers/weather.py < requests.jsonl`)
    # Windows' loops cannot watch a pipe (the proactor loop refuses, select() takes only sockets):
    # a thread does plain blocking reads, which work on any stdin, and hands each chunk to the loop.
    log.debug("reading stdin in a thread")
    threading.Thread(target=_read_in_thread, args=(fd, loop, chunks), name="mcplab-stdin",
                     daemon=True).start()


def _read_in_thread(fd: int, loop: asyncio.AbstractEventLoop, chunks: asyncio.Queue) -> None:
    while True:
        try:
            data = os.read(fd, CHUNK)
        except OSError:
            data = b""
        try:
            loop.call_soon_threadsafe(chunks.put_nowait, data)
        except RuntimeError:  # the event loop is gone: the server already stopped
            return
        if not data:
            return


async def serve_stdio(server: Server, *, stdin: int = 0, stdout: int = 1, era: ServerEra = "dual") -> None:
    """Serve one client on file descriptors ``stdin``/``stdout`` until stdin reaches EOF.

    ``era``: ``"legacy"`` (initialize only), ``"modern"`` (2026-07-28 only) or ``"dual"`` (the first
    served request decides).
    """
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    _watch_stdin(stdin, loop, chunks)
    stopping: list[str] = []
    _on_sigterm(loop, lambda: (stopping.append("SIGTERM"), chunks.put_nowait(b"")))
    session = StdioSession(server, stdout, era)
    framer = jsonrpc.LineFramer(allow_batch=True)
    while data := await chunks.get():
        for message in framer.feed(data):
            await session.receive(message)
    if framer.pending and not stopping:
        log.warning("stdin ended inside a message (%d bytes without a newline); ignored", framer.pending)
    await session.close("it received SIGTERM" if stopping else "the client closed stdin")


def _on_sigterm(loop: asyncio.AbstractEventLoop, stop: Any) -> None:
    # SIGTERM is the lifecycle's second step ("basic/lifecycle": close stdin, then SIGTERM): end the
    # way EOF does, so open subscriptions still get their closing result. Only the main thread of a
    # loop that can watch signals may install it; elsewhere SIGTERM keeps its default.
    import signal

    try:
        loop.add_signal_handler(signal.SIGTERM, stop)
    except (ValueError, RuntimeError, NotImplementedError):
        pass
