"""Helpers for the red-team tests (tests/test_redteam_*.py): hostile peers and the measurements that judge them.

Run as a script to start a hostile server (the client tests spawn these)::

    python tests/redteam_helpers.py flood-stdio COUNT [SIZE]   initialize, then COUNT notifications of SIZE
                                                                bytes each before answering any request
    python tests/redteam_helpers.py flood-sse COUNT [SIZE]     the same over Streamable HTTP: every POSTed
                                                                request is answered by an event stream that
                                                                carries COUNT notifications, then the response
    python tests/redteam_helpers.py chatter MIB                 over stdio: MIB MiB on stderr, no newline, before
                                                                each answer
    python tests/redteam_helpers.py big-event MIB               over HTTP: a request's answer is one event of MIB
                                                                MiB, sent in 64 KiB pieces
    python tests/redteam_helpers.py files-portable ARGS...      servers/files.py with the portable (no dir_fd)
                                                                sandbox forced, as on a platform without openat
    python tests/redteam_helpers.py impatient NAME ARGS...      servers/NAME.py with 1 s HTTP timeouts for slow
                                                                clients (the defaults are longer than a test)
    python tests/redteam_helpers.py loud TEXT [BIG] [--junk]    over stdio: TEXT (a JSON string) in every string
                                                                the server supplies and on stderr; BIG more
                                                                characters in a description and a result;
                                                                --junk: TEXT raw on stdout instead of an answer

Measuring: :func:`rss_kib` and :func:`peak_rss_kib` read a process's memory from /proc; :class:`RawHTTP`
speaks HTTP/1.1 on a bare socket, so a test controls every byte (half a body, a duplicated header, a
connection kept alive across requests); :func:`run_client` runs a client in a child process and returns
what it printed as JSON, with its own peak memory.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve()
SERVERS = ROOT / "servers"


def script(kind: str, *args: str) -> list[str]:
    """argv that starts one of this file's hostile servers."""
    return [sys.executable, str(HERE), kind, *args]


# --- memory ------------------------------------------------------------------------------------------

