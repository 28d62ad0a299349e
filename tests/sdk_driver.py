"""Driving the official SDK client (mcp==2.3.0) through everything a bundled server offers, in the
modern era: the arguments each tool and prompt needs, the answers to MRTR questions, and one loop
that lists, calls, reads and gets it all. Shared by the stdio and the HTTP interop tests."""

from __future__ import annotations

from typing import Any

import server_helpers

try:
    from mcp import types
except ImportError:  # pragma: no cover - the test extra is missing
    types = None

MODERN = "2026-07-28"
# The shared table, except that get_forecast names a country: the server asks which city (MRTR).
TOOL_ARGUMENTS = {**server_helpers.TOOL_ARGUMENTS, "get_forecast": server_helpers.ASKS_WHICH_CITY}
PROMPT_ARGUMENTS = server_helpers.PROMPT_ARGUMENTS
FILLS = {"string": "Ada", "boolean": True, "integer": 3, "number": 1.5, "array": []}


def fill(schema: dict) -> dict:
    """A form answer that matches a requestedSchema: first choices, plain values."""
    content = {}
    for name, field in schema.get("properties", {}).items():
        content[name] = (field["enum"][0] if "enum" in field else field["oneOf"][0]["const"] if "oneOf" in field
                         else FILLS[field.get("type", "string")])
    return content


def callbacks(asked: list | None = None) -> dict[str, Any]:
    """The SDK client's answers to sampling, elicitation and roots; ``asked`` collects what was asked."""

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

    return {"sampling_callback": sampling, "elicitation_callback": elicitation, "list_roots_callback": roots}


async def exercise_everything(client: Any) -> dict[str, Any]:
    """Call every tool, read every resource, get every prompt; return the tool results by name."""
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
