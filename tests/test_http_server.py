"""The Streamable HTTP runner (mcplab/server/streamable_http/app.py): sessions, JSON or SSE replies, and every refusal.

Most tests serve a small toolkit server in this process (uvicorn on 127.0.0.1:0) and talk raw HTTP to
it with httpx, so each header and status is visible; the last ones start the bundled servers as child
processes, the way students and the conformance suite do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import anyio
import httpx
import pytest

from http_helpers import (
    ACCEPT_BOTH, ROOT, Session, initialize, is_sse, modern_headers, modern_request, request, served, sse_messages,
)
from mcplab import Client
from mcplab.wire.errors import INVALID_REQUEST, PARSE_ERROR
from mcplab.server import Context, Server
from mcplab.server.streamable_http.app import MAX_BODY, hostname
from mcplab.server.streamable_http import create_app, launch
from mcplab.transports.http import http

pytestmark = [pytest.mark.anyio, pytest.mark.http]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn serves on asyncio, in the same loop as the test


def toy_server() -> Server:
    server = Server("toy", "1.0")

    @server.tool
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @server.tool
    async def count(ctx: Context, n: int = 3) -> str:
        """Count to n, reporting progress."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, total=n)
        return f"counted to {n}"

    @server.tool
    async def ask(ctx: Context) -> str:
        """Ask the user a question."""
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hello {answer.get('content', {}).get('name')}"

    @server.tool
    async def nap(seconds: float) -> str:
        """Sleep, then answer."""
        await anyio.sleep(seconds)
        return "rested"

    return server


@pytest.fixture
async def url():
    async with served(create_app(toy_server())) as address:
        yield address


@pytest.fixture
async def client():
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


async def opened(client: httpx.AsyncClient, url: str, version: str = "2025-11-25", **caps) -> Session:
    session = Session(client, url)
    await session.open(version, **caps)
    return session


# --- sessions -----------------------------------------------------------------------------------------

async def test_initialize_answers_json_and_mints_a_visible_ascii_session_id(client, url):
    response = await client.post(url, json=initialize(), headers=ACCEPT_BOTH)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    session_id = response.headers["mcp-session-id"]
    assert len(session_id) >= 32 and all(0x21 <= ord(c) <= 0x7E for c in session_id)
    assert response.json()["result"]["serverInfo"]["name"] == "toy"


async def test_every_initialize_starts_a_new_session(client, url):
    first = await client.post(url, json=initialize(), headers=ACCEPT_BOTH)
    second = await client.post(url, json=initialize(), headers=ACCEPT_BOTH)
    assert first.headers["mcp-session-id"] != second.headers["mcp-session-id"]


async def test_a_refused_initialize_keeps_no_session(client, url):
    bad = {**initialize(), "params": {"capabilities": {}}}  # no protocolVersion
    response = await client.post(url, json=bad, headers=ACCEPT_BOTH)
    assert response.status_code == 200 and "error" in response.json()
    assert "mcp-session-id" not in response.headers


