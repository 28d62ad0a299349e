"""Streamable HTTP as the browser edition runs it: a bundled server's ASGI app served in process, no socket.

Run here on a machine, with ``IN_BROWSER`` set as in a page: ``launch`` (server/streamable_http/in_page.py)
serves the file's app at an in-page URL, ``http(url)`` and ``place.web()`` reach it through the ASGI
driver, and the client sees what it sees from a child over TCP: the same frames, statuses and headers
(but the host's own ``server`` header), the same banner on stderr. A URL nothing listens at is refused
by name.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from mcplab import notebook, place
from mcplab.ecosystem import proxy
from mcplab.client import Client
from mcplab.server.streamable_http import in_page, launch
from mcplab.transports import asgi
from mcplab.transports.http import http
from mcplab.wire.errors import TransportError

ROOT = Path(__file__).resolve().parent.parent
WEATHER = ["python", str(ROOT / "servers" / "weather.py")]
MODERN = "2026-07-28"

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def page(monkeypatch):
    for module in (asgi, place, proxy):
        monkeypatch.setattr(module, "IN_BROWSER", True)


def shape(trace) -> list[tuple]:
    """What a lab shows of a trace: direction, HTTP method, status, header names (but the host's own), body."""
    host_headers = {"date", "server", "content-length"}  # a host's own name and clock; each body is compared
    return [(f.direction, f.http["method"], f.http["status"],
             sorted(k.lower() for k in f.http["headers"] if k.lower() not in host_headers),
             getattr(f.message, "method", None) or f.raw[:40].split('"id"')[0]) for f in trace.frames]


async def weather_session(url: str, era: str) -> tuple[str, list]:
    async with Client(http(url), era=era) as client:
        result = await client.call_tool("get_weather", {"city": "Beijing"})
        await client.list_tools()
    return result.text, shape(client.trace)


@pytest.mark.http
@pytest.mark.subprocess
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_server_launched_in_the_page_gives_the_client_what_a_child_over_tcp_gives(page, monkeypatch, era):
    served = launch(WEATHER)
    assert isinstance(served, in_page.PageServer)
    try:
        in_the_page = await weather_session(served.url, era)
    finally:
        assert served.stop() == 0
    monkeypatch.undo()  # a machine again: the same file as a child, over TCP
    child = launch(WEATHER)
    try:
        assert await weather_session(child.url, era) == in_the_page
    finally:
        child.stop()


async def test_the_page_server_says_its_banner_on_stderr_nothing_on_stdout_and_names_its_host(page):
    served = launch(WEATHER)
    try:
        assert served.stderr() == f"mcplab: serving weather at {served.url}\n"
        assert served.url.startswith("http://127.0.0.1:") and served.url.endswith("/mcp")
        assert served.stdout() == ""
        async with place.web() as web:
            reply = await web.get(served.url, headers={"Accept": "text/event-stream"})
        assert reply.status_code == 400 and reply.headers["server"] == "mcplab-in-page"
    finally:
        served.stop()


async def test_a_stopped_page_server_refuses_the_next_connection_by_its_url(page):
    served = launch(WEATHER)
    assert served.stop() == 0
    with pytest.raises(TransportError, match=r"nothing listens at http://127\.0\.0\.1:\d+ in this page"):
        async with Client(http(served.url)):
            pass


async def test_two_page_servers_each_answer_at_their_own_url(page):
    first, second = launch([*WEATHER, "--era", "modern"]), launch([*WEATHER, "--era", "legacy"])
    try:
        assert first.url != second.url
        async with Client(http(first.url), era="modern") as modern, Client(http(second.url), era="legacy") as legacy:
            pass
        assert (modern.protocol_version, legacy.protocol_version) == ("2026-07-28", "2025-11-25")
        with pytest.raises(Exception, match="-32020"):  # the modern-only one refuses a legacy handshake
            async with Client(http(first.url), era="legacy"):
                pass
    finally:
        first.stop(), second.stop()


def test_a_file_that_is_not_a_python_server_is_refused_with_what_was_expected(page):
    with pytest.raises(ValueError, match=r"expected a Python file to serve here.*got \['node', 'x\.js'\]"):
        launch(["node", "x.js"])
    with pytest.raises(FileNotFoundError, match="no server file at"):
        launch(["python", str(ROOT / "servers" / "nowhere.py")])
    with pytest.raises(ValueError, match="--auth: not served in the page"):
        launch([*WEATHER, "--auth", "http://127.0.0.1:9000"])


@pytest.mark.http
@pytest.mark.subprocess
async def test_send_post_and_send_discover_show_in_the_page_what_post_and_post_discover_show_on_a_machine(
        page, monkeypatch):
    def asked(url):
        return [("forged", {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "get_weather"},
                 {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_forecast"}}),
                ("a stray GET body", {"MCP-Protocol-Version": MODERN}, [1, 2])]

    served = launch(WEATHER)
    try:
        in_the_page = [str(await notebook.send_post(served.url, headers, body, title=title))
                       for title, headers, body in asked(served.url)]
        future = await notebook.send_discover(served.url, "2027-01-01", 1)
    finally:
        served.stop()
    assert future.status == 400 and future.message.code == -32022
    monkeypatch.undo()
    with launch(WEATHER) as child:
        on_a_machine = [str(notebook.post(child.url, headers, body, title=title))
                        for title, headers, body in asked(child.url)]
        assert str(notebook.post_discover(child.url, "2027-01-01", 1)) == str(future)
    assert in_the_page == on_a_machine and "← 400" in on_a_machine[0]


async def test_the_proxy_in_the_page_takes_turns_between_backends_in_the_page_and_a_session_finds_404(page):
    backends = proxy.launch_all([WEATHER] * 3)
    balancer = proxy.start([b.url for b in backends])
    try:
        assert balancer.stderr() == f"mcplab: serving proxy at {balancer.url}\n"
        async with Client(http(balancer.url), era="modern") as stateless:
            for city in ("Beijing", "Tokyo", "Paris", "Cairo"):
                await stateless.call_tool("get_weather", {"city": city})
        answered = [f.http["headers"].get("x-backend") for f in stateless.trace.frames
                    if f.direction == "s2c" and getattr(f.message, "id", None) is not None]
        assert len(answered) >= 4 and answered == [str(turn % 3 + 1) for turn in range(len(answered))], answered
        with pytest.raises(Exception) as ended:
            async with Client(http(balancer.url), era="legacy"):
                pass
        statuses = [f.http["status"] for f in stateless.trace.frames if f.direction == "s2c"]
        assert 404 not in statuses and "404" in str(ended.value)
    finally:
        assert proxy.stop_all([balancer, *backends]) == [0, 0, 0, 0]
    with pytest.raises(httpx.ConnectError, match="nothing listens at"):
        async with place.web() as web:
            await web.post(balancer.url, json={})


async def test_serving_the_proxy_in_the_page_lasts_as_long_as_its_block(page):
    backends = proxy.launch_all([[*WEATHER, "--era", "modern"]] * 2)
    try:
        async with proxy.serving([b.url for b in backends]) as url:
            async with Client(http(url), era="modern") as client:
                for city in ("Beijing", "Tokyo"):
                    await client.call_tool("get_weather", {"city": city})
            turns = [f.http["headers"].get("x-backend") for f in client.trace.frames if f.direction == "s2c"]
            assert turns == ["1", "2", "1"], turns  # server/discover, then the two calls
        with pytest.raises(TransportError, match="nothing listens at"):
            async with Client(http(url), era="modern"):
                pass
    finally:
        proxy.stop_all(backends)
