"""What a JSON-RPC peer does the same way on both sides: match the answers to what it asked.

Theory of operation
-------------------
JSON-RPC is symmetric: the client asks the server (``tools/call``) and the server asks the client
(``sampling/createMessage``, ``roots/list``), and each side matches every response it gets to a request
it sent by the ``id`` alone. The two sides differ only in who reads: the client pulls (the caller
waiting for a reply reads the transport, ``client/connection.py``), a server runner pushes (it reads
stdin or takes a POST, and dispatches, ``server/stdio.py``, ``server/streamable_http/``). Both hand
what they read here:

    this side sends  {"id":7,"method":"roots/list"}        Outgoing.add(7) → a Waiter
    the peer answers {"id":7,"result":{"roots":[...]}}     Outgoing.settle(response) wakes that Waiter
    an answer too late (the request was given up)           ignored, as the spec says ("cancellation")
    an answer to an id nobody asked, or "id": null          RemoteProtocolError: the peer is confused

A :class:`Waiter` is set once and awaited once.
A batch (MCP 2025-03-26 only) is answered by :func:`answer_batch` on every runner, with the rules of
``jsonrpc.refuse_in_batch``. Every wait is anyio's, so both sides run on asyncio and on trio. Which requests the peer sent and this
side is still running is each runner's table of cancel scopes (``RunnerPeer.tasks``).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Awaitable, Callable

import anyio

from mcplab.wire import jsonrpc
from mcplab.wire.errors import RemoteProtocolError
from mcplab.wire.jsonrpc import ErrorResponse, Message, RequestId, Response

__all__ = ["Waiter", "Outgoing", "answer_batch", "REMEMBER_ABANDONED"]

REMEMBER_ABANDONED = 256  # ids of given-up requests whose late answers are still recognised


class Waiter:
    """The one answer to a request this side sent: a value or an error, set once."""

    __slots__ = ("value", "error", "event")

    def __init__(self) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        self.event = anyio.Event()

    def done(self) -> bool:
        return self.event.is_set()

    def set_result(self, value: Any) -> None:
        self.value = value
        self.event.set()

    def set_exception(self, error: BaseException) -> None:
        self.error = error
        self.event.set()

    async def wait(self) -> Any:
        await self.event.wait()
        if self.error is not None:
            raise self.error
        return self.value


class Outgoing:
    """Requests this side sent and the peer has not answered: ids 1, 2, 3 …, a :class:`Waiter` each."""

    def __init__(self) -> None:
        self.ids = jsonrpc.IdAllocator()
        self._pending = jsonrpc.PendingRequests()
        self._abandoned: deque[RequestId] = deque(maxlen=REMEMBER_ABANDONED)

    def add(self, request_id: RequestId) -> Waiter:
        """A waiter for the request about to go out with ``request_id``."""
        waiter = Waiter()
        self._pending.add(request_id, waiter)
        return waiter

    def settle(self, response: Response | ErrorResponse) -> Waiter | None:
        """Wake the waiter ``response`` answers; None for the late answer to a request given up.

        Raises :class:`RemoteProtocolError` for an id nobody is waiting for (or a null one)."""
        if response.id is not None and response.id in self._abandoned:
            self._abandoned.remove(response.id)
            return None
        waiter: Waiter = self._pending.resolve(response)
        waiter.set_result(response)
        return waiter

    def settle_id(self, request_id: RequestId, value: Any) -> None:
        """Hand ``value`` (not a response: a transport's word that none will come) to ``request_id``'s waiter."""
        waiter = self._pending.discard(request_id)
        if waiter is not None:
            waiter.set_result(value)

    def abandon(self, request_id: RequestId, waiter: Waiter) -> None:
        """Give up a request not answered yet: a late answer to it will be ignored."""
        if not waiter.done() and self._pending.discard(request_id) is not None:
            self._abandoned.append(request_id)

    def discard(self, request_id: RequestId) -> None:
        """Forget a request (answered, or never sent): an answer to it would be the peer's mistake."""
        self._pending.discard(request_id)

    def fail_all(self, error: BaseException) -> None:
        """Nothing more will come from the peer: every waiter hears ``error``."""
        for request_id in list(self._pending):
            waiter = self._pending.discard(request_id)
            if waiter is not None and not waiter.done():
                waiter.set_exception(error)

    def __len__(self) -> int:
        return len(self._pending)

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._pending


async def answer_batch(batch: list, handle: Callable[[Message], Awaitable[Message | None]]) -> list[Message] | None:
    """The replies to a batch's requests and notifications, in order (None: send nothing).

    The async twin of ``jsonrpc.answer_batch``, with the same refusals; ``handle`` answers one message
    (a server's ``handle`` turns its own errors into error responses). Responses in a batch are the
    runner's to settle before this is called."""
    replies: list[Message] = []
    for item in batch:
        reply = jsonrpc.refuse_in_batch(item)
        if reply is None:
            reply = await handle(item)
        if reply is not None:
            replies.append(reply)
    return replies or None
