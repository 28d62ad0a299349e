"""Interop over Streamable HTTP, with implementations this project did not write.

* The official SDK's client (mcp==2.3.0, legacy mode) against all three bundled servers served with
  ``--http``: it lists and calls every tool, reads every resource, gets every prompt.
* This project's client against the official SDK's HTTP server (SSE replies, its own sessions) and
  against ``@modelcontextprotocol/server-everything`` in its Streamable HTTP mode, pinned to 127.0.0.1.

Every frame our client saw must validate against the official schema of the negotiated version.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from client_helpers import validate_frames
from conftest import need
from http_helpers import HERE, NODE_BIN, ROOT, server_everything_http
from mcplab import Client
from mcplab.wire.errors import INVALID_PARAMS, RemoteError
from mcplab.server.streamable_http import launch
from mcplab.transports.http import http
from sdk_driver import callbacks
from server_helpers import PROMPT_ARGUMENTS, TOOL_ARGUMENTS

try:
    import mcp
except ImportError:  # pragma: no cover - the test extra is missing
    mcp = None

pytestmark = [pytest.mark.anyio, pytest.mark.http, pytest.mark.interop, pytest.mark.subprocess,
              pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning") if mcp else pytest.mark.http]

EXPECTED_TOOL_ERRORS = {"test_error_handling"}
# conformance.py also grows fixtures for later revisions; over the legacy wire these are the ones that count
LEGACY_FIXTURES = {
    "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
    "test_multiple_content_types", "test_error_handling", "test_tool_with_progress", "test_tool_with_logging",
    "test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def frames_with_bodies(trace) -> list:
    """The frames that carry a message (not a 202, a DELETE or an SSE priming event)."""
    return [frame for frame in trace if frame.raw.strip()]


# --- the SDK's client → our servers -----------------------------------------------------------------

@pytest.mark.parametrize("name", ["weather", "files", "conformance"])
async def test_the_sdk_client_uses_every_feature_of_each_bundled_server_over_http(name):
    need(mcp is not None, "the official SDK (mcp==2.3.0) is not installed")

    progress: list = []
    with launch([sys.executable, str(ROOT / "servers" / f"{name}.py")]) as server:
        async with mcp.Client(server.url, mode="legacy", **callbacks()) as client:
            assert client.protocol_version == "2025-11-25"
            await client.send_ping()
            tools = (await client.list_tools()).tools
            if name == "conformance":
                assert LEGACY_FIXTURES <= {tool.name for tool in tools}
                tools = [tool for tool in tools if tool.name in LEGACY_FIXTURES]
            assert tools
            for tool in tools:
                outcome = await client.call_tool(tool.name, TOOL_ARGUMENTS.get(tool.name, {}),
                                                 progress_callback=lambda *args: progress.append(args))
                assert bool(outcome.is_error) == (tool.name in EXPECTED_TOOL_ERRORS), (tool.name, outcome)
            for resource in (await client.list_resources()).resources:
                assert (await client.read_resource(resource.uri)).contents
            for prompt in (await client.list_prompts()).prompts:
                assert (await client.get_prompt(prompt.name, PROMPT_ARGUMENTS.get(prompt.name, {}))).messages
        assert server.stdout() == ""
    if name == "conformance":
        assert len(progress) == 3  # test_tool_with_progress reported 0, 50, 100 on the SSE reply


# --- our client → the SDK's HTTP server ---------------------------------------------------------------

@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
async def test_our_client_talks_to_the_sdk_http_server(version, spec_schema):
    need(mcp is not None, "the official SDK (mcp==2.3.0) is not installed")
    with launch([sys.executable, str(HERE), "sdk"]) as server:
        async with Client(http(server.url), version=version, timeout=20) as client:
            assert client.protocol_version == version
            assert client.server_info["name"] == "sdk-weather"
            tools = {tool.name for tool in await client.list_tools()}
            assert {"get_weather", "divide"} <= tools
            assert (await client.call_tool("get_weather", {"city": "Beijing"})).text == "Beijing: sunny, 12 °C"
            assert (await client.call_tool("divide", {"a": 1, "b": 0})).is_error
            assert (await client.read_resource("notes://today")).text == "buy milk"
            prompt = await client.get_prompt("review", {"code": "x = 1"})
            assert "x = 1" in prompt.messages[0].content.text
            await client.ping()
            with pytest.raises(RemoteError) as missing:
                await client.read_resource("notes://nowhere")
        transport = client.transport
    assert missing.value.code == INVALID_PARAMS  # mcp 2.3.0's code in every revision (see test_client_interop)
    assert transport.session_id is None  # ended with DELETE
    assert any(f.http["method"] == "DELETE" and f.http["status"] in (200, 204) for f in client.trace)
    assert validate_frames(frames_with_bodies(client.trace), spec_schema(version), version) >= 15


# --- our client → server-everything (npm) in Streamable HTTP mode ------------------------------------------

async def test_our_client_talks_to_server_everything_over_http(spec_schema):
    need((NODE_BIN / "mcp-server-everything").exists(),
         "server-everything is not installed; run: make .node/.installed")
    with server_everything_http() as url:
        async with Client(http(url, listen=True), timeout=20) as client:
            version = client.protocol_version
            tools = {tool.name for tool in await client.list_tools()}
            assert {"echo", "get-sum"} <= tools
            assert (await client.call_tool("echo", {"message": "你好"})).text.endswith("你好")
            assert "5" in (await client.call_tool("get-sum", {"a": 2, "b": 3})).text
            resources = await client.list_resources()
            assert (await client.read_resource(resources[0].uri)).contents[0].uri == resources[0].uri
            prompt = await client.get_prompt("args-prompt", {"city": "Beijing"})
            assert "Beijing" in prompt.messages[0].content.text
            steps: list = []
            with anyio.fail_after(10):
                await client.call_tool("trigger-long-running-operation", {"duration": 0.2, "steps": 2},
                                       on_progress=steps.append)
            assert len(steps) == 2  # progress on the SSE reply of that one POST
            await client.ping()
    # server-everything's SSE replies open with an empty priming event; the trace shows it as such
    priming = [f for f in client.trace if f.http and f.http.get("sse") and not f.raw.strip()]
    assert priming, "expected server-everything's empty priming events in the trace"
    # listen=True opened the GET stream for what the server sends unprompted; server-everything's
    # list_changed goes out as it handles notifications/initialized, before that stream exists, so it
    # is not heard over HTTP (on stdio it is: test_client_interop).
    assert [f.http["method"] for f in client.trace if f.direction == "c2s"].count("GET") == 1
    assert validate_frames(frames_with_bodies(client.trace), spec_schema(version), version) >= 15