async def test_notifications_and_responses_get_202_and_no_body(client, url):
    session = await opened(client, url)
    note = await session.post({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    stray = await session.post({"jsonrpc": "2.0", "id": 99, "result": {}})  # answers nothing: ignored
    assert (note.status_code, note.content) == (202, b"")
    assert (stray.status_code, stray.content) == (202, b"")


async def test_a_request_without_a_session_gets_400_with_its_id(client, url):
    response = await client.post(url, json=request("tools/list", 7), headers=ACCEPT_BOTH)
    assert response.status_code == 400
    assert response.json()["id"] == 7 and response.json()["error"]["code"] == INVALID_REQUEST


async def test_an_unknown_session_gets_404(client, url):
    response = await client.post(url, json=request("ping", 2), headers={**ACCEPT_BOTH, "Mcp-Session-Id": "nope"})
    assert response.status_code == 404 and response.json()["error"]["code"] == INVALID_REQUEST


async def test_delete_ends_the_session_and_its_id_then_gets_404(client, url):
    session = await opened(client, url)
    assert (await session.call("ping", 2))["result"] == {}
    deleted = await client.delete(url, headers=session.headers())
    assert deleted.status_code == 204
    assert (await session.post(request("ping", 3))).status_code == 404
    assert (await client.delete(url, headers=session.headers())).status_code == 404
    assert (await client.delete(url, headers=ACCEPT_BOTH)).status_code == 400  # no session header at all


async def test_sessions_beyond_the_limit_end_the_least_recently_used():
    app = create_app(toy_server())
    app.state.endpoint.max_sessions = 2
    async with served(app) as url, httpx.AsyncClient(timeout=10) as client:
        first, second = await opened(client, url), await opened(client, url)
        await first.call("ping", 2)  # first is now the most recently used
        await opened(client, url)
        assert (await first.post(request("ping", 3))).status_code == 200
        assert (await second.post(request("ping", 3))).status_code == 404


# --- JSON or SSE --------------------------------------------------------------------------------------

async def test_a_plain_result_comes_back_as_json(client, url):
    session = await opened(client, url)
    response = await session.post(request("tools/call", 2, {"name": "echo", "arguments": {"text": "你好"}}))
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["content"][0]["text"] == "你好"


async def test_progress_turns_the_reply_into_an_event_stream_ending_with_the_result(client, url):
    session = await opened(client, url)
    params = {"name": "count", "arguments": {"n": 3}, "_meta": {"progressToken": "t"}}
    response = await session.post(request("tools/call", 2, params))
    assert is_sse(response)
    # A 2025-11-25 stream opens with a priming event (an id, empty data); then one event per message.
    assert response.text.startswith("id: 1\ndata: \n\nevent: message\ndata: ")
    messages = sse_messages(response.text)
    assert [m.get("method") for m in messages] == ["notifications/progress"] * 3 + [None]
    assert [m["params"]["progress"] for m in messages[:3]] == [1, 2, 3]
    assert messages[-1] == {"jsonrpc": "2.0", "id": 2, "result": {
        "content": [{"type": "text", "text": "counted to 3"}], "isError": False}}


async def test_without_a_progress_token_the_same_tool_answers_json(client, url):
    session = await opened(client, url)
    response = await session.post(request("tools/call", 2, {"name": "count", "arguments": {"n": 2}}))
    assert response.headers["content-type"] == "application/json"


async def test_a_server_request_travels_on_the_stream_and_its_answer_comes_back_as_a_post(client, url):
    session = await opened(client, url, elicitation={})
    async with client.stream("POST", session.url, headers=session.headers(),
                             content=json.dumps(request("tools/call", 5, {"name": "ask", "arguments": {}}))) as stream:
        assert is_sse(stream)
        lines = stream.aiter_lines()
        asked = None
        async for line in lines:
            if line.startswith("data:") and line[5:].strip():  # the priming event's data is empty
                asked = json.loads(line[5:])
                break
        assert asked["method"] == "elicitation/create" and asked["params"]["message"] == "Name?"
        answer = await session.post({"jsonrpc": "2.0", "id": asked["id"],
                                     "result": {"action": "accept", "content": {"name": "Ada"}}})
        assert answer.status_code == 202
        rest = [json.loads(line[5:]) async for line in lines if line.startswith("data:")]
    assert rest == [{"jsonrpc": "2.0", "id": 5, "result": {"content": [{"type": "text", "text": "hello Ada"}],
                                                            "isError": False}}]


async def test_a_cancelled_request_ends_its_stream_without_a_response(client, url):
    session = await opened(client, url)

    async def cancel_soon() -> None:
        await anyio.sleep(0.2)
        await session.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}})

    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_soon)
        with anyio.fail_after(5):
            response = await session.post(request("tools/call", 4, {"name": "nap", "arguments": {"seconds": 30}}))
    assert response.status_code == 200 and is_sse(response) and sse_messages(response.text) == []


