"""Checks for lab 05 (Streamable HTTP): the headers of a POST once a session is open, what the server
answers in each situation, an event-stream reader of your own, which Host/Origin pairs a local
server must refuse, and how the old HTTP+SSE transport (2024-11-05) moved a message.

The checks ask the real code: headers are compared with what :mod:`mcplab.transports.http` sends,
verdicts on Host and Origin come from :mod:`mcplab.server.streamable_http`'s own check, and your reader is
run against :class:`~mcplab.transports.http.SSEParser` on streams you have not seen.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable

from mcplab.exercises._feedback import Feedback, check, failed, passed
from mcplab.i18n import N_, Text, Texts, _

__all__ = [
    "check_post_headers", "check_replies", "check_sse_reader", "check_rebinding", "check_old_transport",
    "SESSION_ID", "REPLY_SITUATIONS", "HOST_ORIGIN_CASES", "OLD_TRANSCRIPT", "OLD_CHOICES",
]

# --- 1. the headers of a POST inside a session ----------------------------------------------------

SESSION_ID = "9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d"


@check(N_("a dict of header name → value"), dict)
def check_post_headers(answer: Any) -> Feedback:
    """The headers of a ``tools/call`` POST in the session SESSION_ID, negotiated at 2025-11-25."""
    hint = _("four headers: Accept (both reply types), Content-Type, the session id the initialize reply "
             "carried, and the negotiated MCP-Protocol-Version")
    if not isinstance(answer, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in answer.items()):
        return failed(_("expected a dict of header name → value, both strings"), hint)
    headers = {name.lower(): value for name, value in answer.items()}  # header names ignore case
    accept = {part.split(";")[0].strip().lower() for part in headers.get("accept", "").split(",")}
    if not {"application/json", "text/event-stream"} <= accept:
        return failed(_("Accept is {accept!r}: the reply may be JSON or an event stream, so the client must "
                        "accept both (the server answers 406 otherwise)", accept=headers.get('accept')), hint)
    if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return failed(_("the body is JSON: say so with Content-Type (the server answers 415 otherwise)"), hint)
    if headers.get("mcp-session-id") != SESSION_ID:
        return failed(_("Mcp-Session-Id must be exactly the id the initialize reply carried (SESSION_ID); without "
                        "it the server answers 400, with a wrong one 404"), hint)
    if headers.get("mcp-protocol-version") != "2025-11-25":
        return failed(_("from 2025-06-18 on, every request after initialize names the negotiated revision in "
                        "MCP-Protocol-Version"), hint)
    return passed(_("Accept, Content-Type, Mcp-Session-Id and MCP-Protocol-Version: what every POST of this "
                    "session carries (mcplab's transport adds them in HTTPTransport.headers())"))


# --- 2. what comes back ------------------------------------------------------------------------------

REPLY_SITUATIONS = Texts({
    "a": "POST notifications/initialized, with the session id",
    "b": "POST tools/list, with the session id",
    "c": "POST tools/call of a tool that reports progress, with a progressToken in _meta",
    "d": "POST tools/call without the Mcp-Session-Id header",
    "e": "POST ping with a session id that DELETE has ended",
    "f": "POST initialize from a web page whose Origin is http://evil.example",
    "g": "PUT /mcp, with the session id (the endpoint serves GET, POST and DELETE)",
    "h": "POST a 5 MiB body",
})
_REPLIES = {"a": 202, "b": "json", "c": "sse", "d": 400, "e": 404, "f": 403, "g": 405, "h": 413}
_WHY = Texts({
    "a": "a notification gets 202 Accepted and no body: there is nothing to answer",
    "b": "a plain result is one JSON object",
    "c": "progress comes first, so the reply is an event stream that ends with the result",
    "d": "after initialize every message must carry the session id: 400",
    "e": "an ended session is gone: 404, and the client must initialize again",
    "f": "a foreign Origin is refused with 403: the DNS-rebinding defence",
    "g": "a method the endpoint does not serve: 405 Method Not Allowed, with Allow: GET, POST, DELETE",
    "h": "the server reads at most 4 MiB: 413 Content Too Large",
})


@check(N_("a dict of situation → status or \"json\"/\"sse\""), dict)
def check_replies(answer: Any) -> Feedback:
    """For each situation: the status code, or "json" / "sse" for a 200."""
    hint = _('a dict {"a": ..., "b": ..., ...}: an int status, or "json"/"sse" for a 200 reply')
    if not isinstance(answer, dict) or set(answer) != set(REPLY_SITUATIONS):
        return failed(_("expected a dict with the keys {keys}", keys=", ".join(REPLY_SITUATIONS)), hint)
    if any(value is ... for value in answer.values()):
        return failed(_("some situations still have ..."), hint)
    for key in REPLY_SITUATIONS:
        if isinstance(answer[key], bool) or not isinstance(answer[key], (int, str)):
            return failed(_("({key}) {value!r} is neither a status code (an int) nor \"json\" or \"sse\"", key=key,
                            value=answer[key]), hint)
    wrong = [key for key in REPLY_SITUATIONS if answer[key] != _REPLIES[key]]
    if wrong:
        key = wrong[0]
        return failed(_("{wrong} of {total} not right; for instance ({key}) {situation}: not {answer!r}",
                        wrong=len(wrong), total=len(REPLY_SITUATIONS), key=key, situation=REPLY_SITUATIONS[key],
                        answer=answer[key]),
                      _("run the situation against the server above and read the status"))
    return passed(_("all eight: ") + _("; ").join(f"({k}) {_WHY[k]}" for k in ("a", "c", "f")) + " …")


# --- 3. your own event-stream reader ------------------------------------------------------------------

_STREAMS = [
    'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
    'event: message\r\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\r\n\r\n',
    ': keep-alive comment\n\ndata: {"jsonrpc":"2.0","method":"notifications/progress",'
    '"params":{"progressToken":1,"progress":1}}\n\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
    'id: 0\nretry: 500\ndata:\n\nid: 1\nevent: message\ndata: {"jsonrpc":"2.0","id":2,"result":{"a":1}}\n\n',
    'data: {"jsonrpc":"2.0",\ndata: "id":3,\ndata: "result":{}}\n\n',
    'data:{"jsonrpc":"2.0","id":4,"result":{}}\n\ndata: {"jsonrpc":"2.0","id":5,"result":{}}',
    'event: message\rdata: {"jsonrpc":"2.0","id":6,"result":{}}\r\r',  # a bare CR ends a line too
    ': ping\r\ndata: {"jsonrpc":"2.0","id":7,\rdata: "result":{}}\r\rdata: {"jsonrpc":"2.0","id":8,"result":{}}\n\n',
    # U+2028 inside a JSON string is text, not a line end (str.splitlines would cut there)
    'data: {"jsonrpc":"2.0","id":9,"result":{"text":"one\u2028two\x85three"}}\n\n',
]


def _expected(stream: str) -> list[dict]:
    from mcplab.transports.http import SSEParser

    parser = SSEParser()
    events = parser.feed(stream.encode("utf-8")) + parser.end()
    return [json.loads(event.data) for event in events if event.data.strip()]


@check(N_("a function read(body) that returns a list of dicts"), function=True)
def check_sse_reader(answer: Any) -> Feedback:
    """A function ``read(body: str) -> list[dict]``: the JSON-RPC messages in an SSE body, in order."""
    hint = _("split into lines at CRLF, LF or a lone CR (and nowhere else), skip lines starting with ':', "
             "collect the data: lines of an event, and at each empty line join them with \\n; an event with "
             "empty data (a priming event) carries no message; an event the stream never finished does not count")
    reader: Callable[[str], Any] = answer
    for number, stream in enumerate(_STREAMS, 1):
        try:
            got = reader(stream)
        except Exception as exc:  # the student's code: report, never crash the notebook
            return failed(_("on stream {number} it raised {error}: {exc}\n  stream: {stream!r}", number=number,
                            error=type(exc).__name__, exc=exc, stream=stream), hint)
        if inspect.iscoroutine(got):
            got.close()
            return failed(_("it returned a coroutine: write it with def, not async def"), hint)
        want = _expected(stream)
        if got != want:
            return failed(_("on stream {number} it gave {got!r}, expected {want!r}\n  stream: {stream!r}",
                            number=number, got=got, want=want, stream=stream), hint)
    return passed(_("all {count} streams read right: CRLF, a lone CR, comments, a priming event, multi-line "
                    "data, and an unfinished last event left out", count=len(_STREAMS)))


# --- 4. DNS rebinding -----------------------------------------------------------------------------------

HOST_ORIGIN_CASES = [  # a server bound to 127.0.0.1:8000 receives requests with these headers
    ("127.0.0.1:8000", None),                       # a script or an MCP client: no Origin at all
    ("localhost:8000", "http://localhost:3000"),    # a page another program on this machine serves
    ("evil.example:8000", "http://evil.example:8000"),  # evil.example now resolves to 127.0.0.1
    ("127.0.0.1:8000", "https://evil.example"),     # a page elsewhere, calling the loopback address
    ("127.0.0.1:8000", "null"),                     # a sandboxed frame or a file:// page
]


@check(N_("a list of five \"allow\"/\"refuse\""), (list, tuple))
def check_rebinding(answer: Any) -> Feedback:
    """For each of HOST_ORIGIN_CASES, "allow" or "refuse", for a server bound to 127.0.0.1."""
    from mcplab.server.streamable_http.replies import Refusal
    from mcplab.server.streamable_http.app import allow_list, check_host_and_origin

    hint = _('a list of five "allow"/"refuse"; a request is refused when its Host is not a loopback name, '
             "or when a browser sent an Origin that is not this server's own (scheme, host and port)")
    if any(a is ... for a in answer):
        return failed(_("some verdicts are still ..."), hint)
    if len(answer) != len(HOST_ORIGIN_CASES) or any(not isinstance(a, str) or a not in ("allow", "refuse")
                                                    for a in answer):
        return failed(_('expected a list of five strings, each "allow" or "refuse"'), hint)
    names = frozenset(allow_list("127.0.0.1"))
    for (host, origin), verdict in zip(HOST_ORIGIN_CASES, answer):
        try:
            check_host_and_origin(host, origin, names, names)
            real = "allow"
        except Refusal:
            real = "refuse"
        if verdict != real:
            return failed(_("Host {host!r} with Origin {origin!r}: the server would {real}, not {verdict}",
                            host=host, origin=origin, real=real, verdict=verdict), hint)
    return passed(_("all five: only loopback names in Host, and in Origin only this server's own origin (a page on "
                    "another port is another site). "
                    "DNS rebinding changes what a name resolves to, not the Host a browser sends"))


# --- 5. HTTP+SSE, the transport of 2024-11-05 -------------------------------------------------------------

OLD_TRANSCRIPT = Text("""\
GET /sse HTTP/1.1                                 ← the client opens the event stream first
Accept: text/event-stream

