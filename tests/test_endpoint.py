"""mcplab.endpoint: answers matched to the requests sent, the same way on the client and the server."""

from __future__ import annotations

import anyio
import pytest

from mcplab import endpoint
from mcplab.wire import jsonrpc
from mcplab.wire.errors import RemoteProtocolError, TransportError
from mcplab.wire.jsonrpc import ErrorResponse, Notification, Request, Response

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


async def test_an_answer_wakes_the_waiter_of_its_id_and_only_that_one():
    outgoing = endpoint.Outgoing()
    first, second = outgoing.ids(), outgoing.ids()
    waiting = {first: outgoing.add(first), second: outgoing.add(second)}
    got = {}

    async def wait(request_id):
        got[request_id] = await waiting[request_id].wait()

    async with anyio.create_task_group() as group:
        group.start_soon(wait, first)
        group.start_soon(wait, second)
        await anyio.sleep(0.01)
        outgoing.settle(Response(second, "two"))
        outgoing.settle(ErrorResponse(first, -32601, "no such method"))
    assert got == {first: ErrorResponse(first, -32601, "no such method"), second: Response(second, "two")}
    assert len(outgoing) == 0


async def test_a_waiter_answered_before_anyone_waits_is_done_and_gives_its_answer_at_once():
    outgoing = endpoint.Outgoing()
    waiter = outgoing.add(1)
    outgoing.settle(Response(1, {}))
    with anyio.fail_after(1):
        assert waiter.done() and await waiter.wait() == Response(1, {})


def test_an_answer_to_a_request_given_up_is_ignored_once_and_then_is_a_stranger():
    outgoing = endpoint.Outgoing()
    waiter = outgoing.add(7)
    outgoing.abandon(7, waiter)
    assert outgoing.settle(Response(7, "late")) is None and not waiter.done()
    with pytest.raises(RemoteProtocolError, match="no request with that id"):
        outgoing.settle(Response(7, "again"))


@pytest.mark.parametrize("response", [Response(99, {}), ErrorResponse(None, -32700, "unreadable")])
def test_an_answer_nobody_asked_for_is_the_peers_mistake(response):
    with pytest.raises(RemoteProtocolError):
        endpoint.Outgoing().settle(response)


async def test_fail_all_tells_every_waiter_why():
    outgoing = endpoint.Outgoing()
    waiters = [outgoing.add(i) for i in (1, 2)]
    outgoing.fail_all(TransportError("the client closed stdin before answering"))
    for waiter in waiters:
        with pytest.raises(TransportError, match="closed stdin"):
            await waiter.wait()
    assert len(outgoing) == 0


async def test_a_batch_is_answered_in_order_with_initialize_and_bad_elements_refused_unhandled():
    handled = []

    async def handle(message):
        handled.append(message)
        return Response(message.id, "ok") if isinstance(message, Request) else None

    bad = jsonrpc.decode('[{"jsonrpc":"2.0","id":"x"}]', allow_batch=True)[0]
    batch = [Request(1, "ping"), Notification("notifications/initialized"),
             Request(2, "initialize", {}), bad]
    replies = await endpoint.answer_batch(batch, handle)
    assert [(type(r).__name__, r.id) for r in replies] == [
        ("Response", 1), ("ErrorResponse", 2), ("ErrorResponse", "x")]
    assert [r.code for r in replies[1:]] == [-32600, -32600]
    assert "initialize must not be part of a JSON-RPC batch" in replies[1].message
    assert handled == batch[:2]  # neither initialize nor the broken element reached the handler
    assert await endpoint.answer_batch([Notification("n")], handle) is None


def test_the_sans_io_batch_answers_refuse_initialize_the_same_way():
    replies = jsonrpc.answer_batch([Request(1, "initialize", {}), Request(2, "ping")],
                                   lambda message: Response(message.id, {}))
    assert replies[0] == ErrorResponse(1, -32600, jsonrpc.INITIALIZE_IN_BATCH) and replies[1] == Response(2, {})