def _status(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(f"{field} not in /proc/{pid}/status")


def rss_kib(pid: int) -> int:
    """Resident memory of a process now, in KiB (Linux)."""
    return _status(pid, "VmRSS")


def peak_rss_kib(pid: int) -> int:
    """The most resident memory a live process ever had, in KiB (Linux)."""
    return _status(pid, "VmHWM")


def have_proc() -> bool:
    return os.path.exists(f"/proc/{os.getpid()}/status")


def run_client(code: str, *, timeout: float = 60.0, env: dict[str, str] | None = None) -> dict:
    """Run ``code`` (an async ``main()`` returning a JSON-able dict) in a child Python; add its peak RSS."""
    # The peak is VmHWM, not ru_maxrss: on Linux ru_maxrss keeps the parent's peak across fork and exec.
    program = (
        "import asyncio, json, os, resource, sys\n" + code +
        "\nresult = asyncio.run(main())\n"
        "if os.path.exists('/proc/self/status'):\n"
        "    with open('/proc/self/status') as status:\n"
        "        result['peak_kib'] = next(int(l.split()[1]) for l in status if l.startswith('VmHWM:'))\n"
        "else:\n"
        "    result['peak_kib'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(json.dumps(result))\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env={**os.environ, **(env or {})})
    if done.returncode != 0:
        raise AssertionError(f"the client process failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- HTTP on a bare socket ---------------------------------------------------------------------------

class RawHTTP:
    """One TCP connection to an HTTP server: send exactly the bytes given, read one response at a time."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname, parts.port, parts.path
        self.sock = socket.create_connection((self.host, self.port), timeout=timeout)
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def post(self, body: bytes, headers: list[tuple[str, str]] | None = None, *, host: str | None = None) -> None:
        """Send a whole POST (``headers`` may repeat a name: that is what some tests are about)."""
        lines = [f"POST {self.path} HTTP/1.1", f"Host: {host or f'{self.host}:{self.port}'}",
                 "Accept: application/json, text/event-stream", "Content-Type: application/json",
                 f"Content-Length: {len(body)}"]
        lines += [f"{name}: {value}" for name, value in headers or []]
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buffer += chunk
        return bool(chunk)

    def response(self) -> tuple[int, dict[str, str], bytes]:
        """The next response on this connection: status, headers (lower-case names), body."""
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill():
                raise ConnectionError("the server closed the connection before answering")
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            size = int(headers["content-length"])
            while len(self.buffer) < size:
                if not self._fill():
                    raise ConnectionError("the server closed the connection inside a body")
            body, self.buffer = self.buffer[:size], self.buffer[size:]
        elif headers.get("transfer-encoding") == "chunked":
            body = self._chunked()
        else:
            body = b""
        return int(status_line.split()[1]), headers, body

    def _chunked(self) -> bytes:
        body = b""
        while True:
            while b"\r\n" not in self.buffer:
                if not self._fill():
                    raise ConnectionError("the server closed the connection inside a chunked body")
            size_line, self.buffer = self.buffer.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(self.buffer) < size + 2:
                if not self._fill():
                    raise ConnectionError("the server closed the connection inside a chunk")
            body, self.buffer = body + self.buffer[:size], self.buffer[size + 2:]
            if size == 0:
                return body

    def closed_by_server(self, wait: float = 5.0) -> bool:
        """Did the server close this connection (within ``wait`` seconds)?"""
        self.sock.settimeout(wait)
        try:
            return self.sock.recv(1) == b""
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawHTTP:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "redteam", "version": "1"}}}


def open_session(url: str, capabilities: dict | None = None, client_info: dict | None = None) -> str:
    """initialize + initialized over HTTP; the session id."""
    import httpx

    body = json.loads(json.dumps(INITIALIZE))
    body["params"]["capabilities"] = capabilities or {}
    if client_info is not None:
        body["params"]["clientInfo"] = client_info
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(timeout=30, trust_env=False) as client:
        reply = client.post(url, content=json.dumps(body), headers=headers)
        reply.raise_for_status()
        session = reply.headers["mcp-session-id"]
        client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers={**headers, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
    return session


def session_headers(session: str) -> dict[str, str]:
    return {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
            "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}


# --- hostile servers ---------------------------------------------------------------------------------

def _notification(index: int, size: int) -> dict:
    return {"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": f"{index:08d} " + "x" * max(0, size - 100)}}


def flood_stdio(count: int, size: int) -> None:
    """A legacy stdio server that floods: every request gets ``count`` notifications before its answer."""
    out = os.fdopen(os.dup(1), "wb", buffering=1 << 16)
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        if message["method"] == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"logging": {}},
                      "serverInfo": {"name": "flood", "version": "1"}}
        else:
            for index in range(count):
                out.write(json.dumps(_notification(index, size)).encode() + b"\n")
            result = {}
        out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")
        out.flush()


def chatter(mib: int) -> None:
    """A legacy stdio server that writes ``mib`` MiB to stderr without a newline before each answer."""
    out = os.fdopen(os.dup(1), "wb")
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        result: dict = {}
        if message["method"] == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {},
                      "serverInfo": {"name": "chatter", "version": "1"}}
        else:
            for _ in range(mib * 16):
                os.write(2, b"z" * (1 << 16))
        out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")
        out.flush()


def http_server(endpoint: Any) -> None:
    """Serve a Starlette endpoint at /mcp the way mcplab's launch() expects (URL on stderr, stdin watchdog)."""
    import asyncio

    from starlette.applications import Starlette
    from starlette.routing import Route

    from mcplab.server.streamable_http.process import BANNER, bind, endpoint_url, serve_app

    app = Starlette(routes=[Route("/mcp", endpoint, methods=["GET", "POST", "DELETE"])])
    sock = bind("127.0.0.1", 0)
    asyncio.run(serve_app(app, sock, BANNER.format(name="hostile", url=endpoint_url(sock))))


def _initialize_reply(message: dict) -> Any:
    from starlette.responses import JSONResponse

    result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"logging": {}},
              "serverInfo": {"name": "hostile", "version": "1"}}
    return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result},
                        headers={"mcp-session-id": "hostile-session"})


