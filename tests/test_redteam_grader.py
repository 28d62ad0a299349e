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

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import ROOT, need
from mcplab import grade
from mcplab.grade import PASS, SKIP, keeper

from redteam_helpers import have_proc, wait_for

# s for a student's processes to be gone once their grader is: the wait ends the moment they are (about a
# second here idle); the bound is for a loaded classroom machine, where the keeper's turn can come late
GONE_WITHIN = 60.0

pytestmark = pytest.mark.subprocess

FIXTURES = ROOT / "tests" / "grade_fixtures"
ESCAPES = ["fork-and-exit", "group", "setsid", "double-fork"]


def running_with(marker: str) -> list[int]:
    """The processes with ``marker`` as one of their arguments (a zombie has none, so it is not counted)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if marker.encode() in cmdline.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:  # it ended while we looked
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
    assert wait_for(lambda: not running_with(marker), timeout=GONE_WITHIN), \
        f"still running after the {role} grader returned: {running_with(marker)}"


# Without a keeper (not Linux) the process group is what ends: it holds the first two escapes, not the
# ones that leave it (setsid), which is why Linux has the keeper.
GROUP_ROWS = [(role, escape) for role in ("server", "client") for escape in ("fork-and-exit", "group")]


@pytest.mark.parametrize("role, escape", GROUP_ROWS, ids=[f"{r}-{e}" for r, e in GROUP_ROWS])
def test_where_there_is_no_keeper_the_process_group_is_ended(role: str, escape: str, marker: str,
                                                             monkeypatch) -> None:
    monkeypatch.setattr(keeper, "KEEPER", False)
    grade_escaping(role, escape, marker)
    assert wait_for(lambda: not running_with(marker), timeout=GONE_WITHIN), \
        f"still running after the {role} grader returned: {running_with(marker)}"


# --- time --------------------------------------------------------------------------------------------

DELAY = 0.5  # every answer of the slow server but its first; the grader's per-answer timeout is twice that


def slow_card(*options: str):
    return grade.server([sys.executable, str(FIXTURES / "slow_server.py"), f"{DELAY:g}", *options], timeout=1.0)


def requests(trace, method: str | None = None) -> list:
    return [f for f in trace.frames if f.direction == "c2s" and getattr(f.message, "id", None) is not None
            and (method is None or f.message.method == method)]


def a_template_of_40_variables_costs_a_few_completions() -> None:
    report = slow_card("--variables", "40")
    assert report.ok and report.line("resources").status == PASS, report.text()
    for era, trace in report.traces.items():
        asked = [f for f in requests(trace, "completion/complete")
                 if f.message.params["ref"]["type"] == "ref/resource"]  # the prompt's own one aside
        assert 1 <= len(asked) <= 3, f"{era}: {len(asked)} completion requests for one template"


def a_long_catalogue_ends_at_the_budget_and_the_rest_is_not_judged() -> None:
    report = slow_card("--tools", "30")
    budget = 12 * 1.0  # the default: twelve timeouts' worth for the whole card
    assert report.ok, report.text()  # running out of time is never the student's failure
    tools = report.line("tools")
    assert tools.status == SKIP and "not judged in time" in tools.note, tools.text()
    assert f"{budget:g} s" in tools.note and "--timeout" in tools.note, tools.text()
    remark = report.text().splitlines()[-2]  # the card says so once, above its verdict
    assert "checks were not judged in time" in remark and "--timeout" in remark, report.text()
    for era, trace in report.traces.items():
        # Each answer after the opening takes DELAY at least, so a walk that keeps to the budget sent no
        # more than these: the opening, as many as the budget holds, and the one it cut.
        assert len(requests(trace)) <= 1 + budget / DELAY + 1, f"{era}: {len(requests(trace))} requests"


def a_failure_seen_before_the_budget_ran_out_stays_a_failure() -> None:
    report = slow_card("--tools", "30", "--fault", "tools")  # its first tool, add, crashes
    assert [line.check for line in report.failed] == ["tools"], report.text()
    assert "tools/call add" in report.line("tools").got
    assert report.line("resources").status == SKIP and "not judged in time" in report.line("resources").note


TIME_ROWS = [
    ("a template of 40 variables costs a few completions, not 40",
     a_template_of_40_variables_costs_a_few_completions),
    ("a long catalogue ends at the budget and the rest is not judged",
     a_long_catalogue_ends_at_the_budget_and_the_rest_is_not_judged),
    ("a failure seen before the budget ran out stays a failure",
     a_failure_seen_before_the_budget_ran_out_stays_a_failure),
]


@pytest.mark.parametrize("what, scenario", TIME_ROWS, ids=[row[0] for row in TIME_ROWS])
def test_a_slow_server_gets_a_card_in_bounded_time(what: str, scenario) -> None:
    scenario()


# --- output ------------------------------------------------------------------------------------------

GRADE_A_LOUD_CLIENT = """
import json, sys
from mcplab import grade

def hwm():
    with open('/proc/self/status') as status:
        return next(int(line.split()[1]) for line in status if line.startswith('VmHWM:'))

before = hwm()
report = grade.client([sys.executable, sys.argv[1], sys.argv[2], sys.argv[3]])
print(json.dumps({"growth_kib": hwm() - before, "ok": report.ok, "text": report.text(),
                  "notes": {line.check: line.note for line in report.lines}}))
"""

# where the client prints, MiB of it, and what the card must say: (check, words in its note)
OUTPUT_ROWS = [
    ("stdout", 256, [("runs", "its stdout was cut: 256 MiB in all, the first and last 64 KiB kept")]),
    ("stderr", 256, [("runs", "its stderr was cut: 256 MiB in all, the first and last 64 KiB kept")]),
    ("around", 4, [("runs", "its stdout was cut: 8 MiB in all"),  # the result printed between two chatters
                   ("prints-result", "the result's text is not in the first or last 64 KiB of its stdout")]),
]


@pytest.mark.parametrize("where, mib, says", OUTPUT_ROWS, ids=[f"{mib} MiB, {where}" for where, mib, _ in OUTPUT_ROWS])
def test_a_client_that_prints_without_end_leaves_the_graders_memory_flat(where: str, mib: int, says) -> None:
    need(have_proc(), "a process's peak memory is read from /proc (Linux)")
    # The grader runs in a process of its own, so its peak memory is its own and nothing else's.
    done = subprocess.run([sys.executable, "-c", GRADE_A_LOUD_CLIENT, str(FIXTURES / "loud_client.py"), where,
                           str(mib)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["growth_kib"] < 100 * 1024, f"the grader grew by {result['growth_kib'] // 1024} MiB"
    assert result["ok"], result["text"]  # printing much is no failure; a line that cannot be judged is skipped
    for check, words in says:
        assert words in result["notes"][check], result["text"]


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
    assert wait_for(lambda: not running_with(marker), timeout=GONE_WITHIN), running_with(marker)
