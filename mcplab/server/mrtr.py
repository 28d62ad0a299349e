"""Multi round-trip requests (MRTR): how a tool asks the client something in the modern era. Sans-IO.

Theory of operation
-------------------
In the legacy era a tool that needs the user (elicitation), the client's model (sampling) or the
client's folders (roots) sends a JSON-RPC request back over the connection and waits. 2026-07-28 has
no server→client requests (spec "basic/patterns/mrtr"): the server *answers* the client's request::

    {"resultType": "input_required",
     "inputRequests": {"user_name": {"method": "elicitation/create", "params": {...}}},
     "requestState": "<opaque>"}

and the client sends the same request again, with a new id, plus ``inputResponses`` (the same keys →
its answers) and ``requestState`` echoed byte for byte. Only ``tools/call``, ``resources/read`` and
``prompts/get`` may answer this way.

mcplab keeps **one tool body for both eras by running it again**. ``await ctx.elicit(...)``
(context.py) looks for its answer among what the retry brought (:class:`Rounds`): if it is there the
call returns it; if not the call raises :class:`InputRequired`, and ``Server.handle`` turns that into
the result above. On the retry the body runs from the top again, this time past the question. So:

* every question has a key: ``key=`` or a counter (``elicitation-1`` for the first question, ...);
  given the same answers, a body must ask the same questions in the same order;
* code before the last question runs once per round: ask first, then act;
* the client answers only the latest round, so the answers of earlier rounds travel in
  ``requestState``, and so does ``ctx.state``, a small dict a body may keep across rounds.

``requestState`` comes back from the client, so it is attacker input (spec "MRTR", security). It is
``base64url(JSON) "." base64url(HMAC-SHA256(key, that text))``: readable, not secret, but any change
breaks the MAC. The payload binds the method, a digest of the request's parameters and an expiry;
a tampered, expired or transplanted state is refused with -32602. There is no principal to bind:
mcplab has no authentication. The key is drawn once per process, so a retry must come back to the
same process; servers behind a load balancer give every process the same ``Server(state_key=...)``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple

from mcplab.wire.errors import InvalidParams

MRTR_METHODS = frozenset({"tools/call", "resources/read", "prompts/get"})
"""The only requests a server may answer with ``input_required`` (spec "MRTR", supported requests)."""

STATE_TTL = 15 * 60  # seconds a requestState is honoured: long enough for a person to fill in a form

CAPABILITY = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
"""The three kinds of input request, each with the client capability it needs."""

SINCE = {"elicitation/create": "2025-06-18", "sampling/createMessage": "2024-11-05", "roots/list": "2024-11-05"}
"""The first revision that has each kind (a legacy session older than that cannot be asked)."""

ELICIT_ACTIONS = ("accept", "decline", "cancel")
_NOT_SALIENT = ("_meta", "inputResponses", "requestState")  # what may differ between rounds of one request


class InputRequest(NamedTuple):  # a value, immutable; cheaper to define than a frozen dataclass
    """One question for the client: a request object without ``jsonrpc`` and ``id``."""
    method: str
    params: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method} if self.params is None else {"method": self.method, "params": self.params}


def elicitation(message: str, schema: dict[str, Any]) -> InputRequest:
    """Ask the user to fill in a form (``elicitation/create``, form mode)."""
    return InputRequest("elicitation/create", {"message": message, "requestedSchema": schema})


def sampling(prompt: str | list[dict[str, Any]], *, max_tokens: int = 100, **params: Any) -> InputRequest:
    """Ask the client's model (``sampling/createMessage``); ``prompt`` is text or a list of messages.
    Sampling is deprecated in 2026-07-28 (SEP-2577)."""
    messages = [{"role": "user", "content": {"type": "text", "text": prompt}}] if isinstance(prompt, str) else prompt
    return InputRequest("sampling/createMessage", {"messages": messages, "maxTokens": max_tokens, **params})


def roots() -> InputRequest:
    """Ask for the client's roots (``roots/list``). Roots are deprecated in 2026-07-28 (SEP-2577)."""
    return InputRequest("roots/list")


