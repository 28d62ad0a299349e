"""The 2026-07-28 wire of the Streamable HTTP runner (mcplab/server/streamable_http/app.py, exchange.py): one POST per
request, no session, routing headers checked against the body, each error with its HTTP status, and a
dual-era endpoint that still serves legacy sessions on the same URL.

A toy server runs in this process (uvicorn on 127.0.0.1:0) and raw httpx talks to it, so every header and
status is visible; every message the server sends back is validated against the official 2026-07-28 schema.
The last tests start the bundled servers with ``--http --era modern|legacy|dual`` as child processes.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated

import anyio
import httpx
import pytest

from http_helpers import (
    ACCEPT_BOTH, MODERN, ROOT, Session, envelope, initialize, is_sse, modern_headers, modern_request, request, served,
    sse_messages,
)
from mcplab import Client
from mcplab.wire.errors import (
    HEADER_MISMATCH, RemoteError, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcplab.wire.headers import encode_value
from mcplab.server import Context, Server
from mcplab.server.streamable_http import create_app, launch
from mcplab.transports.http import http
from server_helpers import check_modern_message

pytestmark = [pytest.mark.anyio, pytest.mark.http]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn serves on asyncio, in the same loop as the test


def toy_server(events: list | None = None) -> Server:
    server = Server("toy", "1.0", declare_logging=True)  # count logs

    @server.tool
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @server.tool
    def where(region: Annotated[str, {"x-mcp-header": "Region"}]) -> str:
        """Say which region a gateway could route this call to."""
        return f"routed to {region}"

    @server.tool
    async def count(ctx: Context, n: int = 3) -> str:
        """Count to n, reporting progress and logging each step."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, total=n)
            await ctx.info(f"step {i}")
        return f"counted to {n}"

    @server.tool
    async def ask(ctx: Context) -> str:
        """Ask the user a question."""
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hello {answer.get('content', {}).get('name')}"

    @server.tool
    async def nap(seconds: float) -> str:
        """Sleep, then answer."""
        try:
            await anyio.sleep(seconds)
        except BaseException:
            if events is not None:
                events.append("nap cancelled")
            raise
        return "rested"

    @server.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    return server


@pytest.fixture
async def url():
    async with served(create_app(toy_server())) as address:
        yield address


@pytest.fixture
async def client():
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


@pytest.fixture
def checked(spec_schema):
    """``checked(response, method)`` → the JSON-RPC messages of a reply, each validated against 2026-07-28."""
    spec_schema(MODERN)  # skip (or fail under CI) when the official schemas are absent

    def check(response: httpx.Response, method: str | None) -> list[dict]:
        messages = sse_messages(response.text) if is_sse(response) else [response.json()]
        for message in messages:
            check_modern_message(message, method)
        return messages

    return check


async def post(client: httpx.AsyncClient, url: str, body: dict, **headers: str) -> httpx.Response:
    return await client.post(url, content=json.dumps(body).encode(), headers=modern_headers(body, **headers))


# --- served, statelessly ----------------------------------------------------------------------------------

