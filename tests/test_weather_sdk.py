"""servers/weather_sdk.py (the weather server on the official SDK) beside servers/weather.py (ours):
the same checks run on both, parametrised by server.

* every line each server writes, at every protocol revision, validates against the official schema
  (tests/server_helpers.RawServer), while a raw client lists, calls, reads and gets everything;
* the two give the same results: the same tool, resource and prompt names, the same arguments,
  the same text, structured content, resource contents and prompt messages, the same question
  when a country has several cities;
* the official SDK's client (modern and legacy) and mcplab's Client (era="auto", its trace checked
  against the official schema) use everything either offers;
* where the two differ on the wire (error shapes, schema titles) the difference is pinned, so a
  change on either side shows up here and in Lab 15's diff.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from conftest import need
from server_helpers import MODERN, RawServer, load_server_module, modern_params, server_argv

from mcplab.wire.versions import LEGACY_VERSIONS, at_least

try:
    import mcp
except ImportError:  # pragma: no cover - the test extra is missing
    mcp = None

pytestmark = [pytest.mark.subprocess, pytest.mark.interop]

BOTH = ["weather", "weather_sdk"]
ARGUMENTS = {"get_weather": {"city": "北京", "units": "imperial"}, "get_forecast": {"city": "Seattle", "days": 7},
             "weather_report": {"city": "Tokyo", "style": "detailed"}}
CITY_FORM = {"action": "accept", "content": {"city": "Chengdu"}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def need_sdk() -> None:
    need(mcp is not None, "the official SDK (mcp==2.3.0) is not installed")


def walk(call, method: str, key: str) -> list:
    items, cursor = [], None
    while True:
        page = call(method, {"cursor": cursor} if cursor else {})
        items += page[key]
        cursor = page.get("nextCursor")
        if not cursor:
            return items


def use_everything(name: str, version: str) -> dict[str, Any]:
    """Open ``name`` at ``version`` over a raw pipe (every reply schema-checked) and use all it offers."""
    modern = version == MODERN
    capabilities = {"elicitation": {}}
    with RawServer(server_argv(name), version=version,
                   answers={"elicitation/create": lambda params: CITY_FORM}) as server:
        if modern:
            def call(method: str, params: dict) -> dict:
                return server.result(method, modern_params(params, capabilities))
            discovered = call("server/discover", {})
            info = discovered["_meta"]["io.modelcontextprotocol/serverInfo"]
        else:
            discovered = server.initialize(version, capabilities)
            info = discovered["serverInfo"]
            call = server.result
        if not modern:  # 2026-07-28 removed ping: any answer shows the server is alive
            assert server.result("ping") == {}
        seen: dict[str, Any] = {"info": info, "capabilities": discovered["capabilities"],
                                "instructions": discovered.get("instructions")}
        tools = walk(call, "tools/list", "tools")
        seen["tools"] = {tool["name"]: tool for tool in tools}
        seen["calls"] = {tool["name"]: call("tools/call", {"name": tool["name"], "arguments": ARGUMENTS[tool["name"]]})
                         for tool in tools}
        # "China" has four cities: legacy asks with elicitation/create, modern answers input_required.
        first = call("tools/call", {"name": "get_forecast", "arguments": {"city": "China", "days": 1}})
        if modern:
            assert first["resultType"] == "input_required"
            (key, question), = first["inputRequests"].items()
            seen["question"] = question["params"]
            retry = {"inputResponses": {key: CITY_FORM}, **({"requestState": first["requestState"]}
                                                            if "requestState" in first else {})}
            first = call("tools/call", {"name": "get_forecast", "arguments": {"city": "China", "days": 1}, **retry})
        elif at_least(version, "2025-06-18"):
            seen["question"] = server.server_requests[-1]["params"]
        else:  # elicitation came with 2025-06-18: before it there is nobody to ask, and "China" is no city
            seen["question"] = None
        seen["china"] = first
        resources = walk(call, "resources/list", "resources")
        seen["resources"] = {r["uri"]: call("resources/read", {"uri": r["uri"]})["contents"] for r in resources}
        seen["templates"] = walk(call, "resources/templates/list", "resourceTemplates")
        seen["paris"] = call("resources/read", {"uri": "weather://city/Paris"})["contents"]
        prompts = walk(call, "prompts/list", "prompts")
        seen["prompts"] = {p["name"]: call("prompts/get", {"name": p["name"], "arguments": ARGUMENTS[p["name"]]})
                           for p in prompts}
        seen["prompt_arguments"] = {p["name"]: p.get("arguments", []) for p in prompts}
        seen["completion"] = call("completion/complete", {"ref": {"type": "ref/prompt", "name": "weather_report"},
                                                          "argument": {"name": "city", "value": "S"}})["completion"]
        assert server.close() == 0
        assert not [line for line in server.stderr if line and b"Traceback" in line]
    return seen


@pytest.mark.parametrize("version", [*LEGACY_VERSIONS, MODERN])
@pytest.mark.parametrize("name", BOTH)
def test_every_tool_resource_and_prompt_validates_against_the_official_schema(name: str, version: str,
                                                                               spec_schema) -> None:
    if name == "weather_sdk":
        need_sdk()
    spec_schema(version)  # RawServer checks against it: skip (fail in CI) without the schemas
    seen = use_everything(name, version)
    assert set(seen["tools"]) == {"get_weather", "get_forecast"}
    assert seen["calls"]["get_weather"]["content"][0]["text"].startswith("Beijing: sunny (晴), 54 °F")
    assert not seen["calls"]["get_weather"].get("isError")
    if seen["question"] is None:
        assert seen["china"]["isError"] is True and "Unknown city 'China'" in seen["china"]["content"][0]["text"]
    else:
        assert seen["china"]["structuredContent"]["city"] == "Chengdu"
    assert "weather://cities" in seen["resources"]
    assert [t["uriTemplate"] for t in seen["templates"]] == ["weather://city/{name}"]


def comparable(seen: dict) -> dict:
    """What must be the same whichever library wrote the server: names, arguments, results."""
    def shape(schema: dict) -> dict:  # the contract of a schema, without the titles pydantic adds
        return {name: {k: v for k, v in field.items() if k in ("type", "enum", "minimum", "maximum", "default")}
                for name, field in schema.get("properties", {}).items()} | {"required": schema.get("required", [])}

    tools = seen["tools"]
    return {
        "tools": {name: (shape(tool["inputSchema"]), tool.get("annotations"), sorted(tool.get("outputSchema", {})
                                                                                      .get("properties", {})))
                  for name, tool in tools.items()},
        "descriptions": {name: tool["description"].split("\n")[0] for name, tool in tools.items()},
        "text": {name: [block["text"] for block in result["content"]] if "structuredContent" not in result
                 else result["structuredContent"] for name, result in seen["calls"].items()},
        "china": seen["china"]["structuredContent"],
        "question": (seen["question"]["message"], seen["question"]["requestedSchema"]["properties"]["city"]["enum"]),
        "resources": {uri: [(c["mimeType"], json.loads(c["text"])) for c in contents]
                      for uri, contents in seen["resources"].items()},
        "templates": [(t["uriTemplate"], t["name"], t.get("mimeType")) for t in seen["templates"]],
        "paris": json.loads(seen["paris"][0]["text"]),
        "prompts": {name: [(m["role"], m["content"]) for m in got["messages"]] for name, got in seen["prompts"].items()},
        "prompt_arguments": {name: [(a["name"], bool(a.get("required"))) for a in args]
                             for name, args in seen["prompt_arguments"].items()},
        "completion": seen["completion"]["values"],
        "instructions": seen["instructions"],
    }


@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
def test_both_servers_give_the_same_results(version: str) -> None:
    need_sdk()
    ours, theirs = comparable(use_everything("weather", version)), comparable(use_everything("weather_sdk", version))
    for key in ours:
        assert ours[key] == theirs[key], key


def test_both_servers_hold_the_same_table() -> None:
    need_sdk()
    ours, theirs = load_server_module("weather"), load_server_module("weather_sdk")
    assert theirs.CONDITIONS == ours.CONDITIONS
    assert {name: (c.zh, c.country, c.condition, c.celsius, c.humidity, c.wind_kmh, c.week)
            for name, c in ours.CITIES.items()} == theirs.CITIES


# --- where the wire differs: pinned, so Lab 15's diff stays true -------------------------------------

ERRORS = [  # (case, method, params, ours, the SDK's): ("error", code) or ("isError", words in the text)
    ("an unknown tool", "tools/call", {"name": "get_rain", "arguments": {}}, ("error", -32602), ("isError", "Unknown tool: get_rain")),
    ("an unknown city", "tools/call", {"name": "get_weather", "arguments": {"city": "Atlantis"}},
     ("isError", "Unknown city 'Atlantis'"), ("isError", "Error executing tool get_weather: Unknown city 'Atlantis'")),
    ("a day out of range", "tools/call", {"name": "get_forecast", "arguments": {"city": "Paris", "days": 9}},
     ("isError", "days: 9 is greater than the maximum of 7"), ("isError", "Input should be less than or equal to 7")),
    ("an unknown resource", "resources/read", {"uri": "weather://city/Atlantis"}, ("error", -32002), ("error", -32602)),
    ("an unknown city in a prompt", "prompts/get", {"name": "weather_report", "arguments": {"city": "Atlantis"}},
     ("error", -32602), ("error", -32602)),
]


@pytest.mark.parametrize("case, method, params, ours, sdk", ERRORS, ids=[row[0] for row in ERRORS])
def test_error_shapes_are_pinned_for_each_server(case: str, method: str, params: dict, ours: tuple, sdk: tuple) -> None:
    need_sdk()
    for name, (kind, expected) in (("weather", ours), ("weather_sdk", sdk)):
        with RawServer(server_argv(name), version="2025-11-25") as server:
            server.initialize("2025-11-25")
            reply = server.request(method, params)
            if kind == "error":
                assert reply["error"]["code"] == expected, (name, reply)
            else:
                assert reply["result"]["isError"] is True and expected in reply["result"]["content"][0]["text"], (name, reply)
            assert server.result("ping") == {}  # and the server keeps serving


# --- the official SDK's client and ours, against both -------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("name", BOTH)
async def test_the_sdk_client_uses_everything_either_server_offers(name: str, mode: str) -> None:
    from sdk_driver import callbacks, exercise_everything
    from server_helpers import ROOT, SERVERS

    need_sdk()
    asked: list = []
    server = mcp.StdioServerParameters(command=sys.executable, args=[str(SERVERS / f"{name}.py")], cwd=ROOT)
    async with mcp.Client(server, mode=mode, cache=None, **callbacks(asked)) as client:
        assert client.protocol_version == (MODERN if mode == "auto" else "2025-11-25")
        outcomes = await exercise_everything(client)
    assert asked == ["China has 4 cities here. Which one? 哪个城市？"]
    assert outcomes["get_forecast"].structured_content["city"] == "Beijing"  # the form's first choice
    assert outcomes["get_weather"].content[0].text.startswith("Beijing: sunny (晴), 12 °C")


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("name", BOTH)
async def test_mcplab_client_uses_either_server_and_every_frame_validates(name: str, era: str, spec_schema) -> None:
    from client_helpers import validate_frames

    from mcplab import Client
    from mcplab.transports.stdio import stdio

    if name == "weather_sdk":
        need_sdk()
    async with Client(stdio(server_argv(name)), era=era, elicitation=lambda params: CITY_FORM) as client:
        assert [t.name for t in await client.list_tools()] == ["get_weather", "get_forecast"]
        forecast = await client.call_tool("get_forecast", {"city": "China", "days": 3})
        report = await client.get_prompt("weather_report", {"city": "Paris"})
        version = client.protocol_version
    assert forecast.structured["city"] == "Chengdu" and len(forecast.structured["days"]) == 3
    assert report.messages
    assert validate_frames(client.trace, spec_schema(version), version) >= 8


@pytest.mark.anyio
@pytest.mark.http
async def test_over_http_the_sdk_server_starts_like_ours_and_exits_when_its_stdin_closes() -> None:
    import anyio

    from mcplab import Client
    from mcplab.server.streamable_http import launch
    from mcplab.transports.http import http

    need_sdk()
    server = await anyio.to_thread.run_sync(launch, server_argv("weather_sdk"))
    try:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
        for era in ("legacy", "modern"):
            async with Client(http(server.url), era=era) as client:
                result = await client.call_tool("get_weather", {"city": "Paris"})
            assert result.text.startswith("Paris: overcast (阴), 13 °C"), era
    finally:
        code = await anyio.to_thread.run_sync(server.stop)
    assert code == 0
