"""The one place for how bench/ measures: spawn, time, alternate rounds, summarise. Standard library only.

Theory of operation
-------------------
A shared 2-core machine is noisy, so no number here comes from one long run. Every measurement is
a set of *contenders* (this project, the official SDK, the floor) that take turns, round after round,
in an order that rotates each round: a burst of load from elsewhere then hits all of them alike, and
nobody always runs first (warm caches) or last. Each contender's rounds are summarised by the
median; latencies are pooled across rounds for p50/p99.

A measurement whose prerequisites are missing raises :class:`NotAvailable` with the reason, and the
report prints "not available: <reason>" in its place instead of failing the whole run.

Bytecode: this environment may set PYTHONDONTWRITEBYTECODE, which would make every start of our
servers recompile mcplab (the SDK's modules came precompiled from pip). :func:`python_env` gives
child processes a private, persistent bytecode cache (``bench/results/pycache``) instead, as a
classroom install would have; the first, untimed round of each measurement warms it.

Peak memory is the kernel's high-water mark of resident memory, ``VmHWM`` in /proc/PID/status, read
just before a process is told to exit. Not ``ru_maxrss``: a process started by fork (or vfork) and
exec keeps its parent's high-water mark there, so a small server started by a big client would
report the client's size.
"""

from __future__ import annotations

import math
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
PYTHON = sys.executable

WEATHER = [PYTHON, str(ROOT / "servers" / "weather.py")]
SDK_WEATHER = [PYTHON, str(ROOT / "servers" / "weather_sdk.py")]  # the same server on the official SDK
FLOOR = [PYTHON, str(BENCH / "floor.py")]
SERVERS = {"mcplab": WEATHER, "sdk": SDK_WEATHER, "floor": FLOOR,
           "floor-asyncio": [*FLOOR, "--loop", "asyncio"], "floor-anyio": [*FLOOR, "--loop", "anyio"],
           "floor-anyio-tasks": [*FLOOR, "--loop", "anyio-tasks"]}
# The TypeScript SDK's reference server, from npm into .node/ by `make test`; run by the Node installed
# beside it (node@22), else the one on PATH. Its transport is its first argument.
NODE_DIR = ROOT / ".node"
NODE_BIN = NODE_DIR / "node_modules" / ".bin"
EVERYTHING = ROOT / ".node" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
TS_TRANSPORTS = {"stdio": "stdio", "http": "streamableHttp"}
# It listens on every interface, on $PORT; this preload keeps it on 127.0.0.1 and prints the port.
LOOPBACK_PRELOAD = ROOT / "tests" / "conformance" / "loopback.cjs"

URL = re.compile(r"serving .* at (http://\S+)")
LOOPBACK_URL = re.compile(r"loopback: listening on (\S+:\d+)")


class NotAvailable(Exception):
    """A measurement that cannot run here yet; the message says why."""


# --- statistics ----------------------------------------------------------------------------------

def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile, ``p`` in 0..100 (p50 of [1, 2, 3, 4] is 2, not 2.5)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def summary(values: Sequence[float]) -> dict[str, float]:
    """Median and spread of one contender's samples."""
    return {"median": statistics.median(values), "p10": percentile(values, 10),
            "p90": percentile(values, 90), "n": len(values)}


def ratio(ours: float | None, theirs: float | None) -> float | None:
    if ours is None or theirs is None or theirs == 0 or math.isnan(ours) or math.isnan(theirs):
        return None
    return ours / theirs


def alternate(rounds: int, contenders: dict[str, Callable[[], float]], *, warmup: int = 1
              ) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Run every contender once per round, the order rotating each round; ``warmup`` rounds are dropped.

    Returns the samples per contender, and why for each contender that raised NotAvailable (it is
    left out of the later rounds; the others go on).
    """
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    unavailable: dict[str, str] = {}
    for r in range(warmup + rounds):
        names = [name for name in contenders if name not in unavailable]
        shift = r % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            try:
                value = contenders[name]()
            except NotAvailable as exc:
                unavailable[name] = str(exc)
                samples[name] = []
                continue
            if r >= warmup:
                samples[name].append(value)
    return samples, unavailable


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --- processes -----------------------------------------------------------------------------------

def python_env() -> dict[str, str]:
    """The environment for every child: ours, plus a persistent private bytecode cache."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(RESULTS / "pycache")
    env.setdefault("PYTHONHASHSEED", "0")  # the same dict layouts every run: a little less noise
    return env


