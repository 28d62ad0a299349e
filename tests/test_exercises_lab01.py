"""mcplab.exercises.lab01: each check passes the worked answer, says "not answered" (and no hint) for
the placeholder, and names what is wrong otherwise."""

from __future__ import annotations

import pytest

from mcplab import exercises
from mcplab.wire import jsonrpc
from mcplab.wire.errors import InvalidRequest
from mcplab.exercises import lab01
from mcplab.exercises._feedback import NOT_ANSWERED

SEED_REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "/tmp/test.txt"}}}
LINE = lab01.SEED_REPLY_LINE
INSIDE = LINE.index("文".encode()) + 1


def test_every_check_is_exported_from_the_exercises_package():
    for name in lab01.__all__:
        assert getattr(exercises, name) is getattr(lab01, name)


@pytest.mark.parametrize("check, placeholder", [
    (lab01.check_tools_call_request, ...),
    (lab01.check_notification, ...),
    (lab01.check_find_invalid, ...),
    (lab01.check_find_invalid, (..., ...)),
    (lab01.check_error_code, ...),
    (lab01.check_error_code, dict.fromkeys(lab01.SITUATIONS, ...)),
    (lab01.check_awkward_split, ...),
])
def test_the_placeholder_is_not_answered_yet_and_gives_no_hint_away(check, placeholder):
    feedback = check(placeholder)
    assert not feedback and feedback.message.startswith(NOT_ANSWERED) and not feedback.hint


@pytest.mark.parametrize("check, answer", [
    (lab01.check_tools_call_request, SEED_REQUEST),
    (lab01.check_tools_call_request, '{"jsonrpc":"2.0","id":1,"method":"tools/call",'
                                     '"params":{"name":"read_file","arguments":{"path":"/tmp/test.txt"}}}'),
    (lab01.check_notification, {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    (lab01.check_find_invalid, ("D", "id")),
    (lab01.check_error_code, {"a": -32700, "b": -32601, "c": -32600, "d": -32602, "e": -32603}),
    (lab01.check_awkward_split, [LINE[:INSIDE], LINE[INSIDE:]]),
    (lab01.check_awkward_split, [bytes([b]) for b in LINE]),
])
def test_a_right_answer_passes(check, answer):
    feedback = check(answer)
    assert feedback, feedback
    assert "/tmp/" not in repr(feedback)  # stored notebook outputs never show a machine path


@pytest.mark.parametrize("check, answer, says", [
    (lab01.check_tools_call_request, {**SEED_REQUEST, "id": None}, "-32600"),
    (lab01.check_tools_call_request, {k: v for k, v in SEED_REQUEST.items() if k != "id"}, "notification"),
    (lab01.check_tools_call_request, {**SEED_REQUEST, "method": "tools/run"}, "tools/run"),
    (lab01.check_tools_call_request, {**SEED_REQUEST, "params": {"name": "write_file"}}, "name the tool"),
    (lab01.check_tools_call_request, {**SEED_REQUEST, "params": {"name": "read_file"}}, '"path"'),
    (lab01.check_tools_call_request, {"jsonrpc": "2.0", "id": 1, "result": {}}, "success response"),
    (lab01.check_tools_call_request, "{not json", "-32700"),
    (lab01.check_tools_call_request, {"x": float("nan")}, "cannot be written as JSON"),
    (lab01.check_tools_call_request, 42, "expected a JSON-RPC request, as a dict or as JSON text, got int 42"),
    (lab01.check_tools_call_request, {**SEED_REQUEST, "id": "r1"}, "asks for id 1"),
    (lab01.check_notification, {"jsonrpc": "2.0", "id": 1, "method": "notifications/initialized"}, '"id": 1'),
    (lab01.check_notification, {"jsonrpc": "2.0", "method": "initialized"}, "notifications/initialized"),
    (lab01.check_notification, {"method": "notifications/initialized"}, "jsonrpc"),
    (lab01.check_find_invalid, ("A", "id"), "A is valid"),
    (lab01.check_find_invalid, ("B", "id"), "no id is exactly right"),
    (lab01.check_find_invalid, ("D", "params"), "D is the invalid one"),
    (lab01.check_find_invalid, "D", "expected a pair (letter, rule), got str 'D'"),
    (lab01.check_find_invalid, ("D", 1), "expected (letter, rule)"),
    (lab01.check_error_code, {"a": -32700, "b": -32601, "c": -32601, "d": ..., "e": -32603},
     "c: -32601 is not it; d: not answered"),
    (lab01.check_error_code, {"a": -32700}, "expected a dict with the keys"),
    (lab01.check_awkward_split, [LINE], "none of your 0 cut(s)"),
    (lab01.check_awkward_split, [LINE[:INSIDE], LINE[INSIDE + 1:]], "do not join back"),
    (lab01.check_awkward_split, ["text"], "list of bytes"),
])
def test_a_wrong_answer_says_what_is_wrong_and_hints(check, answer, says):
    feedback = check(answer)
    assert not feedback and says in feedback.message and feedback.hint


def test_exactly_one_candidate_is_invalid_and_it_is_the_answer():
    invalid = []
    for letter, text in lab01.CANDIDATES.items():
        try:
            jsonrpc.decode(text)
        except InvalidRequest:
            invalid.append(letter)
    assert invalid == ["D"]
