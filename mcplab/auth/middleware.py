"""``--auth``: the resource-server checks of resource.py around the Streamable HTTP app, as ASGI middleware.

Theory of operation
-------------------
:class:`Protect` wraps the app that serves ``/mcp`` and leaves it untouched. It answers two things
itself and passes everything else through::

    GET /.well-known/oauth-protected-resource/mcp   the Protected Resource Metadata (RFC 9728 §3)
    any request to /mcp                             401 / 403 unless the bearer token is good for it

The token is checked on every request (spec "Token Requirements": authorization in every HTTP
request, even within one session), before the MCP layer sees the body. To know which scopes a
``tools/call`` needs, the body is read here (up to the endpoint's own limit), then replayed
unchanged to the app, so the MCP layer keeps every refusal of its own (413, 400, 406 ...).

A request whose ``Host`` is not on the server's allow-list passes through untouched: the endpoint
refuses it with 403 (the DNS-rebinding defence) before any token matters. Tokens in the query string
are refused (OAuth 2.1 §5.1.1 lets them appear only in the ``Authorization`` header).

The metadata's ``resource`` and a challenge's ``resource_metadata`` are built from the server's own
address (scheme, port, path), never copied from ``Host``: a header another user forges (userinfo, a
path, another port, a quote) would otherwise be handed to the client as where to authorize. ``Host``
only picks which of the server's own names to use, when it is exactly ``name`` or ``name:port``.

A request that passed carries its Grant in the ASGI scope's ``state`` (``GRANT_KEY``), and who it
speaks for (``IDENTITY_KEY``): the token's issuer, client and subject. The endpoint binds a legacy
session to the identity of its ``initialize`` (app.py), so a session id never lends one client's
session to another.
"""

from __future__ import annotations

import json
import re
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qsl, urlsplit

from mcplab.auth.resource import PRM_WELL_KNOWN, ResourceServer, TokenRejected, prm_path
from mcplab.auth.wire import challenge

__all__ = ["Protect", "GRANT_KEY", "IDENTITY_KEY"]

