"""mcplab.exercises.lab13 and lab14 (the two halves of one security lab): every check passes the worked answer, says "not answered" (with no hint) for the
placeholder, and refuses each plausible wrong answer with the sentence that names its slip, hint included."""

from __future__ import annotations

import hashlib
import json

import pytest

from mcplab import exercises
from mcplab.exercises import lab13, lab14
from mcplab.exercises._feedback import NOT_ANSWERED, Feedback
from mcplab.client.trust import Permission, consent_reason


def canonical_pin(definition):
    return hashlib.sha256(json.dumps(definition, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def audience_check(claims, me):
    aud = claims.get("aud")
    return aud == me or (isinstance(aud, list) and me in aud)


RIGHT = {
    "check_refusals": {"a": (401, ""), "b": (401, "invalid_token"), "c": (401, "invalid_token"),
                       "d": (403, "insufficient_scope"), "e": (400, "invalid_request"), "f": (400, "invalid_grant"),
                       "g": (400, "invalid_grant"), "h": (401, "invalid_client")},
    "check_flag_rule": r"\b(ai|assistant|model)\b\s*[:,]",
    "check_pin": canonical_pin,
    "check_consent": {"a": "run", "b": "ask", "c": "ask", "d": "ask", "e": "run", "f": "ask"},
    "check_rebinding_request": {"Host": "attacker.example:8000", "Origin": "http://attacker.example:8000"},
    "check_sandbox": {"a": "read", "b": "..", "c": "..", "d": "absolute", "e": "link", "f": "not regular",
                      "g": "link", "h": "NUL", "i": "no such file"},
    "check_audience": audience_check,
    "check_recovery": {"a": "restart, then call", "b": "report, do not repeat", "c": "cannot restart",
                       "d": "give up", "e": "untouched"},
}


LAB13 = ("check_refusals", "check_audience")
MODULE = {name: lab13 if name in LAB13 else lab14 for name in RIGHT}  # each check and the lab that asks it


@pytest.mark.parametrize("lab", [lab13, lab14], ids=["lab13", "lab14"])
def test_all_lists_exactly_the_check_functions(lab):
    checks = sorted(name for name in vars(lab) if name.startswith("check_") and getattr(lab, name).__module__ == lab.__name__)
    assert sorted(name for name in lab.__all__ if name.startswith("check_")) == checks
    assert checks == sorted(name for name in RIGHT if MODULE[name] is lab)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_each_check_is_re_exported_by_the_package(name):
    assert getattr(exercises, name) is getattr(MODULE[name], name)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_the_placeholder_is_not_answered_yet_and_shows_no_hint_before_a_try(name):
    feedback = getattr(MODULE[name], name)(...)
    assert isinstance(feedback, Feedback) and not feedback
    assert feedback.message.startswith(NOT_ANSWERED) and not feedback.hint and "hint" not in repr(feedback)


def test_a_dict_of_placeholders_is_not_answered_yet_either():
    for name, keys in (("check_refusals", lab13.REFUSAL_CASES), ("check_consent", lab14.CONSENT_CASES),
                       ("check_sandbox", lab14.SANDBOX_TRIES), ("check_recovery", lab14.RECOVERY_CASES)):
        feedback = getattr(MODULE[name], name)({k: ... for k in keys})
        assert feedback.message.startswith(NOT_ANSWERED) and not feedback.hint, name


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_the_worked_answer_passes(name):
    feedback = getattr(MODULE[name], name)(RIGHT[name])
    assert feedback, feedback
    assert repr(feedback).startswith("✓") and "hint" not in repr(feedback)


def test_the_other_spellings_of_a_right_answer_pass_too():
    assert lab13.check_refusals({**RIGHT["check_refusals"], "a": (401, None), "d": [403, "insufficient_scope"]})
    assert lab14.check_pin(lambda d: json.dumps(d, sort_keys=True))  # a canonical text pins as well as its hash
    assert lab14.check_flag_rule(r"(note to the ai|\(ai:|assistant,|dear ai)")
    assert lab14.check_rebinding_request({"host": "attacker.example:8000", "origin": "http://attacker.example:8000"})


def test_the_consent_table_agrees_with_the_host_s_own_rule():
    expected = {letter: "ask" if consent_reason(tool, Permission(trusted, frozenset(always))) else "run"
                for letter, (_, _, trusted, tool, always) in lab14.CONSENT_CASES.items()}
    assert expected == RIGHT["check_consent"]


def answers(right, **change):
    return {**right, **change}


def raising(definition):
    raise KeyError("title")


WRONG = [
    # Lab 13, 1. the refusals: each plausible confusion of status and code
    ("check_refusals", answers(RIGHT["check_refusals"], a=(401, "invalid_token")), "no error code"),
    ("check_refusals", answers(RIGHT["check_refusals"], a=(403, "")), "a: 401"),
    ("check_refusals", answers(RIGHT["check_refusals"], c=(403, "insufficient_scope")), "for another resource"),
    ("check_refusals", answers(RIGHT["check_refusals"], d=(401, "insufficient_scope")), "good but not enough"),
    ("check_refusals", answers(RIGHT["check_refusals"], d=(403, "invalid_token")), "good but not enough"),
    ("check_refusals", answers(RIGHT["check_refusals"], e=(401, "invalid_token")), "query string"),
    ("check_refusals", answers(RIGHT["check_refusals"], f=(401, "invalid_client")), "bound to the PKCE challenge"),
    ("check_refusals", answers(RIGHT["check_refusals"], f=(400, "invalid_request")), "bound to the PKCE challenge"),
    ("check_refusals", answers(RIGHT["check_refusals"], g=(400, "invalid_request")), "a code works once"),
    ("check_refusals", answers(RIGHT["check_refusals"], h=(400, "invalid_client")), "RFC 6749 §5.2"),
    ("check_refusals", answers(RIGHT["check_refusals"], b=(400, "invalid_token")), "MUST get 401"),
    ("check_refusals", answers(RIGHT["check_refusals"], b=401), "expected a pair"),
    ("check_refusals", answers(RIGHT["check_refusals"], h=...), "h is not answered yet"),
    ("check_refusals", [(401, "")], "expected a dict"),
    # Lab 14, 1. a rule of your own: too broad, too narrow, not a rule
    ("check_flag_rule", r"assistant", "it misses 2"),
    ("check_flag_rule", r"\bai\b", "it misses 1"),
    ("check_flag_rule", r"\b(ai|assistant|model)\b", "innocent description"),
    ("check_flag_rule", r"ai", "innocent description"),
    ("check_flag_rule", r".*", "innocent description"),
    ("check_flag_rule", r"note to the ai", "it misses 3"),
    ("check_flag_rule", r"\b(ai|assistant):", "it misses"),
    ("check_flag_rule", r"(", "not a regular expression"),
    ("check_flag_rule", "", "a non-empty string"),
    ("check_flag_rule", 42, "a non-empty string"),
    ("check_flag_rule", "a" * 301, "under 300 characters"),
    # Lab 14, 2. a pin of your own
    ("check_pin", lambda d: d["description"], "a new parameter in the input schema gave the same pin"),
    ("check_pin", lambda d: hashlib.sha256(json.dumps(d).encode()).hexdigest(), "keys in another order"),
    ("check_pin", lambda d: hashlib.sha256(str(d).encode()).hexdigest(), "keys in another order"),
    ("check_pin", lambda d: d["name"], "a description with one more sentence gave the same pin"),
    ("check_pin", lambda d: canonical_pin({k: d[k] for k in ("name", "description", "inputSchema")}),
     "annotations that no longer say read-only gave the same pin"),
    ("check_pin", lambda d: canonical_pin({**d, "description": d["description"].strip()}), "one more space"),
    ("check_pin", lambda d: canonical_pin({k: v for k, v in d.items() if k != "title"}), "a new title gave the same pin"),
    ("check_pin", lambda d: canonical_pin({**d, "inputSchema": sorted(d["inputSchema"]["properties"])}),
     "a changed default for a parameter gave the same pin"),
    ("check_pin", lambda d: hash(json.dumps(d, sort_keys=True)), "a pin is a string"),
    ("check_pin", raising, "raised KeyError"),
    ("check_pin", "sha256", "expected a function"),
    # Lab 14, 3. consent
    ("check_consent", answers(RIGHT["check_consent"], c="run"), "c: the host would ask"),
    ("check_consent", answers(RIGHT["check_consent"], d="run"), "d: the host would ask"),
    ("check_consent", answers(RIGHT["check_consent"], f="run"), "f: the host would ask"),
    ("check_consent", answers(RIGHT["check_consent"], e="ask"), "e: the host would run"),
    ("check_consent", answers(RIGHT["check_consent"], a="ask"), "a: the host would run"),
    ("check_consent", answers(RIGHT["check_consent"], b="run"), "b: the host would ask"),
    ("check_consent", {k: "ask" for k in "abcdef"}, "a: the host would run"),
    ("check_consent", {k: "run" for k in "abcdef"}, "b: the host would ask"),
    ("check_consent", answers(RIGHT["check_consent"], b="maybe"), '"ask" or "run"'),
    ("check_consent", answers(RIGHT["check_consent"], f=...), "f is not answered yet"),
    ("check_consent", ["run", "ask"], "expected a dict"),
    # Lab 14, 4. what the browser sends after the rebinding
    ("check_rebinding_request", {"Host": "127.0.0.1:8000", "Origin": "http://attacker.example:8000"}, "never learns"),
    ("check_rebinding_request", {"Host": "attacker.example", "Origin": "http://attacker.example:8000"}, "name and port"),
    ("check_rebinding_request", {"Host": "attacker.example:8000", "Origin": "http://attacker.example:8000/cats.html"},
     "an origin has no path"),
    ("check_rebinding_request", {"Host": "attacker.example:8000", "Origin": "http://attacker.example:8000/"},
     "an origin has no path"),
    ("check_rebinding_request", {"Host": "attacker.example:8000", "Origin": "https://attacker.example:8000"},
     "the scheme is part of the origin"),
    ("check_rebinding_request", {"Host": "attacker.example:8000", "Origin": "http://127.0.0.1:8000"},
     "the page is the attacker's"),
    ("check_rebinding_request", {"Host": "attacker.example:8000", "Origin": "http://attacker.example"},
     "the port is there"),
    ("check_rebinding_request", {"Host": "attacker.example:8000"}, "both headers"),
    ("check_rebinding_request", {"Host": "attacker.example:8000", "Origin": None}, "both strings"),
    # Lab 14, 5. the sandbox
    ("check_sandbox", answers(RIGHT["check_sandbox"], c="read"), "'..' is refused wherever it is"),
    ("check_sandbox", answers(RIGHT["check_sandbox"], d="read"), "absolute path is refused even when it points inside"),
    ("check_sandbox", answers(RIGHT["check_sandbox"], g="not regular"), "leaves the folder is refused before"),
    ("check_sandbox", answers(RIGHT["check_sandbox"], i=".."), "nobody decodes %2e"),
    ("check_sandbox", answers(RIGHT["check_sandbox"], e="read"), "outside the folder"),
    ("check_sandbox", answers(RIGHT["check_sandbox"], f="read"), "wait forever"),
    ("check_sandbox", answers(RIGHT["check_sandbox"], h="no such file"), "NUL byte"),
    ("check_sandbox", answers(RIGHT["check_sandbox"], b="absolute"), "b (../secret.txt): .., not absolute"),
    ("check_sandbox", answers(RIGHT["check_sandbox"], a="refused"), "each answer is one of"),
    ("check_sandbox", {"a": "read"}, "are not answered yet"),
    ("check_sandbox", answers(RIGHT["check_sandbox"], z="read"), "not among the cases"),
    # Lab 13, 2. the audience check
    ("check_audience", lambda c, me: True, "a token for another server"),
    ("check_audience", lambda c, me: c["aud"] == me, "a token for this server and another one"),
    ("check_audience", lambda c, me: me in c.get("aud", ""), "a token for a longer path on this host"),
    ("check_audience", lambda c, me: str(c.get("aud", "")).startswith(me), "a token for this server and another one"),
    ("check_audience", lambda c, me: c.get("aud") == me or me in c.get("aud", []), "a token for a longer path"),
    ("check_audience", lambda c, me: isinstance(c.get("aud"), str) and c["aud"] in me or me in (c.get("aud") or []),
     "a token for a longer path"),
    ("check_audience", lambda c, me: any(a in me for a in ([c["aud"]] if isinstance(c.get("aud"), str)
                                                           else c.get("aud") or [])),
     "a token for this host without the path"),
    ("check_audience", lambda c, me: c.get("aud", me) == me or (isinstance(c.get("aud"), list) and me in c["aud"]),
     "a token with no audience at all"),
    ("check_audience", lambda c, me: "iss" in c or c.get("aud") == me, "a token for this server and another one"),
    ("check_audience", lambda c, me: c["aud"] == me or (isinstance(c["aud"], list) and me in c["aud"]),
     "raised KeyError"),
    ("check_audience", lambda c, me: "yes" if c.get("aud") == me else "", "answer True or False"),
    ("check_audience", "aud", "expected a function"),
    # Lab 14, 6. recovery
    ("check_recovery", answers(RIGHT["check_recovery"], b="restart, then call"), "never repeats it"),
    ("check_recovery", answers(RIGHT["check_recovery"], c="restart, then call"), "no command to start it"),
    ("check_recovery", answers(RIGHT["check_recovery"], d="restart, then call"), "restarts are bounded"),
    ("check_recovery", answers(RIGHT["check_recovery"], e="restart, then call"), "one connection per server"),
    ("check_recovery", answers(RIGHT["check_recovery"], a="report, do not repeat"), "the next run starts it again"),
    ("check_recovery", answers(RIGHT["check_recovery"], a="retry"), "each answer is one of"),
    ("check_recovery", "restart", "expected a dict"),
    ("check_recovery", answers(RIGHT["check_recovery"], e="give up"), "one connection per server"),
]


@pytest.mark.parametrize("name, answer, says", WRONG, ids=[f"{n}: {s}" for n, _, s in WRONG])
def test_each_plausible_wrong_answer_is_refused_with_its_reason_and_then_a_hint(name, answer, says):
    feedback = getattr(MODULE[name], name)(answer)
    assert not feedback
    assert says in feedback.message, feedback.message
    assert feedback.hint and "hint: " in repr(feedback)


def test_every_check_has_a_table_of_wrong_answers():
    counts = {name: sum(1 for n, _, _ in WRONG if n == name) for name in RIGHT}
    assert min(counts.values()) >= 7, counts
