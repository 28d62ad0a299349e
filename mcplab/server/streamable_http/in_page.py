"""Streamable HTTP in the page: the server's own ASGI app, called in process, at a URL with no socket.

Theory of operation
-------------------
In the browser edition (Pyodide) nothing can start a process or open a socket, so ``launch(argv)``
(process.py) hands over to :func:`launch` here, which does what ``python FILE --http`` would do,
in this process::

    launch(["python", "servers/weather.py", "--era", "modern"])
        the file run as __main__ until its run(server)     (runner.load, as place.py does)
        create_app(server, era=...)                         the app serve_http would give uvicorn
        its lifespan, in a task of the server's own         (asgi.run_lifespan)
        listen(...) → http://127.0.0.1:49152/mcp            the page's port table (transports/asgi.py)

The returned :class:`PageServer` has :class:`~mcplab.server.streamable_http.process.ServerProcess`'s
face: ``.url``, ``.stderr()`` (the same ``mcplab: serving NAME at URL`` banner, then the log
records of its own tasks, as its stderr would carry them), ``.stdout()`` (always empty, as
serve_http keeps it), ``.stop()`` (an exit code). Its replies are the app's, with a ``server``
header naming the host first, as uvicorn adds ``server: uvicorn``: here ``server: mcplab-in-page``
(:func:`host_headers`). The URL looks like a loopback one, so outputs
masked on a machine read the same in the page; no socket exists: its port only names the app in
the page's port table, and ``http(url)`` and the proxy reach it through the ASGI driver.

Every task of the server (its lifespan, each request's run of the app) is a child of one
:class:`~mcplab.transports.background.Background` the handle owns: ``stop()`` takes the URL out of
the table at once (a request after it is refused, as a closed port), lets the lifespan shut the app
down, then ends them all. ``stop()`` cannot wait (a cell calls it without ``await``): what is left
ends on the page's loop right after, and 0 is what a served server exits with. A request that comes
before the lifespan has started waits for it, as a connection queues on a listening socket.
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
import traceback
from pathlib import Path
from typing import Any, Sequence

import anyio

from mcplab.server import runner
from mcplab.server.streamable_http.address import MCP_PATH
from mcplab.transports.asgi import ASGIDriver, listen, run_lifespan, unlisten
from mcplab.transports.background import Background
from mcplab.transports.server_files import SERVING, Routed

__all__ = ["PageServer", "launch", "serve"]

PYTHONS = ("python", "python3", sys.executable)
SERVER_HEADER = b"mcplab-in-page"  # as uvicorn names itself in every reply, the page's host names itself
STARTUP_FAILED = 3  # uvicorn's exit code when the app's startup fails



class _Stderr(logging.Handler):
    """What the server's stderr would carry: its banner, then the log records and the printing of its own
    tasks (``SERVING`` is this in each of them, as for a server over stdio in the page)."""

    def __init__(self, name: str, level: int) -> None:
        super().__init__(level)
        self.text = ""
        self.setFormatter(logging.Formatter(f"{name}: %(levelname)s %(name)s: %(message)s"))

    def write(self, line: str) -> None:
        self.text += line + "\n"

    def put(self, data: bytes) -> None:  # what a Routed sys.stdout or sys.stderr hands on
        self.text += data.decode("utf-8", errors="replace")

    def emit(self, record: logging.LogRecord) -> None:
        if SERVING.get(None) is self:
            self.write(self.format(record))


class PageServer:
    """An ASGI app served in this page: ``url``, ``stderr()``, ``stdout()``, ``stop()``, as a ServerProcess."""

    process = None  # there is none: nothing to signal, no pid

    def __init__(self, app: Any, name: str, *, banner: str, level: int = logging.WARNING) -> None:
        self.app, self.name = app, name
        self.returncode: int | None = None
        self._tasks = Background()
        self._ready, self._started, self._stopping = anyio.Event(), anyio.Event(), anyio.Event()
        self._stderr = _Stderr(name, level)
        logging.getLogger().addHandler(self._stderr)
        # serve_http points stdout at stderr: a tool's print() is a line of the server's stderr
        self._routed = {stream: Routed(getattr(sys, stream), self._stderr, self._stderr)
                        for stream in ("stdout", "stderr")}
        for stream, routed in self._routed.items():
            setattr(sys, stream, routed)
        self.url = listen(ASGIDriver(self._serve, tasks=self._tasks), MCP_PATH)
        self._stderr.write(banner.format(name=name, url=self.url))
        self._tasks.start_soon(self._lifespan)

    async def _lifespan(self) -> None:
        SERVING.set(self._stderr)
        try:
            await run_lifespan(self.app, self._started, self._stopping)
        except Exception as exc:  # noqa: BLE001  (its stderr says why, as a process's would; it stops serving)
            self._stderr.write("".join(traceback.format_exception(exc)).rstrip("\n"))
            self.returncode = STARTUP_FAILED
            unlisten(self.url)
        finally:
            self._ready.set()
            self._tasks.close_soon()  # the app is shut down: what still runs of it ends too
            logging.getLogger().removeHandler(self._stderr)
            for stream, routed in self._routed.items():
                if getattr(sys, stream) is routed:
                    setattr(sys, stream, routed.replaced)
                else:  # another stream was put over it since: it stays, passing every write through
                    routed.owner = None

    async def _serve(self, scope: Any, receive: Any, send: Any) -> None:
        await _first(self._started, self._ready)  # started, or given up
        if not self._started.is_set():
            raise RuntimeError(f"{self.name} stopped before it started serving")
        SERVING.set(self._stderr)

        async def send_as_host(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": host_headers(message["status"], message.get("headers", ()))}
            await send(message)
        await self.app(scope, receive, send_as_host)

    def stderr(self) -> str:
        return self._stderr.text

    def stdout(self) -> str:
        return ""  # serve_http points stdout at stderr: nothing reaches it, not even a tool's print()

    def stop(self, timeout: float = 3.0) -> int | None:
        """Stop listening, shut the app down (on the loop, right after this call); the exit code."""
        unlisten(self.url)
        self._stopping.set()
        if self.returncode is None:
            self.returncode = 0
        return self.returncode

    def __enter__(self) -> PageServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<PageServer {self.url} {'running' if not self._stopping.is_set() else 'stopped'}>"


def host_headers(status: int, headers: Sequence[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """A reply's headers as an HTTP/1.1 host sends them (uvicorn with h11 does the same): its own name
    first, then the app's, then, for a body of no stated length, ``Transfer-Encoding: chunked``, true
    here too: the body comes as the app sends it, chunk by chunk, its length unknown until it ends."""
    names = {name.lower() for name, _ in headers}
    front = [] if b"server" in names else [(b"server", SERVER_HEADER)]
    framed = b"content-length" in names or b"transfer-encoding" in names or status in (204, 304) or status < 200
    return [*front, *headers, *([] if framed else [(b"Transfer-Encoding", b"chunked")])]


async def _first(*events: anyio.Event) -> None:
    """Wait until any of ``events`` is set."""
    async with anyio.create_task_group() as group:
        async def wait(event: anyio.Event) -> None:
            await event.wait()
            group.cancel_scope.cancel()
        for event in events:
            group.start_soon(wait, event)


def serve(app: Any, name: str, *, banner: str, level: int = logging.WARNING) -> PageServer:
    """Serve the ASGI ``app`` in this page; ``banner`` (with ``{name}`` and ``{url}``) opens its stderr."""
    return PageServer(app, name, banner=banner, level=level)


def launch(argv: str | Sequence[str], *, banner: str, cwd: str | None = None) -> PageServer:
    """``python FILE FLAGS --http``, in this page: the file's server, its ASGI app at an in-page URL;
    ``banner`` is the line serve_http prints (process.py's BANNER)."""
    from mcplab.server.streamable_http.app import create_app

    words = shlex.split(argv) if isinstance(argv, str) else [os.fspath(word) for word in argv]
    if len(words) < 2 or words[0] not in PYTHONS or not words[1].endswith(".py"):
        raise ValueError(f"expected a Python file to serve here, as ['python', 'FILE.py', FLAGS...], got {words!r}")
    server, flags = runner.load(Path(cwd or ".") / words[1], words[2:])
    for flag in ("auth", "tls_cert"):
        if getattr(flags, flag, None):
            raise ValueError(f"{words[1]} --{flag.replace('_', '-')}: not served in the page (no network, no "
                             "certificates); run this server on a machine")
    level = getattr(logging, str(flags.log_level).upper(), logging.WARNING)
    return serve(create_app(server, era=flags.era), server.info["name"], banner=banner, level=level)
