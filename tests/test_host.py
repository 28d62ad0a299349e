"""The Host: merged catalogue, function-calling shapes, the scripted agent loop, crash isolation."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import anyio
import pytest

from client_helpers import FakeModernServer, FakeServer, command
from mcplab.wire import jsonrpc
from mcplab.wire.errors import LocalProtocolError
from mcplab.client.host import (
    CatalogueEntry, Host, Rule, ScriptedModel, ServerFailed, function_call_parts, merge_catalogue, model_text,
)
from mcplab.client.results import Tool, ToolResult

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


def tool(name, description="", **properties):
    """A read-only tool (it says so): the host's own rule then lets the model call it on a trusted server."""
    return {"name": name, "description": description, "annotations": {"readOnlyHint": True},
            "inputSchema": {"type": "object", "properties": {p: {"type": t} for p, t in properties.items()},
                            "required": list(properties)}}


def fake(name, *tools, answer=None):
    """A fake server offering ``tools``; tools/call answers ``"<server>:<tool> <arguments>"``."""
    def call(request):
        text = answer or f"{name}:{request.params['name']} {json.dumps(request.params['arguments'])}"
        return {"content": [{"type": "text", "text": text}]}

    return FakeServer(handlers={"tools/list": lambda r: {"tools": list(tools)}, "tools/call": call})


WEATHER_RULES = [Rule(r"weather in (?P<city>[A-Z][a-z]+)", "get_weather", {"city": "{city}"}),
                 Rule(r"what'?s in (?P<path>[\w./-]+\.\w+)", "read_file", {"path": "{path}"})]


def test_a_clash_gets_a_server_prefix_on_both_sides_and_nothing_else_does():
    weather = [Tool.from_json(tool("get_weather")), Tool.from_json(tool("search"))]
    files = [Tool.from_json(tool("read_file")), Tool.from_json(tool("search"))]
    names = [(e.name, e.server, e.tool.name) for e in merge_catalogue({"weather": weather, "files": files})]
    assert names == [("get_weather", "weather", "get_weather"), ("weather__search", "weather", "search"),
                     ("read_file", "files", "read_file"), ("files__search", "files", "search")]


def test_function_names_keep_to_what_model_apis_accept():
    entries = merge_catalogue({"svc": [Tool.from_json(tool("files.read/v2" + "x" * 80))]})
    assert entries[0].name == ("files_read_v2" + "x" * 80)[:64]


def test_the_two_function_calling_shapes():
    entry = CatalogueEntry("get_weather", "weather", Tool.from_json(tool("get_weather", "Weather now", city="string")))
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    assert entry.openai() == {"type": "function", "function": {
        "name": "get_weather", "description": "Weather now", "parameters": schema}}
    assert entry.anthropic() == {"name": "get_weather", "description": "Weather now", "input_schema": schema}


@pytest.mark.parametrize("call", [
    {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"city": "北京"}'}},
    {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"city": "北京"}},
])
def test_a_function_call_in_either_shape_gives_name_and_arguments(call):
    assert function_call_parts(call) == ("f", {"city": "北京"})


def test_an_unknown_call_shape_is_refused():
    with pytest.raises(ValueError, match="OpenAI"):
        function_call_parts({"tool": "f"})


def test_model_text_marks_a_failed_tool():
    ok = ToolResult.from_json({"content": [{"type": "text", "text": "12 °C"},
                                           {"type": "image", "data": "AAAA", "mimeType": "image/png"}]})
    assert model_text(ok) == "12 °C\n[image: image/png, about 3 bytes]"
    failed = ToolResult.from_json({"content": [{"type": "text", "text": "no such city"}], "isError": True})
    assert model_text(failed) == "Error: no such city"


def test_the_scripted_model_calls_tools_in_question_order_and_then_answers():
    model = ScriptedModel(WEATHER_RULES)
    tools = [{"type": "function", "function": {"name": n}} for n in ("files__read_file", "get_weather")]
    question = {"role": "user", "content": "What's in notes.md, and the weather in Beijing?"}
    reply = model.respond([question], tools)
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in reply["tool_calls"]] == [
        ("files__read_file", {"path": "notes.md"}), ("get_weather", {"city": "Beijing"})]
    results = [{"role": "tool", "tool_call_id": "call_1", "content": "# notes"},
               {"role": "tool", "tool_call_id": "call_2", "content": "sunny"}]
    final = model.respond([question, reply, *results], tools)
    assert final == {"role": "assistant",
                     "content": "Here is what I found:\n- files__read_file: # notes\n- get_weather: sunny"}
    assert "no tool" in model.respond([{"role": "user", "content": "Tell me a joke"}], tools)["content"]


