"""The client in the modern era and in era="auto", against in-process fake servers.

Opening (probe, fallback, retry with a supported version), stamping, resultType, caching fields,
and MRTR rounds with the input handlers. Every modern frame is checked against the official
2026-07-28 schema. Every test runs on asyncio and on trio.
"""

from __future__ import annotations

import anyio
import pytest

from client_helpers import FakeModernServer, FakeServer, probe_and_rest, validate_frames
from mcplab.wire import jsonrpc
from mcplab.client import Client
from mcplab.wire.errors import LocalProtocolError, RemoteProtocolError
from mcplab.client.mrtr import InputRequest, TooManyRounds
from mcplab.client.opening import EraError
from mcplab.client.results import UnrecognizedResultType

pytestmark = pytest.mark.anyio
MODERN = "2026-07-28"
VERSION, CAPABILITIES = "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


def client(server, **options):
    return Client(server.transport, **{"era": "auto", **options})


def text(value, **extra):
    return {"content": [{"type": "text", "text": value}], **extra}


def tools_list(request):
    return {"tools": [{"name": "deploy", "inputSchema": {"type": "object"}}], "ttlMs": 300000,
            "cacheScope": "public"}


# --- opening ---------------------------------------------------------------------------------------------

async def test_auto_against_a_modern_server_stays_modern_and_stamps_every_request(spec_schema):
    server = FakeModernServer(handlers={"tools/list": tools_list})
    async with client(server) as c:
        tools = await c.list_tools()
        await c.ping()  # the modern era has no ping: server/discover does the job
    assert (c.era, c.protocol_version, c.server_info["name"]) == ("modern", MODERN, "fake-modern")
    assert c.discovery["cacheScope"] == "public" and c.initialize_result is None
    assert "DiscoverResult" in c.era_reason and "the server is modern" in c.era_reason
    assert (tools.ttl_ms, tools.cache_scope) == (300000, "public")
    assert [m.method for m in server.requests()] == ["server/discover", "tools/list", "server/discover"]
    assert all(m.params["_meta"][VERSION] == MODERN and CAPABILITIES in m.params["_meta"]
               for m in server.requests())
    assert validate_frames(c.trace, spec_schema(MODERN), MODERN) == 6


async def test_auto_against_a_legacy_server_probes_then_initializes(spec_schema):
    server = FakeServer()  # answers server/discover with -32601, as legacy servers commonly do
    async with client(server) as c:
        pass
    assert c.era == "legacy" and c.protocol_version == "2025-11-25"
    assert server.methods() == ["server/discover", "initialize", "notifications/initialized"]
    assert "-32601 (Method not found): not a modern answer, so the server is legacy" in c.era_reason
    probe, rest = probe_and_rest(c.trace)
    assert validate_frames(probe, spec_schema(MODERN), MODERN) == 2
    assert validate_frames(rest, spec_schema("2025-11-25"), "2025-11-25") == 3


async def test_after_the_fallback_the_legacy_rules_answer_a_ping_sent_during_initialize():
    server = FakeServer()
    plain = server.__call__

    def pinging(message):
        replies = plain(message)
        if getattr(message, "method", None) == "initialize":
            return [jsonrpc.Request("srv-1", "ping"), *replies]
        return replies

    server.transport.serve = pinging
    async with client(server) as c:
        assert c.era == "legacy"
    assert jsonrpc.Response("srv-1", {}) in server.received


async def test_a_probe_nobody_answers_means_legacy_and_is_not_cancelled_on_the_wire():
    server = FakeServer(handlers={"server/discover": lambda request: None})  # silence before initialize
    c = client(server)
    c.probe_timeout = 0.2
    async with c:
        assert c.era == "legacy"
    assert server.methods() == ["server/discover", "initialize", "notifications/initialized"]
    assert "no answer in time" in c.era_reason


async def test_minus_32022_to_the_probe_means_modern_and_a_retry_with_a_supported_version(spec_schema):
    server = FakeModernServer(refuse_first=True)
    async with client(server) as c:
        assert c.era == "modern"
    assert [m.method for m in server.requests()] == ["server/discover", "server/discover"]
    first, second = server.requests()
    assert first.id != second.id
    assert "-32022 (Unsupported protocol version), supported: 2026-07-28: the server is modern" in c.era_reason
    assert validate_frames(c.trace, spec_schema(MODERN), MODERN) == 4


async def test_initialize_refused_with_a_modern_version_turns_the_client_modern():
    server = FakeModernServer()  # initialize carries no _meta version: -32022 naming 2026-07-28
    async with client(server, version="2025-11-25") as c:  # a legacy version: no probe at first
        assert c.era == "modern"
    assert [m.method for m in server.requests()] == ["initialize", "server/discover"]
    assert c.era_reason.startswith("version 2025-11-25 is a legacy revision")


async def test_era_modern_against_a_legacy_server_fails_with_an_actionable_error():
    server = FakeServer()
    with pytest.raises(EraError, match="era='auto'"):
        async with client(server, era="modern"):
            pass
    assert server.methods() == ["server/discover"]


async def test_era_legacy_never_probes():
    server = FakeServer()
    async with client(server, era="legacy") as c:
        assert c.era_reason == "era='legacy': open with initialize"
    assert server.methods() == ["initialize", "notifications/initialized"]


# --- requests in the modern era --------------------------------------------------------------------------

async def test_removed_methods_are_refused_locally_and_log_levels_ride_on_requests():
    server = FakeModernServer(capabilities={"tools": {}, "resources": {"subscribe": True}, "logging": {}},
                              handlers={"tools/list": tools_list})
    async with client(server) as c:
        with pytest.raises(LocalProtocolError, match="does not exist"):
            await c.subscribe("file:///a")
        await c.set_logging_level("warning")  # no logging/setLevel on the wire
        await c.list_tools()
    assert [m.method for m in server.requests()] == ["server/discover", "tools/list"]
    assert server.requests("tools/list")[0].params["_meta"]["io.modelcontextprotocol/logLevel"] == "warning"


async def test_a_server_request_in_the_modern_era_ends_the_connection():
    server = FakeModernServer(handlers={"tools/call": lambda r: [
        jsonrpc.Request("s1", "elicitation/create", {"message": "hi", "requestedSchema": {}})]})
    async with client(server, elicitation=lambda p: {"action": "decline"}) as c:
        with pytest.raises(RemoteProtocolError, match="never does"):
            await c.call_tool("deploy")


@pytest.mark.parametrize("result, outcome", [
    ({"content": []}, "complete"),                                    # missing: complete (legacy shape)
    ({"resultType": "complete", "content": []}, "complete"),
    ({"resultType": "partial", "content": []}, UnrecognizedResultType),
    ({"resultType": "input_required", "inputRequests": {}}, RemoteProtocolError),  # not on tools/list
])
async def test_the_result_type_is_checked_on_every_result(result, outcome):
    answer = {"tools/call": lambda r: [jsonrpc.Response(r.id, result)],
              "tools/list": lambda r: [jsonrpc.Response(r.id, {"tools": [], **result})]}
    server = FakeModernServer(handlers=answer)
    async with client(server) as c:
        method = c.list_tools if "inputRequests" in result else lambda: c.call_tool("deploy")
        if outcome == "complete":
            await method()
        else:
            with pytest.raises(outcome):
                await method()


# --- MRTR ----------------------------------------------------------------------------------------------

FORM = {"method": "elicitation/create", "params": {
    "message": "Deploy to production?", "requestedSchema": {"type": "object", "properties": {
        "confirm": {"type": "boolean"}}, "required": ["confirm"]}}}
SAMPLE = {"method": "sampling/createMessage", "params": {
    "messages": [{"role": "user", "content": {"type": "text", "text": "Name the release"}}], "maxTokens": 10}}


