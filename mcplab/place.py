"""Where a lab runs: one decision, taken here, so that a lab's cells read the same on a machine and in a page.

Theory of operation
-------------------
On a machine a bundled server is a child process, spoken to over its stdin and stdout. In the
browser edition (JupyterLite, on Pyodide) nothing can start a process, so the same server file runs
in the page instead, and its lines travel over memory streams::

    local(["python", "servers/weather.py", "--era", "modern"])
        on a machine   stdio(argv)                      a child process (transports/stdio.py)
        in the page    the file run here, its run()     a task of the page's loop
                       handing over server and flags    (transports/in_process.py)

Either way the client sees the same frames in the same trace. To run the file in the page,
:func:`in_process` executes it as ``__main__`` (its own folder first on ``sys.path``, its flags in
``sys.argv``, as ``python FILE FLAGS`` would) with ``runner.HANDED_OVER`` set: the ``run(server)``
every bundled server ends with then hands the server and its parsed flags back instead of serving,
and :func:`~mcplab.server.stdio.serve_lines` serves them. Each call runs the file afresh, so each
connection has a server of its own, as each process would.

``python -c CODE`` runs CODE here as ``__main__`` in a task of its own, as a one-line server the
labs use to show a process's ways: what it prints on ``sys.stderr`` is its stderr, what it prints
on ``sys.stdout`` goes to the client, ``sys.exit(3)`` is its exit code 3, and ``sys.exit("why")``
prints why on its stderr and exits 1, as CPython does.

What only a process has differs, and says so: the server's stderr is its log records and what its
own tasks print; SIGKILL (:func:`kill`) is a cancel of its task, and SIGTERM is told to the server,
which stops as ``serve_stdio`` does on SIGTERM; ``--http`` is not a child here (Streamable HTTP
in the page goes through the server's ASGI app in process).

:func:`web` is the one client a lab's raw HTTP requests go through: httpx over the network on a
machine, and in the page the same httpx calling the apps served there (transports/asgi.py).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from mcplab.server import runner
from mcplab.transports.in_process import InProcessTransport, code_server

__all__ = ["IN_BROWSER", "local", "in_process", "kill", "web"]

IN_BROWSER = sys.platform == "emscripten"  # Pyodide, in a page
PYTHONS = ("python", "python3", sys.executable)


def local(argv: str | Sequence[str], **options: Any) -> Any:
    """The server ``argv`` starts, the way this place allows: a child process over stdio on a machine,
    the same file in this process in the browser. ``options`` go to the transport."""
    if IN_BROWSER:
        return in_process(argv, **options)
    from mcplab.transports.stdio import stdio

    return stdio(argv, **options)


def kill(transport: Any, number: int) -> None:
    """Send signal ``number`` to the server ``transport`` started: ``os.kill(pid, number)`` for a child
    process; for a server in this process (a task has no pid), SIGKILL cancels its task and SIGTERM asks
    a bundled server to stop, as its process would on SIGTERM (``InProcessTransport.send_signal``)."""
    if isinstance(transport, InProcessTransport):
        transport.send_signal(number)
    elif getattr(transport, "pid", None) is None:
        raise ValueError(f"{type(transport).__name__} has no server process to signal (not open, or not a child)")
    else:
        os.kill(transport.pid, number)


def in_process(argv: str | Sequence[str], **options: Any) -> InProcessTransport:
    """``python FILE FLAGS`` run in this process: its server, served over memory streams; or
    ``python -c CODE``: CODE run in this process, its stdin and stdout those streams."""
    import shlex

    words = shlex.split(argv) if isinstance(argv, str) else [os.fspath(word) for word in argv]
    if words[:2] in ([python, "-c"] for python in PYTHONS):
        if len(words) != 3:
            raise ValueError(f"expected ['python', '-c', CODE] with no arguments after CODE (in this process "
                             f"sys.argv is the notebook's), got {words!r}")
        return InProcessTransport(code_server(words[2]), words, name="python -c", prints="wire", **options)
    if len(words) < 2 or words[0] not in PYTHONS or not words[1].endswith(".py"):
        raise ValueError(f"expected a Python file to run here, as ['python', 'FILE.py', FLAGS...], got {words!r}")
    printed = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(printed[0]), contextlib.redirect_stderr(printed[1]):
            server, flags = runner.load(Path(words[1]), words[2:])
    except BaseException:  # refused: what it printed (argparse's usage) is the notebook's to see, as before
        sys.stdout.write(printed[0].getvalue())
        sys.stderr.write(printed[1].getvalue())
        raise
    if getattr(flags, "http", False):
        raise ValueError(f"{words[1]} --http: a server in this process has no port; "
                         "over Streamable HTTP its ASGI app is called in process instead")
    from mcplab.server.stdio import serve_lines

    async def serve(read: Any, write: Any) -> None:  # as serve_stdio: until the end of input, or SIGTERM
        await serve_lines(server, read, write, era=flags.era, stop_on=transport.sigterm.wait)
    level = getattr(logging, str(flags.log_level).upper(), logging.WARNING)
    # What the file printed while it loaded, before run(): a process's real stdout and stderr had it.
    before = tuple(stream.getvalue().encode("utf-8") for stream in printed)
    transport = InProcessTransport(serve, words, name=server.info["name"], level=level, printed=before,
                                   on_sigterm="stop", **options)
    return transport


def web(**options: Any) -> Any:
    """An ``httpx.AsyncClient`` for raw HTTP requests, the way this place allows: over the network on a
    machine; in the browser to the servers launched in the page (their ASGI apps, no socket).

    >>> reply = await web().post(url, json=hello, headers=base)       # doctest: +SKIP
    """
    import httpx

    if IN_BROWSER:
        from mcplab.transports.asgi import PageNetwork

        options.setdefault("transport", PageNetwork())
    return httpx.AsyncClient(**options)
