"""Helpers for the Streamable HTTP tests: an app served in-process on 127.0.0.1:0, raw POSTs with the
right headers (a legacy session's, or a 2026-07-28 request's envelope and routing headers), a scripted
HTTP server for client tests, and servers from elsewhere to talk to.

Run as a script to start the official SDK's server over Streamable HTTP (the way
``mcplab.server.streamable_http.launch`` expects: ``--http --host H --port 0``, the URL on stderr)::

    python tests/http_helpers.py sdk --http --host 127.0.0.1 --port 0
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator

import httpx

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve()
NODE_BIN = ROOT / ".node" / "node_modules" / ".bin"
LOOPBACK_PRELOAD = ROOT / "tests" / "conformance" / "loopback.cjs"

ACCEPT_BOTH = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "http-tests", "version": "1"}}}


def initialize(version: str = "2025-11-25", request_id: int = 1, **capabilities: Any) -> dict:
    return {**INITIALIZE, "id": request_id,
            "params": {**INITIALIZE["params"], "protocolVersion": version, "capabilities": capabilities}}


def request(method: str, request_id: int, params: dict | None = None) -> dict:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


MODERN = "2026-07-28"


def envelope(capabilities: dict | None = None, version: str = MODERN, **extra: Any) -> dict:
    """The ``_meta`` every 2026-07-28 request carries."""
    return {"io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": capabilities if capabilities is not None else {},
            "io.modelcontextprotocol/clientInfo": {"name": "http-tests", "version": "1"}, **extra}


def modern_request(method: str, request_id: int | str, params: dict | None = None,
                   capabilities: dict | None = None, **meta: Any) -> dict:
    """A 2026-07-28 request: ``params`` with the envelope added to its ``_meta``."""
    params = dict(params or {})
    params["_meta"] = {**envelope(capabilities), **meta, **params.get("_meta", {})}
    return request(method, request_id, params)


def modern_headers(body: dict, **extra: str) -> dict[str, str]:
    """The headers a 2026-07-28 POST of ``body`` carries (mcplab.wire.headers mirrors them), plus ``extra``."""
    from mcplab.wire.headers import request_headers

    params = body.get("params") or {}
    version = (params.get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion", MODERN)
    return {**ACCEPT_BOTH, **request_headers(body["method"], params, version), **extra}


# --- serving an app in this process ---------------------------------------------------------------

@contextlib.asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on 127.0.0.1:<free port> on this event loop; yield its /mcp URL."""
    import uvicorn

    from mcplab.server.streamable_http.process import bind, endpoint_url

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="on",
                                           timeout_graceful_shutdown=1))
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.005)
        yield endpoint_url(sock)
    finally:
        server.should_exit = True
        await task
        sock.close()