HTTP/1.1 200 OK
Content-Type: text/event-stream

event: endpoint
data: /messages?session_id=5f2e

POST /messages?session_id=5f2e HTTP/1.1           ← every client message is a POST here
Content-Type: application/json

{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Beijing"}}}

HTTP/1.1 202 Accepted

event: message                                    ← …and the reply comes back on the GET stream
data: {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Beijing: sunny"}]}}
""")
OLD_CHOICES = (Text("the response to that POST"), Text("the GET /sse stream opened first"))


@check(N_("a dict with the keys \"endpoints\", \"post_to\" and \"result_on\""), dict)
def check_old_transport(answer: Any) -> Feedback:
    """{"endpoints": how many URLs, "post_to": the URL of the POST, "result_on": one of OLD_CHOICES}."""
    hint = _('a dict {"endpoints": ..., "post_to": "...", "result_on": OLD_CHOICES[...]}: count the URLs, read '
             "the endpoint event, and look where the tools/call result arrives")
    if not isinstance(answer, dict) or set(answer) != {"endpoints", "post_to", "result_on"}:
        return failed(_('expected a dict with the keys "endpoints", "post_to" and "result_on"'), hint)
    if any(value is ... for value in answer.values()):
        return failed(_("some entries are still ..."), hint)
    if answer["endpoints"] != 2 or type(answer["endpoints"]) is not int:
        return failed(_("count the URLs the client uses: one to listen on, one to POST to"), hint)
    if answer["post_to"] != "/messages?session_id=5f2e":
        return failed(_("the client POSTs where the server told it to, in the data of the endpoint event"), hint)
    if not isinstance(answer["result_on"], str) or answer["result_on"] not in (OLD_CHOICES[1], str(OLD_CHOICES[1])):
        return failed(_("the POST only got 202 Accepted: where did the result come from?"), hint)
    return passed(_("two endpoints, a POST URL learnt from the first event, results on a long-lived GET stream: "
                    "Streamable HTTP (2025-03-26) folds all of it into one endpoint, one POST per message"))
