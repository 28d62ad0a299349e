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
from mcplab.wire.errors import JSONRPCError, error_name
from mcplab.exercises._feedback import Feedback, failed, passed, unanswered
from mcplab.wire.versions import LEGACY_VERSIONS

__all__ = [
    "check_initialize_request", "check_handshake_order", "check_negotiation", "check_allowed_calls",
    "check_live_handshake", "HANDSHAKE_PIECES", "NEGOTIATIONS", "CLIENT_SPEAKS", "SERVER_CAPABILITIES", "CALLS",
]


def _request(answer: Any) -> tuple[Any, Feedback | None]:
    if isinstance(answer, dict):
        answer = json.dumps(answer, ensure_ascii=False)
    if not isinstance(answer, (str, bytes)):
        return None, failed(f"expected a dict or a JSON string, got {type(answer).__name__}",
                            "write the message as a Python dict")
    try:
        return jsonrpc.decode(answer), None
    except JSONRPCError as exc:
        return None, failed(f"a server would refuse this with {exc.code} ({error_name(exc.code)}): {exc.message}",
                            'start from {"jsonrpc": "2.0", "id": 1, "method": ..., "params": {...}}')


# --- 1. the seed's initialize request -----------------------------------------------------------

def check_initialize_request(answer: Any) -> Feedback:
    """The request that opens a session asking for 2024-11-05, as client deep-pilot 0.8.0, no capabilities."""
    hint = ('initialize takes three params: "protocolVersion", "capabilities" (an object) and '
            '"clientInfo" ({"name", "version"})')
    if answer is ...:
        return unanswered(hint)
    message, problem = _request(answer)
    if problem is not None:
        return problem
    if not isinstance(message, jsonrpc.Request):
        return failed("this is not a request: initialize needs an \"id\", because the server must answer it", hint)
    if message.method != lifecycle.INITIALIZE:
        return failed(f"the method is {message.method!r}; the handshake opens with \"initialize\"", hint)
    params = message.params if isinstance(message.params, dict) else {}
    if params.get("protocolVersion") != "2024-11-05":
        return failed(f"protocolVersion is {params.get('protocolVersion')!r}; the seed asks for \"2024-11-05\"", hint)
    if params.get("capabilities") != {}:
        return failed(f"capabilities is {params.get('capabilities')!r}; a client with no handlers for "
                      f"sampling, roots or elicitation declares an empty object {{}}", hint)
    info = params.get("clientInfo")
    if info != {"name": "deep-pilot", "version": "0.8.0"}:
        return failed(f"clientInfo is {info!r}", 'the seed\'s client is {"name": "deep-pilot", "version": "0.8.0"}')
    return passed(f"the seed's initialize request (id {json.dumps(message.id)}): version 2024-11-05, "
                  f"no capabilities, client deep-pilot 0.8.0")


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


def check_handshake_order(answer: Any) -> Feedback:
    """The letters of HANDSHAKE_PIECES in the order they cross the wire."""
    hint = "who speaks first, what must the client wait for, and what may it send only after that?"
    if answer is ...:
        return unanswered(hint)
    if not isinstance(answer, (list, tuple, str)) or sorted(answer) != sorted(_ORDER):
        return failed("expected each of the four letters A, B, C, D exactly once, e.g. [\"A\", \"B\", \"C\", \"D\"]",
                      hint)
    answer = list(answer)
    if answer[0] != "D":
        return failed(f"{answer[0]} cannot come first: the client opens with the initialize request (D)", hint)
    if answer[1] != "B":
        return failed("after initialize the client waits for the server's answer (B) before anything else", hint)
    if answer[2] != "A":
        return failed("tools/list is a normal request: it may only follow notifications/initialized (A)",
                      "the handshake ends with the client's initialized notification")
    return passed("initialize → result → notifications/initialized → normal requests such as tools/list")


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