async def test_a_client_that_disconnects_has_not_cancelled_its_request(client, url):
    app_session = await opened(client, url)
    with pytest.raises(httpx.ReadTimeout):
        await app_session.client.post(app_session.url, headers=app_session.headers(), timeout=0.2,
                                      content=json.dumps(request("tools/call", 4, {"name": "nap",
                                                                                    "arguments": {"seconds": 0.5}})))
    # The tool still runs in the session (spec: a disconnect is not a cancellation); its id is busy.
    busy = await app_session.call("tools/call", 4, {"name": "echo", "arguments": {"text": "x"}})
    assert busy["error"]["code"] == INVALID_REQUEST and "still running" in busy["error"]["message"]


async def test_requests_of_one_session_run_side_by_side(client, url):
    session = await opened(client, url)
    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        for i in range(5):
            tg.start_soon(session.call, "tools/call", 10 + i, {"name": "nap", "arguments": {"seconds": 0.3}})
    assert time.monotonic() - started < 1.2


async def test_a_2025_03_26_session_may_post_a_batch_and_gets_one_json_array(client, url):
    session = await opened(client, url, "2025-03-26")
    batch = [request("ping", 2), {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
             request("tools/call", 3, {"name": "echo", "arguments": {"text": "b"}}), {"jsonrpc": "2.0"}]
    response = await session.post(batch)
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    replies = response.json()
    assert [r.get("id") for r in replies] == [2, 3, None]
    assert replies[1]["result"]["content"][0]["text"] == "b" and replies[2]["error"]["code"] == INVALID_REQUEST
    only_notes = await session.post([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}])
    assert only_notes.status_code == 202


async def test_a_batch_in_any_later_revision_is_refused(client, url):
    session = await opened(client, url, "2025-06-18")
    response = await session.post([request("ping", 2)])
    assert response.status_code == 400 and response.json()["error"]["code"] == INVALID_REQUEST


# --- the protocol version header ----------------------------------------------------------------------

async def test_a_protocol_version_header_that_disagrees_with_the_session_gets_400(client, url):
    session = await opened(client, url, "2025-06-18")
    for value in ("2025-11-25", "banana"):
        response = await session.post(request("ping", 3), **{"MCP-Protocol-Version": value})
        assert response.status_code == 400
        assert response.json()["id"] == 3 and "2025-06-18" in response.json()["error"]["message"]


async def test_a_missing_protocol_version_header_falls_back_to_the_session_version(client, url):
    session = await opened(client, url, "2025-06-18")
    headers = session.headers()
    del headers["MCP-Protocol-Version"]
    response = await client.post(url, json=request("ping", 3), headers=headers)
    assert response.status_code == 200 and response.json()["result"] == {}


async def test_before_2025_06_18_the_protocol_version_header_is_not_checked(client, url):
    session = await opened(client, url, "2025-03-26")
    response = await session.post(request("ping", 3), **{"MCP-Protocol-Version": "2025-11-25"})
    assert response.status_code == 200


async def test_a_modern_request_on_the_same_url_is_served_without_a_session(client, url):
    await opened(client, url)  # a legacy session is open beside it
    body = modern_request("server/discover", 1)
    response = await client.post(url, json=body, headers=modern_headers(body))
    assert response.status_code == 200 and "mcp-session-id" not in response.headers
    result = response.json()["result"]
    assert result["resultType"] == "complete" and result["supportedVersions"][0] == "2026-07-28"


# --- refusals: each its status, a JSON-RPC error body, and the server keeps serving --------------------

