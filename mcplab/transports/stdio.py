"""The stdio transport: the server is a child process, one JSON-RPC message per line.

Theory of operation
-------------------
Spec "basic/transports": the client launches the server, writes messages to its stdin and reads
them from its stdout, one per line; the server MAY log on stderr, and writes nothing else to stdout.

    client ──stdin──▶ {"jsonrpc":"2.0","id":1,"method":"ping"}\\n  ──▶ server
    client ◀─stdout── {"jsonrpc":"2.0","id":1,"result":{}}\\n      ◀── server
    client ◀─stderr── weather server ready\\n                      ◀── (a log line)

One writer behind a lock (``send``); one reader (``receive``) feeding stdout to ``LineFramer`` (Lab
01's framing), handing on each message, and reading stderr before it (a log line written before a
reply comes first) and every :data:`STDERR_POLL` s while it waits, so a chatty server never blocks.
Every line goes into ``trace`` first. A server gone says how (:class:`~mcplab.wire.errors.ServerExited`).
"""

from __future__ import annotations

import os
import shlex
from collections import deque
from contextlib import suppress
from typing import Any, Iterator, Mapping, Sequence

import anyio

from mcplab import portable
from mcplab.trace import Trace
from mcplab.transports.base import Opens
from mcplab.pipes import Reader, Writer
from mcplab.wire import jsonrpc
from mcplab.wire.errors import JSONRPCError, ServerExited, TransportError

__all__ = ["StdioTransport", "stdio"]

SHUTDOWN = (1.0, 0.5, 0.5)  # seconds to wait after closing stdin, after SIGTERM, after SIGKILL: 2 s in all
STDERR_POLL = 0.05   # seconds between looks at stderr while the reader waits for stdout
READ_POLL = 0.01     # seconds between looks at whether the server has read its stdin (no event says so)
EXIT_GRACE = 10.0    # seconds for the exit code, then the end of stderr, once stdout ended (a busy machine lags)
WRITE_STALL = 5.0    # seconds a half-written line may wait for the server to read on
STDERR_TAIL = 12     # stderr lines an error carries


