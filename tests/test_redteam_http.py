"""Red team, HTTP abuse: forged and doubled headers, slow and vanishing clients, sessions that hoard.

Every row runs against a bundled server started as a process (``launch``) and spoken to on a bare
socket where a byte matters (tests/redteam_helpers.RawHTTP). After each attack the server must
still answer another client, a refusal carries its status and a JSON-RPC error code, and nothing
grows without bound: questions a client never answers time out and are capped per session,
subscriptions are capped, and a session keeps only a bounded summary of its ``initialize``.
"""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path

import httpx
import pytest

from conftest import need
from mcplab.server.streamable_http import launch

from redteam_helpers import (
    RawHTTP, have_proc, open_session, rss_kib, script, session_headers, wait_for,
)
from server_helpers import RawServer, SERVERS, server_argv

pytestmark = [pytest.mark.subprocess, pytest.mark.http]

PING = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode()


@pytest.fixture(scope="module")
def weather():
    """One impatient weather server (1 s for slow clients) for the whole module, and a session on it."""
    with launch(script("impatient", "weather")) as process:
        yield process


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def _session_pairs(session: str, *skip: str) -> list[tuple[str, str]]:
    return [(k, v) for k, v in session_headers(session).items() if k not in ("Accept", "Content-Type", *skip)]


def _still_serving(url: str) -> None:
    session = open_session(url)
    with httpx.Client(timeout=10, trust_env=False) as client:
        reply = client.post(url, content=PING, headers=session_headers(session))
    assert reply.status_code == 200 and reply.json()["result"] == {}, reply.text


HEADER_ABUSE = [  # (what, headers of a POSTed ping in a session – a name may repeat –, Host, expected status)
    ("MCP-Protocol-Version twice, two values",
     [("MCP-Protocol-Version", "2025-11-25"), ("MCP-Protocol-Version", "2025-06-18")], None, 400),
    ("MCP-Protocol-Version twice, the same value",
     [("MCP-Protocol-Version", "2025-11-25"), ("MCP-Protocol-Version", "2025-11-25")], None, 400),
    ("Mcp-Session-Id twice", [("Mcp-Session-Id", "{session}"), ("Mcp-Session-Id", "0" * 32)], None, 400),
    ("Origin twice, one of them foreign", [("Origin", "http://127.0.0.1:{port}"), ("Origin", "http://evil.example")],
     None, 403),
    ("an Origin on another local port", [("Origin", "http://127.0.0.1:{other}")], None, 403),
    ("localhost on another port", [("Origin", "http://localhost:3000")], "localhost:{port}", 403),
    ("https on this port", [("Origin", "https://127.0.0.1:{port}")], None, 403),
    ("an Origin without a port, on a server that has one", [("Origin", "http://127.0.0.1")], None, 403),
    ("this server's own origin", [("Origin", "http://127.0.0.1:{port}")], None, 200),
    ("this server's own origin, by name", [("Origin", "http://localhost:{port}")], "localhost:{port}", 200),
    ("the same port under another loopback name", [("Origin", "http://localhost:{port}")], None, 403),
    ("no Origin at all (a program, not a page)", [], None, 200),
]


@pytest.mark.parametrize("what, headers, host, status", HEADER_ABUSE, ids=[row[0] for row in HEADER_ABUSE])
def test_forged_and_doubled_headers_are_refused_by_status_and_code(weather, what, headers, host, status) -> None:
    session = open_session(weather.url)
    port = _port(weather.url)
    fill = {"session": session, "port": str(port), "other": str(port + 1)}
    named = {name.lower() for name, _ in headers}
    pairs = [(name, value.format(**fill)) for name, value in headers]
    pairs += [(k, v) for k, v in _session_pairs(session) if k.lower() not in named]
    with RawHTTP(weather.url) as wire:
        wire.post(PING, pairs, host=host.format(**fill) if host else None)
        got, reply_headers, body = wire.response()
    assert got == status, f"{what}: {got} {body[:300]!r}"
    assert reply_headers["content-type"] == "application/json"
    reply = json.loads(body)
    if status == 200:
        assert reply["result"] == {}
    else:
        assert reply["error"]["code"] == -32600 and reply["error"]["message"], reply
    _still_serving(weather.url)


