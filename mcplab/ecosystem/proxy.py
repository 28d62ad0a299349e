"""A round-robin HTTP reverse proxy: several copies of a server behind one URL, and no sticky routing.

Theory of operation
-------------------
To scale an HTTP service out you run several copies of it and put a load balancer in front. The
simplest balancer sends each incoming request to the next backend in turn::

    client ── POST /mcp ──▶ proxy ──▶ backend 1        request 1
                                  ──▶ backend 2        request 2
                                  ──▶ backend 3        request 3, then backend 1 again …

It reads no body and remembers no client: there is no *sticky routing* (no "this client's requests
always go to backend 2"). That is what lab 07 needs to show. A legacy Streamable HTTP session lives
in the one process that answered ``initialize``: the other processes have never seen its
``Mcp-Session-Id`` and answer 404. A 2026-07-28 request carries everything it needs in its own
``_meta``, so any backend can answer it. (A real gateway could route on the ``Mcp-Method`` and
``Mcp-Name`` headers without parsing the body; this one only counts.)

What is forwarded: the method, path, query, body and headers, minus the hop-by-hop headers that
describe one connection rather than the message (RFC 9110 §7.6.1). The reply streams back chunk by
chunk as it arrives, so the events of an SSE stream are not held up. Every reply gets an
``X-Backend: <n>`` header (1-based) so a trace shows which copy answered; an unreachable backend
gives 502.

Two ways to run it: in this process, ``async with serving(urls) as url:`` (uvicorn on the current
event loop, so only async clients may call it from the same loop), or as a child process,
``start(urls)``, which prints its URL on stderr and exits when its stdin reaches end-of-file, like
the bundled servers (``mcplab.server.streamable_http.launch``). Either way it binds 127.0.0.1 on a free port.
``launch_all`` starts the backends themselves side by side, and ``stop_all`` stops a set together.

In the browser edition (no sockets, no processes) ``start`` and ``serving`` serve the same app in the page
(server/streamable_http/in_page.py), and it forwards to backends launched in the page, through
the ASGI driver (transports/asgi.py): the same routing, the same ``X-Backend`` header, each event
passed on as it comes. ``launch_all`` launches there one after another (each is ready at once).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import sys
from typing import Any, AsyncIterator, Callable, Sequence
from urllib.parse import urlsplit

import anyio
import anyio.abc
import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from mcplab.server.streamable_http.process import START_TIMEOUT
from mcplab.transports.asgi import IN_BROWSER, PageNetwork

__all__ = ["create_app", "serving", "start", "launch_all", "stop_all", "main", "HOP_BY_HOP", "BACKEND_HEADER"]

BACKEND_HEADER = "X-Backend"
# Connection-specific headers (RFC 9110 §7.6.1) are not forwarded; Host is set for the backend.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
                        "upgrade", "proxy-authenticate", "proxy-authorization", "host"})
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
BANNER = "mcplab: serving proxy at {url}"  # the shape mcplab.server.streamable_http.launch waits for


def _origin(url: str) -> str:
    """``http://127.0.0.1:8000/mcp`` → ``http://127.0.0.1:8000``: requests keep their own path."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"expected a backend URL such as http://127.0.0.1:8000/mcp, got {url!r}")
    return f"{parts.scheme}://{parts.netloc}"


def create_app(backends: Sequence[str]) -> Starlette:
    """The proxy as an ASGI app; ``app.state.routed`` lists the backend number of every request."""
    if not backends:
        raise ValueError("a proxy needs at least one backend URL")
    origins = [_origin(url) for url in backends]
    turns = itertools.cycle(range(len(origins)))
    # A stream may stay open long; the backends are on this machine, so no proxy from the environment.
    # In the page the backends are apps of this process: the page's network reaches them.
    network = {"transport": PageNetwork()} if IN_BROWSER else {}
    client = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=5.0), trust_env=False, **network)

    async def forward(request: Request) -> Response:
        number = next(turns)  # the whole routing policy: whoever is next
        request.app.state.routed.append(number + 1)
        # Content-Length too is left to httpx, which counts the body it sends.
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP | {"content-length"}]
        outgoing = client.build_request(request.method, origins[number] + request.url.path,
                                        params=request.url.query, headers=headers, content=await request.body())
        try:
            upstream = await client.send(outgoing, stream=True)
        except httpx.TransportError as exc:
            return Response(f"backend {number + 1} unreachable: {type(exc).__name__}\n", 502,
                            {BACKEND_HEADER: str(number + 1)}, media_type="text/plain")
        # Raw bytes, so Content-Length and Content-Encoding stay true; aclose() when the stream ends.
        reply = [(k, v) for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP]
        response = StreamingResponse(upstream.aiter_raw(), upstream.status_code,
                                     background=BackgroundTask(upstream.aclose))
        response.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in reply]
        response.raw_headers.append((BACKEND_HEADER.lower().encode(), str(number + 1).encode()))
        return response

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await client.aclose()

    app = Starlette(routes=[Route("/{path:path}", forward, methods=METHODS)], lifespan=lifespan)
    app.state.routed = []
    app.state.backends = list(backends)
    return app


def _config(app: Starlette, sock: Any) -> Any:
    import uvicorn

    from mcplab.server.streamable_http.owner import protocol_for

    # No Server or Date header of our own: the backend's pass through, once. protocol_for: like the
    # backends, the proxy answers only the user who started it (a classmate must not get in through it).
    return uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", server_header=False,
                          date_header=False, timeout_graceful_shutdown=1, http=protocol_for(sock))


