"""What differs between POSIX (Linux, macOS) and Windows for a child server process, in one place.

Theory of operation
-------------------
mcplab starts servers as child processes and talks to them over pipes. Three things about that are
POSIX-only, and each has a Windows equivalent chosen here, by capability rather than by name where
Python lets us ask:

=====================  ===================================  =========================================
what                   POSIX                                Windows
=====================  ===================================  =========================================
a group of its own     ``start_new_session=True`` (setsid)  ``CREATE_NEW_PROCESS_GROUP``
(Ctrl-C aimed at the notebook kernel or the terminal must not reach the server)
ending it              SIGTERM, then SIGKILL, to the group  ``TerminateProcess`` (terminate, kill);
                       (``os.killpg``)                      the server's own children are not reached
waiting on its pipes   the event loop watches the fd        a thread does blocking reads and writes
                       (anyio's wait_readable/writable)     (:func:`read_in_thread`,
                                                            :class:`ThreadWrites`): neither the proactor
                                                            loop nor trio can watch a pipe
a bigger pipe buffer   ``F_SETPIPE_SZ`` (Linux only)        not available: skipped
has it read its stdin  ``FIONREAD`` on our write end        not seen: a probe's silence counts from
                       (Linux only; elsewhere as Windows)   the write (``client/opening.py``)
a server's SIGTERM     anyio's signal receiver, in the      not watched (no signal handlers on the
                       main thread (:func:`sigterm`)        proactor loop): it ends at end of stdin
=====================  ===================================  =========================================

The flags are module constants, read at the moment of use, so a test can force the Windows
column on Linux (``monkeypatch.setattr(portable, "WATCHES_PIPES", False)``) and run real servers
through it. Only the process-group flag cannot be forced (``creationflags`` is refused on POSIX):
:func:`new_group` takes the platform as an argument so both rows can be read anywhere.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any, Sequence

__all__ = ["WATCHES_PIPES", "SIGNALS_GROUPS", "SEES_STDIN_READ", "new_group", "end", "grow_pipe", "unread",
           "read_in_thread", "ThreadWrites", "close_fd", "sigterm", "command"]

POSIX = os.name == "posix"
WATCHES_PIPES = POSIX                      # the event loop can wait for a pipe's fd to be ready
SIGNALS_GROUPS = hasattr(os, "killpg")     # a signal can reach a whole process group
# FIONREAD on the write end of a pipe counts the bytes its reader has not taken yet on Linux. The BSDs and
# macOS keep a count per end, and the write end's may read 0 while the bytes wait: "read" too soon, so
# there the client keeps counting from the write, as on Windows.
SEES_STDIN_READ = sys.platform.startswith("linux")
CREATE_NEW_PROCESS_GROUP = 0x00000200      # subprocess.CREATE_NEW_PROCESS_GROUP, a Windows-only name
PIPE_BUFFER = 1 << 20                      # what we ask for a log pipe nobody may read for a while


def command(argv: str | Sequence[str | os.PathLike[str]]) -> list[str]:
    """The words that start a child: a string split as a shell would, paths as strings; a leading ``python``
    or ``python3`` is this interpreter (the one a notebook runs may not be the first on PATH)."""
    import shlex

    words = shlex.split(argv) if isinstance(argv, str) else [os.fspath(word) for word in argv]
    if not words:
        raise ValueError("expected a command to start the server, got an empty argv")
    return [sys.executable, *words[1:]] if words[0] in ("python", "python3") else words


def unread(fd: int) -> int | None:
    """Bytes in the pipe ``fd`` that its reader has not taken yet (``FIONREAD``); None where the system cannot say.

    On our write end of a child's stdin this tells whether the child has read what we sent: trust a 0
    only where :data:`SEES_STDIN_READ`."""
    try:
        import fcntl  # POSIX only
        import termios
    except ImportError:
        return None
    count = bytearray(4)  # a C int, filled in by the kernel
    try:
        fcntl.ioctl(fd, termios.FIONREAD, count)
    except (OSError, ValueError):  # closed, or not a pipe this system can count
        return None
    return int.from_bytes(count, sys.byteorder)


def new_group(platform: str = sys.platform) -> dict[str, Any]:
    """The keyword arguments that start a child in a process group of its own on ``platform``.

    >>> new_group("linux"), new_group("win32")
    ({'start_new_session': True}, {'creationflags': 512})
    """
    if platform == "win32":
        import subprocess  # here, not at the top: only Windows needs it, and every client imports this module

        return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", CREATE_NEW_PROCESS_GROUP)}
    return {"start_new_session": True}


def end(process: Any, *, hard: bool) -> None:
    """Ask ``process`` (and on POSIX its whole group) to stop; ``hard``: make it stop.

    ``process`` is a ``subprocess.Popen`` or an ``anyio.abc.Process``: both have ``pid``,
    ``terminate()`` and ``kill()``. A process that is already gone is not an error.
    """
    if SIGNALS_GROUPS:
        # new_group made the child the leader of its group, so the group's id is its pid; the group
        # outlives the leader while other members (the server's own children) remain.
        try:
            os.killpg(process.pid, signal.SIGKILL if hard else signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
        return
    try:
        (process.kill if hard else process.terminate)()
    except (ProcessLookupError, OSError):
        pass


def has_exited(pid: int) -> bool | None:
    """Has the child ``pid`` ended? Asked without reaping it (its waiter, the event loop's, still collects it).

    ``None`` where the system cannot say without reaping (Windows): the caller waits its budget out.
    A pid that is no longer our child (already reaped) has ended.
    """
    if not hasattr(os, "waitid"):
        return None
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def wait_exited(pid: int, within: float) -> bool:
    """Wait up to ``within`` seconds, without an event loop, for the child ``pid`` to end (see :func:`has_exited`);
    whether it did. Where the system cannot say, the whole wait, and False."""
    import time

    deadline = time.monotonic() + within
    while (ended := has_exited(pid)) is False and time.monotonic() < deadline:
        time.sleep(0.01)
    if ended is None:
        time.sleep(within)
    return bool(ended)


async def sigterm() -> None:
    """Return once this process receives SIGTERM; never where it cannot be watched (Windows, or a thread
    other than the main one, the only one that may watch signals)."""
    import anyio

    try:
        with anyio.open_signal_receiver(signal.SIGTERM) as signals:
            async for _ in signals:
                return
    except (ValueError, RuntimeError, NotImplementedError):
        await anyio.sleep_forever()


def grow_pipe(fd: int, size: int = PIPE_BUFFER) -> None:
    """Give a pipe a bigger buffer where the system allows it (Linux); elsewhere leave it as it is."""
    try:
        import fcntl
    except ImportError:  # Windows
        return
    request = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only, named since Python 3.10
    if request is not None:
        try:
            fcntl.fcntl(fd, request, size)
        except OSError:
            pass  # above the system's limit for an unprivileged user: the default buffer will do


# --- threads for pipes, where no event loop can watch one (Windows; and a regular file anywhere) ---------

def read_in_thread(fd: int, name: str) -> Any:
    """A memory stream of what a thread reads from ``fd`` with blocking reads, chunk by chunk, until end
    of file, when the stream ends. The thread then closes ``fd`` itself, so that its number is never
    reused under a read still in flight. Call it from the event loop that will read the stream."""
    import logging
    import math
    import threading

    import anyio.from_thread
    import anyio.lowlevel

    logging.getLogger("mcplab.pipes").debug("reading %s in a thread", name)
    send, chunks = anyio.create_memory_object_stream[bytes](math.inf)
    token = anyio.lowlevel.current_token()

    def read_until_eof() -> None:
        os.set_blocking(fd, True)  # the thread waits in the read itself
        try:
            while data := os.read(fd, 1 << 16):
                anyio.from_thread.run_sync(send.send_nowait, data, token=token)
            anyio.from_thread.run_sync(send.close, token=token)
        except Exception:  # a broken pipe, or the event loop has ended: nobody reads any more
            pass
        finally:
            close_fd(fd, notify=False)
    threading.Thread(target=read_until_eof, name="mcplab-pipe-reader", daemon=True).start()
    return chunks


class ThreadWrites:
    """``pipes.Writer`` where no event loop can watch the pipe: each write is a blocking one in a worker
    thread. A write the caller stopped waiting for goes on in its thread, and the next waits for it
    (whole messages, one after another); :meth:`close` leaves the descriptor to a write still stuck on
    a full pipe, which ends when the child does."""

    def __init__(self, fd: int) -> None:
        import threading

        self.fd, self.written, self.closed, self._lock = fd, 0, False, threading.Lock()

    async def write(self, data: bytes, stall: float) -> None:
        """Write every byte; TimeoutError after ``stall`` seconds (a reader that stopped reading)."""
        import anyio.to_thread

        with anyio.fail_after(stall):
            await anyio.to_thread.run_sync(self._write, memoryview(data), abandon_on_cancel=True)
        self.written += len(data)

    def _write(self, view: memoryview) -> None:
        with self._lock:
            if self.closed:
                return  # closed before this write began: the descriptor is no longer ours
            try:
                while view and not self.closed:
                    view = view[os.write(self.fd, view):]
            finally:
                if self.closed:  # close() came meanwhile and left the descriptor to us
                    close_fd(self.fd, notify=False)

    def close(self) -> None:
        if self.closed:
            return
        if self._lock.acquire(blocking=False):  # no write under way: the descriptor is ours to close
            self.closed = True
            close_fd(self.fd)
            self._lock.release()
        else:
            self.closed = True  # a thread still writes: it closes the descriptor once its write ends


def close_fd(fd: int, notify: bool = True) -> None:
    """Close ``fd``, first waking (``notify``) a task that waits on it; safe with no event loop, and twice."""
    if notify:
        try:
            import anyio

            anyio.notify_closing(fd)  # the waiting task gets ClosedResourceError
        except Exception:  # no event loop here (a notebook's cell hook): nobody can be waiting on it
            pass
    try:
        os.close(fd)
    except OSError:
        pass


def allow_past_deadlines(loop_class: Any) -> None:
    """Make ``loop_class`` run a timer whose moment has just passed at once, as asyncio's loop does.

    Pyodide's event loop (the browser edition's) refuses one with "Can't schedule in the past",
    and anyio's cancel scopes can ask for one: they compare the deadline with the clock, then
    schedule it, and the clock may move in between. Without this, a timeout in the page would
    now and then raise ValueError instead of expiring.
    """
    refusing = loop_class.call_later
    if getattr(refusing, "allows_past", False):
        return

    def call_later(self: Any, delay: float, callback: Any, *args: Any, **options: Any) -> Any:
        return refusing(self, max(delay, 0.0), callback, *args, **options)
    call_later.allows_past = True  # type: ignore[attr-defined]
    loop_class.call_later = call_later