SLOW_CLIENTS = [  # (what, bytes sent, then silence): the server must not wait for the rest forever
    ("a connection that never sends a request", b""),
    ("a request line and no headers", b"POST /mcp HTTP/1.1\r\n"),
    ("headers that never end", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, "),
]


@pytest.mark.parametrize("what, sent", SLOW_CLIENTS, ids=[row[0] for row in SLOW_CLIENTS])
def test_a_client_too_slow_to_send_its_request_is_disconnected(weather, what, sent) -> None:
    with RawHTTP(weather.url) as wire:
        wire.send(sent)
        _still_serving(weather.url)  # meanwhile everybody else is served
        assert wire.closed_by_server(wait=15), f"{what}: the server is still waiting"


SMUGGLING = [  # (what, the length headers of a POST whose chunked body ends at once and hides a second request)
    ("Content-Length and Transfer-Encoding", ["Content-Length: {hidden}", "Transfer-Encoding: chunked"]),
    ("Transfer-Encoding first, then Content-Length", ["Transfer-Encoding: chunked", "Content-Length: {hidden}"]),
    ("Content-Length: 0 beside chunked", ["Content-Length: 0", "Transfer-Encoding: chunked"]),
]


@pytest.mark.parametrize("what, lengths", SMUGGLING, ids=[row[0] for row in SMUGGLING])
def test_a_request_with_two_lengths_gets_400_and_its_connection_closes(weather, what, lengths) -> None:
    """RFC 9112 §6.1: a message with both is a smuggling attempt; answer it as an error and close, so the
    request hidden behind it (a ping here) is never answered."""
    session = open_session(weather.url)
    with RawHTTP(weather.url) as wire:
        hidden = "\r\n".join(["POST /mcp HTTP/1.1", f"Host: {wire.host}:{wire.port}", "Content-Type: application/json",
                               "Accept: application/json, text/event-stream", f"Content-Length: {len(PING)}",
                               *[f"{k}: {v}" for k, v in _session_pairs(session)]]).encode() + b"\r\n\r\n" + PING
        smuggled = b"0\r\n\r\n" + hidden
        head = ["POST /mcp HTTP/1.1", f"Host: {wire.host}:{wire.port}", "Content-Type: application/json",
                "Accept: application/json, text/event-stream", *[f"{k}: {v}" for k, v in _session_pairs(session)],
                *[line.format(hidden=len(smuggled)) for line in lengths]]
        wire.send(("\r\n".join(head) + "\r\n\r\n").encode() + smuggled)
        status, headers, body = wire.response()
        assert status == 400 and headers.get("connection") == "close", (what, status, headers, body)
        assert b"not both" in body, body
        assert wire.closed_by_server(wait=15), f"{what}: the connection stayed open for the hidden request"
        assert wire.buffer == b"", f"{what}: the hidden request was answered: {wire.buffer[:200]!r}"
    _still_serving(weather.url)


def test_a_body_that_stalls_halfway_gets_408_and_the_server_moves_on(weather) -> None:
    session = open_session(weather.url)
    with RawHTTP(weather.url) as wire:
        head = ["POST /mcp HTTP/1.1", f"Host: {wire.host}:{wire.port}", "Content-Type: application/json",
                "Accept: application/json, text/event-stream", "Content-Length: 1000",
                *[f"{k}: {v}" for k, v in _session_pairs(session)]]
        wire.send(("\r\n".join(head) + "\r\n\r\n").encode() + b'{"jsonrpc": "2.0", ')
        wire.sock.settimeout(15)
        status, headers, body = wire.response()
    assert status == 408 and json.loads(body)["error"]["code"] == -32600, body
    _still_serving(weather.url)


def test_a_client_that_vanishes_mid_body_costs_one_log_line_not_a_traceback(weather) -> None:
    before = weather.stderr().count("\n")
    for _ in range(5):
        with RawHTTP(weather.url) as wire:
            wire.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      b"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n" + b" " * 1000)
            wire.sock.shutdown(socket.SHUT_RDWR)
    _still_serving(weather.url)
    time.sleep(0.5)  # let the server notice the last one (its log line is what is being counted)
    log = weather.stderr()
    assert "Traceback" not in log, log[-3000:]
    assert log.count("\n") - before <= 5, log[-3000:]


# --- what a session may pile up ------------------------------------------------------------------------------

ELICIT = {"name": "test_elicitation", "arguments": {"message": "who?"}}


def _ask(client: httpx.Client, url: str, session: str, number: int) -> dict:
    """POST a tools/call that asks the client something; the first message on its stream (the stream is dropped)."""
    body = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": ELICIT}
    with client.stream("POST", url, headers=session_headers(session), json=body) as reply:
        if not reply.headers["content-type"].startswith("text/event-stream"):
            return json.loads(reply.read())
        for line in reply.iter_lines():
            if line.startswith("data:") and line[5:].strip():  # not a priming event (an id, no data)
                return json.loads(line[5:])
    raise AssertionError("the stream ended without a message")


