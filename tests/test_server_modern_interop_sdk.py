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
from server_helpers import ROOT, SERVERS

try:
    import mcp
    from mcp import types
except ImportError:  # pragma: no cover - the test extra is missing
    mcp = None

pytestmark = [pytest.mark.interop, pytest.mark.subprocess,
              pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

MODERN = "2026-07-28"
TOOL_ARGUMENTS = {
    "get_weather": {"city": "Beijing"}, "get_forecast": {"city": "China", "days": 2},
    "read_file": {"path": "notes.md"}, "search_files": {"pattern": "*.py"}, "get_file_info": {"path": "logo.png"},
    "test_sampling": {"prompt": "Test prompt for sampling"}, "test_elicitation": {"message": "Who are you?"},
    "json_schema_2020_12_tool": {"name": "Ada", "phone": "123", "contactMethod": "phone"},
    "test_header_param": {"region": "us-west1"},
}
PROMPT_ARGUMENTS = {
    "weather_report": {"city": "Seattle"}, "summarize_file": {"path": "README.txt"},
    "review_code": {"path": "src/greet.py"}, "test_prompt_with_arguments": {"arg1": "a", "arg2": "b"},
    "test_prompt_with_embedded_resource": {"resourceUri": "test://example-resource"},
}
FILLS = {"string": "Ada", "boolean": True, "integer": 3, "number": 1.5, "array": []}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def fill(schema: dict) -> dict:
    """A form answer that matches a requestedSchema: first choices, plain values."""
    content = {}
    for name, field in schema.get("properties", {}).items():
        content[name] = (field["enum"][0] if "enum" in field else field["oneOf"][0]["const"] if "oneOf" in field
                         else FILLS[field.get("type", "string")])
    return content


@asynccontextmanager
async def sdk_client(name: str, mode: str, *flags: str, asked: list | None = None) -> AsyncIterator[Any]:
    need(mcp is not None, "the official SDK (mcp==2.3.0) is not installed")

    async def sampling(context: Any, params: Any) -> Any:
        if asked is not None:
            asked.append("sampling")
        return types.CreateMessageResult(role="assistant", model="test-model", stop_reason="endTurn",
                                         content=types.TextContent(type="text", text="The capital is Paris."))

    async def elicitation(context: Any, params: Any) -> Any:
        if asked is not None:
            asked.append(params.message)
        return types.ElicitResult(action="accept", content=fill(params.requested_schema))

    async def roots(context: Any) -> Any:
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/work", name="work")])

    server = mcp.StdioServerParameters(command=sys.executable, args=[str(SERVERS / f"{name}.py"), *flags], cwd=ROOT)
    async with mcp.Client(server, mode=mode, sampling_callback=sampling, elicitation_callback=elicitation,
                          list_roots_callback=roots, cache=None) as client:
        yield client


async def exercise_everything(client: Any) -> dict[str, Any]:
    outcomes: dict[str, Any] = {}
    for tool in (await client.list_tools()).tools:
        result = await client.call_tool(tool.name, TOOL_ARGUMENTS.get(tool.name, {}))
        assert result.content and bool(result.is_error) is (tool.name == "test_error_handling"), (tool.name, result)
        outcomes[tool.name] = result
    for resource in (await client.list_resources()).resources:
        assert (await client.read_resource(str(resource.uri))).contents, resource.uri
    assert (await client.list_resource_templates()).resource_templates
    for prompt in (await client.list_prompts()).prompts:
        assert (await client.get_prompt(prompt.name, PROMPT_ARGUMENTS.get(prompt.name, {}))).messages, prompt.name
    return outcomes


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
