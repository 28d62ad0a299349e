"""mcplab.transports.asgi: httpx calling the weather server's real ASGI app in this process, no socket.

What the page's Streamable HTTP rests on: the reply comes back at ``http.response.start`` with the
app's status and headers, an event stream is read event by event while the app is still answering,
a reply closed early is a disconnect the app hears, and an app that fails is a 500 or a broken body,
never a wait without end. The order is proved by events: the weather server's elicitation question
arrives on the stream of a call that cannot finish before the answer is POSTed.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import anyio
import httpx
import pytest

from mcplab.server.runner import load
from mcplab.server.streamable_http import create_app
from mcplab.transports import asgi
from mcplab.transports.background import Background

ROOT = Path(__file__).resolve().parent.parent
WEATHER = ROOT / "servers" / "weather.py"
URL = "http://127.0.0.1:8000/mcp"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LEGACY = "2025-11-25"
HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": LEGACY, "capabilities": {"elicitation": {}},
                    "clientInfo": {"name": "test", "version": "1"}}}

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@contextlib.asynccontextmanager
async def weather_app():
    """The weather server's Streamable HTTP app, its lifespan running, behind a driver: an httpx client.
    (Not an async fixture: the test runner in Pyodide, where these tests run too, cannot run one.)"""
    server, flags = load(WEATHER, [])
    app = create_app(server, era=flags.era)
    started, stopping = anyio.Event(), anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(asgi.run_lifespan, app, started, stopping)
        await started.wait()
        driver = asgi.ASGIDriver(app)
        async with httpx.AsyncClient(transport=driver) as client:
            yield client
        stopping.set()


async def session(client: httpx.AsyncClient) -> dict[str, str]:
    reply = await client.post(URL, json=HELLO, headers=ACCEPT)
    inside = ACCEPT | {"Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY}
    assert (await client.post(URL, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                              headers=inside)).status_code == 202
    return inside


def events(text: str) -> list[dict]:
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]


async def test_the_reply_carries_the_apps_own_status_and_headers():
    async with weather_app() as weather:
        reply = await weather.post(URL, json=HELLO, headers=ACCEPT)
        assert reply.status_code == 200
        assert len(reply.headers["mcp-session-id"]) >= 16
        assert reply.headers["content-type"].startswith(("application/json", "text/event-stream"))
        refused = await weather.post(URL, json=HELLO, headers=ACCEPT | {"Origin": "http://evil.example"})
        assert refused.status_code == 403 and refused.json()["error"]["code"] == -32600
        no_sse = await weather.post(URL, content=b"{}", headers=ACCEPT | {"Accept": "application/json"})
        assert no_sse.status_code == 406
        assert (await weather.get(URL, headers={"Accept": "text/event-stream"})).status_code == 400


async def test_an_sse_event_is_read_before_the_app_has_finished_its_reply():
    async with weather_app() as weather:
        inside = await session(weather)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "get_forecast", "arguments": {"city": "China", "days": 1}}}
        # A driver that buffered the body would wait here for ever (the app waits for the answer): sized for a
        # loaded machine, the deadline turns that wait into a failure.
        with anyio.fail_after(30):
            question, rest = await ask_and_answer(weather, call, inside)
        result = [e for e in events(rest) if e.get("id") == 2]
        assert result and "result" in result[0], rest


async def ask_and_answer(weather: httpx.AsyncClient, call: dict, inside: dict) -> tuple[dict, str]:
    async with weather.stream("POST", URL, json=call, headers=inside) as reply:
        assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
        lines = reply.aiter_lines()
        question = None
        async for line in lines:
            if line.startswith("data:") and line[5:].strip():
                question = json.loads(line[5:])
                break
        # The call cannot have finished: it waits for the answer to this question, which is not sent yet.
        assert question["method"] == "elicitation/create"
        answer = {"jsonrpc": "2.0", "id": question["id"],
                  "result": {"action": "accept", "content": {"city": question["params"]["requestedSchema"]
                                                             ["properties"]["city"]["enum"][0]}}}
        assert (await weather.post(URL, json=answer, headers=inside)).status_code == 202
        rest = "\n".join([line async for line in lines])
    return question, rest


async def test_closing_a_reply_early_is_a_disconnect_the_app_hears_and_it_goes_on_serving():
    async with weather_app() as weather:
        inside = await session(weather)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "get_forecast", "arguments": {"city": "China", "days": 1}}}
        async with weather.stream("POST", URL, json=call, headers=inside) as reply:
            async for line in reply.aiter_lines():
                if line.startswith("data:") and line[5:].strip():
                    break  # the question came: leave without answering it
        # The disconnected request ends on the server; the next request is answered, with nothing left waiting.
        with anyio.fail_after(30):  # sized for a loaded machine: a hang, not a slow answer, would fire it
            ping = await weather.post(URL, json={"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers=inside)
        assert ping.status_code == 200 and ping.json() == {"jsonrpc": "2.0", "id": 3, "result": {}}


async def test_an_app_that_fails_before_its_reply_gives_500_and_one_that_fails_halfway_breaks_the_body():
    async def before(scope, receive, send):
        raise ValueError("no reply")

    async def halfway(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"half", "more_body": True})
        raise ValueError("and no more")

    async def silent(scope, receive, send):
        return None

    for app, status in ((before, 500), (silent, 500)):
        async with httpx.AsyncClient(transport=asgi.ASGIDriver(app)) as client:
            with anyio.fail_after(10):
                reply = await client.get(URL)
        assert reply.status_code == status and reply.text == "Internal Server Error"
    async with httpx.AsyncClient(transport=asgi.ASGIDriver(halfway)) as client:
        with anyio.fail_after(10):
            async with client.stream("GET", URL) as reply:
                assert reply.status_code == 200
                chunks = []
                with pytest.raises(httpx.RemoteProtocolError, match="ValueError"):
                    async for chunk in reply.aiter_bytes():
                        chunks.append(chunk)
    assert chunks == [b"half"]


async def test_the_app_sees_the_request_as_sent():
    seen = {}

    async def echo(scope, receive, send):
        seen.update(scope)
        body = (await receive())["body"]
        await send({"type": "http.response.start", "status": 201, "headers": [(b"x-echo", body)]})
        await send({"type": "http.response.body", "body": body})

    async with httpx.AsyncClient(transport=asgi.ASGIDriver(echo)) as client:
        reply = await client.post(URL + "?a=1", content=b"hello", headers={"Mcp-Method": "ping"})
    assert (reply.status_code, reply.headers["x-echo"], reply.text) == (201, "hello", "hello")
    assert (seen["method"], seen["path"], seen["query_string"]) == ("POST", "/mcp", b"a=1")
    assert (b"mcp-method", b"ping") in seen["headers"] and (b"host", b"127.0.0.1:8000") in seen["headers"]


async def test_the_page_network_routes_by_origin_and_refuses_an_origin_nobody_listens_at():
    async def hello(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"hello"})

    tasks = Background()
    url = asgi.listen(asgi.ASGIDriver(hello, tasks=tasks))
    try:
        async with httpx.AsyncClient(transport=asgi.PageNetwork()) as client:
            assert (await client.get(url)).text == "hello"
            asgi.unlisten(url)
            with pytest.raises(httpx.ConnectError, match=r"nothing listens at http://127\.0\.0\.1:\d+ in this page"):
                await client.get(url)
    finally:
        asgi.unlisten(url)
        await tasks.aclose()


async def test_a_reply_that_does_not_come_within_the_clients_read_timeout_is_a_read_timeout_and_a_disconnect():
    left = anyio.Event()

    async def mute(scope, receive, send):
        await receive()  # the request
        assert (await receive())["type"] == "http.disconnect"  # nothing is answered until the client leaves
        left.set()

    # The client's own read timeout (what httpx enforces over a socket) is the deadline under test; the
    # outer one, sized for a loaded machine, only turns a hang into a failure.
    async with httpx.AsyncClient(transport=asgi.ASGIDriver(mute), timeout=0.2) as client:
        with anyio.fail_after(30):
            with pytest.raises(httpx.ReadTimeout, match=r"no reply within 0\.2 s"):
                await client.get(URL)
            await left.wait()