GRANT_KEY = "mcplab.grant"  # where a request's Grant sits in the ASGI scope's "state", for tools that care
IDENTITY_KEY = "mcplab.identity"  # and who it speaks for; the endpoint reads it (app.py, without importing this)
HOST_HEADER = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?")  # name, or name:port; nothing more
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class Protect:
    """ASGI middleware: Protected Resource Metadata, then bearer token and scope checks on ``/mcp``."""

    def __init__(self, app: Any, server: ResourceServer, *, max_body: int = 4 * 1024 * 1024) -> None:
        self.app, self.server, self.max_body = app, server, max_body
        self.metadata_paths = {prm_path(server.path), PRM_WELL_KNOWN}

    def _host(self, scope: Scope) -> str | None:
        """Which of the server's names the request used: None if ``Host`` names another host (the endpoint
        refuses that, 403); the server's own name if ``Host`` is anything but a plain ``name[:our port]``."""
        header = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        try:
            name = urlsplit("//" + header).hostname  # read as leniently as the endpoint reads it
        except ValueError:
            return None
        if name not in self.server.hosts:
            return None
        plain = HOST_HEADER.fullmatch(header)
        default = 443 if self.server.scheme == "https" else 80
        if plain is None or int(plain[2] or default) != self.server.port:
            return self.server.host
        return plain[1].strip("[]").lower()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = self._host(scope)
        if host is None or (scope["path"] != self.server.path and scope["path"] not in self.metadata_paths):
            await self.app(scope, receive, send)
            return
        if scope["path"] in self.metadata_paths:
            if scope["method"] not in ("GET", "HEAD"):
                await _reply(send, 405, {"error": "invalid_request", "error_description": "metadata is read with GET"},
                             {"Allow": "GET"})
                return
            await _reply(send, 200, self.server.metadata(host), {"Cache-Control": "max-age=300"})
            return
        body, receive = await self._buffer(receive)
        try:
            grant = await self.check(scope, body)
        except TokenRejected as refused:
            await self.refuse(send, host, refused)
            return
        except Unavailable as exc:
            await _reply(send, 503, {"error": "temporarily_unavailable",
                                     "error_description": f"cannot check tokens: {exc}"})
            return
        state = scope.setdefault("state", {})
        state[GRANT_KEY], state[IDENTITY_KEY] = grant, (grant.issuer, grant.client_id, grant.subject)
        await self.app(scope, receive, send)

    async def check(self, scope: Scope, body: bytes) -> Any:
        if any(k == "access_token" for k, _ in parse_qsl(scope.get("query_string", b"").decode("latin-1"))):
            raise TokenRejected("invalid_request", "access tokens must not be sent in the query string "
                                                   "(OAuth 2.1 §5.1.1): send Authorization: Bearer", 400)
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            # RFC 6750 §3.1: a request with no authentication information gets no error code
            raise TokenRejected("", "this server needs an access token: Authorization: Bearer <token>")
        try:
            grant = await self.server.authenticate(token.strip())
        except TokenRejected:
            raise
        except Exception as exc:  # the authorization server is unreachable, or sent keys we cannot read
            raise Unavailable(f"{type(exc).__name__}: {exc}") from exc
        try:
            message = json.loads(body) if body else None
        except ValueError:
            message = None  # not JSON: the endpoint refuses it (400), no scope question arises
        self.server.authorize(grant, self.server.policy.needed(message) if message is not None
                              else self.server.policy.base)
        return grant

    async def refuse(self, send: Send, host: str, refused: TokenRejected) -> None:
        params = {"error": refused.error or None,
                  "error_description": refused.description if refused.error else None,
                  "scope": refused.scope or " ".join(self.server.policy.base) or None,
                  "resource_metadata": self.server.metadata_url(host)}
        body = {"error": refused.error, "error_description": refused.description} if refused.error else \
            {"error_description": refused.description}  # no credentials: no error code (RFC 6750 §3.1)
        await _reply(send, refused.status, body, {"WWW-Authenticate": challenge("Bearer", **params)})

    async def _buffer(self, receive: Receive) -> tuple[bytes, Receive]:
        """Read the body (at most ``max_body`` bytes), and a ``receive`` that replays it, then the rest."""
        chunks, size, more = [], 0, True
        while more and size <= self.max_body:
            message = await receive()
            if message["type"] != "http.request":
                chunks.append(message)
                break
            chunks.append(message)
            size += len(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(m.get("body", b"") for m in chunks if m["type"] == "http.request")
        pending = list(chunks)

        async def replay() -> dict[str, Any]:
            return pending.pop(0) if pending else await receive()

        return (body if not more else b""), replay


class Unavailable(Exception):
    """The tokens cannot be checked now (the authorization server or its keys): 503, not a verdict on the token."""


async def _reply(send: Send, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
    payload = json.dumps(body).encode("utf-8")
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.lower().encode("latin-1"), v.encode("latin-1", "replace")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})


def wrapper(issuer: str, policy: Any = None, *, verify: Any = True, name: str | None = None) -> Callable[[Any, str], Any]:
    """``wrap(app, url)`` for :func:`mcplab.server.streamable_http.process.serve_http`: :class:`Protect` around the app,
    trusting tokens from ``issuer``, answering to the app's allowed host names at ``url``."""
    from mcplab.auth.scopes import ScopePolicy

    def wrap(app: Any, url: str) -> Protect:
        parts = urlsplit(url)
        endpoint = app.state.endpoint
        server = ResourceServer(issuer, scheme=parts.scheme, port=parts.port or 0, path=parts.path,
                                hosts=endpoint.allowed_hosts, policy=policy or ScopePolicy(), name=name, verify=verify,
                                host=parts.hostname or "127.0.0.1")
        return Protect(app, server, max_body=endpoint.max_body)

    return wrap
