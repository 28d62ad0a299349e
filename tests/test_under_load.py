"""The same verdicts on a busy classroom machine (issue 28): Lab 06's matrix, Lab 07's balancer and MRTR
cells, and both graders, run once as the machine is and once under a CPU hog (twice the cores in busy
loops, no usable bytecode cache for any child), must show the same lines, and the lines the lab teaches.

The scenarios are bench/under_load.py's (its long form runs them 20 times and samples the load); the
hog is bench/hog.py. A verdict that changes under load is a clock deciding about the protocol or about
a student's work: the failure names the scenario and the lines that changed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import hog  # noqa: E402  (bench/hog.py: the busy loops and the cold bytecode cache)
import under_load  # noqa: E402  (bench/under_load.py: the scenarios, shared with the long form)

pytestmark = [pytest.mark.subprocess, pytest.mark.http]
SCENARIOS = under_load.SCENARIOS


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"  # ended, not yet reaped
    except FileNotFoundError:
        return True


def _all_gone(pids: list[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while not all(_gone(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_hog_gives_children_no_bytecode_cache_and_ends_its_loops_when_the_block_raises() -> None:
    show = "import sys; print(sys.flags.dont_write_bytecode, sys.pycache_prefix)"
    with pytest.raises(RuntimeError, match="a failing test"):
        with hog.loaded(2, limit=60) as load:
            pids = [p.pid for p in load.processes]
            assert load.spinning == 2
            flags, prefix = subprocess.run([sys.executable, "-c", show], capture_output=True, text=True,
                                           check=True).stdout.split()
            assert flags == "1" and os.path.isdir(prefix) and os.listdir(prefix) == []
            raise RuntimeError("a failing test")
    assert _all_gone(pids, within=10), "a busy loop outlived its block"
    assert "PYTHONPYCACHEPREFIX" not in os.environ and not os.path.exists(prefix)


def test_the_hogs_loops_stop_when_their_parent_is_killed_without_cleaning_up() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; sys.path.insert(0, sys.argv[1]); import hog\n"
                               "with hog.loaded(2, limit=60) as load:\n"
                               "    print(*(p.pid for p in load.processes), flush=True); time.sleep(60)",
         str(ROOT / "bench")], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 2 and not any(_gone(pid) for pid in pids)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    assert _all_gone(pids, within=10), "a busy loop outlived the process that started it"


def test_the_long_form_prints_its_table_and_writes_json(tmp_path) -> None:
    out = tmp_path / "load.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "under_load.py"), "--runs", "2", "--only", "mrtr",
                           "--out", str(out)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "scenario  runs  same as quiet  as taught  slowest s  load min/mean/max" in done.stdout
    results = json.loads(out.read_text(encoding="utf-8"))
    row = results["loaded"]["mrtr"]
    assert (row["runs"], row["same"], row["as_taught"], len(row["seconds"])) == (2, 2, 2, 2)
    assert len(row["load"]) == 4 and results["hog"]["processes"] == hog.busy_count()
    assert results["hog"]["spinning_at_end"] == hog.busy_count()


def test_the_long_form_refuses_a_scenario_it_does_not_have() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "under_load.py"), "--only", "matrix-sse"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no scenario matrix-sse; there are matrix-stdio" in done.stderr


# Last in the file: the module-scoped hog spins until the module ends.
@pytest.fixture(scope="module")
def quiet() -> dict[str, under_load.Verdict]:
    """Every scenario once, before the hog starts: the verdicts to compare with."""
    return {scenario.name: scenario.run() for scenario in SCENARIOS}


@pytest.fixture(scope="module")
def busy(quiet):
    # The loops' own bound is only for a test run that dies: the block ends them. A pass takes some 3
    # minutes on two busy cores, and more on a machine that is busy already.
    with hog.loaded(limit=900) as load:
        yield load


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_a_busy_machine_gives_the_same_verdict_as_a_quiet_one(scenario, quiet, busy) -> None:
    assert busy.spinning == hog.busy_count(), "the hog stopped before the scenario ran"
    assert quiet[scenario.name].problems == [], "\n".join(quiet[scenario.name].problems)
    verdict = scenario.run()
    assert verdict.problems == [], "\n".join(verdict.problems)
    changed = [line for line in verdict.lines if line not in quiet[scenario.name].lines]
    assert verdict.lines == quiet[scenario.name].lines, "\n".join(changed)