@contextlib.asynccontextmanager
async def serving(backends: Sequence[str], *, app: Starlette | None = None) -> AsyncIterator[str]:
    """Run the proxy on this (asyncio) event loop; yield its ``http://127.0.0.1:PORT/mcp``; stop on exit.

    >>> async with serving([url1, url2, url3]) as url: ...          # doctest: +SKIP

    In the page: the app served there (no socket), at an in-page URL, until the block ends.
    """
    if IN_BROWSER:
        from mcplab.server.streamable_http import in_page

        served = in_page.serve(app or create_app(backends), "proxy", banner=BANNER)
        try:
            yield served.url
        finally:
            served.stop()
        return
    import uvicorn

    from mcplab.server.streamable_http.process import bind, endpoint_url

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(_config(app or create_app(backends), sock))
    try:
        async with anyio.create_task_group() as tasks:  # leaving it waits for uvicorn: nothing is left running
            await tasks.start(_run, server, sock)
            try:
                yield endpoint_url(sock)
            finally:
                server.should_exit = True
    finally:
        sock.close()


def start(backends: Sequence[str], *, timeout: float = START_TIMEOUT) -> Any:
    """Start the proxy as a child process; return its ``ServerProcess`` (``.url``, ``.stop()``).
    In the page: the proxy's app served in the page, with the same face."""
    from mcplab.server.streamable_http import launch

    if IN_BROWSER:
        from mcplab.server.streamable_http import in_page

        return in_page.serve(create_app(backends), "proxy", banner=BANNER)

    return launch(["python", "-m", "mcplab.ecosystem.proxy", *backends], timeout=timeout)


def launch_all(commands: Sequence[Sequence[str]], *, timeout: float = START_TIMEOUT) -> list[Any]:
    """Start several HTTP servers at once (``launch`` each); if one fails, stop the others and raise.

    >>> backends = launch_all([["python", "servers/weather.py"]] * 3)      # doctest: +SKIP
    """
    from concurrent.futures import ThreadPoolExecutor

    from mcplab.server.streamable_http import launch

    if IN_BROWSER:  # no threads in the page, and no need: a server there is ready when launch returns
        started: list[Any] = []
        try:
            for command in commands:
                started.append(launch(list(command)))
        except BaseException:
            stop_all(started)
            raise
        return started

    # Threads, because launch() blocks until its child prints its URL: this way the children start together.
    with ThreadPoolExecutor(max(1, len(commands))) as pool:
        futures = [pool.submit(launch, list(command), timeout=timeout) for command in commands]
    errors = [f.exception() for f in futures if f.exception() is not None]
    if errors:  # a half-started set must not outlive the error
        for future in futures:
            if future.exception() is None:
                future.result().stop()
        raise errors[0]
    return [future.result() for future in futures]


def stop_all(processes: Sequence[Any]) -> list[int | None]:
    """Stop servers started by ``launch``: close every stdin first, so they all shut down together."""
    for process in processes:
        child = process.process  # None for a server in the page: its stop() is all there is
        with contextlib.suppress(OSError):
            if child is not None and child.stdin is not None:
                child.stdin.close()
    return [process.stop() for process in processes]


async def _run(server: Any, sock: Any, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    """Serve on ``sock`` until ``server.should_exit``; report started once uvicorn accepts connections."""
    from mcplab.server.streamable_http.process import start_serving

    async with anyio.create_task_group() as tasks:
        if not await start_serving(tasks, server, sock):
            raise RuntimeError("the proxy stopped before it started serving")
        task_status.started()


def _watch_stdin(loop: asyncio.AbstractEventLoop, on_eof: Callable[[], None]) -> bool:
    """Call ``on_eof`` when stdin, a pipe the parent holds, reaches end-of-file (False: not a pipe)."""
    from mcplab.server.streamable_http.process import _stdin_is_pipe, _watch_stdin as watch_in_a_thread

    if not _stdin_is_pipe():
        return False  # a terminal or /dev/null: stop with Ctrl-C instead
    # The same watchdog as the bundled servers': a thread's blocking read works on every platform,
    # where asyncio's connect_read_pipe needs a pipe the loop can watch (not a Windows stdin).
    watch_in_a_thread(loop, on_eof)  # the parent closed the pipe or died (even by SIGKILL): stop serving
    return True


async def _serve(app: Starlette, host: str, port: int) -> None:
    import uvicorn

    from mcplab.server.streamable_http.process import bind, endpoint_url

    sock = bind(host, port)
    server = uvicorn.Server(_config(app, sock))
    _watch_stdin(asyncio.get_running_loop(), lambda: setattr(server, "should_exit", True))
    async with anyio.create_task_group() as tasks:
        await tasks.start(_run, server, sock)
        print(BANNER.format(url=endpoint_url(sock)), file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m mcplab.ecosystem.proxy URL [URL ...] [--host H] [--port P]``"""
    parser = argparse.ArgumentParser(description="A round-robin reverse proxy in front of MCP servers.")
    parser.add_argument("backends", nargs="+", help="backend endpoint URLs, e.g. http://127.0.0.1:8001/mcp")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--http", action="store_true", help=argparse.SUPPRESS)  # launch() passes it; always HTTP
    args = parser.parse_args(argv)
    try:
        asyncio.run(_serve(create_app(args.backends), args.host, args.port))
    except KeyboardInterrupt:
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
