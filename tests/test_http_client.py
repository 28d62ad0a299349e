"""The Streamable HTTP transport (mcplab/transports/http.py): the SSE parser, then the transport under a
Client against scripted HTTP servers that answer the way real ones do (JSON, SSE with comments and
priming events, CRLF, errors, closed streams to resume)."""

from __future__ import annotations

import asyncio
import json
import re

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.responses import JSONResponse, Response, StreamingResponse

from http_helpers import Scripted, served
from mcplab import Client
from mcplab.wire.errors import HTTPStatusError, RemoteError, SessionExpired, TransportError
from mcplab.transports.http import HTTPTransport, SSEEvent, SSEParser, http
from mcplab.wire import jsonrpc

# --- the SSE parser (sans-IO) --------------------------------------------------------------------------

PARSES = [
    ("one event", b"data: {}\n\n", [SSEEvent("{}")]),
    ("CRLF line ends", b"event: message\r\ndata: {}\r\n\r\n", [SSEEvent("{}")]),
    ("CR line ends", b"data: a\rdata: b\r\r", [SSEEvent("a\nb")]),
    ("multi-line data joins with \\n", b"data: {\"a\":\ndata: 1}\n\n", [SSEEvent('{"a":\n1}')]),
    ("a comment is skipped", b": keepalive\n\ndata: x\n\n", [SSEEvent("x")]),
    ("no space after the colon", b"data:x\n\n", [SSEEvent("x")]),
    ("only one leading space is removed", b"data:  x\n\n", [SSEEvent(" x")]),
    ("a field with no colon", b"data\n\n", [SSEEvent("")]),
    ("an event type", b"event: ping\ndata: 1\n\n", [SSEEvent("1", "ping")]),
    ("a priming event: an id and empty data", b"id: e-1\nretry: 500\ndata: \n\n", [SSEEvent("", id="e-1", retry=500)]),
    ("the id sticks to later events", b"id: 7\ndata: a\n\ndata: b\n\n", [SSEEvent("a", id="7"), SSEEvent("b", id="7")]),
    ("an empty event is not dispatched", b"event: x\n\n\n\n", []),
    ("an unfinished event is not dispatched", b"data: half", []),
    ("a byte order mark at the start is dropped", b"\xef\xbb\xbfdata: x\n\n", [SSEEvent("x")]),
    ("a retry that is not a number is ignored", b"retry: soon\ndata: x\n\n", [SSEEvent("x")]),
    ("unknown fields are ignored", b"colour: red\ndata: x\n\n", [SSEEvent("x")]),
]


@pytest.mark.parametrize("what, stream, events", PARSES, ids=[p[0] for p in PARSES])
def test_the_parser_reads_the_event_stream_format(what, stream, events):
    parser = SSEParser()
    assert parser.feed(stream) + parser.end() == events


@pytest.mark.parametrize("what, stream, events", PARSES, ids=[p[0] for p in PARSES])
def test_the_parser_gives_the_same_events_one_byte_at_a_time(what, stream, events):
    parser = SSEParser()
    assert [e for i in range(len(stream)) for e in parser.feed(stream[i:i + 1])] + parser.end() == events


def test_a_cr_at_the_end_of_a_chunk_ends_the_line_and_a_lf_first_in_the_next_one_is_its_other_half():
    parser = SSEParser()
    assert parser.feed(b"data: x\r\n\r") == [SSEEvent("x")]  # no waiting: CR alone is a line end
    assert parser.feed(b"\ndata: y\n\n") == [SSEEvent("y")]  # that LF finished the CRLF, it is no empty line


def test_the_parser_keeps_the_last_id_and_retry_for_reconnecting():
    parser = SSEParser()
    parser.feed(b"id: a\nretry: 250\ndata: \n\nid: b\ndata: {}\n\n")
    assert (parser.last_id, parser.retry) == ("b", 250)


messages = st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
                            max_size=30), min_size=1, max_size=5)


@given(messages, st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=40),
       st.sampled_from([b"\n", b"\r\n", b"\r"]))
