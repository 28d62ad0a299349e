"""A legacy Streamable HTTP session (revisions 2025-03-26 … 2025-11-25): one client, many POSTs.

Theory of operation
-------------------
The reply to ``initialize`` carries ``Mcp-Session-Id``; every later POST sends it back, and the
endpoint (``app.py``) finds the :class:`Session` by it. A session holds one toolkit
``ClientState``, so ``Server.handle`` sees a session exactly as it sees a stdio connection.

The session is also the toolkit's ``Peer``: what a tool posts while it runs (progress, log
messages, a server→client request such as ``elicitation/create``) goes on the event stream of the
request it belongs to, and the client's answer to such a request arrives as a POST of its own,
which :meth:`Session.receive` matches by id. A message that belongs to no request still open
(``notifications/tools/list_changed``, ``notifications/resources/updated``) goes on the session's
standalone stream, the one a client opens with GET (spec "transports", "Listening for Messages from
the Server"): one per session (a second GET gets 409), each message on one stream only. With no
such stream open it is dropped: nothing waits for a client that never listens.

In a 2025-11-25 session the event stream that answers a POST opens with a priming event (an id
and empty data: the spec's SHOULD for those streams). The GET stream opens with nothing: this
server never closes it early, so there is nothing to resume it from. Event ids are unique within
the session; this server replays nothing (resumption is a MAY), so a GET with ``Last-Event-ID``
is a plain GET.

A session belongs to whoever opened it: :attr:`Session.owner` is the identity the ``initialize``
request carried (with ``--auth``: the token's issuer, client and subject; else None), and the
endpoint finds the session only for requests of that same identity (app.py).

A request runs as a task of the session, not of the HTTP exchange: a client that disconnects has
not cancelled its request (spec "transports"); ``notifications/cancelled`` or the end of the
session (DELETE, or the server stopping) does. The task lives in the app's task group (opened for
the app's lifetime, app.py) inside a cancel scope of its own, which is what ``tasks`` keeps by id.
"""

from __future__ import annotations

import logging

import anyio
import anyio.abc

from starlette.responses import Response as HTTPResponse
from starlette.responses import StreamingResponse

from mcplab.wire import jsonrpc
from mcplab.wire.errors import TransportError
from mcplab.wire.jsonrpc import ErrorResponse, Message, Notification, Request, RequestId, Response
from mcplab.server.streamable_http.replies import SSE_TYPE, Refusal, Stream, json_reply
from mcplab.server.peer import RunnerPeer
from mcplab.server.toolkit import USER_CODE, Server
from mcplab.wire.versions import at_least

__all__ = ["Session"]

log = logging.getLogger("mcplab.server.streamable_http")

PRIMING_SINCE = "2025-11-25"  # the revision whose SSE streams SHOULD open with a priming event
KEEPALIVE_SECONDS = 15.0      # an SSE comment this often on a quiet standalone stream
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class Session(RunnerPeer):
    """One client's session: the toolkit's ClientState, its running requests, and the way back (a ``Peer``)."""

    def __init__(self, server: Server, session_id: str, group: anyio.abc.TaskGroup, owner: object = None) -> None:
        super().__init__(server)
        self.id = session_id
        self.group = group
        self.owner = owner  # who opened it; only requests of the same identity reach it (app.py)
        self.streams: dict[RequestId, Stream] = {}
        self.standalone: Stream | None = None  # the GET stream, while the client keeps it open
        self.event_ids = jsonrpc.IdAllocator()
        self.connection = server.connect(self)

    # --- Peer: the way back to the client ---------------------------------------------------------
    def post(self, message: Message, *, related_to: RequestId | None = None) -> None:
        stream = self._stream_for(related_to)
        if stream is None:
            log.debug("dropped %s: no open stream for it (related to %r, and no GET stream)",
                      getattr(message, "method", message), related_to)
            return
        stream.put(message)

    def deliver(self, request: Request, related_to: RequestId | None) -> None:
        stream = self._stream_for(related_to)
        if stream is None:
            where = f"request {related_to!r} has no open stream" if related_to is not None else \
                "the client opened no GET stream for this session"
            raise TransportError(f"cannot send {request.method}: {where}")
        stream.put(request)

    def _stream_for(self, related_to: RequestId | None) -> Stream | None:
        """The stream of the request a message belongs to; a message that belongs to none goes on the
        standalone one (transports: those SHOULD be unrelated to any request). None: nowhere to go."""
        if related_to is not None:
            return self.streams.get(related_to)
        return self.standalone

    def _prime(self) -> str | None:
        """A fresh event id for a priming event, in a session whose revision has them."""
        version = self.connection.version
        return str(self.event_ids()) if version is not None and at_least(version, PRIMING_SINCE) else None

    # --- the standalone stream (GET) -------------------------------------------------------------
    def listen(self) -> HTTPResponse:
        """Open the session's standalone stream; 409 if one is open already (one per session)."""
        if self.standalone is not None and not self.standalone.done:
            raise Refusal(409, "this session's GET stream is already open: a session has one standalone "
                               "stream, and each message goes on one stream only")
        stream = Stream(keepalive=KEEPALIVE_SECONDS)
        stream.on_abandon = lambda: self._forget_standalone(stream)
        self.standalone = stream
        return StreamingResponse(stream.events(), media_type=SSE_TYPE, headers=SSE_HEADERS)

    def _forget_standalone(self, stream: Stream) -> None:
        stream.done = True  # the client closed it: nothing more goes on it
        if self.standalone is stream:
            self.standalone = None

    # --- what the client POSTs ----------------------------------------------------------------------
    async def receive(self, message: Notification | Response | ErrorResponse) -> None:
        """A notification goes to the toolkit; a response wakes the tool that asked the client."""
        if isinstance(message, Notification):
            await self.server.handle(message, self.connection)
            return
        self.settle(message)

    async def answer(self, request: Request) -> HTTPResponse:
        """JSON if the reply is all there is; SSE once something is posted before it."""
        if request.method not in USER_CODE:  # answered from the catalogue: nothing can come before the reply
            return json_reply(await self.server.handle(request, self.connection))  # type: ignore[arg-type]
        if request.id in self.streams:
            return json_reply(self.id_in_use(request.id))
        stream = self.streams[request.id] = Stream()
        scope = self.tasks[request.id] = anyio.CancelScope()
        self.group.start_soon(self._run, request, stream, scope)
        await stream.wake.wait()
        if stream.done and len(stream.outbox) == 1:
            return json_reply(stream.outbox.popleft())
        stream.prime = self._prime()
        return StreamingResponse(stream.events(), media_type=SSE_TYPE, headers=SSE_HEADERS)

    async def _run(self, request: Request, stream: Stream, scope: anyio.CancelScope) -> None:
        reply = None
        with scope:  # cancelled by the client or the session ended: no response is sent
            try:
                if not scope.cancel_called:
                    reply = await self.server.handle(request, self.connection)
            finally:
                self.tasks.pop(request.id, None)
                self.streams.pop(request.id, None)
                stream.finish(None if scope.cancel_called else reply)

    def close(self) -> None:
        if self.standalone is not None:
            self.standalone.finish(None)  # the session is over: its GET stream ends
            self.standalone = None
        for scope in list(self.tasks.values()):
            scope.cancel()
        self.outgoing.fail_all(TransportError("the session ended before the client answered"))
        self.connection.lifecycle.close()  # DELETE or the server stopping: CLOSED (ERROR stays ERROR)
