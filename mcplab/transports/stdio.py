"""The stdio transport: the server is a child process, one JSON-RPC message per line.

Theory of operation
-------------------
Spec "basic/transports", stdio: the client launches the server; the server reads messages from
its stdin and writes messages to its stdout, one per line, UTF-8, no embedded newline; it MAY
write logs to stderr, and nothing but MCP messages to stdout.

    client ──stdin──▶ {"jsonrpc":"2.0","id":1,"method":"ping"}\\n      ──▶ server
    client ◀─stdout── {"jsonrpc":"2.0","id":1,"result":{}}\\n          ◀── server
    client ◀─stderr── weather server ready\\n                          ◀── (a log line)

We make the three pipes ourselves and keep our ends as raw file descriptors (``pipes.py``): on
POSIX they are non-blocking, so reading is a plain ``os.read`` plus ``anyio.wait_readable`` on
asyncio and trio alike, with no task running in the background; on Windows, whose event loops
cannot watch a pipe, a thread per pipe does blocking reads. ``jsonrpc.LineFramer.frames`` turns
stdout into messages (the framing Lab 01 builds); every line, and every line the server writes to stderr, is recorded in
:attr:`StdioTransport.trace` first.

stderr is drained whenever stdout is read, before the stdout lines are recorded (so a log line
the server wrote before its reply appears before the reply), and whenever it has something while
a reader waits (on asyncio the wait watches both pipes; elsewhere stderr is looked at every
:data:`STDERR_POLL` seconds), so a chatty server never blocks on a full pipe.

Before a reader sleeps it looks again for :data:`REPLY_SPIN` seconds, giving the CPU away between
looks (``WatchedPipe.poll``): a quick server's reply is then read where it lands, without the sleep
and wake-up of an idle CPU, which on a virtual machine costs more than the whole exchange. A slow
server costs the client those 50 µs each time its reader would sleep (once per reply, and again after
each stderr line that wakes it), and the event loop waits that long at most.

:meth:`~StdioTransport.wait_read` tells when the server has taken everything written so far off its
stdin: a server that reads is past its start-up. A dual-era client's probe counts its silence from
then (``client/opening.py``), so a server still importing on a busy machine is not taken for a silent
legacy one. Linux says how many bytes wait in a pipe (``FIONREAD``, asked every :data:`READ_POLL`
seconds: a pipe has no event for "read"); where it cannot (``portable.SEES_STDIN_READ``), it says so.

When stdout ends, :meth:`~StdioTransport.receive` waits briefly for the process and raises
:class:`~mcplab.wire.errors.ServerExited` with the exit code and the last stderr lines. Shutdown
follows "basic/lifecycle": close stdin, wait, then SIGTERM, then SIGKILL, within
:data:`SHUTDOWN_BUDGET` seconds (on Windows: terminate, then kill; ``portable.py``). The server
gets a process group of its own: an interrupt aimed at the notebook kernel does not reach it,
and on POSIX the whole group is ended at close. If the kernel dies, the server sees end-of-file
on stdin and exits by itself; it inherits no other fd.
"""

from __future__ import annotations

import os
import shlex
import select
import signal
import sys
import time
from collections import deque
from typing import Any, Mapping, Sequence

import anyio

from mcplab.wire import jsonrpc
from mcplab import portable
from mcplab.wire.errors import JSONRPCError, ServerExited, TransportError
from mcplab.trace import Trace
from mcplab.transports.pipes import POLL, ThreadedPipe, WatchedPipe, WriteStalled

__all__ = ["StdioTransport", "stdio"]

SHUTDOWN_BUDGET = 2.0      # seconds, from closing stdin to a reaped process
STDERR_POLL = POLL         # seconds a reader waits on stdout before draining stderr again (not on asyncio)
REPLY_SPIN = 50e-6         # seconds a reader keeps looking at stdout before it sleeps
READ_POLL = 0.01           # seconds between looks at whether the server has read its stdin
# Seconds to wait for the exit code once stdout has ended, and then for the end of stderr. Both are events
# that come at once on a quiet machine; on a busy one (load 10) the exit can lag by seconds, and an error
# that said "still running" or lost stderr's last line would tell the student something untrue.
EXIT_GRACE = 10.0
WRITE_STALL = 5.0          # seconds a half-written line may wait for the server to read on
STDERR_TAIL = 12           # stderr lines an error carries
PIPE_BUF = getattr(select, "PIPE_BUF", 512)  # bytes a pipe takes whole or not at all (POSIX: at least 512)
STDERR_LINE = jsonrpc.DEFAULT_MAX_LINE  # bytes of one stderr line kept: a server may write forever without a newline


