"""Checks for lab 01 (JSON-RPC 2.0): write a request and a notification, spot the invalid
message, name the error codes, and split a byte stream where it hurts.

Every check reads the answer the way a peer would, with :mod:`mcplab.wire.jsonrpc`, so the
feedback names the same rule the decoder enforces.
"""

from __future__ import annotations

import json
from typing import Any

from mcplab.wire import jsonrpc
from mcplab.wire.errors import error_name
from mcplab.exercises._feedback import Feedback, check, decoded, failed, passed
from mcplab.i18n import N_, Texts, _

__all__ = [
    "check_tools_call_request", "check_notification", "check_find_invalid", "check_error_code",
    "check_awkward_split", "CANDIDATES", "RULES", "SITUATIONS", "SEED_REPLY_LINE",
]


_KIND = {jsonrpc.Request: N_("a request"), jsonrpc.Notification: N_("a notification"),
         jsonrpc.Response: N_("a success response"), jsonrpc.ErrorResponse: N_("an error response")}


def _read(answer: Any) -> tuple[Any, Feedback | None]:
    """The decoded message, or the feedback for an answer that is not one."""
    return decoded(answer, refused=N_("a peer would refuse this with {code} ({name}): {message}"),
                   start=N_('start from {"jsonrpc": "2.0", ...} and check each member against the table above'),
                   write=N_("write the message as a Python dict, or as the JSON text itself"))


# --- 1. the seed's request ---------------------------------------------------------------------

@check(N_("a JSON-RPC request, as a dict or as JSON text"), (dict, str, bytes))
def check_tools_call_request(answer: Any) -> Feedback:
    """Is ``answer`` a JSON-RPC request that calls the tool ``read_file`` with a ``path``?"""
    hint = _('a request has "jsonrpc", "id", "method" and "params"; the tool\'s name and arguments go in params')
    message, problem = _read(answer)
    if problem is not None:
        return problem
    if isinstance(message, jsonrpc.Notification):
        return failed(_("this is a notification: it has no \"id\", so no result would ever come back"),
                      _('add an "id" (a string or an integer) so the response can be matched to it'))
    if not isinstance(message, jsonrpc.Request):
        return failed(_("this is {kind}, which a server sends back, not a request", kind=_(_KIND[type(message)])),
                      hint)
    if message.method != "tools/call":
        return failed(_("the method is {method!r}; calling a tool is the method \"tools/call\"",
                        method=message.method), hint)
    if message.id != 1 or isinstance(message.id, bool):
        return failed(_("the id is {id}; the question asks for id 1 (the number: \"1\" in quotes is another id)",
                        id=json.dumps(message.id)), _("a response carries the id of its request back, so it "
                                                      "must be exactly the one asked for"))
    params = message.params
    if not isinstance(params, dict) or params.get("name") != "read_file":
        return failed(_('params must name the tool: {"name": "read_file", ...}'),
                      _('tools/call takes the tool\'s name and its arguments: {"name": ..., "arguments": {...}}'))
    arguments = params.get("arguments")
    if not isinstance(arguments, dict) or not isinstance(arguments.get("path"), str) or not arguments["path"]:
        return failed(_('the tool\'s arguments must be an object with a "path" string'),
                      _('put the file path in params.arguments.path'))
    if arguments != {"path": "/tmp/test.txt"}:
        return failed(_("the arguments are {arguments}; the question reads the file /tmp/test.txt, and read_file "
                        "takes only a path", arguments=json.dumps(arguments, ensure_ascii=False)),
                      _("copy the path exactly as the question gives it"))
    return passed(_("a valid request (id {id}): tools/call of read_file with a path argument",
                    id=json.dumps(message.id)))


# --- 2. the handshake's last message ------------------------------------------------------------

@check(N_("a JSON-RPC notification, as a dict or as JSON text"), (dict, str, bytes))
def check_notification(answer: Any) -> Feedback:
    """Is ``answer`` the ``notifications/initialized`` notification (so: no ``id``)?"""
    hint = _('a notification is a request without "id": {"jsonrpc": "2.0", "method": ...}')
    message, problem = _read(answer)
    if problem is not None:
        return problem
    if isinstance(message, jsonrpc.Request):
        return failed(_("this has \"id\": {id}, so it is a request and the server would have to answer it",
                        id=json.dumps(message.id)), _('leave "id" out: nobody answers a notification'))
    if not isinstance(message, jsonrpc.Notification):
        return failed(_("this is {kind}, not a notification", kind=_(_KIND[type(message)])), hint)
    if message.method != "notifications/initialized":
        return failed(_("the method is {method!r}; the handshake ends with \"notifications/initialized\"",
                        method=message.method), hint)
    return passed(_("a notification (no id): notifications/initialized, which nobody answers"))


# --- 3. spot the invalid message ---------------------------------------------------------------

CANDIDATES: dict[str, str] = {
    "A": '{"jsonrpc": "2.0", "id": "call-7", "method": "tools/list"}',
    "B": '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
    "C": '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}',
    "D": '{"jsonrpc": "2.0", "id": null, "method": "tools/list"}',
    "E": '{"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}',
}
"""Five messages; exactly one of them breaks a rule, under MCP."""

RULES: Texts = Texts({
    "jsonrpc": '"jsonrpc" is missing or is not "2.0"',
    "method": '"method" is not a string',
    "id": '"id" is not a string or an integer',
    "params": '"params" is neither an object nor an array',
    "both": 'a response carries both "result" and "error"',
    "neither": 'no "method", no "result" and no "error"',
})
"""The reasons to choose from, as the decoder checks them."""

_INVALID, _RULE = "D", "id"


def _what_it_is(letter: str) -> str:
    message = jsonrpc.decode(CANDIDATES[letter])
    return _(_KIND[type(message)]) + {
        jsonrpc.Request: _(" (a string id is as good as an integer)"),
        jsonrpc.Notification: _(": having no id is exactly right for it"),
        jsonrpc.ErrorResponse: _(", which is a perfectly valid reply"),
    }.get(type(message), "")


@check(N_("a pair (letter, rule)"), tuple)
def check_find_invalid(answer: Any) -> Feedback:
    """``answer`` is ``(letter, rule)``: which of :data:`CANDIDATES` is invalid, and which of
    :data:`RULES` it breaks."""
    hint = _("answer with a pair such as (\"A\", \"params\"): a letter from CANDIDATES and a key from RULES")
    if not (len(answer) == 2 and all(isinstance(part, str) for part in answer) and answer[0] in CANDIDATES
            and answer[1] in RULES):
        return failed(_("expected (letter, rule) with a letter in {letters} and a rule in {rules}, got {answer!r}",
                        letters=sorted(CANDIDATES), rules=sorted(RULES), answer=answer), hint)
    letter, rule = answer
    if letter != _INVALID:
        return failed(_("{letter} is valid: it is {what}", letter=letter, what=_what_it_is(letter)),
                      _("decode each candidate in your head: which member has a type the rules forbid?"))
    if rule != _RULE:
        return failed(_("{letter} is the invalid one, but its problem is not that {rule}", letter=letter,
                        rule=RULES[rule]), _("look at the value of its id: JSON-RPC tolerates it, MCP does not"))
    return passed(_("{letter} is invalid: {rule} (MCP forbids a null id; a server replies -32600 Invalid Request)",
                    letter=letter, rule=RULES[rule]))


# --- 4. which code? -----------------------------------------------------------------------------

SITUATIONS: Texts = Texts({
    "a": 'the line is {"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
    "b": 'a request calls the method "tools/lst", which the server does not have',
    "c": 'the line is {"jsonrpc": "2.0", "method": 1, "params": "bar"}',
    "d": '"initialize" arrives without the "protocolVersion" its params require',
    "e": "the server's handler crashes with an unexpected exception while answering a valid request",
})
"""Five things that go wrong; each has one JSON-RPC error code."""

_CODES = {"a": jsonrpc.PARSE_ERROR, "b": jsonrpc.METHOD_NOT_FOUND, "c": jsonrpc.INVALID_REQUEST,
          "d": jsonrpc.INVALID_PARAMS, "e": jsonrpc.INTERNAL_ERROR}


@check(N_("a dict of situation → error code"), dict)
def check_error_code(answer: Any) -> Feedback:
    """``answer`` maps each key of :data:`SITUATIONS` to the error code the peer sends back."""
    hint = _("the five codes are in the table above: -32700, -32600, -32601, -32602, -32603")
    if not isinstance(answer, dict) or set(answer) != set(SITUATIONS):
        return failed(_("expected a dict with the keys {keys}", keys=sorted(SITUATIONS)), hint)
    for key, code in sorted(answer.items()):
        if code is not ... and (isinstance(code, bool) or not isinstance(code, int)):
            return failed(_("{key}: {value!r} is not an error code: a JSON-RPC code is an integer such as -32700",
                            key=key, value=code), hint)
    open_ = sorted(key for key, code in answer.items() if code is ...)
    wrong = sorted(key for key, code in answer.items() if code is not ... and code != _CODES[key])
    if not open_ and not wrong:
        return passed(_("every situation gets its code: ") +
                      ", ".join(f"{key} → {code} ({error_name(code)})" for key, code in sorted(_CODES.items())))
    problems = ([_("{key}: {value!r} is not it", key=key, value=answer[key]) for key in wrong]
                + [_("{key}: not answered", key=key) for key in open_])
    first = (wrong or open_)[0]
    return failed(_("; ").join(problems),
                  _("for {key}, ask in order: could the peer parse the JSON? is it a valid request? "
                    "does the method exist? are its params right? did the handler itself fail?", key=first))


# --- 5. framing ---------------------------------------------------------------------------------

SEED_REPLY_LINE = ('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"文件内容..."}]}}\n'
                   ).encode("utf-8")
"""The seed's success reply as it crosses stdio: one line of UTF-8."""


@check(N_("a list of bytes objects"), (list, tuple))
def check_awkward_split(chunks: Any) -> Feedback:
    """``chunks`` is a list of ``bytes`` that join to :data:`SEED_REPLY_LINE`, with at least one
    boundary inside a multi-byte character; a :class:`~mcplab.wire.jsonrpc.LineFramer` must still
    read exactly the one message."""
    hint = _("slice SEED_REPLY_LINE, e.g. [line[:k], line[k:]], with k inside one of the 3-byte Chinese characters")
    if not (isinstance(chunks, (list, tuple)) and chunks and all(isinstance(c, bytes) for c in chunks)):
        return failed(_("expected a list of bytes objects"), hint)
    if b"".join(chunks) != SEED_REPLY_LINE:
        return failed(_("the chunks do not join back to SEED_REPLY_LINE: a transport never loses or adds a byte"),
                      hint)
    cuts, offset = [], 0
    for chunk in chunks[:-1]:
        offset += len(chunk)
        cuts.append(offset)
    # A UTF-8 continuation byte looks like 0b10xxxxxx: a cut before one splits a character.
    inside = [cut for cut in cuts if 0 < cut < len(SEED_REPLY_LINE) and SEED_REPLY_LINE[cut] & 0xC0 == 0x80]
    if not inside:
        return failed(_("none of your {count} cut(s) falls inside a multi-byte character", count=len(cuts)), hint)
    framer = jsonrpc.LineFramer()
    out = [item for chunk in chunks for item in framer.feed(chunk)]
    expected = jsonrpc.decode(SEED_REPLY_LINE)
    if out != [expected]:  # pragma: no cover - the framer's own tests guard this
        return failed(_("the framer read {out!r}", out=out), _("this is a bug in mcplab: please report it"))
    return passed(_("{chunks} chunks, {inside} cut(s) inside a character, and the framer still read exactly "
                    "one message: {message!r}", chunks=len(chunks), inside=len(inside), message=expected))
