"""The student's server for the grader where no process can start: the browser edition's page.

Theory of operation
-------------------
The server grader walks a server through :class:`mcplab.grade.pipes.Child`, a child process on
three pipes read against a deadline, all of it synchronous (a grader is a plain function a cell
calls). A page has no processes, so there :func:`start` gives :class:`InProcessChild` instead: the
same methods, answering the same way, over the server file run in the page's own process
(``place.in_process``: the file as ``__main__`` up to its ``run(server)``, served on memory pipes,
its log records and prints its stderr). The walk, the checks and the card are the grader's own.

The grader waits, but the server it waits for is a task of the very loop the cell runs on. In the
page, ``pyodide.ffi.run_sync`` (JSPI) lets synchronous code wait for an awaitable while the loop
runs on, so each wait here is one ``run_sync``: for a line on stdout or stderr, for the server to
read its stdin, for its end. Closing is the stdio ladder, in its in-process form: end of stdin,
then the grace, then a cancel of the task for SIGTERM and again for SIGKILL.

A file that fails before it serves (it raises, its flags are refused, it never calls ``run``) is a
server that printed why on its stderr and exited 1, as its process would have: the card says so.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from typing import Any, Sequence

import anyio

from mcplab import place
from mcplab.grade.pipes import Child, Ending, Event, _decoded, record
from mcplab.transports.in_process import InProcessTransport
from mcplab.wire import jsonrpc
from mcplab.trace import Trace

__all__ = ["InProcessChild", "start"]

TERM_WAIT = 1.0  # seconds after the cancel that stands for SIGTERM, as Child waits after SIGTERM


def start(argv: Sequence[str], *, cwd: str | None = None) -> Child | InProcessChild:
    """The server ``argv`` starts, as the place allows: a child process, or in the page this process."""
    return InProcessChild(argv, cwd=cwd) if place.IN_BROWSER else Child(argv, cwd=cwd)


def wait(awaitable: Any) -> Any:
    """``awaitable``'s result, from synchronous code, while the loop runs the server (JSPI)."""
    from pyodide.ffi import can_run_sync, run_sync

    if not can_run_sync():
        raise RuntimeError("the grader waits for a server in this page through pyodide.ffi.run_sync, "
                           "which this call stack cannot use (it needs JSPI and a cell's own call)")
    return run_sync(awaitable)


