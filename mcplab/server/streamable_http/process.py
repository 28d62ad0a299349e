"""Running the Streamable HTTP endpoint as a process: bind, serve, launch a child, stop it.

Theory of operation
-------------------
:func:`serve_http` is what ``python servers/weather.py --http`` ends up calling. It binds the socket
itself (port 0 picks a free one, with no race), prints ``mcplab: serving NAME at URL`` on stderr and
serves with uvicorn; nothing is written to stdout, not even a stray ``print()`` in a tool.

With stdin a pipe it exits when stdin reaches EOF, so a child of a notebook kernel dies with the
kernel (nbval ends kernels with SIGKILL: no cleanup code runs, but the pipe still closes). Run it
from a terminal, with ``</dev/null``, or with ``MCPLAB_HTTP_WATCHDOG=off`` to opt out.

:func:`launch` starts a server script that way, as a child whose stdin we hold, and returns once the
URL is printed: a :class:`ServerProcess` with ``.url``, what it wrote, and ``.stop()``. It waits
for an event, the printed URL or the child's exit; only a child that does neither within
``START_TIMEOUT`` is given up, and the error says the machine was slow, not that the server is wrong:
on a busy classroom machine (load 10, no bytecode cache) a start of 5 to 10 s is normal, and three
at once take longer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from typing import TYPE_CHECKING, Any, Sequence

import anyio

from mcplab import portable
from mcplab.i18n import _
from mcplab.server.streamable_http.address import LOOPBACK, MCP_PATH, hostname
from mcplab.wire.errors import ServerExited, TransportError
from mcplab.wire.versions import ServerEra

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from mcplab.server.toolkit import Server

__all__ = ["bind", "endpoint_url", "serve_http", "serve_app", "launch", "ServerProcess", "BANNER", "READY", "MCP_PATH"]

WATCHDOG_ENV = "MCPLAB_HTTP_WATCHDOG"
BANNER = "mcplab: serving {name} at {url}"
START_TIMEOUT = 60.0  # seconds for a child to print its URL: a verdict about a server never comes from a clock
READY = re.compile(r"mcplab: serving .* at (https?://\S+)\r?\n")  # the whole line: its end comes in a write of its own


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: the system picks a free one, with no race)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.listen(128)  # from here connections queue, even before uvicorn accepts them
    return sock


def endpoint_url(sock: socket.socket, scheme: str = "http") -> str:
    host, port = sock.getsockname()[:2]
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}{MCP_PATH}"


def serve_http(server: Server, *, host: str = "127.0.0.1", port: int = 8000, era: ServerEra = "dual",
               tls: tuple[str, str] | None = None, wrap: Any = None) -> None:
    """Serve ``server`` at ``http://HOST:PORT/mcp`` until interrupted (or until stdin closes, if it is a pipe).

    ``era``: ``"dual"`` serves legacy sessions and 2026-07-28 requests on the same URL, ``"legacy"``
    only sessions, ``"modern"`` only 2026-07-28 requests. ``tls``: (certificate, key) PEM files, to
    serve ``https://``. ``wrap(app, url)``: middleware around the app (``--auth`` puts the
    resource-server checks there, mcplab/auth/middleware.py).
    """
    from mcplab.server.streamable_http import create_app

    sock = bind(host, port)
    app = create_app(server, host=host, era=era)
    url = endpoint_url(sock, "https" if tls else "http")
    served = wrap(app, url) if wrap is not None else app
    if hostname(host) not in LOOPBACK:
        print(f"mcplab: warning: listening on {host}, reachable from other machines; a local server should bind "
              f"127.0.0.1. Host names allowed: {', '.join(sorted(app.state.endpoint.allowed_hosts))} "
              f"(add more with MCPLAB_ALLOWED_HOSTS)", file=sys.stderr, flush=True)
    os.dup2(2, 1)  # nothing reaches stdout, not even a stray print() in a tool
    try:
        asyncio.run(serve_app(served, sock, BANNER.format(name=server.info["name"], url=url), tls=tls))
    except KeyboardInterrupt:
        raise SystemExit(130) from None


async def serve_app(app: Starlette, sock: socket.socket, banner: str, *, tls: tuple[str, str] | None = None) -> None:
    """Serve an ASGI app on a bound socket with uvicorn (over TLS with ``tls``); print ``banner`` once ready."""
    import uvicorn

    from mcplab.server.streamable_http.deadlines import KEEP_ALIVE
    from mcplab.server.streamable_http.owner import protocol_for

    # log_config=None: uvicorn's own config sends access lines to stdout; ours sends everything to stderr.
    ssl = {"ssl_certfile": tls[0], "ssl_keyfile": tls[1]} if tls else {}
    # protocol_for: only the user who started the server may connect (owner.py), and a client that is too
    # slow to send its request is disconnected (deadlines.py).
    config = uvicorn.Config(app, log_config=None, access_log=False, timeout_graceful_shutdown=1, lifespan="on",
                            http=protocol_for(sock), timeout_keep_alive=KEEP_ALIVE, **ssl)
    runner = uvicorn.Server(config)
    if _stdin_is_pipe() and os.environ.get(WATCHDOG_ENV, "on").lower() not in ("0", "off", "no", "false"):
        _watch_stdin(asyncio.get_running_loop(), lambda: setattr(runner, "should_exit", True))
    async with anyio.create_task_group() as group:
        if await start_serving(group, runner, sock):
            print(banner, file=sys.stderr, flush=True)


async def start_serving(group: anyio.abc.TaskGroup, runner: Any, sock: socket.socket) -> bool:
    """Start ``runner`` (a ``uvicorn.Server``) serving on ``sock`` in ``group``; return once it accepts
    connections (True), or once it has stopped without ever doing so (False)."""
    ended = anyio.Event()

    async def serve() -> None:
        try:
            await runner.serve(sockets=[sock])
        finally:
            ended.set()

    group.start_soon(serve)
    while not runner.started and not ended.is_set():  # uvicorn says "started" with a flag only
        await anyio.sleep(0.005)
    return runner.started


def _stdin_is_pipe() -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(0).st_mode)
    except OSError:
        return False


def _watch_stdin(loop: asyncio.AbstractEventLoop, on_eof: Any) -> None:
    # Why a thread: as in server/stdio.py, a blocking read works on any stdin without touching its flags. The
    # parent holds the other end of the pipe; when it dies (even by SIGKILL) the read returns EOF.
    def watch() -> None:
        while True:
            try:
                if not os.read(0, 1 << 16):
                    break
            except OSError:
                break
        with contextlib.suppress(RuntimeError):  # the loop already closed: the server stopped by itself
            loop.call_soon_threadsafe(on_eof)

    threading.Thread(target=watch, name="mcplab-stdin-watchdog", daemon=True).start()


def _capture_file() -> Any:
    """A file for a child's stdout or stderr that we can read while the child still writes to it."""
    if hasattr(os, "pread"):
        return tempfile.TemporaryFile()
    # Windows has no pread, and a second handle to a delete-on-close file is refused: a named file,
    # read through a handle of our own (so the child's write offset is never moved), removed at stop().
    return tempfile.NamedTemporaryFile(prefix="mcplab-server-", suffix=".log", delete=False)


