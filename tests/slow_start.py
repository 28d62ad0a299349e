"""A classroom machine in a test: every Python process started from here on is slow to start.

On a busy shared machine (a 2-core box at load 10, a shared environment with no usable bytecode
cache) a Python server takes seconds to import before it reads its first line. ``slow_start``
makes every child Python sleep that long before it runs anything, through a ``sitecustomize``
module placed first on ``PYTHONPATH`` (Python imports it at start-up, before the script). The
process under test is left alone: only the servers a cell or a helper starts are slowed, which
is exactly what a loaded machine does to a lab.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def slow_start(seconds: float, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Python started after this call sleeps ``seconds`` before its first line of code."""
    (folder / "sitecustomize.py").write_text(f"import time\ntime.sleep({seconds!r})\n", encoding="utf-8")
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(folder) + (os.pathsep + path if path else ""))
