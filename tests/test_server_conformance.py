"""servers/conformance.py against what each official conformance scenario checks (the scenario
sources of @modelcontextprotocol/conformance, 2025-11-25 requirement set), in memory.

The suite itself talks Streamable HTTP; until the HTTP runner exists these tests are the guard."""

from __future__ import annotations

import base64
import json
import re

import pytest

from server_helpers import MemorySession, load_server_module

conformance = load_server_module("conformance")

CLIENT_ANSWERS = {  # what the suite's client answers
    "sampling/createMessage": {"role": "assistant", "content": {"type": "text",
                                                                "text": "This is a test response from the client"},
                               "model": "test-model", "stopReason": "endTurn"},
    "elicitation/create": {"action": "accept", "content": {"username": "testuser", "email": "test@example.com"}},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def suite() -> MemorySession:
    session = MemorySession(conformance.server, CLIENT_ANSWERS)
    await session.initialize("2025-11-25", {"sampling": {}, "elicitation": {}})
    return session


async def call(session: MemorySession, name: str, arguments: dict | None = None, **extra: object) -> dict:
    params = {"name": name, **extra}
    if arguments is not None:
        params["arguments"] = arguments
    return await session.result("tools/call", params)


def first(content: list, kind: str) -> dict:
    return next(c for c in content if c["type"] == kind)


@pytest.mark.anyio
async def test_tools_list_every_tool_has_a_well_formed_name_and_a_description(suite: MemorySession) -> None:
    tools = (await suite.result("tools/list"))["tools"]
    for tool in tools:
        assert re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", tool["name"]), tool["name"]
        assert tool["description"] and tool["inputSchema"]["type"] == "object"
    assert {"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
            "test_multiple_content_types", "test_error_handling", "test_tool_with_progress", "test_tool_with_logging",
            "test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums", "json_schema_2020_12_tool"} <= {t["name"] for t in tools}


@pytest.mark.anyio
async def test_tools_call_simple_text_without_an_arguments_key(suite: MemorySession) -> None:
    result = await call(suite, "test_simple_text")
    assert first(result["content"], "text")["text"] == "This is a simple text response for testing."


@pytest.mark.anyio
async def test_tools_call_image_and_audio(suite: MemorySession) -> None:
    image = first((await call(suite, "test_image_content", {}))["content"], "image")
    assert image["mimeType"] == "image/png" and base64.b64decode(image["data"]).startswith(b"\x89PNG")
    sound = first((await call(suite, "test_audio_content", {}))["content"], "audio")
    assert sound["mimeType"] == "audio/wav" and base64.b64decode(sound["data"])[8:12] == b"WAVE"


@pytest.mark.anyio
async def test_tools_call_embedded_resource_and_mixed_content(suite: MemorySession) -> None:
    embedded = first((await call(suite, "test_embedded_resource", {}))["content"], "resource")["resource"]
    assert embedded == {"uri": "test://embedded-resource", "mimeType": "text/plain",
                        "text": "This is an embedded resource content."}
    mixed = (await call(suite, "test_multiple_content_types", {}))["content"]
    assert [c["type"] for c in mixed] == ["text", "image", "resource"]
    assert json.loads(mixed[2]["resource"]["text"]) == {"test": "data", "value": 123}


@pytest.mark.anyio
async def test_tools_call_error_is_a_result_not_a_protocol_error(suite: MemorySession) -> None:
    result = await call(suite, "test_error_handling", {})
    assert result["isError"] is True and result["content"][0]["text"]


@pytest.mark.anyio
async def test_tools_call_with_progress_sends_three_increasing_updates(suite: MemorySession) -> None:
    await call(suite, "test_tool_with_progress", {}, _meta={"progressToken": "progress-test-1"})
    updates = [n["params"] for n in suite.notifications if n["method"] == "notifications/progress"
               and n["params"]["progressToken"] == "progress-test-1"]
    assert len(updates) >= 3
    assert updates[0]["progress"] <= updates[1]["progress"] <= updates[2]["progress"]


@pytest.mark.anyio
async def test_tools_call_with_logging_sends_three_messages_after_set_level(suite: MemorySession) -> None:
    assert await suite.result("logging/setLevel", {"level": "debug"}) == {}
    await call(suite, "test_tool_with_logging", {})
    assert len([n for n in suite.notifications if n["method"] == "notifications/message"]) >= 3


@pytest.mark.anyio
async def test_tools_call_sampling_and_elicitation_ask_the_client(suite: MemorySession) -> None:
    sampled = await call(suite, "test_sampling", {"prompt": "Test prompt for sampling"})
    assert sampled["content"][0]["text"] == "LLM response: This is a test response from the client"
    asked = await call(suite, "test_elicitation", {"message": "Please provide your information"})
    assert asked["content"] and not asked["isError"]
    method, params = suite.peer.requests[-1]
    assert method == "elicitation/create" and params["requestedSchema"]["required"] == ["username", "email"]


@pytest.mark.anyio
async def test_elicitation_sep1034_defaults(suite: MemorySession) -> None:
    await call(suite, "test_elicitation_sep1034_defaults", {})
    fields = suite.peer.requests[-1][1]["requestedSchema"]["properties"]
    assert {name: (f["type"], f["default"]) for name, f in fields.items()} == {
        "name": ("string", "John Doe"), "age": ("integer", 30), "score": ("number", 95.5),
        "status": ("string", "active"), "verified": ("boolean", True)}
    assert fields["status"]["default"] in fields["status"]["enum"]


@pytest.mark.anyio
async def test_elicitation_sep1330_enums(suite: MemorySession) -> None:
    await call(suite, "test_elicitation_sep1330_enums", {})
    fields = suite.peer.requests[-1][1]["requestedSchema"]["properties"]
    assert fields["untitledSingle"]["enum"] == ["option1", "option2", "option3"]
    assert "oneOf" not in fields["untitledSingle"] and "enumNames" not in fields["untitledSingle"]
    assert [(o["const"], o["title"]) for o in fields["titledSingle"]["oneOf"]][0] == ("value1", "First Option")
    assert "enum" not in fields["titledSingle"]
    assert len(fields["legacyEnum"]["enumNames"]) == len(fields["legacyEnum"]["enum"]) == 3
    assert fields["untitledMulti"]["items"] == {"type": "string", "enum": ["option1", "option2", "option3"]}
    assert fields["titledMulti"]["type"] == "array" and "enum" not in fields["titledMulti"]["items"]
    assert all(isinstance(o["const"], str) and o["title"] for o in fields["titledMulti"]["items"]["anyOf"])


@pytest.mark.anyio
async def test_json_schema_2020_12_tool_keeps_every_keyword(suite: MemorySession) -> None:
    tool = next(t for t in (await suite.result("tools/list"))["tools"] if t["name"] == "json_schema_2020_12_tool")
    assert tool["inputSchema"] == conformance.JSON_SCHEMA_2020_12
    ok = await call(suite, "json_schema_2020_12_tool", {"name": "Ada", "email": "ada@example.org"})
    assert ok["isError"] is False
    refused = await call(suite, "json_schema_2020_12_tool", {"name": "Ada", "contactMethod": "phone",
                                                             "email": "a@b.c"})
    assert refused["isError"] is True  # if contactMethod is phone, then phone is required


@pytest.mark.anyio
async def test_resources_read_text_binary_and_template(suite: MemorySession) -> None:
    listed = (await suite.result("resources/list"))["resources"]
    assert all(r["uri"] and r["name"] for r in listed)
    text = (await suite.result("resources/read", {"uri": "test://static-text"}))["contents"][0]
    assert text == {"uri": "test://static-text", "mimeType": "text/plain",
                    "text": "This is the content of the static text resource."}
    binary = (await suite.result("resources/read", {"uri": "test://static-binary"}))["contents"][0]
    assert binary["mimeType"] == "image/png" and base64.b64decode(binary["blob"]).startswith(b"\x89PNG")
    templated = (await suite.result("resources/read", {"uri": "test://template/123/data"}))["contents"][0]
    assert json.loads(templated["text"]) == {"id": "123", "templateTest": True, "data": "Data for ID: 123"}


@pytest.mark.anyio
async def test_resources_subscribe_and_unsubscribe_the_watched_resource(suite: MemorySession) -> None:
    assert await suite.result("resources/subscribe", {"uri": "test://watched-resource"}) == {}
    assert await suite.result("resources/unsubscribe", {"uri": "test://watched-resource"}) == {}


@pytest.mark.anyio
async def test_prompts(suite: MemorySession) -> None:
    assert all(p["name"] and p["description"] for p in (await suite.result("prompts/list"))["prompts"])
    simple = await suite.result("prompts/get", {"name": "test_simple_prompt"})
    assert simple["messages"][0]["content"]["text"] == "This is a simple prompt for testing."
    with_args = await suite.result("prompts/get", {"name": "test_prompt_with_arguments",
                                                   "arguments": {"arg1": "testValue1", "arg2": "testValue2"}})
    assert "testValue1" in json.dumps(with_args["messages"]) and "testValue2" in json.dumps(with_args["messages"])
    embedded = await suite.result("prompts/get", {"name": "test_prompt_with_embedded_resource",
                                                  "arguments": {"resourceUri": "test://example-resource"}})
    assert embedded["messages"][0]["content"]["resource"]["uri"] == "test://example-resource"
    image = await suite.result("prompts/get", {"name": "test_prompt_with_image"})
    assert image["messages"][0]["content"]["type"] == "image" and image["messages"][0]["content"]["mimeType"]


@pytest.mark.anyio
async def test_completion_complete_and_the_empty_utilities(suite: MemorySession) -> None:
    result = await suite.result("completion/complete", {"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                                                        "argument": {"name": "arg1", "value": "par"}})
    assert result["completion"]["values"] == ["paris", "park", "party"]
    assert await suite.result("ping") == {}
    assert await suite.result("logging/setLevel", {"level": "info"}) == {}
