"""mcplab: a teaching lab for the Model Context Protocol, with every message on the wire.

The package is layered, and its folders say how (see the README's module map): ``wire`` is what
a message is (JSON-RPC, framing, versions, errors; sans-IO), ``lifecycle`` the handshake and
request stamping, ``transports`` how bytes reach a server, ``client`` and ``server`` the two sides,
``trace`` what crossed the wire; above them the notebook views, the economics, the graders and the
exercises, and at the top the ``mcplab`` command.

``import mcplab`` loads nothing heavy, not even :mod:`typing` (hence ``object`` in the hints
below): the names below are resolved on first use, so a notebook or a server process starts fast.
The exceptions come the same way (``mcplab.RemoteError``, ``mcplab.TransportError`` ...: the
tree in ``wire/errors.py``).
"""

from __future__ import annotations

import sys
from importlib import import_module

__version__ = "0.1.0"  # the one place the version is written: pyproject.toml reads it from here

# Every exception a caller may catch, from the one tree in wire/errors.py: ``except mcplab.RemoteError``.
_ERRORS = ("MCPLabError", "JSONRPCError", "ParseError", "InvalidRequest", "MethodNotFound", "InvalidParams",
           "InternalError", "ResourceNotFound", "HeaderMismatch", "MissingRequiredClientCapability",
           "UnsupportedProtocolVersion", "RemoteError", "LocalProtocolError", "RemoteProtocolError",
           "TransportError", "ServerExited", "HTTPStatusError", "SessionExpired", "AuthorizationError",
           "RequestTimeout")

# name → (module, attribute): resolved lazily by __getattr__ (PEP 562).
_LAZY = {
    "Client": ("mcplab.client.client", "Client"),
    "Host": ("mcplab.client.host", "Host"),
    "stdio": ("mcplab.transports.stdio", "stdio"),
    "http": ("mcplab.transports.http", "http"),
    "Trace": ("mcplab.trace.recorder", "Trace"),
    "Server": ("mcplab.server.toolkit", "Server"),
    "set_language": ("mcplab.i18n", "set_language"),
    **{name: ("mcplab.wire.errors", name) for name in _ERRORS},
}

__all__ = ["__version__", *_LAZY]

if sys.platform == "emscripten":  # the browser edition: see portable.allow_past_deadlines
    from pyodide.webloop import WebLoop

    from mcplab.portable import allow_past_deadlines

    allow_past_deadlines(WebLoop)


def __getattr__(name: str) -> object:
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'mcplab' has no attribute {name!r}") from None
    value = getattr(import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
