"""Checks for Lab 07 (scaling out and multi-round-trip requests, 2026-07-28): say what survives a
round-robin proxy, and say what a tampered ``requestState`` gets back.

The tampering verdict is not written down here: it comes from sealing a state with
:mod:`mcplab.server.mrtr`, changing one character, and reading what the server's own check answers.
"""

from __future__ import annotations

from typing import Any

from mcplab.exercises._feedback import Feedback, check, failed, passed
from mcplab.i18n import N_, Text, Texts, _

__all__ = ["check_behind_proxy", "check_tampered_state", "PROXY_SITUATIONS", "NEXT_STEPS", "SPEC_ON_STATE"]

# --- 1. behind a round-robin proxy ----------------------------------------------------------------

PROXY_SITUATIONS = Texts({
    "a": "legacy: initialize, answered by backend 1",
    "b": "legacy: the next POST of that session (notifications/initialized), sent to backend 2",
    "c": "modern: tools/call get_weather, whichever backend gets it",
    "d": "modern: an MRTR retry without requestState (write_file confirmed), on another backend than round 1",
    "e": "modern: an MRTR retry whose requestState backend 1 sealed, arriving at backend 2 (its own random key)",
})
_SURVIVES = {"a": "ok", "b": "fails", "c": "ok", "d": "ok", "e": "fails"}
_PROXY_WHY = Texts({
    "b": "the session lives only in backend 1; backend 2 answers 404 for an id it never minted",
    "d": "the retry repeats the whole request plus the answer: any backend can run it",
    "e": "the HMAC check fails on a process with another key: give every backend the same state key",
})


@check(N_("a dict of situation → \"ok\" or \"fails\""), dict)
def check_behind_proxy(answer: Any) -> Feedback:
    """For each of PROXY_SITUATIONS, "ok" or "fails", behind a proxy with no sticky routing."""
    hint = _('a dict {"a": "ok", "b": ..., ...}: ask, for each one, whether the backend needs to remember anything')
    if not isinstance(answer, dict) or set(answer) != set(PROXY_SITUATIONS):
        return failed(_("expected a dict with the keys {keys}", keys=", ".join(PROXY_SITUATIONS)), hint)
    if any(v is ... for v in answer.values()):
        return failed(_("some situations are still ..."), hint)
    if any(not isinstance(v, str) or v not in ("ok", "fails") for v in answer.values()):
        return failed(_('each answer is "ok" or "fails"'), hint)
    for key, right in _SURVIVES.items():
        if answer[key] != right:
            why = _PROXY_WHY.get(key, _("nothing here depends on which process answers"))
            verdict = _("it works") if right == "ok" else _("it fails")
            return failed(_("({key}) {situation}: {verdict}; {why}", key=key, situation=PROXY_SITUATIONS[key],
                            verdict=verdict, why=why), hint)
    return passed(_("modern requests need nothing from an earlier request, so any backend answers them; what a "
                    "server must remember (a session, an HMAC key) is what breaks without sticky routing"))


# --- 2. a tampered requestState -------------------------------------------------------------------

NEXT_STEPS = (
    Text("retry at once with the same requestState"),
    Text("send the original request again, without inputResponses and requestState"),
    Text("send notifications/cancelled"),
)


def _tampered_verdict() -> tuple[int, str]:
    """Seal a state with a key, change one character, and read what the server's check says."""
    from mcplab.wire.errors import JSONRPCError
    from mcplab.server import mrtr

    key = b"lab07-exercise-key-0123456789abc"
    body, _, mac = mrtr.seal({"for": "x", "exp": 0, "answers": {}, "state": {"step": 1}}, key).partition(".")
    changed = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]  # one character of the payload
    try:
        mrtr.unseal(f"{changed}.{mac}", key)
    except JSONRPCError as exc:
        return exc.code, exc.message
    raise AssertionError("a tampered state passed the check")  # pragma: no cover - would be a server bug


SPEC_ON_STATE = Text("the spec (MRTR, requestState): a server MUST treat requestState as attacker input and MUST "
                     "reject state that fails verification; it names no error code and no next step for the client")


@check(N_("a dict with the keys \"kind\", \"code\" and \"next\""), dict)
def check_tampered_state(answer: Any) -> Feedback:
    """{"kind": "error" or "result" (what the spec requires), "code": the JSON-RPC code this server sends,
    "next": what this server's message tells the client to do, one of NEXT_STEPS}.

    Only ``kind`` is a protocol fact; ``code`` and ``next`` are this server's choices, and the feedback
    says so (:data:`SPEC_ON_STATE`).
    """
    hint = _('a dict {"kind": ..., "code": ..., "next": NEXT_STEPS[...]}: "kind" is what the spec requires of a '
             'server that cannot verify a state; "code" and "next" are what this server sent in section 2')
    if not isinstance(answer, dict) or set(answer) != {"kind", "code", "next"}:
        return failed(_('expected a dict with the keys "kind", "code" and "next"'), hint)
    if any(v is ... for v in answer.values()):
        return failed(_("some entries are still ..."), hint)
    code, message = _tampered_verdict()
    if answer["kind"] != "error":
        return failed(_("a changed state is not answered with a result: the spec says a server MUST reject state "
                        "that fails verification, so it is a protocol error, not a tool failure"), hint)
    if answer["code"] != code or type(answer["code"]) is not int:
        return failed(_("this server does not send {code!r}. The spec names no code for a rejected state, so the "
                        "code is the server's choice: mcplab treats a bad requestState as a bad parameter. Read it "
                        "in section 2", code=answer['code']), hint)
    if not isinstance(answer["next"], str) or answer["next"] not in (NEXT_STEPS[1], str(NEXT_STEPS[1])):
        return failed(_("that is not what this server's message says (the state will never pass again, and a "
                        "cancellation is for requests still running); the spec leaves the client's next step "
                        "open, so read the server's own words in section 2"), hint)
    return passed(_("the error is the protocol's: {spec}. The code {code} and the advice in \"{advice}\" (start "
                    "over without the state) are this server's choices; another server may choose differently",
                    spec=SPEC_ON_STATE, code=code, advice=message.split(':')[0]))