class InputRequired(BaseException):
    """Raised by ``ctx.ask`` when an answer is missing; ``Server.handle`` answers ``input_required``.

    A BaseException, like ``asyncio.CancelledError``: a tool's ``except Exception`` must not swallow it.
    """

    def __init__(self, requests: dict[str, InputRequest]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests


def missing_capabilities(requests: Iterable[InputRequest], declared: dict[str, Any]) -> dict[str, Any]:
    """The ``requiredCapabilities`` the client did not declare for these requests (empty if none)."""
    missing: dict[str, Any] = {}
    for request in requests:
        name = CAPABILITY[request.method]
        have = declared.get(name)
        if not isinstance(have, dict):
            missing[name] = {}
        elif request.method == "elicitation/create" and have and "form" not in have:
            missing[name] = {"form": {}}  # {} means form mode; {"url": {}} alone does not
        elif request.method == "sampling/createMessage" and "tools" in (request.params or {}) and "tools" not in have:
            missing[name] = {"tools": {}}
    return missing


# --- what a retry brings ---------------------------------------------------------------------------

@dataclass
class Rounds:
    """Answers for this run of a body: earlier rounds' (from requestState) and this round's (inputResponses)."""
    earlier: dict[str, Any] = field(default_factory=dict)
    fresh: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    used: dict[str, Any] = field(default_factory=dict)  # answers this run consumed: the next requestState

    def lookup(self, key: str, request: InputRequest) -> tuple[bool, Any]:
        """``(True, answer)`` if the client answered ``key``, else ``(False, None)``."""
        if key in self.earlier:  # checked when it arrived, and sealed since
            answer = self.earlier[key]
        elif key in self.fresh:
            answer = check_answer(key, request, self.fresh[key])
        else:
            return False, None
        self.used[key] = answer
        return True, answer


def read_retry(method: str, params: dict[str, Any], key: bytes, now: float) -> Rounds:
    """The :class:`Rounds` of one request: its ``inputResponses`` and its verified ``requestState``."""
    responses = params.get("inputResponses", {})
    if not isinstance(responses, dict):
        raise InvalidParams(f"expected params.inputResponses to be an object (each inputRequests key → the "
                            f"client's result), got {json.dumps(responses)[:40]}")
    if "requestState" not in params:
        return Rounds(fresh=responses)
    token = params["requestState"]
    if not isinstance(token, str):
        raise InvalidParams("expected params.requestState to be the string this server sent, echoed unchanged")
    payload = unseal(token, key)
    if payload.get("for") != request_digest(method, params):
        raise InvalidParams(f"requestState was issued for another request: a retry repeats the original {method} "
                            f"with the same parameters")
    if not isinstance(payload.get("exp"), int) or now > payload["exp"]:
        raise InvalidParams(f"requestState expired (it is valid for {STATE_TTL // 60} minutes); send the request "
                            f"again without inputResponses and requestState")
    return Rounds(earlier=payload.get("answers", {}), fresh=responses, state=payload.get("state", {}))


def input_required(rounds: Rounds, asked: dict[str, InputRequest], method: str, params: dict[str, Any],
                   key: bytes, now: float) -> dict[str, Any]:
    """The ``input_required`` result: the open questions, and what must survive until the retry."""
    result: dict[str, Any] = {"resultType": "input_required",
                              "inputRequests": {name: request.to_dict() for name, request in asked.items()}}
    if rounds.used or rounds.state:  # nothing to carry → no requestState (the client then sends none)
        result["requestState"] = seal({"for": request_digest(method, params), "exp": int(now) + STATE_TTL,
                                       "answers": rounds.used, "state": rounds.state}, key)
    return result


def check_answer(key: str, request: InputRequest, answer: Any, *, where: str | None = None) -> Any:
    """The client's result for one input request, checked (-32602 if it has the wrong shape).

    The legacy era checks its answers here too (``Context.request``): an answer to a legacy
    ``elicitation/create`` is held to its ``requestedSchema`` exactly as an ``inputResponses`` entry is.
    """
    where = where or f"inputResponses.{key}"
    if not isinstance(answer, dict):
        raise InvalidParams(f"{where}: expected the client's result for {request.method} (an object), "
                            f"got {json.dumps(answer)[:40]}")
    if request.method == "elicitation/create":
        if answer.get("action") not in ELICIT_ACTIONS:
            raise InvalidParams(f"{where}: expected action to be one of {', '.join(ELICIT_ACTIONS)}")
        content = answer.get("content")
        if content is not None and not isinstance(content, dict):
            raise InvalidParams(f"{where}: expected content to be an object of the form's fields")
        if answer["action"] == "accept":
            from mcplab.server.schema import compile_validator  # jsonschema loads only when a form comes back

            problem = compile_validator((request.params or {}).get("requestedSchema", {}))(content or {})
            if problem:
                raise InvalidParams(f"{where}: the form does not match its requestedSchema: {problem}")
    elif request.method == "sampling/createMessage":
        if not (isinstance(answer.get("role"), str) and isinstance(answer.get("model"), str)
                and isinstance(answer.get("content"), (dict, list))):
            raise InvalidParams(f"{where}: expected a sampling result with role, content and model")
    elif not (isinstance(answer.get("roots"), list)
              and all(isinstance(r, dict) and isinstance(r.get("uri"), str) for r in answer["roots"])):
        raise InvalidParams(f"{where}: expected a roots/list result, {{\"roots\": [{{\"uri\": ...}}, ...]}}")
    return answer


# --- requestState: sealed, not secret ------------------------------------------------------------

TAMPERED = ("requestState failed its integrity check (HMAC-SHA256): it was changed on the way, or another "
            "server process issued it; send the request again without inputResponses and requestState")


def request_digest(method: str, params: dict[str, Any]) -> str:
    """What identifies "the same request" across rounds: the method and its salient parameters."""
    import hashlib

    salient = {k: v for k, v in params.items() if k not in _NOT_SALIENT}
    if method in ("tools/call", "prompts/get"):
        salient["arguments"] = salient.get("arguments") or {}  # absent, null and {} are the same call
    text = json.dumps([method, salient], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def seal(payload: dict[str, Any], key: bytes) -> str:
    """``payload`` as ``<base64url JSON>.<base64url HMAC-SHA256>``."""
    body = _b64(json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())
    return f"{body}.{_b64(_mac(key, body))}"


def unseal(token: str, key: bytes) -> dict[str, Any]:
    """The payload of a sealed ``token``; -32602 if a single character differs from what was sealed."""
    import hmac

    body, _, mac = token.partition(".")
    # Compare the exact text: a decoder that ignores stray characters would let "…-TAMPERED" through.
    if not hmac.compare_digest(mac.encode("utf-8", "replace"), _b64(_mac(key, body)).encode()):
        raise InvalidParams(TAMPERED)
    payload = json.loads(_unb64(body))
    if not isinstance(payload, dict):  # only we can seal, so this is a bug, not an attack
        raise InvalidParams(TAMPERED)
    return payload


def _mac(key: bytes, body: str) -> bytes:
    import hashlib
    import hmac

    return hmac.new(key, body.encode(), hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
