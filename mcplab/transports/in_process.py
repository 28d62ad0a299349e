"""The stdio transport with the server in this process: what the browser edition has instead of a child.

Theory of operation
-------------------
A page has no processes and no pipes (Pyodide: ``subprocess`` raises, sockets are not supported), so
there the bundled server runs in the notebook's own event loop, and the lines a pipe would carry go
through memory streams. Everything else is :class:`~mcplab.transports.stdio.StdioTransport`'s own
code: the same framing, the same trace (channel ``stdio``, byte for byte the lines a pipe carries),
the same errors, and the same shutdown ladder, where closing stdin is the end of the server's input,
SIGKILL is a cancel of its task, and SIGTERM is either told to a server that handles it (a bundled
one, ``on_sigterm="stop"``: it stops as ``serve_stdio`` does) or a cancel too, as a default action::

    client ──to the server──▶ serve_lines(read, write) ──to the client──▶ client
                                 └──── its log records ──▶ "stderr" lines in the trace

The server is a task of the running asyncio loop, not of a task group: like a child process it
outlives the cell that opened it (a lab opens a client in one cell and uses it in the next) and
ends when the transport closes. In the browser that loop is the page's; on a machine it works too
(asyncio only), which is how the tests compare both transports' traces.

What the server's code writes on ``sys.stdout`` and ``sys.stderr`` goes where a process's would:
while a server runs here, both streams are ``Routed`` (``transports/server_files.py``), which hands
a write made in one of the server's tasks to its pipes and any other to the stream it replaced. A
bundled server's stdout is its stderr (``runner.py`` points fd 1 there: a stray ``print`` is a log
line); the code of ``python -c CODE`` (``code_server``, there too) prints on the wire, and its
``sys.stdin`` reads the pipe, waiting as a process would where the page can (JSPI).

``serve(read, write)`` is the server side, for example ``serve_lines`` of ``server/stdio.py`` bound
to a toolkit server; ``place.in_process`` builds it from a bundled server's file and flags. Unlike a
pipe, a memory stream is never full: a server that writes without end fills the page's memory, not
a buffer that would make it wait.
"""

from __future__ import annotations

import asyncio
import logging
import math
import signal
import sys
import traceback
from typing import Any, Awaitable, Callable, Sequence

import anyio

from mcplab.transports.server_files import SERVING, Routed, code_server
from mcplab.transports.stdio import SHUTDOWN, StdioTransport
from mcplab.wire.errors import TransportError

__all__ = ["InProcessTransport", "Pipe", "Routed", "ServerTask", "code_server"]

Serve = Callable[[Callable[[], Awaitable[bytes]], Callable[[bytes], int]], Awaitable[None]]


