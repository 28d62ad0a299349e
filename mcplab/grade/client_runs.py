"""The client grader: a student's stdio client, run against an instrumented server, and a report card.

Theory of operation
-------------------
The student's client is a command that takes, after its own options, the server to start::

    python my_client.py --call get_weather '{"city": "Beijing"}' --timeout 2 -- SERVER COMMAND...

:func:`client` runs it four times, each time handing it the recorder (recorder.py) wrapped around the
weather server, and reads the frames the recorder wrote down:

    plain    a well-behaved server that logs before each answer      → lines 1-12
    future   it answers initialize with a revision nobody speaks      → version-mismatch
    noisy    it writes 256 KiB to stderr before answering             → stderr
    silent   it never answers tools/call                              → timeout, cancel

The lines judge what the client *sent*, and when: the order of the handshake (2025-11-25 "lifecycle"),
its ids (JSON-RPC 2.0 §4: unique, never null in MCP), what it does when the version is wrong (it
should disconnect), whether it drains stderr, gives up on a silent request and says so
(``notifications/cancelled``), and how it shuts down (stdio: close stdin, wait, then signal).
Whether the client waited for its server, the recorder itself tells: it notes whether the client
was still its parent when it exited.

The client's stdout and stderr are pipes the grader reads as they come, keeping the first and the
last 64 KiB of each (output.py): a client may print without end, and the card says how much was
cut. A run ends when the client exits, not when its pipes do (a server that inherited them would
keep them open); then the recorder gets a moment to finish its log, and the client's process tree
is ended (keeper.py): nothing a run started outlives it.

A busy machine is no verdict. A run's bound (``3 × timeout + 5`` s) counts from the last line that
went between the client and its server, not from its start: a session that keeps moving is never
stopped, and until its first line the client is still starting, and gets :data:`START` seconds. When
a run ended while our server had not yet answered a request the client sent
(``client_checks.waiting_on``: the machine was too slow for the client's ``--timeout``, which is no
fault of the client), the scenario is run again with twice the timeout, up to :data:`RERUNS` times
and never past twice the longest timeout asked, and judged on the first run that was not cut short.
On a quiet machine that is the first run, and the card is what it always was; a run still cut short
after that leaves its lines "not judged in time" (client_checks.py). A rerun is one of the report's
``notes``, beside the card and not in it, so a stored card reads the same on a busy machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from mcplab.grade import client_checks
from mcplab.grade.keeper import Tree
from mcplab.grade.output import Output
from mcplab.grade.report import Report
from mcplab.grade.server_checks import command
from mcplab.i18n import _
from mcplab.trace import Trace

SCENARIOS = {"plain": "none", "future": "future-version", "noisy": "noisy", "silent": "silent"}
CALL = ("get_weather", {"city": "Beijing"})
SETTLE = 10.0  # seconds the server side gets to finish its log once the client has exited (it needs
               # well under one: the recorder notes the server's exit, lingers half a second, and leaves)
START = 30.0   # seconds a client may take to send its first line (an import with no bytecode cache, under load)
RERUNS = 2     # runs of a scenario after the first, each with twice the --timeout, while our server was too slow
LOOK = 0.5     # seconds between looks at the recorder's log for the client's first line
PATIENT = 10.0  # the client's --timeout in every run but the silent one: a slow machine must not fail a good
                # client (a client that never drains stderr gives up after it, in the noisy run)


@dataclass(frozen=True)
class Run:
    """One run of the client: how it ended, what it printed, and the recorder's frames."""
    scenario: str
    returncode: int | None
    stopped: bool          # still running at the bound: the grader ended it
    stdout: str
    stderr: str
    trace: Trace           # the frames once the server side had finished
    cut: dict[str, int] = field(default_factory=dict)  # a stream that was cut → the bytes it wrote in all
    timeout: float = 0.0   # the client's --timeout in this run
    start: float = 0.0     # the seconds it had to send its first line
    slow: tuple[tuple[float, str], ...] = ()  # the runs before it, cut short: (their --timeout, the method
                                              # our server had not answered)

    def stderr_tail(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""


def weather() -> list[str]:
    """The bundled weather server, run by this interpreter."""
    return [sys.executable, str(Path(__file__).resolve().parents[2] / "servers" / "weather.py")]


def load(path: Path) -> Trace:
    """The recorder's frames so far (a line still being written is left for later)."""
    if not path.exists():
        return Trace()
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    whole = []
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            continue
        whole.append(line)
    return Trace.from_jsonl(whole)


def run(argv: Sequence[str], scenario: str, *, server: Sequence[str], timeout: float,
        call: tuple[str, dict[str, Any]], cwd: str | None = None) -> Run:
    """Run the client once against the recorder in ``scenario``."""
    from mcplab.grade.recorder import NOTE_EXIT

    bound = 3 * timeout + 5  # from the last line either way; before the first, START
    start = max(START, bound)
    with tempfile.TemporaryDirectory(prefix="mcplab-grade-") as folder:
        log = Path(folder, "frames.jsonl")
        recorder = [sys.executable, "-m", "mcplab.grade.recorder", "--log", str(log), "--fault", SCENARIOS[scenario],
                    "--", *server]
        full = [*argv, "--call", call[0], json.dumps(call[1], ensure_ascii=False), "--timeout", f"{timeout:g}",
                "--", *recorder]
        tree = Tree(full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
        output = Output(tree)
        try:
            stopped = not _wait(tree, output, log, start, bound)
            code = tree.returncode
            # The client has gone; the recorder still writes its last notes once it sees the server exit.
            settle = time.monotonic() + SETTLE
            while not stopped and log.exists() and not _noted(load(log), NOTE_EXIT) and time.monotonic() < settle:
                output.read_for(0.02)  # its pipes drained meanwhile: whoever holds them must not block on them
        finally:
            tree.end()  # whatever the client left behind, wherever it went
            output.close()
        kept = output.kept
        return Run(scenario, None if stopped else code, stopped, kept["stdout"].text(), kept["stderr"].text(),
                   load(log), {name: k.total for name, k in kept.items() if k.cut}, timeout, start)


def _wait(tree: Tree, output: Output, log: Path, start: float, bound: float) -> bool:
    """Until the client exits (True), or until nothing has crossed between it and our server for ``bound``
    seconds (``start`` seconds while nothing has yet): False. A session that moves, however slowly on a
    busy machine, is not stopped; one that stands still is, whatever the machine."""
    def exited() -> bool:
        return tree.poll() is not None

    seen, deadline = 0, time.monotonic() + start
    while True:
        # A look at the log every half second: the recorder writes it, and writing a file wakes nobody.
        if output.read_until(exited, min(deadline, time.monotonic() + LOOK)):
            return True
        crossed = _crossed(load(log))
        if crossed > seen:
            seen, deadline = crossed, time.monotonic() + bound
        elif time.monotonic() >= deadline:
            return False


def _crossed(trace: Trace) -> int:
    """The lines that went between the client and our server, either way."""
    return sum(f.channel == "stdio" for f in trace.frames)


def scenario_runs(argv: Sequence[str], scenario: str, *, server: Sequence[str], timeout: float, longest: float,
                  call: tuple[str, dict[str, Any]], cwd: str | None = None) -> Run:
    """The run of ``scenario`` to judge: the first, or a rerun with twice the timeout if our server was too slow."""
    done = run(argv, scenario, server=server, timeout=timeout, call=call, cwd=cwd)
    slow: list[tuple[float, str]] = []
    while (method := client_checks.waiting_on(done)) and len(slow) < RERUNS and 2 * done.timeout <= longest:
        slow.append((done.timeout, method))
        done = run(argv, scenario, server=server, timeout=2 * done.timeout, call=call, cwd=cwd)
    return replace(done, slow=tuple(slow))


def _noted(trace: Trace, text: str) -> bool:
    return any(f.channel == "note" and f.raw.startswith(text) for f in trace.frames)


def client(target: str | Path | Sequence[str], *, server: Sequence[str] | None = None, timeout: float = 3.0,
           patience: float = PATIENT, call: tuple[str, dict[str, Any]] = CALL, cwd: str | None = None) -> Report:
    """Grade the stdio client at ``target`` (a ``.py`` file or a command); the report card.

    ``server`` is the command the recorder wraps (the weather server by default) and ``call`` the
    tool the client is asked to call on it. ``timeout`` is the ``--timeout`` the client gets in the
    silent run, where it must give up; the others give it ``patience`` seconds (or ``timeout``, if longer).

    >>> print(grade.client("build/my_client.py"))          # doctest: +SKIP
    """
    argv = command(target)
    wrapped = command(server) if server is not None else weather()
    longest = 2 * max(timeout, patience)  # no rerun gives the client more than this
    # The four runs are independent processes that mostly wait (on timeouts, on a server's exit), so
    # they run side by side in threads: the card takes as long as the slowest run, not the sum.
    with ThreadPoolExecutor(len(SCENARIOS)) as pool:
        futures = {name: pool.submit(scenario_runs, argv, name, server=wrapped, call=call, cwd=cwd, longest=longest,
                                     timeout=timeout if name == "silent" else max(timeout, patience))
                   for name in SCENARIOS}
    runs = {name: future.result() for name, future in futures.items()}
    shown = str(target) if isinstance(target, (str, Path)) else " ".join(map(str, target))
    reruns = tuple(_("the {scenario} run was run again at --timeout {timeout:g} s: at {first:g} s the server had not "
                     "answered {method} in time on this machine", scenario=name, timeout=r.timeout, first=first,
                     method=method)
                   for name, r in runs.items() for first, method in r.slow[:1])
    return Report(_("client {target}", target=shown), tuple(client_checks.lines(runs, timeout)),
                  {name: r.trace for name, r in runs.items()}, notes=reruns)

