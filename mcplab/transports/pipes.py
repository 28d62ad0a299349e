"""Our ends of a child's pipes, read and written without blocking the event loop, on any platform.

Theory of operation
-------------------
The stdio transport keeps its ends of the server's three pipes as raw file descriptors and reads
and writes them through one of two classes with the same verbs:

    read_now()       the bytes that have arrived, b"" at end of file, None when nothing has yet
    poll(window)     True once read_now() has something to say, looking for up to ``window`` seconds
                     without sleeping (False: nothing came; the caller may wait_readable)
    wait_readable(also)  return when read_now() has something to say, or ``also``'s read_now()
                     does (exactly on asyncio; else ``also`` is looked at every POLL seconds)
    write_now(data)  the bytes written at once without waiting (0 when the pipe is full)
    unread()         of the bytes written, how many the other end has not read yet (None: cannot tell)
    write_all(data, stall, sent)  write every byte from ``sent`` on, waiting while the pipe is full
                     (WriteStalled after ``stall`` seconds with half a message out)
    close()          give the descriptor up (a task waiting on it gets ClosedResourceError)

* :class:`WatchedPipe` (POSIX, on asyncio and trio alike): the descriptor is non-blocking, reading
  is ``os.read`` (which says ``BlockingIOError`` when nothing is there) and waiting is the event
  loop's. On asyncio a read end stays registered with the loop (``add_reader``) from its first wait
  until a turn finds it readable with nobody waiting: a request-reply loop thus pays no
  ``epoll_ctl`` per wait, and one future serves stdout and stderr together. On trio waiting is
  ``anyio.wait_readable``/``wait_writable``. No thread, no task.
* :class:`ThreadedPipe` (Windows, where neither the proactor loop nor trio can watch a pipe): the
  descriptor stays blocking. A read end gets a daemon thread doing blocking reads; each chunk is
  queued and the event loop is woken with its own thread-safe call (``call_soon_threadsafe`` on
  asyncio, the trio token's ``run_sync_soon``). A write goes to a worker thread; a lock makes
  writes whole lines, one after another, even when the caller gave up waiting for one.
  The thread owns a read end: it closes the descriptor at end of file, so the number is never
  reused under a read still in flight. Ending the child is what brings end of file.

``portable.WATCHES_PIPES`` chooses; tests force the threaded class on Linux and run real servers
through it.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Callable

import anyio

from mcplab import portable

if TYPE_CHECKING:
    import asyncio

__all__ = ["WatchedPipe", "ThreadedPipe", "WriteStalled", "CHUNK", "POLL"]

CHUNK = 1 << 16
POLL = 0.05  # seconds between looks at ``also`` where a wait cannot watch two pipes at once
_yield_cpu = getattr(os, "sched_yield", lambda: None)  # POSIX; elsewhere poll() looks again at once


class WriteStalled(Exception):
    """The reader stopped reading in the middle of a message for longer than we wait."""


class WatchedPipe:
    """A non-blocking descriptor the event loop watches (POSIX)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.set_blocking(fd, False)
        self._loop: asyncio.AbstractEventLoop | None = None  # the asyncio loop watching fd, while one does
        self._waiter: asyncio.Future[None] | None = None     # the wait it wakes, while a task waits
        self._early: bytes | None = None  # what _ready() read to wake the waiter, for the next read_now()
        self._closed = False

    def read_now(self) -> bytes | None:
        if self._early is not None:
            data, self._early = self._early, None
            return data
        try:
            return os.read(self.fd, CHUNK)
        except BlockingIOError:
            return None

    def poll(self, window: float) -> bool:
        # Between looks the CPU goes to whoever is ready (the server, if it shares our CPU): a look
        # is one read, and a reply found this way saves the sleep and wake-up of waiting for it.
        end = time.perf_counter() + window
        while self._early is None:
            _yield_cpu()
            try:
                self._early = os.read(self.fd, CHUNK)
            except BlockingIOError:
                if time.perf_counter() >= end:
                    return False
            except OSError:
                return True  # read_now() meets the error and says so
        return True

    async def wait_readable(self, also: WatchedPipe | None = None) -> None:
        try:
            loop = _running_asyncio_loop()
        except RuntimeError:  # trio: anyio's wait, watching ``also`` by polling
            with anyio.move_on_after(POLL if also is not None else math.inf):
                await anyio.wait_readable(self.fd)
            return
        if self._early is not None or (also is not None and also._early is not None):
            return  # a watch read bytes that nobody has taken yet
        pipes = (self,) if also is None else (self, also)
        waiter: asyncio.Future[None] = loop.create_future()
        try:
            for pipe in pipes:
                pipe._watch(loop, waiter)
            await waiter
        finally:
            for pipe in pipes:
                pipe._waiter = None

    def _watch(self, loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[None]) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._loop is not loop:
            self._unwatch()
            loop.add_reader(self.fd, self._ready)
            self._loop = loop
        self._waiter = waiter

    def _ready(self) -> None:
        """The loop saw the descriptor readable: wake the waiting task, or stop watching if there is none
        (epoll is level-triggered: unread bytes would call us again on every turn of the loop)."""
        if self._waiter is None:
            self._unwatch()
        elif not self._waiter.done():
            # Read here, once: the report may be stale (a task read the bytes since the loop polled), and
            # the woken task would otherwise read again while the loop reports the same bytes once more.
            if self._early is None:
                try:
                    self._early = os.read(self.fd, CHUNK)
                except BlockingIOError:
                    return
                except OSError:
                    pass  # the task's own read_now() meets the error
            self._waiter.set_result(None)

    def _unwatch(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None:
            try:
                loop.remove_reader(self.fd)
            except Exception:  # that loop is closed: it watches nothing any more
                pass

    def write_now(self, data: bytes) -> int:
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0

    def unread(self) -> int | None:
        """Bytes in the pipe that its reader has not taken yet; None where the system cannot say."""
        return portable.unread(self.fd)

    async def write_all(self, data: bytes, stall: float, sent: int = 0) -> None:
        view = memoryview(data)[sent:]
        while view:
            try:
                view = view[os.write(self.fd, view):]
            except BlockingIOError:
                if len(view) == len(data):
                    await anyio.wait_writable(self.fd)  # nothing sent yet: fine to cancel here
                    continue
                # Half a message is out: finish it even if the caller is cancelled, or every later
                # line would be glued to the fragment and the framing is lost.
                with anyio.CancelScope(shield=True), anyio.move_on_after(stall) as stalled:
                    await anyio.wait_writable(self.fd)
                if stalled.cancelled_caught:
                    raise WriteStalled from None

    def close(self) -> None:
        self._closed = True
        self._unwatch()  # first: a loop must never watch a closed (and soon reused) descriptor number
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(anyio.ClosedResourceError())
        anyio.notify_closing(self.fd)  # wakes a task in anyio's waits, with ClosedResourceError
        try:
            os.close(self.fd)
        except OSError:
            pass


class ThreadedPipe:
    """A blocking descriptor served by threads, for event loops that cannot watch pipes (Windows)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._chunks: deque[bytes] = deque()  # appended by the reader thread, taken on the loop
        self._waiter: anyio.Event | None = None
        self._reader: threading.Thread | None = None
        self._write_lock = threading.Lock()   # whole messages, one after another
        self._closed = False

    # --- reading -------------------------------------------------------------------------------------
    def read_now(self) -> bytes | None:
        self._start_reader()
        return self._chunks.popleft() if self._chunks else None

    def poll(self, window: float) -> bool:
        return bool(self._chunks)  # a reader thread delivers: looking again would only take its CPU

    async def wait_readable(self, also: ThreadedPipe | None = None) -> None:
        self._start_reader()
        with anyio.move_on_after(POLL if also is not None else math.inf):
            while not self._chunks:
                if self._closed:
                    raise anyio.ClosedResourceError
                self._waiter = anyio.Event()
                await self._waiter.wait()

    def _start_reader(self) -> None:
        if self._reader is None and not self._closed:
            self._reader = threading.Thread(target=self._read_until_eof, args=(_wake_on_this_loop(self._wake),),
                                            name="mcplab-pipe-reader", daemon=True)
            self._reader.start()

    def _read_until_eof(self, wake: Callable[[], None]) -> None:
        data = b"-"
        while data:
            try:
                data = os.read(self.fd, CHUNK)
            except OSError:
                data = b""
            self._chunks.append(data)
            try:
                wake()
            except Exception:  # the event loop has finished (asyncio: RuntimeError, trio: RunFinishedError)
                break
        os.close(self.fd)

    def _wake(self) -> None:
        if self._waiter is not None:
            self._waiter.set()

    # --- writing -------------------------------------------------------------------------------------
    def write_now(self, data: bytes) -> int:
        return 0  # the descriptor blocks: only a worker thread may write it

    def unread(self) -> int | None:
        return None  # Windows pipes do not say how much their reader has taken

    async def write_all(self, data: bytes, stall: float, sent: int = 0) -> None:
        assert sent == 0, "write_now() never sends part of a message here"
        # A thread finishes the message even if we stop waiting for it (a cancelled send may still go
        # out whole); the stall bound is how long we wait for a reader that stopped reading.
        with anyio.move_on_after(stall) as stalled:
            await anyio.to_thread.run_sync(self._write_blocking, data, abandon_on_cancel=True)
        if stalled.cancelled_caught:
            raise WriteStalled

    def _write_blocking(self, data: bytes) -> None:
        with self._write_lock:
            if self._closed:
                raise anyio.ClosedResourceError
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]

    # --- closing -------------------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._waiter is not None:
            self._waiter.set()
        if self._reader is not None:
            return  # the reader thread closes the descriptor at end of file, never under itself
        if self._write_lock.acquire(blocking=False):  # no write in flight: nobody else uses the number
            try:
                os.close(self.fd)
            except OSError:
                pass
            finally:
                self._write_lock.release()
        else:  # a write thread is blocked on a full pipe: it ends with the child, then closes
            threading.Thread(target=self._close_after_write, name="mcplab-pipe-closer", daemon=True).start()

    def _close_after_write(self) -> None:
        with self._write_lock:
            try:
                os.close(self.fd)
            except OSError:
                pass


def _running_asyncio_loop() -> asyncio.AbstractEventLoop:
    """The running asyncio loop; RuntimeError on another backend. asyncio is not imported here: a client
    that only imports mcplab should not pay for it (anyio loads it when a loop starts)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        raise RuntimeError("no asyncio loop is running")
    return asyncio.get_running_loop()


def _wake_on_this_loop(callback: Callable[[], None]) -> Callable[[], None]:
    """A function another thread may call to run ``callback`` on the running event loop, soon."""
    try:
        loop = _running_asyncio_loop()
    except RuntimeError:  # not asyncio: anyio's other backend
        import trio

        token = trio.lowlevel.current_trio_token()
        return lambda: token.run_sync_soon(callback)
    return lambda: loop.call_soon_threadsafe(callback)
