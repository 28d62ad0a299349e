"""The modern era (MCP 2026-07-28) on the server: no handshake, every request on its own. Sans-IO.

Theory of operation
-------------------
A modern request carries in ``params._meta`` everything a legacy ``initialize`` used to say once::

    {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",          required
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}, required (may be {})
        "io.modelcontextprotocol/clientInfo": {"name": "...", "version": "..."},  optional
        "io.modelcontextprotocol/logLevel": "info"}}}                      optional: no level, no log

:func:`answer` serves one such request, checking in this order (spec "basic" and "versioning"):

1. ``initialize`` → -32601: the handshake does not exist in 2026-07-28; ``data.supported`` names the
   versions this server speaks, the one hint a legacy client can show its user;
2. the envelope (:func:`read_meta`): a required key missing or malformed → -32602 (HTTP 400);
3. the version (:func:`check_version`): not one this server speaks → -32022 with
   ``data: {supported, requested}`` (HTTP 400);
4. the method: unknown, removed in 2026-07-28 (``ping``, ``logging/setLevel``,
   ``resources/subscribe``/``unsubscribe``) or outside the server's capabilities → -32601 (HTTP 404);
5. the handler (handlers.py, shared with the legacy era) runs on a per-request view of the connection,
   built from the envelope and never stored: no request can see another's capabilities.

Every result then gets ``resultType`` (``"complete"``, or ``"input_required"`` when a tool asked the
client something: mrtr.py), ``_meta["io.modelcontextprotocol/serverInfo"]``, and, on
``server/discover``, the four lists and ``resources/read``, the caching hints ``ttlMs`` and
``cacheScope`` (spec "server/utilities/caching").

Which era a message belongs to (:func:`era_for`): a request carrying ``_meta`` protocolVersion, or
``server/discover``, or an HTTP ``MCP-Protocol-Version`` that is not a legacy revision, is modern;
``initialize`` without that envelope is legacy; anything else does not decide (a legacy server would
answer it before ``initialize``). Over HTTP every request decides for itself. Over stdio the first
request that is *served* decides for the whole process (spec "versioning", dual-era servers): a
successful ``initialize``, or a modern request that passed checks 2 and 3. A failed probe therefore
leaves the client free to fall back to ``initialize`` on the same pipe.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from mcplab.lifecycle import OPERATING, SERVER, RoleState
from mcplab.wire.errors import InternalError, InvalidParams, InvalidRequest, MethodNotFound, UnsupportedProtocolVersion
from mcplab.wire.jsonrpc import Message, Request
from mcplab.server import content, mrtr, subscriptions
from mcplab.server.context import LOG_LEVELS, ClientState
from mcplab.server.handlers import REQUESTS
from mcplab.server.view import ServerView
from mcplab.wire.versions import (
    LEGACY_VERSIONS, MODERN_VERSIONS, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION, META_SERVER_INFO, Era, ServerEra,
)


REMOVED = {
    "ping": "a modern client learns a server is alive from any answer",
    "logging/setLevel": "a request opts in to log messages with _meta[\"io.modelcontextprotocol/logLevel\"]",
    "resources/subscribe": "subscribe with subscriptions/listen and notifications.resourceSubscriptions",
    "resources/unsubscribe": "a subscription ends when its subscriptions/listen request is cancelled",
}
"""Legacy methods 2026-07-28 removed, and what replaced each (they answer -32601)."""

CACHEABLE = ("server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list",
             "resources/read")
CACHE_SCOPES = ("public", "private")
# Beginner-safe defaults (spec "server/utilities/caching", "Choosing a Cache Scope"). What the server's
# own code defines (its versions, tools, prompts, templates) is the same for every caller: public, and
# fresh for minutes. Resources are data: a note, a file, a to-do list changes under the client and may
# belong to one user, so a resource list or read is private and immediately stale (``ttlMs`` 0) until
# the author marks it otherwise: ``Server(ttl_ms={"resources/read": 60_000}, cache_scope="public")``.
DEFAULT_TTL_MS = {"server/discover": 3_600_000, "tools/list": 300_000, "prompts/list": 300_000,
                  "resources/list": 0, "resources/templates/list": 300_000, "resources/read": 0}
"""How long a client may reuse each result (``ttlMs``); a ``Server`` may override any of them."""
DEFAULT_CACHE_SCOPE = {"server/discover": "public", "tools/list": "public", "prompts/list": "public",
                       "resources/list": "private", "resources/templates/list": "public",
                       "resources/read": "private"}
"""Who may keep each result (``cacheScope``); a ``Server`` may override any of them."""


def cache_hints(ttl_ms: dict[str, int] | None, cache_scope: str | dict[str, str] | None
                ) -> tuple[dict[str, int], dict[str, str]]:
    """The defaults with a server author's choices laid over them, each checked.

    ``cache_scope`` is one scope for every cacheable method, or a dict per method.

    >>> cache_hints({"resources/read": 60_000}, "public")[1]["resources/read"]
    'public'
    """
    if isinstance(cache_scope, str) and cache_scope not in CACHE_SCOPES:
        raise ValueError(f"cache_scope must be \"public\" or \"private\", got {cache_scope!r}")
    scopes = {m: cache_scope for m in CACHEABLE} if isinstance(cache_scope, str) else dict(cache_scope or {})
    for method in [*(ttl_ms or {}), *scopes]:
        if method not in CACHEABLE:
            raise ValueError(f"{method!r} has no caching hints; the cacheable results are {', '.join(CACHEABLE)}")
    for method, ttl in (ttl_ms or {}).items():
        if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:  # spec: ttlMs MUST be >= 0
            raise ValueError(f"ttl_ms[{method!r}] must be a whole number of milliseconds >= 0, got {ttl!r}")
    for method, scope in scopes.items():
        if scope not in CACHE_SCOPES:
            raise ValueError(f"cache scope for {method!r} must be \"public\" or \"private\", got {scope!r}")
    return {**DEFAULT_TTL_MS, **(ttl_ms or {})}, {**DEFAULT_CACHE_SCOPE, **scopes}


def era_for(message: Message, *, version_header: str | None = None) -> Era | None:
    """The era one incoming message belongs to: ``"modern"``, ``"legacy"``, or ``None`` (no evidence).

    >>> era_for(Request(1, "server/discover", {"_meta": {...}}))          → "modern"
    >>> era_for(Request(1, "initialize", {"protocolVersion": "2025-11-25", ...}))   → "legacy"
    >>> era_for(Request(1, "ping"))                                       → None

    ``version_header`` is the HTTP ``MCP-Protocol-Version``; over HTTP, ``None`` means legacy.
    """
    if isinstance(message, Request):
        meta = message.params.get("_meta") if isinstance(message.params, dict) else None
        if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
            return "modern"  # even on initialize: a modern client calling a method 2026-07-28 lacks
        if message.method == "server/discover":
            return "modern"
    if version_header is not None and version_header not in LEGACY_VERSIONS:
        return "modern"
    if isinstance(message, Request) and message.method == "initialize":
        return "legacy"
    return None


def supported_versions(eras: ServerEra) -> list[str]:
    """The revisions a server started with ``--era eras`` speaks, newest first."""
    versions = list(MODERN_VERSIONS) if eras != "legacy" else []
    return versions + (list(reversed(LEGACY_VERSIONS)) if eras != "modern" else [])


class RequestMeta(NamedTuple):  # a plain record: cheaper to define than a frozen dataclass
    """The per-request envelope of a modern request."""
    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None = None
    log_level: str | None = None


def read_meta(request: Request) -> RequestMeta:
    """The envelope of ``request``, or -32602 naming the key that is missing or malformed."""
    params = request.params if request.params is not None else {}
    if not isinstance(params, dict):
        raise InvalidParams(f"expected \"params\" to be an object for {request.method}, got an array")
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise InvalidParams(f"expected params._meta with {META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES}: "
                            f"in MCP 2026-07-28 every request carries them")
    version, capabilities = meta.get(META_PROTOCOL_VERSION), meta.get(META_CLIENT_CAPABILITIES)
    if not isinstance(version, str):
        raise InvalidParams(f"expected params._meta[\"{META_PROTOCOL_VERSION}\"], a revision string such as "
                            f"\"{MODERN_VERSIONS[-1]}\"")
    if not isinstance(capabilities, dict):
        raise InvalidParams(f"expected params._meta[\"{META_CLIENT_CAPABILITIES}\"], an object (may be empty): "
                            f"the capabilities the client offers for this request")
    info, level = meta.get(META_CLIENT_INFO), meta.get(META_LOG_LEVEL)
    if info is not None and not isinstance(info, dict):
        raise InvalidParams(f"expected params._meta[\"{META_CLIENT_INFO}\"] to be an object {{name, version}}")
    if level is not None and level not in LOG_LEVELS:
        raise InvalidParams(f"expected params._meta[\"{META_LOG_LEVEL}\"] to be one of {', '.join(LOG_LEVELS)}, "
                            f"got {level!r}")
    return RequestMeta(version, capabilities, info, level)


def check_version(meta: RequestMeta, eras: ServerEra = "dual") -> None:
    """-32022 unless this server speaks ``meta.protocol_version`` with a per-request envelope."""
    if meta.protocol_version in MODERN_VERSIONS and eras != "legacy":
        return
    supported = supported_versions(eras)
    hint = (f"; {meta.protocol_version} is a legacy revision: open with initialize to use it"
            if meta.protocol_version in LEGACY_VERSIONS and eras != "modern" else "")
    raise UnsupportedProtocolVersion(f"Unsupported protocol version: {meta.protocol_version} (this server speaks "
                                     f"{', '.join(supported)}){hint}",
                                     data={"supported": supported, "requested": meta.protocol_version})


def capabilities(server: ServerView, conn: ClientState) -> dict[str, Any]:
    """The server's capabilities in 2026-07-28: list changes only where ``subscriptions/listen`` works."""
    key = ("capabilities", subscriptions.can_listen(conn.peer))
    if key not in server.memo:  # every request needs them: worked out once per catalogue
        server.memo[key] = server.capabilities(MODERN_VERSIONS[-1], pushes=key[1])
    return server.memo[key]