def check_negotiation(answer: Any) -> Feedback:
    """For each case of NEGOTIATIONS: (the version the server answers, "continue" or "disconnect")."""
    hint = ("the server echoes the version if it supports it, else answers with its own latest; the "
            "client continues only with a version it speaks (CLIENT_SPEAKS)")
    if answer is ...:
        return unanswered(hint)
    if not isinstance(answer, dict) or set(answer) != set(NEGOTIATIONS):
        return failed(f"expected a dict with the keys {sorted(NEGOTIATIONS)}", hint)
    if all(value is ... for value in answer.values()):
        return unanswered(hint)
    for case, (asked, supported) in NEGOTIATIONS.items():
        if answer[case] is ...:
            return failed(f"case {case} is not answered yet", hint)
        if not isinstance(answer[case], (tuple, list)) or len(answer[case]) != 2:
            return failed(f"case {case}: expected a pair such as (\"2025-06-18\", \"continue\")", hint)
        version, decision = answer[case]
        expected_version, expected_decision = _negotiate(asked, supported)
        if version != expected_version:
            why = ("it supports the requested version, so it MUST echo it" if asked in supported
                   else "it lacks the requested version, so it answers with the latest one it supports")
            return failed(f"case {case}: the server answers {expected_version}, not {version!r}: {why}", hint)
        if decision != expected_decision:
            return failed(f"case {case}: with {version} the client should {expected_decision} "
                          f"(it speaks {' and '.join(CLIENT_SPEAKS)})", hint)
    return passed("all four negotiations: echo when supported, else the server's latest; "
                  "disconnect when the client cannot speak the answer")


# --- 4. what the capabilities allow -------------------------------------------------------------

SERVER_CAPABILITIES = {"tools": {"listChanged": True}, "resources": {}}
CALLS = {"a": "tools/call", "b": "prompts/get", "c": "resources/subscribe", "d": "resources/read",
         "e": "logging/setLevel", "f": "ping"}


def _allowed(method: str) -> bool:
    need = lifecycle.required_capability(method, lifecycle.LATEST_LEGACY)
    if need is None:
        return True
    declared = SERVER_CAPABILITIES.get(need[0])
    return isinstance(declared, dict) and (need[1] is None or bool(declared.get(need[1])))


def check_allowed_calls(answer: Any) -> Feedback:
    """The set of letters of CALLS a client may send to a server that declared SERVER_CAPABILITIES."""
    hint = ("each method family needs its capability; resources/subscribe needs resources.subscribe "
            "as well; ping needs none")
    if answer is ...:
        return unanswered(hint)
    if not isinstance(answer, (set, list, tuple, str)) or not set(answer) <= set(CALLS):
        return failed(f"expected a set of letters from {sorted(CALLS)}, e.g. {{\"a\", \"b\"}}", hint)
    expected = {letter for letter, method in CALLS.items() if _allowed(method)}
    for letter in sorted(set(answer) - expected):
        return failed(f"{letter} ({CALLS[letter]}) is not allowed: the server did not declare what it needs", hint)
    for letter in sorted(expected - set(answer)):
        return failed(f"{letter} ({CALLS[letter]}) is allowed too", hint)
    return passed("tools/call, resources/read and ping; prompts, subscriptions and logging were never declared")


# --- 5. a live handshake at a chosen version ----------------------------------------------------

def check_live_handshake(trace: Any) -> Feedback:
    """The trace of a real connection to the weather server that asked for 2025-03-26."""
    hint = 'Client(stdio(WEATHER), version="2025-03-26"); pass client.trace after the async with block'
    if trace is ...:
        return unanswered(hint)
    frames = [f for f in getattr(trace, "frames", []) if f.channel not in ("stderr", "note")]
    if len(frames) < 3:
        return failed(f"expected at least the three handshake frames, got {len(frames)}", hint)
    first, second, third = (f.message for f in frames[:3])
    if not (isinstance(first, jsonrpc.Request) and first.method == lifecycle.INITIALIZE):
        return failed("the first frame should be the initialize request", hint)
    if first.params.get("protocolVersion") != "2025-03-26":
        return failed(f"the client asked for {first.params.get('protocolVersion')}, not 2025-03-26", hint)
    if not (isinstance(second, jsonrpc.Response) and second.id == first.id):
        return failed("the second frame should be the server's result for the initialize id", hint)
    if second.result.get("protocolVersion") != "2025-03-26":
        return failed(f"the server answered {second.result.get('protocolVersion')}; was it the weather server?", hint)
    if not (isinstance(third, jsonrpc.Notification) and third.method == lifecycle.INITIALIZED):
        return failed("the third frame should be notifications/initialized", hint)
    name = second.result.get("serverInfo", {}).get("name")
    return passed(f"a real 2025-03-26 session with {name!r}: initialize → result → initialized")
