"""Server-sent events, sans-IO: the ``text/event-stream`` format a Streamable HTTP reply may use.

Theory of operation
-------------------
WHATWG HTML, "server-sent events". A stream is lines; lines end in CRLF, LF or CR. A line is
``field: value`` (one optional space after the colon), a comment (starts with ``:``), or empty,
which dispatches the event gathered so far::

    event: message                 the event type (default "message")
    id: 17                         the last event id: a client may resume after it (legacy HTTP)
    retry: 500                     how long to wait before reconnecting, in ms
    data: {"jsonrpc":"2.0",...}    data lines accumulate, joined by \\n
                                   ← the empty line: dispatch

:class:`SSEParser` takes bytes as they arrive (``feed``), in chunks of any size, and returns the
events completed so far; it keeps the pieces of an unfinished line for the next chunk. Unlike a
browser it also hands over events with empty data if they set an id or a retry, because that is
what a 2025-11-25 "priming" event is, and the trace should show it.

The work is linear in the bytes fed, however the stream is cut: each chunk is searched for line
ends once, from where the last search stopped, and the pieces of a long line are joined once, when
it ends (joining them at every chunk would copy a 50 MiB line thousands of times). ``max_event``
bounds the bytes of one event (its lines, data included): a peer may not make us hold more, and
:class:`EventTooLarge` says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SSEParser", "SSEEvent", "EventTooLarge"]


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event: ``data`` (lines joined by \\n), the ``event`` type, the last ``id``, ``retry``."""
    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


_LINE_END = re.compile(rb"\r\n|\r|\n")


class EventTooLarge(ValueError):
    """One event held more bytes than the parser's ``max_event``."""


class SSEParser:
    """The event-stream format: bytes in, events out.

    >>> SSEParser().feed(b"event: message\\r\\ndata: {}\\r\\n\\r\\n")
    [SSEEvent(data='{}', event='message', id=None, retry=None)]
    """

    def __init__(self, max_event: int | None = None) -> None:
        self.max_event = max_event
        self._pieces: list[bytes] = []   # the unfinished line, as it came
        self._size = 0                   # bytes of the event so far, unfinished line included
        self._after_cr = False           # the last chunk ended in CR: an LF first in the next one ends nothing
        self._data: list[str] = []
        self._event = ""
        self._fields = False   # this event set an id or a retry
        self._retry: int | None = None
        self._started = False
        self.last_id: str | None = None
        self.retry: int | None = None   # the latest reconnection time, in ms

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        start = 1 if self._after_cr and chunk[:1] == b"\n" else 0  # the LF of a CRLF cut in two
        self._after_cr = False
        while match := _LINE_END.search(chunk, start):
            self._pieces.append(chunk[start:match.start()])
            self._grow(match.end() - start)
            line = b"".join(self._pieces)
            self._pieces = []
            event = self._line(line.decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
            start = match.end()
            self._after_cr = match.group() == b"\r" and start == len(chunk)
        if start < len(chunk):
            self._pieces.append(chunk[start:])
            self._grow(len(chunk) - start)
        return events

    def end(self) -> list[SSEEvent]:
        """The stream ended: an unfinished line and an undispatched event are dropped, as a browser does."""
        self._pieces, self._size = [], 0
        return []

    def _grow(self, size: int) -> None:
        self._size += size
        if self.max_event is not None and self._size > self.max_event:
            raise EventTooLarge(f"an event of more than {self.max_event} bytes: the most this client reads "
                                f"in one message")

    def _line(self, line: str) -> SSEEvent | None:
        if not self._started:
            self._started = True
            line = line.removeprefix("\ufeff")
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: servers send them to keep a quiet connection alive
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self.last_id, self._fields = value, True
        elif name == "retry" and value.isdigit():
            self.retry = self._retry = int(value)
            self._fields = True
        return None

    def _dispatch(self) -> SSEEvent | None:
        event = None
        if self._data or self._fields:
            event = SSEEvent("\n".join(self._data), self._event or "message", self.last_id, self._retry)
        self._data, self._event, self._fields, self._retry = [], "", False, None
        self._size = 0
        return event
