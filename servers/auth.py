"""Auth: a small OAuth 2.1 authorization server for the bundled MCP servers, on this machine only.

    python servers/auth.py --port 9000                       # http://127.0.0.1:9000, asks before granting
    python servers/auth.py --port 9000 --auto-approve        # grants at once (labs and tests, no browser)
    python servers/weather.py --http --auth http://127.0.0.1:9000

What it does, and where each rule comes from (MCP "basic/authorization" names these RFCs):

    GET  /.well-known/oauth-authorization-server   its metadata (RFC 8414), validated by Authlib at start
    GET  /authorize        authorization code only, PKCE S256 required (OAuth 2.1 §4.1, §7.5.2); shows a
                           consent page (client name, redirect host, scopes, resource) unless --auto-approve
    POST /authorize/consent   the page's Approve / Deny buttons; a headless client posts the same form
    POST /token            authorization_code and refresh_token grants; refresh tokens rotate (OAuth 2.1
                           §4.3.1); the access token is a JWT (RFC 9068) whose ``aud`` is the ``resource``
                           the client named (RFC 8707), signed with a key made at start-up
    POST /register         dynamic client registration (RFC 7591)
    GET  /jwks             the public key resource servers check signatures with

Clients come three ways (spec "Client Registration"): ``--client ID:SECRET:REDIRECT_URI`` pre-registers
one (``ID::REDIRECT_URI`` for a public client); an ``https://`` client_id is a Client ID Metadata
Document, fetched from hosts a ``--trust-cimd HOST`` policy admits; or ``POST /register``.

Bad input gets the RFC's error, never a crash: an unknown client or wrong secret ``invalid_client``,
a wrong PKCE verifier, a reused or expired code, a foreign redirect URI at the token endpoint
``invalid_grant``; an unregistered redirect URI at /authorize is never redirected to (a 400 page).
Authlib does the OAuth bookkeeping and joserfc the signing; this file holds the policy. Everything
lives in memory, bounded, and is gone when the process ends.

On a shared machine every other user reaches this port too, so each rule is strict:

    redirect URIs    matched exactly (spec "Open Redirection"); for a loopback IP only the port may
                     vary (RFC 8252 §7.3, OAuth 2.1 §8.4.2); a fragment or userinfo never matches
    scopes           only those the server knows (``--scope``; default: the bundled servers') and
                     the client registered for; anything else is ``invalid_scope`` (RFC 6749 §3.3)
    /register        JSON only: a page on another site can POST a form or text/plain without the
                     browser asking first, but not application/json
    HTML pages       never framed (X-Frame-Options, CSP frame-ancestors), so Approve cannot be
                     clickjacked
    tables           each client holds at most PER_CLIENT codes, consents and refresh tokens, and a
                     new one pushes out only that client's own oldest; pre-registered clients are never
                     dropped, and a registration past MAX_CLIENTS is refused (503), not made room for
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import html
import json
import re
import secrets
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable
from urllib.parse import parse_qsl, urlsplit

from authlib.oauth2.rfc6749 import AuthorizationServer, ClientMixin, JsonRequest, OAuth2Request, grants
from authlib.oauth2.rfc6749.errors import (
    InvalidClientError, InvalidGrantError, InvalidRequestError, InvalidScopeError, OAuth2Error,
)
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc6749.util import scope_to_list
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint, InvalidRedirectURIError
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator
from authlib.oauth2.rfc9207 import IssuerParameter
from joserfc.jwk import ECKey, KeySet
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

CODE_TTL = 60             # seconds an authorization code lives (OAuth 2.1 §4.1.2: short, at most 10 minutes)
ACCESS_TTL = 300          # seconds an access token lives (short-lived, spec "Token Theft")
REFRESH_TTL = 24 * 3600   # seconds a refresh token lives
CONSENT_TTL = 300         # seconds a consent page stays answerable
MAX_CLIENTS = 1000        # registered clients and cached metadata documents; pre-registered ones come on top
PER_CLIENT = 32           # codes, used codes, pending consents and refresh tokens kept for one client
MAX_ENTRIES = PER_CLIENT * MAX_CLIENTS  # of each table in all: room for every client's share, as a backstop
CIMD_MAX_BYTES = 5 * 1024  # a Client ID Metadata Document larger than this is refused
MAX_BODY = 64 * 1024      # bytes of a token, consent or registration request read; more gets 413
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
SCOPES = ("files:read", "files:write", "weather:read")  # what servers/files.py and servers/weather.py ask for
JSON_TYPE = "application/json"
# Every HTML page: no other site may frame it (an invisible frame over a decoy button would click Approve).
HTML_HEADERS = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}
# A loopback IP redirect URI: "http://", the IP, an optional port, then path and query (no fragment).
# Nothing may come between "//" and the IP: "http://evil@127.0.0.1/" is userinfo, and must not match.
LOOPBACK_IP_REDIRECT = re.compile(r"http://(127\.0\.0\.1|\[::1\])(?::\d{1,5})?([/?][^#]*)?")


def without_port(uri: str) -> str | None:
    """A loopback IP redirect URI with its port taken out, or None for any other URI.

    >>> without_port("http://127.0.0.1:33418/callback")
    'http://127.0.0.1/callback'
    """
    match = LOOPBACK_IP_REDIRECT.fullmatch(uri)
    return None if match is None else f"http://{match[1]}{match[2] or ''}"


def acceptable_redirect(uri: str) -> bool:
    """May a client register this redirect URI: HTTPS, or HTTP on a loopback name; no fragment
    (RFC 6749 §3.1.2) and no userinfo (it only hides where the code really goes)?"""
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        return False
    if "#" in uri or "@" in parts.netloc or not host:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and host in LOOPBACK)


def listed(scopes: Iterable[str], limit: int = 200) -> str:
    """Scopes for an error description, cut short: what a client sent goes back in a redirect's query."""
    text = " ".join(scopes)
    return text if len(text) <= limit else text[:limit] + "…"


