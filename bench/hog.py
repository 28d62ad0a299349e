"""A classroom's load, on purpose: busy processes and a cold bytecode cache, for as long as a ``with`` block.

    with hog.loaded() as load:          # twice os.cpu_count() busy loops; children compile every module
        ...                             # run what a student runs
        load.sample()                   # the 1-minute load average now, kept in load.samples

Theory of operation
-------------------
A shared classroom machine is slow in two ways at once: its cores are taken by everyone else's work,
and a hub's shared environment gives no usable bytecode cache, so every Python process a lab starts
compiles its modules first. :func:`loaded` makes both: ``2 × os.cpu_count()`` busy loops at normal
priority, and ``PYTHONDONTWRITEBYTECODE=1`` with ``PYTHONPYCACHEPREFIX`` naming an empty folder in
``os.environ``, which every child process inherits (the prefix hides the ``__pycache__`` folders beside
the sources; the first variable keeps the prefix empty). The process that calls it keeps its own
imports: only what it starts runs cold, as a student's servers and clients do.

The loops are bounded three ways, so none outlives its use: the block's ``finally`` kills them (a
failed assertion, Ctrl-C), each ends by itself after ``limit`` seconds, and each ends as soon as its
parent is gone (a parent killed with SIGKILL runs no ``finally``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Iterator

LIMIT = 300.0  # seconds a loop spins at most, whatever happens to the block that started it
# The loop watches its parent: reparented (the parent died without cleaning up), it stops. The parent's
# pid comes as an argument: read in the loop, it could already be init's, on a machine slow to start Python.
LOOP = ("import os, sys, time\n"
        "parent, end = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])\n"
        "while os.getppid() == parent and time.monotonic() < end:\n"
        "    pass\n")
COLD = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")


@dataclass
class Load:
    """The running hog: its processes, and the load averages sampled while it ran."""
    processes: list[subprocess.Popen] = field(default_factory=list)
    samples: list[float] = field(default_factory=list)

    def sample(self) -> float:
        """The 1-minute load average now; kept in ``samples``."""
        self.samples.append(os.getloadavg()[0])
        return self.samples[-1]

    @property
    def spinning(self) -> int:
        """How many loops are still running."""
        return sum(p.poll() is None for p in self.processes)


def busy_count() -> int:
    """Twice the cores: a machine where each core has a second taker, as in a busy classroom."""
    return 2 * (os.cpu_count() or 1)


@contextlib.contextmanager
def cold_bytecode() -> Iterator[str]:
    """Every child started inside the block compiles its modules (no cache read, none written)."""
    saved = {name: os.environ.get(name) for name in COLD}
    with tempfile.TemporaryDirectory(prefix="no-pycache-") as empty:
        os.environ.update({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": empty})
        try:
            yield empty
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


@contextlib.contextmanager
def loaded(count: int | None = None, *, limit: float = LIMIT) -> Iterator[Load]:
    """``count`` busy loops (default :func:`busy_count`) and a cold bytecode cache, until the block ends."""
    load = Load()
    try:
        with cold_bytecode():
            for _ in range(busy_count() if count is None else count):
                load.processes.append(subprocess.Popen(
                    [sys.executable, "-c", LOOP, str(os.getpid()), str(limit)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            load.sample()
            yield load
            load.sample()
    finally:
        for process in load.processes:
            process.kill()
        for process in load.processes:
            process.wait()
