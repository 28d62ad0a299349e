"""Interop: this client (legacy era) against servers it did not write.

The official Python SDK's server (mcp==2.3.0) and the npm reference servers
``@modelcontextprotocol/server-filesystem`` and ``server-everything``, all over stdio.
List, call, read and get must succeed, and every frame of every conversation must validate
against the official schema of the version the handshake agreed on.
"""

from __future__ import annotations

import anyio
import pytest

from client_helpers import command, npm_server, validate_frames
from mcplab.client import Client
from mcplab.wire.errors import INVALID_PARAMS, RemoteError
from mcplab.transports.stdio import stdio

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.interop]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
async def test_the_sdk_server_lists_calls_reads_and_gets(version, spec_schema):
    schema = spec_schema(version)
    async with Client(stdio(command("sdk")), version=version, timeout=20) as client:
        assert client.protocol_version == version
        assert client.server_info["name"] == "sdk-weather"
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools["get_weather"].parameters == ["city"]
        assert (await client.call_tool("get_weather", {"city": "Beijing"})).text == "Beijing: sunny, 12 °C"
        failed = await client.call_tool("divide", {"a": 1, "b": 0})
        assert failed.is_error and "divide" in failed.text
        assert [r.uri for r in await client.list_resources()] == ["notes://today"]
        assert [t.uri_template for t in await client.list_resource_templates()] == ["notes://day/{day}"]
        assert (await client.read_resource("notes://today")).text == "buy milk"
        assert (await client.read_resource("notes://day/monday")).text == "notes for monday"
        assert [p.name for p in await client.list_prompts()] == ["review"]
        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert prompt.messages[0].role == "user" and "x = 1" in prompt.messages[0].content.text
        await client.ping()
        with pytest.raises(RemoteError) as missing:
            await client.read_resource("notes://nowhere")
    # mcp 2.3.0 answers an unknown resource with -32602 in every revision (2026-07-28's code; the legacy
    # revisions say it SHOULD be -32002): the client hands the peer's code on untouched.
    assert missing.value.code == INVALID_PARAMS and "notes://nowhere" in missing.value.message
    assert validate_frames(client.trace, schema, version) >= 25


async def test_the_filesystem_server_reads_lists_and_refuses_to_escape(tmp_path, spec_schema):
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.md").write_text("# Notes\nbuy milk\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOP-SECRET", encoding="utf-8")
    asked = []

    def roots(params):
        asked.append(params)
        return {"roots": [{"uri": root.as_uri(), "name": "lab root"}]}

    argv = [npm_server("mcp-server-filesystem"), str(root)]
    async with Client(stdio(argv), roots=roots, timeout=20) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert {"read_text_file", "list_directory", "write_file"} <= names
        text = await client.call_tool("read_text_file", {"path": str(root / "notes.md")})
        assert not text.is_error and "buy milk" in text.text
        listing = await client.call_tool("list_directory", {"path": str(root)})
        assert "notes.md" in listing.text
        escape = await client.call_tool("read_text_file", {"path": str(root / ".." / "secret.txt")})
        assert escape.is_error and "TOP-SECRET" not in escape.text
        await client.ping()
    assert asked, "the server should have asked for roots, since the client declared them"
    assert validate_frames(client.trace, spec_schema(client.protocol_version), client.protocol_version) >= 12


async def test_the_everything_server_with_its_unsolicited_list_changed(spec_schema):
    changed, logs, steps = [], [], []
    async with Client(stdio([npm_server("mcp-server-everything")]), timeout=20,
                      on_list_changed=changed.append, on_log=logs.append) as client:
        version = client.protocol_version
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert {"echo", "get-sum"} <= set(tools)
        assert (await client.call_tool("echo", {"message": "你好"})).text.endswith("你好")
        assert "5" in (await client.call_tool("get-sum", {"a": 2, "b": 3})).text
        resources = await client.list_resources()
        first = await client.read_resource(resources[0].uri)
        assert first.contents[0].uri == resources[0].uri
        templates = await client.list_resource_templates()
        assert templates and all("{" in t.uri_template for t in templates)
        prompts = {p.name for p in await client.list_prompts()}
        assert "args-prompt" in prompts
        prompt = await client.get_prompt("args-prompt", {"city": "Beijing"})
        assert "Beijing" in prompt.messages[0].content.text
        completion = await client.complete({"type": "ref/prompt", "name": "completable-prompt"},
                                           "department", "E")
        assert completion.values
        await client.set_logging_level("debug")
        await client.subscribe(resources[0].uri)
        await client.ping()
        with anyio.fail_after(10):
            await client.call_tool("trigger-long-running-operation", {"duration": 0.2, "steps": 2},
                                   on_progress=steps.append)
    assert "notifications/tools/list_changed" in changed
    assert [step["progress"] for step in steps] == [1, 2] and all(step["total"] == 2 for step in steps)
    assert any(log["level"] == "info" and "Subscribe Resource request" in log["data"] for log in logs), logs
    assert validate_frames(client.trace, spec_schema(version), version) >= 25
