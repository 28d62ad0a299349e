"""Red team, client faults: servers that flood, shout, hang, die or send one enormous message.

A notebook kernel is the client, and a misbehaving server must not be able to kill it. Each row
starts a hostile server (tests/redteam_helpers.py, tests/client_helpers.py ``mini``) and runs the
mcplab client against it in a child process of its own, so that the child's peak memory is the
client's alone. The client must end with the result or with a typed error, never hang, and stay
under :data:`CEILING_MIB` of memory however much the server sends: its trace keeps the latest frames
and says how many it dropped.
"""

from __future__ import annotations

import json

import pytest

from mcplab.wire import sse
from mcplab.wire.sse import SSEEvent, SSEParser
from mcplab.trace import Trace

from client_helpers import command
from redteam_helpers import run_client, script

pytestmark = pytest.mark.subprocess

CEILING_MIB = 160  # a client's peak memory, whatever the server does (an idle client is about 50 MiB)

CHILD = """
import json
from mcplab import Client
from mcplab.wire.errors import MCPLabError
from mcplab.server.streamable_http import launch
from mcplab.trace import Trace
from mcplab.transports.http import http
from mcplab.transports.stdio import stdio

async def main():
    argv, over, keep, timeout = ARGS
    keeping = {"trace": Trace(max_frames=None, max_chars=None)} if keep else {}
    server = launch(argv) if over == "http" else None
    wire = http(server.url, **keeping) if server else stdio(argv, **keeping)
    outcome = {"error": None, "message": ""}
    try:
        async with Client(wire, timeout=timeout) as client:
            outcome["result_size"] = len(json.dumps(await client.request("ping")))
    except MCPLabError as exc:
        outcome["error"], outcome["message"] = type(exc).__name__, str(exc)[:1000]
    finally:
        if server is not None:
            server.stop()
    frames = wire.trace
    outcome.update(frames=len(frames), dropped=getattr(frames, "dropped", 0), first=frames.text().splitlines()[0][:300],
                   chars=sum(len(f.raw) for f in frames))
    return outcome
"""

FAULTS = [  # (what, server argv, over, keep every frame, timeout, expected error or None, what to check)
    ("200,000 notifications before the answer, over stdio", script("flood-stdio", "200000"), "stdio", False, 60,
     None, "dropped"),
    ("200,000 notifications before the answer, over SSE", script("flood-sse", "200000"), "http", False, 60,
     None, "dropped"),
    ("one 50 MiB event", script("big-event", "50"), "http", False, 30, "TransportError", "16777216 bytes"),
    ("one 12 MiB event", script("big-event", "12"), "http", False, 30, None, "arrived"),
    ("64 MiB on stderr without a newline", script("chatter", "64"), "stdio", False, 60, None, "cut"),
    ("a server that never answers", command("mini", "--silent"), "stdio", False, 1, "RequestTimeout", "within 1 s"),
    ("a server that dies in a call", command("mini", "--exit-on-call", "3"), "stdio", False, 10, None, "alive"),
    ("junk on stdout instead of initialize", command("mini", "--junk"), "stdio", False, 10, "RemoteProtocolError",
     "not a JSON-RPC message"),
    ("a flood, with every frame kept on request", script("flood-stdio", "20000"), "stdio", True, 60, None, "all"),
]


@pytest.mark.parametrize("what, argv, over, keep, timeout, error, check", FAULTS, ids=[row[0] for row in FAULTS])
def test_a_hostile_server_ends_in_a_result_or_a_typed_error_within_a_memory_ceiling(
        what, argv, over, keep, timeout, error, check) -> None:
    if over == "http":
        pytest.importorskip("uvicorn")
    outcome = run_client(CHILD.replace("ARGS", repr((argv, over, keep, timeout))), timeout=180)
    assert outcome["error"] == error, f"{what}: {outcome}"
    assert outcome["peak_kib"] < CEILING_MIB * 1024, f"{what}: the client peaked at {outcome['peak_kib']} KiB"
    if check == "dropped":
        assert outcome["frames"] <= 10_000 and outcome["dropped"] > 190_000, outcome
        assert "earlier frames dropped" in outcome["first"], outcome  # the HTML and JSONL: the unit test below
    elif check == "arrived":
        assert outcome["result_size"] > 12 << 20, outcome
    elif check == "cut":
        assert outcome["chars"] <= 16 << 20, outcome
    elif check == "all":
        assert outcome["dropped"] == 0 and outcome["frames"] > 20_000, outcome
    elif check == "alive":
        assert outcome["error"] is None  # ping is answered; the crash is on tools/call, covered elsewhere
    else:
        assert check in outcome["message"], outcome


