"""mcplab beside the official Python SDK (mcp==2.3.0), side by side in one run: `make bench`.

    python bench/run.py                         # everything: about 6 minutes on 2 quiet cores
    python bench/run.py --quick                 # small counts, no notebook suite: a smoke run
    python bench/run.py --only import,cold_start --starts 30
    python bench/run.py --rounds 7 --calls 2000 --http-calls 500 --out bench/results/latest.json

What is measured (each a small function below; one whose prerequisites are missing reports
"not available: <reason>" and the rest go on):

    import       wall time of `python -c "from mcplab import Client, stdio"` against the SDK's
                 `from mcp import ClientSession, StdioServerParameters; from mcp.client.stdio import
                 stdio_client`, less a bare `python -c pass`
    cold_start   spawn the bundled weather server → first tools/list answered, against the SDK's
                 equivalent server (servers/weather_sdk.py), the TypeScript SDK's reference server
                 (server-everything from npm, on Node, started by node and by npx) and a raw JSON-lines echo,
                 plain and inside an asyncio and an anyio event loop; the server's peak memory at that moment
    round_trips  sequential tools/call per second, p50/p99 latency, client and server peak memory, for
                 every client × server pair over stdio and Streamable HTTP, legacy and modern era; the
                 floor is a raw client against bench/floor.py (a JSON-lines echo; a bare Starlette
                 endpoint with httpx); in the legacy era the TypeScript reference server too, its
                 `echo` tool driven by each client, and the raw client against both it and the weather
                 server (the same client: the servers' own difference); and over stdio the floor
                 and our pair again with their CPUs fixed (--cpus of driver.py): on one CPU, and
                 client and server on two
    notebooks    wall time of `pytest --nbval ... labs/` (nbval on every lab and solution)

Contenders take turns round by round (harness.alternate); each pair runs in its own driver process
(driver.py). The table goes to stdout, the JSON to --out (bench/results/ is git-ignored).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from harness import (
    BENCH, NODE_DIR, PYTHON, RESULTS, ROOT, Lines, NotAvailable, alternate, load_average, peak_kib, percentile, python_env,
    server_argv, stop, summary,
)
from report import goals, render

IMPORTS = {
    "python -c pass": "pass",
    "mcplab": "from mcplab import Client, stdio",
    "sdk": "from mcp import ClientSession, StdioServerParameters; from mcp.client.stdio import stdio_client",
}
BARE_IMPORTS = {"import mcplab": "import mcplab", "import mcp": "import mcp"}  # for the record; not with --quick
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}}
# (client, server) pairs per transport and era; the floor rows run once per transport, in the legacy group,
# and the raw echo pair again over HTTP in the modern group, beside the SDK's modern pair (report.py's ceiling).
PAIRS = [("mcplab", "mcplab"), ("sdk", "sdk"), ("mcplab", "sdk"), ("sdk", "mcplab")]
FLOOR_PAIRS = [("raw", "floor"), ("mcplab", "floor"), ("sdk", "floor")]
# The TypeScript reference server (legacy era only: it does not speak the stateless revision), and the
# raw client against both servers; --quick keeps the first two.
TS_PAIRS = [("raw", "mcplab"), ("raw", "ts"), ("mcplab", "ts"), ("sdk", "ts")]
# Over stdio, the raw client against the echo in anyio's loop, inline and a task per message: the most any
# server on anyio can answer, beside the TypeScript server (information for the weather server's goal).
LOOP_PAIRS = [("raw", "floor-anyio"), ("raw", "floor-anyio-tasks")]
# The floor comparison again with the CPUs fixed (client CPU/server CPU): left to itself, the system places
# the two processes of a pair as it likes, run by run, and on a virtual machine waking an idle CPU costs more
# than a round trip; so the free rows compare placements as much as programs. Both on CPU 0, then split.
PLACED_PAIRS = [("raw", "floor", "0/0"), ("mcplab", "mcplab", "0/0"), ("raw", "floor", "0/1"),
                ("mcplab", "mcplab", "0/1")]
PLACEMENTS = {"0/0": "one CPU", "0/1": "two CPUs"}
COLD_SERVERS = ("mcplab", "sdk", "ts", "ts-npx", "floor", "floor-asyncio", "floor-anyio")
COLD_CWD = {"ts-npx": NODE_DIR}  # where npx finds the local copy; every other server starts in the checkout
READY_TIMEOUT = 90.0   # seconds for a driver to start, connect and warm up (two SDK imports on a busy machine)
ROUND_TIMEOUT = 300.0  # seconds for one round of one pair


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --- import time ---------------------------------------------------------------------------------------

def measure_import(args: argparse.Namespace) -> dict[str, Any]:
    env = python_env()

    def timed(code: str) -> Callable[[], float]:
        def run() -> float:
            started = time.perf_counter()
            done = subprocess.run([PYTHON, "-c", code], env=env, cwd=ROOT, capture_output=True)
            elapsed = (time.perf_counter() - started) * 1000
            if done.returncode:
                raise NotAvailable(f"`{code}` failed: {done.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
            return elapsed
        return run

    statements = IMPORTS if args.quick else {**IMPORTS, **BARE_IMPORTS}
    samples, unavailable = alternate(args.starts, {name: timed(code) for name, code in statements.items()})
    if "python -c pass" in unavailable:
        raise NotAvailable(unavailable["python -c pass"])
    base = statistics.median(samples["python -c pass"])
    return {"unit": "ms", "statements": statements, "baseline_ms": base, "unavailable": unavailable,
            "wall_ms": {name: summary(values) for name, values in samples.items() if values},
            "net_ms": {name: statistics.median(values) - base for name, values in samples.items()
                       if values and name != "python -c pass"},
            "samples_ms": samples}


# --- cold start ----------------------------------------------------------------------------------------

def frame(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def cold_start(argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, int | None]:
    """Spawn → initialize answered → tools/list answered, driven as a client would; (ms, peak KiB)."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env=env, cwd=cwd)
    try:
        lines = Lines(process.stdout.fileno())
        for request_id, messages in ((1, [INITIALIZE]), (2, [{"jsonrpc": "2.0", "method": "notifications/initialized"},
                                                             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])):
            process.stdin.write(b"".join(frame(m) for m in messages))
            process.stdin.flush()
            while True:
                line = lines.read(timeout=30)
                if line is None:
                    who = " ".join(Path(a).name for a in argv[1:])
                    raise NotAvailable(f"{who} gave no answer to request {request_id} (exit code {process.poll()})")
                reply = json.loads(line)
                if reply.get("id") == request_id and "method" not in reply:
                    break
        elapsed = (time.perf_counter() - started) * 1000
        return elapsed, peak_kib(process.pid)
    finally:
        stop(process)