INITIALIZE = json.dumps(initialize())
REFUSALS = [
    # (what, HTTP method, extra headers, body, status, JSON-RPC code)
    ("a foreign Host (DNS rebinding)", "POST", {"Host": "evil.example.com"}, INITIALIZE, 403, INVALID_REQUEST),
    ("a foreign Origin", "POST", {"Origin": "http://evil.example.com"}, INITIALIZE, 403, INVALID_REQUEST),
    ("the Origin of a sandboxed page", "POST", {"Origin": "null"}, INITIALIZE, 403, INVALID_REQUEST),
    ("GET without a session", "GET", {"Accept": "text/event-stream"}, "", 400, INVALID_REQUEST),
    ("PUT", "PUT", {}, INITIALIZE, 405, INVALID_REQUEST),
    ("Accept without SSE", "POST", {"Accept": "application/json"}, INITIALIZE, 406, INVALID_REQUEST),
    ("Accept without JSON", "POST", {"Accept": "text/event-stream"}, INITIALIZE, 406, INVALID_REQUEST),
    ("Content-Type text/plain", "POST", {"Content-Type": "text/plain"}, INITIALIZE, 415, INVALID_REQUEST),
    ("malformed JSON", "POST", {}, '{"jsonrpc": "2.0", "id": 1, "method": ', 400, PARSE_ERROR),
    ("bytes that are not UTF-8", "POST", {}, b"\xff\xfe{}", 400, PARSE_ERROR),
    ("JSON that is not JSON-RPC", "POST", {}, '{"hello": "world"}', 400, INVALID_REQUEST),
    ("a batch", "POST", {}, json.dumps([initialize()]), 400, INVALID_REQUEST),
    ("a body over 4 MiB", "POST", {}, b" " * (MAX_BODY + 1), 413, INVALID_REQUEST),
]


@pytest.mark.parametrize("what, verb, headers, body, status, code", REFUSALS, ids=[r[0] for r in REFUSALS])
async def test_each_refusal_has_its_status_and_a_json_rpc_error_and_the_server_keeps_serving(
        client, url, what, verb, headers, body, status, code):
    session = await opened(client, url)
    response = await client.request(verb, url, content=body, headers={**ACCEPT_BOTH, **headers})
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()
    assert error["jsonrpc"] == "2.0" and error["error"]["code"] == code and error["error"]["message"]
    if status == 405:
        assert response.headers["allow"] == "GET, POST, DELETE"
    assert (await session.call("ping", 50))["result"] == {}


async def test_a_chunked_body_over_4_mib_is_refused_as_it_arrives(client, url):
    async def chunks():
        for _ in range(5):
            yield b" " * (1 << 20)

    response = await client.post(url, content=chunks(), headers=ACCEPT_BOTH)
    assert response.status_code == 413


async def test_a_body_just_under_the_limit_is_read(client, url):
    session = await opened(client, url)
    text = "x" * (MAX_BODY - 200)
    reply = await session.call("tools/call", 2, {"name": "echo", "arguments": {"text": text}})
    assert reply["result"]["content"][0]["text"] == text


@pytest.mark.parametrize("origin, status", [
    ("http://127.0.0.1:{port}", 200), ("http://localhost:{port}", 403), ("http://[::1]:{port}", 403),
    ("http://127.0.0.1:8888", 403), ("http://localhost:3000", 403), ("https://[::1]", 403),
    ("https://127.0.0.1:{port}", 403)])
async def test_only_a_page_of_this_very_origin_may_drive_the_server(client, url, origin, status):
    origin = origin.format(port=url.split(":")[2].split("/")[0])
    response = await client.post(url, json=initialize(), headers={**ACCEPT_BOTH, "Origin": origin})
    assert response.status_code == status, response.text


async def test_a_whole_origin_can_be_allowed_as_it_is():
    app = create_app(toy_server(), allowed_origins=["127.0.0.1", "https://lab.example.org"])
    async with served(app) as url, httpx.AsyncClient(timeout=10) as client:
        listed = await client.post(url, json=initialize(), headers={**ACCEPT_BOTH, "Origin": "https://lab.example.org"})
        other = await client.post(url, json=initialize(), headers={**ACCEPT_BOTH, "Origin": "https://lab.example.com"})
    assert (listed.status_code, other.status_code) == (200, 403)


