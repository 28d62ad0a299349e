"""The client side: one connection to one server (``client``), and many (``host``).

``client`` (:class:`Client`: requests, typed results, starting over), ``opening`` and ``eras``
(which era a server speaks, and how a connection opens in it), ``connection`` (responses matched
to requests by id), ``mrtr`` (the multi-round-trip loop of 2026-07-28), ``results`` (typed
results), ``host`` (many servers, one tool catalogue, the agent loop), ``agent`` (the catalogue as
function schemas, a scripted model), ``trust`` (what a host believes of its servers: flags, pins,
consent; pure).

Layer: above ``lifecycle`` and ``transports`` (and through them ``trace`` and ``wire``), which it
may import; beside ``server``, which it never imports (a client reaches a server only over a
transport). The notebook views, the exercises, the demo and the command line build on it.

``from mcplab.client import Client`` works as it always did; the names load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {"Client": "mcplab.client.client", "Host": "mcplab.client.host"}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
