"""The bench harness itself runs: `bench/run.py --quick` with tiny counts finishes, prints its table and
writes JSON with every section and goal. It checks that the harness works, not how fast anything is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parent.parent
TINY = ["--quick", "--starts", "1", "--rounds", "1", "--calls", "5", "--warmup", "2",
        "--transports", "stdio", "--eras", "legacy"]
GOALS = {"stdio round trips/s, legacy: mcplab pair / SDK pair", "http round trips/s, legacy: mcplab pair / SDK pair",
         "stdio round trips/s, legacy: mcplab pair / raw JSON-lines echo",
         "cold start (spawn → first tools/list): mcplab / SDK",
         "import of the client (less interpreter start): mcplab / SDK",
         "server peak memory (stdio, after the rounds): mcplab / SDK", "notebook suite under nbval (seconds)",
         "stdio calls/s, raw client: weather server / TypeScript server",
         "http calls/s, raw client: weather server / TypeScript server",
         "cold start: weather server / TypeScript server, npx",
         "cold start: weather server / TypeScript server, node",
         "stdio legacy, mcplab pair / raw echo, each pair on one CPU",
         "stdio legacy, mcplab pair / raw echo, each pair on two CPUs",
         "stdio calls/s, raw client: echo, no event loop / TypeScript server",
         "stdio calls/s, raw client: echo in anyio / TypeScript server",
         "http round trips/s, legacy: raw echo pair / SDK pair", "http round trips/s, modern: raw echo pair / SDK pair",
         "stdio calls/s, raw client: anyio, a task each / TypeScript server"}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), *TINY, "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done, json.loads(out.read_text(encoding="utf-8"))


def test_quick_run_writes_every_section_and_records_the_machine(quick_run) -> None:
    _, results = quick_run
    assert set(results) == {"meta", "import", "cold_start", "round_trips", "notebooks", "goals"}
    meta = results["meta"]
    assert {"date", "python", "cpus", "mcplab", "sdk", "load_start", "load_end", "args"} <= set(meta)
    assert len(meta["load_start"]) == 3
    assert results["notebooks"]["status"] == "not run"  # --quick leaves the slow suite out


def test_quick_run_measures_our_side_of_each_comparison(quick_run) -> None:
    _, results = quick_run
    assert results["import"]["status"] == "ok" and results["import"]["net_ms"]["mcplab"] > 0
    assert results["cold_start"]["ms"]["mcplab"]["median"] > 0
    assert results["cold_start"]["server_peak_kib"]["mcplab"] > 0
    # The echo floor answers the handshake plain, in an asyncio loop and in anyio's: what a loop costs a start.
    floors = [results["cold_start"]["ms"][name]["median"] for name in ("floor", "floor-asyncio", "floor-anyio")]
    assert 0 < floors[0] < floors[1] and 0 < floors[2], floors
    group = results["round_trips"]["groups"]["stdio/legacy"]
    ours, floor = group["pairs"]["mcplab → mcplab"], group["pairs"]["raw → floor"]
    for pair in (ours, floor):
        assert pair["status"] == "ok", pair["status"]
        assert pair["per_s"] > 0 and pair["calls"] == 5 and 0 < pair["p50_us"] <= pair["p99_us"]
        assert pair["client_peak_kib"] > 0 and pair["server_peak_kib"] > 0
    assert ours["server_peak_kib"] != ours["client_peak_kib"]  # each process's own high-water mark


def test_the_floor_comparison_runs_again_with_the_cpus_fixed(quick_run) -> None:
    import os

    _, results = quick_run
    pairs = results["round_trips"]["groups"]["stdio/legacy"]["pairs"]
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    for key, spec in (("raw → floor, one CPU", "0/0"), ("mcplab → mcplab, one CPU", "0/0"),
                      ("raw → floor, two CPUs", "0/1"), ("mcplab → mcplab, two CPUs", "0/1")):
        pair = pairs[key]
        assert pair["cpus"] == spec
        if {int(cpu) for cpu in spec.split("/")} <= allowed:
            assert pair["status"] == "ok", pair["status"]
            assert pair["per_s"] > 0 and pair["calls"] == 5
        else:  # a machine that cannot place them says so
            assert pair["status"].startswith("not available: ") and "--cpus" in pair["status"], pair["status"]


def test_every_goal_is_reported_met_unmet_or_with_the_reason_it_could_not_be(quick_run) -> None:
    done, results = quick_run
    assert {g["goal"] for g in results["goals"]} >= GOALS
    for goal in results["goals"]:
        assert goal["met"] in (True, False, None)
        assert goal["met"] is not None or goal["why"]
    information = {g["goal"] for g in results["goals"] if g["target"] == "information"}
    assert information == {g for g in GOALS if "echo" in g or "anyio" in g}
    assert all(g["met"] is None for g in results["goals"] if g["target"] == "information")
    loops = {g["goal"]: g for g in results["goals"] if "raw client: " in g["goal"] and "anyio" in g["goal"]}
    assert {g["why"] for g in loops.values()} == {"raw → floor-anyio over stdio/legacy: not measured in this run",
                                                  "raw → floor-anyio-tasks over stdio/legacy: not measured in this run"}
    assert "Goals (ratios are this project / official SDK" in done.stdout
    assert "load average" in done.stdout


def test_the_typescript_server_is_measured_or_says_why_not(quick_run) -> None:
    """server-everything (npm, on Node) beside ours: in cold start and against the same raw client."""
    _, results = quick_run
    cold = results["cold_start"]
    assert "ts" in cold["ms"] or cold["unavailable"]["ts"]
    pairs = results["round_trips"]["groups"]["stdio/legacy"]["pairs"]
    for key in ("raw → mcplab", "raw → ts"):
        assert pairs[key]["status"] == "ok" or pairs[key]["status"].startswith("not available: "), pairs[key]
    assert pairs["raw → mcplab"]["status"] == "ok"
    if pairs["raw → ts"]["status"] == "ok":
        assert pairs["raw → ts"]["per_s"] > 0 and pairs["raw → ts"]["server_peak_kib"] > 0


def test_without_node_or_the_package_the_typescript_rows_name_what_is_missing(monkeypatch, tmp_path) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import harness

    monkeypatch.setattr(harness, "EVERYTHING", tmp_path / "index.js")
    with pytest.raises(harness.NotAvailable, match="server-everything is not installed"):
        harness.server_argv("ts")
    (tmp_path / "index.js").write_text("")
    monkeypatch.setattr(harness, "NODE_BIN", tmp_path)
    monkeypatch.setattr(harness.shutil, "which", lambda name: None)
    with pytest.raises(harness.NotAvailable, match="Node is not installed"):
        harness.server_argv("ts", "http")
    assert harness.server_argv("mcplab") == harness.WEATHER


def test_a_pair_that_cannot_run_says_why_instead_of_failing_the_run(tmp_path) -> None:
    """A driver that cannot connect reports "not available: ..." on its own line (here: an unknown era)."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "driver.py"), "mcplab", "stdio", "no-such-era",
                           "floor"], cwd=ROOT / "bench", capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    reply = json.loads(done.stdout.splitlines()[0])
    assert "unavailable" in reply and "no-such-era" in reply["unavailable"]


def test_the_stage_breakdown_runs_and_names_each_stage() -> None:
    """bench/stages.py with tiny counts: every stage gets a figure on each side (not how fast they are)."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "stages.py"), "--calls", "20", "--repeat", "20"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    for words in ("raw → floor", "mcplab client → floor", "raw → mcplab weather server", "client stages",
                  "decode (parse + classify)", "trace.record s2c", "server stages", "Server.handle tools/call"):
        assert words in done.stdout


@pytest.mark.parametrize("loop", ["asyncio", "anyio", "anyio-tasks"])
def test_each_floor_loop_answers_every_request_in_order_and_ends_at_end_of_file(loop) -> None:
    """bench/floor.py --loop: the echoes the weather server is set beside (cold start, round trips)."""
    lines = "".join(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {}}) + "\n"
                    for n in range(1, 4))
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "floor.py"), "--loop", loop], input=lines,
                          capture_output=True, text=True, timeout=60, cwd=ROOT / "bench")
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply["id"] for reply in replies] == [1, 2, 3]
    assert all(reply["result"]["content"][0]["text"].startswith("Beijing: sunny") for reply in replies)
