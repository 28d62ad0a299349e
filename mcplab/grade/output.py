"""What a client printed, read as it comes and kept at both ends: the grader's memory stays flat.

Theory of operation
-------------------
The client grader must read a student's stdout and stderr while the client runs (a pipe nobody reads
fills, and its writer blocks), and must not keep what it reads without end: a client that prints
256 MiB would cost the grader that much several times over. So each stream keeps its first and its
last :data:`KEPT` bytes and counts the rest (:class:`Kept`); the text a check reads has an ellipsis
line where the middle was, and the card says how much was cut.

:class:`Output` watches both pipes with one selector, and the keeper's socket with them when there
is one (keeper.py: it turns readable when the client exits), so waiting for the exit and draining
the pipes are one loop, without threads.
"""

from __future__ import annotations

import os
import selectors
import time
from typing import Callable

from mcplab.grade.keeper import Tree

KEPT = 64 << 10  # bytes of each stream kept at either end: its head and its tail
POLL = 0.05      # seconds between looks at the client's exit where nothing wakes us for it (no keeper)
CHUNK = 1 << 16


class Kept:
    """The first and the last ``size`` bytes of a stream, and how many came in all.

    >>> kept = Kept(4); kept.add(b"0123456789"); kept.text(), kept.total
    ('0123\\n…\\n6789', 10)
    """

    def __init__(self, size: int = KEPT) -> None:
        self.size, self.total = size, 0
        self.head, self.tail = bytearray(), bytearray()

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.size - len(self.head)
        self.head += data[:max(room, 0)]
        self.tail += data[max(room, 0):]
        del self.tail[:-self.size]

    @property
    def cut(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        middle = "\n…\n".encode("utf-8") if self.cut else b""
        return bytes(self.head + middle + self.tail).decode("utf-8", "replace")


class Output:
    """The client's stdout and stderr, read as they come (so it never blocks on a full pipe), kept in part."""

    def __init__(self, tree: Tree) -> None:
        self.kept = {"stdout": Kept(), "stderr": Kept()}
        self.selector = selectors.DefaultSelector()
        for name in self.kept:
            pipe = getattr(tree, name)
            os.set_blocking(pipe.fileno(), False)
            self.selector.register(pipe, selectors.EVENT_READ, name)
        self.wakes = tree.fileno() is not None  # the keeper's socket turns readable when the client exits
        if self.wakes:
            self.selector.register(tree.fileno(), selectors.EVENT_READ, "exit")  # type: ignore[arg-type]

    def read_until(self, done: Callable[[], bool], deadline: float) -> bool:
        """Read until ``done()`` (True) or ``deadline`` (False)."""
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            for key, _ in self.selector.select(left if self.wakes else min(left, POLL)):
                if key.data != "exit":  # that one is read by done(): the tree's poll()
                    self._read(key)
        return True

    def _read(self, key: selectors.SelectorKey) -> None:
        try:
            data = os.read(key.fd, CHUNK)
        except BlockingIOError:
            return
        if data:
            self.kept[key.data].add(data)
        else:
            self.selector.unregister(key.fileobj)

    def read_for(self, seconds: float) -> None:
        self.read_until(lambda: False, time.monotonic() + seconds)

    def close(self) -> None:
        """Read what is left without waiting (where there is no keeper, an escaped process may hold a pipe)."""
        for key in list(self.selector.get_map().values()):
            if key.data == "exit":
                continue
            try:
                while data := os.read(key.fd, CHUNK):
                    self.kept[key.data].add(data)
            except BlockingIOError:
                pass
            key.fileobj.close()  # type: ignore[union-attr]
        self.selector.close()
