"""Checks for lab 13 (authorization): the OAuth refusals, and an audience check of your own.

The checks ask the real code where there is one: the refusals key is what the bundled authorization
parts answer (a test runs them), and an audience check you write is run against a table of tokens.
A hint appears only after a wrong attempt (the placeholder ``...`` gets none): try first.
"""

from __future__ import annotations

from typing import Any, Mapping

from mcplab.exercises._feedback import Feedback, check, failed, passed, unanswered
from mcplab.i18n import N_, Texts, _, ngettext

__all__ = ["check_refusals", "check_audience", "REFUSAL_CASES", "ME"]


def _placeholder() -> Feedback:
    return unanswered()  # no hint before a first try


def _untouched(answer: Any) -> bool:
    """The lab's placeholder: ``...`` itself, or a dict whose every answer is still ``...``."""
    return answer is ... or (isinstance(answer, dict) and bool(answer) and all(v is ... for v in answer.values()))


def _letters(answer: Any, keys: Mapping[str, Any], what: str) -> dict[str, str] | str:
    """A dict letter → label with every key of ``keys`` answered, or a sentence saying what is wrong."""
    if not isinstance(answer, dict):
        return _("expected a dict such as {example}, one {what} per letter; got {type}", example="{'a': ..., 'b': ...}",
                 what=_(what), type=type(answer).__name__)
    missing = [k for k in keys if answer.get(k, ...) is ...]
    if missing:
        return ngettext("{letters} is not answered yet", "{letters} are not answered yet", len(missing),
                        letters=", ".join(missing))
    unknown = sorted(set(answer) - set(keys))
    if unknown:
        return _("{unknown} are not among the cases ({cases})", unknown=unknown, cases=", ".join(keys))
    return {k: str(v).strip() for k, v in answer.items()}


# --- 1. the authorization parts' refusals -----------------------------------------------------------

REFUSAL_CASES = Texts({
    "a": "POST /mcp with no Authorization header at all",
    "b": "POST /mcp with a token whose signature no longer verifies (one character changed)",
    "c": "POST /mcp with a valid token that the same authorization server minted for another MCP server",
    "d": "POST /mcp calling write_file with a valid token for this server that holds only files:read",
    "e": "POST /mcp?access_token=... (the token in the query string, no Authorization header)",
    "f": "POST /token with the right code but another code_verifier than the one PKCE started with",
    "g": "POST /token with a code that was already exchanged once",
    "h": "POST /token with client_secret_basic credentials whose secret is wrong",
})
_REFUSALS = {"a": (401, ""), "b": (401, "invalid_token"), "c": (401, "invalid_token"),
             "d": (403, "insufficient_scope"), "e": (400, "invalid_request"), "f": (400, "invalid_grant"),
             "g": (400, "invalid_grant"), "h": (401, "invalid_client")}
_REFUSAL_WHY = Texts({
    "a": "a request with no credentials at all gets 401 with no error code (RFC 6750 §3.1): nothing was "
         "wrong with a token, there was none",
    "b": "a token that does not verify is an invalid token: 401 (spec \"Token Handling\": invalid or expired "
         "tokens MUST get 401)",
    "c": "a token for another resource is not valid here: 401 invalid_token (RFC 8707; spec \"Token Handling\")",
    "d": "the token is good but not enough: 403 insufficient_scope, naming the scope needed (spec \"Scope "
         "Challenge Handling\")",
    "e": "tokens MUST NOT travel in the query string (OAuth 2.1 §5.1.1): a malformed request, 400 invalid_request",
    "f": "the code is bound to the PKCE challenge: a verifier that does not hash to it is an invalid grant "
         "(RFC 7636 §4.6), 400",
    "g": "a code works once (OAuth 2.1 §4.1.3): used again it is an invalid grant, 400, and what the first "
         "use obtained is revoked",
    "h": "a client that fails to authenticate is invalid_client, and with the Authorization header the status "
         "is 401 (RFC 6749 §5.2)",
})