class Session:
    """A raw HTTP client for one MCP session: initialize, then POSTs that carry the session headers."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client, self.url = client, url
        self.session_id: str | None = None
        self.version: str | None = None

    async def open(self, version: str = "2025-11-25", **capabilities: Any) -> httpx.Response:
        response = await self.client.post(self.url, json=initialize(version, **capabilities), headers=ACCEPT_BOTH)
        response.raise_for_status()
        self.session_id = response.headers["mcp-session-id"]
        self.version = response.json()["result"]["protocolVersion"]
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def headers(self, **extra: str) -> dict[str, str]:
        headers = dict(ACCEPT_BOTH)
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.version:
            headers["MCP-Protocol-Version"] = self.version
        headers.update(extra)
        return headers

    async def post(self, message: Any, **headers: str) -> httpx.Response:
        return await self.client.post(self.url, content=json.dumps(message).encode(), headers=self.headers(**headers))

    async def call(self, method: str, request_id: int, params: dict | None = None) -> dict:
        """POST a request and return its response, from a JSON body or the last event of an SSE body."""
        response = await self.post(request(method, request_id, params))
        assert response.status_code == 200, response.text
        return sse_messages(response.text)[-1] if is_sse(response) else response.json()


def is_sse(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").startswith("text/event-stream")


def sse_messages(body: str) -> list[dict]:
    """The JSON-RPC messages in an SSE body, in order (one data line per event, as our server sends)."""
    return [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]


# --- a scripted HTTP server, for client tests -----------------------------------------------------------

Reply = Callable[[dict, dict], Awaitable[Any]]


class Scripted:
    """An HTTP endpoint whose answer to each JSON-RPC method is a test's coroutine ``reply(message, headers)``.

    A reply returns a Starlette response. Everything received is kept in ``received`` as
    (HTTP method, headers, body text); GET and DELETE go to ``replies["GET"]`` / ``replies["DELETE"]``
    when set, else 405 / 200.
    """

    def __init__(self, replies: dict[str, Reply], *, version: str = "2025-11-25", session: str | None = "s-1") -> None:
        self.replies, self.version, self.session = replies, version, session
        self.received: list[tuple[str, dict[str, str], str]] = []

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def endpoint(request: Any) -> Any:
            body = (await request.body()).decode()
            headers = dict(request.headers)
            self.received.append((request.method, headers, body))
            if request.method in ("GET", "DELETE"):
                reply = self.replies.get(request.method)
                if reply is not None:
                    return await reply({}, headers)
                return Response(status_code=405 if request.method == "GET" else 200)
            message = json.loads(body)
            method = message.get("method")
            if method in self.replies:
                return await self.replies[method](message, headers)
            if method == "initialize":
                result = {"protocolVersion": self.version, "capabilities": {"tools": {}},
                          "serverInfo": {"name": "scripted", "version": "1"}}
                extra = {"mcp-session-id": self.session} if self.session else {}
                return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result}, headers=extra)
            if "id" not in message or "method" not in message:
                return Response(status_code=202)
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {}})

        return Starlette(routes=[Route("/mcp", endpoint, methods=["GET", "POST", "DELETE"])])

    def posts(self, method: str) -> list[tuple[dict[str, str], dict]]:
        """(headers, message) of every POST whose body had ``method``."""
        out = []
        for verb, headers, body in self.received:
            if verb == "POST" and body:
                message = json.loads(body)
                if message.get("method") == method:
                    out.append((headers, message))
        return out


# --- servers from elsewhere ------------------------------------------------------------------------------

@contextlib.contextmanager
def server_everything_http() -> Iterator[str]:
    """``@modelcontextprotocol/server-everything streamableHttp``, pinned to 127.0.0.1 by the loopback
    preload (it would listen on every interface), on a port the system picks; yields its /mcp URL."""
    node, everything = NODE_BIN / "node", NODE_BIN / "mcp-server-everything"
    env = {**os.environ, "PORT": "0", "MCPLAB_LOOPBACK_REPORT": "1",
           "NODE_OPTIONS": f"--require {LOOPBACK_PRELOAD}"}
    process = subprocess.Popen([str(node) if node.exists() else "node", str(everything), "streamableHttp"],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=env, start_new_session=True)
    try:
        deadline, seen = time.monotonic() + 20, ""
        while (match := re.search(r"loopback: listening on (127\.0\.0\.1):(\d+)", seen)) is None:
            line = process.stderr.readline().decode(errors="replace")  # type: ignore[union-attr]
            if not line and process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server-everything did not start:\n{seen}")
            seen += line
        yield f"http://{match.group(1)}:{match.group(2)}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_sdk_server(argv: list[str]) -> None:
    """The official SDK's test server over Streamable HTTP (its default app: SSE replies, sessions)."""
    import argparse

    from client_helpers import sdk_app

    sys.path.insert(0, str(ROOT))
    from mcplab.server.streamable_http.process import BANNER, bind, endpoint_url, serve_app

    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    app = sdk_app()  # the same server the stdio interop tests use (tests/client_helpers.py)

    sock = bind(args.host, args.port)  # served as mcplab's servers are: banner, stdin watchdog
    asyncio.run(serve_app(app.streamable_http_app(host=args.host), sock,
                          BANNER.format(name="sdk-weather", url=endpoint_url(sock))))


if __name__ == "__main__":
    if sys.argv[1] == "sdk":
        run_sdk_server(sys.argv[2:])