def test_any_split_of_a_stream_gives_the_same_events(datas, cuts, newline):
    stream = b"".join(b"data: " + d.encode() + newline + newline for d in datas)
    parser, events, at = SSEParser(), [], 0
    for cut in cuts * (len(stream) // sum(cuts) + 1):
        events += parser.feed(stream[at:at + cut])
        at += cut
        if at >= len(stream):
            break
    events += parser.end()  # a final CR waits for the byte after it, or for the end
    assert [e.data for e in events] == datas


# --- the transport ------------------------------------------------------------------------------------

@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def sse(*events: str) -> StreamingResponse:
    async def body():
        for event in events:
            yield event.encode()
    return StreamingResponse(body(), media_type="text/event-stream")


def result(message: dict, value: dict) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": value})


@pytest.mark.anyio
@pytest.mark.http
async def test_posts_carry_accept_content_type_and_after_initialize_the_session_and_version():
    scripted = Scripted({}, version="2025-11-25", session="abc")
    async with served(scripted.app()) as url:
        async with Client(http(url)) as client:
            await client.ping()
    (init_headers, _), = scripted.posts("initialize")
    assert init_headers["accept"] == "application/json, text/event-stream"
    assert init_headers["content-type"] == "application/json"
    assert "mcp-session-id" not in init_headers and "mcp-protocol-version" not in init_headers
    for method in ("notifications/initialized", "ping"):
        (headers, _), = scripted.posts(method)
        assert headers["mcp-session-id"] == "abc" and headers["mcp-protocol-version"] == "2025-11-25"
    verb, headers, _ = scripted.received[-1]
    assert verb == "DELETE" and headers["mcp-session-id"] == "abc"


@pytest.mark.anyio
@pytest.mark.http
async def test_the_version_header_is_sent_only_from_2025_06_18_on():
    scripted = Scripted({}, version="2025-03-26", session=None)
    async with served(scripted.app()) as url:
        async with Client(http(url), version="2025-03-26") as client:
            await client.ping()
    (headers, _), = scripted.posts("ping")
    assert "mcp-protocol-version" not in headers and "mcp-session-id" not in headers
    assert all(verb != "DELETE" for verb, _, _ in scripted.received)  # no session, nothing to end


@pytest.mark.anyio
@pytest.mark.http
async def test_an_sse_reply_with_comments_priming_crlf_and_multiline_data_is_read():
    async def call(message, headers):
        token = message["params"]["_meta"]["progressToken"]
        progress = json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                               "params": {"progressToken": token, "progress": 1, "total": 2}})
        return sse(": hello\r\n\r\n", "id: p-0\r\nretry: 10\r\ndata:\r\n\r\n",
                   f"event: message\r\ndata: {progress}\r\n\r\n",
                   "data: " + result(message, {"content": [{"type": "text", "text": "ok"}]})
                   .replace(',"result"', '\r\ndata: ,"result"') + "\r\n\r\n")

    seen = []
    async with served(Scripted({"tools/call": call}).app()) as url:
        async with Client(http(url)) as client:
            answer = await client.call_tool("t", {}, on_progress=seen.append)
    assert answer.text == "ok" and seen == [{"progressToken": 2, "progress": 1, "total": 2}]
    frames = [f for f in client.trace if f.http and f.http.get("sse") is not None]
    assert [f.raw for f in frames][0] == ""  # the priming event, shown as an empty frame
    assert frames[0].http["sse"] == {"event": "message", "id": "p-0", "retry": 10}
    assert frames[0].http["headers"]["content-type"].startswith("text/event-stream")
    assert frames[1].http["headers"] == {}  # headers go with the first event only


@pytest.mark.anyio
@pytest.mark.http
async def test_every_exchange_is_traced_with_method_status_and_headers():
    async with served(Scripted({}).app()) as url:
        async with Client(http(url)) as client:
            await client.ping()
    shown = [(f.direction, f.http["method"], f.http["status"]) for f in client.trace]
    assert shown == [("c2s", "POST", None), ("s2c", "POST", 200), ("c2s", "POST", None), ("s2c", "POST", 202),
                     ("c2s", "POST", None), ("s2c", "POST", 200), ("c2s", "DELETE", None), ("s2c", "DELETE", 200)]
    request_headers = client.trace.frames[0].http["headers"]
    assert request_headers["Accept"] == "application/json, text/event-stream"
    assert "content-type" in client.trace.frames[1].http["headers"]


