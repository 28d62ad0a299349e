"""The client's discovery rules, as pure functions: which URLs to try, in which order, and what to believe.

Theory of operation
-------------------
Spec "Authorization Server Discovery" (2025-11-25 §"Protected Resource Metadata Discovery Requirements";
2026-07-28 "authorization-server-discovery"). From a 401 on ``https://example.com/public/mcp``::

    1. the resource_metadata URL in WWW-Authenticate, if there is one          (RFC 9728 §5.1)
    2. https://example.com/.well-known/oauth-protected-resource/public/mcp     (path inserted, RFC 9728 §3.1)
    3. https://example.com/.well-known/oauth-protected-resource                (root)
       none of them: the 2025-03-26 rules — the server's origin is the issuer  (legacy fallback)

The metadata's ``resource`` must name the server the client is talking to (RFC 9728 §3.3); the
client then sends that value, exactly as published, as the RFC 8707 ``resource`` parameter. Then, for
the chosen issuer, :func:`as_metadata_urls` (RFC 8414 §3.1 and OIDC Discovery, spec's order), and
the document's ``issuer`` must equal the issuer the URL was built from, character for character
(RFC 8414 §3.3; a MUST in 2026-07-28: otherwise a server could hand out another's endpoints).

:func:`select_scope` is the spec's "Scope Selection Strategy", :func:`union` the step-up rule of
2026-07-28 (keep what was granted, add what the challenge asks), and :func:`check_iss` the RFC 9207
table of "Authorization Response Validation".
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["prm_urls", "as_metadata_urls", "resource_matches", "select_scope", "union", "check_iss",
           "LEGACY_ENDPOINTS"]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
LEGACY_ENDPOINTS = {"authorization_endpoint": "/authorize", "token_endpoint": "/token",
                    "registration_endpoint": "/register"}  # 2025-03-26 "Fallbacks for Servers without Metadata Discovery"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def prm_urls(server_url: str, header_url: str | None = None) -> list[str]:
    """Where to look for Protected Resource Metadata, in the order the spec requires.

    >>> prm_urls("http://h:8000/mcp")
    ['http://h:8000/.well-known/oauth-protected-resource/mcp', 'http://h:8000/.well-known/oauth-protected-resource']
    """
    path = urlsplit(server_url).path.rstrip("/")
    urls = [header_url] if header_url else []
    if path:
        urls.append(_origin(server_url) + PRM_WELL_KNOWN + path)
    urls.append(_origin(server_url) + PRM_WELL_KNOWN)
    return list(dict.fromkeys(urls))


def as_metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may live: RFC 8414 path insertion, then OpenID Connect Discovery.

    >>> as_metadata_urls("https://auth.example.com/tenant1")[0]
    'https://auth.example.com/.well-known/oauth-authorization-server/tenant1'
    """
    origin, path = _origin(issuer), urlsplit(issuer).path.rstrip("/")
    if not path:
        return [origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"]
    return [origin + "/.well-known/oauth-authorization-server" + path, origin + "/.well-known/openid-configuration" + path,
            origin + path + "/.well-known/openid-configuration"]


def resource_matches(resource: object, server_url: str) -> bool:
    """Does the metadata's ``resource`` name this server: same scheme, host and port, and a path that
    is the server's path or a parent of it (a server at the root of its origin names itself so)?"""
    if not isinstance(resource, str):
        return False
    try:
        mine, theirs = urlsplit(server_url), urlsplit(resource)
        same_origin = (mine.scheme.lower(), mine.hostname, mine.port) == (theirs.scheme.lower(), theirs.hostname,
                                                                          theirs.port)
    except ValueError:
        return False
    mine_path, their_path = mine.path.rstrip("/") + "/", theirs.path.rstrip("/") + "/"
    return same_origin and not theirs.fragment and mine_path.startswith(their_path)


def select_scope(challenged: str | None, scopes_supported: object) -> str | None:
    """Scope Selection Strategy: the challenge's scope, else all of ``scopes_supported``, else none."""
    if challenged:
        return challenged
    if isinstance(scopes_supported, list) and scopes_supported:
        return " ".join(s for s in scopes_supported if isinstance(s, str))
    return None


def union(previous: str | None, challenged: str | None) -> str | None:
    """Previously requested scopes, then the newly challenged ones, without repeats (2026-07-28 step-up).

    >>> union("mcp:basic", "mcp:write")
    'mcp:basic mcp:write'
    """
    merged = list(dict.fromkeys([*(previous or "").split(), *(challenged or "").split()]))
    return " ".join(merged) or None


def check_iss(iss: str | None, issuer: str, advertised: bool) -> str | None:
    """RFC 9207 §2.4 as the 2026-07-28 table has it; None if the response may be used, else why not.

    A present ``iss`` is compared by simple string comparison (no normalisation at all), whether or
    not the server advertised it; an absent one is refused only when the server said it sends one.
    """
    if iss is not None:
        return None if iss == issuer else f"the response names issuer {iss!r}, not {issuer!r} (a mix-up?)"
    return "the server promised an iss parameter and sent none" if advertised else None
