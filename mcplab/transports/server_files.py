"""A server's standard files in this process: what its ``sys.stdin``, ``sys.stdout`` and ``sys.stderr`` are.

Theory of operation
-------------------
A process has three file descriptors of its own; a server run in the page's process
(``transports/in_process.py``) shares the page's ``sys`` module with the notebook. So while such a
server runs, the three streams are :class:`Routed`: a write or a read made in one of the server's
own tasks (``SERVING`` says whose task it is: a context variable, which every task it starts
inherits) goes to that server's pipes; any other goes to the stream it replaced, the notebook's.

:func:`code_server` is what ``python -c CODE`` runs (``place.in_process``): CODE as ``__main__``,
printing on the wire and reading its stdin as a one-line server does in a process. Reading stdin
is synchronous code waiting for a task; only the page can do that (``pyodide.ffi.run_sync``, JSPI),
so elsewhere such a read says why it cannot wait.
"""

from __future__ import annotations

import builtins
import contextvars
import sys
import traceback
from typing import Any, Awaitable, Callable

__all__ = ["SERVING", "Routed", "code_server"]

SERVING: contextvars.ContextVar[Any] = contextvars.ContextVar("mcplab_in_process_server")
# Set in the server's task; the tasks it starts inherit it (each task copies its parent's context).
# Its value, the server's LogLines (in_process.py), is also what tells Routed streams whose write this is.


class Routed:
    """``sys.stdin``, ``sys.stdout`` or ``sys.stderr`` while a server runs here: in the server's own
    tasks the pipe its process would have, elsewhere the stream it replaced (the notebook's)."""

    def __init__(self, replaced: Any, owner: Any, pipe: Any) -> None:
        self.replaced, self.owner, self.pipe = replaced, owner, pipe
        self._unread = b""

    def _ours(self) -> bool:
        return self.owner is not None and SERVING.get(None) is self.owner

    def write(self, text: str) -> int:
        if not self._ours():
            return self.replaced.write(text)
        try:
            self.pipe.put(text.encode("utf-8"))
        except BrokenPipeError:  # nobody reads any more: a process would get SIGPIPE; the text is lost
            pass
        return len(text)

    def flush(self) -> None:
        if not self._ours():
            self.replaced.flush()

    def isatty(self) -> bool:
        return False if self._ours() else self.replaced.isatty()

    def read(self, size: int = -1) -> str:
        if not self._ours():
            return self.replaced.read(size)
        while (size < 0 or len(self._unread) < size) and (data := self._more()):
            self._unread += data
        return self._take(len(self._unread) if size < 0 else size)

    def readline(self, size: int = -1) -> str:
        if not self._ours():
            return self.replaced.readline(size)
        while b"\n" not in self._unread and (size < 0 or len(self._unread) < size) and (data := self._more()):
            self._unread += data
        end = self._unread.find(b"\n") + 1 or len(self._unread)
        return self._take(end if size < 0 else min(end, size))

    def __iter__(self) -> Any:
        return iter(self.readline, "") if self._ours() else iter(self.replaced)

    def _take(self, count: int) -> str:
        taken, self._unread = self._unread[:count], self._unread[count:]
        return taken.decode("utf-8", errors="replace")

    def _more(self) -> bytes:
        """The next bytes written to the server's stdin (``b""``: its end), waiting for them as a process
        would: code that reads stdin is synchronous, and only the page's JSPI lets it wait for a task."""
        if (data := self.pipe.read_now()) is not None:
            return data
        try:
            from pyodide.ffi import can_run_sync, run_sync
        except ImportError:
            can_run_sync = None
        if can_run_sync is None or not can_run_sync():
            raise OSError("this server's code waits for its stdin, which a server run in this process can do "
                          "only in the page (pyodide.ffi.run_sync); nothing has come yet")
        return run_sync(self.pipe.read())

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, buffer...: the replaced stream's
        return getattr(self.replaced, name)


def code_server(code: str) -> Callable[..., Awaitable[None]]:
    """What ``python -c CODE`` runs: CODE as ``__main__``, its stdin and stdout the pipes to the client
    (``prints="wire"``); an exception it does not catch prints its traceback, from CODE on, as Python
    does, and exits 1."""

    async def serve(read: Callable[[], Awaitable[bytes]], write: Callable[[bytes], int]) -> None:
        try:
            exec(compile(code, "<string>", "exec"), {"__name__": "__main__", "__builtins__": builtins})
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:  # noqa: BLE001  (as the interpreter's top level, it reports any)
            sys.stderr.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next)))
            raise SystemExit(1) from None
    return serve
