"""The server grader (mcplab.grade.server, `mcplab grade server`): a full card for correct servers, and
for each deliberately broken server (tests/grade_fixtures/fault_server.py --fault NAME) exactly one
failing line, the one its fault breaks, saying what it expected and what came."""

from __future__ import annotations

import sys

import pytest

from mcplab import cli, grade
from mcplab.grade import PASS, SKIP

from conftest import ROOT, SPEC_DIR, need

FAULT_SERVER = ROOT / "tests" / "grade_fixtures" / "fault_server.py"
SOLUTION = ROOT / "labs" / "solutions" / "build" / "my_server.py"
STARTER = ROOT / "labs" / "build" / "my_server.py"
CHECKS = ["legacy-open", "modern-open", "stdout", "schema", "tools", "resources", "prompts", "malformed-line",
          "unknown-tool", "eof", "brief-tools", "brief-resource", "brief-prompt", "brief-tool-error"]
SCHEMAS = (SPEC_DIR / "2026-07-28" / "schema.json").is_file()

pytestmark = pytest.mark.subprocess

# fault (named after the line it breaks) → words its failing line must say
BROKEN = [
    ("legacy-open", 'protocolVersion "2099-01-01", which is no legacy revision'),
    ("modern-open", "-32601"),
    ("stdout", "fault-server ready"),
    ("schema", "'version' is a required property (at result/serverInfo)"),
    ("tools", "tools/call add"),
    ("resources", "resources/read shop://readme"),
    ("prompts", "prompts/get greet"),
    ("malformed-line", "no answer within"),
    ("unknown-tool", "isError is for a tool that ran and failed"),
    ("eof", "still running after stdin closed: it was stopped with SIGTERM"),
    ("brief-tools", "find (typed)"),
    ("brief-resource", 'the server declares no "resources" capability'),
    ("brief-prompt", 'the server declares no "prompts" capability'),
    ("brief-tool-error", "none with isError"),
]


def statuses(report) -> dict[str, str]:
    return {line.check: line.status for line in report.lines}


def full_card(report) -> None:
    expected = {check: PASS for check in CHECKS}
    if not SCHEMAS:
        expected["schema"] = SKIP  # the one line that needs data from outside the project
    assert [line.check for line in report.lines] == CHECKS
    assert statuses(report) == expected, report.text()
    assert report.ok and report.exit_code == 0


def test_every_fault_of_the_table_names_a_check_and_every_check_has_a_fault() -> None:
    assert sorted(f for f, _ in BROKEN) == sorted(CHECKS)


def test_a_correct_hand_written_server_gets_a_full_card() -> None:
    full_card(grade.server(FAULT_SERVER))


def test_the_lab_solution_gets_a_full_card() -> None:
    report = grade.server(SOLUTION)
    full_card(report)
    assert "complete_task" in report.line("brief-tool-error").note  # the tool that reports isError


def test_a_parse_error_reply_may_leave_its_id_out_instead_of_null() -> None:
    # JSON-RPC 2.0 §5 gives the reply to an unreadable line "id": null; the 2025-11-25 and 2026-07-28
    # schemas have no null id but let an error response omit it. Both spellings pass both lines.
    full_card(grade.server([sys.executable, str(FAULT_SERVER), "--no-null-id"]))


@pytest.mark.parametrize("fault, says", BROKEN, ids=[f for f, _ in BROKEN])
def test_a_broken_server_fails_exactly_its_line(fault, says) -> None:
    if fault == "schema":
        need(SCHEMAS, f"the official schemas are not at {SPEC_DIR.name}/ beside the checkout")
    report = grade.server([sys.executable, str(FAULT_SERVER), "--fault", fault], timeout=2.0)
    assert [line.check for line in report.failed] == [fault], report.text()
    line = report.line(fault)
    assert says in line.got, line.text()
    assert line.expected and line.where, "a failed line says what was expected and where to look"
    assert report.exit_code == 1


def test_the_starter_fails_the_brief_with_guidance_and_no_traceback() -> None:
    report = grade.server(STARTER)
    assert [line.check for line in report.failed] == ["brief-tools", "brief-resource", "brief-prompt",
                                                      "brief-tool-error"]
    assert all(line.got and line.where for line in report.failed)
    assert report.line("brief-tools").got == 'no tools: the server declares no "tools" capability'
    assert "Traceback" not in report.text()
    assert statuses(report)["eof"] == PASS and statuses(report)["malformed-line"] == PASS


def test_a_server_that_answers_nothing_costs_one_timeout_per_session_and_fails_its_opening(tmp_path) -> None:
    silent = tmp_path / "silent.py"
    silent.write_text("import sys\nsys.stdin.read()\n")
    report = grade.server(silent, timeout=0.5)
    assert report.line("legacy-open").got == "no answer within 0.5 s"
    assert report.line("modern-open").got == "no answer within 0.5 s"
    assert statuses(report)["malformed-line"] == SKIP and statuses(report)["eof"] == PASS
    assert report.line("brief-prompt").got == "no session opened (see the first two lines)"


