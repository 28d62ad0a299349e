"""Red team, the graders: a student's program that outlives, outwaits or outprints the grader running it.

On a shared classroom machine a grader is run dozens of times an hour, by every student, on code that
is still wrong. Three classes of harm, one table each, a row per attack:

    escapes   a process the student's code started is still running after the card is printed
              (forked and exited, a grandchild in its group, a grandchild in a session of its own, the
              daemon's double fork): each against both graders
    time      a server that answers every request just inside the timeout makes the walk as long as
              its catalogue: the card has a total budget, and a bounded amount of work per item
    output    a client that prints 256 MiB: the grader keeps a bounded part and says it cut the rest

The fixtures are correct programs (tests/grade_fixtures/) with one hostile habit each, so a line that
fails on their card is the grader's mistake.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import ROOT, need
from mcplab import grade
from mcplab.grade import PASS, keeper

from redteam_helpers import have_proc, wait_for

pytestmark = pytest.mark.subprocess

FIXTURES = ROOT / "tests" / "grade_fixtures"
ESCAPES = ["fork-and-exit", "group", "setsid", "double-fork"]


def running_with(marker: str) -> list[int]:
    """The processes with ``marker`` as one of their arguments (a zombie has none, so it is not counted)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if entry.isdigit() and marker.encode() in cmdline.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:  # not a process, or it ended while we looked
            continue
    return found


@pytest.fixture
def marker():
    need(have_proc(), "finding what a program left running reads /proc (Linux)")
    token = f"mcplab-left-{uuid.uuid4().hex}"
    yield token
    for pid in running_with(token):  # a failing row must not leave its processes on a shared machine
        os.kill(pid, signal.SIGKILL)


# --- escapes -----------------------------------------------------------------------------------------

def grade_escaping(role: str, escape: str, marker: str):
    argv = [sys.executable, str(FIXTURES / "escapes.py"), role, escape, marker]
    if role == "server":
        report = grade.server(argv, timeout=5.0)
        assert report.line("legacy-open").status == PASS, report.text()  # it did serve
    else:
        report = grade.client(argv)
        assert report.line("runs").status == PASS, report.text()  # it did run
    return report


ESCAPE_ROWS = [(role, escape) for role in ("server", "client") for escape in ESCAPES]


@pytest.mark.parametrize("role, escape", ESCAPE_ROWS, ids=[f"{r}-{e}" for r, e in ESCAPE_ROWS])
def test_no_process_the_student_started_outlives_the_grader(role: str, escape: str, marker: str) -> None:
    assert running_with(marker) == []
    grade_escaping(role, escape, marker)
    # Gone, not going: SIGKILL takes a moment to land, but a process sleeping for an hour is not leaving.
    assert wait_for(lambda: not running_with(marker), timeout=10.0), \
        f"still running after the {role} grader returned: {running_with(marker)}"


# Without a keeper (not Linux) the process group is what ends: it holds the first two escapes, not the
# ones that leave it (setsid), which is why Linux has the keeper.
GROUP_ROWS = [(role, escape) for role in ("server", "client") for escape in ("fork-and-exit", "group")]


@pytest.mark.parametrize("role, escape", GROUP_ROWS, ids=[f"{r}-{e}" for r, e in GROUP_ROWS])
def test_where_there_is_no_keeper_the_process_group_is_ended(role: str, escape: str, marker: str,
                                                             monkeypatch) -> None:
    monkeypatch.setattr(keeper, "KEEPER", False)
    grade_escaping(role, escape, marker)
    assert wait_for(lambda: not running_with(marker), timeout=10.0), \
        f"still running after the {role} grader returned: {running_with(marker)}"


GRADER_THAT_IS_STOPPED = """
import subprocess, sys, time
from mcplab.grade.keeper import Tree

tree = Tree(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
print(tree.pid, flush=True)
time.sleep(3600)
"""


def test_a_grader_stopped_mid_card_takes_every_process_of_the_student_with_it(marker: str) -> None:
    need(keeper.KEEPER, "the keeper is the Linux route")
    program = [sys.executable, str(FIXTURES / "escapes.py"), "server", "double-fork", marker]
    grader = subprocess.Popen([sys.executable, "-c", GRADER_THAT_IS_STOPPED, *program], stdout=subprocess.PIPE,
                              cwd=ROOT)
    try:
        assert grader.stdout.readline().strip().isdigit()  # started
        # The keeper and the server name the marker at once; the daemon's grandchild once it has forked.
        assert wait_for(lambda: len(running_with(marker)) >= 3), running_with(marker)
    finally:
        grader.kill()  # as a closed notebook kernel or a second Ctrl-C would: no cleanup of its own runs
        grader.wait()
    assert wait_for(lambda: not running_with(marker), timeout=10.0), running_with(marker)
