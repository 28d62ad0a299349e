"""The graders on a busy machine: a slow start is never a verdict (issue 28).

A program that is slow to start (tests/grade_fixtures/slow_start.py: it sleeps before it reads a byte,
as an import does on a loaded machine with no bytecode cache) and then behaves well gets a full card,
whichever side is slow: the student's server, the student's client, or the server a client is graded
against. A program that never gets going leaves its lines "not judged in time", a skip the card's
verdict counts apart, with a sentence that says what ran out and what to do. A server that reads its
requests and never answers still fails (that is the student's bug, tests/test_grade_server.py).
"""

from __future__ import annotations

import sys

import pytest

from mcplab import grade
from mcplab.grade import PASS, SKIP, client_runs

from conftest import ROOT, SPEC_DIR

FIXTURES = ROOT / "tests" / "grade_fixtures"
SLOW_START = FIXTURES / "slow_start.py"
FAULT_SERVER = FIXTURES / "fault_server.py"
FAULT_CLIENT = FIXTURES / "fault_client.py"
WEATHER = ROOT / "servers" / "weather.py"

pytestmark = pytest.mark.subprocess


def slow(delay: str, script) -> list[str]:
    return [sys.executable, str(SLOW_START), delay, str(script)]


def no_failure_and_no_other_skip(report, late: set[str]) -> None:
    """Nothing failed; the lines in ``late`` are "not judged in time", every other one passed."""
    have_schemas = (SPEC_DIR / "2026-07-28" / "schema.json").is_file()
    assert report.ok, report.text()
    for line in report.lines:
        if line.check in late:
            assert line.status == SKIP and line.late and line.note.startswith("not judged in time: "), line.text()
        elif not (line.check == "schema" and not have_schemas):
            assert line.status == PASS, line.text()


# --- the server grader ---------------------------------------------------------------------------

def test_a_server_that_takes_longer_than_the_timeout_to_start_gets_a_full_card() -> None:
    # Its first answer comes 3 s after the request was written: three timeouts, but the timeout
    # counts from the moment the server read the request.
    report = grade.server(slow("3", FAULT_SERVER), timeout=1.0)
    no_failure_and_no_other_skip(report, late=set())
    assert report.text().splitlines()[-1] == "PASS: no line failed (14 checks)"


def test_a_server_that_never_reads_its_stdin_is_not_judged_in_time_and_the_verdict_counts_it_apart() -> None:
    report = grade.server(slow("forever", FAULT_SERVER), timeout=0.5)
    cut = {line.check for line in report.lines if line.status == SKIP and line.late}
    assert {"legacy-open", "modern-open", "eof"} <= cut, report.text()
    no_failure_and_no_other_skip(report, late=cut)
    assert report.line("legacy-open").note == (
        "not judged in time: the server had not read its first request when the card's 6 s ran out: it may "
        "still have been starting on this busy machine (or it never reads its stdin); a longer --timeout, or "
        "timeout= in Python, gives it more")
    assert report.text().splitlines()[-1] == f"PASS: no line failed (14 checks, {len(cut)} not judged in time)"


# --- the client grader -----------------------------------------------------------------------------

def test_a_client_whose_server_is_slower_than_its_timeout_is_judged_on_a_rerun_that_reached_the_silent_call() -> None:
    # The server a client is graded against starts in 3 s; the silent run's --timeout is 2.5 s, so the
    # client gives up on initialize in that run. The grader runs it again with twice the timeout.
    report = grade.client(FAULT_CLIENT, server=slow("3", WEATHER), timeout=2.5)
    no_failure_and_no_other_skip(report, late=set())
    timeout = report.line("timeout")
    # The card reads as on a quiet machine (a notebook stores it); the rerun is a note beside it.
    assert timeout.title == "gives up on a request the server never answers (--timeout 2.5 s)" and timeout.note == ""
    assert report.notes == ("the silent run was run again at --timeout 5 s: at 2.5 s the server had not answered "
                            "initialize in time on this machine",)
    assert "run again" not in report.text()
    calls = [f for f in report.traces["silent"].frames
             if f.direction == "c2s" and getattr(f.message, "method", None) == "tools/call"]
    assert len(calls) == 1  # the trace kept is the one of the run that reached the silent call


