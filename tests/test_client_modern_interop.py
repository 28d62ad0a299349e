"""Interop in era="auto": this client against servers it did not write, over stdio.

The official SDK's server (mcp==2.3.0, dual-era, serving 2026-07-28 to a client that opens with
server/discover) must come out modern, MRTR rounds included; the npm reference servers
(legacy-only) must come out legacy, with the probe visible at the head of the trace. Every
modern frame must validate against the 2026-07-28 schema, every legacy one against the revision
the handshake agreed on.
"""

from __future__ import annotations

import anyio
import pytest

from client_helpers import command, npm_server, probe_and_rest, validate_frames
from mcplab.client import Client
from mcplab.client.eras import EraCache
from mcplab.wire.errors import INVALID_PARAMS, RemoteError
from mcplab.client.opening import EraError
from mcplab.transports.stdio import stdio

# Seconds to wait for the probe's answer where the answer is what a test checks. On Linux the probe's
# silence counts from the server's read, so its start-up (~1 s for the SDK's server, far more on a busy
# 2-core machine) costs none of them; where it counts from the write, they must cover the start-up too.
SLOW_START = 20.0

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.interop]
MODERN = "2026-07-28"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


def methods(trace) -> list:
    """What the client sent, and what came back (a method, "result" or the error code), in order."""
    out = []
    for frame in trace:
        message = frame.message
        if frame.channel in ("stderr", "note") or message is None:
            continue
        out.append(getattr(message, "method", None) or (f"error {message.code}" if hasattr(message, "code")
                                                        else "result"))
    return out


async def test_the_sdk_server_in_auto_lands_modern_with_mrtr_rounds(spec_schema):
    asked = []

    def elicit(params):
        asked.append(params["message"])
        return {"action": "accept", "content": {"ok": True}}

    def sample(params):
        return {"role": "assistant", "content": {"type": "text", "text": "the window seat"}, "model": "scripted"}

    client = Client(stdio(command("sdk")), era="auto", timeout=20, elicitation=elicit,
                    sampling=sample, roots=["file:///home/lab"])
    client.probe_timeout = SLOW_START  # the probe's answer is under test here, not silence
    async with client:
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        assert client.discovery["supportedVersions"] == [MODERN]  # mcp 2.3.0 serves exactly 2026-07-28 here
        assert client.server_info["name"] == "sdk-weather"
        tools = await client.list_tools()
        assert {"get_weather", "divide", "book_table"} <= {t.name for t in tools}
        assert tools.cache_scope in ("public", "private") and tools.ttl_ms is not None
        assert (await client.call_tool("get_weather", {"city": "Beijing"})).text == "Beijing: sunny, 12 °C"
        assert (await client.call_tool("divide", {"a": 1, "b": 0})).is_error
        assert (await client.read_resource("notes://today")).text == "buy milk"
        assert [t.uri_template for t in await client.list_resource_templates()] == ["notes://day/{day}"]
        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert "x = 1" in prompt.messages[0].content.text
        booked = await client.call_tool("book_table", {"city": "Paris"})
        await client.ping()
        with pytest.raises(RemoteError) as missing:
            await client.read_resource("notes://nowhere")
    assert missing.value.code == INVALID_PARAMS  # 2026-07-28: an unknown resource is -32602, no longer -32002
    assert booked.text.startswith("booked the window seat in Paris (roots=file:///home/lab")
    assert asked == ["Book a table in Paris?"]
    assert methods(client.trace)[:2] == ["server/discover", "result"]  # the probe, answered by a DiscoverResult
    assert methods(client.trace).count("tools/call") == 2 + 3  # book_table took three rounds
    assert "DiscoverResult" in client.era_reason
    assert validate_frames(client.trace, spec_schema(MODERN), MODERN) >= 24


async def test_the_sdk_server_also_answers_an_explicitly_modern_client():
    async with Client(stdio(command("sdk")), era="modern", timeout=20) as client:
        assert client.era == "modern"
        assert (await client.call_tool("get_weather", {"city": "Oslo"})).text.startswith("Oslo")


@pytest.mark.parametrize("name, argv", [("mcp-server-everything", []), ("mcp-server-filesystem", ["/tmp"])])
async def test_an_npm_reference_server_in_auto_lands_legacy_after_the_probe(name, argv, spec_schema):
    client = Client(stdio([npm_server(name), *argv]), era="auto", timeout=20)
    client.probe_timeout = SLOW_START  # the -32601 answer is under test here, not silence
    async with client:
        assert client.era == "legacy" and client.protocol_version == "2025-11-25"
        assert await client.list_tools()
        await client.ping()
    assert methods(client.trace)[:4] == ["server/discover", "error -32601", "initialize", "result"]
    assert client.era_reason.endswith("not a modern answer, so the server is legacy; fall back to initialize")
    notes = [f.raw for f in client.trace if f.channel == "note"]  # the trace says why, in order
    assert notes[0].startswith("era: era='auto'") and notes[-1].endswith("fall back to initialize")
    probe, rest = probe_and_rest(client.trace)
    assert validate_frames(probe, spec_schema(MODERN), MODERN) == 2
    assert validate_frames(rest, spec_schema(client.protocol_version), client.protocol_version) >= 5


async def test_era_modern_against_an_npm_server_fails_deterministically():
    with pytest.raises(EraError, match="legacy.*era='auto'"):
        async with Client(stdio([npm_server("mcp-server-everything")]), era="modern",
                          timeout=20):
            pass


async def test_a_server_that_ignores_requests_before_initialize_is_legacy_after_the_probe_timeout():
    client = Client(stdio(command("mini", "--quiet-before-init")), era="auto", timeout=5)
    client.probe_timeout = 0.3
    with anyio.fail_after(5):
        async with client:
            assert client.era == "legacy"
    assert methods(client.trace)[:3] == ["server/discover", "initialize", "result"]
    assert "no answer within 0.3 s of the server reading it" in client.era_reason


async def test_without_an_era_cache_a_client_remembers_nothing_and_each_one_probes():
    for _ in range(2):
        async with Client(stdio(command("mini")), era="auto", timeout=5) as client:
            assert client.era == "legacy" and client.era_cache is None
        assert methods(client.trace)[0] == "server/discover"
        assert "remembered" not in client.era_reason


async def test_the_era_is_remembered_per_server_so_the_second_connection_skips_the_probe():
    cache = EraCache()
    for _ in range(2):
        async with Client(stdio(command("mini")), era="auto", era_cache=cache, timeout=5) as client:
            assert client.era == "legacy"
    assert methods(client.trace)[:2] == ["initialize", "result"]
    assert client.era_reason.startswith("remembered from an earlier connection to this server")
    async with Client(stdio(command("mini", "--capabilities", "{}")), era="auto", era_cache=cache,
                      timeout=5) as other:  # another command line is another server
        assert methods(other.trace)[0] == "server/discover"
