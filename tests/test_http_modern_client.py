"""This client on the 2026-07-28 Streamable HTTP wire (mcplab/transports/http.py under mcplab.Client): the
routing headers on every POST, ``Mcp-Param-*`` from ``x-mcp-header``, no session, cancelling by closing the
stream, and ``era="auto"`` reading the body of a 4xx before it falls back to ``initialize``.

The servers are this project's HTTP runner in this process (dual-era, modern-only, legacy-only) and scripted
endpoints that answer the way other servers do. Every modern frame the client saw is validated against the
official 2026-07-28 schema.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated

import anyio
import pytest
from starlette.responses import JSONResponse, Response

from client_helpers import validate_frames
from http_helpers import MODERN, Scripted, served
from mcplab import Client
from mcplab.wire.errors import METHOD_NOT_FOUND, RemoteError, RequestTimeout
from mcplab.server import Context, Server
from mcplab.server.streamable_http import create_app
from mcplab.transports.http import http

pytestmark = [pytest.mark.anyio, pytest.mark.http]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def toy_server(events: list | None = None) -> Server:
    server = Server("toy", "1.0")

    @server.tool
    def where(region: Annotated[str, {"x-mcp-header": "Region"}], zone: int = 1) -> str:
        """Say which region a gateway could route this call to."""
        return f"{region}/{zone}"

    @server.tool
    async def crawl(ctx: Context) -> str:
        """Report progress once, then take a long time."""
        await ctx.report_progress(1, total=100)
        try:
            await anyio.sleep(30)
        except BaseException:
            if events is not None:
                events.append("crawl cancelled")
            raise
        return "done"

    @server.resource("notes://today", mime_type="text/plain")
    def today() -> str:
        """Today's notes."""
        return "buy milk"

    @server.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    return server


def wire(client: Client) -> list:
    """The frames that crossed HTTP (a trace also keeps notes, such as the era decisions)."""
    return [frame for frame in client.trace if frame.channel == "http"]


def posts(client: Client) -> list[dict[str, str]]:
    return [frame.http["headers"] for frame in wire(client) if frame.direction == "c2s"]


def modern_frames(client: Client) -> list:
    return [frame for frame in wire(client) if frame.raw.strip()]


async def test_every_modern_post_mirrors_its_routing_facts_into_headers(spec_schema):
    async with served(create_app(toy_server())) as url:
        async with Client(http(url), era="modern") as client:
            await client.list_tools()
            assert (await client.call_tool("where", {"region": "上海", "zone": 2})).text == "上海/2"
            assert (await client.read_resource("notes://today")).text == "buy milk"
            assert (await client.get_prompt("greet", {"name": "Ada"})).messages
    sent = posts(client)
    assert [h["Mcp-Method"] for h in sent] == ["server/discover", "tools/list", "tools/call", "resources/read",
                                               "prompts/get"]
    assert all(h["MCP-Protocol-Version"] == MODERN and "Mcp-Session-Id" not in h for h in sent)
    assert [h.get("Mcp-Name") for h in sent] == [None, None, "where", "notes://today", "greet"]
    assert sent[2]["Mcp-Param-Region"] == "=?base64?5LiK5rW3?="  # 上海, in the base64 sentinel
    assert "Mcp-Param-Zone" not in sent[2]  # zone carries no x-mcp-header
    assert all(frame.http["method"] == "POST" for frame in wire(client))  # no GET stream, no DELETE on close
    assert validate_frames(modern_frames(client), spec_schema(MODERN), MODERN) == 10


async def test_an_unknown_method_is_a_404_with_method_not_found(spec_schema):
    async with served(create_app(toy_server(), era="modern")) as url:
        async with Client(http(url), era="modern") as client:
            with pytest.raises(RemoteError) as refused:
                await client.request("tools/frobnicate")
    assert refused.value.code == METHOD_NOT_FOUND
    assert wire(client)[-1].http["status"] == 404


