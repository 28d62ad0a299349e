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
events completed so far; it keeps the tail of an unfinished line for the next chunk. Unlike a
browser it also hands over events with empty data if they set an id or a retry, because that is
what a 2025-11-25 "priming" event is, and the trace should show it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SSEParser", "SSEEvent"]


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event: ``data`` (lines joined by \\n), the ``event`` type, the last ``id``, ``retry``."""
    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


_LINE_END = re.compile(rb"\r\n|\r|\n")


class SSEParser:
    """The event-stream format: bytes in, events out.

    >>> SSEParser().feed(b"event: message\\r\\ndata: {}\\r\\n\\r\\n")
    [SSEEvent(data='{}', event='message', id=None, retry=None)]
    """

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._event = ""
        self._fields = False   # this event set an id or a retry
        self._retry: int | None = None
        self._started = False
        self.last_id: str | None = None
        self.retry: int | None = None   # the latest reconnection time, in ms

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buffer += chunk
        events: list[SSEEvent] = []
        start = 0
        while match := _LINE_END.search(self._buffer, start):
            if match.group() == b"\r" and match.end() == len(self._buffer):
                break  # a CR at the end of a chunk may be the first half of CRLF: wait for the next byte
            event = self._line(self._buffer[start:match.start()].decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
            start = match.end()
        self._buffer = self._buffer[start:]
        return events

    def end(self) -> list[SSEEvent]:
        """The stream ended: a CR held back is a line end after all (an unfinished event is dropped)."""
        if not self._buffer.endswith(b"\r"):
            return []
        return self.feed(b"\n")

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
        return event
