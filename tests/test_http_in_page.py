"""Streamable HTTP as the browser edition runs it: a bundled server's ASGI app served in process, no socket.

Run here on a machine, with ``IN_BROWSER`` set as in a page: ``launch`` (server/streamable_http/in_page.py)
serves the file's app at an in-page URL, ``http(url)`` and ``place.web()`` reach it through the ASGI
driver, and the client sees what it sees from a child over TCP: the same frames, statuses and headers
(but the host's own ``server`` header), the same banner on stderr. A URL nothing listens at is refused
by name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcplab import place
from mcplab.client import Client
from mcplab.server.streamable_http import in_page, launch
from mcplab.transports import asgi
from mcplab.transports.http import http
from mcplab.wire.errors import TransportError

ROOT = Path(__file__).resolve().parent.parent
WEATHER = ["python", str(ROOT / "servers" / "weather.py")]

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def page(monkeypatch):
    for module in (asgi, place):
        monkeypatch.setattr(module, "IN_BROWSER", True)
    monkeypatch.setattr("sys.platform", "emscripten")


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