def measure_cold_start(args: argparse.Namespace) -> dict[str, Any]:
    env = python_env()
    peaks: dict[str, list[int]] = {name: [] for name in COLD_SERVERS}

    def contender(name: str) -> Callable[[], float]:
        def run() -> float:
            elapsed, peak = cold_start(server_argv(name), env, COLD_CWD.get(name, ROOT))
            if peak and name not in COLD_CWD:  # npx's own memory is not the server's (its grandchild)
                peaks[name].append(peak)
            return elapsed
        return run

    samples, unavailable = alternate(args.starts, {name: contender(name) for name in COLD_SERVERS})
    return {"unit": "ms", "servers": {name: server_name(name) for name in COLD_SERVERS},
            "unavailable": unavailable,
            "ms": {name: summary(values) for name, values in samples.items() if values},
            "server_peak_kib": {name: statistics.median(values) if values else None for name, values in peaks.items()},
            "samples_ms": samples}


def server_name(name: str) -> str:
    """What runs as server ``name``, without this machine's paths."""
    try:
        argv = server_argv(name)
    except NotAvailable as exc:
        return f"not available: {exc}"
    if name.startswith("ts"):
        return "server-everything stdio (Node)" + (", started by npx" if name == "ts-npx" else "")
    return " ".join(Path(a).name for a in argv[1:])


# --- round trips ---------------------------------------------------------------------------------------

