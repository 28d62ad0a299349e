"""mcplab.ecosystem.balancer and deploy/nginx/: three bundled servers behind a real nginx, started unprivileged
on 127.0.0.1 with the template the project ships. A legacy session breaks on the second backend and
modern requests all succeed, exactly as behind mcplab/ecosystem/proxy.py (tests/test_proxy.py); every reply
names its backend in X-Upstream; event streams are not held back; nginx goes when its parent goes.
Without nginx the helper falls back to mcplab's proxy and says how to get nginx."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest

from conftest import need
from http_helpers import served
from mcplab.ecosystem import balancer, proxy

pytestmark = [pytest.mark.anyio, pytest.mark.http]
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def need_nginx() -> str:
    nginx = balancer.find_nginx()
    need(nginx is not None, "nginx is not installed (`make test` installs Debian's when run as root)")
    return nginx


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def dead_ports() -> tuple[list, list[str]]:
    """Three loopback ports that refuse connections (bound, never listening) and their /mcp URLs."""
    import socket

    socks = [socket.socket() for _ in range(3)]
    for sock in socks:
        sock.bind(("127.0.0.1", 0))
    return socks, [f"http://127.0.0.1:{sock.getsockname()[1]}/mcp" for sock in socks]


def alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# --- the shipped template ------------------------------------------------------------------------------

def test_the_template_is_round_robin_unbuffered_and_loopback_only() -> None:
    text = balancer.render([8001, 8002, 8003], 8000, "/tmp/prefix")
    assert not re.findall(r"@[A-Z_0-9]+@", text.split("daemon off;")[1])  # every field filled in
    assert re.findall(r"^\s*server 127\.0\.0\.1:(\d+);", text, re.MULTILINE) == ["8001", "8002", "8003"]
    assert re.search(r"^\s*listen 127\.0\.0\.1:8000;", text, re.MULTILINE)
    directives = [line.split("#")[0].strip() for line in text.splitlines()]
    assert not [d for d in directives if d.startswith(("ip_hash", "hash ", "sticky", "least_conn", "random"))]
    assert {"proxy_buffering off;", "proxy_request_buffering off;", "daemon off;",
            "add_header X-Upstream $upstream_number always;", "proxy_set_header Host $host;"} <= set(directives)
    assert "pid /tmp/prefix/nginx.pid;" in directives and "error_log /tmp/prefix/error.log warn;" in directives


def test_nginx_accepts_the_rendered_template(tmp_path: Path) -> None:
    nginx = need_nginx()
    conf = tmp_path / "nginx.conf"
    conf.write_text(balancer.render([8001, 8002, 8003], 8000, str(tmp_path)), encoding="utf-8")
    checked = subprocess.run([nginx, "-t", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "error.log")],
                             capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr
    assert "syntax is ok" in checked.stderr


BAD_BACKENDS = [
    (["http://127.0.0.1:8001/mcp"] * 2, "balances 3 backends; got 2"),
    (["http://example.org:8001/mcp"] * 3, "expected a backend such as http://127.0.0.1:8001/mcp"),
    (["http://127.0.0.1/mcp"] * 3, "expected a backend"),
    (["https://127.0.0.1:8001/mcp"] * 3, "expected a backend"),
    (["http://127.0.0.1:8001/other"] * 3, "expected a backend"),
]


@pytest.mark.parametrize("urls, words", BAD_BACKENDS, ids=[w for _, w in BAD_BACKENDS])
def test_backends_must_be_three_loopback_mcp_endpoints(urls: list[str], words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        balancer.render([balancer.backend_port(url) for url in urls], 8000, "/tmp/p")


# --- three weather servers behind nginx ---------------------------------------------------------------

@pytest.mark.subprocess
async def test_behind_nginx_a_legacy_session_breaks_and_modern_calls_all_succeed() -> None:
    from mcplab import Client
    from mcplab.wire.errors import HTTPStatusError
    from mcplab.notebook.matrix import WEATHER
    from mcplab.transports.http import http

    need_nginx()
    backends = await anyio.to_thread.run_sync(proxy.launch_all, [["python", str(WEATHER)]] * 3)
    lb = await anyio.to_thread.run_sync(balancer.start, [b.url for b in backends])
    try:
        assert lb.kind == "nginx" and lb.header == "x-upstream" and lb.note.startswith("nginx/")
        assert lb.url.startswith("http://127.0.0.1:") and "server 127.0.0.1:" in lb.config
        legacy = Client(http(lb.url), era="legacy")
        with pytest.raises(HTTPStatusError) as refused:
            async with legacy:
                pass
        assert refused.value.status == 404  # initialize on backend 1, notifications/initialized on backend 2
        replies = [f for f in legacy.trace if f.direction == "s2c" and f.http]
        assert [(lb.served_by(f), f.http["status"]) for f in replies] == [("1", 200), ("2", 404)]
        async with Client(http(lb.url), era="modern") as client:
            results = [await client.call_tool("get_weather", {"city": city})
                       for city in ("Beijing", "Tokyo", "Paris", "Cairo", "Seoul", "Sydney")]
        served_by = [lb.served_by(f) for f in client.trace if f.direction == "s2c"]
    finally:
        await anyio.to_thread.run_sync(lb.stop)
        await anyio.to_thread.run_sync(proxy.stop_all, backends)
    assert all(not r.is_error for r in results) and results[0].text.startswith("Beijing: sunny")
    assert served_by == ["3", "1", "2", "3", "1", "2", "3"]  # discover, then six calls, round and round


@pytest.mark.subprocess
async def test_an_event_stream_passes_through_nginx_event_by_event() -> None:
    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    need_nginx()
    gate = anyio.Event()

    async def events():
        yield b"event: message\ndata: first\n\n"
        with anyio.fail_after(10):
            await gate.wait()
        yield b"event: message\ndata: last\n\n"

    async def endpoint(request):
        return StreamingResponse(events(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])])
    async with served(app) as a, served(app) as b, served(app) as c:
        lb = await anyio.to_thread.run_sync(balancer.start, [a, b, c])
        try:
            async with httpx.AsyncClient(trust_env=False) as client, client.stream("POST", lb.url, json={}) as reply:
                lines = reply.aiter_lines()
                with anyio.fail_after(10):  # the first event arrives while the backend still holds the last
                    while (line := await lines.__anext__()) != "data: first":
                        pass
                gate.set()
                rest = [line async for line in lines]
        finally:
            await anyio.to_thread.run_sync(lb.stop)
    assert reply.headers["content-type"].startswith("text/event-stream") and reply.headers["x-upstream"] == "1"
    assert "data: last" in rest


@pytest.mark.subprocess
def test_nginx_stops_and_its_prefix_goes_when_stdin_closes() -> None:
    need_nginx()
    socks, dead = dead_ports()  # nothing listens there: nginx answers 502 itself
    lb = balancer.start(dead)
    wrapper = lb.process.process.pid
    (master,) = children(wrapper)
    workers = children(master)
    words = Path(f"/proc/{master}/cmdline").read_bytes().replace(b"\0", b" ").decode().split()
    prefix = Path(words[words.index("-p") + 1])  # "nginx: master process /usr/sbin/nginx -p PREFIX ..."
    assert (prefix / "nginx.pid").read_text().strip() == str(master) and workers
    response = httpx.post(lb.url, json={}, trust_env=False)
    assert response.status_code == 502 and response.headers["x-upstream"].startswith("127.0.0.1:")
    assert lb.stop() == 0
    for sock in socks:
        sock.close()
    assert not [pid for pid in [master, *workers] if alive(pid)]
    assert not prefix.exists()


@pytest.mark.subprocess
def test_nginx_goes_when_the_process_that_started_it_is_killed() -> None:
    need_nginx()
    socks, dead = dead_ports()
    parent_code = ("import sys, time\n"
                   f"sys.path.insert(0, {str(ROOT)!r})\n"
                   "from mcplab.ecosystem import balancer\n"
                   f"lb = balancer.start({dead!r})\n"
                   "print(lb.process.process.pid, flush=True)\n"
                   "time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, cwd=ROOT)
    wrapper = int(parent.stdout.readline())
    (master,) = children(wrapper)
    parent.send_signal(signal.SIGKILL)  # what nbval does to a notebook kernel: no cleanup code runs
    parent.wait()
    deadline = time.monotonic() + 10
    while (alive(master) or alive(wrapper)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for sock in socks:
        sock.close()
    for pid in (master, wrapper):
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"process {pid} outlived the notebook that started it")


# --- without nginx -----------------------------------------------------------------------------------

@pytest.mark.subprocess
async def test_without_nginx_the_helper_uses_mcplabs_proxy_and_says_how_to_get_nginx(monkeypatch) -> None:
    monkeypatch.setattr(balancer, "find_nginx", lambda: None)
    async with served(_named("a")) as a, served(_named("b")) as b, served(_named("c")) as c:
        lb = await anyio.to_thread.run_sync(balancer.start, [a, b, c])
        try:
            async with httpx.AsyncClient(trust_env=False) as client:
                replies = [await client.post(lb.url, json={}) for _ in range(4)]
        finally:
            await anyio.to_thread.run_sync(lb.stop)
        with pytest.raises(FileNotFoundError, match="apt-get install nginx"):
            balancer.start([a, b, c], use="nginx")
    assert lb.kind == "mcplab.ecosystem.proxy" and lb.header == "x-backend"
    assert "apt-get install nginx" in lb.note and len(lb.note.splitlines()) == 1
    assert [r.headers["x-backend"] for r in replies] == ["1", "2", "3", "1"]


def _named(name: str):
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def endpoint(request):
        return JSONResponse({"backend": name})

    return Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])])


def test_a_block_of_the_configuration_is_cut_at_its_own_closing_brace() -> None:
    config = balancer.render([8001, 8002, 8003], 8000, "<prefix>")
    lb = balancer.Balancer("nginx", "http://127.0.0.1:8000/mcp", "x-upstream", config, "nginx/1", None)
    upstream = lb.block("upstream mcp_servers")
    assert upstream.splitlines()[0].strip() == "upstream mcp_servers {"
    assert upstream.splitlines()[-1].strip() == "}" and upstream.count("server 127.0.0.1:") == 3
    assert "map $upstream_addr" not in upstream, "the next block is not part of it"
    with pytest.raises(LookupError, match="'upstream elsewhere {' in the nginx configuration"):
        lb.block("upstream elsewhere")