async def test_a_timeout_closes_the_stream_and_that_cancels_the_request():
    events: list = []
    async with served(create_app(toy_server(events))) as url:
        async with Client(http(url), era="modern") as client:
            with pytest.raises(RequestTimeout) as timed_out:
                await client.call_tool("crawl", {}, timeout=0.5, on_progress=lambda params: None)
            with anyio.fail_after(3):
                while not events:
                    await asyncio.sleep(0.05)
            assert (await client.call_tool("where", {"region": "eu"})).text == "eu/1"  # and the client goes on
    assert events == ["crawl cancelled"]
    assert not any(getattr(f.message, "method", None) == "notifications/cancelled" for f in wire(client))
    # the message says what went on the wire: a closed response, no notification
    assert str(timed_out.value).endswith("; closed its HTTP response, which cancels it (2026-07-28: no "
                                         "notifications/cancelled over HTTP)")


async def test_a_timeout_cancels_a_silent_request_whose_reply_would_be_json():
    events: list = []
    server = toy_server(events)

    @server.tool
    async def nap(seconds: float) -> str:
        """Sleep, then answer (nothing is sent before the answer, so the reply is plain JSON)."""
        try:
            await anyio.sleep(seconds)
        except BaseException:
            events.append("nap cancelled")
            raise
        return "rested"

    async with served(create_app(server)) as url:
        async with Client(http(url), era="modern") as client:
            with anyio.fail_after(4), pytest.raises(RequestTimeout) as timed_out:
                await client.call_tool("nap", {"seconds": 5}, timeout=0.5)
            with anyio.fail_after(3):
                while not events:
                    await asyncio.sleep(0.05)
    assert events == ["nap cancelled"]
    assert "sent notifications/cancelled" not in str(timed_out.value)
    assert not any(getattr(f.message, "method", None) == "notifications/cancelled" for f in wire(client))


# --- era="auto": what a 4xx body says --------------------------------------------------------------------

async def test_auto_lands_modern_on_a_dual_era_server_and_legacy_on_a_legacy_only_one():
    async with served(create_app(toy_server())) as dual, served(create_app(toy_server(), era="legacy")) as legacy:
        async with Client(http(dual), era="auto") as modern_client:
            assert (await modern_client.call_tool("where", {"region": "eu"})).text == "eu/1"
        async with Client(http(legacy), era="auto") as legacy_client:
            assert (await legacy_client.call_tool("where", {"region": "eu"})).text == "eu/1"
    assert (modern_client.era, legacy_client.era) == ("modern", "legacy")
    probe, refusal, opening = wire(legacy_client)[:3]
    assert probe.message.method == "server/discover" and refusal.http["status"] == 400
    assert opening.message.method == "initialize"
    assert "not a modern answer" in legacy_client.era_reason


def scripted_refusal(status: int, body: dict | None) -> Scripted:
    """A legacy-style endpoint whose answer to server/discover is ``status`` with ``body``."""
    async def discover(message, headers):
        return JSONResponse(body, status_code=status) if body is not None else Response(status_code=status)
    return Scripted({"server/discover": discover})


@pytest.mark.parametrize("status, body", [
    (400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad Request: No valid session ID"}}),
    (400, None), (404, None), (405, None),
    (400, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "initialize first"}}),
], ids=["400 with a legacy error", "400 empty", "404 empty", "405 empty", "400 with -32600 for the probe"])
async def test_auto_falls_back_to_initialize_when_the_4xx_body_is_no_modern_error(status, body):
    scripted = scripted_refusal(status, body)
    async with served(scripted.app()) as url:
        async with Client(http(url), era="auto") as client:
            assert client.era == "legacy" and client.protocol_version == "2025-11-25"
    assert len(scripted.posts("server/discover")) == 1 and len(scripted.posts("initialize")) == 1


@pytest.mark.parametrize("status, era", [(404, "modern"), (400, "legacy"), (200, "legacy")])
async def test_auto_reads_method_not_found_by_the_status_the_transport_hands_back(status, era):
    """-32601 for the probe with a 404 is a modern server refusing server/discover itself; with any
    other status it is a legacy server that knows no such method. The status comes from the transport."""
    async def discover(message, headers):
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "error": {
            "code": METHOD_NOT_FOUND, "message": "Method not found"}}, status_code=status)

    scripted = Scripted({"server/discover": discover})
    async with served(scripted.app()) as url:
        if era == "modern":
            with pytest.raises(RemoteError) as refused:
                async with Client(http(url), era="auto"):
                    pass
            assert refused.value.code == METHOD_NOT_FOUND
            assert not scripted.posts("initialize")
        else:
            async with Client(http(url), era="auto") as client:
                assert client.era == "legacy"
            assert f"HTTP {status} with error -32601" in client.era_reason
            assert len(scripted.posts("initialize")) == 1


async def test_the_transport_hands_back_each_answer_s_status_once():
    async with served(create_app(toy_server(), era="modern")) as url:
        async with Client(http(url), era="modern") as client:
            with pytest.raises(RemoteError):
                await client.request("tools/frobnicate")
            refused_id = wire(client)[-2].message.id
            await client.list_tools()
            answered_id = wire(client)[-2].message.id
            transport = client.transport
            assert transport.reply_status(refused_id) == 404 and transport.reply_status(answered_id) == 200
            assert transport.reply_status(refused_id) is None  # handed back once: nothing piles up


async def test_statuses_nobody_asks_for_stay_bounded():
    from mcplab.transports.http import STATUSES

    async with served(create_app(toy_server(), era="modern")) as url:
        async with Client(http(url), era="modern") as client:
            for _ in range(STATUSES * 3):  # a long session whose statuses are never read
                await client.list_tools()
            transport = client.transport
            assert len(transport._statuses) == STATUSES
            newest = wire(client)[-2].message.id
            assert transport.reply_status(newest) == 200  # the newest are the ones kept


async def test_auto_reads_a_400_unsupported_version_as_modern_and_asks_again():
    """The conformance ``request-metadata`` mock: the first POST is refused with -32022, whatever it said."""
    refused: list = []

    async def discover(message, headers):
        if not refused:
            refused.append(headers.get("mcp-protocol-version"))
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": [MODERN], "requested": "1900-01-01"}}}, status_code=400)
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {
            "resultType": "complete", "supportedVersions": [MODERN], "capabilities": {}, "ttlMs": 0,
            "cacheScope": "private"}})

    scripted = Scripted({"server/discover": discover})
    async with served(scripted.app()) as url:
        async with Client(http(url), era="auto") as client:
            assert client.era == "modern" and client.server_capabilities == {}
    assert len(scripted.posts("server/discover")) == 2 and not scripted.posts("initialize")
    assert "ask again with 2026-07-28" in client.era_reason


async def test_over_http_a_slow_answer_to_the_probe_is_waited_for_not_taken_for_a_legacy_server():
    """Silence means legacy only on stdio: over HTTP the probe gets a status sooner or later, and a
    loaded machine must not turn a modern server into a legacy one (the conformance runs on 2 cores)."""
    async def discover(message, headers):
        await asyncio.sleep(0.5)  # longer than the probe timeout below
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {
            "resultType": "complete", "supportedVersions": [MODERN], "capabilities": {}, "ttlMs": 0,
            "cacheScope": "private"}})

    scripted = Scripted({"server/discover": discover})
    async with served(scripted.app()) as url:
        client = Client(http(url), era="auto", timeout=10)
        client.probe_timeout = 0.1
        async with client:
            assert client.era == "modern"
    assert len(scripted.posts("server/discover")) == 1 and not scripted.posts("initialize")


async def test_a_modern_exchange_keeps_no_session_id_the_server_hands_out():
    """The conformance mocks put ``mcp-session-id`` on every reply; 2026-07-28 has no sessions to join."""
    async def discover(message, headers):
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {
            "resultType": "complete", "supportedVersions": [MODERN], "capabilities": {"tools": {}}, "ttlMs": 0,
            "cacheScope": "private"}}, headers={"mcp-session-id": "session-1"})

    async def tools_list(message, headers):
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {
            "resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"}},
            headers={"mcp-session-id": "session-1"})

    scripted = Scripted({"server/discover": discover, "tools/list": tools_list})
    async with served(scripted.app()) as url:
        async with Client(http(url), era="modern") as client:
            await client.list_tools()
    assert all("mcp-session-id" not in headers for verb, headers, _ in scripted.received)
    assert [verb for verb, _, _ in scripted.received] == ["POST", "POST"]  # and no DELETE


