"""The client against an in-process fake server: correlation, timeouts, callbacks, server requests.

Every test runs on asyncio and on trio.
"""

from __future__ import annotations

import anyio
import pytest

from mcplab.wire import jsonrpc
from mcplab.client import Client
from mcplab.wire.errors import (
    LocalProtocolError, RemoteError, RemoteProtocolError, RequestTimeout, ServerExited,
)
from mcplab.lifecycle import UnsupportedVersion
from mcplab.client.results import ToolResult
from mcplab.transports.memory import MemoryTransport

from client_helpers import FakeServer

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


def text_result(text, **extra):
    return {"content": [{"type": "text", "text": text}], **extra}


async def test_the_handshake_sends_initialize_then_initialized():
    server = FakeServer()
    async with Client(server.transport, version="2025-06-18") as client:
        assert client.protocol_version == "2025-06-18"
        assert client.server_info == {"name": "fake", "version": "1"}
    assert server.methods() == ["initialize", "notifications/initialized"]
    assert [f.direction for f in client.trace] == ["c2s", "s2c", "c2s"]


async def test_a_version_the_client_does_not_speak_fails_the_handshake_naming_both():
    server = FakeServer(version="2099-01-01")
    with pytest.raises(UnsupportedVersion, match="2025-11-25.*2099-01-01"):
        async with Client(server.transport):
            pass
    assert "notifications/initialized" not in server.methods()


async def test_an_undeclared_capability_fails_locally_and_sends_nothing():
    server = FakeServer(capabilities={"tools": {}})
    async with Client(server.transport) as client:
        with pytest.raises(LocalProtocolError, match="prompts"):
            await client.list_prompts()
        with pytest.raises(LocalProtocolError, match="resources"):
            await client.read_resource("file:///x")
    assert server.methods() == ["initialize", "notifications/initialized"]


async def test_lists_follow_the_cursor_to_the_end():
    pages = {None: (["a", "b"], "p2"), "p2": (["c"], "p3"), "p3": (["d"], None)}

    def tools_list(request):
        names, cursor = pages[(request.params or {}).get("cursor")]
        result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}
        return {**result, "nextCursor": cursor} if cursor else result

    server = FakeServer(handlers={"tools/list": tools_list})
    async with Client(server.transport) as client:
        assert [t.name for t in await client.list_tools()] == ["a", "b", "c", "d"]
    assert [m.params for m in server.received if getattr(m, "method", "") == "tools/list"] == [
        None, {"cursor": "p2"}, {"cursor": "p3"}]


async def test_a_tool_error_is_a_result_and_a_protocol_error_raises():
    def call(request):
        if request.params["name"] == "broken":
            return text_result("division by zero", isError=True)
        return [jsonrpc.ErrorResponse(request.id, -32602, "Unknown tool: nope")]

    server = FakeServer(handlers={"tools/call": call})
    async with Client(server.transport) as client:
        result = await client.call_tool("broken", {})
        assert isinstance(result, ToolResult) and result.is_error and result.text == "division by zero"
        assert result.raw == text_result("division by zero", isError=True)
        with pytest.raises(RemoteError) as caught:
            await client.call_tool("nope")
    assert caught.value.code == -32602 and caught.value.method == "tools/call"


async def test_concurrent_requests_are_matched_by_id_whatever_the_order():
    held: list = []

    def call(request):  # answer nothing until the third call, then all three in reverse order
        held.append(request)
        if len(held) < 3:
            return None
        return [jsonrpc.Response(r.id, text_result(r.params["arguments"]["n"])) for r in reversed(held)]

    server = FakeServer(handlers={"tools/call": call})
    results = {}
    async with Client(server.transport) as client:
        async def one(n):
            results[n] = (await client.call_tool("echo", {"n": n})).text

        async with anyio.create_task_group() as tg:
            for n in ("x", "y", "z"):
                tg.start_soon(one, n)
    assert results == {"x": "x", "y": "y", "z": "z"}


