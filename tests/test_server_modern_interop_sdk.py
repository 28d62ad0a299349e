"""The official Python SDK's client (mcp==2.3.0) in its modern modes against the bundled servers over
stdio: ``mode="auto"`` probes server/discover and must stay modern; ``mode="2026-07-28"`` skips the
probe. It lists and calls every tool (answering input_required through its callbacks), reads every
resource, gets every prompt, and listens for list changes."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import anyio
import pytest

from conftest import need
from sdk_driver import MODERN, callbacks, exercise_everything
from server_helpers import ROOT, SERVERS

try:
    import mcp
except ImportError:  # pragma: no cover - the test extra is missing
    mcp = None

pytestmark = [pytest.mark.interop, pytest.mark.subprocess,
              pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def sdk_client(name: str, mode: str, *flags: str, asked: list | None = None) -> AsyncIterator[Any]:
    need(mcp is not None, "the official SDK (mcp==2.3.0) is not installed")
    server = mcp.StdioServerParameters(command=sys.executable, args=[str(SERVERS / f"{name}.py"), *flags], cwd=ROOT)
    async with mcp.Client(server, mode=mode, cache=None, **callbacks(asked)) as client:
        yield client


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", MODERN])
@pytest.mark.parametrize("name", ["weather", "files", "conformance"])
async def test_the_sdk_client_in_a_modern_mode_uses_everything(name: str, mode: str) -> None:
    asked: list = []
    async with sdk_client(name, mode, asked=asked) as client:
        assert client.protocol_version == MODERN
        outcomes = await exercise_everything(client)
    if name == "weather":
        assert asked == ["China has 4 cities here. Which one? 哪个城市？"]  # get_forecast asked, via MRTR
        assert outcomes["get_forecast"].structured_content["city"] == "Beijing"
    if name == "conformance":
        assert "Paris" in outcomes["test_input_required_result_sampling"].content[0].text
        assert "file:///tmp/work" in outcomes["test_input_required_result_list_roots"].content[0].text
        assert outcomes["test_input_required_result_multi_round"].content[0].text == "Ada likes Ada"


@pytest.mark.anyio
async def test_auto_mode_learns_the_server_from_discover() -> None:
    async with sdk_client("weather", "auto") as client:
        assert client.server_info.name == "weather"
        assert client.instructions.startswith("Current weather")
        assert client.server_capabilities.tools is not None


@pytest.mark.anyio
async def test_auto_mode_falls_back_to_initialize_against_a_legacy_only_server() -> None:
    async with sdk_client("weather", "auto", "--era", "legacy") as client:
        assert client.protocol_version == "2025-11-25"
        assert (await client.call_tool("get_weather", {"city": "Paris"})).content


@pytest.mark.anyio
async def test_the_sdk_client_listens_for_list_changes() -> None:
    async with sdk_client("conformance", MODERN) as client:
        async with client.listen(tools_list_changed=True) as subscription:
            await client.call_tool("test_trigger_tool_change", {})
            with anyio.fail_after(5):
                async for event in subscription:
                    assert "tools" in repr(event).lower()
                    break


@pytest.mark.anyio
async def test_the_sdk_client_sees_progress_and_opted_in_logs() -> None:
    logs, updates = [], []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(progress)

    need(mcp is not None, "the official SDK (mcp==2.3.0) is not installed")
    server = mcp.StdioServerParameters(command=sys.executable, args=[str(SERVERS / "conformance.py")], cwd=ROOT)
    async with mcp.Client(server, mode=MODERN, logging_callback=on_log, log_level="info") as client:
        await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        await client.call_tool("test_logging_tool", {})
    assert updates == [0, 50, 100]
    assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]
