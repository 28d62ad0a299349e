"""Streamable HTTP, server side: the ``/mcp`` endpoint in either era, and running it as a process.

``app`` (the Starlette app: Host/Origin checks, the choice of era per request, the legacy
sessions), ``session`` (one legacy session), ``exchange`` (one 2026-07-28 request), ``header_checks``
(a modern request's headers against its body), ``replies`` (refusals, JSON replies, event streams),
``deadlines`` (slow clients), ``owner`` (only the user who started a server may connect, and no request
may say its length twice), ``process`` (``serve_http``, and ``launch``: a server script as a child
whose URL we wait for), ``in_page`` (``launch`` in the browser edition: the
file's app served in the page through the ASGI driver, no socket), ``address`` (the path, the loopback names and a Host header's host, which both
``app`` and ``process`` use).

Layer: part of the server side (the rest of ``mcplab.server``, ``wire``, ``portable``, the
resource-server checks of ``auth`` that ``--auth`` wraps around the app, and the page's ASGI driver and
port table, ``transports.asgi``); it never imports the client side.

``from mcplab.server.streamable_http import launch`` loads only the process module; Starlette and
uvicorn are imported when a server actually serves.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {
    "launch": "mcplab.server.streamable_http.process",
    "ServerProcess": "mcplab.server.streamable_http.process",
    "serve_http": "mcplab.server.streamable_http.process",
    "create_app": "mcplab.server.streamable_http.app",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
