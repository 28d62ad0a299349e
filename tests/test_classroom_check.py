"""The classroom bench's check (bench/classroom.py --check) reads what each student's kernel printed: both
of Lab 06's matrix summaries must say 7 of 7 as the spec says, and both grader cards must be full. One
row per way a student's verdicts can be wrong, each caught with its own sentence."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import classroom  # noqa: E402  (bench/classroom.py)

STDIO = "client  server  ...\n\n7 rows over stdio: 7 as the spec says\n"
HTTP = "client  server  ...\n\n7 rows over http: 7 as the spec says\n"
SERVER = "Report card · server solutions/build/my_server.py\n  ✓ opens a legacy session\nPASS: no line failed (14 checks)\n"
CLIENT = "Report card · client solutions/build/my_client.py\n  ✓ runs the whole session\nPASS: no line failed (16 checks)\n"

WRONG = [
    ("a row differs", [STDIO.replace("7 as the spec says", "6 as the spec says, 1 not"), HTTP, SERVER, CLIENT],
     "matrix: 7 rows over stdio: 6 as the spec says, 1 not"),
    ("a row not answered in time", [STDIO, HTTP.replace("says", "says, 1 not answered in time on this machine"),
                                    SERVER, CLIENT], "matrix: 7 rows over http: 7 as the spec says, 1 not answered"),
    ("no http matrix", [STDIO, SERVER, CLIENT], "no matrix summary over http"),
    ("a failed server line", [STDIO, HTTP, SERVER.replace("PASS: no line failed (14 checks)",
                                                          "  ✗ tools\nFAIL: 1 of 14 checks failed"), CLIENT],
     "server card: ✗ tools"),
    ("a skipped client line", [STDIO, HTTP, SERVER, CLIENT.replace("  ✓ runs", "  – cancel (not judged in time)\n"
                                                                                 "  ✓ runs")],
     "client card: – cancel (not judged in time)"),
    ("no client card", [STDIO, HTTP, SERVER, "NameError: grade"], "no client card"),
]


def test_a_student_with_both_matrices_7_of_7_and_full_cards_has_no_problem() -> None:
    assert classroom.check_run(classroom.LabRun("student000", outputs=[STDIO, HTTP, SERVER, CLIENT])) == []


@pytest.mark.parametrize("outputs, says", [(o, s) for _, o, s in WRONG], ids=[name for name, _, _ in WRONG])
def test_a_wrong_verdict_of_a_student_is_named(outputs, says) -> None:
    problems = classroom.check_run(classroom.LabRun("student000", outputs=outputs))
    assert len(problems) == 1 and problems[0].startswith(says), problems


def test_the_slowest_cell_names_its_lab_place_seconds_and_student() -> None:
    runs = [classroom.LabRun("student000", cell_seconds=[0.5, 2.0], cells=["cell 1", "cell 31"]),
            classroom.LabRun("student001", cell_seconds=[0.4, 9.25], cells=["cell 1", "extra 2"])]
    assert classroom.slowest_cell("labs/06_stateless.ipynb", runs) == {
        "lab": "labs/06_stateless.ipynb", "cell": "extra 2", "seconds": 9.2, "student": "student001"}