# --- answering one request -------------------------------------------------------------------------

async def answer(server: ServerView, request: Request, conn: ClientState) -> dict[str, Any]:
    """The result of one modern request (or the JSON-RPC error it raises); see the module docstring."""
    method = request.method
    if method == "initialize":
        requested = request.params.get("protocolVersion") if isinstance(request.params, dict) else None
        locked = conn.version in MODERN_VERSIONS  # a dual-era stdio connection that opened with a modern request
        supported = supported_versions("modern" if locked else conn.eras)
        why = ("this connection already speaks 2026-07-28 (it opened with a 2026-07-28 request)" if locked
               else "2026-07-28 has no handshake")
        raise MethodNotFound(f"initialize is not part of MCP 2026-07-28: {why}; here the revisions spoken are "
                             f"{', '.join(supported)}",
                             data={"supported": supported, **({"requested": requested} if requested else {})})
    meta = read_meta(request)
    check_version(meta, conn.eras)
    # No handshake in 2026-07-28: every request stands alone, so its view is operating from the start.
    view = ClientState(conn.peer, era="modern", lifecycle=RoleState(SERVER, OPERATING),
                      version=meta.protocol_version, client_capabilities=meta.client_capabilities,
                      client_info=meta.client_info or {}, log_level=meta.log_level, eras=conn.eras)
    view.server_capabilities = capabilities(server, view)
    handler = _handler(method, view)
    if conn.era is None:  # a dual-era stdio connection decides on its first served request, for good
        conn.era, conn.version = "modern", meta.protocol_version
    params: dict[str, Any] = request.params  # type: ignore[assignment]  # read_meta checked it
    now = time.time()
    if method in mrtr.MRTR_METHODS:
        view.rounds = mrtr.read_retry(method, params, server.state_key, now)
    try:
        result = await handler(server, params, view, request)
    except mrtr.InputRequired as asked:
        if view.rounds is None:
            raise InternalError(f"{method} asked the client something, which only tools/call, resources/read "
                                f"and prompts/get may do") from None
        return _stamp(server, mrtr.input_required(view.rounds, asked.requests, method, params,
                                                  server.state_key, now), view)
    result = {"resultType": "complete", **result}
    if method in CACHEABLE:
        result["ttlMs"], result["cacheScope"] = server.ttl_ms[method], server.cache_scope[method]
    return _stamp(server, result, view)


