"""Server.handle in memory: lifecycle, errors, primitives, pagination, notifications, server→client
requests. Every reply and notification is checked against the official schema of the negotiated
revision (tests/server_helpers.MemorySession)."""

from __future__ import annotations

import base64
import json
from typing import Literal

import pytest

from mcplab import InvalidParams, lifecycle
from mcplab.wire.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND
from mcplab.wire.jsonrpc import Request
from mcplab.server import Context, Server, ToolError, ToolResult, audio, text
from mcplab.wire.versions import LATEST_LEGACY, LEGACY_VERSIONS

from server_helpers import MemorySession, load_server_module


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def demo_server(page_size: int = 50) -> Server:
    server = Server("demo", "1.2.3", title="Demo", page_size=page_size, declare_logging=True)  # count logs

    @server.tool(title="Add", annotations={"readOnlyHint": True})
    def add(a: int, b: int = 1) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool
    def fail(reason: str) -> str:
        """Always a business error."""
        raise ToolError(f"cannot: {reason}")

    @server.tool
    def crash() -> str:
        """A bug."""
        raise ZeroDivisionError("division by zero")

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    def structured(n: int) -> dict:
        """Structured output; n < 0 breaks the output schema."""
        return {"n": n} if n >= 0 else {"n": "negative"}

    @server.tool
    def sound() -> dict:
        """Audio content (MCP 2025-03-26 and later)."""
        return audio(b"RIFF", "audio/wav")

    @server.tool
    async def count(n: int, ctx: Context) -> str:
        """Reports progress and logs."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, total=n, message=f"{i}/{n}")
        await ctx.debug("counted quietly")
        await ctx.warning("counted loudly")
        return f"counted to {n}"

    @server.tool
    async def ask(question: str, ctx: Context) -> str:
        """Asks the client's model."""
        reply = await ctx.sample(question)
        return reply["content"]["text"]

    @server.tool
    async def form(ctx: Context) -> str:
        """Asks the user."""
        return json.dumps(await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}))

    @server.tool
    async def roots(ctx: Context) -> str:
        """Lists the client's roots."""
        return ", ".join(r["uri"] for r in await ctx.list_roots())

    @server.resource("demo://hello", mime_type="text/plain")
    def hello() -> str:
        """A greeting."""
        return "hello"

    @server.resource("demo://bytes")
    def raw() -> bytes:
        return b"\x00\x01"

    @server.resource("demo://item/{id}", complete={"id": ["1", "2", "10"]})
    def item(id: str) -> dict:
        if id == "0":
            raise LookupError(id)
        return {"id": id}

    @server.prompt(complete={"topic": ["mcp", "json-rpc", "mcplab"]})
    def explain(topic: str, level: Literal["short", "long"] = "short") -> str:
        """Explain a topic.

        Args:
            topic: What to explain.
            level: How much to say.
        """
        return f"Explain {topic} ({level})."

    @server.prompt
    def greeting() -> list:
        return [text("hi"), "there"]

    return server


async def ready(server: Server | None = None, version: str = "2025-06-18", capabilities: dict | None = None,
                answers: dict | None = None) -> MemorySession:
    session = MemorySession(server or demo_server(), answers)
    await session.initialize(version, capabilities)
    return session


# --- lifecycle -------------------------------------------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("version", LEGACY_VERSIONS)
async def test_initialize_echoes_a_version_the_server_speaks(version: str) -> None:
    result = await MemorySession(demo_server()).initialize(version)
    assert result["protocolVersion"] == version
    assert result["serverInfo"]["name"] == "demo"


@pytest.mark.anyio
@pytest.mark.parametrize("requested", ["1999-01-01", "2026-07-28", "latest"])
async def test_initialize_offers_the_latest_legacy_version_for_any_other(requested: str) -> None:
    assert (await MemorySession(demo_server()).initialize(requested))["protocolVersion"] == LATEST_LEGACY