def test_without_the_official_schemas_one_line_says_so_and_every_other_check_runs(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MCPLAB_SPEC_DIR", str(tmp_path))
    report = grade.server(FAULT_SERVER)
    schema = report.line("schema")
    assert schema.status == SKIP and "the official schemas are not available here" in schema.note
    assert all(s == PASS for check, s in statuses(report).items() if check != "schema")
    assert report.ok


def test_a_server_that_crashes_while_starting_fails_with_its_last_words(tmp_path) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text("raise SystemExit('my_server: cannot find its data file')\n")
    report = grade.server(crash, timeout=2.0)
    assert report.line("legacy-open").got == "the server exited; its stderr ends: my_server: cannot find its data file"
    assert report.line("eof").status == SKIP  # it was gone before stdin closed


def test_the_card_is_the_same_text_on_every_run() -> None:
    first, second = grade.server(SOLUTION).text(), grade.server(SOLUTION).text()
    assert first == second
    body = first.split("\n", 1)[1]  # the title shows the path as the caller gave it; the lines show none
    assert str(ROOT) not in body and "/tmp" not in body


@pytest.mark.parametrize("target, code", [(FAULT_SERVER, 0), (STARTER, 1)])
def test_mcplab_grade_server_prints_the_card_and_exits_1_when_a_line_fails(target, code, capsys) -> None:
    assert cli.main(["grade", "server", str(target)]) == code
    out = capsys.readouterr().out
    assert out.startswith("Report card · server ") and ("PASS:" in out) is (code == 0)


NOTES = '''
import os, sys
from mcplab.server import Server, ToolError, run

server = Server("notes", "0.1.0")
NOTES: list[str] = []


@server.tool
def add_note(text: str) -> str:
    """Keep a note."""
    if EMPTY_IS_AN_ERROR and not text.strip():
        raise ToolError("an empty note: write something")
    NOTES.append(text)
    return f"{len(NOTES)} notes"


@server.tool
def count_notes() -> int:
    """How many notes there are."""
    return len(NOTES)


@server.tool(schema=UNTYPED)
def echo(value):
    """Says it back."""
    if CRASH_ON_ECHO:
        print("notes: the disk is full", file=sys.stderr, flush=True)
        os._exit(3)
    return str(value)


@server.resource("notes://all")
def everything() -> list:
    """Every note."""
    return NOTES


@server.prompt
def summarise() -> str:
    """Summarise the notes."""
    return "Summarise my notes."


if __name__ == "__main__":
    run(server)
'''
TYPED_ECHO = {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}
UNTYPED_ECHO = {"type": "object", "properties": {"value": {"description": "anything"}}, "required": ["value"]}


def notes_server(folder, *, empty_is_an_error: bool = True, untyped: bool = False, crash: bool = False):
    path = folder / "notes.py"
    path.write_text(f"EMPTY_IS_AN_ERROR = {empty_is_an_error}\nCRASH_ON_ECHO = {crash}\n"
                    f"UNTYPED = {UNTYPED_ECHO if untyped else TYPED_ECHO!r}\n" + NOTES)
    return path


def test_a_tool_error_for_an_empty_string_is_found_because_strings_are_also_tried_empty(tmp_path) -> None:
    report = grade.server(notes_server(tmp_path))
    full_card(report)
    assert report.line("brief-tool-error").note == 'add_note {"text":""}'


def test_a_server_whose_tools_accept_empty_strings_fails_the_tool_error_line_saying_it_tried_them(tmp_path) -> None:
    report = grade.server(notes_server(tmp_path, empty_is_an_error=False))
    assert [line.check for line in report.failed] == ["brief-tool-error"], report.text()
    assert "with its strings empty" in report.line("brief-tool-error").got


def test_a_tool_without_arguments_counts_as_typed_and_an_untyped_argument_is_named(tmp_path) -> None:
    assert statuses(grade.server(notes_server(tmp_path)))["brief-tools"] == PASS  # count_notes takes nothing
    report = grade.server(notes_server(tmp_path, untyped=True))
    assert [line.check for line in report.failed] == ["brief-tools"], report.text()
    assert report.line("brief-tools").got == ("add_note (typed), count_notes (no arguments), "
                                              "echo (an argument without a type: value)")


def test_a_server_that_crashes_mid_walk_gets_a_card_that_says_so_with_its_last_words(tmp_path) -> None:
    report = grade.server(notes_server(tmp_path, crash=True))
    crashed = "the server crashed at tools/call echo (exit status 3); its stderr ends: notes: the disk is full"
    assert [line.check for line in report.failed] == ["tools"], report.text()
    # the modern session crashed at the same call: the one more; the calls never sent count for nothing
    assert report.line("tools").got == f'legacy: tools/call echo {{"value":"example"}} → {crashed}; 1 more failed'
    for check in ("resources", "prompts", "unknown-tool", "malformed-line"):
        assert report.line(check).status == SKIP and report.line(check).note.endswith(f"not sent: {crashed}")
    for check in ("brief-resource", "brief-prompt"):  # never "both lists are empty": they were never asked for
        assert report.line(check).status == SKIP and report.line(check).note.endswith(f": {crashed}")
