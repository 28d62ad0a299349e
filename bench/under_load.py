"""The same verdicts on a busy classroom machine: the lab cells and graders that judge, run under a CPU hog.

    python bench/under_load.py --runs 20                 # every scenario 20 times under the hog; a table
    python bench/under_load.py --runs 5 --only matrix-stdio,graders --out bench/results/load.json

Theory of operation
-------------------
A verdict about the protocol or about a student's work must not come from a clock (issue 28). Each
:class:`Scenario` here drives what a lab cell or a grader does, through the package API, and returns
its verdict as lines of text with nothing in them that a run may change (no ports, no pids, no times):

    matrix-stdio    Lab 06's compatibility matrix over stdio, one line per row and its summary
    matrix-http     the same over HTTP, one server per era (``launch_servers``)
    balancer        Lab 07 §1: a legacy client behind the round-robin proxy gets 404, a modern one's calls work
    mrtr            Lab 07 §2: input_required, the retry, the wizard's requestState, a tampered state refused
    grade-server    ``grade.server`` on the lab solution: its card
    grade-client    ``grade.client`` on the lab solution: its card
    broken-servers  ``grade.server`` on each broken server the grader tests use: which lines failed
    broken-clients  ``grade.client`` on each broken client: which lines failed

Each scenario also says, in ``problems``, where its verdict differs from what the lab teaches (a row
not as the spec says, a line of a solution's card not passed, a broken program failing other lines
than its own), so two runs that agree on a wrong answer still show it. The bench runs every scenario
once on the machine as it is (the quiet run, bytecode cache and all), then ``--runs`` times under
:func:`hog.loaded`, and counts the runs whose lines equal the quiet ones, sampling the load average
between scenarios. ``tests/test_under_load.py`` is the short form: one loaded pass, in ``make test``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hog  # noqa: E402  (beside this file)

from mcplab import Client, grade, schemas  # noqa: E402
from mcplab.client.mrtr import retry_params  # noqa: E402
from mcplab.ecosystem import proxy  # noqa: E402
from mcplab.grade import PASS  # noqa: E402
from mcplab.notebook import always_confirm, matrix  # noqa: E402
from mcplab.transports.http import http  # noqa: E402
from mcplab.transports.stdio import stdio  # noqa: E402
from mcplab.wire.errors import HTTPStatusError, RemoteError  # noqa: E402
from mcplab.wire.versions import ALL_VERSIONS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "servers"
SOLUTIONS = ROOT / "labs" / "solutions" / "build"
FIXTURES = ROOT / "tests" / "grade_fixtures"
CITIES = ("Beijing", "Tokyo", "Paris", "Cairo", "Seoul", "Sydney")  # Lab 07's six calls behind the balancer
WIZARD = {"name": "test_input_required_result_multi_round", "arguments": {}}
PASS_BOUND = 600.0  # seconds one loaded pass of every scenario may take before the loops stop by themselves
# Without the official schemas (a clone with nothing beside it, before `mcplab schemas`) the cards' schema
# line is skipped, the same way quiet and loaded, and the schema fault has nothing to fail: both are left out.
HAVE_SCHEMAS = all(schemas.schema_file(version) for version in ALL_VERSIONS)
BROKEN_AT_ONCE = 2  # broken programs graded side by side: two students grading at once, the card time halved


@dataclass(frozen=True)
class Verdict:
    lines: list[str]                                    # what the scenario showed, comparable run to run
    problems: list[str] = field(default_factory=list)   # where that differs from what the lab teaches


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[[], Verdict]


# --- Lab 06: the compatibility matrix ------------------------------------------------------------

def _matrix_verdict(table: matrix.Matrix) -> Verdict:
    lines = ["  ".join(table.cells(outcome)) for outcome in table.outcomes] + [table.summary()]
    return Verdict(lines, [line for line, o in zip(lines, table.outcomes) if not o.matches_spec])


def matrix_stdio() -> Verdict:
    return _matrix_verdict(anyio.run(matrix.run_matrix))


def matrix_http() -> Verdict:
    servers = matrix.launch_servers(server=[sys.executable, str(matrix.WEATHER)])
    try:
        urls = {era: server.url for era, server in servers.items()}
        return _matrix_verdict(anyio.run(partial(matrix.run_matrix, transport="http", urls=urls)))
    finally:
        proxy.stop_all(list(servers.values()))


# --- Lab 07 §1: three backends behind the round-robin proxy ---------------------------------------

async def _behind(url: str) -> Verdict:
    lines, problems = [], []
    try:
        async with Client(http(url), era="legacy"):
            lines.append("legacy client: opened")
    except HTTPStatusError as exc:
        lines.append(f"legacy client: {type(exc).__name__} {exc.status}")
    if lines != ["legacy client: SessionExpired 404"]:
        problems.append(f"the legacy session should end on 404 at notifications/initialized: {lines[0]}")
    backends = set()
    async with Client(http(url), era="modern") as stateless:
        for city in CITIES:
            result = await stateless.call_tool("get_weather", {"city": city})
            backend = stateless.trace.frames[-1].http["headers"].get("x-backend")
            backends.add(backend)
            lines.append(f"backend {backend}: {result.text}")
            if result.is_error:
                problems.append(f"get_weather {city} failed: {result.text}")
    if backends != {"1", "2", "3"}:
        problems.append(f"six modern calls should reach all three backends, they reached {sorted(backends)}")
    return Verdict(lines, problems)


def balancer() -> Verdict:
    backends = proxy.launch_all([[sys.executable, str(SERVERS / "weather.py")]] * 3)
    try:
        front = proxy.start([b.url for b in backends])
        try:
            return anyio.run(_behind, front.url)
        finally:
            proxy.stop_all([front])
    finally:
        proxy.stop_all(backends)


# --- Lab 07 §2: MRTR --------------------------------------------------------------------------------

async def _rounds(root: str) -> Verdict:
    lines = []
    write = {"name": "write_file", "arguments": {"path": "notes.md", "content": "# Notes\n\nStateless, at last.\n"}}
    async with Client(stdio([sys.executable, str(SERVERS / "files.py"), "--root", root, "--writable"]),
                      era="modern", elicitation=lambda params: {"action": "accept", "content": {"replace": True}}
                      ) as writer:
        asked = await writer.request("tools/call", write, rounds=False)
        lines.append(f"write_file asks: {asked['resultType']} {sorted(asked.get('inputRequests', {}))}")
        answer = always_confirm(asked["inputRequests"]["confirm_replace"])
        done = await writer.request("tools/call", retry_params(write, {"confirm_replace": answer},
                                                               asked.get("requestState")), rounds=False)
        lines.append(f"the retry: {done['resultType']} · {done['content'][0]['text']}")
        again = await writer.call_tool("write_file", {"path": "notes.md", "content": "# Notes\n\nTwice.\n"})
        lines.append(f"call_tool does the rounds: {again.text}")
    async with Client(stdio([sys.executable, str(SERVERS / "conformance.py"),
                             "--era", "modern"]), era="modern",
                      elicitation=lambda params: {"action": "accept", "content": {}}) as fixtures:
        step1 = await fixtures.request("tools/call", WIZARD, rounds=False)
        name = {"step1": {"action": "accept", "content": {"name": "Ada"}}}
        step2 = await fixtures.request("tools/call", retry_params(WIZARD, name, step1["requestState"]), rounds=False)
        colour = {"step2": {"action": "accept", "content": {"color": "teal"}}}
        final = await fixtures.request("tools/call", retry_params(WIZARD, colour, step2["requestState"]),
                                       rounds=False)
        lines.append(f"wizard: {sorted(step1['inputRequests'])} {sorted(step2['inputRequests'])} "
                     f"{final['resultType']} · {final['content'][0]['text']}")
        body, mac = step2["requestState"].split(".")
        tampered = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1] + "." + mac
        try:
            await fixtures.request("tools/call", retry_params(WIZARD, colour, tampered), rounds=False)
            lines.append("tampered requestState: accepted")
        except RemoteError as exc:
            lines.append(f"tampered requestState: {exc.code}")
    expected = ["write_file asks: input_required ['confirm_replace']",
                "the retry: complete · wrote 29 bytes to notes.md", "call_tool does the rounds: wrote 16 bytes to notes.md",
                "wizard: ['step1'] ['step2'] complete · Ada likes teal", "tampered requestState: -32602"]
    return Verdict(lines, [f"expected {want!r}, got {got!r}" for want, got in zip(expected, lines) if want != got])


def mrtr() -> Verdict:
    root = tempfile.mkdtemp(prefix="lab07-")
    try:
        shutil.copytree(SERVERS / "samples", root, dirs_exist_ok=True)
        return anyio.run(_rounds, root)
    finally:
        shutil.rmtree(root)


# --- the graders ------------------------------------------------------------------------------------

def _card(report: grade.Report) -> Verdict:
    return Verdict(report.text().splitlines(), [line.text() for line in report.lines if line.status != PASS
                                                and (HAVE_SCHEMAS or line.check != "schema")])


def grade_server() -> Verdict:
    return _card(grade.server(SOLUTIONS / "my_server.py"))


def grade_client() -> Verdict:
    return _card(grade.client(SOLUTIONS / "my_client.py"))


def _faults(script: str) -> tuple[str, ...]:
    """The faults a fixture knows (its FAULTS), read from the script without running its main."""
    spec = importlib.util.spec_from_file_location(f"fixture_{script}", FIXTURES / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FAULTS


def _broken(script: str, grader: Callable[..., grade.Report], options: Callable[[str], dict]) -> Verdict:
    """Each fault of ``script`` graded: exactly its own line must fail, as tests/test_grade_*.py assert."""
    faults = tuple(fault for fault in _faults(script) if HAVE_SCHEMAS or fault != "schema")
    argv = [sys.executable, str(FIXTURES / f"{script}.py"), "--fault"]
    with ThreadPoolExecutor(BROKEN_AT_ONCE) as pool:
        cards = list(pool.map(lambda fault: grader([*argv, fault], **options(fault)), faults))
    lines, problems = [], []
    for fault, card in zip(faults, cards):
        failed = [line.check for line in card.failed]
        lines += [f"{fault}: {line}" for line in card.text().splitlines()[1:]]
        if failed != [fault]:
            problems.append(f"--fault {fault} should fail only its line, it failed {failed}: "
                            + " / ".join(line.text() for line in card.failed if line.check != fault))
    return Verdict(lines, problems)


def broken_servers() -> Verdict:
    return _broken("fault_server", grade.server, lambda fault: {"timeout": 2.0})


def broken_clients() -> Verdict:
    # The waits tests/test_grade_client.py gives: short where the fault makes the grader wait them out.
    return _broken("fault_client", grade.client, lambda fault: {"timeout": 1.0 if fault == "timeout" else 4.0,
                                                                "patience": 4.0 if fault == "stderr" else 10.0})


SCENARIOS = (Scenario("matrix-stdio", matrix_stdio), Scenario("matrix-http", matrix_http),
             Scenario("balancer", balancer), Scenario("mrtr", mrtr), Scenario("grade-server", grade_server),
             Scenario("grade-client", grade_client), Scenario("broken-servers", broken_servers),
             Scenario("broken-clients", broken_clients))


def timed(scenario: Scenario) -> tuple[Verdict, float]:
    began = time.monotonic()
    verdict = scenario.run()
    return verdict, time.monotonic() - began


# --- the long form ----------------------------------------------------------------------------------

def bench(scenarios: tuple[Scenario, ...], runs: int) -> dict:
    quiet = {s.name: timed(s) for s in scenarios}
    rows = {s.name: {"runs": 0, "same": 0, "as_taught": 0, "seconds": [], "load": [], "differences": []}
            for s in scenarios}
    # The loops' own bound covers the whole bench (a pass takes ~3 min on 2 busy cores), with room to spare.
    with hog.loaded(limit=hog.LIMIT + PASS_BOUND * runs) as load:
        for run in range(runs):
            for scenario in scenarios:
                row = rows[scenario.name]
                before = load.sample()
                verdict, seconds = timed(scenario)
                row["load"] += [before, load.sample()]
                row["runs"] += 1
                row["seconds"].append(round(seconds, 2))
                row["as_taught"] += not verdict.problems
                if verdict.lines == quiet[scenario.name][0].lines:
                    row["same"] += 1
                else:
                    changed = [line for line in verdict.lines if line not in quiet[scenario.name][0].lines]
                    row["differences"].append({"run": run + 1, "lines": changed, "problems": verdict.problems})
                print(f"  run {run + 1}/{runs} {scenario.name}: {seconds:.1f} s, load {load.samples[-1]:.1f}"
                      + ("" if not verdict.problems else f", {len(verdict.problems)} problem(s)"), flush=True)
        busy = load.spinning
    return {"hog": {"processes": len(load.processes), "spinning_at_end": busy, "load": load.samples},
            "quiet": {name: {"seconds": round(s, 2), "lines": v.lines, "problems": v.problems}
                      for name, (v, s) in quiet.items()},
            "loaded": rows}


def table(results: dict) -> str:
    head = ("scenario", "runs", "same as quiet", "as taught", "slowest s", "load min/mean/max")
    body = []
    for name, row in results["loaded"].items():
        load = row["load"] or [0.0]
        body.append((name, str(row["runs"]), str(row["same"]), str(row["as_taught"]),
                     f"{max(row['seconds'], default=0):.1f}",
                     f"{min(load):.1f}/{sum(load) / len(load):.1f}/{max(load):.1f}"))
    widths = [max(len(r[i]) for r in (head, *body)) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in (head, *body))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="consecutive loaded runs of every scenario")
    parser.add_argument("--only", default="", help="comma-separated scenario names (default: all)")
    parser.add_argument("--out", type=Path, help="write the results as JSON here (bench/results/ is ignored by git)")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    unknown = set(names) - {s.name for s in SCENARIOS}
    if unknown:
        parser.error(f"no scenario {', '.join(sorted(unknown))}; there are {', '.join(s.name for s in SCENARIOS)}")
    scenarios = tuple(s for s in SCENARIOS if not names or s.name in names)
    results = bench(scenarios, args.runs)
    print(table(results))
    for name, row in results["loaded"].items():
        for difference in row["differences"][:3]:
            print(f"{name}, run {difference['run']}: {difference['lines'][:3]} {difference['problems'][:2]}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    same = all(row["same"] == row["runs"] for row in results["loaded"].values())
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