@pytest.mark.anyio
async def test_a_request_before_initialize_is_an_invalid_request_but_ping_is_answered() -> None:
    session = MemorySession(demo_server())
    error = await session.error("tools/list")
    assert error["code"] == INVALID_REQUEST and "initialize first" in error["message"]
    assert await session.result("ping") == {}


@pytest.mark.anyio
async def test_a_second_initialize_is_an_invalid_request() -> None:
    session = await ready()
    error = await session.error("initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                               "clientInfo": {"name": "x", "version": "1"}})
    assert error["code"] == INVALID_REQUEST and "already" in error["message"]
    assert session.version == "2025-06-18"


@pytest.mark.anyio
@pytest.mark.parametrize("params", [{}, {"protocolVersion": 20250618}, {"protocolVersion": "2025-06-18",
                                                                         "capabilities": []}])
async def test_initialize_with_bad_params_is_invalid_params(params: dict) -> None:
    error = await MemorySession(demo_server()).error("initialize", params)
    assert error["code"] == INVALID_PARAMS and "expected params." in error["message"]


@pytest.mark.anyio
async def test_initialized_sent_with_an_id_is_a_request_for_a_method_that_does_not_exist() -> None:
    session = MemorySession(demo_server())
    await session.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "x", "version": "1"}})
    error = await session.error("notifications/initialized")
    assert error["code"] == METHOD_NOT_FOUND and "without an \"id\"" in error["message"]
    assert session.connection.lifecycle.state is lifecycle.ACCEPTED  # only the notification completes the handshake


@pytest.mark.anyio
async def test_initialized_before_initialize_is_ignored() -> None:
    session = MemorySession(demo_server())
    await session.notify("notifications/initialized")
    assert session.connection.lifecycle.state is lifecycle.IDLE


@pytest.mark.anyio
async def test_an_unknown_method_is_method_not_found_and_lists_what_exists() -> None:
    error = await (await ready()).error("tools/run")
    assert error["code"] == METHOD_NOT_FOUND and "tools/call" in error["message"]


@pytest.mark.anyio
async def test_params_must_be_an_object() -> None:
    assert (await (await ready()).error("tools/list", [1]))["code"] == INVALID_PARAMS


# --- capabilities ----------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_only_capabilities_the_server_implements_are_advertised() -> None:
    server = Server("tools-only", declare_logging=False)
    server.tool(lambda: "x", name="x", description="x")
    session = MemorySession(server)
    assert (await session.initialize())["capabilities"] == {"tools": {"listChanged": True}}
    error = await session.error("prompts/list")
    assert error["code"] == METHOD_NOT_FOUND and "'prompts'" in error["message"]
    assert (await session.error("logging/setLevel", {"level": "info"}))["code"] == METHOD_NOT_FOUND


