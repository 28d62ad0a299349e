"""Where the endpoint lives and how a host name is read: the path, the loopback names, a Host header's host.

Both halves of the runner need these and neither may pull in the other: ``process.py`` (binding and
launching, imported by every notebook that starts a server) warns of a non-loopback bind before Starlette
is ever loaded (and the file server refuses to be writable there without ``--auth``), and ``app.py`` (the Starlette app) checks each request's ``Host`` and ``Origin`` against
the same names (the DNS-rebinding defence, spec "basic/transports", Security Warning).
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["MCP_PATH", "LOOPBACK", "hostname"]

MCP_PATH = "/mcp"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def hostname(value: str) -> str | None:
    """The host part of a ``Host`` header or an origin: ``"[::1]:8000"`` → ``"::1"``."""
    try:
        return urlsplit(value if "//" in value else "//" + value).hostname
    except ValueError:
        return None
