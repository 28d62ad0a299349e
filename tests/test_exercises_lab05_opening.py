"""Lab 05's "too early" table (mcplab/exercises/lab05_opening.py) is what the weather server really answers.

Each case is sent for real, as the first message a fresh server receives: over stdio to a new process,
over Streamable HTTP to a server no client has initialized a session with.
"""

from __future__ import annotations

import sys

import httpx
import pytest

from mcplab.exercises import lab05_opening
from mcplab.lifecycle import stamp
from mcplab.server.streamable_http import launch
from server_helpers import RawServer, SERVERS, server_argv

MODERN = stamp(None, "2026-07-28", {})
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
MODERN_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
STDIO = {"a": ((), "tools/list", None), "b": ((), "ping", None), "c": ((), "tools/list", MODERN),
         "d": (("--era", "modern"), "tools/list", None)}
HTTP = {"e": ("tools/list", None, {}), "f": ("ping", None, {}), "g": ("tools/list", MODERN, MODERN_HEADERS)}


def seen(reply: dict) -> str:
    return "result" if "result" in reply else f"error {reply['error']['code']}"


@pytest.mark.subprocess
@pytest.mark.parametrize("case", sorted(STDIO))
def test_each_stdio_case_is_what_a_fresh_server_answers(case):
    flags, method, params = STDIO[case]
    with RawServer(server_argv("weather", *flags)) as server:
        reply = server.request(method, params)
        assert seen(reply) == lab05_opening._EXPECTED[case], reply
        assert server.close() == 0


@pytest.mark.subprocess
def test_each_http_case_is_what_a_server_with_no_session_answers():
    with launch([sys.executable, str(SERVERS / "weather.py")]) as server:
        for case, (method, params, headers) in HTTP.items():
            body = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params else {})}
            reply = httpx.post(server.url, json=body, headers=ACCEPT | headers, timeout=30)
            shown = f"HTTP {reply.status_code}" if reply.status_code >= 400 else seen(reply.json())
            assert shown == lab05_opening._EXPECTED[case], (case, reply.status_code, reply.text)
            if reply.status_code == 400:
                assert reply.json()["error"]["code"] == -32600


def test_every_case_has_its_answer_and_its_reason():
    assert set(lab05_opening._EXPECTED) == set(lab05_opening.TOO_EARLY) == set(lab05_opening._WHY)
    assert set(lab05_opening._EXPECTED.values()) == set(lab05_opening.TOO_EARLY_ANSWERS)