class Driver:
    """One pair's driver process (driver.py): started, timed round by round, then asked for memory."""

    def __init__(self, client: str, transport: str, era: str, server: str, warmup: int, cpus: str = "") -> None:
        self.key = f"{client} → {server}" + (f", {PLACEMENTS[cpus]}" if cpus else "")
        self.spec = {"client": client, "server": server, "transport": transport, "era": era,
                     **({"cpus": cpus} if cpus else {})}
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen([PYTHON, str(BENCH / "driver.py"), client, transport, era, server,
                                         "--warmup", str(warmup), *(["--cpus", cpus] if cpus else [])],
                                        cwd=BENCH, env=python_env(),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.lines = Lines(self.process.stdout.fileno())
        self.status = "starting"
        self.rates: list[float] = []
        self.latencies_ns: list[int] = []
        self.memory: dict[str, Any] = {}

    def wait_ready(self) -> None:
        reply = self._reply(READY_TIMEOUT)
        if "ready" in reply:
            self.status = "ok"
        else:
            self.status = f"not available: {reply.get('unavailable', 'no answer')}"
            self.finish()

    def round(self, calls: int) -> float:
        """Time ``calls`` round trips; a driver that fails mid-run is reported and left out from then on."""
        if self.status != "ok":
            return float("nan")
        try:
            self.process.stdin.write(f"{calls}\n".encode())
            self.process.stdin.flush()
        except OSError:
            pass  # it exited: _reply says so
        reply = self._reply(ROUND_TIMEOUT)
        if "seconds" not in reply:
            self.status = f"not available: the driver stopped mid-run ({reply.get('unavailable', 'no answer')})"
            return float("nan")
        self.rates.append(calls / reply["seconds"])
        self.latencies_ns += reply["latencies_ns"]
        return self.rates[-1]

    def finish(self) -> None:
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()  # the driver closes its connection and reports memory
            if self.status == "ok":
                self.memory = self._reply(30)
        stop(self.process)
        self.stderr.close()

    def _reply(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while (line := self.lines.read(max(0.0, deadline - time.monotonic()))) is not None:
            if line.startswith("{"):  # anything else is a library printing to stdout: not ours to parse
                return json.loads(line)
        tail = os.pread(self.stderr.fileno(), 1 << 16, 0).decode(errors="replace").strip().splitlines()[-1:]
        return {"unavailable": f"the driver exited or hung (exit code {self.process.poll()}) {' '.join(tail)}"
                               .strip()[:300]}

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.spec, "status": self.status}
        if self.status == "ok" and self.rates:
            latencies_us = [ns / 1000 for ns in self.latencies_ns]
            out.update(per_s=statistics.median(self.rates), rounds_per_s=[round(r, 1) for r in self.rates],
                       p50_us=percentile(latencies_us, 50), p99_us=percentile(latencies_us, 99),
                       calls=len(latencies_us), client_peak_kib=self.memory.get("client_peak_kib"),
                       server_peak_kib=self.memory.get("server_peak_kib"))
        return out


def round_trip_group(transport: str, era: str, args: argparse.Namespace) -> dict[str, Any]:
    """Every pair of one transport and era: drivers start together, then take turns round by round."""
    extra = (FLOOR_PAIRS[:1] + TS_PAIRS[:2] if args.quick else FLOOR_PAIRS + TS_PAIRS) if era == "legacy" else []
    if (transport, era) == ("http", "modern"):
        extra = FLOOR_PAIRS[:1]
    placed = PLACED_PAIRS if (transport, era) == ("stdio", "legacy") else []
    loops = LOOP_PAIRS if (transport, era) == ("stdio", "legacy") and not args.quick else []
    pairs = [(client, server, "") for client, server in PAIRS + extra + loops] + placed
    calls = args.http_calls if transport == "http" else args.calls
    drivers = [Driver(client, transport, era, server, args.warmup, cpus) for client, server, cpus in pairs]
    try:
        for driver in drivers:
            driver.wait_ready()
        load_before = load_average()
        alternate(args.rounds, {d.key: (lambda d=d: d.round(calls)) for d in drivers if d.status == "ok"},
                  warmup=0)  # a driver that fails mid-run says so in its own status
    finally:
        for driver in drivers:
            driver.finish()
    return {"transport": transport, "era": era, "calls_per_round": calls, "rounds": args.rounds,
            "load_before": load_before, "load_after": load_average(),
            "pairs": {d.key: d.result() for d in drivers}}


def measure_round_trips(args: argparse.Namespace) -> dict[str, Any]:
    groups: dict[str, Any] = {}
    for transport in args.transports:
        for era in args.eras:
            log(f"  round trips: {transport}, {era} era")
            try:
                groups[f"{transport}/{era}"] = round_trip_group(transport, era, args)
            except NotAvailable as exc:
                groups[f"{transport}/{era}"] = {"status": f"not available: {exc}"}
    return {"groups": groups}


# --- the notebook suite --------------------------------------------------------------------------------

def measure_notebooks(args: argparse.Namespace) -> dict[str, Any]:
    # nbval's flags by name: tests/conftest.py, which sets them for the whole suite, is not loaded for labs/ alone.
    command = [PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval", "--nbval-current-env",
               "--nbval-sanitize-with", "labs/nbval-sanitize.cfg", "labs/"]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=python_env(), capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - started
    last = (done.stdout.strip().splitlines() or [""])[-1].strip("= ")
    return {"command": " ".join(["python", *command[1:]]), "seconds": seconds, "exit_code": done.returncode,
            "summary": last}


# --- the run -------------------------------------------------------------------------------------------

MEASUREMENTS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "import": measure_import,
    "cold_start": measure_cold_start,
    "round_trips": measure_round_trips,
    "notebooks": measure_notebooks,
}