@pytest.mark.anyio
@pytest.mark.http
async def test_an_error_status_raises_http_status_error_with_status_and_body():
    async def broken(message, headers):
        return Response("upstream exploded", status_code=500, media_type="text/plain")

    async with served(Scripted({"tools/list": broken}).app()) as url:
        async with Client(http(url)) as client:
            with pytest.raises(HTTPStatusError) as caught:
                await client.list_tools()
    assert caught.value.status == 500 and caught.value.body == "upstream exploded"
    assert caught.value.headers["content-type"].startswith("text/plain")


@pytest.mark.anyio
@pytest.mark.http
async def test_a_refusal_that_names_the_request_fails_only_that_request():
    async def refuse(message, headers):
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32600, "message": "no"}},
                            status_code=400)

    async with served(Scripted({"tools/list": refuse}).app()) as url:
        async with Client(http(url)) as client:
            with pytest.raises(RemoteError) as caught:
                await client.list_tools()
            await client.ping()  # the connection is still fine
    assert caught.value.code == -32600


@pytest.mark.anyio
@pytest.mark.http
async def test_a_404_for_the_session_starts_one_new_session_and_a_second_404_is_raised():
    async def gone(message, headers):
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32600, "message": "gone"}},
                            status_code=404)

    scripted = Scripted({"ping": gone})
    async with served(scripted.app()) as url:
        transport = http(url)
        async with Client(transport) as client:
            with pytest.raises(SessionExpired, match="ended this session") as caught:
                await client.ping()
            assert caught.value.status == 404 and transport.session_id is None
    assert len(scripted.posts("initialize")) == 2 and len(scripted.posts("ping")) == 2  # one new session, once
    (first, _), (second, _) = scripted.posts("ping")
    assert "mcp-session-id" in first and "mcp-session-id" in second
    (opening, _), (again, _) = scripted.posts("initialize")
    assert "mcp-session-id" not in again  # a new session starts without the old id
    assert all(verb != "DELETE" for verb, _, _ in scripted.received)


@pytest.mark.anyio
@pytest.mark.http
async def test_a_stream_closed_before_its_response_is_resumed_with_last_event_id():
    pending: list[dict] = []

    async def call(message, headers):
        pending.append(message)
        return sse("id: ev-1\nretry: 200\ndata: \n\n")  # a priming event, then the stream ends

    async def resume(message, headers):
        assert headers["last-event-id"] == "ev-1"
        return sse("id: ev-2\ndata: " + result(pending[0], {"content": [{"type": "text", "text": "late"}]}) + "\n\n")

    scripted = Scripted({"tools/call": call, "GET": resume})
    async with served(scripted.app()) as url:
        async with Client(http(url)) as client:
            started = anyio.current_time()
            answer = await client.call_tool("slow", {})
            waited = anyio.current_time() - started
    assert answer.text == "late" and waited >= 0.2
    (verb, headers, _), = [r for r in scripted.received if r[0] == "GET"]
    assert headers["accept"] == "text/event-stream" and headers["mcp-session-id"] == "s-1"


@pytest.mark.anyio
@pytest.mark.http
async def test_listen_opens_the_get_stream_and_a_405_is_fine():
    scripted = Scripted({})
    async with served(scripted.app()) as url:
        async with Client(http(url, listen=True)) as client:
            await client.ping()
    verbs = [verb for verb, _, _ in scripted.received]
    assert verbs[:3] == ["POST", "POST", "GET"] and "DELETE" in verbs
    assert [f.http["status"] for f in client.trace if f.http["method"] == "GET"] == [None, 405]


@pytest.mark.anyio
@pytest.mark.http
async def test_a_server_request_on_the_get_stream_is_answered():
    async def listen(message, headers):
        return sse('data: {"jsonrpc":"2.0","id":"r1","method":"roots/list"}\n\n')

    scripted = Scripted({"GET": listen})
    async with served(scripted.app()) as url:
        async with Client(http(url, listen=True), roots=["file:///lab"]) as client:
            with anyio.fail_after(5):
                while not (answers := [json.loads(b) for v, _, b in scripted.received if v == "POST" and '"r1"' in b]):
                    await client.ping()  # the client answers server requests while it waits for its own
    assert answers == [{"jsonrpc": "2.0", "id": "r1", "result": {"roots": [{"uri": "file:///lab"}]}}]


