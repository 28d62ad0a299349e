"""Check for lab 10's client over Streamable HTTP: what the client does with each answer it gets.

Theory of operation
-------------------
One table, ``NEXT_MOVE``: an HTTP answer a client over Streamable HTTP receives, and what the client
does next. Lab 05 asked what a server answers; this asks the other side, the decisions that
``labs/build/my_http_client.py`` makes in its ``answer``, ``read_stream``, ``open`` and ``close``. The
rules come from 2025-11-25 "basic/transports" (Sending Messages to the Server, Session Management)
and 2026-07-28 "basic/transports/streamable-http" (Sending Messages, Receiving Messages, Server
Validation): a request's answer is one JSON object or an event stream the client MUST both read; a
stream may carry notifications about the request before its response, and an event with empty data
(a priming event) carries no message; a notification gets 202 and no body; a 404 for a session id
means the session is gone and the client MUST initialize again; a server may refuse DELETE with 405;
a header that disagrees with the body is the client's own mistake, answered 400 with -32020.
"""

from __future__ import annotations

from typing import Any

from mcplab.exercises._feedback import Feedback, check, each_case, passed
from mcplab.i18n import N_, Texts, _

__all__ = ["check_next_move", "NEXT_MOVE", "MOVES"]

NEXT_MOVE = Texts({
    "a": "POST tools/list is answered 200 with Content-Type: application/json",
    "b": "POST tools/call is answered 200 with Content-Type: text/event-stream; its first event has an id "
         "and empty data",
    "c": "the next event on that stream carries notifications/message",
    "d": "the next event carries a message with no method and the id of the tools/call",
    "e": "POST notifications/initialized is answered 202 with no body",
    "f": "a legacy POST of tools/call, with the session id from initialize, is answered 404",
    "g": "a 2026-07-28 POST of tools/call is answered 400 with the error -32020",
    "h": "DELETE of the legacy session is answered 405",
})
MOVES = ("read the JSON body", "keep reading", "take it and close the stream", "nothing more to do",
         "initialize again", "fix the headers")
_EXPECTED = {"a": "read the JSON body", "b": "keep reading", "c": "keep reading",
             "d": "take it and close the stream", "e": "nothing more to do", "f": "initialize again",
             "g": "fix the headers", "h": "nothing more to do"}
_BECAUSE = Texts({
    "a": "a request's answer is either one JSON object or an event stream, and Content-Type says which",
    "b": "an event with empty data carries no message: a priming event, there so that a legacy client could "
         "resume the stream",
    "c": "a stream may carry notifications about the request before its response; a message with a method is "
         "never the response",
    "d": "the response is the message with the request's id and no method; once it has come, the stream is done "
         "with",
    "e": "nobody answers a notification: 202 Accepted and an empty body",
    "f": "404 for a session id means the session is gone: the client MUST start a new one with initialize, sent "
         "without a session id",
    "g": "-32020 is HeaderMismatch: a routing header disagreed with the body, or was missing; the client built "
         "the request wrong",
    "h": "405 means the server does not let clients end their sessions; nothing is left for the client to do "
         "but close its connection",
})


@check(N_('a dict of case → "read the JSON body", "keep reading", "take it and close the stream", '
          '"nothing more to do", "initialize again" or "fix the headers"'), dict)
def check_next_move(answer: Any) -> Feedback:
    """For each of NEXT_MOVE: what a client over Streamable HTTP does next."""
    hint = _("Content-Type decides how to read an answer; on a stream only the message with your id and no "
             "method is the response; 202 and 405 leave nothing to read; a 404 for a session means a new "
             "initialize; -32020 names your own headers")
    if (wrong := each_case(answer, _EXPECTED, MOVES, _BECAUSE, hint)) is not None:
        return wrong
    return passed(_("every answer read the way its Content-Type and status say, and the session started again "
                    "when the server had ended it"))