async def test_calls_route_to_the_server_that_owns_the_tool():
    weather = fake("weather", tool("get_weather", city="string"), tool("search", q="string"))
    files = fake("files", tool("read_file", path="string"), tool("search", q="string"))
    async with Host({"weather": weather.transport, "files": files.transport}) as host:
        assert "weather__search  weather  search" in host.catalogue_table()
        assert (await host.call("files__search", {"q": "x"})).text == 'files:search {"q": "x"}'
        result = await host.call_function({"type": "tool_use", "id": "t1", "name": "get_weather",
                                           "input": {"city": "Beijing"}})
        assert result.text == 'weather:get_weather {"city": "Beijing"}'
        with pytest.raises(LocalProtocolError, match="no tool 'search'"):
            await host.call("search", {})


async def test_one_host_holds_a_legacy_and_a_modern_server_side_by_side_in_auto():
    legacy = fake("legacy", tool("get_weather", city="string"))  # answers server/discover with -32601
    modern = FakeModernServer(handlers={
        "tools/list": lambda r: {"tools": [tool("read_file", path="string")], "ttlMs": 0, "cacheScope": "private"},
        "tools/call": lambda r: {"content": [{"type": "text", "text": "modern:read_file"}]}})
    async with Host({"old": legacy.transport, "new": modern.transport}, era="auto") as host:
        assert host.eras() == {"old": "legacy (2025-11-25)", "new": "modern (2026-07-28)"}
        assert (await host.call("read_file", {"path": "a"})).text == "modern:read_file"
        assert (await host.call("get_weather", {"city": "Oslo"})).text.startswith("legacy:get_weather")
        assert await host.check() == {"old": "up", "new": "up"}  # ping, or server/discover where ping is gone
    assert [m.method for m in modern.requests()][-1] == "server/discover"