def flood_sse(count: int, size: int) -> None:
    from starlette.responses import Response, StreamingResponse

    async def endpoint(request: Any) -> Any:
        if request.method != "POST":
            return Response(status_code=405 if request.method == "GET" else 204)
        message = json.loads(await request.body())
        if "id" not in message or "method" not in message:
            return Response(status_code=202)
        if message["method"] == "initialize":
            return _initialize_reply(message)

        async def events() -> Any:
            batch = b""
            for index in range(count):
                batch += b"event: message\ndata: " + json.dumps(_notification(index, size)).encode() + b"\n\n"
                if len(batch) > 1 << 16:
                    yield batch
                    batch = b""
            yield batch + b"event: message\ndata: " + json.dumps(
                {"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode() + b"\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    http_server(endpoint)


def big_event(mib: int) -> None:
    from starlette.responses import Response, StreamingResponse

    async def endpoint(request: Any) -> Any:
        if request.method != "POST":
            return Response(status_code=405 if request.method == "GET" else 204)
        message = json.loads(await request.body())
        if "id" not in message or "method" not in message:
            return Response(status_code=202)
        if message["method"] == "initialize":
            return _initialize_reply(message)
        text = "y" * (mib << 20)
        data = json.dumps({"jsonrpc": "2.0", "id": message["id"],
                           "result": {"content": [{"type": "text", "text": text}]}}).encode()

        async def events() -> Any:
            yield b"event: message\ndata: "
            for start in range(0, len(data), 1 << 16):
                yield data[start:start + (1 << 16)]
            yield b"\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    http_server(endpoint)


def files_portable(argv: list[str]) -> None:
    """servers/files.py, with the sandbox's portable walk forced (what a platform without dir_fd gets)."""
    import importlib.util

    from mcplab.server import confine

    confine.DIR_FD_WALK = False
    spec = importlib.util.spec_from_file_location("files_portable", SERVERS / "files.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(argv)


def impatient(argv: list[str]) -> None:
    """A bundled server (``argv[0]`` names it) whose HTTP timeouts for slow clients are 1 second, not the defaults."""
    import runpy

    try:
        from mcplab.server.streamable_http import deadlines as http_deadlines
    except ImportError:  # a checkout from before the deadlines existed: measured as it is
        pass
    else:
        http_deadlines.HEAD_TIMEOUT = 1.0
        http_deadlines.BODY_TIMEOUT = 1.0
    sys.argv = [str(SERVERS / f"{argv[0]}.py"), *argv[1:]]
    runpy.run_path(sys.argv[0], run_name="__main__")


def loud(text: str, big: int, junk: bool) -> None:
    """A legacy stdio server whose every string (names, titles, descriptions, results, errors) carries ``text``.

    Its JSON is valid (``json.dumps`` escapes control characters as ``\\u001b``): the client decodes the
    text back into the characters a terminal obeys. It also writes ``text`` raw on stderr, where no JSON
    escapes anything, and with ``junk`` raw on stdout as its first line instead of an answer.
    """
    def say(data: str) -> bytes:
        return data.encode("utf-8", "surrogatepass") + b"\n"  # a lone surrogate goes out as it came in

    out = os.fdopen(os.dup(1), "wb")
    os.write(2, say(f"stderr{text}"))
    listed = {
        "tools/list": {"tools": [{"name": f"shout{text}", "title": f"title{text}",
                                  "description": f"description{text}" + "d" * big,
                                  "inputSchema": {"type": "object", "properties": {f"city{text}": {"type": "string"}},
                                                  "required": [f"city{text}"]}}]},
        "resources/list": {"resources": [{"uri": f"loud://{text}", "name": f"resource{text}",
                                          "mimeType": f"text/{text}"}]},
        "resources/templates/list": {"resourceTemplates": [{"uriTemplate": f"loud://{{x}}{text}",
                                                            "name": f"template{text}", "mimeType": f"text/{text}"}]},
        "prompts/list": {"prompts": [{"name": f"prompt{text}", "description": f"description{text}",
                                      "arguments": [{"name": f"argument{text}", "required": True}]}]},
        "tools/call": {"content": [{"type": "text", "text": f"result{text}" + "r" * big}]},
    }
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        method, reply = message["method"], {"jsonrpc": "2.0", "id": message["id"]}
        if junk:
            out.write(say(f"junk{text}"))
            out.flush()
            junk = False
            continue
        if method == "initialize":
            reply["result"] = {"protocolVersion": message["params"]["protocolVersion"],
                               "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                               "serverInfo": {"name": f"loud{text}", "title": f"title{text}", "version": f"1{text}"},
                               "instructions": f"instructions{text}"}
        elif method in listed:
            reply["result"] = listed[method]
        else:  # server/discover (the probe), ping, anything else
            reply["error"] = {"code": -32601 if method == "server/discover" else -32603,
                              "message": f"error{text}", "data": f"data{text}"}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


def wait_for(condition: Any, timeout: float = 10.0, step: float = 0.02) -> bool:
    """Poll ``condition()`` until it is true or ``timeout`` passes; its last value."""
    deadline = time.monotonic() + timeout
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(step)
    return bool(value)


if __name__ == "__main__":
    kind, rest = sys.argv[1], sys.argv[2:]
    if kind != "impatient" and kind != "files-portable" and "--http" in rest:
        rest = rest[:rest.index("--http")]  # launch() adds --http --host H --port 0: only HTTP servers here
    if kind == "flood-stdio":
        flood_stdio(int(rest[0]), int(rest[1]) if len(rest) > 1 else 200)
    elif kind == "flood-sse":
        flood_sse(int(rest[0]), int(rest[1]) if len(rest) > 1 else 200)
    elif kind == "chatter":
        chatter(int(rest[0]))
    elif kind == "big-event":
        big_event(int(rest[0]))
    elif kind == "files-portable":
        files_portable(rest)
    elif kind == "impatient":
        impatient(rest)
    elif kind == "loud":
        sizes = [int(arg) for arg in rest[1:] if arg != "--junk"]
        loud(json.loads(rest[0]), sizes[0] if sizes else 0, "--junk" in rest)
    else:
        raise SystemExit(f"unknown hostile server {kind!r}")
