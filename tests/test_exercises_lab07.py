"""mcplab.exercises.lab07: every check passes the worked answer, says "not answered" for the
placeholder, and names the slip behind each typical wrong answer."""

from __future__ import annotations

import pytest

from mcplab import exercises
from mcplab.exercises import lab07
from mcplab.exercises._feedback import NOT_ANSWERED, Feedback

RIGHT = {
    "check_behind_proxy": {"a": "ok", "b": "fails", "c": "ok", "d": "ok", "e": "fails"},
    "check_tampered_state": {"kind": "error", "code": -32602, "next": lab07.NEXT_STEPS[1]},
}


def test_all_lists_exactly_the_check_functions():
    checks = sorted(name for name in vars(lab07) if name.startswith("check_"))
    assert sorted(name for name in lab07.__all__ if name.startswith("check_")) == checks == sorted(RIGHT)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_each_check_is_re_exported_by_the_package(name):
    assert getattr(exercises, name) is getattr(lab07, name)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_the_placeholder_is_not_answered_yet_and_gives_no_hint_away(name):
    feedback = getattr(lab07, name)(...)
    assert isinstance(feedback, Feedback) and not feedback
    assert feedback.message.startswith(NOT_ANSWERED)
    assert not feedback.hint


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_the_worked_answer_passes(name):
    feedback = getattr(lab07, name)(RIGHT[name])
    assert feedback, feedback
    assert repr(feedback).startswith("✓")


@pytest.mark.parametrize("name, answer, says", [
    # 1. the proxy
    ("check_behind_proxy", {**RIGHT["check_behind_proxy"], "b": "ok"}, "backend 2 answers 404"),
    ("check_behind_proxy", {**RIGHT["check_behind_proxy"], "d": "fails"}, "any backend can run it"),
    ("check_behind_proxy", {**RIGHT["check_behind_proxy"], "e": "ok"}, "same state key"),
    ("check_behind_proxy", {**RIGHT["check_behind_proxy"], "c": "maybe"}, '"ok" or "fails"'),
    ("check_behind_proxy", {"a": "ok"}, "expected a dict with the keys"),
    # 2. tampered state
    ("check_tampered_state", {**RIGHT["check_tampered_state"], "kind": "result"}, "MUST reject state"),
    ("check_tampered_state", {**RIGHT["check_tampered_state"], "code": -32603}, "the server's choice"),
    ("check_tampered_state", {**RIGHT["check_tampered_state"], "next": lab07.NEXT_STEPS[0]},
     "leaves the client's next step open"),
    ("check_tampered_state", {"kind": "error"}, "expected a dict"),
])
def test_a_wrong_answer_names_the_slip_and_gives_a_hint(name, answer, says):
    feedback = getattr(lab07, name)(answer)
    assert not feedback
    assert says in feedback.message
    assert feedback.hint
    assert repr(feedback).startswith("✗") and "hint:" in repr(feedback)


def test_the_hints_point_at_the_section_of_lab_07_that_shows_the_tampering():
    hint = lab07.check_tampered_state({**RIGHT["check_tampered_state"], "code": -32603}).message
    assert "section 2" in hint and "section 7" not in hint


def test_the_tampered_state_check_says_which_part_is_the_spec_and_which_is_this_servers_choice():
    # MRTR (2026-07-28, requestState): the server MUST reject state that fails verification; the
    # error code and the client's next step are not the spec's.
    message = lab07.check_tampered_state(RIGHT["check_tampered_state"]).message
    assert "MUST reject state that fails verification" in message and "names no error code" in message
    assert "this server's choices" in message