async def test_a_timeout_sends_cancelled_and_a_late_answer_is_ignored():
    late: list = []
    server = FakeServer(handlers={"tools/call": lambda r: late.append(r), "ping": lambda r: {}})
    async with Client(server.transport) as client:
        with anyio.fail_after(2):
            with pytest.raises(RequestTimeout, match="tools/call"):
                await client.call_tool("slow", timeout=0.05)
        cancelled = server.received[-1]
        assert cancelled.method == "notifications/cancelled"
        assert cancelled.params["requestId"] == late[0].id
        server.transport.push(jsonrpc.Response(late[0].id, text_result("too late")))
        await client.ping()  # the late answer is read and dropped; the connection lives on


async def test_the_caller_cancelling_also_sends_cancelled():
    server = FakeServer(handlers={"tools/call": lambda r: None})
    async with Client(server.transport) as client:
        with anyio.move_on_after(0.05):
            await client.call_tool("slow")
        assert server.methods()[-1] == "notifications/cancelled"


async def test_initialize_that_never_comes_times_out_without_cancelling_it():
    transport = MemoryTransport(lambda message: [])
    with anyio.fail_after(2):
        with pytest.raises(RequestTimeout, match="initialize"):
            async with Client(transport, timeout=0.05):
                pass
    assert [f.message.method for f in transport.trace] == ["initialize"]


async def test_an_answer_to_an_unknown_id_is_a_protocol_error_for_every_waiter():
    server = FakeServer(handlers={"tools/call": lambda r: [jsonrpc.Response(r.id + 40, text_result("?"))]})
    async with Client(server.transport) as client:
        with pytest.raises(RemoteProtocolError, match="id 42.*waiting: 2") as caught:
            await client.call_tool("echo")
        with pytest.raises(LocalProtocolError, match="client in state 'error'.*id 42") as later:
            await client.list_tools()  # the lifecycle is in ERROR for good, and says why
    assert later.value.__cause__ is caught.value


async def test_a_line_that_is_not_json_rpc_ends_the_connection_with_the_raw_line():
    server = FakeServer(handlers={"tools/call": lambda r: ["Loading model weights..."]})
    async with Client(server.transport) as client:
        with pytest.raises(RemoteProtocolError) as caught:
            await client.call_tool("echo")
    assert caught.value.raw == "Loading model weights..."
    assert "not a JSON-RPC message" in str(caught.value)


async def test_a_hang_up_reaches_every_waiter_naming_server_exited():
    server = FakeServer(handlers={"tools/call": lambda r: None})
    async with Client(server.transport) as client:
        errors = []

        async def call():
            try:
                await client.call_tool("slow")
            except ServerExited as exc:  # the waiter that was reading met it
                errors.append(exc.returncode)
            except LocalProtocolError as exc:  # the other one hears it from the lifecycle's ERROR state
                assert "client in state 'error'" in str(exc) and "Traceback: boom" in str(exc)
                errors.append(exc.__cause__.returncode)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            tg.start_soon(call)
            await anyio.sleep(0.01)
            server.transport.hang_up(3, "Traceback: boom")
    assert errors == [3, 3]


async def test_unsolicited_notifications_reach_callbacks_and_break_nothing():
    seen: dict[str, list] = {"changed": [], "log": [], "all": []}
    server = FakeServer(capabilities={"tools": {"listChanged": True}}, handlers={"ping": lambda r: {}})
    client = Client(server.transport, on_list_changed=seen["changed"].append, on_log=seen["log"].append,
                    on_notification=lambda n: seen["all"].append(n.method))
    async with client:
        server.transport.push(jsonrpc.Notification("notifications/tools/list_changed"))
        server.transport.push(jsonrpc.Notification("notifications/message", {"level": "info", "data": "hi"}))
        server.transport.push(jsonrpc.Notification("vendor/whatever", {"x": 1}))
        await client.ping()
    assert seen["changed"] == ["notifications/tools/list_changed"]
    assert seen["log"] == [{"level": "info", "data": "hi"}]
    assert seen["all"] == ["notifications/tools/list_changed", "notifications/message", "vendor/whatever"]


