"""Modern HTTP headers: the value encoding, the x-mcp-header rules, and what the client sends.

The pure part is table-driven from the spec's examples and the conformance suite's invalid tools;
the client part runs over the memory transport in HTTP mode, which keeps each message's headers
in its trace frame. Every client test runs on asyncio and on trio.
"""

from __future__ import annotations

import logging

import pytest

from client_helpers import FakeModernServer, FakeServer, validate_frames
from mcplab.wire import jsonrpc
from mcplab.client import Client
from mcplab.wire.errors import LocalProtocolError
from mcplab.wire.headers import (
    InvalidHeaderAnnotation, decode_value, encode_value, header_annotations, param_headers, request_headers,
)

MODERN = "2026-07-28"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


# --- values -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, header", [  # the spec's table ("Value Encoding"), and a few more
    ("us-west1", "us-west1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ("", ""),
    ("us west 1", "us west 1"),
    ("\tindented", "=?base64?CWluZGVudGVk?="),
    ("line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="),
    ("file:///path/to/file%20name.txt", "file:///path/to/file%20name.txt"),
])
def test_a_value_is_sent_plain_when_safe_and_as_base64_otherwise(text, header):
    assert encode_value(text) == header
    assert decode_value(header) == text


def test_types_become_text_and_none_means_no_header():
    annotations = {("region",): "Region", ("priority",): "Priority", ("verbose",): "Verbose",
                   ("debug",): "Debug", ("nested", "zone"): "Zone", ("missing",): "Missing"}
    arguments = {"region": "us-east1", "priority": 42, "verbose": None, "debug": False, "nested": {"zone": "b"}}
    assert param_headers(annotations, arguments) == {
        "Mcp-Param-Region": "us-east1", "Mcp-Param-Priority": "42", "Mcp-Param-Debug": "false",
        "Mcp-Param-Zone": "b"}
    assert param_headers({("n",): "N"}, {"n": 7.0}) == {"Mcp-Param-N": "7"}
    with pytest.raises(LocalProtocolError, match="safe integer"):
        param_headers({("n",): "N"}, {"n": 2**53})