def deploy_server(rounds):
    """tools/call deploy answers each of ``rounds`` (an input_required result) in turn, then completes."""
    pending = list(rounds)

    def call(request):
        if pending:
            return [jsonrpc.Response(request.id, {"resultType": "input_required", **pending.pop(0)})]
        answers = request.params.get("inputResponses")
        return text(f"deployed with {answers}, state {request.params.get('requestState')!r}")

    return FakeModernServer(capabilities={"tools": {}, "resources": {}, "prompts": {}}, handlers={
        "tools/call": call, "tools/list": tools_list,
        "resources/read": lambda r: {"contents": [{"uri": r.params["uri"], "text": "x"}], "ttlMs": 5,
                                     "cacheScope": "private"}})


async def test_input_required_is_answered_by_the_legacy_handlers_and_retried(spec_schema):
    server = deploy_server([{"inputRequests": {"ok": FORM, "where": {"method": "roots/list"}},
                             "requestState": "opaque+/=state"},
                            {"inputRequests": {"name": SAMPLE}}])
    asked = []

    async def elicit(params):
        asked.append(params["message"])
        return {"action": "accept", "content": {"confirm": True}}

    sample = lambda params: {"role": "assistant", "content": {"type": "text", "text": "v2"}, "model": "scripted"}
    async with client(server, elicitation=elicit, sampling=sample, roots=["file:///srv"]) as c:
        result = await c.call_tool("deploy", {"env": "prod"})
    calls = server.requests("tools/call")
    assert len({m.id for m in calls}) == 3  # a new id for every round
    assert calls[1].params["requestState"] == "opaque+/=state"  # echoed exactly
    assert calls[1].params["inputResponses"] == {"ok": {"action": "accept", "content": {"confirm": True}},
                                                 "where": {"roots": [{"uri": "file:///srv"}]}}
    assert "requestState" not in calls[2].params  # round two sent none, so none goes back
    assert set(calls[2].params["inputResponses"]) == {"name"}
    assert all(m.params["arguments"] == {"env": "prod"} for m in calls)
    assert asked == ["Deploy to production?"] and "v2" in result.text
    assert c.client_capabilities == {"roots": {}, "sampling": {}, "elicitation": {}}
    assert validate_frames(c.trace, spec_schema(MODERN), MODERN) == 8


async def test_a_custom_input_handler_sees_each_request_with_its_key_and_round():
    server = deploy_server([{"inputRequests": {"ok": FORM}, "requestState": "s1"}])
    seen: list[InputRequest] = []

    async def handler(request: InputRequest):
        seen.append(request)
        await anyio.sleep(0)
        return {"action": "decline"}

    async with client(server, input_handler=handler) as c:
        await c.call_tool("deploy")
    assert [(r.key, r.method, r.round, r.asked_by) for r in seen] == [("ok", "elicitation/create", 1,
                                                                       "tools/call deploy")]


async def test_a_request_state_alone_is_retried_at_once_with_no_responses():
    server = deploy_server([{"requestState": "wait"}])
    async with client(server) as c:
        result = await c.call_tool("deploy")
        read = await c.read_resource("file:///b")
    assert "state 'wait'" in result.text and (read.ttl_ms, read.cache_scope) == (5, "private")
    assert "inputResponses" not in server.requests("tools/call")[1].params


async def test_prompts_and_reads_go_through_rounds_too(spec_schema):
    asked = {"prompts/get": True, "resources/read": True}

    def once(kind, final):
        def answer(request):
            if asked[kind]:
                asked[kind] = False
                return [jsonrpc.Response(request.id, {"resultType": "input_required",
                                                      "inputRequests": {"ok": FORM}})]
            assert request.params["inputResponses"] == {"ok": {"action": "accept", "content": {"confirm": True}}}
            return final(request)
        return answer

    server = FakeModernServer(capabilities={"prompts": {}, "resources": {}}, handlers={
        "prompts/get": once("prompts/get", lambda r: {"messages": [
            {"role": "user", "content": {"type": "text", "text": "go"}}]}),
        "resources/read": once("resources/read", lambda r: {"contents": [{"uri": r.params["uri"], "text": "x"}],
                                                            "ttlMs": 0, "cacheScope": "private"})})
    async with client(server, elicitation=lambda p: {"action": "accept", "content": {"confirm": True}}) as c:
        assert (await c.get_prompt("release")).messages[0].content.text == "go"
        assert (await c.read_resource("file:///notes")).text == "x"
    assert [m.method for m in server.requests()][1:] == ["prompts/get"] * 2 + ["resources/read"] * 2
    assert validate_frames(c.trace, spec_schema(MODERN), MODERN) == 10