# --- the trace keeps the latest frames and says what it dropped ---------------------------------------------

def test_a_bounded_trace_keeps_the_latest_frames_and_every_view_says_how_many_went() -> None:
    trace = Trace(max_frames=40)
    for number in range(1000):
        trace.record("s2c", "stdio", json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                                  "params": {"level": "info", "data": number}}))
    assert len(trace.frames) <= 40 and trace.frames[-1].seq == 1000
    assert trace.dropped + len(trace.frames) == 1000 and trace.frames[0].seq == trace.dropped + 1
    marker = f"{trace.dropped} earlier frames dropped"
    assert trace.text().splitlines()[0].startswith(f"… {marker}")
    assert marker in trace._repr_html_() and marker in repr(trace) or "earlier, dropped" in repr(trace)
    again = Trace.from_jsonl(trace.to_jsonl())
    assert again.dropped == trace.dropped and [f.seq for f in again.frames] == [f.seq for f in trace.frames]
    assert again.text() == trace.text()
    again.record("c2s", "note", "one more")
    assert again.frames[-1].seq == 1001


def test_a_trace_bounded_by_characters_drops_big_frames_first_in_line() -> None:
    trace = Trace(max_frames=None, max_chars=1 << 20)
    for _ in range(50):
        trace.record("s2c", "stdio", "x" * 100_000)
    assert sum(len(f.raw) for f in trace.frames) <= 1 << 20 and trace.dropped >= 40


def test_keeping_everything_is_one_argument() -> None:
    trace = Trace(max_frames=None, max_chars=None)
    for number in range(30_000):
        trace.record("s2c", "stdio", str(number))
    assert len(trace.frames) == 30_000 and trace.dropped == 0 and not trace.text().startswith("…")


# --- the SSE parser is linear -----------------------------------------------------------------------------

class _Counting:
    """Stands in for the parser's line-end pattern and counts the bytes it is asked to search."""

    def __init__(self, pattern) -> None:
        self.pattern, self.searched = pattern, 0

    def search(self, data, start=0):
        self.searched += len(data) - start
        return self.pattern.search(data, start)


def test_the_sse_parser_looks_at_each_byte_once_however_a_long_line_is_cut(monkeypatch) -> None:
    counting = _Counting(sse._LINE_END)
    monkeypatch.setattr(sse, "_LINE_END", counting)
    parser = SSEParser()
    body = b"data: " + b"y" * (4 << 20) + b"\n\n"
    events = []
    for start in range(0, len(body), 4096):
        events += parser.feed(body[start:start + 4096])
    assert events == [SSEEvent("y" * (4 << 20))]
    assert counting.searched <= 2 * len(body), f"searched {counting.searched} bytes to parse {len(body)}"


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20])
def test_an_event_over_the_limit_is_refused_however_it_arrives(chunk: int) -> None:
    parser = SSEParser(max_event=100_000)
    body = b"data: " + b"z" * 50_000 + b"\ndata: " + b"z" * 60_000 + b"\n\n"
    with pytest.raises(sse.EventTooLarge, match="100000 bytes"):
        for start in range(0, len(body), chunk):
            parser.feed(body[start:start + chunk])
    small = SSEParser(max_event=100_000)
    assert small.feed(b"data: " + b"z" * 90_000 + b"\n\n") == [SSEEvent("z" * 90_000)]


# --- a stream's reader is held back while nobody takes its messages ------------------------------------------

@pytest.mark.anyio
async def test_a_flood_the_client_does_not_take_waits_in_the_server_not_in_the_inbox() -> None:
    import anyio

    from mcplab.wire.jsonrpc import Request
    from mcplab.server.streamable_http import launch
    from mcplab.transports.http import INBOX, http

    count = 5 * INBOX
    with launch(script("flood-sse", str(count))) as server:
        async with http(server.url) as wire:
            await wire.send(Request(1, "ping"))
            with anyio.fail_after(30):
                while len(wire._inbox) < INBOX:  # the reader fills the inbox ...
                    await anyio.sleep(0.05)
            await anyio.sleep(0.5)
            assert len(wire._inbox) == INBOX  # ... and then waits for room: the rest stays on the server's side
            received = []
            with anyio.fail_after(60):
                while not received or getattr(received[-1], "id", None) != 1:
                    received.append(await wire.receive())
    data = [message.params["data"][:8] for message in received[:-1]]
    assert data == [f"{index:08d}" for index in range(count)]  # held back, never dropped or reordered
