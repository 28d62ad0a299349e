"""The stdio runner: serve one client over stdin/stdout, one JSON-RPC message per line.

Theory of operation
-------------------
MCP's stdio transport: the client starts the server as a child process, writes messages to its
stdin and reads messages from its stdout, one message per line; the server logs on stderr and MUST NOT
write anything to stdout that is not an MCP message. This module only moves bytes; every decision is
``Server.handle``'s.

    stdin ──(anyio.wait_readable, or a thread)──▶ LineFramer.feed ──▶ Server.handle ──▶ reply ──▶ stdout
                                                      │ a response ──▶ wakes the tool that asked the client
                                                      └ a framing/decoding error ──▶ its error reply
                                                        (-32700 for a line that is not JSON: no "id" from
                                                        2025-11-25 on, "id": null before; wire/jsonrpc.py)

* Order: notifications and ``initialize`` are handled inline, in arrival order: they change the
  connection's state, and everything after them must see that change. Every other request runs as
  its own task in the session's task group, so a slow tool does not hold up ``ping``;
  ``notifications/cancelled`` cancels that task's scope, and no response is sent for it.
* A request that finishes without ever waiting (``Server.answers_at_once``: ``ping``, a list, a
  plain ``def`` tool) needs no task: it is answered in line once the rest of its chunk has been
  read, which is when a task of its own would have begun, so a cancellation in the same chunk
  still stops it. A task, its cancel scope and a loop turn cost more than such an answer. Once a
  request of the chunk has a task, the requests after it get tasks too: requests begin in the
  order they came. On asyncio, a chunk made only of such requests that arrives while the serving
  task waits for input is answered right in the loop's reader callback
  (:meth:`StdioSession.answer_now`): waking the task would cost a loop turn, as much as the answer.
  Each runs in a context of its own, as in a task.
* While a dual-era connection (``--era dual``, the default)
  has not decided its era, each new task takes its first step before the next line is read: the
  first request that is served decides (modern.py), and a later ``initialize`` must not overtake it.
* A modern ``subscriptions/listen`` stays open in :meth:`StdioSession.hold` until the client cancels
  it (no response) or the server ends it, when stdin ends or on SIGTERM: its closing result goes out
  (spec "subscriptions", graceful closure), then ``notifications/cancelled`` naming it, which on stdio
  is how a server tears a subscription down (2026-07-28 "cancellation").
* Server→client requests (sampling, elicitation, roots) get ids 1, 2, 3 … and wait for the matching
  response line (``RunnerPeer.settle``, the endpoint both sides share: mcplab/endpoint.py).
* Batches (a JSON array on one line) are decoded only in a session that negotiated 2025-03-26, the one
  revision that has them; elsewhere an array is refused with -32600.
* End: when stdin reaches EOF the client is gone (or killed: a SIGKILLed notebook kernel closes its end
  of the pipe too). Requests still running get :data:`EOF_GRACE` seconds to answer, so that
  ``printf ... | python servers/weather.py`` prints its replies; then the rest are cancelled and the
  process exits. SIGTERM ends the session the same way.
* Concurrency is anyio's: every task lives in the one task group :func:`serve_stdio` opens, so the
  runner serves on asyncio (the default) and on trio alike (``MCPLAB_ASYNC_BACKEND=trio``, runner.py).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import signal
import stat
from collections import deque
from typing import Any, Callable, Coroutine

import anyio
import anyio.abc

from mcplab.wire import jsonrpc
from mcplab import portable
from mcplab.lifecycle import ERROR
from mcplab.wire.errors import InternalError, InvalidRequest, JSONRPCError, TransportError
from mcplab.wire.jsonrpc import ErrorResponse, Message, Notification, Request, RequestId, Response
from mcplab.server.peer import RunnerPeer
from mcplab.server.toolkit import Server
from mcplab.wire.versions import ServerEra, allows_batches

log = logging.getLogger("mcplab.server.stdio")

EOF_GRACE = 0.5  # seconds running requests get to finish after stdin closes
IDLE_WORKERS = 16  # tasks kept waiting for the next request; a burst beyond that ends its extra tasks
CHUNK = 1 << 16
MAX_CHUNKS = 16  # chunks read ahead on asyncio before we stop watching stdin until the session catches up
CANCELLED = "notifications/cancelled"
# jsonrpc.decode's words for an array where batches are not allowed: the same refusal, decided per line
NO_BATCHES = "expected one JSON object, got an array: JSON-RPC batches were allowed only in MCP 2025-03-26"


class _Worker:
    """A task of the session's group that runs one request after another (``StdioSession._run_soon``)."""
    __slots__ = ("job", "wake")

    def __init__(self) -> None:
        self.job: tuple = ()
        self.wake = anyio.Event()


