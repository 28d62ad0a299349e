"""One step of the OAuth flow on the wire: an HTTP exchange recorded in the trace, secrets masked.

Theory of operation
-------------------
Every request the client's flow makes (metadata, registration, the user agent's pages, the token
endpoint) goes through :func:`exchange`: it builds the request, records it as a ``c2s`` frame, sends
it without following redirects (a redirect is a step of its own that the flow reads), and records the
answer as ``s2c``. A trace is something students save and share, so the bodies pass through
:mod:`mcplab.auth.wire`'s masks first, and the head of each frame (:func:`traced_head`) names the step.
``auth/client.py`` (the flow) and ``auth/browser.py`` (the user agents) both build on this module.
"""

from __future__ import annotations

from typing import Any

import httpx

from mcplab.auth.wire import mask_form, mask_headers, mask_json, mask_url
from mcplab.wire.errors import AuthorizationError

__all__ = ["exchange", "traced_head"]


def traced_head(message: httpx.Request | httpx.Response, step: str) -> dict[str, Any]:
    """What a trace frame keeps of an HTTP message's head: method, status, masked headers and URL, the step."""
    request = message.request if isinstance(message, httpx.Response) else message
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in message.headers.raw}
    return {"method": request.method, "status": message.status_code if isinstance(message, httpx.Response)
            else None, "headers": mask_headers(headers), "url": mask_url(str(request.url)), "oauth": step}


def _masked(body: str, content_type: str) -> str:
    return mask_form(body) if "x-www-form-urlencoded" in content_type else mask_json(body)


async def exchange(http: httpx.AsyncClient, trace: Any, method: str, url: str, *, step: str,
                   data: dict[str, str] | None = None, json_body: Any = None,
                   headers: dict[str, str] | None = None) -> httpx.Response:
    """One HTTP exchange of the flow, recorded in ``trace`` (both directions, secrets masked); no redirects."""
    try:
        request = http.build_request(method, url, data=data, json=json_body,
                                     headers={"Accept": "application/json", **(headers or {})})
        trace.record("c2s", "http", _masked(request.content.decode("utf-8", errors="replace"),
                                           request.headers.get("content-type", "")), None,
                     http=traced_head(request, step))
        response = await http.send(request, follow_redirects=False)
    except httpx.HTTPError as exc:
        raise AuthorizationError(f"{method} {url} failed ({step}): {type(exc).__name__}: {exc}") from exc
    trace.record("s2c", "http", _masked(response.text, response.headers.get("content-type", "")), None,
                 http=traced_head(response, step))
    return response
