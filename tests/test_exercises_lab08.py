"""mcplab.exercises.lab08: every check passes the worked answer, says "not answered" for the
placeholder, and names the slip behind each typical wrong answer."""

from __future__ import annotations

import pytest

from mcplab import exercises
from mcplab.exercises import lab08
from mcplab.exercises._feedback import NOT_ANSWERED, Feedback

RIGHT = {
    "check_adapter_counts": (40, 13),
    "check_when_protocol_wins": lambda n, m: n + m < n * m,
    "check_break_even_density": 0.0101,
    "check_break_even_n": 7,
    "check_revision_cost": (500, 1040),
}


def test_all_lists_exactly_the_check_functions():
    checks = sorted(name for name in vars(lab08) if name.startswith("check_"))
    assert sorted(lab08.__all__) == checks == sorted(RIGHT)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_each_check_is_re_exported_by_the_package(name):
    assert getattr(exercises, name) is getattr(lab08, name)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_the_placeholder_is_not_answered_yet_and_gives_no_hint_away(name):
    feedback = getattr(lab08, name)(...)
    assert isinstance(feedback, Feedback) and not feedback
    assert feedback.message.startswith(NOT_ANSWERED)
    assert not feedback.hint


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_the_worked_answer_passes(name):
    feedback = getattr(lab08, name)(RIGHT[name])
    assert feedback, feedback
    assert repr(feedback).startswith("✓")


@pytest.mark.parametrize("name, answer, says", [
    # Exercise 1: 5 apps, 8 tools.
    ("check_adapter_counts", (13, 40), "swapped"),
    ("check_adapter_counts", (13, 13), "you added (5 + 8) where point-to-point multiplies"),
    ("check_adapter_counts", (40, 40), "you multiplied (5 × 8) where the protocol adds"),
    ("check_adapter_counts", (40, 12), "Point-to-point is right (40)"),
    ("check_adapter_counts", 40, "expected a pair (point_to_point, protocol), got int 40"),
    ("check_adapter_counts", (40.5, 13), "Expected a pair"),
    # Exercise 2: a predicate.
    ("check_when_protocol_wins", lambda n, m: True, "For N=1, M=1 your function says the protocol wins"),
    ("check_when_protocol_wins", lambda n, m: n + m <= n * m, "For N=2, M=2"),
    ("check_when_protocol_wins", lambda n, m: n > 1 and m > 1, "For N=2, M=2"),
    ("check_when_protocol_wins", lambda n, m: 1 / 0, "raised ZeroDivisionError"),
    ("check_when_protocol_wins", True, "expected a function of (n, m) that returns True or False, got bool"),
    # Exercise 3: 100 × 10,000.
    ("check_break_even_density", 1.01, "percentage"),
    ("check_break_even_density", 99.0099, "reciprocal"),
    ("check_break_even_density", 0.01, "1/N only"),
    ("check_break_even_density", 0.0001, "1/M only"),
    ("check_break_even_density", 101, "how many tools each app would use"),
    ("check_break_even_density", 0.9899, "left unwired"),
    ("check_break_even_density", 0.5, "the protocol is already cheaper"),
    ("check_break_even_density", 0.001, "point-to-point is still cheaper"),
    ("check_break_even_density", "0.0101", "expected a number between 0 and 1, got str"),
    # Exercise 4: 10 tools, implementation = 4 adapters.
    ("check_break_even_n", 20 / 3, "apps come whole"),
    ("check_break_even_n", 6, "point-to-point 60, protocol 64"),
    ("check_break_even_n", 2, "priced an implementation like one adapter"),
    ("check_break_even_n", 9, "the question asks for the smallest"),
    ("check_break_even_n", 0, "at least one app"),
    ("check_break_even_n", 7.5, "not a whole number"),
    # Exercise 5: 20 × 500 at density 0.1; touches cost 0.5 and 2.
    ("check_revision_cost", (1040, 500), "swapped"),
    ("check_revision_cost", (5000, 1040), "only 10 % of the pairs have an adapter"),
    ("check_revision_cost", (1000, 1040), "each costs 0.5 to touch"),
    ("check_revision_cost", (500, 520), "each costs 2 to touch"),
    ("check_revision_cost", (500, 260), "priced an implementation at an adapter's 0.5"),
    ("check_revision_cost", (500, 104), "density does not shrink the protocol side"),
    ("check_revision_cost", (7, 8), "is not (N + M) × 2"),
])
def test_a_wrong_answer_names_the_slip_and_gives_a_hint(name, answer, says):
    feedback = getattr(lab08, name)(answer)
    assert not feedback
    assert says in feedback.message
    assert feedback.hint
    assert repr(feedback).startswith("✗") and "hint:" in repr(feedback)


def test_the_revision_check_accepts_floats_from_arithmetic():
    assert lab08.check_revision_cost((0.1 * 20 * 500 * 0.5, (20 + 500) * 2.0))


def test_feedback_prints_the_same_every_time():
    assert repr(lab08.check_break_even_n(7)) == (
        "✓ At 7 apps: point-to-point 70, protocol 68. One app fewer: point-to-point 60, protocol 64.")