@pytest.mark.anyio
@pytest.mark.parametrize("version, has_completions", [("2024-11-05", False), ("2025-03-26", True)])
async def test_completions_capability_exists_from_2025_03_26(version: str, has_completions: bool) -> None:
    session = MemorySession(demo_server())
    assert ("completions" in (await session.initialize(version))["capabilities"]) is has_completions
    assert "values" in (await session.result("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "explain"}, "argument": {"name": "topic", "value": "m"}}))["completion"]


# --- tools -----------------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_the_seed_weather_call_returns_sunny_beijing() -> None:
    weather = load_server_module("weather").server
    session = await ready(weather)
    tools = {t["name"]: t for t in (await session.result("tools/list"))["tools"]}
    assert tools["get_weather"]["description"] == "查询指定城市的当前天气"
    assert tools["get_weather"]["inputSchema"]["required"] == ["city"]
    result = await session.result("tools/call", {"name": "get_weather", "arguments": {"city": "Beijing"}})
    assert result == {"content": [{"type": "text", "text": "Beijing: sunny (晴), 12 °C, humidity 30%, wind 9 km/h"}],
                      "isError": False}


@pytest.mark.anyio
async def test_an_unknown_tool_is_invalid_params_naming_the_known_tools() -> None:
    error = await (await ready()).error("tools/call", {"name": "subtract", "arguments": {}})
    assert error["code"] == INVALID_PARAMS and "Unknown tool: 'subtract'" in error["message"]
    assert "add" in error["message"]


@pytest.mark.anyio
@pytest.mark.parametrize("version", LEGACY_VERSIONS)
async def test_invalid_arguments_are_a_protocol_error_until_2025_11_25_then_a_tool_error(version: str) -> None:
    session = await ready(version=version)
    reply = await session.request("tools/call", {"name": "add", "arguments": {"a": "two"}})
    if version == "2025-11-25":  # SEP-1303: the model sees the problem and can retry
        assert reply["result"]["isError"] is True
        assert "a: 'two' is not of type 'integer'" in reply["result"]["content"][0]["text"]
    else:
        assert reply["error"]["code"] == INVALID_PARAMS
        assert "a: 'two' is not of type 'integer'" in reply["error"]["message"]


@pytest.mark.anyio
async def test_missing_arguments_and_unknown_extra_arguments() -> None:
    session = await ready()
    assert "'a' is a required property" in (await session.error("tools/call", {"name": "add"}))["message"]
    result = await session.result("tools/call", {"name": "add", "arguments": {"a": 1, "zzz": 2}})
    assert result["content"][0]["text"] == "2"  # names the function does not take are dropped


@pytest.mark.anyio
async def test_a_tool_error_is_a_result_with_is_error() -> None:
    result = await (await ready()).result("tools/call", {"name": "fail", "arguments": {"reason": "closed"}})
    assert result == {"content": [{"type": "text", "text": "cannot: closed"}], "isError": True}


@pytest.mark.anyio
async def test_an_unexpected_exception_is_a_tool_error_that_names_it() -> None:
    result = await (await ready()).result("tools/call", {"name": "crash"})
    assert result["isError"] is True
    assert result["content"][0]["text"] == "crash failed: ZeroDivisionError: division by zero"


@pytest.mark.anyio
@pytest.mark.parametrize("version, structured", [("2025-03-26", False), ("2025-06-18", True)])
async def test_structured_output_appears_from_2025_06_18(version: str, structured: bool) -> None:
    session = await ready(version=version)
    tool = next(t for t in (await session.result("tools/list"))["tools"] if t["name"] == "structured")
    assert ("outputSchema" in tool) is structured
    result = await session.result("tools/call", {"name": "structured", "arguments": {"n": 4}})
    assert json.loads(result["content"][0]["text"]) == {"n": 4}  # the JSON is also sent as text
    assert ("structuredContent" in result) is structured


@pytest.mark.anyio
async def test_output_that_breaks_the_output_schema_is_a_tool_error() -> None:
    result = await (await ready()).result("tools/call", {"name": "structured", "arguments": {"n": -1}})
    assert result["isError"] is True and "outputSchema" in result["content"][0]["text"]


@pytest.mark.anyio
@pytest.mark.parametrize("version, fields", [
    ("2024-11-05", {"name", "description", "inputSchema"}),
    ("2025-03-26", {"name", "description", "inputSchema", "annotations"}),
    ("2025-06-18", {"name", "title", "description", "inputSchema", "annotations"}),
])
async def test_tool_descriptions_carry_only_fields_the_version_defines(version: str, fields: set) -> None:
    tools = (await (await ready(version=version)).result("tools/list"))["tools"]
    assert set(next(t for t in tools if t["name"] == "add")) == fields


@pytest.mark.anyio
@pytest.mark.parametrize("version, ok", [("2024-11-05", False), ("2025-03-26", True)])
async def test_audio_content_needs_2025_03_26(version: str, ok: bool) -> None:
    result = await (await ready(version=version)).result("tools/call", {"name": "sound"})
    assert result["isError"] is not ok
    if not ok:
        assert "2025-03-26" in result["content"][0]["text"]


# --- pagination ------------------------------------------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("method, key", [("tools/list", "tools"), ("resources/list", "resources"),
                                         ("prompts/list", "prompts"), ("resources/templates/list", "resourceTemplates")])