@pytest.mark.anyio
@pytest.mark.http
async def test_nothing_listening_is_a_transport_error():
    from mcplab.server.streamable_http.process import bind

    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(TransportError, match="failed"):
        async with Client(http(f"http://127.0.0.1:{port}/mcp")):
            pass


@pytest.mark.anyio
@pytest.mark.http
async def test_a_transport_opens_once_and_closes_twice_safely():
    async with served(Scripted({}).app()) as url:
        transport = HTTPTransport(url)
        await transport.open()
        with pytest.raises(TransportError):
            await transport.open()
        await transport.close()
        await transport.close()
        with pytest.raises(TransportError):
            await transport.send_raw("{}")


@pytest.mark.anyio
@pytest.mark.http
async def test_a_message_goes_by_send_and_its_reply_comes_by_receive_with_no_never_wait_twins():
    async with served(Scripted({}).app()) as url, HTTPTransport(url) as transport:
        await transport.send(jsonrpc.Request(1, "ping"))
        assert await transport.receive() == jsonrpc.Response(1, {})
    assert not hasattr(transport, "send_nowait") and not hasattr(transport, "receive_nowait")

# --- the connection under it: httpx's own, for every URL ---------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8000/mcp",
    "http://localhost:8000/mcp",
    "https://127.0.0.1:8000/mcp",
    "http://mcp.example.org/mcp",   # another machine: the one case where the environment's proxy counts
])
async def test_every_url_is_reached_through_httpx_own_transport(url):
    transport = HTTPTransport(url)
    await transport.open()
    try:
        assert type(transport._client._transport) is httpx.AsyncHTTPTransport
    finally:
        await transport.close()


@pytest.mark.anyio
@pytest.mark.http
async def test_every_request_of_a_session_goes_over_one_kept_connection():
    peers: list[tuple[str, int]] = []
    app = Scripted({}).app()

    async def noting_the_peer(scope, receive, send):
        if scope["type"] == "http":
            peers.append(tuple(scope["client"]))
        await app(scope, receive, send)

    async with served(noting_the_peer) as url:
        async with Client(http(url)) as client:
            for _ in range(3):
                await client.ping()
    assert len(peers) == 6  # initialize, initialized, three pings, DELETE
    assert len(set(peers)) == 1, peers


async def _raw_server(reply: bytes, heads: list[bytes]):
    """A TCP server on 127.0.0.1 that reads one request head, keeps it, writes ``reply`` and hangs up."""
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        heads.append(head)
        length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        await reader.readexactly(int(length.group(1)) if length else 0)
        writer.write(reply)
        await writer.drain()
        writer.close()

    return await asyncio.start_server(answer, "127.0.0.1", 0)


PING_ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{}}'

POSTING = r"POST http://127\.0\.0\.1:\d+/mcp failed"
READING = r"reading the reply from http://127\.0\.0\.1:\d+/mcp failed"

BROKEN_REPLIES = [  # (what, the bytes the server sends before it hangs up, what the TransportError says)
    ("a body shorter than its Content-Length",
     b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n" + PING_ANSWER,
     READING + ": RemoteProtocolError"),
    ("not a byte", b"", POSTING + ": RemoteProtocolError"),
    ("a status line that is not HTTP", b"SMTP ready\r\n\r\n", POSTING + ": RemoteProtocolError"),
]


@pytest.mark.anyio
@pytest.mark.http
@pytest.mark.parametrize("what, reply, says", BROKEN_REPLIES, ids=[row[0] for row in BROKEN_REPLIES])
async def test_a_reply_broken_on_the_wire_is_a_transport_error_that_says_what_broke(what, reply, says):
    heads: list[bytes] = []
    server = await _raw_server(reply, heads)
    port = server.sockets[0].getsockname()[1]
    async with server, HTTPTransport(f"http://127.0.0.1:{port}/mcp") as transport:
        with pytest.raises(TransportError, match=says):
            await transport.send(jsonrpc.Request(1, "ping"))
    assert len(heads) == 1 and heads[0].startswith(b"POST /mcp HTTP/1.1\r\n")