# --- bounded tables: each client fills its own share ------------------------------------------------------

class Full(OAuth2Error):
    """A table has no room left that is not someone else's: the request is refused, nothing is evicted."""
    error = "temporarily_unavailable"
    status_code = 503


class Ledger:
    """Codes, used codes, pending consents or refresh tokens by key, at most ``PER_CLIENT`` per client.

    A client's new entry pushes out that client's own spent entries first, then its own oldest; it
    never touches another client's. ``MAX_ENTRIES`` in all is a backstop: when every entry is live
    and the table is full, :meth:`put` raises :class:`Full` instead of dropping someone's entry.
    """

    def __init__(self, kind: str, spent: Callable[[Any], bool], per_client: int = PER_CLIENT,
                 total: int = MAX_ENTRIES) -> None:
        self.kind, self.spent, self.per_client, self.total = kind, spent, per_client, total
        self.entries: dict[str, Any] = {}
        self.owners: dict[str, dict[str, None]] = {}  # client_id → its keys, oldest first

    def get(self, key: str) -> Any:
        return self.entries.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    def __getitem__(self, key: str) -> Any:
        return self.entries[key]

    def put(self, key: str, value: Any) -> None:
        """Keep ``value`` (which names its ``client_id``) under ``key``."""
        mine = list(self.owners.get(value.client_id, ()))
        if len(mine) >= self.per_client:
            for old in [k for k in mine if self.spent(self.entries[k])] or mine[:1]:  # its spent ones, else its oldest
                self.pop(old)
        if len(self.entries) >= self.total:
            for old in [k for k, v in self.entries.items() if self.spent(v)]:
                self.pop(old)
            if len(self.entries) >= self.total:
                raise Full(f"this server holds {self.total} live {self.kind}, its limit; try again once some expire")
        self.entries[key] = value
        self.owners.setdefault(value.client_id, {})[key] = None

    def pop(self, key: str, default: Any = None) -> Any:
        value = self.entries.pop(key, None)
        if value is None:
            return default
        keys = self.owners[value.client_id]
        del keys[key]
        if not keys:
            del self.owners[value.client_id]
        return value


# --- what the server remembers --------------------------------------------------------------------------

