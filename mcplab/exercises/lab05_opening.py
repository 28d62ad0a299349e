"""Check for lab 05's request sent too early: what a fresh server answers before any ``initialize``.

Theory of operation
-------------------
One table, ``TOO_EARLY``: a first message to a fresh weather server, over stdio or Streamable HTTP,
legacy or 2026-07-28, and what comes back. The rules behind it: a legacy client SHOULD NOT send
requests other than pings before ``initialize`` is answered (basic/lifecycle, "Initialization"), and
over stdio the server's only answer is a JSON-RPC error (-32600 here); over Streamable HTTP a server
that requires a session SHOULD answer a message without ``Mcp-Session-Id`` (other than ``initialize``)
with 400 (basic/transports, "Session Management"), ``ping`` included, since there is no session yet; in
2026-07-28 there is no handshake, and a request carrying ``_meta`` is answered on either transport, while
one without it is refused as invalid params (-32602). The expected answers are what the bundled server
really sends; a test sends each case and compares.
"""

from __future__ import annotations

from typing import Any

from mcplab.exercises._feedback import Feedback, check, each_case, passed
from mcplab.i18n import N_, Texts, _

__all__ = ["check_too_early", "TOO_EARLY", "TOO_EARLY_ANSWERS"]

TOO_EARLY = Texts({
    "a": "stdio: tools/list",
    "b": "stdio: ping",
    "c": "stdio: tools/list whose _meta names 2026-07-28 and the client's capabilities",
    "d": "stdio, the server started with --era modern: tools/list without _meta",
    "e": "Streamable HTTP: a POST of tools/list, no Mcp-Session-Id",
    "f": "Streamable HTTP: a POST of ping, no Mcp-Session-Id",
    "g": "Streamable HTTP: a POST of tools/list with _meta and the 2026-07-28 headers",
})
TOO_EARLY_ANSWERS = ("result", "error -32600", "error -32602", "HTTP 400")
_EXPECTED = {"a": "error -32600", "b": "result", "c": "result", "d": "error -32602", "e": "HTTP 400",
             "f": "HTTP 400", "g": "result"}
_WHY = Texts({
    "a": "a legacy request before initialize: over stdio the server can only answer with a JSON-RPC error, "
         "Invalid Request",
    "b": "ping is the one request a client may send before initialize is answered",
    "c": "a 2026-07-28 request carries what a handshake would have said: no initialize is needed",
    "d": "a modern-only server needs the revision and the capabilities in every request's _meta: invalid params",
    "e": "there is no session yet, and a server that requires one answers a message without it with 400",
    "f": "over HTTP the session header is missing whatever the method: ping is no exception",
    "g": "2026-07-28 has no sessions and no handshake: each request stands alone",
})


@check(N_('a dict of case → "result", "error -32600", "error -32602" or "HTTP 400"'), dict)
def check_too_early(answer: Any) -> Feedback:
    """For each of TOO_EARLY: what a fresh weather server sends back."""
    hint = _("before initialize a legacy stdio server can only answer with a JSON-RPC error and lets ping through; "
             "Streamable HTTP refuses any message without the session header with 400; 2026-07-28 needs no "
             "handshake, only _meta in every request")
    if (wrong := each_case(answer, _EXPECTED, TOO_EARLY_ANSWERS, _WHY, hint)) is not None:
        return wrong
    return passed(_("the transport shapes the refusal: an error on the pipe, a 400 over HTTP; 2026-07-28 needs no "
                    "handshake"))