def test_questions_a_client_never_answers_are_capped_per_session() -> None:
    with launch(server_argv("conformance")) as process:
        session = open_session(process.url, {"elicitation": {}})
        with httpx.Client(timeout=30, trust_env=False) as client:
            asked = [_ask(client, process.url, session, number) for number in range(16)]
            assert all(message.get("method") == "elicitation/create" for message in asked), asked[-1]
            refused = _ask(client, process.url, session, 99)
            assert refused.get("id") == 99 and refused["result"]["isError"] is True, refused
            assert "16" in refused["result"]["content"][0]["text"], refused
            answered = client.post(process.url, headers=session_headers(session), json={
                "jsonrpc": "2.0", "id": asked[0]["id"],
                "result": {"action": "accept", "content": {"username": "ada", "email": "ada@example.org"}}})
            assert answered.status_code == 202
            assert wait_for(lambda: _ask(client, process.url, session, 100).get("method") == "elicitation/create")
        other = open_session(process.url, {"elicitation": {}})  # the cap is per session
        with httpx.Client(timeout=30, trust_env=False) as client:
            assert _ask(client, process.url, other, 1).get("method") == "elicitation/create"


def test_a_question_a_client_never_answers_times_out_and_is_cancelled() -> None:
    with launch(server_argv("conformance", "--ask-timeout", "1")) as process:
        session = open_session(process.url, {"elicitation": {}})
        body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": ELICIT}
        with httpx.Client(timeout=30, trust_env=False) as client:
            reply = client.post(process.url, headers=session_headers(session), json=body)
        messages = [json.loads(line[5:]) for line in reply.text.splitlines()
                    if line.startswith("data:") and line[5:].strip()]
        question, cancelled, result = messages
        assert question["method"] == "elicitation/create"
        assert cancelled["method"] == "notifications/cancelled"
        assert cancelled["params"]["requestId"] == question["id"]
        assert result["id"] == 5 and result["result"]["isError"] is True
        assert "1 s" in result["result"]["content"][0]["text"], result


@pytest.fixture
def many_files(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(SERVERS / "samples", root)
    for number in range(120):
        (root / f"f{number:03d}.txt").write_text(str(number))
    return root


def test_subscriptions_are_capped_and_an_unknown_or_oversized_uri_is_refused(many_files: Path) -> None:
    with RawServer(server_argv("files", "--root", str(many_files))) as server:
        server.initialize("2025-11-25")
        unknown = server.request("resources/subscribe", {"uri": "file:///no-such-file.txt"})
        assert unknown["error"]["code"] == -32002, unknown
        huge = server.request("resources/subscribe", {"uri": "file:///" + "a" * 50_000})
        assert huge["error"]["code"] == -32602 and "characters" in huge["error"]["message"], str(huge)[:300]
        for number in range(100):
            assert server.result("resources/subscribe", {"uri": f"file:///f{number:03d}.txt"}) == {}
        assert server.result("resources/subscribe", {"uri": "file:///f000.txt"}) == {}  # already held: fine
        over = server.request("resources/subscribe", {"uri": "file:///f100.txt"})
        assert over["error"]["code"] == -32602 and "100" in over["error"]["message"], over
        assert server.result("resources/unsubscribe", {"uri": "file:///f000.txt"}) == {}
        assert server.result("resources/subscribe", {"uri": "file:///f100.txt"}) == {}


def test_a_session_keeps_a_bounded_summary_of_a_huge_initialize() -> None:
    need(have_proc(), "reading a process's memory needs /proc (Linux)")
    info = {"name": "n" * (3_900_000), "version": "v" * 1000, "title": "t" * 1000}
    capabilities = {"experimental": {"x": "y" * 100_000}, "roots": {"listChanged": True, "junk": ["z"] * 1000}}
    with launch(server_argv("weather")) as process:
        open_session(process.url)
        before = rss_kib(process.process.pid)
        sessions = [open_session(process.url, capabilities, info) for _ in range(40)]
        grown = rss_kib(process.process.pid) - before
        assert grown < 64 * 1024, f"40 sessions with a 3.9 MB clientInfo grew the server by {grown} KiB"
        with httpx.Client(timeout=10, trust_env=False) as client:
            reply = client.post(process.url, content=PING, headers=session_headers(sessions[-1]))
        assert reply.json()["result"] == {}
