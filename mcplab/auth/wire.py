"""OAuth on the wire: WWW-Authenticate challenges, client credentials, and masks for traces. Pure functions.

Theory of operation
-------------------
A resource server that refuses a request says why in a ``WWW-Authenticate`` header (RFC 6750 §3),
and MCP adds where its metadata lives (RFC 9728 §5.1)::

    HTTP/1.1 401 Unauthorized
    WWW-Authenticate: Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp",
                             scope="files:read"
    HTTP/1.1 403 Forbidden
    WWW-Authenticate: Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="..."

:func:`challenge` writes one; :func:`parse_challenges` reads any header a peer sends (several
challenges, quoted strings with escapes, tokens) and never raises: a header it cannot read yields
what it could read, and the client then falls back to the well-known URLs.

Traces keep every HTTP exchange of the flow, but a trace is something students save and share: the
values that grant access (tokens, codes, verifiers, client secrets) are masked by :func:`mask_headers`,
:func:`mask_form`, :func:`mask_json` and :func:`mask_url` before a frame is recorded.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any, Mapping
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit, urlunsplit

__all__ = ["verify_with", "challenge", "parse_challenges", "bearer_challenge", "basic_credentials", "mask_headers",
           "mask_form", "mask_json", "mask_url", "MASK", "SECRET_FIELDS"]

WWW_AUTHENTICATE = "WWW-Authenticate"
MASK = "‹masked›"
SECRET_FIELDS = frozenset({"access_token", "refresh_token", "id_token", "code", "code_verifier", "client_secret",
                           "registration_access_token", "assertion"})
MAX_HEADER = 8192  # characters of a WWW-Authenticate header read; a longer one is cut, not trusted further

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}=*))\s*,?', re.DOTALL)
_SCHEME = re.compile(rf"\s*,?\s*({_TOKEN})(?:\s+|$)")


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def challenge(scheme: str = "Bearer", **params: str | None) -> str:
    """One challenge for ``WWW-Authenticate``; parameters that are None are left out.

    >>> challenge(resource_metadata="http://h/.well-known/oauth-protected-resource", scope="a b")
    'Bearer resource_metadata="http://h/.well-known/oauth-protected-resource", scope="a b"'
    """
    parts = [f"{name}={_quote(value)}" for name, value in params.items() if value is not None]
    return f"{scheme} {', '.join(parts)}" if parts else scheme


def parse_challenges(header: str | None) -> list[tuple[str, dict[str, str]]]:
    """Every challenge in a ``WWW-Authenticate`` value: ``[(scheme lower-cased, {param: value})]``.

    >>> parse_challenges('Bearer error="insufficient_scope", scope="a b"')
    [('bearer', {'error': 'insufficient_scope', 'scope': 'a b'})]
    """
    text, found = (header or "")[:MAX_HEADER], []
    position = 0
    while position < len(text):
        scheme = _SCHEME.match(text, position)
        if not scheme:
            break
        position, params = scheme.end(), {}
        while position < len(text):
            param = _PARAM.match(text, position)
            if not param:
                break
            quoted, token = param.group(2), param.group(3)
            params[param.group(1).lower()] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else token
            position = param.end()
        found.append((scheme.group(1).lower(), params))
        if position < len(text) and not _SCHEME.match(text, position):
            break  # unreadable rest: keep what was read
    return found


def bearer_challenge(headers: Mapping[str, str]) -> dict[str, str] | None:
    """The parameters of the Bearer challenge in these response headers, or None if there is none."""
    value = next((v for k, v in headers.items() if k.lower() == WWW_AUTHENTICATE.lower()), None)
    return next((params for scheme, params in parse_challenges(value) if scheme == "bearer"), None)


def basic_credentials(client_id: str, client_secret: str) -> str:
    """``Authorization: Basic ...`` for a client (RFC 6749 §2.3.1: each part form-urlencoded first)."""
    pair = f"{quote(client_id, safe='')}:{quote(client_secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")


# --- masks: what a trace shows instead of a secret ------------------------------------------------------

def _masked_pairs(encoded: str) -> str:
    # Written by hand, not with urlencode: the mask must stay readable, not become %E2%80%B9...
    return "&".join(f"{quote_plus(k)}={MASK if k in SECRET_FIELDS else quote_plus(v, safe=':/')}"
                    for k, v in parse_qsl(encoded, keep_blank_values=True))


def mask_url(url: str) -> str:
    """The URL with secret query parameters (``code`` in a redirect, say) replaced by the mask."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    return urlunsplit(parts._replace(query=_masked_pairs(parts.query)))


def mask_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers with credentials masked: ``Authorization: Bearer ‹masked›``, a ``Location`` with its code masked."""
    masked = {}
    for name, value in headers.items():
        lowered = name.lower()
        if lowered == "authorization":
            scheme = value.split(" ", 1)[0]
            value = f"{scheme} {MASK}" if " " in value else MASK
        elif lowered == "location":
            value = mask_url(value)
        masked[name] = value
    return masked


def mask_form(body: str) -> str:
    """A form-encoded body (a token request) with its secrets masked."""
    return _masked_pairs(body) if parse_qsl(body, keep_blank_values=True) else body


def mask_json(body: str) -> str:
    """A JSON object body (a token or registration response) with its secret members masked."""
    try:
        value: Any = json.loads(body)
    except ValueError:
        return body
    if not isinstance(value, dict) or not SECRET_FIELDS & value.keys():
        return body
    return json.dumps({k: MASK if k in SECRET_FIELDS and v else v for k, v in value.items()}, ensure_ascii=False)


def verify_with(verify: Any) -> Any:
    """What httpx's ``verify=`` should get: a CA bundle path becomes an SSL context (True/False/contexts pass)."""
    if isinstance(verify, (str, bytes)) or hasattr(verify, "__fspath__"):
        import ssl

        return ssl.create_default_context(cafile=verify)
    return verify
