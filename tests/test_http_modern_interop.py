"""Interop on the 2026-07-28 Streamable HTTP wire, with implementations this project did not write.

* The official SDK's client (mcp==2.3.0) in ``mode="auto"`` (it probes with server/discover) and pinned to
  ``mode="2026-07-28"`` against all three bundled servers served with ``--http`` (``--era dual``): it lists
  and calls every tool (answering input_required through its callbacks, mirroring ``x-mcp-header``
  parameters into ``Mcp-Param-*`` headers), reads every resource, gets every prompt, listens for list
  changes, and sees progress. Against ``--era legacy`` its probe is refused and it falls back to initialize.
* This project's client in ``era="auto"`` against the official SDK's HTTP server (it speaks both eras: the
  probe lands modern) and against ``@modelcontextprotocol/server-everything`` (legacy-only: the probe is
  refused and the client falls back to initialize); the trace shows the probe either way.

Every frame our client saw must validate against the official schema of the version it landed on.
"""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import anyio
import pytest

from client_helpers import validate_frames
from conftest import need
from http_helpers import HERE, ROOT, server_everything_http
from sdk_driver import MODERN, callbacks, exercise_everything
from mcplab import Client
from mcplab.server.streamable_http import launch
from mcplab.transports.http import http

try:
    import mcp
except ImportError:  # pragma: no cover - the test extra is missing
    mcp = None

pytestmark = [pytest.mark.anyio, pytest.mark.http, pytest.mark.interop, pytest.mark.subprocess,
              pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning") if mcp else pytest.mark.http]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def sdk_client(url: str, mode: str, **options: Any) -> AsyncIterator[Any]:
    need(mcp is not None, "the official SDK (mcp==2.3.0) is not installed")
    async with mcp.Client(url, mode=mode, cache=None, **callbacks(), **options) as client:
        yield client


@pytest.mark.parametrize("mode", ["auto", MODERN])
@pytest.mark.parametrize("name", ["weather", "files", "conformance"])
async def test_the_sdk_client_in_a_modern_mode_uses_every_feature_over_http(name: str, mode: str) -> None:
    with launch([sys.executable, str(ROOT / "servers" / f"{name}.py")]) as server:
        async with sdk_client(server.url, mode) as client:
            assert client.protocol_version == MODERN
            outcomes = await exercise_everything(client)
        assert "Traceback" not in server.stderr()
    if name == "weather":  # x-mcp-header "City": the SDK sent Mcp-Param-City, the server checked it
        assert outcomes["get_forecast"].structured_content["city"] == "Beijing"
    if name == "conformance":
        assert "Paris" in outcomes["test_input_required_result_sampling"].content[0].text
        assert outcomes["test_input_required_result_multi_round"].content[0].text == "Ada likes Ada"


async def test_the_sdk_client_in_auto_mode_falls_back_to_initialize_against_a_legacy_only_server() -> None:
    with launch([sys.executable, str(ROOT / "servers" / "weather.py"), "--era", "legacy"]) as server:
        async with sdk_client(server.url, "auto") as client:
            assert client.protocol_version == "2025-11-25"
            assert (await client.call_tool("get_weather", {"city": "Paris"})).content


async def test_the_sdk_client_pinned_to_2026_07_28_uses_a_modern_only_server() -> None:
    with launch([sys.executable, str(ROOT / "servers" / "weather.py"), "--era", "modern"]) as server:
        async with sdk_client(server.url, MODERN) as client:
            result = await client.call_tool("get_forecast", {"city": "北京", "days": 1})
            assert result.structured_content["city"] == "Beijing"  # a non-ASCII Mcp-Param-City, base64-encoded


async def test_the_sdk_client_listens_and_sees_progress_and_opted_in_logs_over_http() -> None:
    logs, updates = [], []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(progress)

    with launch([sys.executable, str(ROOT / "servers" / "conformance.py")]) as server:
        async with sdk_client(server.url, MODERN, logging_callback=on_log, log_level="info") as client:
            await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            await client.call_tool("test_logging_tool", {})
            async with client.listen(tools_list_changed=True) as subscription:
                await client.call_tool("test_trigger_tool_change", {})
                with anyio.fail_after(5):
                    async for event in subscription:
                        assert "tools" in repr(event).lower()
                        break
    assert updates == [0, 50, 100]
    assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]


# --- this client → servers from elsewhere ---------------------------------------------------------------

def wire(trace) -> list:
    """The frames that crossed HTTP (a trace also keeps notes, such as the era decisions)."""
    return [frame for frame in trace if frame.channel == "http"]


def probe_and_answer(trace) -> list[tuple[str, int | None]]:
    """(method or "reply", HTTP status) of the first frames: what the opening looked like on the wire."""
    steps = []
    for frame in wire(trace)[:6]:
        method = getattr(frame.message, "method", None)
        steps.append((method or "reply", (frame.http or {}).get("status")))
    return steps


async def test_this_client_in_auto_mode_lands_modern_on_the_sdk_http_server(spec_schema) -> None:
    need(mcp is not None, "the official SDK (mcp==2.3.0) is not installed")
    with launch([sys.executable, str(HERE), "sdk"]) as server:
        async with Client(http(server.url), era="auto") as client:
            assert client.era == "modern" and client.protocol_version == MODERN, client.era_reason
            assert {t.name for t in await client.list_tools()} >= {"get_weather", "divide"}
            assert "sunny" in (await client.call_tool("get_weather", {"city": "Paris"})).text
            assert (await client.read_resource("notes://today")).text == "buy milk"
            assert (await client.get_prompt("review", {"code": "x = 1"})).messages
    assert probe_and_answer(client.trace)[:2] == [("server/discover", None), ("reply", 200)]
    assert "DiscoverResult" in client.era_reason
    posts = [f for f in wire(client.trace) if f.direction == "c2s"]
    assert all(f.http["headers"].get("MCP-Protocol-Version") == MODERN and "Mcp-Method" in f.http["headers"]
               for f in posts)
    assert validate_frames([f for f in wire(client.trace) if f.raw.strip()], spec_schema(MODERN), MODERN) > 8


async def test_this_client_in_auto_mode_falls_back_to_legacy_on_server_everything(spec_schema) -> None:
    need((HERE.parent.parent / ".node" / "node_modules" / ".bin" / "mcp-server-everything").exists(),
         "@modelcontextprotocol/server-everything is not installed in .node/ (make .node/.installed)")
    with server_everything_http() as url:
        async with Client(http(url), era="auto") as client:
            assert client.era == "legacy" and client.protocol_version == "2025-11-25", client.era_reason
            assert "echo" in {tool.name for tool in await client.list_tools()}
            assert (await client.call_tool("echo", {"message": "hi"})).text.endswith("hi")
    steps = probe_and_answer(client.trace)
    assert steps[0] == ("server/discover", None) and steps[1][1] in (400, 404, 405), steps
    assert steps[2] == ("initialize", None), steps
    assert "fall back to initialize" in client.era_reason
    legacy = [f for f in wire(client.trace)[2:] if f.raw.strip()]
    assert validate_frames(legacy, spec_schema("2025-11-25"), "2025-11-25") > 4