def stdio(argv: str | Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
          inherit_env: bool = True, trace: Trace | None = None) -> StdioTransport:
    """A transport that will spawn ``argv`` as an MCP server over stdio.

    ``argv`` is a list, or one string split like a shell would. A leading ``python`` or
    ``python3`` means this interpreter (``sys.executable``), so the server runs in the same
    environment as the client. ``env`` is added to this process's environment (or used
    alone when ``inherit_env=False``). ``trace`` records the frames (default: a bounded
    :class:`~mcplab.trace.Trace`; ``Trace(max_frames=None, max_chars=None)`` keeps every frame).

    >>> stdio(["python", "servers/weather.py"]).argv[1]
    'servers/weather.py'
    """
    return StdioTransport(argv, env=env, cwd=cwd, inherit_env=inherit_env, trace=trace)


class StdioTransport:
    """One server child process; implements :class:`mcplab.transports.base.Transport`."""

    channel = "stdio"

    def __init__(self, argv: str | Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: str | None = None, inherit_env: bool = True,
                 max_line: int = jsonrpc.DEFAULT_MAX_LINE, trace: Trace | None = None) -> None:
        argv = shlex.split(argv) if isinstance(argv, str) else [os.fspath(a) for a in argv]
        if not argv:
            raise ValueError("expected a command to start the server, got an empty argv")
        if argv[0] in ("python", "python3"):
            argv[0] = sys.executable
        self.argv = argv
        self.env = ({**os.environ, **(env or {})} if inherit_env else dict(env or {}))
        self.cwd = cwd
        self.trace = trace if trace is not None else Trace()
        self.stderr_lines: deque[str] = deque(maxlen=STDERR_TAIL)
        self._framer = jsonrpc.LineFramer(max_line)
        self._inbox: deque[jsonrpc.Message | JSONRPCError] = deque()
        self._stderr_pending: list[bytes] = []  # an unfinished stderr line, in pieces
        self._stderr_size = 0
        self._process: Any = None
        self._stdin: Any = None  # our ends of the three pipes: WatchedPipe or ThreadedPipe
        self._stdout: Any = None
        self._stderr: Any = None
        self._stdout_eof = self._stderr_eof = False
        self._write_lock = anyio.Lock(fast_acquire=True)  # uncontended: no extra trip through the loop
        self._closed = False

    # --- opening -----------------------------------------------------------------------------
    async def open(self) -> None:
        if self._process is not None:
            raise TransportError("this stdio transport is already open; make a new one per connection")
        pipes = [os.pipe() for _ in range(3)]  # (read, write) each, not inherited by default
        child = (pipes[0][0], pipes[1][1], pipes[2][1])
        ours = (pipes[0][1], pipes[1][0], pipes[2][0])
        try:
            self._process = await anyio.open_process(
                self.argv, stdin=child[0], stdout=child[1], stderr=child[2], cwd=self.cwd,
                env=self.env, **portable.new_group())
        except OSError as exc:
            for fd in ours:
                os.close(fd)
            self._closed = True
            raise TransportError(f"could not start the server {shlex.join(self.argv)!r}: {exc}") from exc
        finally:
            for fd in child:
                os.close(fd)  # the child has its copies; ours would hide its end-of-file
        portable.grow_pipe(ours[2])  # room for logs while nobody reads
        pipe = WatchedPipe if portable.WATCHES_PIPES else ThreadedPipe
        self._stdin, self._stdout, self._stderr = (pipe(fd) for fd in ours)

    async def __aenter__(self) -> StdioTransport:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process is not None else None

    @property
    def running(self) -> bool:
        """A server was started, is not closed by this transport, and has not exited (as far as we know)."""
        return self._process is not None and not self._closed and self._process.returncode is None

    # --- sending -----------------------------------------------------------------------------
    async def send(self, message: jsonrpc.Message, *, headers: Mapping[str, str] | None = None) -> None:
        """Write one message as one line; ``headers`` are ignored (stdio has none, spec "basic/transports")."""
        raw = jsonrpc.encode(message)
        self.trace.record("c2s", "stdio", raw, message)
        await self._write(raw.encode("utf-8") + b"\n")

    def send_nowait(self, message: jsonrpc.Message, *, headers: Mapping[str, str] | None = None) -> bool:
        """Write one message now if the pipe takes the whole line at once; False (nothing written) if not.

        POSIX writes of at most ``PIPE_BUF`` bytes to a pipe are atomic: all of the line goes in, or
        none of it. So a short line never leaves half of itself behind, and the caller that hears False
        sends the message again with :meth:`send`, which waits for room. (A longer line, or a write
        already under way, always takes that way: it is encoded a second time there.)"""
        if self._process is None or self._closed or self._write_lock.locked():
            return False
        raw = jsonrpc.encode(message)
        data = raw.encode("utf-8") + b"\n"
        if len(data) > PIPE_BUF:
            return False
        try:
            if self._stdin.write_now(data) == 0:
                return False  # the pipe is full (or, on Windows, only a thread may write)
        except OSError:
            return False  # a broken pipe: send() meets it again and says how the server ended
        self.trace.record("c2s", "stdio", raw, message)
        return True

    async def wait_read(self) -> bool:
        """Wait until the server has read every byte written to its stdin, or has exited: True.

        False at once where the system cannot tell (Windows pipes, or ``portable.SEES_STDIN_READ`` off):
        the caller then knows only when it wrote."""
        if not portable.SEES_STDIN_READ or self._stdin is None:
            return False
        while self.running:
            unread = self._stdin.unread()
            if unread is None:
                return False
            if unread == 0:
                return True
            await anyio.sleep(READ_POLL)
        return True  # it exited: whoever waits for its answer hears how (ServerExited)

    async def send_raw(self, line: str) -> None:
        """Write ``line`` and a newline exactly as given (it may be invalid: that is the point)."""
        try:
            parsed: Any = jsonrpc.decode(line, mcp=False)
        except JSONRPCError as exc:
            parsed = exc
        self.trace.record("c2s", "stdio", line, parsed)
        await self._write(line.encode("utf-8") + b"\n")

    async def _write(self, data: bytes) -> None:
        if self._process is None or self._closed:
            raise TransportError("the stdio transport is not open")
        sent = 0
        if not self._write_lock.locked():
            # Fast path: nobody is mid-line, and one os.write usually takes the whole line (no await, no lock).
            try:
                sent = self._stdin.write_now(data)
            except OSError as exc:  # BrokenPipeError: the server is gone
                raise await self._gone(f"could not write to the server's stdin ({exc})") from None
            if sent == len(data):
                return
        # One writer at a time: a partial write must finish before the next line starts. Taking the free
        # lock does not yield (fast_acquire), so no other line can slip in after a partial write_now().
        async with self._write_lock:
            try:
                await self._stdin.write_all(data, WRITE_STALL, sent)
            except WriteStalled:
                raise TransportError(f"the server stopped reading its stdin for {WRITE_STALL:g} s "
                                     f"in the middle of a message") from None
            except anyio.ClosedResourceError:
                raise TransportError("the stdio transport was closed while writing") from None
            except OSError as exc:  # BrokenPipeError: the server is gone
                raise await self._gone(f"could not write to the server's stdin ({exc})") from None

    # --- receiving ---------------------------------------------------------------------------
    async def receive(self) -> jsonrpc.Message | JSONRPCError:
        while (message := self.receive_nowait()) is None:
            if self._process is None or self._closed:
                raise TransportError("the stdio transport is closed")
            if self._stdout_eof:
                raise await self._gone("the server closed its stdout")
            if self._stdout.poll(REPLY_SPIN):
                continue
            try:  # until stdout or stderr has something
                await self._stdout.wait_readable(None if self._stderr_eof else self._stderr)
            except anyio.ClosedResourceError:
                raise TransportError("the stdio transport was closed while reading") from None
            self._drain_stderr()  # perhaps only stderr had something (or, on trio and Windows, STDERR_POLL passed)
        return message

    def receive_nowait(self) -> jsonrpc.Message | JSONRPCError | None:
        """The next message if it has arrived already, else None: never waits (:meth:`receive` waits).

        A quick server has often answered by the time its client reads, so this is the common case.
        On asyncio a watch that woke a waiting reader has read the bytes already: no system call."""
        if not self._inbox and self._process is not None and not self._closed and not self._stdout_eof:
            data = self._read_stdout()
            if data is not None:
                self._drain_stderr()  # a log line the server wrote before its reply goes before it
                if not data:
                    self._stdout_eof = True
                else:
                    record, inbox = self.trace.record, self._inbox
                    for line, message in self._framer.frames(data):
                        record("s2c", "stdio", line, message)  # a line over the limit is not kept: b""
                        inbox.append(message)
        return self._inbox.popleft() if self._inbox else None

    def _read_stdout(self) -> bytes | None:
        try:
            return self._stdout.read_now()
        except OSError:
            return b""  # as the end of file: the server is gone

    def _drain_stderr(self) -> None:
        """Record every complete stderr line available now, without waiting."""
        while not self._stderr_eof:
            try:
                data = self._stderr.read_now()
            except OSError:
                return
            if data is None:
                return
            if not data:
                self._stderr_eof = True
                data = b"\n" if self._stderr_pending else b""
            *lines, tail = data.split(b"\n")
            if lines:  # the first line ends what earlier chunks began (joined once: a long line stays linear)
                lines[0] = b"".join([*self._stderr_pending, lines[0]])
                self._stderr_pending, self._stderr_size = [], 0
            if tail:
                self._stderr_pending.append(tail)
                self._stderr_size += len(tail)
            if self._stderr_size > STDERR_LINE:  # no newline in sight: record what came, cut
                lines.append(b"".join(self._stderr_pending)[:STDERR_LINE] + " … (cut)".encode())
                self._stderr_pending, self._stderr_size = [], 0
            for raw in lines:
                text = raw.rstrip(b"\r").decode("utf-8", errors="replace")
                self.trace.record("s2c", "stderr", text)
                self.stderr_lines.append(text if len(text) <= 1000 else text[:1000] + " …")  # an error's tail

    async def _gone(self, what: str) -> TransportError:
        """The error for a server that stopped talking: exit code and stderr tail if it exited."""
        with anyio.move_on_after(EXIT_GRACE):
            await self._process.wait()
        with anyio.move_on_after(EXIT_GRACE):  # the rest of its stderr, now that it has exited: up to its end
            while not self._stderr_eof and self._process.returncode is not None:
                self._drain_stderr()
                if not self._stderr_eof:
                    await self._stderr.wait_readable()
        code = self._process.returncode
        tail = list(self.stderr_lines)
        if code is None:
            return TransportError(f"{what}, but the server is still running", stderr_tail=tail)
        # Once it has exited, how we noticed (a broken pipe, the end of stdout) is a race; say only what happened.
        how = f"was killed by signal {-code} ({_signal_name(-code)})" if code < 0 else f"exited with code {code}"
        return ServerExited(f"the server {how}", returncode=code, stderr_tail=tail)

    # --- closing -----------------------------------------------------------------------------
    async def close(self) -> None:
        """Close stdin, wait, SIGTERM, wait, SIGKILL: the spec's order, within SHUTDOWN_BUDGET.

        On Windows the two signals are ``terminate()`` and ``kill()`` (``portable.end``).
        """
        if self._closed or self._process is None:
            self._closed = True
            return
        self._closed = True
        # Shielded: a child must be reaped even when the task closing it is being cancelled.
        with anyio.CancelScope(shield=True):
            self._stdin.close()
            for hard, wait in ((None, 1.0), (False, 0.5), (True, 0.5)):
                if hard is not None:
                    portable.end(self._process, hard=hard)
                with anyio.move_on_after(wait):
                    await self._process.wait()
                if self._process.returncode is not None:
                    break
            if portable.SIGNALS_GROUPS:
                portable.end(self._process, hard=True)  # anything the server left behind in its group
            self._drain_stderr()
            self._stdout.close()
            self._stderr.close()


    def end_now(self) -> bool:
        """Close without awaiting, for a caller that cannot await (a notebook kernel's cell hook).

        The order of :meth:`close`: stdin first, so that the server ends by itself as the spec asks,
        then SIGTERM, then SIGKILL, each after a short wait; the wait asks whether the child ended
        without reaping it, because the event loop's child watcher collects it, as after any close.
        Returns whether a running server was ended. The transport is closed afterwards, as after close().
        """
        if self._closed or self._process is None:
            self._closed = True
            return False
        self._closed = True
        running = self._process.returncode is None
        _drop(self._stdin)
        pid = self._process.pid
        for hard, wait in ((None, 1.0), (False, 0.5), (True, 0.5)):
            if hard is not None:
                portable.end(self._process, hard=hard)
            deadline = time.monotonic() + wait
            while (ended := portable.has_exited(pid)) is False and time.monotonic() < deadline:
                time.sleep(0.01)
            if ended is None:
                time.sleep(wait)
            elif ended:
                break
        if portable.SIGNALS_GROUPS:
            portable.end(self._process, hard=True)  # anything the server left behind in its group
        _drop(self._stdout)
        _drop(self._stderr)
        return running


def _drop(pipe: Any) -> None:
    """Close one of our pipe ends from synchronous code, where there may be no event loop to tell."""
    try:
        pipe.close()
    except Exception:  # no async library running here to notify: close the descriptor itself
        try:
            os.close(pipe.fd)
        except OSError:
            pass


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "unknown signal"