async def test_progress_reaches_the_callback_of_its_request():
    def call(request):
        token = request.params["_meta"]["progressToken"]
        progress = [jsonrpc.Notification("notifications/progress", {"progressToken": token, "progress": p,
                                                                    "total": 2}) for p in (1, 2)]
        return [*progress, jsonrpc.Response(request.id, text_result("done"))]

    server = FakeServer(handlers={"tools/call": call})
    steps: list = []

    async def on_progress(params):  # an async callback works as well as a plain one
        steps.append(params["progress"])

    async with Client(server.transport) as client:
        assert (await client.call_tool("work", on_progress=on_progress)).text == "done"
    assert steps == [1, 2]


async def test_server_requests_are_answered_by_the_handlers_supplied():
    asked: list = []

    def call(request):
        asked.append(request)
        return [jsonrpc.Request("s1", "roots/list"),
                jsonrpc.Request("s2", "sampling/createMessage", {"messages": [], "maxTokens": 5}),
                jsonrpc.Request("s3", "elicitation/create", {"message": "name?", "requestedSchema": {}}),
                jsonrpc.Request("s4", "ping")]

    server = FakeServer(handlers={"tools/call": call})

    async def sampling(params):
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "scripted"}

    client = Client(server.transport, roots=["file:///tmp/project"], sampling=sampling,
                    elicitation=lambda params: {"action": "decline"})
    async with client:
        assert set(client.client_capabilities) == {"roots", "sampling", "elicitation"}
        with pytest.raises(RequestTimeout):
            await client.call_tool("x", timeout=0.05)
    assert [request.method for request in asked] == ["tools/call"]
    replies = {m.id: m for m in server.received if isinstance(m, jsonrpc.Response)}
    assert replies["s1"].result == {"roots": [{"uri": "file:///tmp/project"}]}
    assert replies["s2"].result["model"] == "scripted"
    assert replies["s3"].result == {"action": "decline"}
    assert replies["s4"].result == {}


async def test_without_a_handler_a_capability_is_not_declared_and_the_request_is_refused():
    server = FakeServer(handlers={"tools/call": lambda r: [jsonrpc.Request("s1", "sampling/createMessage", {}),
                                                           jsonrpc.Response(r.id, text_result("ok"))]})
    async with Client(server.transport) as client:
        assert client.client_capabilities == {}
        assert server.received[0].params["capabilities"] == {}
        await client.call_tool("x")
    refusal = next(m for m in server.received if isinstance(m, jsonrpc.ErrorResponse))
    assert refusal.id == "s1" and refusal.code == -32601


async def test_a_failing_handler_answers_with_an_internal_error():
    def boom(params):
        raise ValueError("no model here")

    server = FakeServer(handlers={"tools/call": lambda r: [jsonrpc.Request(9, "sampling/createMessage", {}),
                                                           jsonrpc.Response(r.id, text_result("ok"))]})
    async with Client(server.transport, sampling=boom) as client:
        await client.call_tool("x")
    refusal = next(m for m in server.received if isinstance(m, jsonrpc.ErrorResponse))
    assert refusal.code == -32603 and "no model here" in refusal.message


async def test_a_handler_that_refuses_with_a_json_rpc_error_answers_with_its_code_words_and_data():
    from mcplab.wire.errors import InvalidParams

    def picky(params):
        raise InvalidParams("expected messages, got none", data={"field": "messages"})

    server = FakeServer(handlers={"tools/call": lambda r: [jsonrpc.Request(9, "sampling/createMessage", {}),
                                                           jsonrpc.Response(r.id, text_result("ok"))]})
    async with Client(server.transport, sampling=picky) as client:
        await client.call_tool("x")
    refusal = next(m for m in server.received if isinstance(m, jsonrpc.ErrorResponse))
    assert (refusal.id, refusal.code, refusal.message, refusal.data) == (
        9, -32602, "expected messages, got none", {"field": "messages"})