def _read_all(file: Any) -> str:
    if hasattr(os, "pread"):  # reads at offset 0 without moving the offset the child writes at
        data = os.pread(file.fileno(), 1 << 20, 0)
    else:
        with open(file.name, "rb") as again:
            data = again.read(1 << 20)
    return data.decode("utf-8", errors="replace")


class ServerProcess:
    """A server started by :func:`launch`: its ``url``, its ``process``, what it wrote; ``stop()`` ends it."""

    def __init__(self, process: subprocess.Popen, url: str, stderr_file: Any, stdout_file: Any) -> None:
        self.process, self.url = process, url
        self._stderr, self._stdout = stderr_file, stdout_file
        self._kept: dict[str, str] = {}  # what it wrote, kept when stop() closes the files

    def stderr(self) -> str:
        # "in", not "or": a child that wrote nothing kept "", and its file is closed by then
        return self._kept["stderr"] if "stderr" in self._kept else _read_all(self._stderr)

    def stdout(self) -> str:
        return self._kept["stdout"] if "stdout" in self._kept else _read_all(self._stdout)

    def stop(self, timeout: float = 3.0) -> int | None:
        """Close its stdin (the watchdog ends it), then SIGTERM, then SIGKILL; return the exit code."""
        process = self.process
        if process.stdin and not process.stdin.closed:
            with contextlib.suppress(OSError):
                process.stdin.close()
        for signal_it in (None, process.terminate, process.kill):
            if signal_it is not None:
                with contextlib.suppress(OSError):
                    signal_it()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout)
                break
        if not self._stderr.closed:
            self._kept = {"stderr": self.stderr(), "stdout": self.stdout()}
            for file in (self._stderr, self._stdout):
                file.close()
                if isinstance(file.name, str):  # a named capture file (Windows): ours to remove
                    with contextlib.suppress(OSError):
                        os.unlink(file.name)
        return process.returncode

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<ServerProcess {self.url} {'running' if self.process.poll() is None else 'exited'}>"


def launch(argv: str | Sequence[str], *, host: str = "127.0.0.1", timeout: float = START_TIMEOUT,
           env: dict[str, str] | None = None, cwd: str | None = None) -> ServerProcess:
    """Start a server script with ``--http --host HOST --port 0``; return once it prints its URL.

    Add ``--era modern`` (or ``legacy``) to ``argv`` to choose what it speaks.

    >>> server = launch(["python", "servers/weather.py"]); server.url   # doctest: +SKIP
    'http://127.0.0.1:40123/mcp'

    In the browser edition (no processes, no sockets) the same file's app is served in the page
    instead, with the same face (in_page.py); ``host``, ``timeout`` and ``env`` concern a child only.
    """
    from mcplab.transports import asgi

    if asgi.IN_BROWSER:
        from mcplab.server.streamable_http import in_page

        return in_page.launch(argv, banner=BANNER, cwd=cwd)
    argv = portable.command(argv)
    stderr_file, stdout_file = _capture_file(), _capture_file()
    # stdin is a pipe we hold: when this process dies, the server's watchdog sees EOF and it exits too.
    process = subprocess.Popen([*argv, "--http", "--host", host, "--port", "0"], stdin=subprocess.PIPE,
                               stdout=stdout_file, stderr=stderr_file, cwd=cwd, **portable.new_group(),
                               env={**os.environ, **(env or {})})
    child = ServerProcess(process, "", stderr_file, stdout_file)
    deadline = time.monotonic() + timeout
    while not (ready := READY.search(child.stderr())):
        if process.poll() is not None:
            raise ServerExited(f"{shlex.join(argv)} exited with code {process.returncode} before serving",
                               returncode=process.returncode, stderr_tail=child.stderr().splitlines()[-12:])
        if time.monotonic() > deadline:
            child.stop()
            raise TransportError(_("{command} did not print its URL within {seconds:g} s on this machine; this says "
                                   "nothing about the server; run the cell again (or close other work, or pass "
                                   "timeout=N)", command=shlex.join(argv), seconds=timeout),
                                 stderr_tail=child.stderr().splitlines()[-12:])
        time.sleep(0.01)
    child.url = ready.group(1)
    return child