async def test_the_allow_list_follows_the_bound_host_and_can_be_extended():
    app = create_app(toy_server(), host="0.0.0.0", allowed_hosts=["mcp.lab.internal"])
    async with served(app) as url, httpx.AsyncClient(timeout=10) as client:
        allowed = await client.post(url, json=initialize(), headers={**ACCEPT_BOTH, "Host": "mcp.lab.internal:80"})
        loopback = await client.post(url, json=initialize(), headers=ACCEPT_BOTH)
    assert allowed.status_code == 200 and loopback.status_code == 403  # an explicit list replaces the default


@pytest.mark.parametrize("value, name", [("127.0.0.1:8000", "127.0.0.1"), ("[::1]:80", "::1"),
                                         ("LOCALHOST", "localhost"), ("http://evil.example:1", "evil.example")])
def test_hostname_reads_host_headers_and_origins(value, name):
    assert hostname(value) == name


# --- the bundled servers as child processes ------------------------------------------------------------

pytest_subprocess = pytest.mark.subprocess


@pytest_subprocess
@pytest.mark.parametrize("script", ["weather", "files", "conformance"])
async def test_each_bundled_server_serves_http_on_loopback_and_writes_nothing_to_stdout(script):
    with launch([sys.executable, str(ROOT / "servers" / f"{script}.py")]) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
        async with Client(http(server.url)) as client:
            assert await client.list_tools()
            await client.ping()
        assert server.stdout() == ""
        assert server.stderr().startswith("mcplab: serving")


@pytest_subprocess
def test_the_server_exits_when_its_stdin_closes():
    server = launch([sys.executable, str(ROOT / "servers" / "weather.py")])
    started = time.monotonic()
    server.process.stdin.close()
    assert server.process.wait(5) == 0
    assert time.monotonic() - started < 2


@pytest_subprocess
def test_a_server_dies_with_the_process_that_launched_it_even_by_sigkill():
    # What happens to a notebook kernel under nbval: SIGKILL, so no cleanup code ever runs.
    parent = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from mcplab.server.streamable_http import launch\n"
        f"server = launch([sys.executable, {str(ROOT / 'servers' / 'weather.py')!r}])\n"
        "print(server.process.pid, flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait(5)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and os.path.exists(f"/proc/{child}") and not _zombie(child):
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{child}") or _zombie(child), "the server outlived its parent"


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest_subprocess
def test_the_stdin_watchdog_can_be_switched_off():
    server = launch([sys.executable, str(ROOT / "servers" / "weather.py")], env={"MCPLAB_HTTP_WATCHDOG": "off"})
    server.process.stdin.close()
    with pytest.raises(subprocess.TimeoutExpired):
        server.process.wait(0.5)
    server.process.terminate()
    assert server.process.wait(5) is not None


@pytest_subprocess
def test_port_0_picks_a_free_port_and_prints_the_url_on_stderr():
    process = subprocess.run([sys.executable, str(ROOT / "servers" / "weather.py"), "--http", "--port", "0"],
                             input=b"", capture_output=True, timeout=20)
    assert process.stdout == b""
    assert process.stderr.decode().startswith("mcplab: serving weather at http://127.0.0.1:")
    assert ":0/" not in process.stderr.decode()


@pytest_subprocess
async def test_fifty_concurrent_sessions_each_make_twenty_calls():
    with launch([sys.executable, str(ROOT / "servers" / "weather.py")]) as server:
        results: list[str] = []

        async def one_session(i: int) -> None:
            city = ["Beijing", "Tokyo", "Paris", "London", "Cairo"][i % 5]
            async with Client(http(server.url), timeout=30) as client:
                for _ in range(20):
                    results.append((await client.call_tool("get_weather", {"city": city})).text)

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for i in range(50):
                    tg.start_soon(one_session, i)
        assert len(results) == 1000 and all(": " in text and "°C" in text for text in results)
        assert "Traceback" not in server.stderr()
        async with Client(http(server.url)) as client:  # and it still serves
            await client.ping()