def test_the_standard_headers_mirror_method_name_and_uri():
    assert request_headers("tools/list", {"_meta": {}}, MODERN) == {
        "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    name = request_headers("prompts/get", {"name": "代码审查"}, MODERN)["Mcp-Name"]
    assert name == "=?base64?5Luj56CB5a6h5p+l?="
    headers = request_headers("tools/call", {"name": "sql", "arguments": {"region": "eu"}}, MODERN,
                              {("region",): "Region"})
    assert headers == {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "sql",
                       "Mcp-Param-Region": "eu"}


# --- the rules on annotations -------------------------------------------------------------------------------

def prop(annotation, kind="string"):
    return {"type": kind, "x-mcp-header": annotation}


INVALID = [  # the conformance suite's http-invalid-tool-headers tools, then the reachability rule
    ("empty", {"value": prop("")}, "non-empty"),
    ("object", {"data": prop("Data", "object")}, "only string, integer and boolean"),
    ("array", {"items": {**prop("Items", "array"), "items": {"type": "string"}}}, "only string"),
    ("null", {"nil": prop("Nil", "null")}, "only string"),
    ("number", {"score": prop("Score", "number")}, "only string"),
    ("untyped", {"x": {"x-mcp-header": "X"}}, "only string"),
    ("duplicate, same case", {"a": prop("Region"), "b": prop("Region")}, "repeats"),
    ("duplicate, other case", {"a": prop("MyField"), "b": prop("myfield")}, "repeats"),
    ("space", {"value": prop("My Region")}, "cannot hold"),
    ("colon", {"value": prop("Region:Primary")}, "cannot hold"),
    ("non-ASCII", {"value": prop("Région")}, "cannot hold"),
    ("control character", {"value": prop("Region\t1")}, "cannot hold"),
]


@pytest.mark.parametrize("properties, complaint", [case[1:] for case in INVALID], ids=[c[0] for c in INVALID])
def test_an_annotation_that_breaks_a_rule_is_refused_saying_which(properties, complaint):
    with pytest.raises(InvalidHeaderAnnotation, match=complaint):
        header_annotations({"type": "object", "properties": properties})


@pytest.mark.parametrize("where", [
    {"type": "object", "properties": {"list": {"type": "array", "items": prop("Item")}}},
    {"type": "object", "oneOf": [{"properties": {"a": prop("A")}}]},
    {"type": "object", "$defs": {"id": prop("Id")}, "properties": {"id": {"$ref": "#/$defs/id"}}},
    {"type": "object", "if": {"properties": {"a": prop("A")}}},
    {"type": "string", "x-mcp-header": "Root"},
])
def test_an_annotation_off_the_properties_chain_is_refused(where):
    with pytest.raises(InvalidHeaderAnnotation, match="through 'properties' alone"):
        header_annotations(where)


def test_valid_annotations_are_found_at_any_depth_of_properties():
    schema = {"type": "object", "properties": {
        "region": prop("Region"), "priority": prop("Priority", "integer"), "flag": prop("Flag", "boolean"),
        "opts": {"type": "object", "properties": {"zone": prop("Zone")}},
        "x-mcp-header": {"type": "string"},  # a property that happens to have that name is no annotation
        "query": {"type": "string", "default": {"x-mcp-header": "not a schema"}}}}
    assert header_annotations(schema) == {("region",): "Region", ("priority",): "Priority", ("flag",): "Flag",
                                          ("opts", "zone"): "Zone"}


# --- the client, over an HTTP-shaped memory transport ---------------------------------------------------

TOOLS = [
    {"name": "execute_sql", "description": "run SQL", "inputSchema": {"type": "object", "properties": {
        "region": prop("Region"), "query": {"type": "string"}}, "required": ["region", "query"]}},
    {"name": "bad_tool", "description": "marks a number", "inputSchema": {"type": "object", "properties": {
        "score": prop("Score", "number")}}},
]


def sql_server(channel="http"):
    def call(request):
        return {"content": [{"type": "text", "text": f"ran {request.params['arguments']['query']}"}]}

    return FakeModernServer(channel=channel, capabilities={"tools": {}, "resources": {}}, handlers={
        "tools/list": lambda r: {"tools": TOOLS, "ttlMs": 0, "cacheScope": "private"}, "tools/call": call,
        "resources/read": lambda r: {"contents": [], "ttlMs": 0, "cacheScope": "private"}})


def sent_headers(client, method):
    return [f.http["headers"] for f in client.trace if f.direction == "c2s" and f.message.method == method]


@pytest.mark.anyio
async def test_every_modern_request_over_http_carries_the_standard_headers(spec_schema, caplog):
    server = sql_server()
    async with Client(server.transport, era="modern") as client:
        with caplog.at_level(logging.WARNING, logger="mcplab.client"):
            tools = await client.list_tools()
        await client.call_tool("execute_sql", {"region": "Hello, 世界", "query": "SELECT 1"})
        await client.read_resource("file:///a b.txt")
        await client.read_resource("file:///笔记.txt")
    assert [t.name for t in tools] == ["execute_sql"]
    assert "bad_tool" in client.rejected_tools and "number" in client.rejected_tools["bad_tool"]
    assert any("left out tool 'bad_tool'" in r.getMessage() for r in caplog.records)
    assert sent_headers(client, "server/discover") == [{"MCP-Protocol-Version": MODERN,
                                                        "Mcp-Method": "server/discover"}]
    assert sent_headers(client, "tools/call") == [{
        "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "execute_sql",
        "Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?="}]
    assert [h["Mcp-Name"] for h in sent_headers(client, "resources/read")] == [
        "file:///a b.txt", "=?base64?ZmlsZTovLy/nrJTorrAudHh0?="]  # inner spaces are fine; non-ASCII is not
    assert validate_frames(client.trace, spec_schema(MODERN), MODERN) == 10


@pytest.mark.anyio
async def test_on_stdio_annotations_are_ignored_and_no_tool_is_dropped():
    server = sql_server(channel="stdio")
    async with Client(server.transport, era="modern") as client:
        assert [t.name for t in await client.list_tools()] == ["execute_sql", "bad_tool"]
        await client.call_tool("execute_sql", {"region": "eu", "query": "SELECT 1"})
    assert client.rejected_tools == {} and all(f.http is None for f in client.trace)


@pytest.mark.anyio
async def test_a_header_mismatch_on_a_call_lists_the_tools_again_and_retries_once():
    server = sql_server()
    mismatches = [True]

    def call(request):
        if mismatches and mismatches.pop():
            return [jsonrpc.ErrorResponse(request.id, -32020, "Header mismatch: Mcp-Param-Region missing")]
        return {"content": [{"type": "text", "text": "ok"}]}

    server.handlers["tools/call"] = call
    async with Client(server.transport, era="modern") as client:
        result = await client.call_tool("execute_sql", {"region": "eu", "query": "q"})  # never listed before
    assert result.text == "ok"
    assert [m.method for m in server.requests()] == ["server/discover", "tools/call", "tools/list", "tools/call"]
    assert "Mcp-Param-Region" not in sent_headers(client, "tools/call")[0]
    assert sent_headers(client, "tools/call")[1]["Mcp-Param-Region"] == "eu"


@pytest.mark.anyio
async def test_legacy_requests_carry_no_modern_headers():
    server = FakeServer(channel="http", handlers={"tools/list": lambda r: {"tools": TOOLS}})
    async with Client(server.transport, era="legacy") as client:
        assert len(await client.list_tools()) == 2  # no header rules in the legacy era
    assert all(f.http["headers"] == {} for f in client.trace if f.direction == "c2s")