async def test_a_tool_with_invalid_header_marks_is_left_out_with_a_warning(caplog):
    tools = [{"name": "valid_tool", "description": "ok", "inputSchema": {
                 "type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}},
             {"name": "bad_tool", "description": "a header on a number", "inputSchema": {
                 "type": "object", "properties": {"ratio": {"type": "number", "x-mcp-header": "Ratio"}}}}]

    async def discover(message, headers):
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {
            "resultType": "complete", "supportedVersions": [MODERN], "capabilities": {"tools": {}}, "ttlMs": 0,
            "cacheScope": "private"}})

    async def tools_list(message, headers):
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {
            "resultType": "complete", "tools": tools, "ttlMs": 0, "cacheScope": "private"}})

    async def tools_call(message, headers):
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {
            "resultType": "complete", "content": [{"type": "text", "text": headers.get("mcp-param-region", "-")}]}})

    scripted = Scripted({"server/discover": discover, "tools/list": tools_list, "tools/call": tools_call})
    async with served(scripted.app()) as url:
        async with Client(http(url), era="modern") as client:
            with caplog.at_level(logging.WARNING, logger="mcplab.client"):
                listed = await client.list_tools()
            assert (await client.call_tool("valid_tool", {"region": "us-west1"})).text == "us-west1"
    assert [tool.name for tool in listed] == ["valid_tool"]
    assert "bad_tool" in client.rejected_tools
    assert any("bad_tool" in record.getMessage() for record in caplog.records)


# --- a response stream that breaks before its response ---------------------------------------------------------

async def _discover(message, headers):
    return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {
        "resultType": "complete", "supportedVersions": [MODERN], "capabilities": {"tools": {}}, "ttlMs": 0,
        "cacheScope": "private"}})


def _progress_then(end: str):
    """An SSE reply that carries one progress notification, then ends (``"close"``) or breaks (``"drop"``)."""
    from starlette.responses import StreamingResponse

    async def body():
        yield b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":' \
              b'{"progressToken":"t","progress":1}}\n\n'
        if end == "drop":
            raise RuntimeError("the connection drops mid-stream")

    return StreamingResponse(body(), media_type="text/event-stream")


@pytest.mark.parametrize("end", ["close", "drop"])
async def test_a_broken_response_stream_is_reissued_as_a_new_request_with_a_new_id(end):
    # 2026-07-28 changelog (major change 9): resumability is gone; "a broken response stream loses the
    # in-flight request; clients MUST re-issue it as a new request with a new request ID".
    attempts: list[dict] = []

    async def tools_call(message, headers):
        attempts.append(message)
        if len(attempts) == 1:
            return _progress_then(end)
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {
            "resultType": "complete", "content": [{"type": "text", "text": "second time lucky"}]}})

    scripted = Scripted({"server/discover": _discover, "tools/call": tools_call})
    async with served(scripted.app()) as url:
        async with Client(http(url), era="modern", timeout=5) as client:
            with anyio.fail_after(4):
                result = await client.call_tool("echo", {"text": "hi"})
    assert result.text == "second time lucky"
    assert attempts[0]["id"] != attempts[1]["id"] and attempts[0]["params"] == attempts[1]["params"]
    notes = [f.raw for f in client.trace if f.channel == "note"]
    assert any("re-issu" in note and str(attempts[1]["id"]) in note for note in notes), notes


async def test_a_stream_that_keeps_breaking_is_reissued_a_bounded_number_of_times():
    from mcplab.client.client import MAX_REISSUES
    from mcplab.wire.errors import TransportError

    attempts: list[dict] = []

    async def tools_call(message, headers):
        attempts.append(message)
        return _progress_then("close")

    scripted = Scripted({"server/discover": _discover, "tools/call": tools_call})
    async with served(scripted.app()) as url:
        async with Client(http(url), era="modern", timeout=5) as client:
            with anyio.fail_after(4), pytest.raises(TransportError, match="broke"):
                await client.call_tool("echo", {"text": "hi"})
    assert len(attempts) == 1 + MAX_REISSUES and len({a["id"] for a in attempts}) == len(attempts)


async def test_a_legacy_timeout_over_http_posts_notifications_cancelled_and_says_so():
    server = toy_server()

    @server.tool
    async def nap(seconds: float) -> str:
        """Sleep, then answer."""
        await anyio.sleep(seconds)
        return "rested"

    async with served(create_app(server)) as url:
        async with Client(http(url), era="legacy") as client:
            with anyio.fail_after(4), pytest.raises(RequestTimeout) as timed_out:
                await client.call_tool("nap", {"seconds": 5}, timeout=0.5)
    assert str(timed_out.value).endswith("; sent notifications/cancelled")
    posted = [f for f in wire(client) if f.direction == "c2s" and getattr(f.message, "method", None)
              == "notifications/cancelled"]
    assert len(posted) == 1 and posted[0].message.params["requestId"] is not None