async def test_an_input_request_without_a_handler_fails_the_call_locally():
    server = deploy_server([{"inputRequests": {"name": SAMPLE}}])
    async with client(server) as c:
        with pytest.raises(LocalProtocolError, match="sampling/createMessage"):
            await c.call_tool("deploy")
    assert len(server.requests("tools/call")) == 1


async def test_rounds_are_bounded_and_can_be_left_to_the_caller():
    server = deploy_server([{"requestState": str(n)} for n in range(20)])
    async with client(server) as c:
        c.max_rounds = 3
        with pytest.raises(TooManyRounds, match="3 rounds"):
            await c.call_tool("deploy")
        raw = await c.request("tools/call", {"name": "deploy"}, rounds=False)
    assert raw["resultType"] == "input_required" and len(server.requests("tools/call")) == 4


async def test_a_parallel_call_carries_nothing_of_another_calls_rounds():
    server = deploy_server([{"inputRequests": {"ok": FORM}, "requestState": "s"}])
    gate = anyio.Event()

    async def elicit(params):
        await gate.wait()
        return {"action": "accept", "content": {"confirm": True}}

    async with client(server, elicitation=elicit) as c:
        async with anyio.create_task_group() as tg:
            tg.start_soon(c.call_tool, "deploy")
            await anyio.sleep(0.05)
            await c.list_tools()
            gate.set()
    plain = server.requests("tools/list")[0].params
    assert "inputResponses" not in plain and "requestState" not in plain


# --- the pure parts --------------------------------------------------------------------------------------

def test_a_listing_over_several_pages_keeps_the_shortest_ttl_and_the_narrower_scope():
    from mcplab.client.results import Listing

    listing = Listing()
    listing.add_page(["a"], {"ttlMs": 600000, "cacheScope": "public"}, first=True)
    listing.add_page(["b"], {"ttlMs": 60000, "cacheScope": "private"}, first=False)
    assert (listing, listing.ttl_ms, listing.cache_scope) == (["a", "b"], 60000, "private")
    listing.add_page(["c"], {}, first=False)  # a page that says nothing: nothing can be promised
    assert (listing.ttl_ms, listing.cache_scope) == (None, None)
    assert repr(listing) == "['a', 'b', 'c']"  # prints as the list it is


@pytest.mark.parametrize("result, complaint", [
    ({"resultType": "input_required"}, "neither"),
    ({"resultType": "input_required", "requestState": 7}, "string"),
    ({"resultType": "input_required", "inputRequests": []}, "object"),
    ({"resultType": "input_required", "inputRequests": {"x": {"method": "tools/call"}}}, "may ask only"),
    ({"resultType": "complete"}, "input_required"),
])
def test_a_malformed_input_required_result_is_a_remote_protocol_error(result, complaint):
    from mcplab.client.mrtr import input_required

    with pytest.raises(RemoteProtocolError, match=complaint):
        input_required(result)


def test_a_retry_keeps_the_original_params_and_replaces_the_last_rounds_answers():
    from mcplab.client.mrtr import retry_params

    original = {"name": "deploy", "arguments": {"env": "prod"}, "_meta": {"progressToken": 1}}
    again = retry_params({**original, "inputResponses": {"old": {}}, "requestState": "old"}, {"ok": {}}, None)
    assert again == {**original, "inputResponses": {"ok": {}}}