def git_revision() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "mcplab", "servers"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return head + (" + uncommitted changes" if dirty else "")
    except OSError:
        return "unknown"


def sdk_version() -> str | None:
    from importlib import metadata
    try:
        return metadata.version("mcp")
    except metadata.PackageNotFoundError:
        return None


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, help="timed rounds per round-trip pair (default 5; quick 2)")
    parser.add_argument("--calls", type=int, help="sequential calls per round over stdio (default 1000; quick 100)")
    parser.add_argument("--http-calls", type=int, help="sequential calls per round over HTTP (default 300; quick 30)")
    parser.add_argument("--starts", type=int, help="rounds of import and cold start (default 20; quick 3)")
    parser.add_argument("--warmup", type=int, help="untimed calls per pair before the rounds (default 100; quick 10)")
    parser.add_argument("--quick", action="store_true", help="small counts and no notebook suite")
    parser.add_argument("--only", help=f"comma-separated subset of {','.join(MEASUREMENTS)}")
    parser.add_argument("--skip", default="", help="comma-separated measurements to leave out")
    parser.add_argument("--transports", default="stdio,http", help="round trips over (default stdio,http)")
    parser.add_argument("--eras", default="legacy,modern", help="round trips in (default legacy,modern)")
    parser.add_argument("--out", default=str(RESULTS / "latest.json"), help="where the JSON goes")
    args = parser.parse_args(argv)
    quick = args.quick
    args.rounds = args.rounds or (2 if quick else 5)
    args.calls = args.calls or (100 if quick else 1000)
    args.http_calls = args.http_calls or (30 if quick else 300)
    args.starts = args.starts or (3 if quick else 20)
    args.warmup = args.warmup if args.warmup is not None else (10 if quick else 100)
    args.transports = [t for t in args.transports.split(",") if t]
    args.eras = [e for e in args.eras.split(",") if e]
    chosen = args.only.split(",") if args.only else [m for m in MEASUREMENTS if not (quick and m == "notebooks")]
    unknown = set(chosen + [s for s in args.skip.split(",") if s]) - set(MEASUREMENTS)
    if unknown:
        parser.error(f"unknown measurement(s) {', '.join(sorted(unknown))}; choose from {', '.join(MEASUREMENTS)}")
    args.measurements = [m for m in chosen if m not in args.skip.split(",")]
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    RESULTS.mkdir(exist_ok=True)
    results: dict[str, Any] = {"meta": {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
        "mcplab": git_revision(), "sdk": sdk_version(), "load_start": load_average(),
        "args": {k: v for k, v in vars(args).items() if k != "measurements"}}}
    started = time.perf_counter()
    for name in MEASUREMENTS:
        if name not in args.measurements:
            results[name] = {"status": "not run"}
            continue
        log(f"bench: {name} (load {load_average()[0]:.2f})")
        began = time.perf_counter()
        try:
            results[name] = {"status": "ok", "load_before": load_average(), **MEASUREMENTS[name](args)}
        except NotAvailable as exc:
            results[name] = {"status": f"not available: {exc}"}
        results[name]["seconds_taken"] = round(time.perf_counter() - began, 1)
    results["meta"].update(load_end=load_average(), seconds=round(time.perf_counter() - started, 1))
    results["goals"] = goals(results)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    print(render(results))
    print(f"\nJSON: {out}")
    return results


if __name__ == "__main__":
    main()
