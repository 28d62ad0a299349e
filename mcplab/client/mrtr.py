"""Multi round-trip requests (MRTR): how a modern server asks the client for input mid-request.

Theory of operation
-------------------
In the modern era a server never sends a request of its own (2026-07-28, "basic/patterns/mrtr").
When a ``tools/call``, ``resources/read`` or ``prompts/get`` needs something only the client can
give (the user's answer to a form, a completion from the client's model, its roots), the server
answers with a result that is not final::

    → {"id":1,"method":"tools/call","params":{"name":"deploy","arguments":{…},"_meta":{…}}}
    ← {"id":1,"result":{"resultType":"input_required",
                        "inputRequests":{"ok":{"method":"elicitation/create","params":{…}}},
                        "requestState":"eyJzdGVwIjoxfQ"}}
    → {"id":2,"method":"tools/call","params":{"name":"deploy","arguments":{…},"_meta":{…},
                        "inputResponses":{"ok":{"action":"accept","content":{"confirm":true}}},
                        "requestState":"eyJzdGVwIjoxfQ"}}
    ← {"id":2,"result":{"resultType":"complete","content":[…]}}

The client answers every entry of ``inputRequests`` and retries the *original* request with a
new id, the answers under ``inputResponses`` and ``requestState`` echoed exactly (never parsed,
never changed; left out when the server sent none). The server may ask again, so this repeats,
up to :data:`MAX_ROUNDS` rounds; each round is one request and one response in the trace.

Who answers: an *input handler*, ``handler(request: InputRequest) -> result`` (plain or async),
called once per entry. :func:`handler_for` builds the usual one from the same callables that
answer legacy server requests (``elicitation=``, ``sampling=``, ``roots=`` on the Client), so
one function serves both eras. A terminal prompt (``mcplab call``) or a notebook form is just
another input handler.

:func:`input_required` and :func:`retry_params` are pure; :func:`run_rounds` is the loop, and
does no I/O of its own: it is handed the function that sends one request.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping

from mcplab.i18n import _
from mcplab.wire.errors import LocalProtocolError, RemoteProtocolError
from mcplab.client.results import INPUT_REQUIRED, result_type

__all__ = ["MRTR_METHODS", "INPUT_METHODS", "MAX_ROUNDS", "InputRequest", "InputRequired", "TooManyRounds",
           "input_required", "retry_params", "handler_for", "run_rounds"]

MRTR_METHODS = ("tools/call", "resources/read", "prompts/get")  # the only ones that may need input
INPUT_METHODS = ("elicitation/create", "sampling/createMessage", "roots/list")
MAX_ROUNDS = 8      # a server that keeps asking must not keep the caller forever
ROUND_KEYS = ("inputResponses", "requestState")


class TooManyRounds(RemoteProtocolError):
    """The server was still answering ``input_required`` after :data:`MAX_ROUNDS` rounds."""


@dataclass(frozen=True)
class InputRequest:
    """One thing the server asked for: its key in ``inputRequests``, the method and its params."""
    key: str
    method: str
    params: dict = field(default_factory=dict)
    round: int = 1
    asked_by: str = ""   # the request that needs it, e.g. "tools/call deploy"


@dataclass(frozen=True)
class InputRequired:
    """An ``input_required`` result, read: what to answer, and the state to echo (None: send none)."""
    requests: tuple[InputRequest, ...]
    state: str | None
    raw: dict = field(default_factory=dict, repr=False, compare=False)


def input_required(result: Any, *, round: int = 1, asked_by: str = "") -> InputRequired:
    """Read an ``input_required`` result; raise RemoteProtocolError if it breaks the spec's rules."""
    if not isinstance(result, dict) or result_type(result) != INPUT_REQUIRED:
        raise RemoteProtocolError(_('expected a result with resultType "input_required", got {result}',
                                    result=repr(result)))
    asked, state = result.get("inputRequests"), result.get("requestState")
    if asked is None and state is None:
        raise RemoteProtocolError(_("an input_required result must carry inputRequests, requestState or both; "
                                    "this one has neither"))
    if state is not None and not isinstance(state, str):
        raise RemoteProtocolError(_("requestState must be a string, got {state}", state=repr(state)))
    if asked is not None and not isinstance(asked, dict):
        raise RemoteProtocolError(_("inputRequests must be an object (key → request), got {asked}",
                                    asked=repr(asked)))
    requests = []
    for key, entry in (asked or {}).items():
        method = entry.get("method") if isinstance(entry, dict) else None
        if method not in INPUT_METHODS:
            raise RemoteProtocolError(_("inputRequests[{key}] asks for {method}; a server may ask only for "
                                        "{methods}", key=repr(key), method=repr(method),
                                        methods=", ".join(INPUT_METHODS)))
        params = entry.get("params") or {}
        requests.append(InputRequest(key, method, params if isinstance(params, dict) else {}, round, asked_by))
    return InputRequired(tuple(requests), state, result)


def retry_params(params: Mapping[str, Any] | None, responses: Mapping[str, Any], state: str | None) -> dict:
    """The original ``params`` plus this round's answers and the server's state, echoed exactly.

    >>> retry_params({"name": "deploy"}, {"ok": {"action": "accept"}}, None)
    {'name': 'deploy', 'inputResponses': {'ok': {'action': 'accept'}}}
    """
    retry = {k: v for k, v in (params or {}).items() if k not in ROUND_KEYS}
    if responses:
        retry["inputResponses"] = dict(responses)
    if state is not None:
        retry["requestState"] = state  # the spec: echo it exactly, and omit it when none was sent
    return retry


InputHandler = Callable[[InputRequest], Any]


async def _maybe_await(value: Any) -> Any:
    """Handlers may be plain functions or coroutine functions."""
    return await value if inspect.isawaitable(value) else value


def handler_for(handlers: Mapping[str, Callable[[dict], Any]]) -> InputHandler:
    """An input handler that passes each request's params to ``handlers[method]``.

    The same callables answer a legacy server's requests, so one function serves both eras.
    """
    async def answer(request: InputRequest) -> Any:
        handler = handlers.get(request.method)
        if handler is None:
            raise LocalProtocolError(_("the server asks for {method} ({key}), but this client has no handler for "
                                       "it and did not declare that capability", method=request.method,
                                       key=repr(request.key)))
        return await _maybe_await(handler(request.params))
    return answer


async def run_rounds(send: Callable[[dict | None], Awaitable[Any]], method: str, params: dict | None,
                     answer: InputHandler, *, max_rounds: int = MAX_ROUNDS, asked_by: str = "") -> Any:
    """Send ``method`` with ``params``; while the result is ``input_required``, answer and retry.

    ``send(params)`` sends one request (a new id each time) and returns its result.
    """
    current = params
    for number in range(1, max_rounds + 1):
        result = await send(current)
        if result_type(result) != INPUT_REQUIRED:
            return result
        if method not in MRTR_METHODS:
            raise RemoteProtocolError(_('{method} was answered with resultType "input_required", which the spec '
                                        "allows only on {methods}", method=method, methods=", ".join(MRTR_METHODS)))
        needed = input_required(result, round=number, asked_by=asked_by or method)
        responses = {request.key: await _maybe_await(answer(request)) for request in needed.requests}
        current = retry_params(params, responses, needed.state)
    raise TooManyRounds(_("{method}: the server still needed input after {rounds} rounds", method=asked_by or method,
                          rounds=max_rounds))