async def test_every_list_is_paginated_with_an_opaque_cursor(method: str, key: str) -> None:
    session = await ready(demo_server(page_size=1))
    everything = (await ready(demo_server())).result  # one page holds it all
    seen, cursor = [], None
    while True:
        page = await session.result(method, {"cursor": cursor} if cursor else {})
        assert len(page[key]) <= 1
        seen += page[key]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert seen == (await everything(method))[key]


@pytest.mark.anyio
@pytest.mark.parametrize("cursor", ["nonsense", base64.urlsafe_b64encode(b"prompts:1").decode(), 17])
async def test_a_cursor_that_did_not_come_from_the_server_is_invalid_params(cursor: object) -> None:
    error = await (await ready(demo_server(page_size=1))).error("tools/list", {"cursor": cursor})
    assert error["code"] == INVALID_PARAMS and "nextCursor" in error["message"]


@pytest.mark.anyio
async def test_a_server_may_replace_page_and_every_list_then_uses_its_cursors_and_its_refusals() -> None:
    server, asked = demo_server(), []

    def two_a_page(items: list, cursor: object, what: str) -> tuple[list, str | None]:
        asked.append((what, cursor))
        if cursor not in (None, "second-half"):
            raise InvalidParams(f"expected a cursor from this server, got {cursor!r}")
        start = 0 if cursor is None else 2
        return items[start:start + 2], "second-half" if cursor is None and len(items) > 2 else None

    server.page = two_a_page
    session = await ready(server)
    first = await session.result("tools/list")
    second = await session.result("tools/list", {"cursor": first["nextCursor"]})
    everything = (await (await ready(demo_server())).result("tools/list"))["tools"]
    assert first["nextCursor"] == "second-half" and "nextCursor" not in second
    assert first["tools"] + second["tools"] == everything[:4]
    error = await session.error("prompts/list", {"cursor": "made-up"})
    assert error["code"] == INVALID_PARAMS and "made-up" in error["message"]
    assert asked == [("tools", None), ("tools", "second-half"), ("prompts", "made-up")]


# --- resources -------------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_resources_are_read_as_text_blob_or_json() -> None:
    session = await ready()
    read = session.result
    assert (await read("resources/read", {"uri": "demo://hello"}))["contents"] == [
        {"uri": "demo://hello", "mimeType": "text/plain", "text": "hello"}]
    assert (await read("resources/read", {"uri": "demo://bytes"}))["contents"][0]["blob"] == "AAE="
    item = (await read("resources/read", {"uri": "demo://item/7"}))["contents"][0]
    assert item["mimeType"] == "application/json" and json.loads(item["text"]) == {"id": "7"}


@pytest.mark.anyio
@pytest.mark.parametrize("uri", ["demo://nothing", "demo://item/0", "other://hello"])
async def test_a_missing_resource_is_resource_not_found_with_its_uri(uri: str) -> None:
    error = await (await ready()).error("resources/read", {"uri": uri})
    assert error == {"code": RESOURCE_NOT_FOUND, "message": f"Resource not found: {uri}", "data": {"uri": uri}}


