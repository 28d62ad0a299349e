"""The server grader in the browser edition: the student's server run in the page's own process.

A page has no processes, so there ``grade.server`` walks the server file run in process
(grade/in_process.py over place.in_process), one era after the other, and waits for it through JSPI.
The checks and the card are the grader's own; these tests hold the page's cards to what the machine's
say for the same servers (tests/test_grade_server.py). They run in Pyodide (tests/test_pyodide.py);
on a machine only the choice of a child process is checked.
"""

from __future__ import annotations

import sys

import pytest

from mcplab import grade, place
from mcplab.grade import FAIL, PASS, SKIP
from mcplab.grade.in_process import start
from mcplab.grade.pipes import Child

from conftest import ROOT, SPEC_DIR

SOLUTION = ROOT / "labs" / "solutions" / "build" / "my_server.py"
STARTER = ROOT / "labs" / "build" / "my_server.py"
SCHEMAS = (SPEC_DIR / "2026-07-28" / "schema.json").is_file()
in_the_page = pytest.mark.skipif(sys.platform != "emscripten", reason="the page's grader: tests/test_pyodide.py "
                                 "runs these in Pyodide, where run_sync (JSPI) lets it wait")


def statuses(report) -> dict[str, str]:
    return {line.check: line.status for line in report.lines}


@pytest.mark.subprocess
def test_on_a_machine_the_grader_starts_the_students_server_as_a_child_process():
    child = start([sys.executable, str(SOLUTION)])
    try:
        assert type(child) is Child and child.process.pid is not None
    finally:
        assert child.close(grace=10.0).returncode == 0


@in_the_page
def test_in_the_page_the_lab_solution_gets_a_full_card_and_the_notebooks_streams_stay_its_own():
    streams = sys.stdin, sys.stdout, sys.stderr
    report = grade.server(SOLUTION)
    expected = {check: PASS for check in statuses(report)} | ({} if SCHEMAS else {"schema": SKIP})
    assert statuses(report) == expected and len(expected) == 14, report.text()
    assert report.ok and "complete_task" in report.line("brief-tool-error").note
    assert (sys.stdin, sys.stdout, sys.stderr) == streams


@in_the_page
def test_in_the_page_the_starter_fails_the_brief_and_nothing_else_as_on_a_machine():
    report = grade.server(STARTER)
    assert [line.check for line in report.failed] == ["brief-tools", "brief-resource", "brief-prompt",
                                                      "brief-tool-error"]
    assert report.line("brief-tools").got == 'no tools: the server declares no "tools" capability'
    assert statuses(report)["eof"] == PASS and statuses(report)["malformed-line"] == PASS
    assert "Traceback" not in report.text()


@in_the_page
@pytest.mark.parametrize("source, last_words", [
    ("raise SystemExit('my_server: cannot find its data file')\n", "my_server: cannot find its data file"),
    ("import no_such_module_zz\n", "ModuleNotFoundError: No module named 'no_such_module_zz'"),
    ("x = 1\n", "ended without calling mcplab.server.run(server): nothing to serve"),
], ids=["exits with a message", "raises", "never serves"])
def test_in_the_page_a_server_that_fails_while_starting_fails_its_opening_with_its_last_words(tmp_path, source,
                                                                                            last_words):
    crash = tmp_path / "crash.py"
    crash.write_text(source, encoding="utf-8")
    report = grade.server(crash, timeout=2.0)
    got = report.line("legacy-open").got
    assert got.startswith("the server exited; its stderr ends: ") and got.endswith(last_words), got
    assert report.line("eof").status == SKIP  # it was gone before its stdin closed
    stderr = [f.raw for f in report.traces["legacy"].frames if f.channel == "stderr"]
    assert not any("/mcplab/" in line for line in stderr), stderr  # its own frames only, as a process prints


@in_the_page
def test_in_the_page_a_server_started_in_a_folder_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="shares its folder"):
        grade.server(SOLUTION, cwd=str(ROOT))


@in_the_page
def test_in_the_page_a_print_before_run_fails_the_stdout_line_as_it_does_from_a_process(tmp_path):
    noisy = tmp_path / "noisy.py"
    noisy.write_text("from mcplab.server import Server, run\n"
                     "print('noisy server loading')  # at import: the real stdout, before run() moves it\n"
                     "server = Server('noisy')\n"
                     "run(server)\n", encoding="utf-8")
    report = grade.server(noisy)
    assert report.line("stdout").status == FAIL
    assert report.line("stdout").got == "legacy session, line 2: noisy server loading"  # the machine's words
