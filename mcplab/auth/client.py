"""The MCP client as an OAuth 2.1 client: from a 401 to an access token, and back to the request.

Theory of operation
-------------------
Pass ``auth=OAuth(...)`` to the HTTP transport (``http(url, auth=OAuth())``). Each request then
carries ``Authorization: Bearer <token>`` once there is one, and :meth:`OAuthFlow.send` handles
what comes back (spec "Authorization Flow Steps")::

    401 (any request)           → discover → register → authorize (PKCE) → token → send it again
    403 insufficient_scope      → authorize again for (scopes held) ∪ (scopes challenged) → send again
    expired token, refresh held → refresh first (the server rotates the refresh token)
    still refused after max_attempts authorizations for one request → give the refusal to the caller

Discovery follows discovery.py: Protected Resource Metadata (its ``resource`` must name this server,
or the flow stops before any authorization), then the issuer's metadata (its ``issuer`` must match,
and it must offer PKCE S256, or the flow stops). Registration, in the spec's order: pre-registered
credentials (``client_id``), a Client ID Metadata Document (``client_metadata_url``, when the server
supports it), dynamic registration (RFC 7591, ``application_type: native``). Credentials are kept
per issuer: when the metadata names another authorization server, nothing of the old one is reused
(2026-07-28 "Authorization Server Binding").

The authorization request carries ``state``, the PKCE challenge (S256, Authlib), the scope the
Scope Selection Strategy picks, and ``resource`` (RFC 8707); a user agent (browser.py) brings back
the redirect, which is checked before its code is used: ``state``, then ``iss`` (RFC 9207). Tokens
live in memory only, on this object. Every exchange is recorded in the transport's trace on the
"http" channel with its URL and a label (``http["oauth"]``), secrets masked (wire.py).
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import anyio
import httpx

from mcplab.auth import discovery
from mcplab.auth.browser import headless
from mcplab.auth.steps import exchange, traced_head
from mcplab.auth.wire import basic_credentials, bearer_challenge
from mcplab.wire.errors import AuthorizationError

__all__ = ["OAuth", "OAuthFlow", "Tokens", "Registration", "exchange"]

SAFETY_S = 10  # a token this close to its expiry is refreshed before use


@dataclass(frozen=True)
class OAuth:
    """Who this client is to authorization servers, and how its user approves.

    ``client_id``/``client_secret``: pre-registered credentials; ``client_metadata_url``: an https URL
    serving this client's metadata document (CIMD); neither: dynamic registration. ``user_agent``:
    browser.py's ``headless()`` (the default) or ``system_browser()``.
    """

    client_name: str = "mcplab"
    redirect_uri: str = "http://127.0.0.1:33418/callback"
    client_id: str | None = None
    client_secret: str | None = None
    client_metadata_url: str | None = None
    user_agent: Any = None
    refresh: bool = True          # ask for refresh tokens (grant_types, offline_access when offered)
    max_attempts: int = 3         # authorizations tried for one request before its refusal stands
    flow_timeout: float = 300.0   # seconds one authorization may take, a person's consent included

    def start(self, server_url: str) -> OAuthFlow:
        return OAuthFlow(self, server_url)


@dataclass
class Registration:
    """A client identity at one authorization server (never presented to another)."""
    client_id: str
    client_secret: str | None
    method: str                   # token_endpoint_auth_method: none, client_secret_basic, client_secret_post
    how: str                      # "pre-registered", "metadata document", "dynamic registration"


@dataclass
class Tokens:
    access_token: str
    issuer: str
    scope: str | None
    expires_at: float | None
    refresh_token: str | None = None

    def fresh(self) -> bool:
        return self.expires_at is None or time.time() < self.expires_at - SAFETY_S


@dataclass
class OAuthFlow:
    """One client's authorization state for one MCP server: metadata, registrations, tokens."""

    config: OAuth
    server_url: str
    resource: str | None = None
    issuer: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    registrations: dict[str, Registration] = field(default_factory=dict)
    tokens: Tokens | None = None
    requested_scope: str | None = None
    prm_scopes: Any = None        # the metadata's scopes_supported, for the Scope Selection Strategy
    lock: anyio.Lock = field(default_factory=anyio.Lock, repr=False)  # one flow at a time, however many requests

    # --- what the transport calls -------------------------------------------------------------------
    def headers(self) -> dict[str, str]:
        """``Authorization: Bearer ...`` once there is a token (spec: on every request)."""
        return {"Authorization": f"Bearer {self.tokens.access_token}"} if self.tokens else {}

    async def send(self, http: httpx.AsyncClient, request: httpx.Request, trace: Any) -> httpx.Response:
        """Send an MCP request; on 401 / 403 insufficient_scope authorize and send it again (bounded)."""
        if self.tokens is not None and not self.tokens.fresh() and self.tokens.refresh_token:
            async with self.lock:
                tokens = self.tokens  # another request may have refreshed (or dropped them) while this one waited
                if tokens is not None and not tokens.fresh() and tokens.refresh_token:
                    await self._refresh(http, trace)
            self._stamp(request)
        attempts = 0
        while True:
            response = await http.send(request, stream=True)
            challenge = bearer_challenge(response.headers) or {}
            step_up = response.status_code == 403 and challenge.get("error") == "insufficient_scope"
            if (response.status_code != 401 and not step_up) or attempts >= self.config.max_attempts:
                return response
            attempts += 1
            body = (await response.aread()).decode("utf-8", errors="replace")
            await response.aclose()
            trace.record("s2c", "http", body, None, http=traced_head(response, "refused: authorization needed"
                                                               if not step_up else "refused: insufficient scope"))
            sent_with = request.headers.get("authorization")
            # Shielded, with a deadline of its own: the request's timeout (5 s for an era probe) is no
            # time for a person to read a consent page, and a flow cut halfway leaves a spent code and
            # no token. The request itself stays under its caller's deadline.
            with anyio.CancelScope(shield=True), anyio.fail_after(self.config.flow_timeout):
                async with self.lock:
                    if self.tokens is not None and sent_with != self.headers()["Authorization"]:
                        pass  # another request's flow got a new token while this one waited: just use it
                    elif not step_up and self.tokens is not None and self.tokens.refresh_token and attempts == 1 \
                            and await self._refresh(http, trace):
                        pass
                    else:
                        await self.authorize(http, trace, challenge, step_up=step_up)
            self._retry(request, trace)

    def _stamp(self, request: httpx.Request) -> None:
        request.headers.update(self.headers())

    def _retry(self, request: httpx.Request, trace: Any) -> None:
        self._stamp(request)
        trace.record("c2s", "http", request.content.decode("utf-8", errors="replace"), None,
                     http=traced_head(request, "the same request, with the new token"))

    # --- the flow --------------------------------------------------------------------------------------
    async def authorize(self, http: httpx.AsyncClient, trace: Any, challenge: dict[str, str], *,
                        step_up: bool = False) -> Tokens:
        """Run the whole flow for this challenge; return (and keep) the new tokens."""
        if not step_up or not self.metadata:
            await self.discover(http, trace, challenge.get("resource_metadata"))
        if step_up:  # keep what was asked before, add what this operation needs (2026-07-28 step-up)
            scope = discovery.union(self.requested_scope or (self.tokens.scope if self.tokens else None),
                                    challenge.get("scope"))
        else:
            scope = discovery.select_scope(challenge.get("scope"), self.prm_scopes)
        offered = self.metadata.get("scopes_supported")
        if (scope and self.config.refresh and isinstance(offered, list) and "offline_access" in offered
                and "offline_access" not in scope.split()):
            scope += " offline_access"  # 2026-07-28 "Refresh Tokens": MAY, when the server lists it
        self.requested_scope = scope
        registration = await self.register(http, trace)
        code, verifier = await self.authorization_code(http, trace, registration, scope)
        return await self.token(http, trace, registration, {
            "grant_type": "authorization_code", "code": code, "redirect_uri": self.config.redirect_uri,
            "code_verifier": verifier})

    async def discover(self, http: httpx.AsyncClient, trace: Any, header_url: str | None) -> None:
        """Protected Resource Metadata, then the issuer's metadata; both checked (discovery.py)."""
        prm = None
        for url in discovery.prm_urls(self.server_url, header_url):
            reply = await exchange(http, trace, "GET", url, step="protected resource metadata")
            document = _json(reply)
            if reply.status_code == 200 and isinstance(document, dict):
                prm = document
                break
        if prm is not None:
            if not discovery.resource_matches(prm.get("resource"), self.server_url):
                raise AuthorizationError(f"the protected resource metadata names {prm.get('resource')!r}, not this "
                                         f"server ({self.server_url}): refusing to authorize for it (RFC 9728 §3.3)")
            servers = prm.get("authorization_servers")
            if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
                raise AuthorizationError("the protected resource metadata names no authorization server")
            self.resource, issuer, self.prm_scopes = prm["resource"], servers[0], prm.get("scopes_supported")
        else:  # 2025-03-26: no resource metadata; the server's origin is the authorization server
            parts = urlsplit(self.server_url)
            self.resource, issuer, self.prm_scopes = self.server_url, f"{parts.scheme}://{parts.netloc}", None
            trace.note("no protected resource metadata: using the 2025-03-26 rules (the server's origin is the issuer)")
        if self.issuer is not None and issuer != self.issuer:
            trace.note(f"the authorization server changed from {self.issuer} to {issuer}: its tokens are dropped")
            self.tokens, self.requested_scope = None, None
        self.issuer, self.metadata = issuer, await self._issuer_metadata(http, trace, issuer, legacy=prm is None)
        methods = self.metadata.get("code_challenge_methods_supported")
        if not isinstance(methods, list) or "S256" not in methods:
            raise AuthorizationError(f"{issuer} does not offer PKCE S256 (code_challenge_methods_supported: "
                                     f"{methods!r}): refusing to proceed (spec \"Authorization Code Protection\")")

    async def _issuer_metadata(self, http: httpx.AsyncClient, trace: Any, issuer: str, legacy: bool) -> dict[str, Any]:
        for url in discovery.as_metadata_urls(issuer):
            reply = await exchange(http, trace, "GET", url, step="authorization server metadata")
            document = _json(reply)
            if reply.status_code != 200 or not isinstance(document, dict):
                continue
            if document.get("issuer") != issuer and not (legacy and document.get("issuer") == issuer + "/"):
                raise AuthorizationError(f"the metadata at {url} names issuer {document.get('issuer')!r}, not "
                                         f"{issuer!r}: it must not be used (RFC 8414 §3.3)")
            return document
        if legacy:  # 2025-03-26 "Fallbacks for Servers without Metadata Discovery"
            trace.note(f"no metadata at {issuer}: using the default endpoints /authorize, /token, /register")
            return {"issuer": issuer, "code_challenge_methods_supported": ["S256"],
                    **{name: issuer + path for name, path in discovery.LEGACY_ENDPOINTS.items()}}
        raise AuthorizationError(f"no authorization server metadata for {issuer} at {discovery.as_metadata_urls(issuer)}")

    async def register(self, http: httpx.AsyncClient, trace: Any) -> Registration:
        """This client's identity at the current issuer, in the spec's order of preference."""
        issuer, config, metadata = self.issuer or "", self.config, self.metadata
        if issuer in self.registrations:
            return self.registrations[issuer]
        supported = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        if config.client_id:
            bound = next((i for i, r in self.registrations.items() if r.how == "pre-registered"), None)
            if bound is not None:  # 2026-07-28 "Authorization Server Binding": say so, never reuse them elsewhere
                raise AuthorizationError(f"the pre-registered client {config.client_id!r} belongs to {bound}; this "
                                         f"server now names {issuer}: register with it and configure those credentials")
            method = "none" if not config.client_secret else next(
                (m for m in ("client_secret_basic", "client_secret_post") if m in supported), "client_secret_basic")
            found = Registration(config.client_id, config.client_secret, method, "pre-registered")
        elif config.client_metadata_url and metadata.get("client_id_metadata_document_supported") is True:
            found = Registration(config.client_metadata_url, None, "none", "metadata document")
        elif isinstance(metadata.get("registration_endpoint"), str):
            wanted = next((m for m in ("none", "client_secret_basic", "client_secret_post") if m in supported), "none")
            grant_types = ["authorization_code", "refresh_token"] if config.refresh else ["authorization_code"]
            reply = await exchange(http, trace, "POST", metadata["registration_endpoint"],
                                   step="dynamic client registration", json_body={
                                       "client_name": config.client_name, "redirect_uris": [config.redirect_uri],
                                       "grant_types": grant_types, "response_types": ["code"],
                                       "token_endpoint_auth_method": wanted, "application_type": "native"})
            document = _json(reply)
            if reply.status_code not in (200, 201) or not isinstance(document, dict) or "client_id" not in document:
                raise _refusal("registration", reply, document)
            secret = document.get("client_secret")
            method = document.get("token_endpoint_auth_method") or ("client_secret_basic" if secret else "none")
            found = Registration(str(document["client_id"]), secret, method, "dynamic registration")
        else:
            raise AuthorizationError(f"{issuer} supports no registration this client can use (no pre-registered "
                                     f"client_id, no metadata document support, no registration_endpoint)")
        self.registrations[issuer] = found
        return found

    async def authorization_code(self, http: httpx.AsyncClient, trace: Any, registration: Registration,
                                 scope: str | None) -> tuple[str, str]:
        """Send the user agent to the authorization endpoint; check what it brings back; the code and verifier."""
        from authlib.common.security import generate_token
        from authlib.oauth2.rfc7636 import create_s256_code_challenge


        state, verifier, issuer = secrets.token_urlsafe(24), generate_token(64), self.issuer or ""
        params = {"response_type": "code", "client_id": registration.client_id,
                  "redirect_uri": self.config.redirect_uri, "state": state,
                  "code_challenge": create_s256_code_challenge(verifier), "code_challenge_method": "S256",
                  "resource": self.resource}
        if scope:
            params["scope"] = scope
        endpoint = self.metadata.get("authorization_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationError(f"{issuer} publishes no authorization_endpoint")
        url = endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)
        back = await (self.config.user_agent or headless())(http, trace, url, self.config.redirect_uri)
        answer = dict(parse_qsl(urlsplit(back).query))
        if answer.get("state") != state:
            raise AuthorizationError("the authorization response's state does not match the request: discarded")
        problem = discovery.check_iss(answer.get("iss"), issuer,
                                      self.metadata.get("authorization_response_iss_parameter_supported") is True)
        if problem:  # on a mismatch even an error in the response must not be acted on (RFC 9207 §2.4)
            raise AuthorizationError(f"authorization response rejected: {problem}")
        if "error" in answer:
            raise AuthorizationError(f"the authorization server refused: {answer['error']}: "
                                     f"{answer.get('error_description', '')}".rstrip(": "), error=answer["error"])
        if not answer.get("code"):
            raise AuthorizationError("the authorization response carries no code")
        return answer["code"], verifier

    async def token(self, http: httpx.AsyncClient, trace: Any, registration: Registration,
                    form: dict[str, str]) -> Tokens:
        """POST to the token endpoint (client authentication as registered); keep the tokens."""
        form = {**form, "resource": self.resource or self.server_url}  # RFC 8707: in token requests too
        headers = {}
        if registration.method == "client_secret_basic" and registration.client_secret:
            headers["Authorization"] = basic_credentials(registration.client_id, registration.client_secret)
        else:
            form["client_id"] = registration.client_id
            if registration.method == "client_secret_post" and registration.client_secret:
                form["client_secret"] = registration.client_secret
        reply = await exchange(http, trace, "POST", self.metadata["token_endpoint"], step=f"token ({form['grant_type']})",
                               data=form, headers=headers)
        document = _json(reply)
        if reply.status_code != 200 or not isinstance(document, dict) or not document.get("access_token"):
            raise _refusal("token request", reply, document)
        if str(document.get("token_type", "")).lower() != "bearer":
            raise AuthorizationError(f"expected a Bearer token, got token_type {document.get('token_type')!r}")
        expires = document.get("expires_in")
        previous = self.tokens
        self.tokens = Tokens(document["access_token"], self.issuer or "", document.get("scope") or self.requested_scope,
                             time.time() + expires if isinstance(expires, (int, float)) else None,
                             document.get("refresh_token") or (previous.refresh_token if previous and
                                                               form["grant_type"] == "refresh_token" else None))
        return self.tokens

    async def _refresh(self, http: httpx.AsyncClient, trace: Any) -> bool:
        """Trade the refresh token for new tokens; on refusal forget them (a full flow follows)."""
        assert self.tokens is not None and self.tokens.refresh_token is not None
        registration = self.registrations.get(self.tokens.issuer)
        if registration is None or not self.metadata:
            return False
        try:
            await self.token(http, trace, registration, {"grant_type": "refresh_token",
                                                         "refresh_token": self.tokens.refresh_token})
            return True
        except AuthorizationError:
            self.tokens = None
            return False


def _json(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content) if response.content else None
    except ValueError:
        return None


def _refusal(what: str, response: httpx.Response, document: Any) -> AuthorizationError:
    error = document.get("error") if isinstance(document, dict) else None
    described = document.get("error_description", "") if isinstance(document, dict) else response.text[:200]
    return AuthorizationError(f"{what} refused ({response.status_code}): {error or 'no error code'}: {described}",
                              error=error if isinstance(error, str) else None)