@pytest.mark.anyio
async def test_subscribers_hear_about_updates_until_they_unsubscribe() -> None:
    server = demo_server()
    watcher, other = await ready(server), await ready(server)
    assert await watcher.result("resources/subscribe", {"uri": "demo://item/3"}) == {}
    server.resource_updated("demo://item/3")
    assert watcher.notifications == [{"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                      "params": {"uri": "demo://item/3"}}]
    assert other.notifications == []
    await watcher.result("resources/unsubscribe", {"uri": "demo://item/3"})
    server.resource_updated("demo://item/3")
    assert len(watcher.notifications) == 1
    assert (await watcher.error("resources/subscribe", {"uri": "demo://none"}))["code"] == RESOURCE_NOT_FOUND


@pytest.mark.anyio
async def test_catalogue_changes_reach_ready_clients_only() -> None:
    server = demo_server()
    ready_client, waiting = await ready(server), MemorySession(server)
    server.tool(lambda: "new", name="fresh", description="added later")
    server.remove("prompts", "greeting")
    assert [n["method"] for n in ready_client.notifications] == ["notifications/tools/list_changed",
                                                                 "notifications/prompts/list_changed"]
    assert waiting.peer.posted == []
    assert "fresh" in [t["name"] for t in (await ready_client.result("tools/list"))["tools"]]


# --- prompts and completion --------------------------------------------------------------------------

@pytest.mark.anyio
async def test_prompt_arguments_are_reflected_and_checked() -> None:
    session = await ready()
    prompt = next(p for p in (await session.result("prompts/list"))["prompts"] if p["name"] == "explain")
    assert prompt["arguments"] == [{"name": "topic", "description": "What to explain.", "required": True},
                                   {"name": "level", "description": "How much to say.", "required": False}]
    result = await session.result("prompts/get", {"name": "explain", "arguments": {"topic": "mcp"}})
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "Explain mcp (short)."}}]
    assert "needs the argument(s) 'topic'" in (await session.error("prompts/get", {"name": "explain"}))["message"]
    bad_level = await session.error("prompts/get", {"name": "explain", "arguments": {"topic": "x", "level": "huge"}})
    assert "must be one of short, long" in bad_level["message"]
    assert (await session.error("prompts/get", {"name": "nope"}))["code"] == INVALID_PARAMS


@pytest.mark.anyio
async def test_completion_offers_matching_choices() -> None:
    session = await ready()

    async def complete(ref: dict, name: str, value: str) -> dict:
        return (await session.result("completion/complete",
                                     {"ref": ref, "argument": {"name": name, "value": value}}))["completion"]

    prompt = {"type": "ref/prompt", "name": "explain"}
    assert await complete(prompt, "topic", "MC") == {"values": ["mcp", "mcplab"], "total": 2, "hasMore": False}
    assert (await complete(prompt, "level", ""))["values"] == ["short", "long"]  # from the Literal hint
    assert (await complete({"type": "ref/resource", "uri": "demo://item/{id}"}, "id", "1"))["values"] == ["1", "10"]
    assert (await complete(prompt, "unknown", "x"))["values"] == []
    error = await session.error("completion/complete", {"ref": {"type": "ref/prompt", "name": "nope"},
                                                        "argument": {"name": "a", "value": ""}})
    assert error["code"] == INVALID_PARAMS


# --- notifications to the client --------------------------------------------------------------------

@pytest.mark.anyio
async def test_progress_goes_out_only_for_a_progress_token_and_logs_respect_the_level() -> None:
    session = await ready(version="2025-03-26")
    await session.result("tools/call", {"name": "count", "arguments": {"n": 2}})
    assert [n["params"]["level"] for n in session.notifications] == ["warning"]  # default level: info
    await session.result("logging/setLevel", {"level": "debug"})
    await session.result("tools/call", {"name": "count", "arguments": {"n": 2}, "_meta": {"progressToken": "p1"}})
    methods = [(n["method"], n["params"].get("progress", n["params"].get("level"))) for n in session.notifications]
    assert methods[1:] == [("notifications/progress", 1), ("notifications/progress", 2),
                           ("notifications/message", "debug"), ("notifications/message", "warning")]
    assert session.notifications[1]["params"] == {"progressToken": "p1", "progress": 1, "total": 2, "message": "1/2"}


@pytest.mark.anyio
async def test_progress_messages_are_left_out_for_2024_11_05() -> None:
    session = await ready(version="2024-11-05")
    await session.result("tools/call", {"name": "count", "arguments": {"n": 1}, "_meta": {"progressToken": 5}})
    assert session.notifications[0]["params"] == {"progressToken": 5, "progress": 1, "total": 1}


