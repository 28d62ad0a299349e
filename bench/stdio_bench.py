"""Measure mcplab's stdio servers beside the official SDK's: cold start and round trips per second.

    python bench/stdio_bench.py                  # both measurements, printed and saved to bench/results/
    python bench/stdio_bench.py --rounds 40 --calls 3000 --no-bytecode-cache

Cold start is spawn → the first ``tools/list`` answered, driven the way a client drives it: send
``initialize``, wait for its result, send ``notifications/initialized`` and ``tools/list``, wait for that
result. The servers take turns, round after round, so a busy machine slows all of them alike; the
median is reported with the 10th and 90th percentiles.

Throughput is sequential ``tools/call get_weather`` round trips from a raw JSON-lines client (one
request written, its response read, repeat) after a warm-up, per second. The "echo" row is a Python
process that parses each line and writes a reply: the floor any Python stdio server stands on.

Bytecode: this environment sets PYTHONDONTWRITEBYTECODE, so by default each server process gets a
private PYTHONPYCACHEPREFIX (warmed once) as a classroom install would have; ``--no-bytecode-cache``
measures the environment as it is (mcplab's modules compiled on every start; the SDK's came
precompiled from pip).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ECHO = ("import json, sys\n"
        "for line in sys.stdin:\n"
        "    message = json.loads(line)\n"
        "    if 'id' in message:\n"
        "        reply = {'jsonrpc': '2.0', 'id': message['id'], 'result': {'tools': [], 'content': []}}\n"
        "        sys.stdout.write(json.dumps(reply) + '\\n'); sys.stdout.flush()\n")
SERVERS = {
    "mcplab": [sys.executable, str(ROOT / "servers" / "weather.py")],
    "official SDK (MCPServer)": [sys.executable, str(ROOT / "bench" / "sdk_weather_server.py")],
    "raw JSON echo": [sys.executable, "-c", ECHO],
}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}}


def frame(message: dict) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode() + b"\n"


def read_reply(process: subprocess.Popen, request_id: int) -> dict:
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{process.args} closed stdout")
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            return message


def start(argv: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, cwd=ROOT)


def stop(process: subprocess.Popen) -> None:
    process.stdin.close()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def cold_start_ms(argv: list[str], env: dict) -> float:
    started = time.perf_counter()
    process = start(argv, env)
    process.stdin.write(frame(INITIALIZE))
    process.stdin.flush()
    read_reply(process, 1)
    process.stdin.write(frame({"jsonrpc": "2.0", "method": "notifications/initialized"})
                        + frame({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    process.stdin.flush()
    read_reply(process, 2)
    elapsed = (time.perf_counter() - started) * 1000
    stop(process)
    return elapsed


def round_trips_per_second(argv: list[str], env: dict, calls: int) -> float:
    process = start(argv, env)
    process.stdin.write(frame(INITIALIZE))
    process.stdin.flush()
    read_reply(process, 1)
    process.stdin.write(frame({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "get_weather", "arguments": {"city": "Beijing"}}}
    for request_id in range(2, 202):  # warm-up: first-call imports, caches
        process.stdin.write(frame({**call, "id": request_id}))
        process.stdin.flush()
        read_reply(process, request_id)
    started = time.perf_counter()
    for request_id in range(1000, 1000 + calls):
        process.stdin.write(frame({**call, "id": request_id}))
        process.stdin.flush()
        read_reply(process, request_id)
    rate = calls / (time.perf_counter() - started)
    stop(process)
    return rate


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="cold starts per server (default 30)")
    parser.add_argument("--calls", type=int, default=3000, help="timed round trips per server (default 3000)")
    parser.add_argument("--no-bytecode-cache", action="store_true", help="keep PYTHONDONTWRITEBYTECODE as it is")
    args = parser.parse_args()

    env = dict(os.environ)
    if not args.no_bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="mcplab-bench-pyc-")
    for argv in SERVERS.values():  # warm the bytecode cache and the OS file cache
        cold_start_ms(argv, env)

    samples: dict[str, list[float]] = {name: [] for name in SERVERS}
    for _ in range(args.rounds):
        for name, argv in SERVERS.items():
            samples[name].append(cold_start_ms(argv, env))
    rates = {name: round_trips_per_second(argv, env, args.calls) for name, argv in SERVERS.items()}

    load = os.getloadavg()[0]
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load:.2f}, "
          f"bytecode cache {'off' if args.no_bytecode_cache else 'on'}")
    print(f"{'server':28s} {'cold start median':>18s} {'p10':>8s} {'p90':>8s} {'round trips/s':>14s}")
    for name in SERVERS:
        values = samples[name]
        print(f"{name:28s} {statistics.median(values):15.0f} ms {percentile(values, 0.1):5.0f} ms "
              f"{percentile(values, 0.9):5.0f} ms {rates[name]:14.0f}")
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / "stdio_bench.json").write_text(json.dumps(
        {"python": sys.version, "load": load, "bytecode_cache": not args.no_bytecode_cache,
         "cold_start_ms": samples, "round_trips_per_s": rates}, indent=2))


if __name__ == "__main__":
    main()