class InProcessChild:
    """What :class:`~mcplab.grade.pipes.Child` offers the probe, over a server run in this process."""

    def __init__(self, argv: Sequence[str], *, cwd: str | None = None,
                 max_line: int = jsonrpc.DEFAULT_MAX_LINE) -> None:
        if cwd is not None:
            raise ValueError(f"cwd={cwd!r}: a server run in this page shares its folder; give its file's path instead")
        self.argv = list(argv)
        self.trace = Trace()
        self.stderr_lines: list[str] = []
        self.stdout_closed = False
        try:
            self.transport = place.in_process(self.argv)
        except BaseException as exc:  # noqa: BLE001  (what the file did is the card's to report)
            path = self.argv[1] if len(self.argv) > 1 else ""
            self.transport = InProcessTransport(failed_start(exc, path), self.argv, name="grader")
        self._framers = {"stdout": jsonrpc.LineFramer(max_line), "stderr": jsonrpc.LineFramer(max_line)}
        self._ready: list[Event] = []
        self._ended: set[str] = set()
        wait(self.transport.open())
        self._stdin, self._stdout, self._stderr = self.transport.pipes

    # --- writing -------------------------------------------------------------------------------
    def send(self, raw: str) -> bool:
        """Write one line (the newline is added); False if the server no longer reads its stdin."""
        self.trace.record("c2s", "stdio", raw, _decoded(raw))
        if not self.transport.running:
            return False
        try:
            self._stdin.put(raw.encode("utf-8") + b"\n")
            return True
        except BrokenPipeError:  # we closed its stdin already
            return False

    def unread(self) -> int | None:
        return self._stdin.unread

    def wait_read(self, deadline: float) -> bool:
        """True once the server has read every line we sent (or has ended); False at ``deadline``."""
        async def read_or_ended() -> None:
            while self._stdin.unread and self.transport.running:
                with anyio.move_on_after(0.5):  # a write after this look makes a new event: look again
                    await self._stdin.drained.wait()
        with_deadline(read_or_ended(), deadline)
        return not self._stdin.unread or not self.transport.running

    # --- reading -------------------------------------------------------------------------------
    def next(self, deadline: float) -> Event:
        """The next line from stdout or stderr, or ``timeout`` at ``deadline``, or ``eof`` when both end."""
        while not self._ready:
            if len(self._ended) == 2:
                return Event("eof")
            if deadline - time.monotonic() <= 0:
                return Event("timeout")
            with_deadline(self._take_next(), deadline)
        return self._ready.pop(0)

    async def _take_next(self) -> None:
        """Read what comes first on stdout or stderr (a cancelled read of a memory pipe loses nothing)."""
        async with anyio.create_task_group() as group:
            async def take(name: str, pipe: Any) -> None:
                self._take(name, await pipe.read())
                group.cancel_scope.cancel()
            for name, pipe in (("stdout", self._stdout), ("stderr", self._stderr)):
                if name not in self._ended:
                    group.start_soon(take, name, pipe)

    def _take(self, name: str, data: bytes) -> None:
        if not data:
            self._ended.add(name)
            self.stdout_closed = self.stdout_closed or name == "stdout"
            return
        record(self, name, data)  # as Child records what its pipes bring

    # --- ending --------------------------------------------------------------------------------
    def close(self, grace: float = 5.0) -> Ending:
        """End of stdin and ``grace`` seconds; then a cancel for SIGTERM, then for SIGKILL (the ladder)."""
        already = not self.transport.running or self.stdout_closed
        self._stdin.close()
        deadline = time.monotonic() + grace
        while self.next(deadline).kind not in ("eof", "timeout"):
            pass
        task = self.transport.process
        with_deadline(task.wait(), deadline)
        ending = Ending(True, task.returncode, None, already)
        if task.returncode is None:
            for hard, name in ((False, "SIGTERM"), (True, "SIGKILL")):
                task.end(hard=hard)
                with_deadline(task.wait(), time.monotonic() + TERM_WAIT)
                ending = Ending(False, task.returncode, name)
                if task.returncode is not None:
                    break
        self.transport.end_now()  # the notebook's streams and log handler back as they were
        return ending


def with_deadline(awaitable: Any, deadline: float) -> None:
    """Run ``awaitable`` until it is done or ``time.monotonic()`` reaches ``deadline``."""
    async def bounded() -> None:
        with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
            await awaitable
    wait(bounded())


def failed_start(exc: BaseException, path: str) -> Any:
    """The server side of a file that failed before serving: it prints on stderr what its process would
    have (the exit message, or the traceback from the file's own frames on, or why it was refused) and
    exits with the code that process would have."""
    leaving = exc.__cause__ if isinstance(exc.__cause__, SystemExit) else exc  # the file called sys.exit
    if isinstance(leaving, SystemExit):
        code = leaving.code if isinstance(leaving.code, int) else 0 if leaving.code is None else 1
        text = "" if leaving.code is None or isinstance(leaving.code, int) else f"{leaving.code}\n"
    else:
        code, text = 1, f"{exc}\n"  # refused here (no file, no run(server)): the reason
        where = exc.__traceback__
        while where is not None and not same_file(where.tb_frame.f_code.co_filename, path):
            where = where.tb_next
        if where is not None:  # it raised in its own code: the traceback a process prints
            text = "".join(traceback.format_exception(type(exc), exc, where))

    async def serve(read: Any, write: Any) -> None:
        sys.stderr.write(text)  # routed: this server's stderr
        raise SystemExit(code)
    return serve


def same_file(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False
