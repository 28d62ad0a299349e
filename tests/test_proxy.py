"""mcplab.ecosystem.proxy: requests go to the backends in turn with no stickiness, headers and bodies pass both
ways (hop-by-hop headers excepted), event streams are not held back, an unreachable backend is a 502,
and the child-process proxy exits when its stdin closes. In front of three weather servers, a legacy
session breaks and modern calls all succeed."""

from __future__ import annotations

import asyncio

import anyio
import httpx
import pytest

from http_helpers import served
from mcplab.ecosystem import proxy

pytestmark = [pytest.mark.anyio, pytest.mark.http]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the in-process proxy runs uvicorn on the asyncio loop


def named(name: str, seen: list | None = None):
    """A backend that answers every request with its name, and keeps what it received."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def endpoint(request):
        body = await request.body()
        if seen is not None:
            seen.append((request.method, request.url.path, request.url.query, dict(request.headers), body))
        return JSONResponse({"backend": name}, headers={"Mcp-Session-Id": f"session-of-{name}"})

    return Starlette(routes=[Route("/{path:path}", endpoint, methods=["GET", "POST", "DELETE"])])


def streaming(gate: anyio.Event):
    """A backend whose SSE reply sends one event, waits for ``gate``, then sends the last one."""
    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    async def events():
        yield b"event: message\ndata: first\n\n"
        with anyio.fail_after(5):
            await gate.wait()
        yield b"event: message\ndata: last\n\n"

    async def endpoint(request):
        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])])


async def test_requests_go_to_each_backend_in_turn():
    async with served(named("a")) as a, served(named("b")) as b, served(named("c")) as c:
        app = proxy.create_app([a, b, c])
        async with proxy.serving([a, b, c], app=app) as url, httpx.AsyncClient() as client:
            replies = [await client.post(url, json={}) for _ in range(7)]
    assert [r.json()["backend"] for r in replies] == ["a", "b", "c", "a", "b", "c", "a"]
    assert [r.headers[proxy.BACKEND_HEADER] for r in replies] == ["1", "2", "3", "1", "2", "3", "1"]
    assert app.state.routed == [1, 2, 3, 1, 2, 3, 1]


async def test_method_path_query_body_and_end_to_end_headers_pass_through():
    seen: list = []
    async with served(named("a", seen)) as a, proxy.serving([a]) as url, httpx.AsyncClient() as client:
        reply = await client.post(url + "?x=1", content=b'{"jsonrpc":"2.0"}',
                                  headers={"Mcp-Session-Id": "s-1", "Mcp-Method": "tools/call",
                                           "Connection": "keep-alive", "TE": "trailers"})
        deleted = await client.delete(url, headers={"Mcp-Session-Id": "s-1"})
    method, path, query, headers, body = seen[0]
    assert (method, path, query, body) == ("POST", "/mcp", "x=1", b'{"jsonrpc":"2.0"}')
    assert headers["mcp-session-id"] == "s-1" and headers["mcp-method"] == "tools/call"
    assert "te" not in headers                          # hop-by-hop: not forwarded
    assert headers["host"] == a.split("/")[2]           # the backend's own Host, which it allows
    assert reply.headers["mcp-session-id"] == "session-of-a"   # and back the other way
    assert reply.headers.get_list("server") == ["uvicorn"]     # once: the backend's, not a second one
    assert deleted.status_code == 200 and seen[1][0] == "DELETE"


async def test_an_event_stream_arrives_event_by_event():
    gate = anyio.Event()
    async with served(streaming(gate)) as a, proxy.serving([a]) as url, httpx.AsyncClient() as client:
        async with client.stream("POST", url, json={}) as reply:
            lines = reply.aiter_lines()
            with anyio.fail_after(5):  # the first event comes through while the backend still holds the last
                while (line := await lines.__anext__()) != "data: first":
                    pass
            gate.set()
            rest = [line async for line in lines]
    assert reply.headers["content-type"].startswith("text/event-stream")
    assert "data: last" in rest


async def test_an_unreachable_backend_is_a_502_and_the_next_one_still_answers():
    async with served(named("b")) as b:
        dead = "http://127.0.0.1:9/mcp"  # the discard port: nothing listens there
        async with proxy.serving([dead, b]) as url, httpx.AsyncClient() as client:
            first, second = await client.post(url, json={}), await client.post(url, json={})
    assert first.status_code == 502 and first.headers[proxy.BACKEND_HEADER] == "1"
    assert second.json() == {"backend": "b"}


def test_a_backend_must_be_an_http_url():
    with pytest.raises(ValueError, match="backend URL"):
        proxy.create_app(["127.0.0.1:8000"])
    with pytest.raises(ValueError, match="at least one"):
        proxy.create_app([])


@pytest.mark.subprocess
async def test_the_child_process_proxy_serves_and_exits_when_its_stdin_closes():
    async with served(named("a")) as a:
        child = await anyio.to_thread.run_sync(proxy.start, [a])
        try:
            async with httpx.AsyncClient() as client:
                reply = await client.post(child.url, json={})
            assert reply.json() == {"backend": "a"}
            assert child.stdout() == ""
        finally:
            code = await anyio.to_thread.run_sync(child.stop)
    assert code == 0


@pytest.mark.subprocess
async def test_behind_the_proxy_a_legacy_session_breaks_and_modern_calls_all_succeed():
    from mcplab import Client
    from mcplab.wire.errors import HTTPStatusError
    from mcplab.notebook.matrix import WEATHER
    from mcplab.server.streamable_http import launch
    from mcplab.transports.http import http

    backends = [await anyio.to_thread.run_sync(launch, ["python", str(WEATHER)]) for _ in range(3)]
    try:
        async with proxy.serving([b.url for b in backends]) as url:
            with pytest.raises(HTTPStatusError) as refused:
                async with Client(http(url), era="legacy"):
                    pass
            assert refused.value.status == 404  # initialize on backend 1, initialized on backend 2
            async with Client(http(url), era="modern") as client:
                results = [await client.call_tool("get_weather", {"city": "Beijing"}) for _ in range(4)]
            served_by = [f.http["headers"].get("x-backend") for f in client.trace if f.direction == "s2c"]
    finally:
        for backend in backends:
            backend.stop()
    assert all(r.text.startswith("Beijing: sunny") for r in results)
    assert len(set(served_by)) == 3  # every backend answered some of them


@pytest.mark.subprocess
async def test_behind_the_proxy_an_mrtr_retry_survives_without_state_and_fails_with_another_processes_state():
    from mcplab import Client
    from mcplab.wire.errors import RemoteError
    from mcplab.notebook.matrix import WEATHER
    from mcplab.transports.http import http

    fixtures = str(WEATHER.parent / "conformance.py")
    backends = await anyio.to_thread.run_sync(proxy.launch_all, [["python", str(WEATHER)]] * 2
                                              + [["python", fixtures]] * 2)

    def pick(params: dict) -> dict:  # answers any of the forms these tools show
        return {"action": "accept", "content": {"city": "Beijing", "ok": True}}

    try:
        weather = [b.url for b in backends[:2]]
        async with proxy.serving(weather) as url:  # discover → 1, round 1 → 2, the retry → 1
            async with Client(http(url), era="modern", elicitation=pick) as client:
                forecast = await client.call_tool("get_forecast", {"city": "China", "days": 1})
        assert forecast.structured["city"] == "Beijing"     # no requestState: any backend runs the retry

        async with proxy.serving([b.url for b in backends[2:]]) as url:
            async with Client(http(url), era="modern", elicitation=pick) as client:
                with pytest.raises(RemoteError) as refused:
                    await client.call_tool("test_input_required_result_request_state")
        assert refused.value.code == -32602 and "integrity" in refused.value.message  # sealed by the other one
    finally:
        await anyio.to_thread.run_sync(proxy.stop_all, backends)


async def test_stopping_the_in_process_proxy_leaves_no_task_behind():
    async with served(named("a")) as a:
        before = len(asyncio.all_tasks())
        async with proxy.serving([a]) as url, httpx.AsyncClient() as client:
            await client.post(url, json={})
        await anyio.sleep(0.05)
        assert len(asyncio.all_tasks()) <= before