@pytest.mark.anyio
async def test_set_level_refuses_an_unknown_level() -> None:
    error = await (await ready()).error("logging/setLevel", {"level": "verbose"})
    assert error["code"] == INVALID_PARAMS and "debug, info" in error["message"]


@pytest.mark.anyio
async def test_cancelled_notifications_ask_the_runner_to_stop_that_request() -> None:
    session = await ready()
    await session.notify("notifications/cancelled", {"requestId": 41, "reason": "user"})
    await session.notify("notifications/cancelled", {"reason": "malformed: no id"})
    assert session.peer.cancelled == [41]


# --- asking the client --------------------------------------------------------------------------------

SAMPLE = {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}


@pytest.mark.anyio
async def test_sampling_is_asked_of_a_client_that_declared_it() -> None:
    session = await ready(capabilities={"sampling": {}}, answers={"sampling/createMessage": SAMPLE})
    result = await session.result("tools/call", {"name": "ask", "arguments": {"question": "6*7?"}})
    assert result["content"][0]["text"] == "42"
    assert session.peer.requests == [("sampling/createMessage", {
        "messages": [{"role": "user", "content": {"type": "text", "text": "6*7?"}}], "maxTokens": 100})]


@pytest.mark.anyio
async def test_sampling_is_not_asked_of_a_client_without_the_capability() -> None:
    session = await ready(answers={"sampling/createMessage": SAMPLE})
    result = await session.result("tools/call", {"name": "ask", "arguments": {"question": "?"}})
    assert result["isError"] is True and "'sampling' capability" in result["content"][0]["text"]
    assert session.peer.requests == []


@pytest.mark.anyio
async def test_no_request_goes_to_the_client_before_it_is_initialized() -> None:
    session = MemorySession(demo_server(), {"sampling/createMessage": SAMPLE})
    await session.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {"sampling": {}},
                                        "clientInfo": {"name": "x", "version": "1"}})
    result = await session.result("tools/call", {"name": "ask", "arguments": {"question": "?"}})
    assert result["isError"] is True and "notifications/initialized" in result["content"][0]["text"]


@pytest.mark.anyio
@pytest.mark.parametrize("version, ok", [("2025-03-26", False), ("2025-06-18", True)])
async def test_elicitation_needs_2025_06_18_and_the_capability(version: str, ok: bool) -> None:
    answer = {"action": "accept", "content": {"name": "Ada"}}
    session = await ready(version=version, capabilities={"elicitation": {}},
                          answers={"elicitation/create": answer})
    result = await session.result("tools/call", {"name": "form"})
    assert result["isError"] is not ok
    if ok:
        assert json.loads(result["content"][0]["text"]) == answer


@pytest.mark.anyio
async def test_roots_are_listed_from_the_client() -> None:
    roots = {"roots": [{"uri": "file:///home/ada/project", "name": "project"}]}
    session = await ready(capabilities={"roots": {"listChanged": True}}, answers={"roots/list": roots})
    result = await session.result("tools/call", {"name": "roots"})
    assert result["content"][0]["text"] == "file:///home/ada/project"


@pytest.mark.anyio
async def test_a_handler_bug_outside_tools_is_an_internal_error() -> None:
    server = demo_server()

    @server.prompt
    def broken() -> list:
        return [object()]

    error = await (await ready(server)).error("prompts/get", {"name": "broken"})
    assert error["code"] == -32603 and "TypeError" in error["message"]


@pytest.mark.anyio
async def test_responses_are_not_handle_s_business() -> None:
    from mcplab.wire.jsonrpc import Response

    session = await ready()
    assert await session.server.handle(Response(1, {}), session.connection) is None
    assert await session.server.handle(Request(99, "ping"), session.connection) is not None