class _Queued:
    """A request to answer in line at the end of its chunk; ``notifications/cancelled`` before then drops it."""
    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class StdioSession(RunnerPeer):
    """One client on a pair of file descriptors; implements the toolkit's ``Peer``.

    Requests run in ``group``, the task group of :func:`serve_stdio`; ``tasks`` maps each running
    request's id to its cancel scope (a request answered in line: to its :class:`_Queued`)."""

    def __init__(self, server: Server, out_fd: int, era: ServerEra, group: anyio.abc.TaskGroup) -> None:
        super().__init__(server)
        self.out_fd = out_fd
        self.group = group
        self.holds: dict[RequestId, anyio.Event] = {}
        self.closing = False
        self._idle: anyio.Event | None = None  # set when the last running request ends (close waits on it)
        self._idle_workers: list[_Worker] = []
        self._queued: list[tuple[Request, _Queued]] = []  # this chunk's requests to answer in line
        self._tasked = False  # a request of this chunk got a task: the rest of the chunk does too
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
        if isinstance(item, list):
            if allows_batches(self.connection.version or "2024-11-05"):
                self._receive_batch(item)
            else:  # decided here, not by the framer: the revision is known only once earlier lines are handled
                self._write(jsonrpc.error_response(InvalidRequest(NO_BATCHES),
                                                   null_id=jsonrpc.keeps_null_id(self.connection.version)))
        elif isinstance(item, JSONRPCError):
            self._write(jsonrpc.error_response(item, null_id=jsonrpc.keeps_null_id(self.connection.version)))
        elif isinstance(item, (Response, ErrorResponse)):
            self.settle(item)
        elif isinstance(item, Notification) or item.method == "initialize":
            reply = await self.server.handle(item, self.connection)
            if reply is not None:
                self._write(reply)
        elif item.id in self.tasks:
            self._write(self.id_in_use(item.id))
        elif not self._tasked and self._at_once(item):
            # Registered like a task (a cancellation or a reused id later in the chunk finds it), but
            # answered by answer_queued(): a task would cost more than the whole answer. Not after a
            # request of this chunk that got a task: that one must begin first (a subscriptions/listen
            # must be listening before a tool that announces a change runs).
            self.tasks[item.id] = queued = _Queued()
            self._queued.append((item, queued))
        else:
            # The scope is registered now, not when the task first runs: a cancellation or a reused id
            # on the very next line must find it.
            scope = self.tasks[item.id] = anyio.CancelScope()
            self._tasked = True
            if self.connection.era is None:
                # Undecided dual era: start() returns once the task has taken its first step, which decides
                # the era if this request is the one that does (modern.answer decides before it awaits
                # anything), so that the next line is judged by a decided connection.
                await self.group.start(self._answer, item.id, item, scope)
            else:
                self._run_soon(item.id, item, scope)

    def answer_queued(self) -> None:
        """Answer the requests of the chunk just read that finish without waiting, in arrival order.

        Why here and not in a task: such a request never awaits (``Server.answers_at_once``), so no
        other request, and no cancellation, could run while it does; and a task of its own would not
        have begun before this chunk was read either. The order and the cancellations it sees are
        the same, without a task, a cancel scope and a loop turn per request."""
        queued, self._queued, self._tasked = self._queued, [], False
        for request, ticket in queued:
            self.tasks.pop(request.id, None)
            if not ticket.cancelled:  # the client cancelled it later in the chunk: no response
                self._answer_at_once(request)

    def answer_now(self, messages: list) -> bool:
        """Answer a chunk where it was read, in the event loop's reader callback, if every message in it
        is a request answered at once; False leaves the chunk to the serving task.

        Why: the serving task's wake-up is a loop turn of its own, and it costs about as much as such
        an answer. Only while that task waits for input (``_Stdin``), so nothing read earlier is still
        being handled. A chunk with anything else in it (a notification, which may be a cancellation;
        a request that may wait; an id already in use, or twice in the chunk) goes the usual way."""
        if (self.closing or not all(self._at_once(item) for item in messages)
                or len({request.id for request in messages}) < len(messages)):
            return False
        for request in messages:
            self._answer_at_once(request)
        return True

    def _at_once(self, item: Any) -> bool:
        """A request to answer in line, with no task: one that never waits, whose id is free, on a
        connection whose era is decided (an undecided one lets its first request decide, in a task)."""
        return (isinstance(item, Request) and item.method != "initialize" and item.id not in self.tasks
                and self.connection.era is not None and self.server.answers_at_once(item))

    def _answer_at_once(self, request: Request) -> None:
        try:
            reply = run_at_once(self.server.handle(request, self.connection))
        except Waited as exc:  # answers_at_once was wrong about it: our bug, answered as one
            log.error("%s: %s", request.method, exc)
            reply = jsonrpc.error_response(InternalError(f"{request.method} failed: {exc}"), request_id=request.id)
        self._write(reply)

    def _receive_batch(self, batch: list) -> None:
        rest = self.take_responses(batch)
        if rest:  # a batch is answered as one line, so it runs as one task (its members are not cancellable)
            key = ("batch", id(rest))
            self._run_soon(key, rest, self.tasks.setdefault(key, anyio.CancelScope()))

    def _run_soon(self, key: Any, item: Request | list, scope: anyio.CancelScope) -> None:
        """Hand a request to an idle worker of the task group, or to a new one if none is idle.

        Why workers: starting a task per request costs more than the rest of its dispatch; a worker that
        waits for the next request costs one event. At most :data:`IDLE_WORKERS` wait; the rest end."""
        if self._idle_workers:
            worker = self._idle_workers.pop()
            worker.job = (key, item, scope)
            worker.wake.set()
        else:
            self.group.start_soon(self._work, (key, item, scope))

    async def _work(self, job: tuple) -> None:
        worker = _Worker()
        while True:
            await self._answer(*job)
            if len(self._idle_workers) >= IDLE_WORKERS:
                return
            worker.wake = anyio.Event()
            self._idle_workers.append(worker)
            await worker.wake.wait()
            job = worker.job

    async def _answer(self, key: Any, item: Request | list, scope: anyio.CancelScope, *,
                      task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run one request (or a batch) in its cancel scope; no response once it is cancelled."""
        reply: Any = None
        with scope:
            try:
                task_status.started()
                if scope.cancel_called:
                    return  # cancelled before it began: the handler never runs
                if isinstance(item, list):
                    reply = await self.answer_batch(item)
                else:
                    reply = await self.server.handle(item, self.connection)
            finally:
                self.tasks.pop(key, None)
                if not self.tasks and self._idle is not None:
                    self._idle.set()
        # The client cancelled it (it expects no response), or the session is ending.
        if not scope.cancel_called and reply:
            self._write(reply)

    # --- outgoing ------------------------------------------------------------------------------------

    def _write(self, message: Message | list[Message]) -> None:
        if self.connection.lifecycle.state is ERROR:
            return  # stdout is gone: nobody reads our replies any more
        data = (jsonrpc.encode(message) + "\n").encode("utf-8")
        try:
            written = os.write(self.out_fd, data)
            while written < len(data):  # a full pipe takes a long reply in parts
                written += os.write(self.out_fd, data[written:])
        except OSError as exc:  # BrokenPipeError: the client closed our stdout
            log.warning("stdout closed (%s); dropping further replies", exc)
            self.connection.lifecycle.fail(exc)  # a failed send: this connection's lifecycle is in ERROR for good

    async def close(self, why: str = "the client closed stdin") -> None:
        """The session ends (stdin ended, or the server is stopping): end the subscriptions gracefully,
        let running requests finish briefly, then cancel the rest and wait for them."""
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
        for request_id in ending:  # 2026-07-28 "cancellation": the one notifications/cancelled a server sends
            self._write(Notification(CANCELLED, {"requestId": request_id,
                                                 "reason": f"the server is stopping: {why}"}))
        self.connection.lifecycle.close()  # the session is over: CLOSED (a failed stdout stays in ERROR)


class _Stdin:
    """Our stdin, framed: :meth:`read` gives the messages of each chunk; :meth:`stop` makes it end as if
    the client closed it.

    The descriptor is left blocking on purpose: O_NONBLOCK is a flag on the open file, shared with the
    shell when a student runs the server in a terminal. A read after the loop said "readable" returns
    what is there without blocking. The event loop cannot watch a regular file or /dev/null (epoll
    refuses them) nor, on Windows, a pipe: there each read is a blocking one in a worker thread.

    On asyncio the descriptor stays registered with the loop for the whole session, and the loop's
    callback reads each chunk as it comes (at most :data:`MAX_CHUNKS` wait; past that we stop watching
    until the session catches up): ``anyio.wait_readable`` would register and unregister it around
    every single read, which costs more than the rest of a request's path. While the serving task
    waits, the callback first offers the chunk's messages to ``answer_now``, which may answer them
    there (:meth:`StdioSession.answer_now`). Other backends wait with ``anyio.wait_readable``.
    """

    def __init__(self, fd: int, scope: anyio.CancelScope, framer: jsonrpc.LineFramer,
                 answer_now: Callable[[list], bool] | None = None) -> None:
        self.fd = fd
        self.framer = framer
        self.answer_now = answer_now
        self.stopped = False
        self.waiting = False
        self._scope = scope  # around the whole reading loop: stop() cancels it only while we wait
        self._threaded = not portable.WATCHES_PIPES or stat.S_ISREG(os.fstat(fd).st_mode)
        self._chunks: deque[list | None] = deque()  # framed chunks; None: end of file
        self._woken: asyncio.Future | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        if self._threaded:
            log.debug("reading stdin in a thread")
        else:
            self._watch()

    def _watch(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (trio): wait_readable it is
            return
        try:
            loop.add_reader(self.fd, self._on_readable)
        except (OSError, ValueError, NotImplementedError):  # a descriptor this loop cannot watch
            return
        self._loop = loop

    def _on_readable(self) -> None:
        try:
            data = os.read(self.fd, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._chunks.append(None)
        else:
            messages = self.framer.feed(data)
            idle = self.waiting and not self._chunks and not self.stopped  # nothing read before it is unhandled
            if idle and self.answer_now is not None and self.answer_now(messages):
                return  # answered here, in the loop's callback: the serving task sleeps on
            self._chunks.append(messages)
        if not data or len(self._chunks) >= MAX_CHUNKS:  # end of file, or the session is behind
            self._loop.remove_reader(self.fd)
        if self._woken is not None and not self._woken.done():
            self._woken.set_result(None)

    async def read(self) -> list | None:
        """The messages of the next chunk; ``None`` at end of file or once stopped."""
        if self._loop is not None:
            return await self._read_watched()
        data = await self._read_bytes()
        return self.framer.feed(data) if data else None

    async def _read_bytes(self) -> bytes:
        while not self.stopped:
            self.waiting = True
            try:
                if self._threaded:
                    return await anyio.to_thread.run_sync(_read, self.fd, abandon_on_cancel=True)
                await anyio.wait_readable(self.fd)
            except OSError:  # a descriptor the loop cannot watch
                log.debug("reading stdin in a thread")
                self._threaded = True
                continue
            finally:
                self.waiting = False
            try:
                return os.read(self.fd, CHUNK)
            except BlockingIOError:
                continue
            except OSError:
                return b""
        return b""

    async def _read_watched(self) -> list | None:
        while not self._chunks and not self.stopped:
            self._woken = self._loop.create_future()
            self.waiting = True
            try:
                await self._woken
            finally:
                self.waiting = False
                self._woken = None
        if self.stopped:
            return None
        data = self._chunks.popleft()
        if data is not None and len(self._chunks) == MAX_CHUNKS - 1:  # it had stopped watching: caught up, watch again
            self._loop.add_reader(self.fd, self._on_readable)
        return data

    def close(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self.fd)

    def stop(self) -> None:
        # Cancelling while a line is being handled would cut that handling short: then the next
        # read() sees ``stopped`` instead, as the old end-of-file marker did.
        self.stopped = True
        if self.waiting:
            self._scope.cancel()


class Waited(RuntimeError):
    """A coroutine given to :func:`run_at_once` suspended."""


def run_at_once(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never waits (``Server.answers_at_once``) to its end, here and now.

    It runs in a copy of the current context, as a task would: a context variable it sets does not
    outlive it. If it suspends after all, it is closed and :class:`Waited` raised."""
    try:
        contextvars.copy_context().run(coroutine.send, None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise Waited(f"{coroutine.__qualname__} waited, though it was expected to finish at once")


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, CHUNK)
    except OSError:
        return b""


async def serve_stdio(server: Server, *, stdin: int = 0, stdout: int = 1, era: ServerEra = "dual") -> None:
    """Serve one client on file descriptors ``stdin``/``stdout`` until stdin reaches EOF (or SIGTERM).

    ``era``: ``"legacy"`` (initialize only), ``"modern"`` (2026-07-28 only) or ``"dual"`` (the first
    served request decides). Runs on any anyio backend.
    """
    stopping: list[str] = []
    async with anyio.create_task_group() as group:
        with anyio.CancelScope() as reading:
            session = StdioSession(server, stdout, era, group)
            framer = jsonrpc.LineFramer(allow_batch=True)
            reader = _Stdin(stdin, reading, framer, session.answer_now)
            group.start_soon(_on_sigterm, lambda: (stopping.append("SIGTERM"), reader.stop()))
            try:
                while (messages := await reader.read()) is not None:
                    for message in messages:
                        await session.receive(message)
                    session.answer_queued()
            finally:
                reader.close()
        if framer.pending and not stopping:
            log.warning("stdin ended inside a message (%d bytes without a newline); ignored", framer.pending)
        await session.close("it received SIGTERM" if stopping else "the client closed stdin")
        group.cancel_scope.cancel()  # what is left: idle workers, the signal watcher


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