def peak_kib(pid: int) -> int | None:
    """The process's resident-memory high-water mark (VmHWM) in KiB, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def children(pid: int | None = None) -> list[int]:
    """Direct children of ``pid`` (default: this process), from /proc."""
    pid = os.getpid() if pid is None else pid
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as listing:
                found += [int(p) for p in listing.read().split()]
    except OSError:
        pass
    return found


def stop(process: subprocess.Popen, timeout: float = 5.0) -> None:
    """Close stdin (our servers exit on EOF), then terminate, then kill."""
    if process.stdin and not process.stdin.closed:
        try:
            process.stdin.close()
        except OSError:
            pass
    for end in (None, process.terminate, process.kill):
        if end is not None:
            end()
        try:
            process.wait(timeout)
            return
        except subprocess.TimeoutExpired:
            continue


def node() -> str:
    """The Node that runs the TypeScript server, or NotAvailable saying what is missing."""
    if not EVERYTHING.exists():
        raise NotAvailable("@modelcontextprotocol/server-everything is not installed in .node/ "
                           "(`make test` installs it)")
    found = NODE_BIN / "node" if (NODE_BIN / "node").exists() else shutil.which("node")
    if found is None:
        raise NotAvailable("Node is not installed (`make test` installs node@22 into .node/)")
    return str(found)


def npx() -> list[str]:
    """server-everything started the way its README and most MCP host configurations start it: through
    npx, here from the copy in .node/ (run with ``cwd=NODE_DIR``; ``--no-install``: never the network).
    npx first resolves the package, then starts Node: that is part of what a user waits for."""
    node()  # the same prerequisites, said the same way
    found = shutil.which("npx")
    if found is None:
        raise NotAvailable("npx is not on PATH (it comes with npm)")
    return [found, "--no-install", "@modelcontextprotocol/server-everything", "stdio"]


def server_argv(name: str, transport: str = "stdio") -> list[str]:
    """How to start server ``name`` (mcplab, sdk, floor, ts, ts-npx); the Python ones take ``--http`` later."""
    if name == "ts":
        return [node(), str(EVERYTHING), TS_TRANSPORTS[transport]]
    if name == "ts-npx":
        return npx()
    return SERVERS[name]


@dataclass
class HTTPServer:
    process: subprocess.Popen
    url: str

    def stop(self) -> None:
        stop(self.process)


def launch_http(argv: Sequence[str], *, env: dict[str, str] | None = None, timeout: float = 30.0) -> HTTPServer:
    """Start ``argv --http --port 0``; return once it prints ``serving NAME at URL`` on stderr.

    stderr goes to a file, never a pipe: nobody reads a pipe once the URL is known, and a server
    that logs into a full pipe would stall in the middle of a measurement.
    """
    return _serving([*argv, "--http", "--host", "127.0.0.1", "--port", "0"], env, timeout,
                    f"{Path(argv[-1]).name} --http", URL, "{}")


def launch_ts_http(timeout: float = 30.0) -> HTTPServer:
    """Start the TypeScript server over Streamable HTTP on 127.0.0.1 and a port the system picks."""
    env = {**python_env(), "PORT": "0", "MCPLAB_LOOPBACK_REPORT": "1",
           "NODE_OPTIONS": f"--require {LOOPBACK_PRELOAD}"}
    return _serving(server_argv("ts", "http"), env, timeout, "server-everything streamableHttp", LOOPBACK_URL,
                    "http://{}/mcp")


def _serving(argv: list[str], env: dict[str, str] | None, timeout: float, name: str, banner: re.Pattern,
             url: str) -> HTTPServer:
    """Start ``argv``; return once its stderr matches ``banner`` (group 1 put into ``url``)."""
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log,
                               env=env if env is not None else python_env())
    deadline = time.monotonic() + timeout
    with log:
        while time.monotonic() < deadline and process.poll() is None:
            if match := banner.search(text := os.pread(log.fileno(), 1 << 16, 0).decode("utf-8", "replace")):
                return HTTPServer(process, url.format(match.group(1)))
            time.sleep(0.005)
        text = os.pread(log.fileno(), 1 << 16, 0).decode("utf-8", "replace")
    stop(process)
    tail = " | ".join(text.strip().splitlines()[-3:]) or "nothing on stderr"
    raise NotAvailable(f"{name} printed no URL ({tail})")


class Lines:
    """Whole lines from a child's pipe, with a timeout per line (select on the raw fd, our own buffer)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer = fd, b""

    def read(self, timeout: float) -> str | None:
        """The next line without its newline, or None at EOF or after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode("utf-8", "replace")


def flag(name: str, default: str) -> str:
    """The value after ``name`` on the command line (the comparison servers take no other flags)."""
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args[:-1] else default


def serve_uvicorn(app, name: str, host: str, port: int) -> None:
    """Serve an ASGI app the way mcplab's HTTP servers do, for the comparison and floor servers:
    bind first (port 0 picks a free one), print ``mcplab: serving NAME at URL`` on stderr once
    uvicorn accepts connections, and exit when a piped stdin reaches end of file."""
    import asyncio
    import socket
    import threading

    import uvicorn

    # proto=IPPROTO_TCP, not socket.create_server's 0: asyncio sets TCP_NODELAY on accepted sockets only
    # when proto says TCP, and without it Nagle holds the response body behind its headers until the
    # client's delayed ACK: about 40 ms a round trip.
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         proto=socket.IPPROTO_TCP)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, timeout_graceful_shutdown=1))

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def watch_stdin() -> None:  # a thread: a blocking read ends with the parent, whatever stdin is
            while os.read(0, 1 << 16):
                pass
            loop.call_soon_threadsafe(setattr, server, "should_exit", True)

        threading.Thread(target=watch_stdin, daemon=True).start()
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not serving.done():
            await asyncio.sleep(0.005)
        bound_host, bound_port = sock.getsockname()[:2]
        print(f"mcplab: serving {name} at http://{bound_host}:{bound_port}/mcp", file=sys.stderr, flush=True)
        await serving

    asyncio.run(main())