def refuse_on_legacy(request: Request, conn: ClientState) -> None:
    """-32600 for a modern request on a stdio connection that opened with ``initialize``."""
    raise InvalidRequest(f"this connection opened with initialize and speaks {conn.version}; {request.method} "
                         f"with a 2026-07-28 envelope needs a connection of its own (start the server again)")


def _handler(method: str, view: ClientState) -> Any:
    if method in REMOVED:
        raise MethodNotFound(f"{method} was removed in MCP 2026-07-28: {REMOVED[method]}")
    entry = MODERN_ONLY.get(method) or REQUESTS.get(method)
    if entry is None:
        hint = " (it is a notification: send it without an \"id\")" if method.startswith("notifications/") else ""
        raise MethodNotFound(f"no method {method!r}{hint}")
    handler, capability = entry
    if capability and capability not in view.server_capabilities:
        raise MethodNotFound(f"{method} belongs to the {capability!r} capability, which this server does not offer")
    if method == "subscriptions/listen" and not subscriptions.can_listen(view.peer):
        raise MethodNotFound("subscriptions/listen needs a transport that can hold a stream open, and this one "
                             "cannot; this server announces no list changes here (see server/discover)")
    return handler


def _stamp(server: ServerView, result: dict[str, Any], view: ClientState) -> dict[str, Any]:
    # Spec "basic", per-response fields: a server SHOULD name itself in every result's _meta.
    if "server_info" not in server.memo:
        server.memo["server_info"] = content.for_version("implementation", server.info, MODERN_VERSIONS[-1])
    result["_meta"] = {**result.get("_meta", {}), META_SERVER_INFO: server.memo["server_info"]}
    return result


async def discover(server: ServerView, params: dict, conn: ClientState, request: Request) -> dict[str, Any]:
    """``server/discover``: the versions, capabilities and instructions of this server."""
    result: dict[str, Any] = {"supportedVersions": supported_versions(conn.eras),
                              "capabilities": conn.server_capabilities}
    if server.instructions:
        result["instructions"] = server.instructions
    return result


MODERN_ONLY = {"server/discover": (discover, None), "subscriptions/listen": (subscriptions.listen, None)}
"""Methods only the modern era has; the rest come from ``handlers.REQUESTS`` minus :data:`REMOVED`."""