def test_tool_result_spelled_out_passes_through() -> None:
    from mcplab.server.content import tool_result

    value = ToolResult([text("a")], structured={"x": 1}, is_error=True)
    assert tool_result(value, "2025-06-18") == {"content": [{"type": "text", "text": "a"}], "isError": True,
                                                "structuredContent": {"x": 1}}


# --- outputSchema and structuredContent, at every revision --------------------------------------------------

CANNOT_EXPRESS = [  # (case, output schema): 2025-06-18 and 2025-11-25 require {"type": "object", ...} at the root
    ("an array schema", {"type": "array", "items": {"type": "integer"}}),
    ("a string schema", {"type": "string"}),
    ("a schema with no type", {"properties": {"n": {"type": "integer"}}}),
    ("a list instead of a schema", ["type", "object"]),
    ("a boolean schema", True),
]


@pytest.mark.parametrize("case, schema", CANNOT_EXPRESS, ids=[c[0] for c in CANNOT_EXPRESS])
def test_an_output_schema_some_revision_cannot_express_is_refused_at_registration(case, schema) -> None:
    server = Server("strict")
    with pytest.raises(ValueError) as caught:
        server.tool(lambda: [1], name="numbers", description="Numbers.", output_schema=schema)
    message = str(caught.value)
    assert "numbers" in message and "outputSchema" in message and '"type": "object"' in message
    assert "2025-06-18" in message and "2025-11-25" in message
    assert "numbers" not in server.tools


STRUCTURED_SERVER = '''
from mcplab.server import Server, ToolResult, run, text

server = Server("structured")
SHAPE = {"type": "object", "properties": {"type": {"type": "string"}, "text": {"type": "string"}},
         "required": ["type", "text"]}
N = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

@server.tool(output_schema=SHAPE)
def shaped() -> dict:
    """Structured output that happens to look like a text content block."""
    return {"type": "text", "text": "still structured"}

@server.tool(output_schema=N)
def spelled(ok: bool) -> ToolResult:
    """A ToolResult spelled out: its structured value must match the schema too."""
    return ToolResult([text("n")], structured={"n": 1} if ok else {"n": "one"})

@server.tool(output_schema=N)
def words() -> str:
    """A string where the schema promises an object."""
    return "not an object"

run(server)
'''


@pytest.mark.subprocess
@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_structured_results_conform_to_the_declared_schema_at_every_revision(tmp_path, version) -> None:
    # server/tools, "Output Schema": servers MUST provide structured results that conform to it.
    import sys

    from server_helpers import RawServer, modern_params

    script = tmp_path / "structured.py"
    script.write_text(STRUCTURED_SERVER, encoding="utf-8")
    modern = version == "2026-07-28"
    with RawServer([sys.executable, str(script)]) as server:
        if not modern:
            server.initialize(version)

        def call(name: str, arguments: dict) -> dict:
            params = {"name": name, "arguments": arguments}
            return server.result("tools/call", modern_params(params) if modern else params)

        shaped = call("shaped", {})
        assert shaped["structuredContent"] == {"type": "text", "text": "still structured"}
        assert json.loads(shaped["content"][0]["text"]) == shaped["structuredContent"]
        assert call("spelled", {"ok": True})["structuredContent"] == {"n": 1}
        wrong = call("spelled", {"ok": False})
        assert wrong["isError"] is True and "outputSchema" in wrong["content"][0]["text"]
        assert "structuredContent" not in wrong
        string = call("words", {})
        assert string["isError"] is True and "structuredContent" not in string
        assert server.close() == 0


