"""A child process on three pipes, read one line at a time against a deadline, with no threads.

Theory of operation
-------------------
The graders are plain synchronous functions: they run in a notebook cell (whose event loop is busy
running that very cell) and from a terminal. So nothing here is async. The child's stdout and stderr
are our non-blocking pipe ends, watched by one selector; :meth:`Child.next` returns the next complete
line from either, or says that the deadline passed or that both pipes ended::

    child = Child([sys.executable, "my_server.py"])
    child.send('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    event = child.next(deadline=time.monotonic() + 5)   # Event("stdout", b'{"jsonrpc":...}')

Lines are cut by :class:`mcplab.wire.jsonrpc.LineFramer` (the one way bytes become messages: stdout goes
through its ``frames``, stderr only through its ``lines``, being log text), so a line longer
than its limit is reported, not buffered without end. Every line in either direction is recorded in
:attr:`Child.trace` first: stdout lines with the message decoded (or the error decoding it), stderr
lines on their own channel, as the client's transports do. :meth:`Child.unread` says whether the
child has read what we wrote (Linux only: a pipe has no event for it, so :meth:`Child.wait_read`
looks every :data:`READ_POLL` seconds).

:meth:`Child.close` ends the process the way the stdio transport says a client should (2025-11-25
"lifecycle", shutdown; 2026-07-28 "transports/stdio", shutdown): close stdin, wait, then SIGTERM,
then SIGKILL, and reports which of those it took. Then, however it ended, whatever it started is
ended too: the child is a :class:`mcplab.grade.keeper.Tree`, which on Linux finds every process
below it (a fork that outlived its parent, a daemon that called setsid) and elsewhere its group.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from dataclasses import dataclass
from typing import Any, Sequence

from mcplab import portable
from mcplab.grade.keeper import Tree
from mcplab.wire import jsonrpc
from mcplab.wire.errors import JSONRPCError
from mcplab.trace import Trace

CHUNK = 1 << 16
STDERR_KEPT = 20  # stderr lines a report may quote
READ_POLL = 0.05  # seconds between looks at whether the child has read its stdin (a pipe has no event for it)


@dataclass(frozen=True)
class Event:
    """``kind`` is ``"stdout"`` or ``"stderr"`` (with the line), ``"timeout"`` or ``"eof"``."""
    kind: str
    line: bytes = b""
    message: jsonrpc.Message | JSONRPCError | None = None


@dataclass(frozen=True)
class Ending:
    """How the process ended after stdin closed: ``by_itself`` within the grace, or by ``signal``."""
    by_itself: bool
    returncode: int | None
    signal: str | None = None  # "SIGTERM" or "SIGKILL" when we had to send one
    already_exited: bool = False  # it had gone before stdin was closed


class Child:
    """One child process; ``trace`` holds every line it read and wrote."""

    def __init__(self, argv: Sequence[str], *, cwd: str | None = None, env: dict[str, str] | None = None,
                 max_line: int = jsonrpc.DEFAULT_MAX_LINE) -> None:
        self.argv = list(argv)
        self.trace = Trace()
        self.stderr_lines: list[str] = []
        self.process = Tree(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=cwd, env=env)
        self._selector = selectors.DefaultSelector()
        self._framers: dict[str, jsonrpc.LineFramer] = {}
        self._ready: list[Event] = []
        self.stdout_closed = False  # the child closed its stdout (it is leaving, or has left)
        for name, pipe in (("stdout", self.process.stdout), ("stderr", self.process.stderr)):
            assert pipe is not None
            os.set_blocking(pipe.fileno(), False)
            self._selector.register(pipe, selectors.EVENT_READ, name)
            self._framers[name] = jsonrpc.LineFramer(max_line)

    # --- writing -------------------------------------------------------------------------------
    def send(self, raw: str) -> bool:
        """Write one line (the newline is added); False if the child no longer reads its stdin."""
        self.trace.record("c2s", "stdio", raw, _decoded(raw))
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(raw.encode("utf-8") + b"\n")
            return True
        except (BrokenPipeError, ValueError, OSError):  # ValueError: we closed stdin already
            return False

    def unread(self) -> int | None:
        """Bytes written to the child's stdin that it has not read yet; None where the system cannot say.

        Linux counts them on our end of the pipe (``FIONREAD``); 0 means the child has read every line
        we sent, so it is past its start-up (``portable.SEES_STDIN_READ`` says where this holds)."""
        if not portable.SEES_STDIN_READ or self.process.stdin is None or self.process.stdin.closed:
            return None
        return portable.unread(self.process.stdin.fileno())

    def wait_read(self, deadline: float) -> bool:
        """Wait until the child has read every line we sent (or has left, or the system cannot tell): True.

        False at ``deadline``. What the child writes meanwhile is read too (a server that logs while it
        starts must not block on a full pipe), and waits for :meth:`next`."""
        while self.unread():
            if not self._selector.get_map():
                return True  # both pipes ended: it has left, and next() says so
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            for key, _ in self._selector.select(min(left, READ_POLL)):
                self._drain(key.fileobj, key.data)
        return True

    # --- reading -------------------------------------------------------------------------------
    def next(self, deadline: float) -> Event:
        """The next line from stdout or stderr, or ``timeout`` at ``deadline``, or ``eof`` when both end."""
        while not self._ready:
            if not self._selector.get_map():
                return Event("eof")
            left = deadline - time.monotonic()
            if left <= 0:
                return Event("timeout")
            for key, _ in self._selector.select(left):
                self._drain(key.fileobj, key.data)
        return self._ready.pop(0)

    def _drain(self, pipe: object, name: str) -> None:
        try:
            data = os.read(pipe.fileno(), CHUNK)  # type: ignore[attr-defined]
        except BlockingIOError:
            return
        if not data:
            self._selector.unregister(pipe)
            self.stdout_closed = self.stdout_closed or name == "stdout"
            return
        record(self, name, data)

    # --- ending --------------------------------------------------------------------------------
    def close(self, grace: float = 5.0) -> Ending:
        """Close stdin and wait ``grace`` seconds; then SIGTERM, then SIGKILL (the spec's order)."""
        already = self.process.poll() is not None or self.stdout_closed
        try:
            assert self.process.stdin is not None
            self.process.stdin.close()
        except OSError:
            pass
        deadline = time.monotonic() + grace
        while self.next(deadline).kind not in ("eof", "timeout"):
            pass  # keep reading: a server blocked on a full pipe could not exit
        try:
            code = self.process.wait(max(0.0, deadline - time.monotonic()))
            ending = Ending(True, code, None, already)
        except subprocess.TimeoutExpired:
            ending = self._force()
        self.process.end()  # what it left running, even when it exited by itself
        self._selector.close()
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        return ending

    def _force(self) -> Ending:
        self.process.terminate()
        try:
            return Ending(False, self.process.wait(1.0), "SIGTERM")
        except subprocess.TimeoutExpired:
            self.process.end()
            return Ending(False, self.process.returncode, "SIGKILL")


def _decoded(raw: str | bytes) -> jsonrpc.Message | JSONRPCError | None:
    try:
        decoded = jsonrpc.decode(raw)
    except JSONRPCError as exc:
        return exc
    return None if isinstance(decoded, list) else decoded


def record(child: Any, name: str, data: bytes) -> None:
    """Bytes the server wrote on ``name``: into ``child``'s trace and events, whole lines at a time
    (:class:`Child`, and the browser edition's in-process child, record alike)."""
    if name == "stdout":
        for line, message in child._framers[name].frames(data):
            # A line too long to keep is reported (its error's text stands in for it), not buffered.
            child.trace.record("s2c", "stdio", line or message.message, message)  # type: ignore[union-attr]
            child._ready.append(Event(name, line, message))  # type: ignore[arg-type]
        return
    for line in child._framers[name].lines(data):  # stderr is log text: cut into lines, not decoded
        if isinstance(line, JSONRPCError):
            child.trace.record("s2c", "stderr", line.message, line)
            child._ready.append(Event(name, b"", line))
        else:
            text = line.decode("utf-8", errors="replace")
            child.trace.record("s2c", "stderr", text)
            child.stderr_lines = (child.stderr_lines + [text])[-STDERR_KEPT:]
            child._ready.append(Event(name, line))
