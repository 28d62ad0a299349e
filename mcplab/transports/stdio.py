"""The stdio transport: the server is a child process, one JSON-RPC message per line.

Theory of operation
-------------------
Spec "basic/transports", stdio: the client launches the server; the server reads messages from
its stdin and writes messages to its stdout, one per line, UTF-8, no embedded newline; it MAY
write logs to stderr, and nothing but MCP messages to stdout.

    client ──stdin──▶ {"jsonrpc":"2.0","id":1,"method":"ping"}\\n      ──▶ server
    client ◀─stdout── {"jsonrpc":"2.0","id":1,"result":{}}\\n          ◀── server
    client ◀─stderr── weather server ready\\n                          ◀── (a log line)

We make the three pipes ourselves and read and write our ends through ``pipes.py``. Sending is
one writer behind a lock. :meth:`~StdioTransport.receive` is one reader: it reads stdout and feeds
``jsonrpc.LineFramer`` (the framing Lab 01 builds), which hands over each whole message; while it
waits, stderr has a reader of its own, so that a chatty server never blocks on a full pipe. Every
line in both directions, and every stderr line, is recorded in :attr:`StdioTransport.trace` first.

When stdout ends, ``receive`` waits for the process and raises
:class:`~mcplab.wire.errors.ServerExited` with the exit code and the last stderr lines. Shutdown
follows "basic/lifecycle": close stdin, wait, then SIGTERM, then SIGKILL (on Windows: terminate,
then kill; ``portable.py``). The server gets a process group of its own, so an interrupt aimed at
the notebook kernel does not reach it; if the kernel dies, the server sees end of file and exits.

:meth:`~StdioTransport.wait_read` tells when the server has taken what we wrote off its stdin: a
dual-era client's probe counts its silence from then (``client/opening.py``), so a server still
importing on a busy machine is not taken for a silent legacy one.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import time
from collections import deque
from typing import Any, Mapping, Sequence

import anyio

from mcplab import portable
from mcplab.trace import Trace
from mcplab.transports.pipes import Reader, Writer, WriteStalled
from mcplab.wire import jsonrpc
from mcplab.wire.errors import JSONRPCError, ServerExited, TransportError

__all__ = ["StdioTransport", "stdio"]

LADDER = ((None, 1.0), (False, 0.5), (True, 0.5))  # close stdin, SIGTERM, SIGKILL: each, then seconds to wait
SHUTDOWN_BUDGET = sum(wait for _, wait in LADDER)  # seconds, from closing stdin to a reaped process
STDERR_POLL = 0.05         # seconds between looks at stderr while a reader waits for stdout
READ_POLL = 0.01           # seconds between looks at whether the server has read its stdin (no event says so)
# Seconds to wait for the exit code once stdout has ended, then for the end of stderr: events that come at
# once on a quiet machine and can lag by seconds on a busy one, where "still running" would be untrue.
EXIT_GRACE = 10.0
WRITE_STALL = 5.0          # seconds a half-written line may wait for the server to read on
STDERR_TAIL = 12           # stderr lines an error carries
STDERR_LINE = jsonrpc.DEFAULT_MAX_LINE  # bytes of one stderr line kept: a server may write forever without a newline


def stdio(argv: str | Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
          inherit_env: bool = True, trace: Trace | None = None) -> StdioTransport:
    """A transport that will spawn ``argv`` as an MCP server over stdio.

    ``argv`` is a list, or one string split like a shell would; a leading ``python`` means this
    interpreter. ``env`` is added to this process's environment (used alone with ``inherit_env=False``).

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
            argv[0] = sys.executable  # the server runs in the client's environment
        self.argv, self.cwd = argv, cwd
        self.env = {**os.environ, **(env or {})} if inherit_env else dict(env or {})
        self.trace = trace if trace is not None else Trace()
        self.stderr_lines: deque[str] = deque(maxlen=STDERR_TAIL)
        self._framer = jsonrpc.LineFramer(max_line)
        self._inbox: deque[jsonrpc.Message | JSONRPCError] = deque()
        self._stderr_framer = jsonrpc.LineFramer(STDERR_LINE)  # log text: cut into lines, not decoded
        self._process: Any = None
        self._stdin: Writer | None = None
        self._stdout: Reader | None = None
        self._stderr: Reader | None = None
        self._stdout_eof = self._stderr_eof = self._closed = False

    async def open(self) -> None:
        if self._process is not None:
            raise TransportError("this stdio transport is already open; make a new one per connection")
        pipes = [os.pipe() for _ in range(3)]  # (read, write) each, not inherited by default
        child, ours = (pipes[0][0], pipes[1][1], pipes[2][1]), (pipes[0][1], pipes[1][0], pipes[2][0])
        try:
            self._process = await anyio.open_process(self.argv, stdin=child[0], stdout=child[1], stderr=child[2],
                                                     cwd=self.cwd, env=self.env, **portable.new_group())
        except OSError as exc:
            for fd in ours:
                os.close(fd)
            self._closed = True
            raise TransportError(f"could not start the server {shlex.join(self.argv)!r}: {exc}") from exc
        finally:
            for fd in child:
                os.close(fd)  # the child has its copies; ours would hide its end of file
        portable.grow_pipe(ours[2])  # room for logs while nobody reads
        if portable.WATCHES_PIPES:
            for fd in ours[1:]:
                os.set_blocking(fd, False)  # read what has come before waiting: often the reply already has
        self._stdin, self._stdout, self._stderr = Writer(ours[0]), Reader(ours[1]), Reader(ours[2])

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
    async def send(self, message: jsonrpc.Message) -> None:
        """Write one message as one line."""
        raw = jsonrpc.encode(message)
        self.trace.record("c2s", "stdio", raw, message)
        await self._write(raw)

    async def send_raw(self, line: str) -> None:
        """Write ``line`` and a newline exactly as given (it may be invalid: that is the point)."""
        try:
            parsed: Any = jsonrpc.decode(line, mcp=False)
        except JSONRPCError as exc:
            parsed = exc
        self.trace.record("c2s", "stdio", line, parsed)
        await self._write(line)

    async def _write(self, line: str) -> None:
        if self._stdin is None or self._closed:
            raise TransportError("the stdio transport is not open")
        try:
            await self._stdin.write(line.encode("utf-8") + b"\n", WRITE_STALL)
        except WriteStalled:
            raise TransportError(f"the server stopped reading its stdin for {WRITE_STALL:g} s "
                                 f"in the middle of a message") from None
        except anyio.ClosedResourceError:
            raise TransportError("the stdio transport was closed while writing") from None
        except OSError as exc:  # BrokenPipeError: the server is gone
            raise await self._gone(f"could not write to the server's stdin ({exc})") from None

    @property
    def written(self) -> int:
        """Bytes written to the server's stdin so far."""
        return self._stdin.written if self._stdin is not None else 0

    async def wait_read(self, beyond: int = 0) -> bool:
        """Wait until more than ``beyond`` bytes went to the server's stdin and it has read them all,
        or it has exited: True. False at once where the system cannot tell (``portable.SEES_STDIN_READ``)."""
        if not portable.SEES_STDIN_READ or self._stdin is None:
            return False
        while self.running:
            if self._stdin.written > beyond:
                unread = self._stdin.unread()
                if unread is None:
                    return False
                if unread == 0:
                    return True
            await anyio.sleep(READ_POLL)
        return True  # it exited: whoever waits for its answer hears how (ServerExited)

    # --- receiving ---------------------------------------------------------------------------
    async def receive(self) -> jsonrpc.Message | JSONRPCError:
        while not self._inbox:
            if self._stdout is None or self._closed:
                raise TransportError("the stdio transport is closed")
            if self._stdout_eof:
                raise await self._gone("the server closed its stdout")
            data = None
            with anyio.move_on_after(STDERR_POLL):  # stderr is read at least this often while we wait
                try:
                    data = await self._stdout.read()
                except anyio.ClosedResourceError:
                    raise TransportError("the stdio transport was closed while reading") from None
            self._drain_stderr()  # what the server logged before its reply goes before it in the trace
            if data is None:
                continue
            self._stdout_eof = not data
            for line, message in self._framer.frames(data):
                self.trace.record("s2c", "stdio", line, message)  # a line over the limit is not kept: b""
                self._inbox.append(message)
        return self._inbox.popleft()

    def _drain_stderr(self) -> None:
        """Record the stderr lines that have come, without waiting."""
        while not self._stderr_eof and (data := self._stderr.read_now()) is not None:
            self._take_stderr(data)

    async def _read_stderr(self) -> None:
        """Record stderr line by line, up to its end."""
        try:
            while not self._stderr_eof:
                self._take_stderr(await self._stderr.read())
        except anyio.ClosedResourceError:
            pass

    def _take_stderr(self, data: bytes) -> None:
        self._stderr_eof = not data
        for line in self._stderr_framer.lines(data or b"\n"):  # the end of file ends an unfinished line too
            text = line.message if isinstance(line, JSONRPCError) else line.decode("utf-8", errors="replace")
            self.trace.record("s2c", "stderr", text)
            self.stderr_lines.append(text if len(text) <= 1000 else text[:1000] + " …")  # an error's tail

    async def _gone(self, what: str) -> TransportError:
        """The error for a server that stopped talking: exit code and stderr tail if it exited."""
        with anyio.move_on_after(EXIT_GRACE):
            await self._process.wait()
        if self._process.returncode is not None:
            with anyio.move_on_after(EXIT_GRACE):  # the rest of its stderr, now that it has exited
                await self._read_stderr()
        code, tail = self._process.returncode, list(self.stderr_lines)
        if code is None:
            return TransportError(f"{what}, but the server is still running", stderr_tail=tail)
        # Once it has exited, how we noticed (a broken pipe, the end of stdout) is a race; say only what happened.
        how = f"was killed by signal {-code} ({_signal_name(-code)})" if code < 0 else f"exited with code {code}"
        return ServerExited(f"the server {how}", returncode=code, stderr_tail=tail)

    # --- closing -----------------------------------------------------------------------------
    async def close(self) -> None:
        """Close stdin, wait, SIGTERM, wait, SIGKILL: the spec's order. Safe to call twice."""
        if self._closed or self._process is None:
            self._closed = True
            return
        self._closed = True
        with anyio.CancelScope(shield=True):  # a child must be reaped even when the closing task is cancelled
            self._stdin.close()
            for hard, wait in LADDER:
                if hard is not None:
                    portable.end(self._process, hard=hard)
                with anyio.move_on_after(wait):
                    await self._process.wait()
                if self._process.returncode is not None:
                    break
            self._end_group()
            with anyio.move_on_after(1.0):  # its last log lines, for the trace (a grandchild may hold the pipe)
                await self._read_stderr()
            self._stdout.close()
            self._stderr.close()

    def end_now(self) -> bool:
        """Close without awaiting, for a caller that cannot await (a notebook kernel's cell hook).

        The order of :meth:`close`, each wait asking whether the child ended without reaping it (the
        event loop's child watcher collects it). Returns whether a running server was ended."""
        if self._closed or self._process is None:
            self._closed = True
            return False
        self._closed = True
        running = self._process.returncode is None
        self._stdin.close()
        for hard, wait in LADDER:
            if hard is not None:
                portable.end(self._process, hard=hard)
            deadline = time.monotonic() + wait
            while (ended := portable.has_exited(self._process.pid)) is False and time.monotonic() < deadline:
                time.sleep(0.01)
            if ended is None:
                time.sleep(wait)
            elif ended:
                break
        self._end_group()
        self._stdout.close()
        self._stderr.close()
        return running

    def _end_group(self) -> None:
        if portable.SIGNALS_GROUPS:
            portable.end(self._process, hard=True)  # anything the server left behind in its group


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "unknown signal"
