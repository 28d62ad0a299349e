"""Start a server from the command line: the flags every bundled server shares, then the right runner.

Theory of operation
-------------------
Every bundled server ends with ``run(server)``; this module turns the command line into a transport::

    python servers/weather.py                      stdio (the default): one client, on stdin/stdout
    python servers/weather.py --http --port 8000   Streamable HTTP at http://127.0.0.1:8000/mcp
    ... --era dual|legacy|modern                   which protocol generations to speak (default dual)
    ... --http --auth http://127.0.0.1:9000        require OAuth access tokens (mcplab/auth/middleware.py)
    ... --http --tls-cert C.pem --tls-key K.pem    serve https:// instead
    ... --page-size 2                              two items per page of a list: the cursors show

A server with flags of its own (``files.py --root DIR``) builds on :func:`arguments` and passes the
parsed namespace to :func:`run`. A server started with no flags at all (how a client usually starts
one) runs with :data:`DEFAULTS` and never builds a parser: argparse, and the gettext it loads, would
cost every start-up more than a millisecond to learn nothing.

Before serving stdio, :func:`run` moves file descriptor 1: MCP messages keep a private duplicate of
the real stdout, and fd 1 itself is pointed at stderr. A stray ``print()`` in a tool, or a child
process writing to its stdout, then lands in the log instead of corrupting the message stream.

In the browser edition there are no processes: :func:`load` runs the server's file in the page with
:data:`HANDED_OVER` set, and :func:`run` hands it the server and its parsed flags instead of serving
(``place.py`` then serves them over memory pipes, ``streamable_http/in_page.py`` as an ASGI app).

The stdio runner is written on anyio; it runs on asyncio unless the environment variable
``MCPLAB_ASYNC_BACKEND=trio`` picks trio (the tests run a server both ways).

``--http`` hands over to ``server/streamable_http/``, imported only then (Starlette and uvicorn cost start-up
time a stdio server should not pay); it calls the same ``Server.handle``.

``--era``: ``legacy`` answers only the ``initialize`` handshake (2024-11-05 … 2025-11-25), ``modern``
only 2026-07-28 requests, and ``dual`` (the default) both: on stdio the first request decides for
the process, over HTTP each request decides for itself.
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
from collections.abc import Sequence
from types import MappingProxyType, SimpleNamespace
from typing import TYPE_CHECKING, Any

from mcplab.server.toolkit import Server

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

BACKEND_VARIABLE = "MCPLAB_ASYNC_BACKEND"  # the anyio backend of the stdio runner
BACKENDS = ("asyncio", "trio")

# What each shared flag is when it is not given: run() uses it as is when there are no flags at all,
# and arguments() gives the parser the same defaults.
DEFAULTS = MappingProxyType({
    "http": False, "host": "127.0.0.1", "port": 8000, "era": "dual", "diagnostics": False, "auth": None,
    "tls_cert": None, "tls_key": None, "ca": None, "ask_timeout": None, "log_level": "warning", "page_size": None,
})


# Set by place.py while it runs a server's file in this process: run() appends (server, flags) to the
# list and returns, and the page serves them over memory streams (transports/in_process.py).
HANDED_OVER: contextvars.ContextVar[list] = contextvars.ContextVar("mcplab_handed_over")


def arguments(description: str | None = None) -> argparse.ArgumentParser:
    """The flags every bundled server takes; add your own and pass the result to :func:`run`."""
    import argparse  # here, not at the top: a server started with no flags never parses any

    from mcplab.i18n import _, commandline

    commandline.speak_argparse()  # before the parser: usage:, options and its errors in the chosen language

    # A fixed width: the default asks shutil for the terminal's, an import that costs every start-up
    # a few milliseconds only to print --help.
    parser = argparse.ArgumentParser(description=description, formatter_class=lambda prog:
                                     argparse.RawDescriptionHelpFormatter(prog, width=100))
    parser.add_argument("--http", action="store_true", help=_("serve Streamable HTTP instead of stdio"))
    parser.add_argument("--host", help=_("HTTP address to listen on (default 127.0.0.1)"))
    parser.add_argument("--port", type=int, help=_("HTTP port (default 8000; 0 picks a free one)"))
    parser.add_argument("--era", choices=("dual", "legacy", "modern"),
                        help=_("protocol generations to speak (default dual)"))
    parser.add_argument("--diagnostics", action="store_true",
                        help=_("add the diagnostic tools the official conformance suite calls (test_*)"))
    parser.add_argument("--auth", metavar="ISSUER", help=_("with --http: require OAuth access tokens from this "
                        "authorization server (e.g. http://127.0.0.1:9000, see servers/auth.py)"))
    parser.add_argument("--tls-cert", help=_("with --http: serve HTTPS with this certificate (PEM)"))
    parser.add_argument("--tls-key", help=_("with --http: ... and this private key (PEM)"))
    parser.add_argument("--ca", help=_("CA bundle to trust for HTTPS to the authorization server"))
    parser.add_argument("--ask-timeout", type=float, metavar="SECONDS",
                        help=_("how long the client has to answer a question (sampling, elicitation, roots) "
                               "before it is cancelled (default {seconds:g})", seconds=Server.ask_timeout))
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"),
                        help=_("level of the log on stderr (default warning)"))
    parser.add_argument("--page-size", type=_page_size, metavar="N",
                        help=_("items per page of tools/list, resources/list, ... (default 50): "
                               "a small N makes the pages and their nextCursor visible"))
    parser.set_defaults(**DEFAULTS)  # the values run() uses when there are no flags at all
    return parser


def _page_size(text: str) -> int:
    """A page holds at least one item: a page of none would never reach the end of a list."""
    import argparse

    from mcplab.i18n import _

    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(_("expected a whole number of items, 1 or more, got {text!r}", text=text))
    return int(text)


def run(server: Server, args: Sequence[str] | argparse.Namespace | None = None, *, scopes: Any = None) -> None:
    """Parse the shared flags (``sys.argv`` unless given a list of flags or a parsed namespace) and serve
    until the client goes away.

    ``scopes``: the :class:`mcplab.auth.resource.ScopePolicy` that ``--auth`` enforces.
    """
    if args is None:
        args = sys.argv[1:]
    if isinstance(args, Sequence) and not args:  # no flags: the defaults, without building a parser
        args = SimpleNamespace(**DEFAULTS)
    elif isinstance(args, Sequence):
        args = arguments(server.info.get("title") or server.info["name"]).parse_args(args)
    if getattr(args, "ask_timeout", None) is not None:
        server.ask_timeout = args.ask_timeout
    if getattr(args, "page_size", None) is not None:
        server.page_size = args.page_size
    if getattr(args, "diagnostics", False):
        from mcplab.server import diagnostics

        diagnostics.add_to(server)
    if (taker := HANDED_OVER.get(None)) is not None:
        taker.append((server, args))
        return
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(),
                        format=f"{server.info['name']}: %(levelname)s %(name)s: %(message)s")
    if args.http:
        from mcplab.server.streamable_http import serve_http  # URL on stderr; exits when a piped stdin closes

        wrap = None
        if getattr(args, "auth", None):
            from mcplab.auth.middleware import wrapper

            wrap = wrapper(args.auth, scopes, verify=args.ca or True, name=server.info.get("title") or server.info["name"])
        tls = (args.tls_cert, args.tls_key) if getattr(args, "tls_cert", None) else None
        serve_http(server, host=args.host, port=args.port, era=args.era, tls=tls, wrap=wrap)
        return
    import anyio

    from mcplab.server.stdio import serve_stdio

    backend = os.environ.get(BACKEND_VARIABLE) or "asyncio"
    if backend not in BACKENDS:
        raise SystemExit(f"{BACKEND_VARIABLE}={backend!r}: expected one of {', '.join(BACKENDS)}")
    wire = os.dup(1)
    os.dup2(2, 1)  # from now on fd 1 is stderr: only `wire` reaches the client
    try:
        anyio.run(lambda: serve_stdio(server, stdout=wire, era=args.era), backend=backend)
    except KeyboardInterrupt:
        raise SystemExit(130) from None


def load(path: Path, flags: Sequence[str]) -> tuple[Server, argparse.Namespace]:
    """Run the server file ``path`` as ``python FILE FLAGS`` would (its folder first on ``sys.path``, its
    flags in ``sys.argv``) up to its ``run(server)``: the server and its parsed flags, nothing served."""
    import runpy  # here, not at the top: a server's start over stdio imports this module and never loads a file

    if not path.is_file():
        raise FileNotFoundError(f"no server file at {path}")
    taken: list = []
    token = HANDED_OVER.set(taken)
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv, sys.path[:0] = [str(path), *flags], [str(path.resolve().parent)]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:  # argparse said no (its message went to stderr), or the file exited itself
        raise ValueError(f"{path} {' '.join(flags)}: the server refused its flags (exit {exc.code})") from exc
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        HANDED_OVER.reset(token)
    if not taken:
        raise ValueError(f"{path} ended without calling mcplab.server.run(server): nothing to serve")
    return taken[0]
