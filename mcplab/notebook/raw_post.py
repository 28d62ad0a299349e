"""One raw POST to a Streamable HTTP endpoint, shown as it went and as it came back.

Theory of operation
-------------------
The :class:`~mcplab.client.Client` always sends well-formed requests, which is what a client should
do and exactly what a lab cannot use to show a server refusing a bad one. So a lab that wants to
send the seed's abbreviated POST, a forged ``Mcp-Name`` or a version from the future writes the body
and the headers by hand, and this module sends them with httpx, nothing added but the two headers
every POST carries (``Accept`` with both media types, ``Content-Type``: 2026-07-28, Streamable HTTP:
Sending Messages to the Server). It does not check, fix or retry anything: what the server answers
is the lesson.

:func:`post` returns a :class:`Posted`: the status, the answer decoded, and a text that shows the
headers, the whole body and what came back (the error, or a tool result's text). A lab prints it.
:func:`post_discover` is the one request a version probe needs, ``server/discover`` stamped with
the version asked for, and keeps the reply whole. :func:`send_post` and :func:`send_discover` are
the same, awaited, through ``place.web()``: what a lab uses, because in the browser edition there
is no socket and no blocking call, and the request goes to the server in the page. A server that has not answered within
``TIMEOUT_S`` gets a :class:`TimeoutError` that says so: there is no status to show, and a late
reply says nothing about the spec.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from mcplab.i18n import _
from mcplab.lifecycle import stamp
from mcplab.wire import jsonrpc

__all__ = ["Posted", "post", "post_discover", "send_post", "send_discover", "ACCEPT"]

#: what every POST of a message carries (2026-07-28, Streamable HTTP: Sending Messages to the Server)
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
TIMEOUT_S = 30.0  # seconds for the answer: a busy classroom machine is slow, and a reply late is no lesson


@dataclass(frozen=True)
class Posted:
    """A POST and its answer: ``str()`` is what a lab prints."""
    title: str
    headers: Mapping[str, str]      # the MCP headers sent (ACCEPT is always added)
    body: Any                       # the JSON body as sent
    status: int
    text: str                       # the reply's body, as it came

    @property
    def answer(self) -> Any:
        """The reply's body as JSON (None when it is not JSON)."""
        try:
            return json.loads(self.text)
        except ValueError:
            return None

    @property
    def message(self) -> Any:
        """The reply decoded as a JSON-RPC message (a Response, an ErrorResponse, …)."""
        return jsonrpc.decode(self.text)

    def said(self) -> Any:
        """What came back, in short: the error object, a tool result's text, or the whole result."""
        answer = self.answer
        if not isinstance(answer, dict):
            return self.text
        if "error" in answer:
            return answer["error"]
        result = answer.get("result")
        content = result.get("content") if isinstance(result, dict) else None
        if isinstance(content, list) and content and isinstance(content[0], dict) and "text" in content[0]:
            return content[0]["text"]
        return result

    def __str__(self) -> str:
        lines = [self.title] if self.title else []
        lines.append("  → " + "  ".join(f"{name}: {value}" for name, value in self.headers.items()))
        lines.append("  → " + json.dumps(self.body, ensure_ascii=False))
        lines.append(f"  ← {self.status} {json.dumps(self.said(), ensure_ascii=False)}")
        return "\n".join(lines) + "\n"


def post(url: str, headers: Mapping[str, str], body: Any, *, title: str = "") -> Posted:
    """POST ``body`` (JSON, sent as UTF-8) with ``headers`` to ``url``, as it is: nothing checked or fixed."""
    import httpx  # first use only: `from mcplab import notebook` stays fast

    sent = json.dumps(body, ensure_ascii=False).encode("utf-8")
    try:
        reply = httpx.post(url, content=sent, headers={**ACCEPT, **headers}, timeout=TIMEOUT_S)
    except httpx.TimeoutException:
        raise _late(url) from None
    return Posted(title, dict(headers), body, reply.status_code, reply.text)


async def send_post(url: str, headers: Mapping[str, str], body: Any, *, title: str = "") -> Posted:
    """:func:`post`, awaited, the way this place reaches ``url`` (``place.web()``: in the page, its own server)."""
    import httpx

    from mcplab import place

    sent = json.dumps(body, ensure_ascii=False).encode("utf-8")
    async with place.web(timeout=TIMEOUT_S) as web:
        try:
            reply = await web.post(url, content=sent, headers={**ACCEPT, **headers})
        except httpx.TimeoutException:
            raise _late(url) from None
    return Posted(title, dict(headers), body, reply.status_code, reply.text)


def _late(url: str) -> TimeoutError:
    # the clock ran out, not the server's answer: no status to show
    return TimeoutError(_("{url} did not answer the POST within {seconds:g} s on this machine; this says nothing "
                          "about the spec or the server; run the cell again (or close other work)",
                          url=url, seconds=TIMEOUT_S))


def post_discover(url: str, version: str, request_id: int | str) -> Posted:
    """``server/discover`` asking for ``version``, in the body's ``_meta`` and in the headers."""
    return post(url, *_discover(version, request_id), title=f"server/discover asking for {version}")


async def send_discover(url: str, version: str, request_id: int | str) -> Posted:
    """:func:`post_discover`, awaited, the way this place reaches ``url`` (see :func:`send_post`)."""
    return await send_post(url, *_discover(version, request_id), title=f"server/discover asking for {version}")


def _discover(version: str, request_id: int | str) -> tuple[dict[str, str], dict[str, Any]]:
    body = {"jsonrpc": "2.0", "id": request_id, "method": "server/discover", "params": stamp(None, version, {})}
    return {"MCP-Protocol-Version": version, "Mcp-Method": "server/discover"}, body