@check(N_("a dict of case → (status, error)"), dict)
def check_refusals(answer: Any) -> Feedback:
    """For each of REFUSAL_CASES, (HTTP status, OAuth error code, or "" for none)."""
    hint = _("401 when the credentials are missing or bad (no error code when missing), 403 when they are "
            "good but not enough, 400 when the request itself is malformed or its grant is invalid; the token "
            "endpoint says invalid_grant about codes and invalid_client about clients")
    if _untouched(answer):
        return _placeholder()
    given = _letters(answer, REFUSAL_CASES, N_("(status, error)"))
    if isinstance(given, str):
        return failed(given, hint)
    pairs = {}
    for letter, value in sorted(answer.items()):
        if not isinstance(value, (tuple, list)) or len(value) != 2 or not isinstance(value[0], int):
            return failed(_("{letter}: expected a pair (status, error), e.g. {example}; got {value!r}",
                            letter=letter, example='(401, "invalid_token")', value=value), hint)
        pairs[letter] = (value[0], value[1] or "")
    for letter, real in _REFUSALS.items():
        if pairs[letter] != real:
            none = _("(no error code)")
            return failed(_("{letter}: {status} {code}, not {given_status} {given_code}: {why}", letter=letter,
                            status=real[0], code=real[1] or none, given_status=pairs[letter][0],
                            given_code=pairs[letter][1] or none, why=_REFUSAL_WHY[letter]), hint)
    return passed(_("every refusal with its RFC's status and code, and each server went on serving: "
                  "tests/test_auth_bad_input.py sends all of them, and more"))


# --- 2. token passthrough: an audience check of your own ----------------------------------------------

ME = "http://127.0.0.1:8001/mcp"
_OTHER = "http://127.0.0.1:8002/mcp"
_TOKENS = [
    (N_("a token for this server"), {"aud": ME}, True),
    (N_("a token for this server and another one"), {"aud": [_OTHER, ME]}, True),
    (N_("a token for another server"), {"aud": _OTHER}, False),
    (N_("a token for a longer path on this host"), {"aud": ME + "/admin"}, False),
    (N_("a token for this host without the path"), {"aud": "http://127.0.0.1:8001"}, False),
    (N_("a token for a path this one starts with"), {"aud": "http://127.0.0.1:8001/mc"}, False),
    (N_("a token for another port"), {"aud": "http://127.0.0.1:18001/mcp"}, False),
    (N_("a token with no audience at all"), {"iss": "http://127.0.0.1:9000", "sub": "student"}, False),
    (N_("a token whose audience list names only others"), {"aud": [_OTHER]}, False),
    (N_("a token whose aud is not a string"), {"aud": 8001}, False),
]


@check(N_("a function accepts(claims, me) that returns True or False"), function=True)
def check_audience(answer: Any) -> Feedback:
    """A function ``accepts(claims: dict, me: str) -> bool``: is a (signature-checked) token's audience this server?"""
    hint = _("aud is a string or a list of strings (RFC 7519 §4.1.3), and it must name this server exactly: "
            "compare whole strings, never look for one inside another")
    if _untouched(answer):
        return _placeholder()
    if not callable(answer):
        return failed(_("expected a function (claims, me) → bool, got {type}", type=type(answer).__name__), hint)
    for what, claims, right in _TOKENS:
        try:
            verdict = answer(dict(claims), ME)
        except Exception as exc:  # a student's function may raise anything; a server must refuse, not crash
            return failed(_("on {what} ({claims}) your function raised {error}: {exc}; a server must answer 401, "
                            "not crash", what=_(what), claims=claims, error=type(exc).__name__, exc=exc), hint)
        if verdict is not True and verdict is not False:
            return failed(_("on {what} it returned {verdict!r}; answer True or False", what=_(what), verdict=verdict),
                          hint)
        if verdict != right:
            return failed(_("{what} ({aud}): {verdict}", what=_(what),
                            aud=claims["aud"] if "aud" in claims else _("no aud"),
                            verdict=_("accepted, and it must be refused") if verdict
                            else _("refused, and it must be accepted")), hint)
    return passed(_("all {n} tokens judged as validate_bearer judges them: only a token minted for this server is "
                    "accepted, so a token passed through from elsewhere gets 401", n=len(_TOKENS)))