def test_a_client_whose_server_never_answers_is_not_judged_in_time_and_the_verdict_counts_it_apart() -> None:
    report = grade.client(FAULT_CLIENT, server=slow("forever", WEATHER), timeout=0.5, patience=1.0)
    sent = {"jsonrpc-lines", "flush", "schema", "initialize", "ids"}  # about what the client sent: judged all the same
    seen = {"closes-stdin"}  # it closed its server's stdin when it gave up: a pass stays a pass
    late = {line.check for line in report.lines} - sent - seen
    no_failure_and_no_other_skip(report, late=late)
    assert report.line("timeout").note == (
        "not judged in time: the server had not answered initialize when the client's last run ended "
        "(--timeout 2 s): this machine was too slow, which says nothing about your client; close other "
        "work, or pass a longer --timeout")
    assert report.text().splitlines()[-1] == f"PASS: no line failed (16 checks, {len(late)} not judged in time)"


def test_a_client_that_takes_long_to_start_gets_a_full_card() -> None:
    # Its silent run ends some 9 s after it started: longer than the 3 × 1 + 5 s a run once had from
    # the start, but the client gave up 1 s after its call, as it should.
    report = grade.client(slow("6", FAULT_CLIENT), timeout=1.0)
    no_failure_and_no_other_skip(report, late=set())
    assert report.text().splitlines()[-1] == "PASS: no line failed (16 checks)"


def test_a_client_stopped_before_its_first_line_is_not_judged_in_time_and_nothing_else_fails(monkeypatch) -> None:
    monkeypatch.setattr(client_runs, "START", 1.0)  # the bound is then 3 × 0.1 + 5 s: a test need not wait 30
    report = grade.client(slow("forever", FAULT_CLIENT), timeout=0.1, patience=0.1)
    runs = report.line("runs")
    assert runs.status == SKIP and runs.late, runs.text()
    assert runs.note == ("not judged in time: the client had sent nothing when the grader stopped it, 5.3 s after "
                         "it started: still starting on this busy machine, or stuck before its first line; close "
                         "other work, or run it again")
    assert report.ok and all(line.status == SKIP for line in report.lines), report.text()
    assert report.text().splitlines()[-1] == "PASS: no line failed (16 checks, 1 not judged in time)"


def test_a_client_that_drains_stderr_too_slowly_for_its_timeout_is_not_failed_for_a_deadlock() -> None:
    # It reads the server's stderr 4 KiB at a time with a pause (a reader starved on a busy machine):
    # the 256 KiB log takes some 6 s to go through, and it gives up on initialize after 1 s. More of
    # the log went through than the pipe holds, so it was reading: no deadlock (before: "✗ ... nobody
    # read its stderr, so the pipe filled").
    report = grade.client([sys.executable, str(FAULT_CLIENT), "--drain-delay", "0.1"], timeout=1.0, patience=1.0)
    stderr = report.line("stderr")
    assert stderr.status == PASS, stderr.text()
    assert report.ok and not report.late, report.text()  # the noisy run judges the stderr line alone


def test_a_client_slow_between_its_steps_is_not_stopped_while_its_session_moves() -> None:
    # 4 s before each request: its session outlasts the run's bound (3 × 1 + 5 s) counted from its first
    # line, but never stands still that long. Before: "✗ runs ... still running when the grader stopped it".
    report = grade.client([sys.executable, str(FAULT_CLIENT), "--pause", "4"], timeout=1.0, patience=1.0)
    no_failure_and_no_other_skip(report, late=set())
