"""The HTTP client grader: a student's Streamable HTTP client, run against a recording proxy, and a card.

Theory of operation
-------------------
The student's client is a command that takes the server's URL and an era::

    python my_http_client.py URL --era legacy|modern

:func:`http_client` starts the recorder (http_recorder.py) the way the course starts every HTTP
server (``launch``: 127.0.0.1, private to the student, gone with its parent), which starts the bundled
weather server behind it. Then it runs the client four times, side by side, each on an endpoint of
its own (two per era asked for)::

    legacy, modern            every answer a JSON body      → every line but the stream's
    legacy-sse, modern-sse    every answer an event stream  → the stream line (and the headers lines)

and reads the recorder's log: every HTTP request each run made, with its headers and body, and the
answer it got. The lines (http_client_checks.py, and http_modern_checks.py for 2026-07-28 alone, in
the order :data:`CHECKS` gives) judge what the client sent; its stdout shows whether it read each
answer to the response (it prints the tool's result).

What the card cannot see: whether a client that exits closed its connections first (the system
closes them at the exit either way), so "no request left open" is judged as: it exited by itself,
and in 2026-07-28 it sent POSTs only (no DELETE of a session, no GET stream).

A run ends when the client exits. One that sends nothing for :data:`BOUND` seconds (:data:`START`
before its first request: an import with no bytecode cache, under load) is stopped, with everything it
started (keeper.py); its card says it was still running.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from mcplab.grade import http_client_checks as common, http_modern_checks as modern
from mcplab.grade.keeper import Tree
from mcplab.grade.output import Output
from mcplab.grade.report import Line, Report, skipped
from mcplab.grade.server_checks import command
from mcplab.i18n import _

ERAS = ("legacy", "modern")
START = 30.0  # seconds a client may take to send its first request
BOUND = 30.0  # seconds between two requests before the grader stops a run
LOOK = 0.5    # seconds between looks at the recorder's log
CHECKS: tuple[Callable[[dict], Line | None], ...] = (
    common.exit_line, common.accept_line, common.content_type_line, common.json_answer_line, common.sse_answer_line,
    common.initialized_line, common.session_line, common.protocol_version_line, modern.discover_line,
    modern.meta_line, modern.method_header_line, modern.name_header_line, common.ends_line)


@dataclass(frozen=True)
class Exchange:
    """One HTTP request the client made, and the answer it got (``status`` None: none came)."""
    seq: int
    method: str
    headers: dict[str, str]
    body: str
    status: int | None = None
    answer_headers: dict[str, str] | None = None
    answer: str = ""

    @property
    def message(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def rpc_method(self) -> str:
        message = self.message
        return str(message.get("method")) if isinstance(message, dict) and "method" in message else ""


@dataclass(frozen=True)
class Run:
    """One run of the client: its endpoint, how it ended, what it printed, what it sent."""
    name: str
    era: str
    returncode: int | None
    stopped: bool
    stdout: str
    stderr: str
    exchanges: tuple[Exchange, ...]

    def stderr_tail(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""


def read_log(path: Path) -> list[dict]:
    if not path.exists():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue  # a line still being written
    return entries


def exchanges(entries: list[dict], run: str) -> tuple[Exchange, ...]:
    answers = {e["of"]: e for e in entries if e.get("run") == run and e.get("kind") == "answer"}
    found = []
    for e in entries:
        if e.get("run") == run and e.get("kind") == "request":
            a = answers.get(e["seq"], {})
            found.append(Exchange(e["seq"], e["method"], e["headers"], e["body"], a.get("status"), a.get("headers"),
                                  a.get("body", "")))
    return tuple(found)


def run(argv: Sequence[str], name: str, url: str, log: Path, cwd: str | None) -> Run:
    """Run the client once on ``url`` until it exits or stands still."""
    era = name.split("-")[0]
    tree = Tree([*argv, url, "--era", era], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=cwd)
    output = Output(tree)
    try:
        seen, deadline = 0, time.monotonic() + START
        while True:
            if output.read_until(lambda: tree.poll() is not None, min(deadline, time.monotonic() + LOOK)):
                stopped = False
                break
            sent = sum(e.get("run") == name and e.get("kind") == "request" for e in read_log(log))
            if sent > seen:
                seen, deadline = sent, time.monotonic() + BOUND
            elif time.monotonic() >= deadline:
                stopped = True
                break
        code = tree.returncode
    finally:
        tree.end()
        output.close()
    kept = output.kept
    return Run(name, era, None if stopped else code, stopped, kept["stdout"].text(), kept["stderr"].text(), ())


def http_client(target: str | Path | Sequence[str], *, eras: Sequence[str] = ERAS, cwd: str | None = None) -> Report:
    """Grade the Streamable HTTP client at ``target`` (a ``.py`` file or a command) in ``eras``; the card.

    >>> print(grade.http_client("build/my_http_client.py"))          # doctest: +SKIP
    """
    from mcplab.server.streamable_http.process import launch

    argv = command(target)
    unknown = [e for e in eras if e not in ERAS]
    if unknown or not eras:
        raise ValueError(f"expected eras among {', '.join(ERAS)}, got {', '.join(eras) or 'none'}")
    names = [name for era in eras for name in (era, f"{era}-sse")]
    with tempfile.TemporaryDirectory(prefix="mcplab-grade-http-") as folder:
        log = Path(folder, "exchanges.jsonl")
        with launch([sys.executable, "-m", "mcplab.grade.http_recorder", "--log", str(log)]) as recorder:
            base = recorder.url.rsplit("/mcp", 1)[0]
            # The runs are independent processes that mostly wait on the network: side by side, the card
            # takes as long as the slowest run, not the sum.
            with ThreadPoolExecutor(len(names)) as pool:
                futures = {name: pool.submit(run, argv, name, f"{base}/{name}/mcp", log, cwd) for name in names}
            runs = {name: future.result() for name, future in futures.items()}
        entries = read_log(log)
    runs = {name: Run(r.name, r.era, r.returncode, r.stopped, r.stdout, r.stderr, exchanges(entries, name))
            for name, r in runs.items()}
    shown = str(target) if isinstance(target, (str, Path)) else " ".join(map(str, target))
    return Report(f"http-client {shown}", tuple(lines(runs)))


def lines(runs: dict) -> list[Line]:
    """Every line of the card, in order; the lines of an era that was not graded are left out.

    A client that sent nothing in any run (it crashed first, or a TODO stopped it) leaves nothing to
    judge: every line but the first, which says how it ended, is skipped rather than passed.
    """
    found = [line for check in CHECKS if (line := check(runs)) is not None]
    if any(run.exchanges for run in runs.values()):
        return found
    return [line if line.check == "exit" else skipped(line.check, line.title, _("the client sent nothing; see the "
                                                                                "first line")) for line in found]