# --- error replies without a readable id, per revision ----------------------------------------------------

@pytest.mark.parametrize("what, verb, headers, body, status, code", REFUSALS, ids=[r[0] for r in REFUSALS])
async def test_a_refusal_outside_any_session_leaves_the_id_out(client, url, spec_schema, what, verb, headers, body,
                                                               status, code):
    # Nothing was agreed yet, so the newest revisions decide: 2025-11-25 and 2026-07-28 make an error's
    # id optional and never null (transports: "a JSON-RPC error response that has no id").
    from server_helpers import check_definition

    schemas = [spec_schema(v) and v for v in ("2025-11-25", "2026-07-28")]
    response = await client.request(verb, url, content=body, headers={**ACCEPT_BOTH, **headers})
    error = response.json()
    assert response.status_code >= 400 and "id" not in error, error
    for version in schemas:
        check_definition(version, "JSONRPCErrorResponse", error)


async def test_inside_a_2025_06_18_session_an_unreadable_body_gets_the_json_rpc_null_id(client, url):
    session = await opened(client, url, "2025-06-18")
    response = await session.post("not json")
    assert response.status_code == 400 and response.json()["id"] is None
    latest = await opened(client, url, "2025-11-25")
    response = await latest.post("not json")
    assert response.status_code == 400 and "id" not in response.json()


# --- MCP-Protocol-Version: an invalid or unsupported value is refused in every session ------------------------

@pytest.mark.parametrize("session_version", ["2025-03-26", "2025-06-18", "2025-11-25"])
@pytest.mark.parametrize("value", ["banana", "2099-01-01", "", "2026-07-28"])
async def test_an_invalid_or_unsupported_protocol_version_header_gets_400_in_any_session(client, url, session_version,
                                                                                        value):
    # 2025-11-25 transports: "If the server receives a request with an invalid or unsupported
    # MCP-Protocol-Version, it MUST respond with 400 Bad Request" (2026-07-28 has no sessions).
    session = await opened(client, url, session_version)
    response = await session.post(request("ping", 3), **{"MCP-Protocol-Version": value})
    assert response.status_code == 400, response.text
    assert response.json()["id"] == 3 and response.json()["error"]["code"] == INVALID_REQUEST
    assert (await session.call("ping", 4))["result"] == {}


# --- the priming event (2025-11-25) ---------------------------------------------------------------------------

def sse_events(body: str) -> list[dict[str, str]]:
    """Each event of an SSE body as {field: value} (comments dropped)."""
    events = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) if ": " in line else (line.rstrip(":"), "")
                      for line in block.split("\n") if line and not line.startswith(":"))
        if fields:
            events.append(fields)
    return events


async def test_a_2025_11_25_event_stream_opens_with_a_priming_event(client, url):
    # 2025-11-25 transports: the server SHOULD immediately send an event with an id and empty data.
    session = await opened(client, url, "2025-11-25")
    params = {"name": "count", "arguments": {"n": 2}, "_meta": {"progressToken": "t"}}
    response = await session.post(request("tools/call", 2, params))
    events = sse_events(response.text)
    assert events[0]["data"] == "" and events[0]["id"], events[0]
    assert [json.loads(e["data"]).get("method") for e in events[1:]] == ["notifications/progress"] * 2 + [None]
    again = sse_events((await session.post(request("tools/call", 3, params))).text)
    assert again[0]["id"] != events[0]["id"]  # ids are unique across the streams of a session


async def test_before_2025_11_25_no_priming_event_is_sent(client, url):
    session = await opened(client, url, "2025-06-18")
    params = {"name": "count", "arguments": {"n": 1}, "_meta": {"progressToken": "t"}}
    events = sse_events((await session.post(request("tools/call", 2, params))).text)
    assert all(e.get("data") for e in events) and "id" not in events[0]


