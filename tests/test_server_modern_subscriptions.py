"""subscriptions/listen (2026-07-28) in memory: the acknowledgement comes first and lists what will be
honoured, every notification carries the subscriptionId, filters are honoured, a graceful end answers
the listen request, a cancelled one does not; a transport that cannot hold a request open gets no
list-change capabilities and -32601."""

from __future__ import annotations

import anyio
import pytest

from mcplab.wire.errors import INVALID_PARAMS, METHOD_NOT_FOUND
from mcplab.wire.jsonrpc import Request, to_dict

from server_helpers import HoldingPeer, ModernSession, check_modern_message, load_server_module, modern_params

SUB = "io.modelcontextprotocol/subscriptionId"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def conformance():
    return load_server_module("conformance")


async def open_listen(session: ModernSession, request_id, wanted: dict, replies: list) -> None:
    reply = await session.server.handle(Request(request_id, "subscriptions/listen",
                                                modern_params({"notifications": wanted})), session.connection)
    if reply is not None:
        replies.append(to_dict(reply))


async def until_held(peer: HoldingPeer, request_id) -> None:
    with anyio.fail_after(2):
        while request_id not in peer.held:
            await anyio.sleep(0.001)


@pytest.mark.anyio
async def test_listen_acknowledges_first_then_tags_every_notification(conformance) -> None:
    peer = HoldingPeer()
    session = ModernSession(conformance.server, peer=peer)
    replies: list = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(open_listen, session, "listen-1", {"toolsListChanged": True, "promptsListChanged": False,
                                                         "resourceSubscriptions": ["test://static-text",
                                                                                   "test://nowhere"]}, replies)
        await until_held(peer, "listen-1")
        await session.result("tools/call", {"name": "test_trigger_tool_change"})
        await session.result("tools/call", {"name": "test_trigger_prompt_change"})  # not asked for
        conformance.server.resource_updated("test://static-text")
        peer.release("listen-1")
    posted = session.notifications  # schema-checked
    assert posted[0] == {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
        "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["test://static-text"]},
        "_meta": {SUB: "listen-1"}}}
    assert [(n["method"], n["params"]["_meta"][SUB]) for n in posted[1:]] == [
        ("notifications/tools/list_changed", "listen-1"), ("notifications/resources/updated", "listen-1")]
    assert posted[2]["params"]["uri"] == "test://static-text"
    check_modern_message(replies[0], "subscriptions/listen")
    assert replies[0]["result"]["resultType"] == "complete" and replies[0]["result"]["_meta"][SUB] == "listen-1"
    assert conformance.server.listeners == []


@pytest.mark.anyio
async def test_two_subscriptions_each_get_their_own_id_and_only_what_they_asked(conformance) -> None:
    peer = HoldingPeer()
    session = ModernSession(conformance.server, peer=peer)
    replies: list = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(open_listen, session, 1, {"toolsListChanged": True}, replies)
        tg.start_soon(open_listen, session, 2, {"promptsListChanged": True}, replies)
        await until_held(peer, 1)
        await until_held(peer, 2)
        conformance.server.changed("tools")
        conformance.server.changed("prompts")
        peer.release(1)
        peer.release(2)
    changes = [(n["method"], n["params"]["_meta"][SUB]) for n in session.notifications
               if n["method"].endswith("list_changed")]
    assert changes == [("notifications/tools/list_changed", 1), ("notifications/prompts/list_changed", 2)]
    assert sorted(reply["id"] for reply in replies) == [1, 2]  # each listen ends with its own response
    assert all(reply["result"]["resultType"] == "complete" for reply in replies)


@pytest.mark.anyio
async def test_a_cancelled_subscription_gets_no_response(conformance) -> None:
    peer = HoldingPeer()
    session = ModernSession(conformance.server, peer=peer)
    replies: list = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(open_listen, session, 7, {"toolsListChanged": True}, replies)
        await until_held(peer, 7)
        tg.cancel_scope.cancel()  # what a runner does on notifications/cancelled or a closed stream
    assert replies == [] and conformance.server.listeners == []


@pytest.mark.anyio
@pytest.mark.parametrize("wanted", [None, {"toolsListChanged": "yes"}, {"resourceSubscriptions": "test://x"}])
async def test_a_malformed_filter_is_invalid_params(conformance, wanted) -> None:
    session = ModernSession(conformance.server, peer=HoldingPeer())
    params = {} if wanted is None else {"notifications": wanted}
    assert (await session.error("subscriptions/listen", params))["code"] == INVALID_PARAMS


@pytest.mark.anyio
async def test_without_a_transport_that_holds_requests_nothing_is_announced(conformance) -> None:
    session = ModernSession(conformance.server)  # RecordingPeer: no hold()
    capabilities = (await session.result("server/discover"))["capabilities"]
    assert capabilities["tools"] == {} and capabilities["prompts"] == {} and capabilities["resources"] == {}
    error = await session.error("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    assert error["code"] == METHOD_NOT_FOUND


@pytest.mark.anyio
async def test_with_one_list_changes_are_announced(conformance) -> None:
    capabilities = (await ModernSession(conformance.server, peer=HoldingPeer()).result("server/discover"))
    assert capabilities["capabilities"]["tools"] == {"listChanged": True}
    assert capabilities["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}


@pytest.mark.anyio
async def test_legacy_connections_still_hear_list_changed_without_subscribing(conformance) -> None:
    from server_helpers import MemorySession

    legacy = MemorySession(conformance.server)
    await legacy.initialize("2025-11-25")
    await legacy.result("tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
    assert [n["method"] for n in legacy.notifications] == ["notifications/tools/list_changed"]
