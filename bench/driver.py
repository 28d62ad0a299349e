"""One client→server pair in a process of its own, timed on command: what bench/run.py alternates.

    python bench/driver.py CLIENT TRANSPORT ERA SERVER [--warmup N] [--cpus C/S]
        CLIENT     mcplab | sdk | raw          (raw: no MCP library, the floor's client)
        TRANSPORT  stdio | http
        ERA        legacy | modern
        SERVER     mcplab | sdk | floor | ts   (servers/weather.py, servers/weather_sdk.py, bench/floor.py, the
                                               TypeScript SDK's server-everything from npm, on Node)
        --cpus C/S the client runs on CPU C only and the server on CPU S only (Linux); without it the
                   system places both, and moves them as it likes

Why a process per pair: each client then carries only its own imports and heap, as it would in a
user's program (one library's garbage does not slow the other's collections), and the process's peak
memory is that client's. The driver imports nothing of the other library.

It talks to bench/run.py in JSON lines on stdin/stdout:

    driver → {"ready": true}                          connected, checked one answer, warmed up
    driver → {"unavailable": "REASON"}                cannot run this pair here (then exits)
    run.py → 500                                      time 500 sequential tools/call round trips
    driver → {"seconds": 0.21, "latencies_ns": [...]} (one line per command)
    run.py → (end of file)                            close the connection and report memory
    driver → {"client_peak_kib": ..., "server_peak_kib": ...}

Every round trip is ``tools/call get_weather {"city": "Beijing"}`` (the TypeScript server has no weather:
``tools/call echo {"message": "Beijing"}``, a shorter answer). While it waits for a command the
driver sleeps in its event loop, so a client's background tasks (keep-alives, SSE streams) still run.
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import AsyncExitStack
from typing import Any, Awaitable, Callable

import anyio

from harness import NotAvailable, children, launch_http, launch_ts_http, peak_kib, server_argv  # bench/harness.py

ARGUMENTS = {"city": "Beijing"}
EXPECTED = "Beijing: sunny"
# The one call timed per server: (tool, arguments, text the answer contains).
CALLS = {"ts": ("echo", {"message": "Beijing"}, "Echo: Beijing")}
WEATHER_CALL = ("get_weather", ARGUMENTS, EXPECTED)
MODERN_VERSION = "2026-07-28"
Call = Callable[[], Awaitable[Any]]


class Unavailable(Exception):
    pass


def say(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def open_pair(stack: AsyncExitStack, client: str, transport: str, era: str, server: str) -> Call:
    """Connect ``client`` to ``server``; return the one call the bench times. Text check included."""
    argv = server_argv(server, transport)
    tool, arguments, _ = CALLS.get(server, WEATHER_CALL)
    url = ""
    if transport == "http":
        launched = launch_ts_http() if server == "ts" else launch_http(argv)
        stack.callback(launched.stop)
        url = launched.url

    if client == "mcplab":
        from mcplab import Client

        if transport == "stdio":
            from mcplab import stdio as make_transport
            connection = make_transport(argv)
        else:
            from mcplab import http as make_transport
            connection = make_transport(url)
        try:
            ours = Client(connection, era=era)
        except ValueError as exc:  # an era this mcplab does not speak yet
            raise Unavailable(f"mcplab Client(era={era!r}): {exc}") from None
        await stack.enter_async_context(ours)

        async def call() -> str:
            return (await ours.call_tool(tool, arguments)).text
        return call

    if client == "sdk":
        from mcp import Client as SDKClient
        from mcp import StdioServerParameters

        target: Any = url
        if transport == "stdio":  # the whole environment: the SDK passes only a few variables otherwise
            target = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
        sdk = await stack.enter_async_context(SDKClient(target, mode="legacy" if era == "legacy" else MODERN_VERSION))

        async def call() -> str:
            return (await sdk.call_tool(tool, arguments)).content[0].text
        return call

    if client == "raw" and transport == "stdio":
        return await open_raw_stdio(stack, argv, tool, arguments)
    if client == "raw" and transport == "http":
        return await open_raw_http(stack, url, tool, arguments)
    raise SystemExit(f"unknown client {client!r}")


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def open_raw_stdio(stack: AsyncExitStack, argv: list[str], tool: str = "get_weather",
                         arguments: dict = ARGUMENTS) -> Call:
    """A JSON-lines client in a dozen lines: encode, write, read a line, decode. No MCP library.

    It opens with the legacy handshake (untimed) so that it can drive a real server too (bench/hotpath.py);
    lines that are not its answer (a real server's notifications) are read past.
    """
    import asyncio

    process = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE)

    async def close() -> None:
        process.stdin.close()
        await process.wait()
    stack.push_async_callback(close)
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n" + json.dumps(INITIALIZED).encode() + b"\n")
    while json.loads(await process.stdout.readline()).get("id") != INITIALIZE["id"]:
        pass
    ids = iter(range(1, 1 << 62))

    async def call() -> str:
        request = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}
        process.stdin.write(json.dumps(request).encode() + b"\n")
        await process.stdin.drain()
        while (reply := json.loads(await process.stdout.readline())).get("id") != request["id"]:
            pass
        return reply["result"]["content"][0]["text"]
    return call


async def open_raw_http(stack: AsyncExitStack, url: str, tool: str = "get_weather",
                        arguments: dict = ARGUMENTS) -> Call:
    """One JSON POST per round trip with httpx, keep-alive on. No MCP library; the legacy handshake
    (untimed) and its session header let it drive a real server too (bench/hotpath.py). An answer in
    an event stream (the TypeScript server's way) is read from its ``data:`` line."""
    import httpx

    headers = {"Accept": "application/json, text/event-stream"}
    http = await stack.enter_async_context(httpx.AsyncClient(headers=headers))
    opened = await http.post(url, json=INITIALIZE)
    opened.raise_for_status()
    if "mcp-session-id" in opened.headers:
        http.headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
    http.headers["MCP-Protocol-Version"] = INITIALIZE["params"]["protocolVersion"]
    await http.post(url, json=INITIALIZED)
    ids = iter(range(1, 1 << 62))

    async def call() -> str:
        request = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}
        response = await http.post(url, json=request)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return sse_answer(response.text, request["id"])["result"]["content"][0]["text"]
        return response.json()["result"]["content"][0]["text"]
    return call


def sse_answer(stream: str, request_id: int) -> dict:
    """The answer to ``request_id`` among an event stream's ``data:`` lines (one line per event here)."""
    for line in stream.splitlines():
        if line.startswith("data:") and (message := json.loads(line[5:])).get("id") == request_id:
            return message
    raise ValueError(f"no answer to request {request_id} in the event stream: {stream[:200]!r}")


def describe(exc: BaseException) -> str:
    """One line for an exception, looking inside exception groups (anyio task groups raise those)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


async def read_command() -> str | None:
    """The next line on stdin, waiting inside the event loop (None at end of file)."""
    line = b""
    while not line.endswith(b"\n"):
        await anyio.wait_readable(0)
        chunk = os.read(0, 1 << 10)
        if not chunk:
            return None
        line += chunk
    return line.decode().strip()


def pin(cpus: str) -> tuple[int, int]:
    """``C/S`` → (client CPU, server CPU), both checked to be ones this process may use."""
    if not hasattr(os, "sched_setaffinity"):
        raise Unavailable("--cpus needs os.sched_setaffinity (Linux)")
    client_cpu, server_cpu = (int(n) for n in cpus.split("/"))
    allowed = os.sched_getaffinity(0)
    if not {client_cpu, server_cpu} <= allowed:
        raise Unavailable(f"--cpus {cpus}: this process may use CPUs {sorted(allowed)} only")
    return client_cpu, server_cpu


async def main(client: str, transport: str, era: str, server: str, warmup: int, cpus: str | None) -> None:
    os.set_blocking(0, False)
    tool, _, expected = CALLS.get(server, WEATHER_CALL)
    async with AsyncExitStack() as stack:
        try:
            if cpus:  # the server inherits the CPU we have when it starts; then we move to ours
                client_cpu, server_cpu = pin(cpus)
                os.sched_setaffinity(0, {server_cpu})
            call = await open_pair(stack, client, transport, era, server)
            if cpus:
                os.sched_setaffinity(0, {client_cpu})
            answer = await call()
            if expected not in answer:
                raise Unavailable(f"unexpected answer to {tool}: {answer!r}")
        except (Unavailable, NotAvailable) as exc:
            say({"unavailable": str(exc)})
            return
        except Exception as exc:  # a pair that cannot connect is reported, not a crash of the whole bench
            say({"unavailable": describe(exc)})
            return
        for _ in range(warmup):  # first-call costs: imports, caches, connection pools
            await call()
        say({"ready": True})
        clock = time.perf_counter_ns
        while (command := await read_command()) is not None:
            latencies = []
            started = clock()
            for _ in range(int(command)):
                before = clock()
                await call()
                latencies.append(clock() - before)
            say({"seconds": (clock() - started) / 1e9, "latencies_ns": latencies})
        # The server is our only child (stdio: the client spawned it; HTTP: launch_http did); read its
        # VmHWM while it still runs. Not ru_maxrss, for it or for us: a process started by fork (or
        # vfork) and exec keeps its parent's high-water mark in ru_maxrss, so a small server started
        # by a big client would report the client's size.
        server_peak = max((peak_kib(pid) or 0 for pid in children()), default=0) or None
    say({"client_peak_kib": peak_kib(os.getpid()), "server_peak_kib": server_peak})


if __name__ == "__main__":
    args = sys.argv[1:]
    options: dict[str, str | None] = {"--warmup": "50", "--cpus": None}
    for flag in options:
        if flag in args:
            at = args.index(flag)
            options[flag] = args[at + 1]
            del args[at:at + 2]
    anyio.run(main, *args, int(options["--warmup"] or 50), options["--cpus"])