# --- the standalone GET stream of a legacy session ---------------------------------------------------------------

def growing_server() -> Server:
    server = toy_server()

    @server.tool
    def grow(name: str) -> str:
        """Add a tool called name (every connected client hears tools/list_changed)."""
        server.tool(lambda: name, name=name, description="added at run time")
        return f"added {name}"

    return server


async def next_message(lines) -> dict:
    async for line in lines:
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    raise AssertionError("the stream ended")


async def test_get_opens_the_sessions_standalone_stream_which_carries_list_changes():
    async with served(create_app(growing_server())) as url, httpx.AsyncClient(timeout=10) as client:
        session = await opened(client, url, "2025-11-25")
        headers = {**session.headers(), "Accept": "text/event-stream"}
        async with client.stream("GET", url, headers=headers) as stream:
            assert stream.status_code == 200 and is_sse(stream)
            second = await client.get(url, headers=headers)  # one standalone stream per session
            assert second.status_code == 409 and second.json()["error"]["code"] == INVALID_REQUEST
            lines = stream.aiter_lines()
            reply = await session.call("tools/call", 2, {"name": "grow", "arguments": {"name": "sprout"}})
            assert reply["result"]["content"][0]["text"] == "added sprout"
            with anyio.fail_after(5):
                heard = await next_message(lines)
            assert heard == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            deleted = await client.delete(url, headers=session.headers())
            assert deleted.status_code == 204
            with anyio.fail_after(5):  # ending the session ends its stream
                rest = [line async for line in lines]
            assert not [line for line in rest if line.startswith("data:") and line[5:].strip()]


GET_REFUSALS = [
    # (what, extra headers, with the session?, status)
    ("no session id", {}, False, 400),
    ("an unknown session", {"Mcp-Session-Id": "nope"}, False, 404),
    ("Accept without text/event-stream", {"Accept": "application/json"}, True, 406),
    ("a protocol version the session did not agree", {"MCP-Protocol-Version": "2025-06-18"}, True, 400),
]


@pytest.mark.parametrize("what, extra, with_session, status", GET_REFUSALS, ids=[g[0] for g in GET_REFUSALS])
async def test_a_get_that_cannot_open_a_stream_is_refused(client, url, what, extra, with_session, status):
    session = await opened(client, url, "2025-11-25")
    headers = {**(session.headers() if with_session else {}), "Accept": "text/event-stream", **extra}
    response = await client.get(url, headers=headers)
    assert response.status_code == status and response.json()["error"]["code"] == INVALID_REQUEST
    assert (await session.call("ping", 9))["result"] == {}


async def test_a_modern_only_server_still_answers_get_with_405():
    async with served(create_app(toy_server(), era="modern")) as url, httpx.AsyncClient(timeout=10) as client:
        response = await client.get(url, headers={"Accept": "text/event-stream"})
    assert response.status_code == 405 and response.headers["allow"] == "POST"


@pytest_subprocess
def test_an_idle_connection_outlasts_an_httpx_client_s_own_keep_alive():
    """httpx gives up an idle connection after 5 s. Were the server to close it at that same moment, a request
    sent on it just then would meet a closing socket (ReadError, once in twenty tries at 5 s before this limit
    existed): the server keeps an idle connection longer, so the client is the one that closes it."""
    from redteam_helpers import RawHTTP

    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "idle", "version": "0"}}}
    with launch([sys.executable, str(ROOT / "servers" / "weather.py")]) as server, RawHTTP(server.url) as wire:
        wire.post(json.dumps(initialize).encode())
        status, _, body = wire.response()
        assert status == 200 and json.loads(body)["result"]["protocolVersion"] == "2025-11-25"
        answered = time.monotonic()
        assert wire.closed_by_server(wait=30), "the server kept an idle connection open for 30 s"
        idle = time.monotonic() - answered
    assert idle > httpx.Limits().keepalive_expiry + 1, f"the server closed an idle connection after {idle:.1f} s"
