"""What every runner's session does the same way: ask the client something, cancel a running request.

Theory of operation
-------------------
A runner (stdio, a legacy HTTP session) is the toolkit's ``Peer``: the way back to one client.
Two of its duties do not depend on the transport, and live here:

* :meth:`RunnerPeer.request` sends a server→client request (``sampling/createMessage``,
  ``elicitation/create``, ``roots/list``) with the session's next id and waits for the response
  with that id, which the runner hands to :meth:`RunnerPeer.settle` when it arrives. A client may never
  answer, so the wait is bounded: after ``server.ask_timeout`` seconds the request is cancelled
  (``notifications/cancelled`` goes to the client, spec "basic/utilities/cancellation") and the
  tool hears a :class:`~mcplab.wire.errors.RequestTimeout`; and a session leaves at most
  ``server.max_asking`` questions open at once: one more is refused before it is sent;
* :meth:`RunnerPeer.cancel` ends the task running a request (``notifications/cancelled``): ``tasks``
  holds, per request id, the anyio cancel scope that task runs in. The task lives in a task group:
  the runner's on stdio (:func:`~mcplab.server.stdio.serve_stdio`'s), the app's for a legacy HTTP
  session, whose requests outlive the POST that brought them (``streamable_http/session.py``).

Matching the client's answers to our requests is the endpoint both sides share (``mcplab/endpoint.py``,
the client's connection uses the same), and its waits are anyio's: a runner works on asyncio and trio.

How the request reaches the client is the runner's own: :meth:`RunnerPeer.deliver` writes a line
on stdout, or puts the message on the event stream of the request it serves.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio

from mcplab.endpoint import Outgoing, answer_batch
from mcplab.wire import jsonrpc
from mcplab.wire.errors import InvalidRequest, LocalProtocolError, RemoteError, RemoteProtocolError, RequestTimeout
from mcplab.wire.jsonrpc import ErrorResponse, Notification, Request, RequestId, Response

if TYPE_CHECKING:
    from mcplab.server.toolkit import Server


log = logging.getLogger("mcplab.server")


class RunnerPeer:
    """Base of the runners' sessions: ``tasks`` by request id, ``pending`` server→client requests."""

    connection: Any  # the toolkit's Connection for this client, made by the runner's session

    def __init__(self, server: Server) -> None:
        self.server = server
        self.tasks: dict[RequestId, anyio.CancelScope] = {}
        self.outgoing = Outgoing()  # our requests to the client, waiting for its answers

    def deliver(self, request: Request, related_to: RequestId | None) -> None:
        """Send a server→client request on this transport, or raise TransportError saying why not."""
        raise NotImplementedError

    def post(self, message: Any, *, related_to: RequestId | None = None) -> None:
        raise NotImplementedError

    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      related_to: RequestId | None = None) -> Any:
        limit, timeout = self.server.max_asking, self.server.ask_timeout
        if len(self.outgoing) >= limit:
            raise LocalProtocolError(f"cannot ask the client ({method}): {len(self.outgoing)} questions to it are "
                                     f"still unanswered, the most one session may leave open ({limit})")
        request_id = self.outgoing.ids()
        waiter = self.outgoing.add(request_id)
        try:
            self.deliver(Request(request_id, method, params), related_to)
            with anyio.fail_after(timeout):
                reply = await waiter.wait()
        except TimeoutError:
            # Given up, not forgotten: an answer that crosses our cancellation is ignored in silence, as the
            # spec asks of a cancellation's sender ("cancellation"), not logged as an answer to nothing.
            self.outgoing.abandon(request_id, waiter)
            why = f"no answer within {timeout:g} s"
            self.post(Notification("notifications/cancelled", {"requestId": request_id, "reason": why}),
                      related_to=related_to)
            raise RequestTimeout(f"the client did not answer {method} within {timeout:g} s; the server "
                                 f"cancelled it") from None
        finally:
            self.outgoing.discard(request_id)
        if isinstance(reply, ErrorResponse):
            raise RemoteError(reply.code, reply.message, reply.data, method=method)
        return reply.result

    def settle(self, response: Response | ErrorResponse) -> None:
        """The client answered one of our requests: wake the tool waiting for it."""
        try:
            self.outgoing.settle(response)
        except RemoteProtocolError as exc:  # an answer to nothing we asked: say so, keep serving
            log.warning("%s", exc)

    def take_responses(self, batch: list) -> list:
        """Settle the responses a batch carries (now: a tool is waiting); the rest, to answer as one."""
        rest = []
        for item in batch:
            if isinstance(item, (Response, ErrorResponse)):
                self.settle(item)
            else:
                rest.append(item)
        return rest

    async def answer_batch(self, batch: list) -> list | None:
        """The replies to a batch's requests and notifications (the rules every runner follows: endpoint.py)."""
        return await answer_batch(batch, lambda message: self.server.handle(message, self.connection))

    @staticmethod
    def id_in_use(request_id: RequestId) -> ErrorResponse:
        """The reply to a request whose id belongs to one of this session's requests still running."""
        return jsonrpc.error_response(InvalidRequest(f"expected a fresh request id: {request_id!r} belongs to a "
                                                     f"request still running"), request_id=request_id)

    def cancel(self, request_id: RequestId) -> None:
        if not jsonrpc.is_request_id(request_id):
            return  # an array or an object names no request (and cannot even be looked up)
        task = self.tasks.get(request_id)
        if task is not None:
            task.cancel()