async def test_the_typed_primitives_send_the_spec_params():
    server = FakeServer(capabilities={"resources": {"subscribe": True}, "prompts": {}, "completions": {},
                                      "logging": {}}, handlers={
        "resources/list": lambda r: {"resources": [{"uri": "file:///a.txt", "name": "a.txt"}]},
        "resources/templates/list": lambda r: {"resourceTemplates": [{"uriTemplate": "file:///{p}", "name": "f"}]},
        "resources/read": lambda r: {"contents": [{"uri": r.params["uri"], "text": "hello"}]},
        "resources/subscribe": lambda r: {}, "resources/unsubscribe": lambda r: {},
        "prompts/list": lambda r: {"prompts": [{"name": "review", "arguments": [{"name": "code"}]}]},
        "prompts/get": lambda r: {"messages": [{"role": "user", "content": {"type": "text", "text": "go"}}]},
        "completion/complete": lambda r: {"completion": {"values": ["python", "pytorch"], "hasMore": False}},
        "logging/setLevel": lambda r: {}, "ping": lambda r: {},
    })
    async with Client(server.transport) as client:
        assert (await client.list_resources())[0].uri == "file:///a.txt"
        assert (await client.list_resource_templates())[0].uri_template == "file:///{p}"
        assert (await client.read_resource("file:///a.txt")).text == "hello"
        await client.subscribe("file:///a.txt")
        await client.unsubscribe("file:///a.txt")
        assert (await client.list_prompts())[0].arguments == ({"name": "code"},)
        assert (await client.get_prompt("review", {"code": "x"})).messages[0].content.text == "go"
        completion = await client.complete({"type": "ref/prompt", "name": "review"}, "lang", "py")
        assert completion.values == ("python", "pytorch")
        await client.set_logging_level("debug")
        await client.ping()
    sent = {m.method: m.params for m in server.received if isinstance(m, jsonrpc.Request)}
    assert sent["prompts/get"] == {"name": "review", "arguments": {"code": "x"}}
    assert sent["completion/complete"] == {"ref": {"type": "ref/prompt", "name": "review"},
                                           "argument": {"name": "lang", "value": "py"}}
    assert sent["logging/setLevel"] == {"level": "debug"} and sent["ping"] is None


async def test_a_closed_client_refuses_new_requests():
    server = FakeServer(handlers={"ping": lambda r: {}})
    client = await Client(server.transport).connect()  # the notebook style: no async with
    await client.ping()
    await client.aclose()
    with pytest.raises(LocalProtocolError, match="client in state 'closed' cannot 'send request'"):
        await client.ping()


@pytest.mark.parametrize("era, version, complaint", [
    ("classic", None, "era must be"),
    ("modern", "2025-06-18", "legacy era"),
    ("legacy", "2026-07-28", "2026-07-28"),
])
def test_an_unknown_era_or_a_version_of_the_other_era_is_refused_at_once(era, version, complaint):
    with pytest.raises((ValueError, LocalProtocolError), match=complaint):
        Client(MemoryTransport(lambda m: []), era=era, version=version)


async def test_recent_hands_out_each_frame_once():
    server = FakeServer(handlers={"ping": lambda r: {}})
    async with Client(server.transport) as client:
        assert [f.seq for f in client.recent()] == [1, 2, 3]  # the handshake
        await client.ping()
        assert [f.seq for f in client.recent()] == [4, 5]
        assert len(client.recent()) == 0
    assert len(client.trace) == 5


def test_both_transports_have_the_transport_shape():
    from mcplab.transports.base import Transport
    from mcplab.transports.stdio import stdio

    assert isinstance(MemoryTransport(lambda m: []), Transport)
    assert isinstance(stdio(["python", "-c", "pass"]), Transport)


async def test_handlers_given_by_name_or_as_one_record_are_the_same_client():
    from mcplab.client.handlers import Handlers

    decline = lambda params: {"action": "decline"}  # noqa: E731
    by_name = Client(FakeServer().transport, elicitation=decline, roots=["file:///a"])
    grouped = Client(FakeServer().transport, handlers=Handlers(elicitation=decline, roots=["file:///a"]))
    mixed = Client(FakeServer().transport, handlers=Handlers(elicitation=decline), roots=["file:///a"])
    assert by_name.handlers == grouped.handlers == mixed.handlers
    assert by_name.client_capabilities == grouped.client_capabilities == mixed.client_capabilities
    assert set(by_name.client_capabilities) == {"elicitation", "roots"}
    with pytest.raises(TypeError, match="unexpected keyword argument.*elicitaton.*a handler: sampling"):
        Client(FakeServer().transport, elicitaton=decline)
