"""The MCP server as an OAuth 2.1 resource server: its metadata, and what it checks on every request.

Theory of operation
-------------------
Spec "basic/authorization" (2025-11-25; 2026-07-28 the same, split over several pages): a protected
MCP server MUST publish Protected Resource Metadata (RFC 9728) naming its authorization server, MUST
validate each access token (OAuth 2.1 §5.2) and MUST refuse a token that was not issued for it
(RFC 8707 §2, "Token Handling"). What the server does, in order::

    no Authorization: Bearer header            → 401, WWW-Authenticate names the metadata and the scope
    token: bad signature, expired, another     → 401 invalid_token (the error says which check failed)
      issuer, another audience, malformed
    token lacks a scope this request needs     → 403 insufficient_scope, scope = all the operation needs
    otherwise                                  → the request goes on, with the token's Grant beside it

:func:`validate_bearer` is the check itself, one named step per rule, usable on its own (a lab shows
the audience check refusing a token minted for another server: the "token passthrough" and
"confused deputy" attacks both start with a server that skips it). Signatures are verified by
joserfc against the keys the authorization server publishes at its ``jwks_uri`` (RFC 8414), which
:class:`ResourceServer` fetches once and again when a token names a key it has not seen.

:class:`ScopePolicy` (``scopes.py``) says which scopes a request needs: ``base`` for every request,
plus per-tool scopes for ``tools/call`` (``write_file`` needs ``files:write``), so a client learns
what to ask for in a step-up (spec "Scope Challenge Handling"). The HTTP wiring is middleware.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit

from mcplab.auth.discovery import as_metadata_urls
from mcplab.auth.scopes import ScopePolicy  # re-exported: the policy this server enforces

__all__ = ["PRM_WELL_KNOWN", "prm_path", "protected_resource_metadata", "ScopePolicy", "Grant", "TokenRejected",
           "validate_bearer", "ResourceServer"]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"      # RFC 9728 §3
ALGORITHMS = ["RS256", "ES256"]   # signatures accepted; "none" and HMAC never (a shared secret is no proof)
TOKEN_TYPES = {"at+jwt", "application/at+jwt"}                  # RFC 9068 §2.1 typ header
KEYS_REFRESH_S = 10.0  # an unknown key id refetches the key set at most this often


def prm_path(resource_path: str) -> str:
    """Where a resource's metadata lives: the well-known prefix inserted before its path (RFC 9728 §3.1).

    >>> prm_path("/mcp")
    '/.well-known/oauth-protected-resource/mcp'
    """
    return PRM_WELL_KNOWN + ("" if resource_path in ("", "/") else resource_path)


def protected_resource_metadata(resource: str, authorization_servers: Iterable[str],
                                scopes: Iterable[str] = (), name: str | None = None) -> dict[str, Any]:
    """The RFC 9728 §2 document: ``resource`` and ``authorization_servers`` (MCP requires at least one)."""
    document: dict[str, Any] = {"resource": resource, "authorization_servers": list(authorization_servers),
                                "bearer_methods_supported": ["header"]}
    if scopes:
        document["scopes_supported"] = list(scopes)
    if name:
        document["resource_name"] = name
    return document


@dataclass(frozen=True)
class Grant:
    """What a valid access token says: who, through which client, for which audience, with which scopes."""

    subject: str
    client_id: str
    scopes: frozenset[str]
    audience: str
    issuer: str
    expires_at: int


class TokenRejected(Exception):
    """A request the resource server refuses: the OAuth ``error`` code, why, and the HTTP status."""

    def __init__(self, error: str, description: str, status: int = 401, scope: str | None = None) -> None:
        super().__init__(f"{error}: {description}")
        self.error, self.description, self.status, self.scope = error, description, status, scope


def _audiences(claims: Mapping[str, Any]) -> list[str]:
    aud = claims.get("aud")
    return [aud] if isinstance(aud, str) else [a for a in aud if isinstance(a, str)] if isinstance(aud, list) else []


def validate_bearer(token: str, *, keys: Any, issuer: str, audience: str | Any,
                    now: float | None = None) -> Grant:
    """Check a JWT access token the way RFC 9068 §4 and MCP's "Token Handling" say; return its Grant.

    ``keys``: the issuer's joserfc ``KeySet``; ``audience``: this server's resource URI, or a
    predicate that accepts the URIs that name it. Each failed check raises :class:`TokenRejected`
    (``invalid_token``, 401) saying which: signature, type, issuer, expiry, audience.
    """
    from joserfc import jwt
    from joserfc.errors import JoseError

    try:
        decoded = jwt.decode(token, keys, algorithms=ALGORITHMS)
    except JoseError as exc:
        raise TokenRejected("invalid_token", f"the token's signature does not verify with the authorization "
                                             f"server's keys ({type(exc).__name__})") from None
    except (ValueError, TypeError) as exc:
        raise TokenRejected("invalid_token", f"the token is not a JWT: {exc}") from None
    claims, typ = decoded.claims, decoded.header.get("typ")
    if typ not in TOKEN_TYPES:
        raise TokenRejected("invalid_token", f"expected a JWT access token (typ at+jwt), got typ {typ!r}")
    if claims.get("iss") != issuer:
        raise TokenRejected("invalid_token", f"the token was issued by {claims.get('iss')!r}, not by this "
                                             f"server's authorization server {issuer!r}")
    expires = claims.get("exp")
    if not isinstance(expires, (int, float)) or expires <= (time.time() if now is None else now):
        raise TokenRejected("invalid_token", "the token has expired" if isinstance(expires, (int, float))
                            else "the token carries no expiry (exp)")
    audiences = _audiences(claims)
    accepts = audience if callable(audience) else (lambda uri: uri == audience)
    match = next((a for a in audiences if accepts(a)), None)
    if match is None:
        raise TokenRejected("invalid_token", f"the token is for {audiences or 'no audience'}, not for this server: "
                                             f"a token minted for another resource is never accepted (RFC 8707)")
    scope = claims.get("scope")
    scopes = frozenset(scope.split()) if isinstance(scope, str) else frozenset()
    return Grant(str(claims.get("sub", "")), str(claims.get("client_id", "")), scopes, match, issuer, int(expires))


class ResourceServer:
    """One protected MCP endpoint: its issuer, its scopes, the keys it trusts (fetched on first use).

    ``hosts``: the host names this server answers to (its allow-list), so that a token whose
    audience spells this server ``localhost`` or ``127.0.0.1`` is accepted on both, and nothing else.
    ``host``: the name its own URL gives it (``127.0.0.1`` in ``http://127.0.0.1:8000/mcp``).
    """

    def __init__(self, issuer: str, *, scheme: str, port: int, path: str, hosts: Iterable[str],
                 policy: ScopePolicy = ScopePolicy(), name: str | None = None, verify: Any = True,
                 host: str = "127.0.0.1") -> None:
        self.issuer, self.scheme, self.port, self.path = issuer.rstrip("/") or issuer, scheme, port, path
        self.hosts = frozenset(h.lower() for h in hosts)
        self.host = host.lower()
        self.policy, self.name, self.verify = policy, name, verify
        self._keys: Any = None
        self._fetched_at = 0.0

    def origin(self, host: str | None = None) -> str:
        """``scheme://host:port`` of this server, under one of its own names (its URL's, if none is given).

        Built from the server's own address only: a request's ``Host`` may pick which of the names it
        answers to, but nothing of the header itself is ever written back (no userinfo, path, port or quote).
        """
        name = host if host in self.hosts else self.host
        return f"{self.scheme}://{f'[{name}]' if ':' in name else name}:{self.port}"

    def resource(self, host: str | None = None) -> str:
        """This server's resource URI (RFC 9728 §2 ``resource``), under one of its names."""
        return self.origin(host) + self.path

    def metadata_url(self, host: str | None = None) -> str:
        """Where this server's Protected Resource Metadata lives (the ``resource_metadata`` of a challenge)."""
        return self.origin(host) + prm_path(self.path)

    def names_me(self, uri: str) -> bool:
        """Does ``uri`` name this server: same scheme, one of our host names, our port, our path?"""
        try:
            parts = urlsplit(uri)
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return False
        return (parts.scheme == self.scheme and (parts.hostname or "") in self.hosts and port == self.port
                and parts.path == self.path and not parts.query and not parts.fragment)

    def metadata(self, host: str | None = None) -> dict[str, Any]:
        return protected_resource_metadata(self.resource(host), [self.issuer], self.policy.all(), self.name)

    async def keys(self, refresh: bool = False) -> Any:
        """The issuer's key set, from its metadata's ``jwks_uri`` (fetched once; again on ``refresh``)."""
        if self._keys is not None and not (refresh and time.monotonic() - self._fetched_at > KEYS_REFRESH_S):
            return self._keys
        import httpx
        from joserfc.jwk import KeySet

        from mcplab.auth.wire import verify_with

        async with httpx.AsyncClient(verify=verify_with(self.verify), trust_env=False, timeout=10.0) as client:
            metadata = None
            for url in as_metadata_urls(self.issuer):
                reply = await client.get(url)
                if reply.status_code == 200:
                    metadata = reply.json()
                    break
            if not isinstance(metadata, dict) or metadata.get("issuer") != self.issuer:
                raise RuntimeError(f"no metadata naming issuer {self.issuer} at {as_metadata_urls(self.issuer)}")
            self._keys = KeySet.import_key_set((await client.get(metadata["jwks_uri"])).json())
        self._fetched_at = time.monotonic()
        return self._keys

    async def authenticate(self, token: str) -> Grant:
        """:func:`validate_bearer` with this server's issuer, keys and names; a new key id refetches the keys."""
        keys = await self.keys()
        try:
            return validate_bearer(token, keys=keys, issuer=self.issuer, audience=self.names_me)
        except TokenRejected as rejected:
            if "signature" not in rejected.description:
                raise
            return validate_bearer(token, keys=await self.keys(refresh=True), issuer=self.issuer,
                                   audience=self.names_me)

    def authorize(self, grant: Grant, needed: tuple[str, ...]) -> None:
        """Raise 403 ``insufficient_scope`` unless the grant holds every needed scope."""
        missing = [s for s in needed if s not in grant.scopes]
        if missing:
            raise TokenRejected("insufficient_scope", f"this request needs the scope {' '.join(missing)}, which "
                                                      f"the token was not granted", 403, scope=" ".join(needed))
