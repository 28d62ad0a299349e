"""Reading and writing a pipe from anyio without blocking the event loop, for both sides' stdio.

The event loop watches the descriptor, and the read or write that follows does not block. Where no
loop can watch it (a pipe on Windows, ``portable.WATCHES_PIPES``, which a test forces on Linux; a
regular file anywhere) threads do it, behind ``portable.py``. A read may be cancelled at any moment
and loses no byte: it is cancelled only while it waits, and a thread's chunks wait in a memory stream.
"""

from __future__ import annotations

import os

import anyio

from mcplab import portable

__all__ = ["Reader", "Writer", "CHUNK"]

CHUNK = 1 << 16


class Reader:
    """A pipe's read end, blocking or not: a server's stdin stays blocking (a terminal's shell would
    share its O_NONBLOCK), and it is read only once the loop has found it readable."""

    def __init__(self, fd: int, name: str = "a pipe") -> None:
        self.fd, self.name, self.closed = fd, name, False
        self._chunks = None if portable.WATCHES_PIPES else portable.read_in_thread(fd, name)

    async def read(self) -> bytes:
        """The next bytes that came; ``b""`` at end of file."""
        while self._chunks is None:
            try:
                await anyio.wait_readable(self.fd)
            except OSError:  # the loop cannot watch it (a regular file), or we closed it
                if self.closed:
                    raise anyio.ClosedResourceError from None
                self._chunks = portable.read_in_thread(self.fd, self.name)
                break
            if (data := self.read_now()) is not None:
                return data
        try:
            return await self._chunks.receive()
        except anyio.EndOfStream:
            return b""

    def read_now(self) -> bytes | None:
        """What has come (``b""``: end of file), or None; never waits, on a non-blocking descriptor."""
        try:
            return self._chunks.receive_nowait() if self._chunks is not None else os.read(self.fd, CHUNK)
        except (BlockingIOError, anyio.WouldBlock):
            return None
        except (OSError, anyio.EndOfStream):
            return b""  # the end of file, or the writer is gone

    def close(self) -> None:
        """Give the descriptor up (a task waiting on it gets ``ClosedResourceError``); safe from sync code."""
        if self._chunks is None and not self.closed:  # else its thread closes it at end of file
            portable.close_fd(self.fd)
        self.closed = True


class Writer:
    """A pipe's write end: :meth:`write` sends all of a message, one message after another (where no
    loop can watch the pipe, ``portable.ThreadWrites`` does the same with threads)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.written, self.closed = fd, 0, False  # written: bytes so far
        self._lock = anyio.Lock(fast_acquire=True)  # a free lock is taken without a trip through the loop
        os.set_blocking(fd, False)  # our end only: a full pipe must make us wait, not block the loop

    async def write(self, data: bytes, stall: float) -> None:
        """Write every byte; TimeoutError once half of it waited ``stall`` seconds for room."""
        async with self._lock:
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
                    with anyio.CancelScope(shield=True), anyio.fail_after(stall):
                        await anyio.wait_writable(self.fd)

    def close(self) -> None:
        """Give the descriptor up (the reader sees end of file); safe from sync code, and twice."""
        if not self.closed:
            portable.close_fd(self.fd)
        self.closed = True