class Pipe:
    """One direction of the connection: ``write`` at one end, ``read``/``read_now`` at the other,
    with what ``pipes.Writer``/``pipes.Reader`` offer the stdio transport. Never full, so never waits
    to write; ``unread`` is what was written and not yet read."""

    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[bytes](math.inf)
        self.written = self.unread = 0
        self.drained = anyio.Event()  # set whenever everything written has been read

    async def write(self, data: bytes, stall: float = 0.0) -> None:
        self.put(data)

    def put(self, data: bytes) -> int:
        """Write all of ``data`` (how many bytes: all, as ``os.write`` says it)."""
        try:
            self._send.send_nowait(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise BrokenPipeError("the other end is closed") from None
        self.written, self.unread = self.written + len(data), self.unread + len(data)
        self.drained = anyio.Event()
        return len(data)

    async def read(self) -> bytes:
        try:
            return self._took(await self._receive.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return b""

    def read_now(self) -> bytes | None:
        try:
            return self._took(self._receive.receive_nowait())
        except anyio.WouldBlock:
            return None
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return b""

    def _took(self, data: bytes) -> bytes:
        self.unread -= len(data)
        if not self.unread:
            self.drained.set()
        return data

    def close(self) -> None:
        """The writing end's close: the reader sees the end of the stream once it has read the rest."""
        self._send.close()


class ServerTask:
    """The server's run, standing in for its process: ``returncode`` once it ended (0 when it returned,
    the code of a ``SystemExit``, 1 when it raised, with the traceback on its stderr, as a crashed
    process prints it; minus the signal when :meth:`end` cancelled it). Unlike a process, a task
    cannot be killed: one that shields itself from every cancel runs on."""

    pid = None

    def __init__(self, serve: Serve, stdin: Pipe, stdout: Pipe, stderr: Pipe) -> None:
        self.returncode: int | None = None
        self._ended, self._ending = anyio.Event(), signal.SIGTERM
        self._streams = stdin, stdout, stderr
        self._task = asyncio.get_running_loop().create_task(self._run(serve))
        self._task.add_done_callback(self._done)  # also when it is cancelled before its first step

    async def _run(self, serve: Serve) -> int:
        stdin, stdout, stderr = self._streams
        try:
            await serve(stdin.read, stdout.put)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except BaseException as exc:  # noqa: BLE001  (a SystemExit must not reach the page's loop)
            if (code := exit_code(exc)) is not None:
                if isinstance(message := exit_of(exc).code, str):  # CPython prints it on stderr, exits 1
                    stderr.put(f"{message}\n".encode("utf-8"))
                return code
            stderr.put("".join(traceback.format_exception(exc)).encode("utf-8"))
            return 1
        return 0

    def _done(self, task: asyncio.Task) -> None:
        self.returncode = -self._ending if task.cancelled() else task.result()
        stdout, stderr = self._streams[1:]
        stdout.close()
        stderr.close()
        self._ended.set()

    async def wait(self) -> int:
        await self._ended.wait()
        return self.returncode

    def end(self, hard: bool = False) -> None:
        """SIGTERM's (or with ``hard``, SIGKILL's) stand-in: cancel the server's task."""
        self._ending = signal.SIGKILL if hard else signal.SIGTERM
        self._task.cancel()


def exit_code(exc: BaseException) -> int | None:
    """The code a ``SystemExit`` in ``exc`` (perhaps inside a task group's exception group) exits with."""
    if (leaving := exit_of(exc)) is None:
        return None
    return leaving.code if isinstance(leaving.code, int) else 0 if leaving.code is None else 1


def exit_of(exc: BaseException) -> SystemExit | None:
    """The ``SystemExit`` in ``exc``, itself or inside a task group's exception group."""
    if isinstance(exc, SystemExit):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        if (found := exit_of(inner)) is not None:
            return found
    return None


class LogLines(logging.Handler):
    """The server's log records as the lines its stderr would carry (``runner.py``'s format), taking
    only the records of its own tasks: another server in the same page logs to its own lines."""

    def __init__(self, stderr: Pipe, name: str, level: int) -> None:
        super().__init__(level)
        self.stderr = stderr
        self.setFormatter(logging.Formatter(f"{name}: %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if SERVING.get(None) is self:
            try:
                self.stderr.put((self.format(record) + "\n").encode("utf-8"))
            except BrokenPipeError:  # the server is gone
                pass


class InProcessTransport(StdioTransport):
    """A :class:`~mcplab.transports.stdio.StdioTransport` whose server is ``serve``, run in this
    process; ``argv`` names it (the trace and the errors say which server it is). What the server
    prints goes to its stderr (``prints="stderr"``, as ``runner.py`` does in a process) or, for
    code that speaks on stdout itself, to the client (``prints="wire"``). ``printed``: what it wrote on
    stdout and stderr before it served, there first (``place.in_process`` runs the file before that)."""

    def __init__(self, serve: Serve, argv: Sequence[str], *, name: str = "server", level: int = logging.WARNING,
                 prints: str = "stderr", printed: tuple[bytes, bytes] = (b"", b""), on_sigterm: str = "cancel",
                 **options: Any) -> None:
        super().__init__(argv, **options)
        if on_sigterm not in ("cancel", "stop"):
            raise ValueError(f'on_sigterm must be "cancel" or "stop", got {on_sigterm!r}')
        # "stop": the server handles SIGTERM itself, as a bundled one does in a process (serve_stdio): it
        # waits for `sigterm`, then ends its session as at end of input. "cancel": the default action.
        self.on_sigterm, self.sigterm = on_sigterm, anyio.Event()
        self.printed = printed  # on its stdout and stderr before it served (a print at import time)
        if prints not in ("stderr", "wire"):
            raise ValueError(f'prints must be "stderr" or "wire", got {prints!r}')
        self.serve, self.name, self.level, self.prints = serve, name, level, prints
        self._logs: LogLines | None = None
        self._routed: dict[str, Routed] = {}

    async def open(self) -> None:
        if self._process is not None:
            raise TransportError("this in-process transport is already open; make a new one per connection")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise TransportError("a server in this process runs on asyncio (the loop of a notebook or a "
                                 "page); this is another event loop") from None
        stdin, stdout, stderr = Pipe(), Pipe(), Pipe()
        for pipe, data in zip((stdout, stderr), self.printed):
            if data:
                pipe.put(data)
        self._logs = LogLines(stderr, self.name, self.level)
        logging.getLogger().addHandler(self._logs)
        self._root_level = logging.getLogger().level  # the notebook's own, put back at the end
        if self.level < logging.getLogger().getEffectiveLevel():  # as basicConfig(level=...) in a process
            logging.getLogger().setLevel(self.level)
        for stream, pipe in (("stdin", stdin), ("stdout", stdout if self.prints == "wire" else stderr),
                             ("stderr", stderr)):
            self._routed[stream] = Routed(getattr(sys, stream), self._logs, pipe)
            setattr(sys, stream, self._routed[stream])

        async def serve(read: Callable[[], Awaitable[bytes]], write: Callable[[bytes], int]) -> None:
            SERVING.set(self._logs)
            await self.serve(read, write)
        self._process = ServerTask(serve, stdin, stdout, stderr)
        self._pipes = (stdin, stdout, stderr)

    @property
    def pipes(self) -> tuple[Pipe, Pipe, Pipe]:
        """The server's stdin, stdout and stderr, once open (the grader reads them itself: grade/in_process.py)."""
        if self._pipes is None:
            raise TransportError("this in-process transport is not open: it has no pipes yet")
        return self._pipes

    @property
    def process(self) -> ServerTask:
        """The server's run, standing in for its process, once open."""
        if self._process is None:
            raise TransportError("this in-process transport is not open: no server runs yet")
        return self._process

    async def wait_read(self, beyond: int = 0) -> bool:
        """True once the server has read everything written past ``beyond`` bytes, or has ended."""
        while self.running and not (self.written > beyond and self._pipes[0].unread == 0):
            with anyio.move_on_after(1.0):  # a write after this look makes a new event: look again
                await self._pipes[0].drained.wait()
        return True

    def _shutdown(self):
        """End of input, then SIGTERM, then SIGKILL, as the stdio ladder."""
        for step, wait in enumerate(SHUTDOWN):
            if step == 0:
                self._pipes[0].close()
            else:
                self.send_signal(signal.SIGTERM if step == 1 else signal.SIGKILL)
            yield wait

    def send_signal(self, number: int) -> None:
        """What this place has for ``os.kill(pid, number)``: SIGKILL cancels the server's task (its returncode
        is then -9, as a killed process's); SIGTERM tells a server that handles it (``on_sigterm="stop"``)
        to stop, and cancels any other (-15); no other signal exists here."""
        if number not in (signal.SIGTERM, signal.SIGKILL):
            raise ValueError(f"a server in this process can only be ended, with SIGTERM or SIGKILL; got signal {number}")
        if self._process is None:
            raise TransportError("this in-process transport is not open: there is no server to signal")
        if number == signal.SIGTERM and self.on_sigterm == "stop":
            self.sigterm.set()
        else:
            self._process.end(hard=number == signal.SIGKILL)

    def end_now(self) -> bool:
        """:meth:`close` for a caller that cannot await: the server's task is cancelled at once."""
        running = self.running
        if not self._begin_close():
            return False
        self._pipes[0].close()
        self._process.end()
        self._end()
        return running

    def _end(self) -> None:
        for stream, routed in self._routed.items():
            if getattr(sys, stream) is routed:
                setattr(sys, stream, routed.replaced)
            else:  # another stream was put over it since: it stays, passing every write through
                routed.owner = None
        if self._logs is not None:
            logging.getLogger().removeHandler(self._logs)
            if logging.getLogger().level == self.level:  # ours, unless someone set another since
                logging.getLogger().setLevel(self._root_level)