@dataclass
class Client(ClientMixin):
    client_id: str
    client_secret: str | None       # None: a public client (token_endpoint_auth_method "none")
    redirect_uris: list[str]
    name: str
    kind: str                       # "pre-registered", "registered" or "metadata document"
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    expires_at: float = float("inf")  # a fetched metadata document is cached this long
    auth_method_requested: str = "client_secret_basic"
    scopes: frozenset[str] | None = None  # what it registered for (RFC 7591 "scope"); None: any the server knows

    @property
    def auth_method(self) -> str:
        return "none" if self.client_secret is None else self.auth_method_requested

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if len(self.redirect_uris) == 1 else None

    def get_allowed_scope(self, scope: str) -> str:
        # Authlib asks this after the server's own check (Authority.validate_requested_scope): here, only
        # whether this client may have what it asks for. Refused, never trimmed: the client learns why.
        refused = [s for s in scope_to_list(scope) or () if self.scopes is not None and s not in self.scopes]
        if refused:
            raise InvalidScopeError(f"this client did not register for {listed(refused)} (it registered for "
                                    f"{listed(sorted(self.scopes or ())) or 'no scope'})")
        return scope or ""

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        # Exact match (spec "Open Redirection"); for a loopback IP only the port may vary (OAuth 2.1 §8.4.2,
        # RFC 8252 §7.3): the rest, down to a trailing "#" or a "user@", is compared as it was registered.
        if redirect_uri in self.redirect_uris:
            return True
        asked = without_port(redirect_uri)
        return asked is not None and any(without_port(r) == asked for r in self.redirect_uris)

    def check_client_secret(self, client_secret: str) -> bool:
        return self.client_secret is not None and hmac.compare_digest(self.client_secret.encode(), client_secret.encode())

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return endpoint != "token" or method == self.auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


@dataclass(frozen=True)
class User:
    """The resource owner, and the resource (RFC 8707) this grant is for."""
    subject: str
    resource: str | None

    def get_user_id(self) -> str:
        return self.subject


@dataclass
class Code:
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: User
    code_challenge: str
    code_challenge_method: str
    expires_at: float
    refresh_tokens: list[str] = field(default_factory=list)

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class Pending:
    """An authorization request waiting on its consent page."""
    pairs: list[tuple[str, str]]
    client_id: str
    expires_at: float


@dataclass
class Refresh:
    token: str
    client_id: str
    scope: str
    user: User
    expires_at: float
    revoked: bool = False

    def check_client(self, client: Client) -> bool:
        return client.client_id == self.client_id

    def get_scope(self) -> str:
        return self.scope

    def is_expired(self) -> bool:
        return time.time() >= self.expires_at

    def is_revoked(self) -> bool:
        return self.revoked


def resource_of(request: OAuth2Request) -> str | None:
    """The RFC 8707 ``resource`` parameter: an absolute URI without a fragment, given at most once."""
    values = request.payload.datalist.get("resource", [])
    if len(values) > 1:
        raise InvalidRequestError("this server issues a token for one resource at a time")
    if not values:
        return None
    parts = urlsplit(values[0])
    if not parts.scheme or not parts.netloc or parts.fragment:
        error = InvalidRequestError(f"resource must be an absolute URI without a fragment, got {values[0]!r}")
        error.error = "invalid_target"  # RFC 8707 §2
        raise error
    return values[0]


# --- the grants, on Authlib ----------------------------------------------------------------------------

class S256Only(CodeChallenge):
    """PKCE required on every authorization request, and only S256 (OAuth 2.1 §4.1.1, spec "Authorization
    Code Protection"); Authlib then checks the verifier at the token endpoint (invalid_grant if wrong)."""
    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge") or data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("PKCE is required: send code_challenge with code_challenge_method=S256")
        super().validate_code_challenge(grant, redirect_uri)


class CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]

    def validate_authorization_request(self) -> str:
        redirect_uri = super().validate_authorization_request()
        try:
            resource_of(self.request)
        except OAuth2Error as error:  # the client and its redirect URI are good: the error goes back there
            error.redirect_uri = redirect_uri
            raise
        return redirect_uri

    def create_authorization_response(self, redirect_uri: str, grant_user: Any) -> Any:
        try:
            return super().create_authorization_response(redirect_uri, grant_user)
        except Full as full:  # the client and its redirect URI are good: it hears why (RFC 6749 §4.1.2.1)
            full.redirect_uri = redirect_uri
            raise

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        self.server.codes.put(code, Code(
            code, request.client.client_id, data.get("redirect_uri", ""), request.scope or "", request.user,
            data["code_challenge"], "S256", time.time() + self.server.code_ttl))

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        found = self.server.codes.get(code)
        if found is None:
            used = self.server.used_codes.get(code)
            if used is not None:  # used twice: refuse, and revoke what the first use obtained (OAuth 2.1 §4.1.3)
                for token in used.refresh_tokens:
                    if token in self.server.refresh_tokens:
                        self.server.refresh_tokens[token].revoked = True
            return None
        if found.client_id != client.client_id or time.time() >= found.expires_at:
            return None
        return found

    def delete_authorization_code(self, code: Code) -> None:
        self.server.codes.pop(code.code, None)
        try:
            self.server.used_codes.put(code.code, code)
        except Full:  # the token is issued already; only the revocation should this code come back is lost
            pass

    def authenticate_user(self, code: Code) -> User:
        return code.user

    def validate_token_request(self) -> None:
        super().validate_token_request()
        resource = resource_of(self.request)
        if resource is not None and resource != self.request.authorization_code.user.resource:
            raise InvalidGrantError("the resource differs from the one this code was issued for")


class RefreshGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation: each refresh token works once

    def authenticate_refresh_token(self, token: str) -> Refresh | None:
        found = self.server.refresh_tokens.get(token)
        return found if found and not found.is_revoked() and not found.is_expired() else None

    def authenticate_user(self, refresh: Refresh) -> User:
        resource = resource_of(self.request)
        if resource is not None and resource != refresh.user.resource:
            raise InvalidGrantError("the resource differs from the one this grant was issued for")
        return refresh.user

    def revoke_old_credential(self, refresh: Refresh) -> None:
        refresh.revoked = True


class Tokens(JWTBearerTokenGenerator):
    """RFC 9068 JWT access tokens, ``aud`` = the requested resource (no resource: the client itself,
    which no MCP server accepts)."""

    def __init__(self, issuer: str, key: ECKey, access_ttl: int) -> None:
        super().__init__(issuer, alg="ES256", expires_generator=access_ttl,
                         refresh_token_generator=lambda **_: secrets.token_urlsafe(32))
        self.key = key

    def get_jwks(self) -> ECKey:
        return self.key

    def get_audiences(self, client: Client, user: User, scope: str) -> str:
        return user.resource or client.client_id


class Registration(ClientRegistrationEndpoint):
    """RFC 7591: open to any caller on this machine; redirect URIs must be loopback HTTP or HTTPS, and
    ``scope``, if sent, names only scopes this server knows (the client may then ask for those alone)."""

    def authenticate_token(self, request: Any) -> bool:
        return True

    def get_server_metadata(self) -> dict[str, Any]:
        # scopes_supported here lets Authlib refuse an unknown scope at registration (invalid_client_metadata)
        return {**self.server.metadata, "scopes_supported": list(self.server.scopes)}

    def generate_client_info(self, request: Any) -> dict[str, Any]:
        info = super().generate_client_info(request)
        if request.payload.data.get("token_endpoint_auth_method") == "none":  # a public client gets no secret
            del info["client_secret"], info["client_secret_expires_at"]
        return info

    def generate_client_secret(self, request: Any) -> str:
        return secrets.token_urlsafe(32)

    def save_client(self, info: dict, metadata: dict, request: Any) -> Client:
        uris = metadata.get("redirect_uris") or []
        if not uris or not all(isinstance(u, str) and acceptable_redirect(u) for u in uris):
            raise InvalidRedirectURIError("redirect_uris must be loopback http:// or https:// URIs, "
                                          "without a fragment or userinfo")
        method = metadata.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in ("none", "client_secret_basic", "client_secret_post"):
            raise InvalidClientError(f"token_endpoint_auth_method {method!r} is not supported here")
        scope = metadata.get("scope")
        client = Client(info["client_id"], info.get("client_secret"), uris, metadata.get("client_name", "unnamed"),
                        "registered", tuple(metadata.get("grant_types") or ("authorization_code",)),
                        auth_method_requested=method,
                        scopes=frozenset(scope_to_list(scope)) if isinstance(scope, str) else None)
        self.server.admit(client)
        return client


