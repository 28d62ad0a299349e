"""The official Python SDK's client (mcp==2.3.0, legacy handshake) against the bundled servers over
stdio: it lists and calls every tool, reads every resource and template, gets every prompt."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from conftest import need
from sdk_driver import callbacks
from server_helpers import PROMPT_ARGUMENTS, ROOT, SERVERS, TOOL_ARGUMENTS

try:
    import mcp
    from mcp import types
except ImportError:  # pragma: no cover - the test extra is missing
    mcp = None

pytestmark = [pytest.mark.interop, pytest.mark.subprocess,
              # logging and resources/subscribe are deprecated in 2026-07-28, still part of the legacy wire
              pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

TEMPLATE_URIS = {"weather": "weather://city/Paris", "files": "file:///data.json",
                 "conformance": "test://template/123/data"}
EXPECTED_ERRORS = {"test_error_handling"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def sdk_session(name: str, *flags: str, logs: list | None = None) -> AsyncIterator[Any]:
    need(mcp is not None, "the official SDK (mcp==2.3.0) is not installed")

    async def logging(params: Any) -> None:
        if logs is not None:
            logs.append(params)

    server = mcp.StdioServerParameters(command=sys.executable, args=[str(SERVERS / f"{name}.py"), *flags], cwd=ROOT)
    async with mcp.stdio_client(server) as (read, write):
        async with mcp.ClientSession(read, write, **callbacks(), logging_callback=logging) as session:
            yield session


async def exercise_everything(session: Any, name: str) -> dict[str, Any]:
    """Initialize, then touch every tool, resource, template and prompt the server lists."""
    init = await session.initialize()
    assert init.protocol_version == "2025-11-25"
    await session.send_ping()
    if init.capabilities.logging is not None:  # declared only by a server that logs (the conformance fixtures)
        await session.set_logging_level("debug")
    outcomes: dict[str, Any] = {}

    tools = (await session.list_tools()).tools
    assert tools
    for tool in tools:
        result = await session.call_tool(tool.name, TOOL_ARGUMENTS.get(tool.name, {}))
        assert result.content, tool.name
        assert bool(result.is_error) is (tool.name in EXPECTED_ERRORS), (tool.name, result)
        outcomes[tool.name] = result

    resources = (await session.list_resources()).resources
    assert resources
    for resource in resources:
        read = await session.read_resource(str(resource.uri))
        assert read.contents, resource.uri
    templates = (await session.list_resource_templates()).resource_templates
    assert templates
    assert (await session.read_resource(TEMPLATE_URIS[name])).contents
    await session.subscribe_resource(str(resources[0].uri))

    prompts = (await session.list_prompts()).prompts
    assert prompts
    for prompt in prompts:
        got = await session.get_prompt(prompt.name, PROMPT_ARGUMENTS.get(prompt.name, {}))
        assert got.messages, prompt.name
        if prompt.arguments:
            completion = await session.complete(types.PromptReference(type="ref/prompt", name=prompt.name),
                                                {"name": prompt.arguments[0].name, "value": ""})
            assert completion.completion.values is not None
    return outcomes


@pytest.mark.anyio
async def test_the_sdk_client_uses_everything_the_weather_server_offers() -> None:
    async with sdk_session("weather") as session:
        outcomes = await exercise_everything(session, "weather")
    assert outcomes["get_weather"].content[0].text.startswith("Beijing: sunny (晴), 12 °C")
    assert outcomes["get_forecast"].structured_content["city"] == "London"


@pytest.mark.anyio
async def test_the_sdk_client_uses_everything_the_file_server_offers(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "root"
    shutil.copytree(SERVERS / "samples", root)
    async with sdk_session("files", "--root", str(root), "--writable") as session:
        outcomes = await exercise_everything(session, "files")
    assert outcomes["read_file"].content[0].text.startswith("# MCP notes")
    assert (root / "scratch.txt").read_text() == "hello"


@pytest.mark.anyio
async def test_the_sdk_client_uses_everything_the_conformance_server_offers() -> None:
    logs: list = []
    async with sdk_session("conformance", logs=logs) as session:
        outcomes = await exercise_everything(session, "conformance")
    assert outcomes["test_sampling"].content[0].text == "LLM response: The capital is Paris."  # sdk_driver.callbacks
    assert "action=accept" in outcomes["test_elicitation"].content[0].text
    assert "action=accept" in outcomes["test_elicitation_sep1330_enums"].content[0].text
    assert outcomes["test_audio_content"].content[0].mime_type == "audio/wav"
    assert [entry.data for entry in logs if entry.logger == "conformance"] == [  # test_tool_with_logging,
        "Tool execution started", "Tool processing data", "Tool execution completed"] * 2  # test_logging_tool


@pytest.mark.anyio
async def test_the_sdk_client_receives_progress_from_a_tool() -> None:
    updates: list = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total))

    async with sdk_session("conformance") as session:
        await session.initialize()
        result = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
    assert not result.is_error
    assert updates == [(0, 100), (50, 100), (100, 100)]


@pytest.mark.anyio
async def test_the_sdk_client_sees_protocol_errors_as_errors() -> None:
    async with sdk_session("weather") as session:
        await session.initialize()
        with pytest.raises(mcp.MCPError) as unknown:
            await session.call_tool("get_rain", {})
        assert unknown.value.error.code == -32602
        with pytest.raises(mcp.MCPError) as missing:
            await session.read_resource("weather://city/Atlantis")
        assert missing.value.error.code == -32002
        bad_city = await session.call_tool("get_weather", {"city": "Atlantis"})
        assert bad_city.is_error and "Unknown city" in bad_city.content[0].text


def test_cold_start_side_by_side_with_the_sdk(record_property) -> None:
    """Spawn → first tools/list answered, ours and the SDK's equivalent server taking turns (bench/stdio_bench.py)."""
    import importlib.util
    import os
    import statistics

    need(mcp is not None, "the official SDK (mcp==2.3.0) is not installed")
    spec = importlib.util.spec_from_file_location("stdio_bench", ROOT / "bench" / "stdio_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ours, sdk = bench.SERVERS["mcplab"], bench.SERVERS["official SDK (MCPServer)"]
    env = dict(os.environ)
    times: dict[str, list[float]] = {"mcplab": [], "sdk": []}
    for _ in range(3):
        times["mcplab"].append(bench.cold_start_ms(ours, env))
        times["sdk"].append(bench.cold_start_ms(sdk, env))
    medians = {name: statistics.median(values) for name, values in times.items()}
    record_property("cold_start_ms", medians)
    print(f"cold start, median of 3: mcplab {medians['mcplab']:.0f} ms, official SDK {medians['sdk']:.0f} ms")
    assert medians["mcplab"] * 3 < medians["sdk"]
