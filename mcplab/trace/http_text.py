"""A trace's HTTP frames as the HTTP/1.1 text that crossed the wire: request line, headers, body.

Theory of operation
-------------------
The Streamable HTTP transport records every exchange with its method, status and headers
(``Frame.http``), each SSE event as a frame of its own (its fields under ``http["sse"]``). This
module turns those frames back into text a student can read beside the spec::

    POST /mcp HTTP/1.1
    Accept: application/json, text/event-stream
    Mcp-Method: tools/list
    ...

    {"jsonrpc":"2.0","id":2,"method":"tools/list",...}

    HTTP/1.1 200 OK
    content-type: application/json
    ...

``stable=True`` keeps notebook output the same on every run: the port in ``Host`` becomes
``PORT``, session ids become ``<session 1>``, ``<session 2>`` …, and :data:`VOLATILE` headers are
left out.
"""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Iterable
from urllib.parse import urlsplit

from mcplab.trace import Frame
from mcplab.wire.versions import HEADER_SESSION_ID

__all__ = ["render_http", "VOLATILE"]

# Headers render_http leaves out for stable output: the date, and the encodings httpx offers (they
# depend on which compression libraries happen to be installed).
VOLATILE = frozenset({"date", "accept-encoding"})


def render_http(frames: Iterable[Frame], *, path: str = "/mcp", stable: bool = True) -> str:
    """HTTP frames of a trace as the HTTP/1.1 text that crossed the wire, request line, headers, body.

    >>> print(render_http(client.trace.frames[:2]))           # doctest: +SKIP
    POST /mcp HTTP/1.1
    ...
    """
    sessions: dict[str, str] = {}
    lines: list[str] = []
    for frame in frames:
        if frame.channel != "http" or not frame.http:
            continue
        head, sse = frame.http, frame.http.get("sse")
        headers = dict(head.get("headers") or {})
        if frame.direction == "c2s":
            target = path
            if head.get("url"):  # a step of the authorization flow: its own URL (mcplab/auth/client.py)
                parts = urlsplit(head["url"])
                target = parts.path + (f"?{parts.query}" if parts.query else "")
            lines.append(f"{head['method']} {target} HTTP/1.1")
        elif headers or sse is None:
            lines.append(f"HTTP/1.1 {head['status']} {HTTPStatus(head['status']).phrase}")
        for name, value in headers.items():
            if stable and name.lower() in VOLATILE:
                continue
            if stable and name.lower() == "host":
                value = re.sub(r":\d+$", ":PORT", value)
            if stable and name.lower() == HEADER_SESSION_ID.lower():
                value = sessions.setdefault(value, f"<session {len(sessions) + 1}>")
            lines.append(f"{name}: {value}")
        if headers:
            lines.append("")
        if sse is not None:
            lines += [f"{field}: {sse[field]}" for field in ("event", "id", "retry") if field in sse]
            lines += [f"data: {part}" for part in frame.raw.split("\n")] + [""]
        elif frame.raw:
            lines += [frame.raw, ""]
    return "\n".join(lines).rstrip("\n")
