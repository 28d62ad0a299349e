"""Deadlines for slow HTTP clients: a request's head and body must arrive in bounded time.

Theory of operation
-------------------
A client can hold a server's connection open by sending its request slowly: one byte of a header
every few seconds, or half a body and then nothing ("slowloris"). Each such connection costs the
server a socket and a buffer for as long as the client likes, and the server never gets to answer.
uvicorn closes a connection that is idle *between* requests (its keep-alive timeout, set to
:data:`KEEP_ALIVE`) but waits forever for the rest of a request. So:

* :class:`HeadDeadline` is uvicorn's HTTP/1.1 protocol with one more timer: from the moment a
  connection opens, or a response has been sent on it, the client has :data:`HEAD_TIMEOUT` seconds
  to send a complete request line and headers; otherwise the connection is closed. (Header *size* is
  already bounded by h11: 16 KiB.)
* the endpoint (app.py) reads a body within :data:`BODY_TIMEOUT` seconds, or answers 408.

The timer reads these module constants when it fires, so a test can shorten them.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import h11

if sys.platform == "emscripten":  # the page: no socket for a head to trickle in on, and no uvicorn; the app
    H11Protocol = object          # there is called in process (in_page.py), where only BODY_TIMEOUT applies
else:
    from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HeadDeadline", "HEAD_TIMEOUT", "BODY_TIMEOUT", "KEEP_ALIVE"]

HEAD_TIMEOUT = 10.0  # seconds a client has to send a request line and headers
BODY_TIMEOUT = 30.0  # seconds a client has to send a whole body (4 MiB at a slow 150 KB/s)
# Seconds an idle connection is kept between requests. A client gives up its own idle connections
# after a while (httpx after 5 s, which is also uvicorn's default keep-alive); were the server to close
# one at that same moment, a request sent on it just then would meet a closing socket (httpx says
# ReadError). So the server waits longer than clients do, and the client closes first. It stays below
# HEAD_TIMEOUT, which would close an idle connection anyway.
KEEP_ALIVE = 8


class HeadDeadline(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose next request head does not arrive in time."""

    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def _watch(self) -> None:
        """A head is awaited (h11 says the client is IDLE): keep a deadline running; else none."""
        if self.conn.their_state is h11.IDLE:
            if self._deadline is None:
                self._deadline = self.loop.call_later(HEAD_TIMEOUT, self._too_slow)
        else:
            self._stop()

    def _stop(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()  # nothing to answer: the request never arrived
