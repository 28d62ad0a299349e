"""The server as its request handlers see it: what they read of a :class:`~mcplab.server.toolkit.Server`,
and the one lookup by URI that both ``resources/*`` and ``subscriptions/listen`` make.

Theory of operation
-------------------
The toolkit (``toolkit.py``) owns the handlers (``handlers.py``, ``modern.py``, ``subscriptions.py``)
and calls each with itself as ``server``. If the handlers named the ``Server`` class to type that
argument, each would import the toolkit that imports it, and the four modules would go round. They
name :class:`ServerView` instead: the attributes they read, and nothing else. Imports inside the server
package then point one way, from the toolkit down::

    toolkit → modern → handlers, subscriptions → view → catalogue, context → content, mrtr, schema

:func:`find_resource` lives here for the same reason: ``resources/read`` and a ``subscriptions/listen``
filter both need it, and the second must not import the first's module to reach it.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcplab.wire.errors import InvalidParams, JSONRPCError, ResourceNotFound
from mcplab.server.catalogue import Prompt, Resource, ResourceTemplate, Tool
from mcplab.server.context import ClientState

__all__ = ["ServerView", "MAX_URI", "find_resource", "not_found"]

MAX_URI = 4096  # characters in a URI a connection keeps (resources/subscribe)


class ServerView(Protocol):
    """What the handlers read of a server (``toolkit.Server`` is the one there is)."""

    info: dict[str, str]                   # serverInfo
    instructions: str | None
    page_size: int
    max_subscriptions: int
    tools: dict[str, Tool]
    resources: dict[str, Resource]
    templates: list[ResourceTemplate]
    prompts: dict[str, Prompt]
    listeners: list[Any]                   # subscriptions.Subscription: that module builds on this one
    memo: dict[Any, Any]                   # facts derived from the catalogue (modern.py)
    ttl_ms: dict[str, int]
    cache_scope: dict[str, str]

    @property
    def state_key(self) -> bytes: ...

    def capabilities(self, version: str, *, pushes: bool = True) -> dict[str, Any]: ...

    def page(self, items: list[Any], cursor: Any, what: str) -> tuple[list[Any], str | None]: ...


def find_resource(server: ServerView, uri: str, conn: ClientState) -> tuple[Resource | ResourceTemplate, dict[str, str]]:
    """The resource with this exact URI, else the first template that matches it (with its variables)."""
    if uri in server.resources:
        return server.resources[uri], {}
    for template in server.templates:
        variables = template.match(uri)
        if variables is not None:
            return template, variables
    raise not_found(uri, conn)


def not_found(uri: str, conn: ClientState) -> JSONRPCError:
    # Legacy revisions answer a missing resource with -32002; 2026-07-28 (SEP-2164) with -32602.
    error = ResourceNotFound if conn.era == "legacy" else InvalidParams
    return error(f"Resource not found: {uri}", data={"uri": uri})
