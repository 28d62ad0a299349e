"""The routing headers of a 2026-07-28 POST checked against its body (mcplab/server/streamable_http/header_checks.py).

Sans-IO: a table of (headers as sent, request) → accepted, or -32020 HeaderMismatch. The header values use the
spec's own test vectors for the ``=?base64?…?=`` sentinel ("basic/transports", "Value Encoding").
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest

from mcplab.wire.errors import HEADER_MISMATCH, HeaderMismatch
from mcplab.wire.headers import decode_value, encode_value
from mcplab.wire.jsonrpc import Request
from mcplab.server import Server
from mcplab.server.streamable_http.header_checks import check_headers

MODERN = "2026-07-28"


def routing_server() -> Server:
    server = Server("routing")

    @server.tool
    def query(region: Annotated[str, {"x-mcp-header": "Region"}],
              priority: Annotated[int, {"x-mcp-header": "Priority"}] = 1,
              verbose: Annotated[bool, {"x-mcp-header": "Verbose"}] = False,
              sql: str = "") -> str:
        """Run a query in a region."""
        return sql

    return server


TOOL = routing_server().tools["query"]


def call(**arguments) -> Request:
    return Request(1, "tools/call", {"name": "query", "arguments": arguments})


def base(method: str = "tools/call", name: str | None = "query", **extra: str) -> list[tuple[str, str]]:
    headers = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)]
    if name is not None:
        headers.append(("Mcp-Name", name))
    return headers + list(extra.items())


ACCEPTED = [
    ("names ignore case", [("mcp-protocol-version", MODERN), ("MCP-METHOD", "tools/list")], Request(1, "tools/list")),
    ("a plain region", base(**{"Mcp-Param-Region": "us-west1"}), call(region="us-west1")),
    ("non-ASCII, as the spec encodes it", base(**{"Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?="}),
     call(region="Hello, 世界")),
    ("leading and trailing spaces, encoded", base(**{"Mcp-Param-Region": "=?base64?IHBhZGRlZCA=?="}),
     call(region=" padded ")),
    ("a newline, encoded", base(**{"Mcp-Param-Region": "=?base64?bGluZTEKbGluZTI=?="}), call(region="line1\nline2")),
    ("a value that looks like the sentinel, encoded",
     base(**{"Mcp-Param-Region": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="}), call(region="=?base64?literal?=")),
    ("no prefix: taken literally", base(**{"Mcp-Param-Region": "SGVsbG8="}), call(region="SGVsbG8=")),
    ("no suffix: taken literally", base(**{"Mcp-Param-Region": "=?base64?SGVsbG8="}), call(region="=?base64?SGVsbG8=")),
    ("an empty string", base(**{"Mcp-Param-Region": ""}), call(region="")),
    ("an integer", base(**{"Mcp-Param-Region": "eu", "Mcp-Param-Priority": "42"}), call(region="eu", priority=42)),
    ("an integer compares as a number", base(**{"Mcp-Param-Region": "eu", "Mcp-Param-Priority": "42"}),
     call(region="eu", priority=42.0)),
    ("a negative integer", base(**{"Mcp-Param-Region": "eu", "Mcp-Param-Priority": "-7"}),
     call(region="eu", priority=-7)),
    ("booleans", base(**{"Mcp-Param-Region": "eu", "Mcp-Param-Verbose": "false"}), call(region="eu", verbose=False)),
    ("null: no header", base(**{"Mcp-Param-Region": "eu"}), call(region="eu", verbose=None)),
    ("an unannotated argument needs no header", base(**{"Mcp-Param-Region": "eu"}), call(region="eu", sql="x")),
    ("an unknown Mcp-Param-* is forwarded, not judged", base(**{"Mcp-Param-Region": "eu", "Mcp-Param-Zone": "b"}),
     call(region="eu")),
    ("a resource URI, exactly as in the body",
     base("resources/read", "file:///path/to/file%20name.txt"),
     Request(1, "resources/read", {"uri": "file:///path/to/file%20name.txt"})),
    ("a prompt name", base("prompts/get", "review"), Request(1, "prompts/get", {"name": "review"})),
    ("an Mcp-Name in base64", base("prompts/get", encode_value("北京")), Request(1, "prompts/get", {"name": "北京"})),
]

REFUSED = [
    ("no MCP-Protocol-Version", [("Mcp-Method", "tools/list")], Request(1, "tools/list"), "MCP-Protocol-Version"),
    ("a version that is not the body's", [("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Method", "tools/list")],
     Request(1, "tools/list"), "does not match"),
    ("no Mcp-Method", [("MCP-Protocol-Version", MODERN)], Request(1, "tools/list"), "Mcp-Method is missing"),
    ("another method", base("prompts/list", None), Request(1, "tools/list"), "Mcp-Method"),
    ("values are case-sensitive", base("TOOLS/LIST", None), Request(1, "tools/list"), "case-sensitive"),
    ("Mcp-Method sent twice", base("tools/list", None) + [("mcp-method", "tools/list")], Request(1, "tools/list"),
     "sent 2 times"),
    ("no Mcp-Name on tools/call", base(name=None, **{"Mcp-Param-Region": "eu"}), call(region="eu"),
     "Mcp-Name is missing"),
    ("another tool name", base(name="wrong_tool_name"), call(region="eu"), "Mcp-Name"),
    ("a resource URI decoded", base("resources/read", "file:///path/to/file name.txt"),
     Request(1, "resources/read", {"uri": "file:///path/to/file%20name.txt"}), "Mcp-Name"),
    ("no Mcp-Param-Region though the body has one", base(), call(region="us-west1"), "Mcp-Param-Region is missing"),
    ("a region that is not the body's", base(**{"Mcp-Param-Region": "us-east1"}), call(region="us-west1"),
     "does not match"),
    ("a header for an argument the body lacks", base(**{"Mcp-Param-Region": "eu", "Mcp-Param-Verbose": "true"}),
     call(region="eu"), "no arguments.verbose"),
    ("base64 without its padding", base(**{"Mcp-Param-Region": "=?base64?SGVsbG8?="}), call(region="Hello"),
     "malformed"),
    ("base64 with foreign characters", base(**{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}), call(region="Hello"),
     "malformed"),
    ("base64 of bytes that are not UTF-8", base(**{"Mcp-Param-Region": "=?base64?/w==?="}), call(region="Hello"),
     "malformed"),
    ("a raw non-ASCII value", base(**{"Mcp-Param-Region": "Région"}), call(region="Région"), "=?base64?"),
    ("an integer that is not the body's", base(**{"Mcp-Param-Region": "eu", "Mcp-Param-Priority": "41"}),
     call(region="eu", priority=42), "does not match"),
    ("an integer written as a word", base(**{"Mcp-Param-Region": "eu", "Mcp-Param-Priority": "forty-two"}),
     call(region="eu", priority=42), "does not match"),
    ("a boolean in capitals", base(**{"Mcp-Param-Region": "eu", "Mcp-Param-Verbose": "True"}),
     call(region="eu", verbose=True), "does not match"),
]


@pytest.mark.parametrize("what, headers, request_", ACCEPTED, ids=[case[0] for case in ACCEPTED])
def test_headers_that_agree_with_the_body_are_accepted(what, headers, request_):
    check_headers(headers, request_, MODERN, TOOL if request_.method == "tools/call" else None)


@pytest.mark.parametrize("what, headers, request_, said", REFUSED, ids=[case[0] for case in REFUSED])
def test_headers_that_disagree_with_the_body_are_a_header_mismatch(what, headers, request_, said):
    with pytest.raises(HeaderMismatch) as refused:
        check_headers(headers, request_, MODERN, TOOL if request_.method == "tools/call" else None)
    assert refused.value.code == HEADER_MISMATCH and said in refused.value.message


@pytest.mark.parametrize("text, wire", [
    ("us-west1", "us-west1"), ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="), (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="), ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ("us west 1", "us west 1"), ("\tindented", "=?base64?CWluZGVudGVk?="), ("", ""),
])
def test_the_sentinel_codec_follows_the_spec_vectors_both_ways(text, wire):
    assert encode_value(text) == wire and decode_value(wire) == text


def test_the_header_checks_and_the_event_stream_parser_do_no_io():
    """Like wire/jsonrpc.py and the toolkit: pure functions, so importing them starts no web stack."""
    import subprocess
    import sys

    io = ("anyio", "asyncio", "httpx", "subprocess", "socket", "starlette", "uvicorn", "trio")
    code = ("import sys, mcplab.server.streamable_http.header_checks, mcplab.wire.sse, mcplab.trace.http_text; "
            f"print(sorted(m for m in {io!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parent.parent).stdout
    assert loaded.strip() == "[]"