class StdioTransport(Opens):
    """One server child process, in a process group of its own (a Ctrl-C aimed at the notebook misses
    it); a :class:`~mcplab.transports.base.Transport`. ``argv`` is a list or one string split as a
    shell would; a leading ``python`` means this interpreter."""

    channel = "stdio"

    def __init__(self, argv: str | Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: str | None = None, inherit_env: bool = True,
                 max_line: int = jsonrpc.DEFAULT_MAX_LINE, trace: Trace | None = None) -> None:
        self.argv = portable.command(argv)
        self.env = {**os.environ, **(env or {})} if inherit_env else dict(env or {})
        self.cwd, self.trace = cwd, trace if trace is not None else Trace()
        self.stderr_lines: deque[str] = deque(maxlen=STDERR_TAIL)
        self._framer, self._stderr_framer = jsonrpc.LineFramer(max_line), jsonrpc.LineFramer()
        self._inbox: deque[jsonrpc.Message | JSONRPCError] = deque()
        self._process: Any = None
        self.pid: int | None = None  # the server's, once started
        self._pipes: tuple[Writer | portable.ThreadWrites, Reader, Reader] | None = None  # stdin, stdout, stderr
        self._stdout_eof = self._stderr_eof = self._closed = False

    async def open(self) -> None:
        if self._process is not None:
            raise TransportError("this stdio transport is already open; make a new one per connection")
        (in_r, in_w), (out_r, out_w), (err_r, err_w) = (os.pipe() for _ in range(3))  # not inherited
        try:
            self._process = await anyio.open_process(self.argv, stdin=in_r, stdout=out_w, stderr=err_w,
                                                     cwd=self.cwd, env=self.env, **portable.new_group())
        except OSError as exc:
            for fd in (in_w, out_r, err_r):
                os.close(fd)
            self._closed = True
            raise TransportError(f"could not start the server {shlex.join(self.argv)!r}: {exc}") from exc
        finally:
            for fd in (in_r, out_w, err_w):
                os.close(fd)  # the child has its copies; ours would hide its end of file
        portable.grow_pipe(err_r)  # room for logs while nobody reads
        for fd in (out_r, err_r):
            os.set_blocking(fd, not portable.WATCHES_PIPES)  # read what has come before waiting
        writer = Writer(in_w) if portable.WATCHES_PIPES else portable.ThreadWrites(in_w)
        self._pipes, self.pid = (writer, Reader(out_r), Reader(err_r)), self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process is not None else None

    @property
    def running(self) -> bool:
        """A server was started, is not closed by this transport, and has not exited (as far as we know)."""
        return self._process is not None and not self._closed and self._process.returncode is None

    async def send(self, message: jsonrpc.Message) -> None:
        """Write one message as one line."""
        await self._write(jsonrpc.encode(message), message)

    async def send_raw(self, line: str) -> None:
        """Write ``line`` and a newline exactly as given (it may be invalid: that is the point)."""
        await self._write(line, jsonrpc.decode_as_sent(line))

    async def _write(self, line: str, parsed: Any) -> None:
        if self._pipes is None or self._closed:
            raise TransportError("the stdio transport is not open")
        self.trace.record("c2s", "stdio", line, parsed)
        try:
            await self._pipes[0].write(line.encode("utf-8") + b"\n", WRITE_STALL)
        except TimeoutError:
            raise TransportError(f"the server stopped reading its stdin for {WRITE_STALL:g} s "
                                 f"in the middle of a message") from None
        except anyio.ClosedResourceError:
            raise TransportError("the stdio transport was closed while writing") from None
        except OSError as exc:  # BrokenPipeError: the server is gone
            raise await self._gone(f"could not write to the server's stdin ({exc})") from None

    @property
    def written(self) -> int:
        """Bytes written to the server's stdin so far."""
        return self._pipes[0].written if self._pipes is not None else 0

    async def wait_read(self, beyond: int = 0) -> bool:
        """True once the server has read all of more than ``beyond`` bytes written (or exited); False
        where the system cannot tell. A dual-era probe counts its silence from then (``client/opening.py``)."""
        if not (portable.SEES_STDIN_READ and portable.WATCHES_PIPES) or self._pipes is None:
            return False
        while self.running:
            if self.written > beyond and (unread := portable.unread(self._pipes[0].fd)) in (0, None):
                return unread == 0
            await anyio.sleep(READ_POLL)
        return True  # it exited: whoever waits for its answer hears how (ServerExited)

    async def receive(self) -> jsonrpc.Message | JSONRPCError:
        while not self._inbox:
            if self._pipes is None or self._closed:
                raise TransportError("the stdio transport is closed")
            if self._stdout_eof:
                raise await self._gone("the server closed its stdout")
            if (data := self._pipes[1].read_now()) is None:  # a quick server's reply is often here already
                with anyio.move_on_after(STDERR_POLL):
                    try:
                        data = await self._pipes[1].read()
                    except anyio.ClosedResourceError:
                        raise TransportError("the stdio transport was closed while reading") from None
            self._drain_stderr()
            if data is not None:
                self._stdout_eof = not data
                for line, message in self._framer.frames(data):
                    self.trace.record("s2c", "stdio", line, message)  # a line over the limit is not kept: b""
                    self._inbox.append(message)
        return self._inbox.popleft()

    def _drain_stderr(self) -> None:
        while not self._stderr_eof and (data := self._pipes[2].read_now()) is not None:
            self._take_stderr(data)

    def _take_stderr(self, data: bytes) -> None:
        self._stderr_eof = not data
        for line in self._stderr_framer.lines(data or b"\n"):  # log text, cut into lines; the end ends one too
            text = line.message if isinstance(line, JSONRPCError) else line.decode("utf-8", errors="replace")
            self.trace.record("s2c", "stderr", text)
            self.stderr_lines.append(text if len(text) <= 1000 else text[:1000] + " …")

    async def _gone(self, what: str) -> TransportError:
        """The error for a server that stopped talking: exit code and stderr tail if it exited."""
        with anyio.move_on_after(EXIT_GRACE):
            await self._process.wait()
        if (code := self._process.returncode) is None:
            return TransportError(f"{what}, but the server is still running", stderr_tail=list(self.stderr_lines))
        # The rest of its stderr, up to its end; if the transport is closed meanwhile, what came is recorded.
        with anyio.move_on_after(EXIT_GRACE), suppress(anyio.ClosedResourceError):
            while not self._stderr_eof:
                self._take_stderr(await self._pipes[2].read())
        # How we noticed (a broken pipe, the end of stdout) is a race; say only what happened.
        return ServerExited.ended(code, list(self.stderr_lines))

    def _begin_close(self) -> bool:
        opened, self._closed = self._process is not None and not self._closed, True
        return opened  # there is a server to end

    def _shutdown(self) -> Iterator[float]:
        """Close stdin, then SIGTERM, then SIGKILL (Windows: terminate, kill), yielding how long to wait after each."""
        for step, wait in enumerate(SHUTDOWN):
            if step == 0:
                self._pipes[0].close()
            else:
                portable.end(self._process, hard=step == 2)
            yield wait

    async def close(self) -> None:
        """Shut the server down in the spec's order, reaping it. Safe to call twice."""
        if not self._begin_close():
            return
        with anyio.CancelScope(shield=True):  # a child must be reaped even when the closing task is cancelled
            for wait in self._shutdown():
                with anyio.move_on_after(wait):
                    await self._process.wait()
                if self._process.returncode is not None:
                    break
            self._drain_stderr()  # its last log lines, for the trace
            self._end()

    def end_now(self) -> bool:
        """:meth:`close` for a caller that cannot await (a notebook kernel's cell hook): each wait asks
        whether the child ended without reaping it (the event loop's watcher does). Was it running?"""
        running = self.running
        if not self._begin_close():
            return False
        for wait in self._shutdown():
            if portable.wait_exited(self._process.pid, wait):
                break
        self._end()
        return running

    def _end(self) -> None:
        if portable.SIGNALS_GROUPS:
            portable.end(self._process, hard=True)  # anything the server left behind in its group
        self._pipes[1].close()
        self._pipes[2].close()


stdio = StdioTransport  # the short name the labs use: stdio(["python", "servers/weather.py"])
