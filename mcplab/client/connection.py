"""One open transport seen as JSON-RPC: requests matched to responses by id, and who reads when.

Theory of operation
-------------------
:class:`Connection` is the plumbing under :class:`~mcplab.client.Client`. It sends messages,
and it takes what the server sends apart: a response wakes the request waiting with that id,
a notification or a server request goes to the callback the client gave.

**Who reads.** There is no background task. Each request registers a :class:`~mcplab.endpoint.Waiter`
under its id (``endpoint.Outgoing``) and waits for it; while nobody else is reading, the waiter reads:
it takes one message off the transport, settles the waiter that message answers (perhaps its own)
or hands the message to the client's callback, and then wakes every other waiter to look at its
own again. So a lone caller reads its own reply, and a connection is not tied to a task group: a
notebook can open it in one cell and use it in the next. Notifications that arrive while no request
is waiting are dispatched when the next one is.

**Failures.** A request with no answer within its timeout is given up and announced with
``notifications/cancelled`` (spec "basic/utilities/cancellation"; never for ``initialize``), except
over 2026-07-28 Streamable HTTP, where closing the request's response is the cancellation and the
timeout's message says so;
a late answer to it is ignored, as the spec says. A server that exits, writes a line that is not
JSON-RPC, or answers an id nobody asked for ends the connection: the request that met the failure
raises it (:class:`~mcplab.wire.errors.ServerExited` with the server's stderr tail …), and the
lifecycle goes to its ERROR state, so every other waiting request and every later one raises
:class:`~mcplab.wire.errors.LocalProtocolError` naming the state and what failed. An HTTP refusal of one POST
(:class:`~mcplab.wire.errors.HTTPStatusError`) fails only that request: each POST stands alone, and so
does a modern reply stream that broke (:class:`~mcplab.transports.base.StreamEnded`: the request's
answer, which the client meets by sending the request again).

**Headers.** In the modern era every request's routing facts are mirrored into HTTP headers
(``wire/headers.py``): built only for a transport whose ``channel`` is ``"http"``.
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable

import anyio

from mcplab.endpoint import Outgoing, Waiter
from mcplab.i18n import _
from mcplab.wire import jsonrpc
from mcplab.wire.errors import (
    HTTPStatusError, JSONRPCError, MCPLabError, RemoteProtocolError, RequestTimeout, TransportError,
)
from mcplab.wire.headers import request_headers
from mcplab.wire.jsonrpc import ErrorResponse, Notification, Request, Response
from mcplab.lifecycle import CANCELLED, CLOSED, SEND_REQUEST, Lifecycle
from mcplab.transports.base import StreamEnded, Transport
from mcplab.wire.versions import META_PROTOCOL_VERSION

__all__ = ["Connection", "call"]

class Connection:
    """Requests and responses over one transport (see the module docstring)."""

    def __init__(self, transport: Transport, lifecycle: Lifecycle, *,
                 on_notification: Callable[[Notification], Awaitable[None]],
                 on_request: Callable[[Request], Awaitable[jsonrpc.Message]]) -> None:
        self.transport = transport
        self.lifecycle = lifecycle  # whose rules the messages sent on our own (cancellations) follow
        self.on_notification, self.on_request = on_notification, on_request
        self.outgoing = Outgoing()  # the endpoint both sides share: a waiter per id sent (mcplab/endpoint.py)
        self.ids = self.outgoing.ids
        self._reading = False  # a waiter is reading the transport
        self._turn = anyio.Event()  # set after each message read: the other waiters look again
        self.failure: MCPLabError | None = None

    # --- sending ---------------------------------------------------------------------------------
    def headers(self, message: jsonrpc.Message, extra: dict[str, str] | None = None) -> dict[str, str] | None:
        """The HTTP headers a modern message mirrors from its body (None in the legacy era)."""
        if self.lifecycle.era != "modern" or not isinstance(message, (Request, Notification)):
            return None
        params = message.params if isinstance(message.params, dict) else {}
        version = (params.get("_meta") or {}).get(META_PROTOCOL_VERSION, self.lifecycle.version)
        return {**request_headers(message.method, params, version), **(extra or {})}

    async def send(self, message: jsonrpc.Message, extra_headers: dict[str, str] | None = None) -> None:
        try:
            if self.transport.channel == "http":
                await self.transport.send(message, headers=self.headers(message, extra_headers))
            else:
                await self.transport.send(message)
        except HTTPStatusError:
            raise  # one POST was refused; the next one may well go through
        except MCPLabError as exc:
            self.fail(exc)
            raise

    async def exchange(self, request: Request, timeout: float, *, announce: bool = True,
                       extra_headers: dict[str, str] | None = None) -> Response | ErrorResponse | StreamEnded:
        """Send ``request`` and wait for its response; on timeout, give up (and say so, if ``announce``).

        The timeout counts from now; over HTTP a POST whose reply is plain JSON returns only once the
        server has answered, so the wait may begin with the send."""
        self.raise_if_failed()
        waiter = self.outgoing.add(request.id)
        try:
            with anyio.move_on_after(timeout):
                await self.send(request, extra_headers)
                await self._wait(waiter)
        except BaseException as exc:
            self.outgoing.abandon(request.id, waiter)
            if announce and not waiter.done() and isinstance(exc, anyio.get_cancelled_exc_class()):
                with anyio.CancelScope(shield=True):  # we are being cancelled, yet the server must hear it
                    await self._announce_cancel(request.id, "the caller cancelled the request")
            raise
        if not waiter.done():
            self.outgoing.abandon(request.id, waiter)
            if announce:
                await self._announce_cancel(request.id, f"no response within {timeout:g} s")
            raise RequestTimeout(_("no response to {method} (id {id}) within {seconds:g} s", method=request.method,
                                   id=request.id, seconds=timeout)
                                 + (f"; {self._cancelled_how()}" if announce else ""))
        return waiter.value

    def _cancelled_how(self) -> str:
        """How a request given up was cancelled, in words: what went on the wire, and nothing else.

        2026-07-28 over Streamable HTTP cancels by closing the request's response ("cancellation",
        transport-specific): the transport closes it and POSTs no notifications/cancelled."""
        if self.transport.channel == "http" and self.lifecycle.era == "modern":
            return _("closed its HTTP response, which cancels it (2026-07-28: no notifications/cancelled over HTTP)")
        return _("sent notifications/cancelled")

    async def _announce_cancel(self, request_id: jsonrpc.RequestId, reason: str) -> None:
        if self.failure is None:
            try:
                self.lifecycle.prepare_notification(CANCELLED)
                await self.send(Notification(CANCELLED, {"requestId": request_id, "reason": reason}))
            except MCPLabError:
                pass  # the connection is going away anyway; the timeout is what the caller needs to hear

    # --- reading ---------------------------------------------------------------------------------
    async def _wait(self, waiter: Waiter) -> None:
        """Wait until ``waiter`` has its response, reading the transport whenever nobody else is."""
        while not waiter.done():
            self.raise_if_failed()
            if self._reading:
                await self._turn.wait()  # the reader wakes us after each message it has taken
                continue
            self._reading = True
            try:
                message = await self.transport.receive()
            except MCPLabError as exc:
                self.fail(exc)
                raise  # the request that met the failure raises it; the others hear of it from the lifecycle
            finally:
                self._reading = False
                self._turn.set()  # our answer may have come, or the reading is free: every waiter looks again
                self._turn = anyio.Event()
            await self._dispatch(message)  # a handler of ours runs within our deadline

    async def _dispatch(self, message: jsonrpc.Message | JSONRPCError | StreamEnded) -> None:
        """Hand one thing the transport gave to whoever it is for."""
        if isinstance(message, (Response, ErrorResponse)):
            try:
                self.outgoing.settle(message)  # a late answer to a request given up is ignored (the spec)
            except RemoteProtocolError as exc:  # an id nobody asked, or null: the peer is confused
                exc.raw = jsonrpc.encode(message)
                self.fail(exc)
                raise
        elif isinstance(message, StreamEnded):  # no message: the transport lost a request's reply stream
            self.outgoing.settle_id(message.request_id, message)
        elif isinstance(message, Notification):
            await self.on_notification(message)
        elif isinstance(message, Request):
            try:
                reply = await self.on_request(message)
            except MCPLabError as exc:
                self.fail(exc)
                raise
            await self.send(reply)
        else:
            error = RemoteProtocolError(
                f"the server sent something that is not a JSON-RPC message ({message.message}); "
                f"a server may send MCP messages only (on stdio, logs belong on stderr)", raw=message.raw)
            self.fail(error)
            raise error

    # --- failing -----------------------------------------------------------------------------------
    def fail(self, error: MCPLabError) -> None:
        """The connection is unusable: the lifecycle goes to ERROR, and every waiter wakes to hear it."""
        if self.failure is None:
            self.failure = error
        self.lifecycle.fail(self.failure)
        self._turn.set()

    def raise_if_failed(self) -> None:
        """After a failure or a close, raise the lifecycle's own error (a fresh one per call, naming why)."""
        if self.failure is not None:
            if self.lifecycle.state is not CLOSED:
                self.lifecycle.fail(self.failure)  # opening may have put a fresh lifecycle in place since
            self.lifecycle.move(SEND_REQUEST)  # raises: nothing can be sent once closed or in ERROR

    def close(self, why: str = "the client was closed") -> None:
        """Closing is no failure: the lifecycle goes to CLOSED, and later requests hear that."""
        if self.failure is None:
            self.failure = TransportError(why)
            self.lifecycle.close()
        self._turn.set()


async def call(callback: Callable[..., Any] | None, *args: Any) -> Any:
    """Call a caller-supplied callback that may be a plain function or a coroutine function."""
    if callback is None:
        return None
    result = callback(*args)
    if inspect.isawaitable(result):
        result = await result
    return result
