"""The part-two client grader: a student's stdio client, run against the booking desk in both eras.

Theory of operation
-------------------
Lab 12's client takes, besides part one's options, the era to speak and the user's answer to any
form the server shows (a command line has no dialog box)::

    python my_client_two.py --era legacy|modern --answer FORM-JSON --call TOOL ARGS --timeout S -- SERVER...

:func:`client_two` runs it twice per era, side by side, each time handing it the recorder
(recorder.py, in its ``quiet`` mode: every line passes unchanged) wrapped around the booking desk
(desk.py, started in that one era)::

    legacy, modern                  an answer that fits the form      → every line but the schema line
    legacy-misfit, modern-misfit    an answer that does not fit it    → the schema line (and the others
                                                                        about what was sent)

and reads the frames the recorder wrote down. The lines (client_two_checks.py) judge what the client
sent and when: its answers to the desk's ``ping``, ``roots/list`` and form, the pages it asked for,
and in 2026-07-28 its ``_meta``, ``server/discover`` and the ``input_required`` retry.

A run ends when the client exits, and the client's process tree with it (keeper.py). One that sends
nothing for ``3 × timeout + 5`` seconds (:data:`client_runs.START` before its first line) is stopped,
and its card says it was still running: the bound counts from the last line that crossed, so a slow
machine that keeps the session moving is never stopped (the runner of part one's grader, reused).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

from mcplab.grade import client_two_checks
from mcplab.grade.client_runs import SETTLE, START, Run, _noted, _wait, load
from mcplab.grade.keeper import Tree
from mcplab.grade.output import Output
from mcplab.grade.report import Report
from mcplab.grade.server_checks import command
from mcplab.i18n import _

ERAS = ("legacy", "modern")
CALL = ("book_table", {"day": "Friday"})
FITS = {"name": "Ada", "seats": 2}
MISFIT = {"name": "Ada", "seats": "two"}  # seats must be an integer from 1 to 8
PATIENT = 10.0  # the client's --timeout: a slow machine must not fail a good client


def desk(era: str) -> list[str]:
    """The booking desk, in one era, run by this interpreter."""
    return [sys.executable, "-m", "mcplab.grade.desk", "--era", era]


def run(argv: Sequence[str], scenario: str, *, timeout: float, cwd: str | None = None) -> Run:
    """Run the client once against the recorded desk: ``scenario`` is ``ERA`` or ``ERA-misfit``."""
    from mcplab.grade.recorder import NOTE_EXIT

    era, _misfit, misfit = scenario.partition("-")
    bound = 3 * timeout + 5
    start = max(START, bound)
    with tempfile.TemporaryDirectory(prefix="mcplab-grade-") as folder:
        log = Path(folder, "frames.jsonl")
        recorder = [sys.executable, "-m", "mcplab.grade.recorder", "--log", str(log), "--fault", "quiet", "--",
                    *desk(era)]
        full = [*argv, "--era", era, "--answer", json.dumps(MISFIT if misfit else FITS), "--call", CALL[0],
                json.dumps(CALL[1]), "--timeout", f"{timeout:g}", "--", *recorder]
        tree = Tree(full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
        output = Output(tree)
        try:
            stopped = not _wait(tree, output, log, start, bound)
            code = tree.returncode
            settle = time.monotonic() + SETTLE
            while not stopped and log.exists() and not _noted(load(log), NOTE_EXIT) and time.monotonic() < settle:
                output.read_for(0.02)
        finally:
            tree.end()
            output.close()
        kept = output.kept
        return Run(scenario, None if stopped else code, stopped, kept["stdout"].text(), kept["stderr"].text(),
                   load(log), {name: k.total for name, k in kept.items() if k.cut}, timeout, start)


def client_two(target: str | Path | Sequence[str], *, eras: Sequence[str] = ERAS, timeout: float = PATIENT,
               cwd: str | None = None) -> Report:
    """Grade the part-two client at ``target`` (a ``.py`` file or a command) in ``eras``; the report card.

    >>> print(grade.client_two("build/my_client_two.py"))      # doctest: +SKIP
    """
    unknown = [era for era in eras if era not in ERAS]
    if unknown or not eras:
        raise ValueError(f"expected eras among {', '.join(ERAS)}, got {', '.join(unknown) or 'none'}")
    argv = command(target)
    scenarios = [name for era in ERAS if era in eras for name in (era, f"{era}-misfit")]
    # Independent processes that mostly wait: side by side, the card takes as long as the slowest run.
    with ThreadPoolExecutor(len(scenarios)) as pool:
        futures = {name: pool.submit(run, argv, name, timeout=timeout, cwd=cwd) for name in scenarios}
    runs = {name: future.result() for name, future in futures.items()}
    shown = str(target) if isinstance(target, (str, Path)) else " ".join(map(str, target))
    return Report(_("client-two {target}", target=shown), tuple(client_two_checks.lines(runs, FITS)),
                  {name: r.trace for name, r in runs.items()})