async def test_discover_answers_json_without_a_session(client, url, checked):
    response = await post(client, url, modern_request("server/discover", 1))
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in response.headers
    result = checked(response, "server/discover")[0]["result"]
    assert result["supportedVersions"] == [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "toy"


async def test_any_request_stands_alone_with_its_envelope(client, url, checked):
    listed = await post(client, url, modern_request("tools/list", 1))
    called = await post(client, url, modern_request("tools/call", 2, {"name": "echo", "arguments": {"text": "hi"}}))
    assert {t["name"] for t in checked(listed, "tools/list")[0]["result"]["tools"]} >= {"echo", "where"}
    assert checked(called, "tools/call")[0]["result"]["content"][0]["text"] == "hi"


async def test_an_x_mcp_header_parameter_travels_as_mcp_param_and_is_checked(client, url, checked):
    body = modern_request("tools/call", 3, {"name": "where", "arguments": {"region": "北京 west"}})
    wire = encode_value("北京 west")  # not ASCII: it travels base64-encoded inside the sentinel
    assert wire == "=?base64?5YyX5LqsIHdlc3Q=?="
    response = await post(client, url, body, **{"Mcp-Param-Region": wire})
    assert checked(response, "tools/call")[0]["result"]["content"][0]["text"] == "routed to 北京 west"
    missing = await post(client, url, body)
    assert missing.status_code == 400 and "Mcp-Param-Region is missing" in missing.json()["error"]["message"]
    lying = await post(client, url, body, **{"Mcp-Param-Region": "us-east1"})
    assert lying.status_code == 400 and checked(lying, "tools/call")[0]["error"]["code"] == HEADER_MISMATCH


async def test_progress_and_opted_in_log_messages_come_on_the_requests_own_event_stream(client, url, checked):
    body = modern_request("tools/call", 4, {"name": "count", "arguments": {"n": 3}}, progressToken="p-4",
                          **{"io.modelcontextprotocol/logLevel": "info"})
    response = await post(client, url, body)
    assert is_sse(response) and response.headers["x-accel-buffering"] == "no"
    messages = checked(response, "tools/call")
    assert [m.get("method") for m in messages] == ["notifications/progress", "notifications/message"] * 3 + [None]
    assert [m["params"]["progress"] for m in messages if m.get("method") == "notifications/progress"] == [1, 2, 3]
    assert messages[-1]["id"] == 4 and messages[-1]["result"]["resultType"] == "complete"


async def test_without_a_log_level_no_log_message_is_sent(client, url, checked):
    body = modern_request("tools/call", 5, {"name": "count", "arguments": {"n": 2}})
    response = await post(client, url, body)
    assert not any(m.get("method") == "notifications/message" for m in checked(response, "tools/call"))


async def test_asking_the_client_is_an_input_required_result_never_a_request(client, url, checked):
    body = modern_request("tools/call", 6, {"name": "ask", "arguments": {}}, capabilities={"elicitation": {}})
    result = checked(await post(client, url, body), "tools/call")[0]["result"]
    assert result["resultType"] == "input_required"
    (key, asked), = result["inputRequests"].items()
    assert asked["method"] == "elicitation/create"
    retry = modern_request("tools/call", 7, {"name": "ask", "arguments": {},
                                             "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}},
                                             **({"requestState": result["requestState"]} if "requestState" in result
                                                else {})}, capabilities={"elicitation": {}})
    answer = checked(await post(client, url, retry), "tools/call")[0]["result"]
    assert answer["content"][0]["text"] == "hello Ada"


async def test_a_notification_is_taken_with_202(client, url):
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    response = await client.post(url, json=note, headers={**ACCEPT_BOTH, "MCP-Protocol-Version": MODERN,
                                                          "Mcp-Method": "notifications/cancelled"})
    assert (response.status_code, response.content) == (202, b"")


async def test_a_response_on_the_modern_wire_is_refused(client, url, checked):
    stray = {"jsonrpc": "2.0", "id": 9, "result": {"resultType": "complete"}}
    response = await client.post(url, json=stray, headers={**ACCEPT_BOTH, "MCP-Protocol-Version": MODERN})
    assert response.status_code == 400 and checked(response, None)[0]["error"]["code"] == INVALID_REQUEST


async def test_closing_the_stream_cancels_the_request():
    events: list = []
    async with served(create_app(toy_server(events))) as url, httpx.AsyncClient(timeout=10) as client:
        body = modern_request("tools/call", 8, {"name": "nap", "arguments": {"seconds": 30}})
        with anyio.move_on_after(0.3):
            await post(client, url, body)  # gives up, closing the connection: in 2026-07-28, a cancellation
        with anyio.fail_after(3):
            while not events:
                await asyncio.sleep(0.05)
        assert events == ["nap cancelled"]


async def test_subscriptions_listen_holds_a_stream_open_until_the_client_closes_it(spec_schema):
    spec_schema(MODERN)
    server = toy_server()
    async with served(create_app(server)) as url, httpx.AsyncClient(timeout=10) as client:
        body = modern_request("subscriptions/listen", "listen-1", {"notifications": {"toolsListChanged": True,
                                                                                   "promptsListChanged": False}})
        frames = []
        async with client.stream("POST", url, content=json.dumps(body).encode(),
                                 headers=modern_headers(body)) as response:
            assert is_sse(response)
            lines = response.aiter_lines()
            with anyio.fail_after(5):
                async for line in lines:
                    if line.startswith("data:"):
                        frames.append(json.loads(line[5:]))
                        if len(frames) == 1:
                            server.changed("prompts")  # not asked for: never sent
                            server.changed("tools")
                        else:
                            break
        assert [f["method"] for f in frames] == ["notifications/subscriptions/acknowledged",
                                                 "notifications/tools/list_changed"]
        assert all(f["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1" for f in frames)
        assert frames[0]["params"]["notifications"] == {"toolsListChanged": True}
        for frame in frames:
            check_modern_message(frame, "subscriptions/listen")
        with anyio.fail_after(3):  # closing the stream ended the subscription
            while server.listeners:
                await asyncio.sleep(0.05)


# --- every refusal: its status, its code, the request's id, and a body the schema accepts ---------------

def without_meta_key(key: str) -> dict:
    meta = envelope()
    del meta[key]
    return request("server/discover", 11, {"_meta": meta})


REFUSALS = [
    # (what, body, headers to change, status, JSON-RPC code)
    ("no MCP-Protocol-Version", modern_request("tools/list", 11), {"MCP-Protocol-Version": None}, 400,
     HEADER_MISMATCH),
    ("no _meta at all", request("server/discover", 11, {}), {}, 400, INVALID_PARAMS),
    ("no protocolVersion in _meta", without_meta_key("io.modelcontextprotocol/protocolVersion"), {}, 400,
     INVALID_PARAMS),
    ("no clientCapabilities in _meta", without_meta_key("io.modelcontextprotocol/clientCapabilities"), {}, 400,
     INVALID_PARAMS),
    ("header and _meta disagree", modern_request("server/discover", 11, {"_meta": envelope(version="v999.0.0")}),
     {"MCP-Protocol-Version": MODERN}, 400, HEADER_MISMATCH),
    ("a version nobody speaks", modern_request("server/discover", 11, {"_meta": envelope(version="v999.0.0")}),
     {}, 400, UNSUPPORTED_PROTOCOL_VERSION),
    ("a legacy version with an envelope", modern_request("tools/list", 11, {"_meta": envelope(version="2025-11-25")}),
     {}, 400, UNSUPPORTED_PROTOCOL_VERSION),
    ("Mcp-Method of another method", modern_request("tools/list", 11), {"Mcp-Method": "prompts/list"}, 400,
     HEADER_MISMATCH),
    ("Mcp-Name of another tool", modern_request("tools/call", 11, {"name": "echo", "arguments": {"text": "x"}}),
     {"Mcp-Name": "wrong_tool_name"}, 400, HEADER_MISMATCH),
    ("no Mcp-Param-Region", modern_request("tools/call", 11, {"name": "where", "arguments": {"region": "eu"}}),
     {"Mcp-Param-Region": None}, 400, HEADER_MISMATCH),
    ("a capability the request did not declare", modern_request("tools/call", 11, {"name": "ask", "arguments": {}}),
     {}, 400, MISSING_REQUIRED_CLIENT_CAPABILITY),
    ("an unknown tool", modern_request("tools/call", 11, {"name": "nope", "arguments": {}}), {}, 400, INVALID_PARAMS),
    ("initialize: 2026-07-28 has no handshake", modern_request("initialize", 11, {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
     {}, 404, METHOD_NOT_FOUND),
    *[(f"{method}: removed in 2026-07-28", modern_request(method, 11, params), {}, 404, METHOD_NOT_FOUND)
      for method, params in [("ping", None), ("logging/setLevel", {"level": "info"}),
                             ("resources/subscribe", {"uri": "x:/y"}), ("resources/unsubscribe", {"uri": "x:/y"})]],
    ("an unknown method", modern_request("unknown/method", 11), {}, 404, METHOD_NOT_FOUND),
]


@pytest.mark.parametrize("what, body, changes, status, code", REFUSALS, ids=[r[0] for r in REFUSALS])
async def test_each_modern_refusal_has_its_status_and_code_and_echoes_the_id(client, url, checked, what, body,
                                                                           changes, status, code):
    headers = modern_headers(body)
    for name, value in changes.items():
        headers.pop(name, None)
        if value is not None:
            headers[name] = value
    response = await client.post(url, content=json.dumps(body).encode(), headers=headers)
    assert response.status_code == status, response.text
    error = checked(response, body["method"])[0]
    assert error["id"] == 11 and error["error"]["code"] == code, error
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        assert error["error"]["data"] == {"supported": [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
                                          "requested": body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]}
    if code == MISSING_REQUIRED_CLIENT_CAPABILITY:
        assert error["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


# --- one URL, two eras ------------------------------------------------------------------------------------

async def test_a_legacy_session_and_modern_requests_share_the_url(client, url, checked):
    response = await client.post(url, json=initialize(), headers={**ACCEPT_BOTH, "MCP-Protocol-Version": "2025-11-25",
                                                                   "Mcp-Method": "initialize"})
    assert response.status_code == 200 and response.json()["result"]["protocolVersion"] == "2025-11-25"
    session = Session(client, url)
    session.session_id, session.version = response.headers["mcp-session-id"], "2025-11-25"
    modern = await post(client, url, modern_request("tools/call", 2, {"name": "echo", "arguments": {"text": "m"}}))
    legacy = await session.call("tools/call", 2, {"name": "echo", "arguments": {"text": "l"}})
    assert checked(modern, "tools/call")[0]["result"]["content"][0]["text"] == "m"
    assert legacy["result"]["content"][0]["text"] == "l" and "resultType" not in legacy["result"]
    assert (await session.call("ping", 3))["result"] == {}  # ping lives on in the legacy era


async def test_a_modern_request_ignores_a_session_id_it_does_not_own(client, url, checked):
    body = modern_request("tools/list", 1)
    response = await post(client, url, body, **{"Mcp-Session-Id": "stale-or-foreign", "Last-Event-ID": "7"})
    assert response.status_code == 200 and checked(response, "tools/list")[0]["result"]["tools"]


async def test_a_modern_only_endpoint_refuses_get_and_delete():
    async with served(create_app(toy_server(), era="modern")) as url, httpx.AsyncClient(timeout=10) as client:
        for verb in ("GET", "DELETE"):
            response = await client.request(verb, url, headers={**ACCEPT_BOTH, "Mcp-Session-Id": "s"})
            assert response.status_code == 405 and response.headers["allow"] == "POST", verb


async def test_a_legacy_initialize_at_a_modern_only_endpoint_gets_400_header_mismatch_naming_the_versions(checked):
    # 2026-07-28 versioning, compatibility matrix, Legacy client → Modern server over HTTP: "the request
    # is missing the required headers and is rejected per server validation with 400 Bad Request"; and a
    # modern-only server SHOULD name the versions it supports in any error to initialize.
    async with served(create_app(toy_server(), era="modern")) as url, httpx.AsyncClient(timeout=10) as client:
        legacy = await client.post(url, json=initialize(), headers=ACCEPT_BOTH)
        assert legacy.status_code == 400 and "mcp-session-id" not in legacy.headers
        error = checked(legacy, "initialize")[0]
        assert error["id"] == 1 and error["error"]["code"] == HEADER_MISMATCH
        assert error["error"]["data"]["supported"] == [MODERN] and MODERN in error["error"]["message"]
        with pytest.raises(RemoteError) as caught:
            async with Client(http(url), era="legacy"):
                pass
    assert caught.value.code == HEADER_MISMATCH and caught.value.data["supported"] == [MODERN]


async def test_a_legacy_only_endpoint_treats_a_modern_request_as_a_legacy_server_would():
    async with served(create_app(toy_server(), era="legacy")) as url, httpx.AsyncClient(timeout=10) as client:
        response = await post(client, url, modern_request("server/discover", 1))
        assert response.status_code == 400 and response.json()["error"]["code"] == INVALID_REQUEST  # no session
        assert (await Session(client, url).open()).status_code == 200


# --- the bundled servers, each era ------------------------------------------------------------------------

@pytest.mark.subprocess
@pytest.mark.parametrize("era, lands", [("modern", "modern"), ("dual", "modern"), ("legacy", "legacy")])
@pytest.mark.parametrize("script", ["weather", "files", "conformance"])
async def test_each_bundled_server_serves_http_in_each_era(script, era, lands):
    with launch([sys.executable, str(ROOT / "servers" / f"{script}.py"), "--era", era]) as server:
        async with Client(http(server.url), era="auto") as client:
            assert client.era == lands, client.era_reason
            assert await client.list_tools()
        assert server.stdout() == "" and "Traceback" not in server.stderr()


async def test_a_quiet_stream_sends_keep_alive_comments(monkeypatch):
    from mcplab.server.streamable_http import exchange as http_modern

    monkeypatch.setattr(http_modern, "KEEPALIVE_SECONDS", 0.1)
    async with served(create_app(toy_server())) as url, httpx.AsyncClient(timeout=10) as client:
        body = modern_request("subscriptions/listen", 1, {"notifications": {"toolsListChanged": True}})
        lines = []
        async with client.stream("POST", url, content=json.dumps(body).encode(),
                                 headers=modern_headers(body)) as response:
            with anyio.fail_after(5):
                async for line in response.aiter_lines():
                    lines.append(line)
                    if line.startswith(":"):
                        break
    assert lines[0].startswith("event: message") and lines[-1] == ": keep-alive"


@pytest.mark.parametrize("call, meta, replied_as", [
    ({"name": "echo", "arguments": {"text": "hi"}}, {}, "application/json"),
    ({"name": "count", "arguments": {"n": 2}}, {"progressToken": "p-1"}, "text/event-stream"),
])
async def test_an_answered_request_leaves_no_reference_cycle_behind(monkeypatch, call, meta, replied_as):
    """Each modern POST's Exchange is freed by reference counting once it is answered, with the cycle
    collector switched off: garbage in cycles waits for the collector, whose passes grow with the heap
    and pause whichever request is running when they come."""
    import gc
    import weakref

    from mcplab.server.streamable_http import exchange as http_modern

    made: list[weakref.ref] = []

    class Watched(http_modern.Exchange):
        def __init__(self, request_id):
            super().__init__(request_id)
            made.append(weakref.ref(self))

    monkeypatch.setattr(http_modern, "Exchange", Watched)
    async with served(create_app(toy_server())) as url, httpx.AsyncClient(timeout=10) as client:
        gc.disable()
        try:
            response = await post(client, url, modern_request("tools/call", 1, call, **meta))
            assert response.status_code == 200 and response.headers["content-type"].startswith(replied_as)
            for _ in range(100):  # the request's task ends within a few turns of the loop after its reply
                if made and made[0]() is None:
                    break
                await anyio.lowlevel.checkpoint()
            alive = [ref() for ref in made if ref() is not None]
        finally:
            gc.enable()
    assert len(made) == 1 and alive == [], "the exchange outlived its request: a reference cycle holds it"