class Payload(BasicOAuth2Payload):
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        super().__init__(dict(pairs))
        self._datalist = {}
        for name, value in pairs:
            self._datalist.setdefault(name, []).append(value)  # keeps repeats, which the RFCs refuse


class StarletteOAuth2Request(OAuth2Request):
    """An Authlib request from Starlette's, with the form or query read beforehand (Starlette reads async)."""

    def __init__(self, request: Request, pairs: list[tuple[str, str]]) -> None:
        super().__init__(request.method, str(request.url), headers=request.headers)
        self.payload = Payload(pairs)
        self._form = dict(pairs)

    @property
    def args(self) -> dict[str, str]:
        return dict(self.payload.data) if self.method == "GET" else {}

    @property
    def form(self) -> dict[str, str]:
        return self._form


class Redirect(Response):
    """A response whose ``Location`` Authlib's RFC 9207 hook can rewrite (it adds ``iss``)."""

    @property
    def location(self) -> str | None:
        return self.headers.get("location")

    @location.setter
    def location(self, value: str) -> None:
        self.headers["location"] = value


class Authority(AuthorizationServer):
    """The authorization server: Authlib's state machine, this file's storage and policy."""

    def __init__(self, issuer: str, *, subject: str, auto_approve: bool, trusted_cimd: set[str],
                 verify: Any, access_ttl: int = ACCESS_TTL, code_ttl: int = CODE_TTL,
                 scopes: Iterable[str] = SCOPES) -> None:
        super().__init__()
        self.issuer, self.subject, self.auto_approve, self.code_ttl = issuer, subject, auto_approve, code_ttl
        self.trusted_cimd, self.verify, self.scopes = trusted_cimd, verify, tuple(dict.fromkeys(scopes))
        self.key = ECKey.generate_key("P-256", parameters={"use": "sig", "alg": "ES256"}, auto_kid=True)
        self.clients: dict[str, Client] = {}
        now = time.time
        self.codes = Ledger("authorization codes", lambda code: now() >= code.expires_at)
        # a used code is kept while the refresh tokens it obtained may live: reused, it revokes them
        self.used_codes = Ledger("used codes", lambda code: now() >= code.expires_at + REFRESH_TTL)
        self.refresh_tokens = Ledger("refresh tokens", lambda refresh: refresh.revoked or refresh.is_expired())
        self.consents = Ledger("consent pages", lambda pending: now() >= pending.expires_at)
        self.metadata = AuthorizationServerMetadata({
            "issuer": issuer, "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token",
            "registration_endpoint": f"{issuer}/register", "jwks_uri": f"{issuer}/jwks",
            "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"], "response_modes_supported": ["query"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": True})
        self.metadata.validate()
        self.register_token_generator("default", Tokens(issuer, self.key, access_ttl))
        self.register_grant(CodeGrant, [S256Only(required=True)])
        self.register_grant(RefreshGrant)
        self.register_endpoint(Registration)
        self.issuer_parameter = IssuerParameter()
        self.issuer_parameter.get_issuer = lambda: issuer  # type: ignore[method-assign]
        self.register_extension(self.issuer_parameter)  # RFC 9207: iss in every authorization response

    def validate_requested_scope(self, scope: str | None) -> None:
        unknown = [s for s in scope_to_list(scope) or () if s not in self.scopes]
        if unknown:
            raise InvalidScopeError(f"unknown scope {listed(unknown)}: this server grants "
                                    f"{listed(self.scopes) or 'no scope'}")

    def query_client(self, client_id: str) -> Client | None:
        client = self.clients.get(client_id)
        return client if client is not None and client.expires_at > time.time() else None

    def admit(self, client: Client) -> None:
        """Keep a registered client or a fetched metadata document, if there is room: pre-registered clients
        never count, and an earlier client is never dropped to make room (an expired document may be)."""
        if client.client_id not in self.clients and self._admitted() >= MAX_CLIENTS:
            for stale in [c.client_id for c in self.clients.values() if c.expires_at <= time.time()]:
                del self.clients[stale]  # a document past its cache lifetime is fetched again when next used
            if self._admitted() >= MAX_CLIENTS:
                raise Full(f"this server already holds {MAX_CLIENTS} registered clients, its limit: the clients "
                           f"registered before keep working; restart the server to register more")
        self.clients[client.client_id] = client

    def _admitted(self) -> int:
        return sum(1 for c in self.clients.values() if c.kind != "pre-registered")

    def save_token(self, token: dict, request: OAuth2Request) -> None:
        if "refresh_token" in token:
            refresh = Refresh(token["refresh_token"], request.client.client_id, token.get("scope", ""),
                              request.user, time.time() + REFRESH_TTL)
            self.refresh_tokens.put(refresh.token, refresh)
            if request.authorization_code is not None:
                request.authorization_code.refresh_tokens.append(refresh.token)

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        return request if isinstance(request, OAuth2Request) else StarletteOAuth2Request(*request)

    def create_json_request(self, request: Any) -> JsonRequest:
        starlette_request, body = request
        json_request = JsonRequest(starlette_request.method, str(starlette_request.url), starlette_request.headers)
        json_request.payload = type("JsonBody", (), {"data": body})()
        return json_request

    def handle_response(self, status: int, body: Any, headers: Any) -> Response:
        headers = dict(headers or [])
        if isinstance(body, dict):
            return JSONResponse(body, status_code=status, headers=headers)
        return Redirect(body or b"", status_code=status, headers=headers)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    async def resolve_cimd(self, client_id: str) -> None:
        """An ``https://`` client_id is a Client ID Metadata Document: fetch, check and cache it."""
        import httpx

        if not client_id.startswith("https://") or self.query_client(client_id) is not None:
            return
        host = urlsplit(client_id).hostname or ""
        if host not in self.trusted_cimd:
            raise InvalidClientError(f"no trust policy admits client metadata documents from {host!r} "
                                     f"(start the server with --trust-cimd {host})")
        try:
            from mcplab.auth.wire import verify_with

            async with httpx.AsyncClient(verify=verify_with(self.verify), timeout=5.0, trust_env=False) as http:
                reply = await http.get(client_id)  # no redirects followed: the URL itself must answer
            if reply.status_code != 200 or len(reply.content) > CIMD_MAX_BYTES:
                raise ValueError(f"status {reply.status_code}, {len(reply.content)} bytes")
            document = json.loads(reply.content)
        except (httpx.HTTPError, ValueError) as exc:
            raise InvalidClientError(f"cannot read the client metadata document at {client_id}: {exc}") from None
        uris = document.get("redirect_uris") if isinstance(document, dict) else None
        if (not isinstance(document, dict) or document.get("client_id") != client_id or not document.get("client_name")
                or not isinstance(uris, list) or not uris
                or not all(isinstance(u, str) and acceptable_redirect(u) for u in uris)):
            raise InvalidClientError("the client metadata document must hold client_id (equal to its URL), "
                                     "client_name and redirect_uris (loopback http:// or https://, without a "
                                     "fragment or userinfo)")
        max_age = next((int(p.split("=", 1)[1]) for p in reply.headers.get("cache-control", "").split(",")
                        if p.strip().startswith("max-age=") and p.split("=", 1)[1].strip().isdigit()), 300)
        scope = document.get("scope")
        self.admit(Client(client_id, None, uris, str(document["client_name"]), "metadata document",
                          expires_at=time.time() + min(max_age, 3600),
                          scopes=frozenset(scope_to_list(scope)) if isinstance(scope, str) else None))


# --- HTTP ---------------------------------------------------------------------------------------------

async def read_limited(request: Request) -> bytes | None:
    """The body, or None if it is larger than any honest OAuth request (then the caller answers 413)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            return None
    return bytes(body)


def page(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=HTML_HEADERS)


def error_page(error: OAuth2Error | str, status: int = 400) -> HTMLResponse:
    text = f"{error.error}: {error.description}" if isinstance(error, OAuth2Error) else error
    return page(f"<!doctype html><title>Authorization failed</title><h1>Authorization failed</h1>"
                f"<p>{html.escape(text)}</p>", status)


def consent_page(authority: Authority, consent_id: str, pairs: list[tuple[str, str]], client: Client) -> HTMLResponse:
    data = dict(pairs)
    redirect = urlsplit(data.get("redirect_uri") or client.redirect_uris[0])
    rows = [("Application", f"{client.name} ({client.kind})"), ("Sends you back to", redirect.netloc),
            ("Wants", data.get("scope") or "(no particular scope)"), ("For", data.get("resource") or "(no resource)")]
    warning = ("<p><b>Note:</b> this application receives the answer on this computer (a localhost address); "
               "only approve it if you started it.</p>" if redirect.hostname in LOOPBACK else "")
    table = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return page(
        f"<!doctype html><title>Allow access?</title><h1>Allow access for {html.escape(authority.subject)}?</h1>"
        f"<table>{table}</table>{warning}<form method='post' action='/authorize/consent'>"
        f"<input type='hidden' name='consent' value='{consent_id}'>"
        f"<button name='decision' value='approve'>Approve</button> "
        f"<button name='decision' value='deny'>Deny</button></form>")


def create_app(authority: Authority) -> Starlette:
    async def metadata(request: Request) -> Response:
        return JSONResponse(dict(authority.metadata))

    async def jwks(request: Request) -> Response:
        return JSONResponse(KeySet([authority.key]).as_dict(private=False))

    async def authorize(request: Request) -> Response:
        pairs = list(request.query_params.multi_items())
        try:
            await authority.resolve_cimd(dict(pairs).get("client_id", ""))
            grant = authority.get_consent_grant((request, pairs))
        except OAuth2Error as error:
            # Redirect an error only to a URI this client registered (RFC 6749 §4.1.2.1); else say it here.
            if error.redirect_uri and error.error != "invalid_client":
                response = authority.handle_error_response(None, error)
                authority.issuer_parameter.add_issuer_parameter(authority, response)
                return response
            return error_page(error, 503 if isinstance(error, Full) else 400)
        if authority.auto_approve:
            return decide((request, pairs), approve=True)
        consent_id, client = secrets.token_urlsafe(24), grant.request.client
        try:
            authority.consents.put(consent_id, Pending(pairs, client.client_id, time.time() + CONSENT_TTL))
        except Full as full:
            return error_page(full, 503)
        return consent_page(authority, consent_id, pairs, client)

    def decide(request: tuple[Request, list], approve: bool) -> Response:
        grant = authority.get_consent_grant(request)
        user = User(authority.subject, resource_of(grant.request)) if approve else None
        return authority.create_authorization_response(grant.request, grant_user=user, grant=grant)

    async def form_of(request: Request) -> list[tuple[str, str]] | None:
        body = await read_limited(request)
        return None if body is None else parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True)

    too_large = JSONResponse({"error": "invalid_request", "error_description": f"the body is over {MAX_BODY} bytes"},
                             status_code=413)

    async def consent(request: Request) -> Response:
        pairs = await form_of(request)
        if pairs is None:
            return too_large
        form = dict(pairs)
        pending = authority.consents.pop(str(form.get("consent", "")), None)
        if pending is None or pending.expires_at < time.time():
            return error_page("this consent page has expired or was already answered; start again", 400)
        try:
            return decide((request, pending.pairs), approve=form.get("decision") == "approve")
        except OAuth2Error as error:
            return error_page(error)

    async def token(request: Request) -> Response:
        pairs = await form_of(request)
        if pairs is None:
            return too_large
        client_id = dict(pairs).get("client_id", "")
        try:
            await authority.resolve_cimd(client_id)
        except OAuth2Error as error:
            return authority.handle_error_response(None, error)
        return authority.create_token_response((request, pairs))

    def bad_metadata(description: str) -> Response:
        return JSONResponse({"error": "invalid_client_metadata", "error_description": description}, status_code=400)

    async def register(request: Request) -> Response:
        # RFC 7591 §3.1: the metadata comes as application/json. Nothing else is read: a page on another site
        # can make a browser POST a form or text/plain here unasked, but JSON only after a CORS preflight,
        # which this server never answers (a refusal is 400, as RFC 7591 §3.2.2 says of registration errors).
        sent = request.headers.get("content-type")
        if (sent or "").split(";", 1)[0].strip().lower() != JSON_TYPE:
            return bad_metadata(f"expected Content-Type: {JSON_TYPE} (RFC 7591 §3.1), got {sent!r}")
        raw = await read_limited(request)
        if raw is None:
            return too_large
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return bad_metadata("the body must be a JSON object")
        return authority.create_endpoint_response("client_registration", (request, body))

    return Starlette(routes=[
        Route("/.well-known/oauth-authorization-server", metadata), Route("/jwks", jwks),
        Route("/authorize", authorize), Route("/authorize/consent", consent, methods=["POST"]),
        Route("/token", token, methods=["POST"]), Route("/register", register, methods=["POST"])])


def main(argv: list[str] | None = None) -> None:
    from mcplab.server.streamable_http.process import bind, serve_app

    parser = argparse.ArgumentParser(description="A local OAuth 2.1 authorization server for the MCP lab.")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=9000, help="port (default 9000; 0 picks a free one)")
    parser.add_argument("--http", action="store_true", help=argparse.SUPPRESS)  # what launch() passes to every server
    parser.add_argument("--auto-approve", action="store_true", help="grant every valid request without a consent page")
    parser.add_argument("--client", action="append", default=[], metavar="ID:SECRET:REDIRECT_URI",
                        help="pre-register a client (empty SECRET: a public client); repeatable")
    parser.add_argument("--trust-cimd", action="append", default=[], metavar="HOST",
                        help="fetch Client ID Metadata Documents from this host; repeatable")
    parser.add_argument("--access-ttl", type=int, default=ACCESS_TTL, help=f"access token lifetime, s (default {ACCESS_TTL})")
    parser.add_argument("--code-ttl", type=int, default=CODE_TTL, help=f"authorization code lifetime, s (default {CODE_TTL})")
    parser.add_argument("--user", default="student", help="the resource owner who approves (default student)")
    parser.add_argument("--scope", action="append", metavar="SCOPE",
                        help=f"a scope this server grants; repeatable (default: {' '.join(SCOPES)})")
    parser.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    parser.add_argument("--tls-key", help="... and this private key (PEM)")
    parser.add_argument("--ca", help="CA bundle to trust when fetching client metadata documents over HTTPS")
    args = parser.parse_args(argv)
    if args.host not in LOOPBACK:
        parser.error(f"this authorization server listens on this machine only, not on {args.host}")
    sock = bind(args.host, args.port)
    host, port = sock.getsockname()[:2]
    scheme = "https" if args.tls_cert else "http"
    issuer = f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"
    authority = Authority(issuer, subject=args.user, auto_approve=args.auto_approve,
                          trusted_cimd=set(args.trust_cimd), verify=args.ca or True,
                          access_ttl=args.access_ttl, code_ttl=args.code_ttl,
                          scopes=[s for value in args.scope or SCOPES for s in value.split()])
    for spec in args.client:
        client_id, secret, redirect = spec.split(":", 2)
        if not acceptable_redirect(redirect):
            parser.error(f"--client {client_id}: the redirect URI must be loopback http:// or https://, without "
                         f"a fragment or userinfo, got {redirect!r}")
        authority.clients[client_id] = Client(client_id, secret or None, [redirect], client_id, "pre-registered",
                                              auth_method_requested="client_secret_basic")
    tls = (args.tls_cert, args.tls_key) if args.tls_cert else None
    try:
        asyncio.run(serve_app(create_app(authority), sock, f"mcplab: serving auth at {issuer}", tls=tls))
    except KeyboardInterrupt:
        raise SystemExit(130) from None


if __name__ == "__main__":
    sys.exit(main())
