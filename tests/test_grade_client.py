"""The client grader (mcplab.grade.client, `mcplab grade client`): a full card for correct clients, and
for each deliberately broken client (tests/grade_fixtures/fault_client.py --fault NAME) exactly one
failing line, the one its fault breaks, with its own sentence. The recorder's frames are checked too:
they are a trace the notebooks can draw."""

from __future__ import annotations

import sys

import pytest

from mcplab import cli, grade
from mcplab.grade import PASS, SKIP
from mcplab.grade.recorder import NOTE_EOF, NOTE_EXIT, NOTE_WAITED

from conftest import ROOT, SPEC_DIR, need

FAULT_CLIENT = ROOT / "tests" / "grade_fixtures" / "fault_client.py"
SOLUTION = ROOT / "labs" / "solutions" / "build" / "my_client.py"
STARTER = ROOT / "labs" / "build" / "my_client.py"
CHECKS = ["runs", "jsonrpc-lines", "flush", "schema", "initialize", "initialized", "ids", "tools-list", "tools-call",
          "prints-result", "closes-stdin", "waits", "version-mismatch", "stderr", "timeout", "cancel"]
SCHEMAS = (SPEC_DIR / "2025-11-25" / "schema.json").is_file()

pytestmark = pytest.mark.subprocess

# fault (named after the line it breaks) → words its failing line must say
BROKEN = [
    ("runs", "exit status 3"),
    ("jsonrpc-lines", "hello, server"),
    ("flush", "initialize reached the server only when the client closed its stdin"),
    ("schema", "'version' is a required property (at params/clientInfo)"),
    ("initialize", 'protocolVersion "2024-10-07", which is no published legacy revision'),
    ("initialized", "it was never sent"),
    ("ids", "id 2 used by tools/list and again by tools/call"),
    ("tools-list", "no tools/list was sent"),
    ("tools-call", "no tools/call was sent"),
    ("prints-result", "nothing on stdout"),
    ("closes-stdin", "it sent SIGTERM without closing stdin first"),
    ("waits", "the client exited while its server was still running"),
    ("version-mismatch", "it went on: notifications/initialized after the 2099-01-01 answer"),
    ("stderr", "nobody read its stderr, so the pipe filled"),
    ("timeout", "still waiting when the grader stopped it"),
    ("cancel", "no such notification"),
]
# What a fault takes away besides its line: lines that cannot be judged any more (skipped, never failed).
ALSO_SKIPPED = {"tools-call": {"prints-result", "timeout", "cancel"}, "timeout": {"cancel"},
                # a request never flushed spoils every run: what depends on an answer points at the flush line
                "flush": {"runs", "initialized", "tools-list", "tools-call", "prints-result", "version-mismatch",
                          "stderr", "timeout", "cancel"}}


def statuses(report) -> dict[str, str]:
    return {line.check: line.status for line in report.lines}


def full_card(report) -> None:
    expected = {check: PASS for check in CHECKS}
    if not SCHEMAS:
        expected["schema"] = SKIP  # the one line that needs data from outside the project
    assert [line.check for line in report.lines] == CHECKS
    assert statuses(report) == expected, report.text()
    assert report.exit_code == 0


def test_every_fault_of_the_table_names_a_check_and_every_check_has_a_fault() -> None:
    assert sorted(f for f, _ in BROKEN) == sorted(CHECKS)


def test_a_correct_hand_written_client_gets_a_full_card() -> None:
    full_card(grade.client(FAULT_CLIENT))


def test_the_lab_solution_gets_a_full_card_and_its_plain_run_is_a_trace_of_the_whole_session() -> None:
    report = grade.client(SOLUTION)
    full_card(report)
    trace = report.traces["plain"]
    methods = [getattr(f.message, "method", None) for f in trace.frames if f.direction == "c2s"]
    assert methods == ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    notes = [f.raw for f in trace.frames if f.channel == "note"]
    assert notes == [NOTE_EOF, NOTE_WAITED, f"{NOTE_EXIT} with status 0"]


@pytest.mark.parametrize("fault, says", BROKEN, ids=[f for f, _ in BROKEN])
def test_a_broken_client_fails_exactly_its_line(fault, says) -> None:
    if fault == "schema":
        need(SCHEMAS, f"the official schemas are not at {SPEC_DIR.name}/ beside the checkout")
    # Short waits where the fault makes the client wait them out: it never gives up (timeout), it never
    # reads stderr and so waits for an answer that cannot come (patience).
    report = grade.client([sys.executable, str(FAULT_CLIENT), "--fault", fault],
                          timeout=1.0 if fault == "timeout" else 4.0, patience=4.0 if fault == "stderr" else 10.0)
    assert [line.check for line in report.failed] == [fault], report.text()
    line = report.line(fault)
    assert says in line.got, line.text()
    assert line.expected and line.where, "a failed line says what was expected and where to look"
    skipped = {l.check for l in report.lines if l.status == SKIP} - ({"schema"} if not SCHEMAS else set())
    assert skipped == ALSO_SKIPPED.get(fault, set()), report.text()


def test_the_starter_fails_its_first_line_with_the_todo_it_stopped_at() -> None:
    report = grade.client(STARTER)
    assert [line.check for line in report.failed] == ["runs"]
    assert "my_client: TODO 1: start the server" in report.line("runs").got
    assert all(line.status == SKIP and "the client sent nothing" in line.note for line in report.lines[1:])
    assert "Traceback" not in report.text()


def test_a_client_against_another_server_and_tool_is_graded_the_same_way() -> None:
    files = [sys.executable, str(ROOT / "servers" / "files.py")]
    report = grade.client(SOLUTION, server=files, call=("read_file", {"path": "notes.md"}))
    assert report.ok, report.text()
    assert report.line("tools-call").note == "read_file"


@pytest.mark.parametrize("target, code", [(FAULT_CLIENT, 0), (STARTER, 1)])
def test_mcplab_grade_client_prints_the_card_and_exits_1_when_a_line_fails(target, code, capsys) -> None:
    assert cli.main(["grade", "client", str(target)]) == code
    out = capsys.readouterr().out
    assert out.startswith("Report card · client ") and ("PASS:" in out) is (code == 0)
