"""Reading and writing a pipe from anyio without blocking the event loop, on POSIX and Windows.

On POSIX the event loop watches the descriptor (``anyio.wait_readable``/``wait_writable``) and the
read or write that follows does not block. No event loop can watch a pipe on Windows, so there a
thread does the blocking reads and writes (``portable.WATCHES_PIPES`` says which; a test forces the
threads on Linux). A reader also moves to a thread when the loop refuses a descriptor (a server's
stdin redirected from a file or /dev/null). A read may be cancelled at any moment and loses no
byte: on POSIX it is cancelled only while it waits, and a thread hands its chunks over a memory
stream, which keeps them. A reading thread owns its descriptor and closes it at end of file, so
the number is never reused under a read still in flight.
"""

from __future__ import annotations

import logging
import math
import os
import threading

import anyio
import anyio.from_thread
import anyio.lowlevel

from mcplab import portable

__all__ = ["Reader", "Writer", "WriteStalled", "CHUNK"]

CHUNK = 1 << 16
log = logging.getLogger("mcplab.pipes")


class WriteStalled(Exception):
    """The reader stopped reading in the middle of a message for longer than we wait."""


class Reader:
    """A pipe's read end. A non-blocking descriptor (our end of a child's pipe) is read before any
    wait, for the bytes are often there; a blocking one (a server's own stdin) only once the loop
    says it is readable, for O_NONBLOCK would be shared with the shell of a terminal."""

    def __init__(self, fd: int, name: str = "a pipe") -> None:
        self.fd, self.name = fd, name
        self._chunks: anyio.abc.ObjectReceiveStream[bytes] | None = None  # a thread's, once one reads
        self._read_first = portable.WATCHES_PIPES and not os.get_blocking(fd)

    async def read(self) -> bytes:
        """The next bytes that came; ``b""`` at end of file."""
        if self._chunks is None and portable.WATCHES_PIPES:
            if self._read_first and (data := self.read_now()) is not None:
                return data
            while True:
                try:
                    await anyio.wait_readable(self.fd)
                except OSError:  # a descriptor the loop cannot watch: a thread reads it
                    break
                if (data := self.read_now(ready=True)) is not None:
                    return data
        self._start_thread()
        try:
            return await self._chunks.receive()
        except anyio.EndOfStream:
            return b""

    def read_now(self, *, ready: bool = False) -> bytes | None:
        """What has come (``b""``: end of file), or None if nothing has yet or it cannot tell without waiting."""
        if not portable.WATCHES_PIPES:
            self._start_thread()
        if self._chunks is not None:
            try:
                return self._chunks.receive_nowait()
            except anyio.WouldBlock:
                return None
            except anyio.EndOfStream:
                return b""
        if not (ready or self._read_first):
            return None
        try:
            return os.read(self.fd, CHUNK)
        except BlockingIOError:
            return None
        except OSError:
            return b""  # as the end of file: the writer is gone

    def _start_thread(self) -> None:
        if self._chunks is None:
            log.debug("reading %s in a thread", self.name)
            send, self._chunks = anyio.create_memory_object_stream[bytes](math.inf)
            threading.Thread(target=_read_until_eof, args=(self.fd, send, anyio.lowlevel.current_token()),
                             name="mcplab-pipe-reader", daemon=True).start()

    def close(self) -> None:
        """Give the descriptor up (a task waiting on it gets ``ClosedResourceError``); safe from sync code."""
        if self._chunks is None:  # else the thread closes it at end of file, never under its own read
            _close(self.fd)


def _read_until_eof(fd: int, chunks: anyio.abc.ObjectSendStream[bytes], token: object) -> None:
    try:
        os.set_blocking(fd, True)  # a thread waits in the read itself
        while data := _read_blocking(fd):
            anyio.from_thread.run_sync(chunks.send_nowait, data, token=token)
        anyio.from_thread.run_sync(chunks.close, token=token)
    except Exception:  # the event loop has ended: nobody reads any more
        pass
    finally:
        _close(fd, notify=False)


class Writer:
    """A pipe's write end: :meth:`write` sends all of a message, one message after another."""

    def __init__(self, fd: int) -> None:
        self.fd, self.written, self.closed = fd, 0, False
        self._lock = anyio.Lock(fast_acquire=True)  # a free lock is taken without a trip through the loop
        self._thread_lock = threading.Lock()  # Windows: a write we stopped waiting for may still run
        if portable.WATCHES_PIPES:
            os.set_blocking(fd, False)  # our end only: a full pipe must make us wait, not block the loop

    async def write(self, data: bytes, stall: float) -> None:
        """Write every byte; :class:`WriteStalled` once half of it waited ``stall`` seconds for room."""
        async with self._lock:
            if not portable.WATCHES_PIPES:
                with anyio.move_on_after(stall) as late:
                    await anyio.to_thread.run_sync(self._write_blocking, data, abandon_on_cancel=True)
                if late.cancelled_caught:
                    raise WriteStalled
                return
            view = memoryview(data)
            while view:
                try:
                    sent = os.write(self.fd, view)
                    view, self.written = view[sent:], self.written + sent
                except BlockingIOError:
                    if len(view) == len(data):
                        await anyio.wait_writable(self.fd)  # nothing out yet: a cancel here loses nothing
                        continue
                    # Half a message is out: finish it even if our caller is cancelled, or the next
                    # message would be glued to the fragment and the framing lost for good.
                    with anyio.CancelScope(shield=True), anyio.move_on_after(stall) as late:
                        await anyio.wait_writable(self.fd)
                    if late.cancelled_caught:
                        raise WriteStalled from None

    def _write_blocking(self, data: bytes) -> None:
        with self._thread_lock:
            view = memoryview(data)
            try:
                while view and not self.closed:
                    view = view[os.write(self.fd, view):]
            finally:
                self.written += len(data) - len(view)
                if self.closed:  # close() came meanwhile and left the descriptor to us
                    _close(self.fd, notify=False)

    def unread(self) -> int | None:
        """Of the bytes written, how many the reader has not taken yet; None where the system cannot say."""
        return portable.unread(self.fd) if portable.WATCHES_PIPES else None

    def close(self) -> None:
        """Give the descriptor up (the reader sees end of file); safe from sync code, and twice."""
        if not self.closed:
            self.closed = True
            if self._thread_lock.acquire(blocking=False):  # else a thread still writes: it closes it
                _close(self.fd)
                self._thread_lock.release()


def _read_blocking(fd: int) -> bytes:
    try:
        return os.read(fd, CHUNK)
    except OSError:
        return b""


def _close(fd: int, notify: bool = True) -> None:
    if notify:
        try:
            anyio.notify_closing(fd)  # wakes a task waiting on it, with ClosedResourceError
        except Exception:  # no event loop here (a notebook's cell hook): nobody can be waiting on it
            pass
    try:
        os.close(fd)
    except OSError:
        pass