@pytest.mark.anyio
@pytest.mark.http
async def test_a_server_elsewhere_is_reached_through_the_proxy_the_environment_names(monkeypatch):
    heads: list[bytes] = []
    reply = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
             % (len(PING_ANSWER), PING_ANSWER))
    proxy = await _raw_server(reply, heads)
    address = f"http://127.0.0.1:{proxy.sockets[0].getsockname()[1]}"
    for name in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, address)
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    async with proxy, HTTPTransport("http://mcp.example.org/mcp") as transport:
        await transport.send(jsonrpc.Request(1, "ping"))
        assert await transport.receive() == jsonrpc.Response(1, {})
    # a proxy is asked for the whole URL; the server's name was never looked up here
    assert len(heads) == 1 and heads[0].startswith(b"POST http://mcp.example.org/mcp HTTP/1.1\r\n")


# --- the lab 05 checks (mcplab/exercises/lab05.py) ----------------------------------------------------

def read_events_worked(body: str) -> list[dict]:
    messages, data = [], []
    for line in body.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            if data and "\n".join(data).strip():
                messages.append(json.loads("\n".join(data)))
            data = []
        elif not line.startswith(":") and line.partition(":")[0] == "data":
            value = line.partition(":")[2]
            data.append(value[1:] if value.startswith(" ") else value)
    return messages


def test_the_lab05_checks_pass_the_worked_answers():
    from mcplab import exercises

    headers = {"accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-SESSION-ID": exercises.SESSION_ID, "mcp-protocol-version": "2025-11-25"}
    replies = {"a": 202, "b": "json", "c": "sse", "d": 400, "e": 404, "f": 403, "g": 405, "h": 413}
    reading = {"endpoints": 2, "post_to": "/messages?session_id=5f2e", "result_on": exercises.OLD_CHOICES[1]}
    assert exercises.check_post_headers(headers)
    assert exercises.check_replies(replies)
    assert exercises.check_sse_reader(read_events_worked)
    assert exercises.check_rebinding(["allow", "refuse", "refuse", "refuse", "refuse"])
    assert exercises.check_old_transport(reading)