@pytest.mark.subprocess
def test_a_server_whose_output_schema_no_legacy_revision_can_express_does_not_start(tmp_path) -> None:
    import subprocess
    import sys

    script = tmp_path / "loose.py"
    script.write_text("from mcplab.server import Server, run\n"
                      "server = Server('loose')\n"
                      "@server.tool(output_schema={'type': 'array'})\n"
                      "def numbers() -> list:\n"
                      "    '''Numbers.'''\n"
                      "    return [1, 2]\n"
                      "run(server)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], input=b"", capture_output=True, timeout=20)
    assert done.returncode != 0 and done.stdout == b""
    assert b"outputSchema" in done.stderr and b"2025-06-18" in done.stderr


# --- advertise only what a server really does; mark what 2026-07-28 deprecated ----------------------------------

@pytest.mark.subprocess
@pytest.mark.parametrize("name, logs", [("weather", False), ("files", False), ("conformance", True)])
def test_a_bundled_server_advertises_logging_only_if_it_logs(name: str, logs: bool) -> None:
    # 2026-07-28 deprecated.mdx (SEP-2577): Logging is deprecated and new implementations SHOULD NOT
    # adopt it; a server that never sends notifications/message must not claim the capability.
    from server_helpers import RawServer, modern_params, server_argv

    with RawServer(server_argv(name)) as server:
        discovered = server.result("server/discover", modern_params())["capabilities"]
    with RawServer(server_argv(name)) as server:
        initialized = server.initialize("2025-11-25")["capabilities"]
        refused = server.request("logging/setLevel", {"level": "info"})
    assert ("logging" in discovered) is logs and ("logging" in initialized) is logs
    assert ("error" in refused) is not logs
    if not logs:
        assert refused["error"]["code"] == METHOD_NOT_FOUND


@pytest.mark.anyio
async def test_a_server_declares_logging_only_when_told_and_a_log_it_did_not_declare_is_not_sent(caplog) -> None:
    quiet, loud = Server("quiet"), Server("loud", declare_logging=True)
    for server in (quiet, loud):
        @server.tool
        async def chatty(ctx: Context) -> str:
            """Logs one line."""
            await ctx.warning("something to say")
            return "said"

    for server, declared in ((quiet, False), (loud, True)):
        session = MemorySession(server)
        info = await session.initialize("2025-11-25")
        assert ("logging" in info["capabilities"]) is declared
        with caplog.at_level("WARNING", logger="mcplab.server"):
            await session.result("tools/call", {"name": "chatty"})
        sent = [n for n in session.notifications if n["method"] == "notifications/message"]
        assert len(sent) == (1 if declared else 0)
    assert any("declare_logging=True" in record.getMessage() for record in caplog.records)


def test_the_deprecated_features_of_2026_07_28_are_named_with_their_sep_and_marked_where_shown() -> None:
    from mcplab.wire.versions import DEPRECATED, capabilities_text

    assert set(DEPRECATED) == {"roots", "sampling", "logging"}
    assert all(feature.sep == "SEP-2577" and feature.since == "2026-07-28" and feature.instead
               for feature in DEPRECATED.values())
    assert capabilities_text({"tools": {"listChanged": True}, "logging": {}}) == \
        "logging (deprecated in 2026-07-28), tools (listChanged)"
    assert capabilities_text({"roots": {"listChanged": True}, "sampling": {}}) == \
        "roots (deprecated in 2026-07-28; listChanged), sampling (deprecated in 2026-07-28)"
    import mcplab.client.client
    import mcplab.server.context
    for documented in (Server, mcplab.server.context.Context.log, mcplab.server.context.Context.sample,
                       mcplab.server.context.Context.list_roots, mcplab.client.Client,
                       mcplab.client.Client.set_logging_level, mcplab.client.Client.notify_roots_changed):
        assert "deprecated in 2026-07-28" in (documented.__doc__ or ""), documented


def test_a_tool_record_never_changes_after_registration_its_checkers_are_derived() -> None:
    import dataclasses

    from mcplab.server import Server

    server = Server("frozen")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    tool = server.tools["add"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.description = "changed"  # type: ignore[misc]
    assert tool.check({"a": 1, "b": 2}) is None and "'b' is a required property" in tool.check({"a": 1})
    assert tool.check is tool.check  # compiled once
    assert tool.check_output(object()) is None  # no outputSchema: nothing to check
