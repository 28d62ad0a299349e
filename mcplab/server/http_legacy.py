"""A legacy Streamable HTTP session (revisions 2025-03-26 … 2025-11-25): one client, many POSTs.

Theory of operation
-------------------
The reply to ``initialize`` carries ``Mcp-Session-Id``; every later POST sends it back, and the
endpoint (``http.py``) finds the :class:`Session` by it. A session holds one toolkit
``Connection``, so ``Server.handle`` sees a session exactly as it sees a stdio connection.

The session is also the toolkit's ``Peer``: what a tool posts while it runs (progress, log
messages, a server→client request such as ``elicitation/create``) goes on the event stream of the
request it belongs to, and the client's answer to such a request arrives as a POST of its own,
which :meth:`Session.receive` matches by id. A notification that belongs to no request
(``list_changed``) is dropped: this server offers no standalone GET stream.

A request runs as a task of the session, not of the HTTP exchange: a client that disconnects has
not cancelled its request (spec "transports"); ``notifications/cancelled`` or the end of the
session (DELETE, or the server stopping) does.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.responses import Response as HTTPResponse
from starlette.responses import StreamingResponse

from mcplab.errors import INVALID_REQUEST, RemoteProtocolError, TransportError
from mcplab.jsonrpc import ErrorResponse, Message, Notification, Request, RequestId, Response
from mcplab.server.http_replies import SSE_TYPE, Stream, json_reply
from mcplab.server.peer import RunnerPeer
from mcplab.server.toolkit import USER_CODE, Server

__all__ = ["Session"]

log = logging.getLogger("mcplab.server.http")


class Session(RunnerPeer):
    """One client's session: a toolkit Connection, its running requests, and the way back (a ``Peer``)."""

    def __init__(self, server: Server, session_id: str) -> None:
        super().__init__(server)
        self.id = session_id
        self.streams: dict[RequestId, Stream] = {}
        self.connection = server.connect(self)

    # --- Peer: the way back to the client ---------------------------------------------------------
    def post(self, message: Message, *, related_to: RequestId | None = None) -> None:
        stream = self.streams.get(related_to)  # type: ignore[arg-type]
        if stream is None:
            log.debug("dropped %s: no open stream for it (related to %r)", getattr(message, "method", message),
                      related_to)
            return
        stream.put(message)

    def deliver(self, request: Request, related_to: RequestId | None) -> None:
        stream = self.streams.get(related_to)  # type: ignore[arg-type]
        if stream is None:
            raise TransportError(f"cannot send {request.method}: on HTTP it travels on the stream of the "
                                 f"request it serves, and request {related_to!r} has none (no standalone GET "
                                 f"stream here)")
        stream.put(request)

    # --- what the client POSTs ----------------------------------------------------------------------
    async def receive(self, message: Notification | Response | ErrorResponse) -> None:
        """A notification goes to the toolkit; a response wakes the tool that asked the client."""
        if isinstance(message, Notification):
            await self.server.handle(message, self.connection)
            return
        try:
            waiter = self.pending.resolve(message)
        except RemoteProtocolError as exc:
            log.warning("%s", exc)
            return
        if not waiter.done():
            waiter.set_result(message)

    async def answer(self, request: Request) -> HTTPResponse:
        """JSON if the reply is all there is; SSE once something is posted before it."""
        if request.method not in USER_CODE:  # answered from the catalogue: nothing can come before the reply
            return json_reply(await self.server.handle(request, self.connection))  # type: ignore[arg-type]
        if request.id in self.streams:
            return json_reply(ErrorResponse(request.id, INVALID_REQUEST, f"expected a fresh request id: "
                                            f"{request.id!r} belongs to a request still running"))
        stream = self.streams[request.id] = Stream()
        self.tasks[request.id] = asyncio.get_running_loop().create_task(self._run(request, stream))
        await stream.wake.wait()
        if stream.done and len(stream.outbox) == 1:
            return json_reply(stream.outbox.popleft())
        return StreamingResponse(stream.events(), media_type=SSE_TYPE, headers={"Cache-Control": "no-cache"})

    async def _run(self, request: Request, stream: Stream) -> None:
        reply = None
        try:
            reply = await self.server.handle(request, self.connection)
        except asyncio.CancelledError:
            pass  # cancelled by the client or the session ended: no response is sent
        finally:
            self.tasks.pop(request.id, None)
            self.streams.pop(request.id, None)
            stream.finish(reply)

    def close(self) -> None:
        for task in list(self.tasks.values()):
            task.cancel()
        for request_id in list(self.pending):
            waiter = self.pending.discard(request_id)
            if waiter is not None and not waiter.done():
                waiter.set_exception(TransportError("the session ended before the client answered"))