@pytest.mark.parametrize("check, answer, says", [
    ("check_post_headers", {"Accept": "application/json", "Content-Type": "application/json"}, "406"),
    ("check_post_headers", {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
     "Mcp-Session-Id"),
    ("check_replies", {"a": 200, "b": "json", "c": "sse", "d": 400, "e": 404, "f": 403, "g": 405, "h": 413},
     "(a)"),
    ("check_sse_reader", lambda body: [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")],
     "stream"),
    ("check_sse_reader", lambda body: 1 / 0, "ZeroDivisionError"),
    ("check_rebinding", ["allow"] * 5, "localhost:3000"),
    ("check_rebinding", ["allow", "allow", "refuse", "refuse", "refuse"], "localhost:3000"),
    ("check_rebinding", ["allow", "refuse", "allow", "refuse", "refuse"], "evil.example"),
    ("check_old_transport", {"endpoints": 1, "post_to": "/mcp", "result_on": "x"}, "URLs"),
])
def test_the_lab05_checks_explain_a_wrong_answer(check, answer, says):
    from mcplab import exercises

    feedback = getattr(exercises, check)(answer)
    assert not feedback and says in repr(feedback) and "hint:" in repr(feedback)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.http
@pytest.mark.subprocess
def test_event_streams_and_server_requests_work_on_asyncio_and_trio(backend):
    import sys

    from http_helpers import ROOT
    from mcplab.server.streamable_http import launch

    async def main(url: str) -> tuple[str, str, list]:
        steps: list = []
        answer = lambda params: {"action": "accept", "content": {"username": "ada", "email": "a@b.c"}}  # noqa: E731
        async with Client(http(url), elicitation=answer) as client:
            progress = await client.call_tool("test_tool_with_progress", on_progress=steps.append)
            asked = await client.call_tool("test_elicitation", {"message": "who?"})
        return progress.text, asked.text, steps

    with launch([sys.executable, str(ROOT / "servers" / "conformance.py")]) as server:
        progress, asked, steps = anyio.run(main, server.url, backend=backend)
    assert progress.startswith("Progress test completed") and [s["progress"] for s in steps] == [0, 50, 100]
    assert '"username": "ada"' in asked


def test_every_lab05_name_is_exported_from_the_exercises_package():
    from mcplab import exercises
    from mcplab.exercises import lab05

    for name in lab05.__all__:
        assert getattr(exercises, name) is getattr(lab05, name), f"{name} is shadowed by another lab's name"


@pytest.mark.anyio
async def test_a_proxy_in_the_environment_is_not_used_for_a_server_on_this_machine(monkeypatch):
    from mcplab import Client
    from mcplab.server.streamable_http import launch
    from mcplab.transports.http import http as http_transport

    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    with launch(["python", "servers/weather.py"]) as server:
        async with Client(http_transport(server.url), era="legacy") as client:
            assert not (await client.call_tool("get_weather", {"city": "Beijing"})).is_error
    assert "serving" in server.stderr()  # kept after stop() closed its files


# --- the bundled servers, for real: the standalone stream and a lost session ---------------------------------

def _launch(script: str, *flags: str):
    import sys

    from http_helpers import ROOT
    from mcplab.server.streamable_http import launch

    return launch([sys.executable, str(ROOT / "servers" / f"{script}.py"), *flags])


@pytest.mark.anyio
@pytest.mark.http
@pytest.mark.subprocess
async def test_over_legacy_http_a_subscription_hears_about_the_write_as_it_would_over_stdio(tmp_path):
    # The files server advertises resources.subscribe and listChanged: the client opens the session's
    # GET stream (2025-11-25 transports, "Listening for Messages from the Server"), and the updates a
    # write causes travel on it.
    (tmp_path / "notes.md").write_text("# Notes\n", encoding="utf-8")
    heard: list[str] = []
    with _launch("files", "--root", str(tmp_path), "--writable") as server:
        async with Client(http(server.url), on_notification=lambda n: heard.append(n.method)) as client:
            caps = client.server_capabilities["resources"]
            assert caps == {"subscribe": True, "listChanged": True}
            await client.subscribe("file:///notes.md")
            await client.call_tool("write_file", {"path": "notes.md", "content": "# Notes\n\nMore.\n"})
            await client.call_tool("write_file", {"path": "new.md", "content": "new\n"})
            with anyio.fail_after(5):
                while not {"notifications/resources/updated", "notifications/resources/list_changed"} <= set(heard):
                    await client.ping()  # notifications are read while the client waits for a reply
        gets = [f for f in client.trace if f.channel == "http" and (f.http or {}).get("method") == "GET"]
        assert gets[0].direction == "c2s" and gets[1].http["status"] == 200
        updated = [f.message for f in client.trace if getattr(f.message, "method", "") == "notifications/resources/updated"]
        assert updated[0].params == {"uri": "file:///notes.md"}


@pytest.mark.anyio
@pytest.mark.http
async def test_the_client_opens_no_get_stream_when_the_server_advertises_nothing_to_carry():
    scripted = Scripted({})  # its capabilities: {"tools": {}}, no listChanged, no subscribe
    async with served(scripted.app()) as url:
        async with Client(http(url)) as client:
            await client.ping()
    assert "GET" not in [verb for verb, _, _ in scripted.received]


@pytest.mark.anyio
@pytest.mark.http
@pytest.mark.subprocess
async def test_after_a_404_on_its_session_the_client_starts_a_new_session_and_says_so():
    # 2025-11-25 transports, session management: on 404 for a request with a session id the client
    # MUST start a new session with a fresh InitializeRequest, without the old id.
    import httpx

    with _launch("weather") as server:
        transport = http(server.url)
        async with Client(transport) as client:
            await client.ping()
            old = transport.session_id
            ended = httpx.delete(server.url, headers={"Mcp-Session-Id": old, "MCP-Protocol-Version": "2025-11-25"})
            assert ended.status_code == 204
            result = await client.call_tool("get_weather", {"city": "Paris"})
            assert result.text.startswith("Paris:")
            assert transport.session_id not in (None, old)
        notes = [f.raw for f in client.trace if f.channel == "note"]
        assert any("404" in note and "initialize" in note for note in notes), notes
        posted = [f.message.method for f in client.trace if f.direction == "c2s" and hasattr(f.message, "method")]
        assert posted.count("initialize") == 2 and posted[-1] == "tools/call"
        refused = [f for f in client.trace if f.direction == "s2c" and (f.http or {}).get("status") == 404]
        assert len(refused) == 1