async def test_the_agent_loop_runs_user_model_host_server_model_user():
    weather = fake("weather", tool("get_weather", city="string"), answer="Beijing: sunny, 12 °C")
    files = fake("files", tool("read_file", path="string"), answer="# notes")
    async with Host({"weather": weather.transport, "files": files.transport}, trust={"weather", "files"}) as host:
        run = await host.run("What's the weather in Beijing and what's in notes.md?", ScriptedModel(WEATHER_RULES))
    assert run.answer == "Here is what I found:\n- get_weather: Beijing: sunny, 12 °C\n- read_file: # notes"
    assert [layer for layer, _, _ in run.steps] == [
        "application", "distribution", "mechanism", "model", "distribution", "distribution",
        "mechanism", "model", "application"]
    assert [m["role"] for m in run.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert "host → weather" in repr(run) and "host → files" in repr(run)


async def test_a_server_that_fails_to_start_leaves_the_others_working():
    files = fake("files", tool("read_file", path="string"))
    host = Host({"broken": ["/nonexistent/server"], "files": files.transport})
    async with host:
        assert host.status() == {"broken": "failed: could not start the server '/nonexistent/server': "
                                           "[Errno 2] No such file or directory: '/nonexistent/server'",
                                 "files": "up"}
        assert [e.name for e in host.catalogue] == ["read_file"]


async def test_a_crash_takes_out_one_server_and_the_host_says_which():
    weather = fake("weather", tool("get_weather", city="string"))
    files = fake("files", tool("read_file", path="string"), answer="# notes")
    async with Host({"weather": weather.transport, "files": files.transport}, trust={"weather", "files"}) as host:
        weather.transport.hang_up(-9, "Killed")
        run = await host.run("What's the weather in Beijing and what's in notes.md?", ScriptedModel(WEATHER_RULES))
        assert "- get_weather: Error: server 'weather' failed" in run.answer
        assert "- read_file: # notes" in run.answer
        assert host.status()["weather"].startswith("failed: ") and host.status()["files"] == "up"
        assert [e.server for e in host.catalogue] == ["files"]
        with pytest.raises(LocalProtocolError, match="out of service: weather"):
            await host.call("get_weather", {"city": "Beijing"})


async def test_a_server_slow_to_answer_ping_stays_in_service():
    # A live server on a busy machine may take seconds to answer: the check waits as long as for any request.
    async with Host({"slow": command("mini", "--ping-delay", "6")}) as host:
        assert await host.check() == {"slow": "up"}
        assert [e.name for e in host.catalogue] == ["echo", "slow", "progress", "fail"]


async def test_a_ping_with_no_answer_within_the_hosts_timeout_takes_the_server_out_of_service():
    async with Host({"silent": command("mini", "--ping-delay", "60")}, timeout=2) as host:
        status = await host.check()
        assert status["silent"].startswith("failed: no response to ping (id ")
        assert status["silent"].endswith(" within 2 s; sent notifications/cancelled"), status
        assert host.catalogue == []


async def test_list_changed_makes_the_next_run_list_tools_again():
    files = fake("files", tool("read_file", path="string"))
    async with Host({"files": files.transport}) as host:
        await host.run("hello", ScriptedModel([]))
        files.transport.push(jsonrpc.Notification("notifications/tools/list_changed"))
        await host.check()  # a ping reads the notification
        run = await host.run("hello", ScriptedModel([]))
    assert run.steps[1] == ("distribution", "host → MCP", "tools/list on files: 1 tool")


@pytest.mark.subprocess
async def test_weather_and_files_behind_one_host_with_a_real_crash():
    servers = {"weather": ["python", str(ROOT / "servers" / "weather.py")],
               "files": ["python", str(ROOT / "servers" / "files.py")]}
    question = "What's the weather in Beijing and what's in notes.md?"
    async with Host(servers, trust=servers, timeout=10) as host:
        run = await host.run(question, ScriptedModel(WEATHER_RULES))
        assert "Beijing: sunny" in run.answer and "# MCP notes" in run.answer
        os.kill(host.transports["weather"].pid, signal.SIGKILL)
        with anyio.fail_after(5):
            run = await host.run(question, ScriptedModel(WEATHER_RULES))
        assert "server 'weather' failed" in run.answer and "# MCP notes" in run.answer
        assert "SIGKILL" in host.status()["weather"]
        assert host.failures["weather"].returncode == -signal.SIGKILL
        with pytest.raises(LocalProtocolError, match="out of service"):
            await host.call_function({"type": "function",
                                      "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}})


async def test_a_call_to_a_dead_server_raises_server_failed_naming_it():
    weather = fake("weather", tool("get_weather", city="string"))
    async with Host({"weather": weather.transport}) as host:
        weather.transport.hang_up(1, "Traceback (most recent call last):\nRuntimeError: boom")
        with pytest.raises(ServerFailed, match="server 'weather' failed") as caught:
            await host.call("get_weather", {"city": "Beijing"})
    assert caught.value.server == "weather" and caught.value.__cause__.returncode == 1


@pytest.mark.subprocess
async def test_a_crashed_server_is_started_again_and_the_others_keep_their_connections():
    servers = {"weather": ["python", str(ROOT / "servers" / "weather.py")],
               "files": ["python", str(ROOT / "servers" / "files.py")]}
    async with Host(servers, timeout=10) as host:
        files_client, first_pid = host.clients["files"], host.transports["weather"].pid
        os.kill(first_pid, signal.SIGKILL)
        with anyio.fail_after(5):
            assert (await host.check())["weather"].startswith("failed: ")
        assert {e.server for e in host.catalogue} == {"files"}
        assert await host.reconnect("weather") == "up"
        assert host.transports["weather"].pid != first_pid
        assert (await host.call("get_weather", {"city": "Paris"})).text.startswith("Paris: overcast")
        assert host.clients["files"] is files_client  # untouched: same connection, no second handshake
        assert [m.method for m in files_client.trace.messages() if getattr(m, "method", None) == "initialize"] == ["initialize"]
        assert sorted(e.server for e in host.catalogue) == ["files", "files", "files", "files", "weather", "weather"]


@pytest.mark.subprocess
async def test_a_server_started_again_opens_in_the_era_the_host_remembers_without_a_second_probe():
    async with Host({"weather": ["python", str(ROOT / "servers" / "weather.py")]}, era="auto", timeout=10) as host:
        first = host.clients["weather"]
        assert first.trace.messages()[0].method == "server/discover" and len(host.era_cache) == 1
        assert await host.reconnect("weather") == "up"
        again = host.clients["weather"]
        assert again is not first and again.era == first.era == "modern"
        assert again.trace.messages()[0].method == "server/discover"  # the modern era's opening, not a probe
        assert again.era_reason.startswith("remembered from an earlier connection to this server")
    async with Host({"weather": ["python", str(ROOT / "servers" / "weather.py")]}, era="auto", timeout=10) as other:
        assert "probe with server/discover first" in other.clients["weather"].era_reason  # hosts share nothing


async def test_only_a_server_given_as_a_command_can_be_started_again():
    weather = fake("weather", tool("get_weather", city="string"))
    async with Host({"weather": weather.transport}) as host:
        with pytest.raises(LocalProtocolError, match="given as a transport, not a command"):
            await host.reconnect("weather")
