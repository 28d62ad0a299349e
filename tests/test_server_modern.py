"""Server.handle in the modern era (MCP 2026-07-28), in memory: the per-request envelope and its errors,
server/discover, resultType and caching hints, removed methods, per-request logging, the dual-era
decision, x-mcp-header. Every reply and notification is checked against the 2026-07-28 schema
(tests/server_helpers.ModernSession)."""

from __future__ import annotations

import pytest

from mcplab.wire.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION
from mcplab.wire.jsonrpc import Notification, Request
from mcplab.server import Context, Server, modern
from mcplab.server.schema import header_parameters
from mcplab.wire.versions import LEGACY_VERSIONS

from server_helpers import MemorySession, ModernSession, check_server_message, envelope, load_server_module

PV, CC, CI, LL = ("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
                  "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/logLevel")
EVERY_VERSION = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def small_server() -> Server:
    server = Server("small", "2.0.0", title="Small", instructions="Say hello.", declare_logging=True)  # chatty logs

    @server.tool
    def hello(name: str) -> str:
        """Greets someone."""
        return f"Hello, {name}!"

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Logs at three levels."""
        for level in ("debug", "info", "warning"):
            await ctx.log(level, f"a {level} message")
        return f"client capabilities: {sorted(ctx.client_capabilities)}"

    @server.resource("small://greeting", mime_type="text/plain")
    def greeting() -> str:
        """A greeting."""
        return "hi"

    @server.resource("small://item/{n}")
    def item(n: str) -> dict:
        """One item."""
        if not n.isdigit():
            raise LookupError(n)
        return {"n": int(n)}

    @server.prompt(complete={"topic": ["cats", "cars"]})
    def talk(topic: str) -> str:
        """Talk about a topic."""
        return f"Talk about {topic}."

    return server


# --- server/discover and the shape of every result ---------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("era, versions", [("dual", EVERY_VERSION), ("modern", ["2026-07-28"])])
async def test_discover_names_versions_capabilities_and_the_server(era, versions) -> None:
    result = await ModernSession(small_server(), era=era).result("server/discover")
    assert result["supportedVersions"] == versions
    assert set(result["capabilities"]) == {"completions", "logging", "prompts", "resources", "tools"}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "small", "title": "Small",
                                                                      "version": "2.0.0"}
    assert result["instructions"] == "Say hello."
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 3_600_000, "public")


@pytest.mark.anyio
async def test_every_result_carries_result_type_server_info_and_cache_hints_where_cacheable() -> None:
    session = ModernSession(small_server())
    calls = [("tools/list", {}), ("tools/call", {"name": "hello", "arguments": {"name": "Ada"}}),
             ("resources/list", {}), ("resources/templates/list", {}), ("resources/read", {"uri": "small://item/4"}),
             ("prompts/list", {}), ("prompts/get", {"name": "talk", "arguments": {"topic": "cats"}}),
             ("completion/complete", {"ref": {"type": "ref/prompt", "name": "talk"},
                                      "argument": {"name": "topic", "value": "ca"}})]
    for method, params in calls:
        result = await session.result(method, params)  # schema-checked: ttlMs/cacheScope required where cacheable
        assert result["resultType"] == "complete"
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "small"
        assert ("ttlMs" in result) is (method in modern.CACHEABLE), method


@pytest.mark.anyio
async def test_caching_hints_can_be_set_per_method() -> None:
    server = Server("s", ttl_ms={"tools/list": 0}, cache_scope="private")
    server.tool(lambda: "x", name="x", description="x")
    result = await ModernSession(server).result("tools/list")
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


@pytest.mark.anyio
async def test_tools_list_is_in_registration_order_every_time() -> None:
    session = ModernSession(small_server())
    orders = [[t["name"] for t in (await session.result("tools/list"))["tools"]] for _ in range(3)]
    assert orders == [["hello", "chatty"]] * 3


# --- the envelope, the version, the method ----------------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("params, says", [
    ({}, "params._meta"),
    ({"_meta": {CC: {}}}, PV),
    ({"_meta": {PV: "2026-07-28"}}, CC),
    ({"_meta": {PV: "2026-07-28", CC: []}}, CC),
    ({"_meta": {PV: 20260728, CC: {}}}, PV),
    ({"_meta": {PV: "2026-07-28", CC: {}, CI: "me"}}, CI),
    ({"_meta": {PV: "2026-07-28", CC: {}, LL: "loud"}}, LL),
])
async def test_a_malformed_envelope_is_invalid_params_naming_the_key(params, says) -> None:
    reply = await ModernSession(small_server()).send("server/discover", params)
    assert reply["error"]["code"] == INVALID_PARAMS and says in reply["error"]["message"]


@pytest.mark.anyio
async def test_client_info_is_optional() -> None:
    reply = await ModernSession(small_server()).send("tools/list", {"_meta": {PV: "2026-07-28", CC: {}}})
    assert reply["result"]["tools"]


@pytest.mark.anyio
@pytest.mark.parametrize("era, requested, supported", [
    ("dual", "1900-01-01", EVERY_VERSION), ("modern", "v999.0.0", ["2026-07-28"]),
    ("dual", "2025-11-25", EVERY_VERSION),  # a legacy revision travels with initialize, not with _meta
])
async def test_an_unsupported_version_is_32022_listing_the_supported_ones(era, requested, supported) -> None:
    session = ModernSession(small_server(), era=era)
    reply = await session.send("tools/list", {"_meta": envelope(version=requested)})
    assert reply["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert reply["error"]["data"] == {"supported": supported, "requested": requested}
    assert session.connection.era is None or era == "modern"  # a failed probe decides nothing


@pytest.mark.anyio
@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
                                    "initialize", "unknown/method", "notifications/initialized"])
async def test_methods_2026_does_not_have_are_method_not_found(method) -> None:
    error = await ModernSession(small_server()).error(method, {"uri": "small://greeting", "level": "info"})
    assert error["code"] == METHOD_NOT_FOUND


@pytest.mark.anyio
async def test_initialize_in_the_modern_era_names_the_versions_spoken() -> None:
    session = ModernSession(small_server(), era="modern")
    reply = await session.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                              "clientInfo": {"name": "old", "version": "1"}})
    assert reply["error"]["code"] == METHOD_NOT_FOUND
    assert reply["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}


@pytest.mark.anyio
async def test_a_capability_the_server_lacks_is_method_not_found() -> None:
    server = Server("tools-only")
    server.tool(lambda: "x", name="x", description="x")
    error = await ModernSession(server).error("prompts/list")
    assert error["code"] == METHOD_NOT_FOUND and "prompts" in error["message"]


@pytest.mark.anyio
async def test_a_missing_resource_is_invalid_params_with_its_uri() -> None:
    error = await ModernSession(small_server()).error("resources/read", {"uri": "small://item/x"})
    assert (error["code"], error["data"]) == (INVALID_PARAMS, {"uri": "small://item/x"})


# --- per request, never per connection --------------------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("level, expected", [(None, []), ("info", ["info", "warning"]), ("debug", ["debug", "info",
                                                                                                  "warning"])])
async def test_log_messages_go_only_to_a_request_that_asked_at_or_above_its_level(level, expected) -> None:
    session = ModernSession(small_server())
    await session.result("tools/call", {"name": "chatty"}, **({LL: level} if level else {}))
    assert [n["params"]["level"] for n in session.notifications if n["method"] == "notifications/message"] == expected


@pytest.mark.anyio
async def test_capabilities_come_from_each_request_and_never_leak_to_the_next() -> None:
    session = ModernSession(small_server())
    first = await session.result("tools/call", {"name": "chatty"}, capabilities={"sampling": {}, "roots": {}})
    second = await session.result("tools/call", {"name": "chatty"}, capabilities={})
    assert first["content"][0]["text"] == "client capabilities: ['roots', 'sampling']"
    assert second["content"][0]["text"] == "client capabilities: []"
    assert session.connection.client_capabilities == {}  # the connection itself learned nothing


@pytest.mark.anyio
async def test_progress_still_streams_in_the_modern_era() -> None:
    conformance = load_server_module("conformance")
    session = ModernSession(conformance.server)
    await session.result("tools/call", {"name": "test_tool_with_progress", "arguments": {}}, progressToken="p1")
    progress = [n["params"] for n in session.notifications if n["method"] == "notifications/progress"]
    assert [p["progress"] for p in progress] == [0, 50, 100] and {p["progressToken"] for p in progress} == {"p1"}


# --- which era: the dual-era decision ------------------------------------------------------------------

@pytest.mark.parametrize("method, params, header, era", [
    ("server/discover", {"_meta": envelope()}, None, "modern"),
    ("server/discover", {}, None, "modern"),
    ("tools/list", {"_meta": envelope()}, None, "modern"),
    ("initialize", {"_meta": envelope(), "protocolVersion": "2025-11-25"}, None, "modern"),
    ("initialize", {"protocolVersion": "2025-11-25"}, None, "legacy"),
    ("initialize", {"protocolVersion": "2025-11-25"}, "2025-11-25", "legacy"),
    ("tools/list", {}, "2026-07-28", "modern"),
    ("tools/list", {}, "2025-06-18", None),
    ("tools/list", {"_meta": {"progressToken": 1}}, None, None),
    ("ping", None, None, None),
])
def test_era_for_reads_the_envelope_the_method_and_the_header(method, params, header, era) -> None:
    assert Server.era_for(Request(1, method, params), version_header=header) == era


@pytest.mark.anyio
async def test_a_dual_era_connection_that_opens_with_discover_stays_modern() -> None:
    session = ModernSession(small_server())
    assert (await session.result("server/discover"))["supportedVersions"] == EVERY_VERSION
    assert session.connection.era == "modern"
    reply = await session.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                              "clientInfo": {"name": "late", "version": "1"}})
    assert reply["error"]["code"] == METHOD_NOT_FOUND and reply["error"]["data"]["supported"] == ["2026-07-28"]
    error = (await session.send("tools/list", {}))["error"]  # every request of a modern connection needs _meta
    assert error["code"] == INVALID_PARAMS


@pytest.mark.anyio
async def test_a_dual_era_connection_that_opens_with_initialize_stays_legacy() -> None:
    legacy = MemorySession(small_server())
    legacy.connection = legacy.server.connect(legacy.peer, "dual")
    assert (await legacy.result("ping")) == {}  # before initialize: answered, decides nothing
    assert legacy.connection.era is None
    await legacy.initialize("2025-11-25")
    assert legacy.connection.era == "legacy"
    reply = await legacy.request("tools/list", {"_meta": envelope()})
    assert reply["error"]["code"] == INVALID_REQUEST and "initialize" in reply["error"]["message"]
    assert (await legacy.result("tools/list"))["tools"]


@pytest.mark.anyio
async def test_a_failed_probe_leaves_the_dual_era_connection_free_to_initialize() -> None:
    session = ModernSession(small_server())
    await session.send("server/discover", {"_meta": envelope(version="2099-01-01")})
    legacy = MemorySession(session.server)
    legacy.connection = session.connection
    assert (await legacy.initialize("2025-06-18"))["protocolVersion"] == "2025-06-18"


@pytest.mark.anyio
async def test_a_legacy_only_server_knows_nothing_of_discover_or_envelopes() -> None:
    session = MemorySession(small_server())  # Server.connect's default era is "legacy"
    await session.initialize("2025-11-25")
    assert (await session.error("server/discover", {"_meta": envelope()}))["code"] == METHOD_NOT_FOUND
    assert (await session.result("tools/list", {"_meta": envelope()}))["tools"]  # _meta is only _meta here


@pytest.mark.anyio
async def test_modern_notifications_other_than_cancelled_are_ignored() -> None:
    session = ModernSession(small_server())
    for method in ("notifications/initialized", "notifications/roots/list_changed", "notifications/whatever"):
        assert await session.server.handle(Notification(method), session.connection) is None
    assert session.peer.posted == []


# --- x-mcp-header ---------------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_x_mcp_header_reaches_modern_clients_and_not_legacy_ones() -> None:
    weather = load_server_module("weather").server
    modern_tools = (await ModernSession(weather).result("tools/list"))["tools"]
    forecast = next(t for t in modern_tools if t["name"] == "get_forecast")
    assert forecast["inputSchema"]["properties"]["city"]["x-mcp-header"] == "City"
    assert weather.tools["get_forecast"].headers == {"City": ("city",)}
    for version in LEGACY_VERSIONS:
        legacy = MemorySession(weather)
        await legacy.initialize(version)
        tools = (await legacy.result("tools/list"))["tools"]
        assert "x-mcp-header" not in str(tools), version


@pytest.mark.parametrize("schema, problem", [
    ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}}, "token"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "My Region"}}}, "token"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Région"}}}, "token"),
    ({"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}, "string, integer, boolean"),
    ({"type": "object", "properties": {"a": {"type": "object", "x-mcp-header": "A"}}}, "string, integer, boolean"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Id"},
                                       "b": {"type": "string", "x-mcp-header": "ID"}}}, "already"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
     "properties alone"),
    ({"type": "object", "properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}}, "properties alone"),
])
def test_an_invalid_x_mcp_header_is_refused_when_the_tool_is_registered(schema, problem) -> None:
    with pytest.raises(ValueError, match=problem):
        Server("s").tool(lambda **kw: "x", name="bad", description="bad", schema=schema)


def test_header_parameters_follow_nested_properties() -> None:
    schema = {"type": "object", "properties": {
        "where": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
        "priority": {"type": "integer", "x-mcp-header": "Priority"}, "verbose": {"type": "boolean"}}}
    assert header_parameters(schema) == {"Region": ("where", "region"), "Priority": ("priority",)}


def test_the_legacy_schema_check_still_applies_to_legacy_frames() -> None:
    check_server_message("2025-11-25", {"jsonrpc": "2.0", "id": 1, "result": {}}, "ping")
    with pytest.raises(AssertionError):
        check_server_message("2026-07-28", {"jsonrpc": "2.0", "id": 1, "result": {}}, "tools/list")


@pytest.mark.anyio
async def test_a_per_request_connection_names_every_version_to_initialize() -> None:
    session = ModernSession(small_server())
    session.connection.era = "modern"  # what the HTTP runner does: each request decides alone, nothing is locked
    reply = await session.send("initialize", {"_meta": envelope(), "protocolVersion": "2025-11-25"})
    assert reply["error"]["code"] == METHOD_NOT_FOUND and reply["error"]["data"]["supported"] == EVERY_VERSION


@pytest.mark.subprocess
@pytest.mark.parametrize("module", ["mcplab.server.modern", "mcplab.server.mrtr", "mcplab.server.subscriptions"])
def test_the_modern_modules_are_sans_io(module) -> None:
    import json
    import subprocess
    import sys

    code = (f"import importlib, json, sys; importlib.import_module({module!r}); "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('anyio', 'asyncio', 'httpx', 'subprocess', 'socket', 'starlette', 'uvicorn', 'trio'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == []
