"""Checks for lab 02 (the stdio transport and the ``initialize`` handshake): write the seed's
``initialize`` request, put a session's first messages in order, negotiate versions, say which
calls the server's capabilities allow, and open a real connection at a chosen version.

Each check applies the rule the client itself applies, from :mod:`mcplab.lifecycle`, so the
feedback and the client never disagree.
"""

from __future__ import annotations

import json
from typing import Any

from mcplab.wire import jsonrpc
from mcplab import lifecycle
from mcplab.exercises._feedback import Feedback, check, decoded, failed, passed
from mcplab.i18n import N_, _
from mcplab.trace import Trace
from mcplab.wire.versions import LATEST_LEGACY, LEGACY_VERSIONS

__all__ = [
    "check_initialize_request", "check_handshake_order", "check_negotiation", "check_allowed_calls",
    "check_live_handshake", "HANDSHAKE_PIECES", "NEGOTIATIONS", "CLIENT_SPEAKS", "SERVER_CAPABILITIES", "CALLS",
]


def _request(answer: Any) -> tuple[Any, Feedback | None]:
    return decoded(answer, refused=N_("a server would refuse this with {code} ({name}): {message}"),
                   start=N_('start from {"jsonrpc": "2.0", "id": 1, "method": ..., "params": {...}}'),
                   write=N_("write the message as a Python dict"))


# --- 1. the seed's initialize request -----------------------------------------------------------

@check(N_("a JSON-RPC request, as a dict or as JSON text"), (dict, str, bytes))
def check_initialize_request(answer: Any) -> Feedback:
    """The request that opens a session asking for 2024-11-05, as client deep-pilot 0.8.0, no capabilities."""
    hint = _('initialize takes three params: "protocolVersion", "capabilities" (an object) and '
             '"clientInfo" ({"name", "version"})')
    message, problem = _request(answer)
    if problem is not None:
        return problem
    if not isinstance(message, jsonrpc.Request):
        return failed(_("this is not a request: initialize needs an \"id\", because the server must answer it"),
                      hint)
    if message.method != lifecycle.INITIALIZE:
        return failed(_("the method is {method!r}; the handshake opens with \"initialize\"", method=message.method),
                      hint)
    params = message.params if isinstance(message.params, dict) else {}
    if params.get("protocolVersion") != "2024-11-05":
        return failed(_("protocolVersion is {version!r}; the seed asks for \"2024-11-05\"",
                        version=params.get('protocolVersion')), hint)
    if params.get("capabilities") != {}:
        return failed(_("capabilities is {capabilities!r}; a client with no handlers for sampling, roots or "
                        "elicitation declares an empty object {{}}", capabilities=params.get('capabilities')), hint)
    info = params.get("clientInfo")
    if info != {"name": "deep-pilot", "version": "0.8.0"}:
        return failed(_("clientInfo is {info!r}", info=info),
                      _('the seed\'s client is {"name": "deep-pilot", "version": "0.8.0"}'))
    return passed(_("the seed's initialize request (id {id}): version 2024-11-05, no capabilities, client "
                    "deep-pilot 0.8.0", id=json.dumps(message.id)))


# --- 2. the order of a session's first messages -------------------------------------------------

HANDSHAKE_PIECES = {
    "A": '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    "B": '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},'
         '"serverInfo":{"name":"weather","version":"1.0.0"}}}',
    "C": '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    "D": '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
         '"capabilities":{},"clientInfo":{"name":"my-agent","version":"0.1.0"}}}',
}
_ORDER = ["D", "B", "A", "C"]


@check(N_("a list of the four letters"), (list, tuple, str))
def check_handshake_order(answer: Any) -> Feedback:
    """The letters of HANDSHAKE_PIECES in the order they cross the wire."""
    hint = _("who speaks first, what must the client wait for, and what may it send only after that?")
    if not all(isinstance(letter, str) for letter in answer) or sorted(answer) != sorted(_ORDER):
        return failed(_("expected each of the four letters A, B, C, D exactly once, e.g. [\"A\", \"B\", \"C\", "
                        "\"D\"]"), hint)
    answer = list(answer)
    if answer[0] != "D":
        return failed(_("{letter} cannot come first: the client opens with the initialize request (D)",
                        letter=answer[0]), hint)
    if answer[1] != "B":
        return failed(_("after initialize the client waits for the server's answer (B) before anything else"), hint)
    if answer[2] != "A":
        return failed(_("tools/list is a normal request: it may only follow notifications/initialized (A)"),
                      _("the handshake ends with the client's initialized notification"))
    return passed(_("initialize → result → notifications/initialized → normal requests such as tools/list"))


# --- 3. version negotiation ---------------------------------------------------------------------

CLIENT_SPEAKS = ("2025-06-18", "2025-11-25")
NEGOTIATIONS = {  # case → (the version the client asks for, the versions the server supports)
    "a": ("2025-11-25", ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")),
    "b": ("2025-11-25", ("2024-11-05", "2025-03-26", "2025-06-18")),
    "c": ("2025-06-18", ("2024-11-05", "2025-03-26")),
    "d": ("2025-06-18", ("2025-11-25",)),
}


def _negotiate(asked: str, supported: tuple[str, ...]) -> tuple[str, str]:
    answered = asked if asked in supported else max(supported, key=LEGACY_VERSIONS.index)
    return answered, ("continue" if answered in CLIENT_SPEAKS else "disconnect")


@check(N_("a dict of case → (version, decision)"), dict)
def check_negotiation(answer: Any) -> Feedback:
    """For each case of NEGOTIATIONS: (the version the server answers, "continue" or "disconnect")."""
    hint = _("the server echoes the version if it supports it, else answers with its own latest; the "
             "client continues only with a version it speaks (CLIENT_SPEAKS)")
    if not isinstance(answer, dict) or set(answer) != set(NEGOTIATIONS):
        return failed(_("expected a dict with the keys {keys}", keys=sorted(NEGOTIATIONS)), hint)
    for case, (asked, supported) in NEGOTIATIONS.items():
        if answer[case] is ...:
            return failed(_("case {case} is not answered yet", case=case), hint)
        if not isinstance(answer[case], (tuple, list)) or len(answer[case]) != 2:
            return failed(_("case {case}: expected a pair such as (\"2025-06-18\", \"continue\")", case=case), hint)
        version, decision = answer[case]
        expected_version, expected_decision = _negotiate(asked, supported)
        if version != expected_version:
            why = (_("it supports the requested version, so it MUST echo it") if asked in supported
                   else _("it lacks the requested version, so it answers with the latest one it supports"))
            return failed(_("case {case}: the server answers {expected}, not {version!r}: {why}", case=case,
                            expected=expected_version, version=version, why=why), hint)
        if decision != expected_decision:
            return failed(_("case {case}: with {version} the client should {decision} (it speaks {speaks})",
                            case=case, version=version, decision=expected_decision,
                            speaks=_(" and ").join(CLIENT_SPEAKS)), hint)
    return passed(_("all four negotiations: echo when supported, else the server's latest; "
                    "disconnect when the client cannot speak the answer"))


# --- 4. what the capabilities allow -------------------------------------------------------------

SERVER_CAPABILITIES = {"tools": {"listChanged": True}, "resources": {}}
CALLS = {"a": "tools/call", "b": "prompts/get", "c": "resources/subscribe", "d": "resources/read",
         "e": "logging/setLevel", "f": "ping"}


def _allowed(method: str) -> bool:
    need = lifecycle.required_capability(method, LATEST_LEGACY)
    if need is None:
        return True
    declared = SERVER_CAPABILITIES.get(need[0])
    return isinstance(declared, dict) and (need[1] is None or bool(declared.get(need[1])))


@check(N_("a set of letters"), (set, frozenset, list, tuple, str))
def check_allowed_calls(answer: Any) -> Feedback:
    """The set of letters of CALLS a client may send to a server that declared SERVER_CAPABILITIES."""
    hint = _("each method family needs its capability; resources/subscribe needs resources.subscribe "
             "as well; ping needs none")
    if not all(isinstance(letter, str) for letter in answer) or not set(answer) <= set(CALLS):
        return failed(_("expected a set of letters from {letters}, e.g. {{\"a\", \"b\"}}", letters=sorted(CALLS)),
                      hint)
    expected = {letter for letter, method in CALLS.items() if _allowed(method)}
    for letter in sorted(set(answer) - expected):
        return failed(_("{letter} ({method}) is not allowed: the server did not declare what it needs",
                        letter=letter, method=CALLS[letter]), hint)
    for letter in sorted(expected - set(answer)):
        return failed(_("{letter} ({method}) is allowed too", letter=letter, method=CALLS[letter]), hint)
    return passed(_("tools/call, resources/read and ping; prompts, subscriptions and logging were never declared"))


# --- 5. a live handshake at a chosen version ----------------------------------------------------

WEATHER_NAME = "weather"  # servers/weather.py's serverInfo.name

@check(N_("the trace of a connection (client.trace)"), Trace)
def check_live_handshake(trace: Any) -> Feedback:
    """The trace of a real connection to the weather server that asked for 2025-03-26."""
    hint = _("open a Client on the weather server over stdio that asks for the revision the question names; "
             "pass client.trace once the async with block has closed")
    frames = [f for f in getattr(trace, "frames", []) if f.channel not in ("stderr", "note")]
    if len(frames) < 3:
        return failed(_("expected at least the three handshake frames, got {count}", count=len(frames)), hint)
    first, second, third = (f.message for f in frames[:3])
    if not (isinstance(first, jsonrpc.Request) and first.method == lifecycle.INITIALIZE):
        return failed(_("the first frame should be the initialize request"), hint)
    asked = first.params.get("protocolVersion") if isinstance(first.params, dict) else None
    if asked != "2025-03-26":
        return failed(_("the client asked for {version}, not 2025-03-26", version=asked), hint)
    if not (isinstance(second, jsonrpc.Response) and second.id == first.id and isinstance(second.result, dict)):
        return failed(_("the second frame should be the server's result for the initialize id"), hint)
    if second.result.get("protocolVersion") != "2025-03-26":
        return failed(_("the server answered {version}; was it the weather server?",
                        version=second.result.get('protocolVersion')), hint)
    if not (isinstance(third, jsonrpc.Notification) and third.method == lifecycle.INITIALIZED):
        return failed(_("the third frame should be notifications/initialized"), hint)
    info = second.result.get("serverInfo")
    name = info.get("name") if isinstance(info, dict) else None
    if name != WEATHER_NAME:  # a toy server of the lab's own echoes any version it is asked for
        return failed(_("the server that answered calls itself {name!r}, not {weather!r}: the question asks for "
                        "the weather server, started as a process", name=name, weather=WEATHER_NAME), hint)
    return passed(_("a real 2025-03-26 session with {name!r}: initialize → result → initialized", name=name))
