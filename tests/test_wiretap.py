"""mcplab.ecosystem.wiretap: between any client and any server over stdio, it forwards every line unchanged
and records it; the file it writes is the trace the client itself saw, frame for frame."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from client_helpers import command
from conftest import need
from mcplab.trace import Trace

pytestmark = [pytest.mark.subprocess, pytest.mark.anyio]
ROOT = Path(__file__).resolve().parent.parent
WEATHER = [sys.executable, str(ROOT / "servers" / "weather.py")]

try:
    import mcp
except ImportError:  # pragma: no cover - the test extra is missing
    mcp = None


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def tapped(path: Path, server: list[str]) -> list[str]:
    return [sys.executable, "-m", "mcplab.ecosystem.wiretap", str(path), "--", *server]


def wire(trace: Trace) -> list[tuple[str, str]]:
    return [(f.direction, f.raw) for f in trace if f.channel == "stdio"]


async def test_the_tap_records_exactly_what_the_client_saw(tmp_path: Path) -> None:
    from mcplab import Client
    from mcplab.transports.stdio import stdio

    path = tmp_path / "tap.jsonl"
    async with Client(stdio(tapped(path, WEATHER)), era="auto") as client:
        result = await client.call_tool("get_weather", {"city": "北京"})
    assert result.text.startswith("Beijing: sunny (晴)")
    recorded = Trace.load(path)
    assert wire(recorded) == wire(client.trace) and len(wire(recorded)) >= 4
    assert recorded.frames[0].message.method == "server/discover"


async def test_the_official_sdks_client_through_the_tap(tmp_path: Path) -> None:
    need(mcp is not None, "the official SDK (mcp==2.3.0) is not installed")
    path = tmp_path / "tap.jsonl"
    argv = tapped(path, WEATHER)
    server = mcp.StdioServerParameters(command=argv[0], args=argv[1:], cwd=ROOT)
    async with mcp.Client(server, mode="legacy", cache=None) as client:
        result = await client.call_tool("get_weather", {"city": "Paris"})
    assert result.content[0].text.startswith("Paris: overcast")
    frames = [f for f in Trace.load(path) if f.channel == "stdio"]
    sent = [(f.direction, getattr(f.message, "method", None)) for f in frames]
    assert sent[:3] == [("c2s", "initialize"), ("s2c", None), ("c2s", "notifications/initialized")]
    assert ("c2s", "tools/call") in sent
    assert json.loads(frames[0].raw)["params"]["clientInfo"]["name"] == "mcp"  # how the SDK introduces itself


def test_a_line_that_is_not_json_passes_and_is_recorded_refused(tmp_path: Path) -> None:
    path = tmp_path / "tap.jsonl"
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    done = subprocess.run(tapped(path, command("mini", "--junk")), input=(json.dumps(init) + "\n").encode(),
                          capture_output=True, timeout=20)
    assert done.stdout == b"Hello! I am a server that prints to stdout.\n"  # forwarded unchanged
    (junk,) = [f for f in Trace.load(path) if f.direction == "s2c" and f.channel == "stdio"]
    assert junk.raw == "Hello! I am a server that prints to stdout." and junk.message.code == -32700


def test_the_tap_exits_with_the_servers_code_and_records_its_stderr(tmp_path: Path) -> None:
    path = tmp_path / "tap.jsonl"
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}}]
    done = subprocess.run(tapped(path, command("mini", "--exit-on-call", "3")), timeout=20, capture_output=True,
                          input="".join(json.dumps(m) + "\n" for m in lines).encode())
    assert done.returncode == 3
    stderr = [f.raw for f in Trace.load(path) if f.channel == "stderr"]
    assert "mini server: crashing on purpose" in stderr


def test_the_tap_says_how_to_use_it() -> None:
    done = subprocess.run([sys.executable, "-m", "mcplab.ecosystem.wiretap", "only-a-file"], capture_output=True, text=True,
                          timeout=20)
    assert done.returncode == 1 and "usage: python -m mcplab.ecosystem.wiretap TRACE.jsonl -- COMMAND" in done.stderr
