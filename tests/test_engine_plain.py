"""The stdio engine stays one a student can read in one sitting: small, one idiom, no scheduling tricks.

Lab 02 sends students to these files; what they hold was cut to its plain form once, and later work
(the browser edition's in-memory streams, translated errors) grew them past the mark without a test
saying so. These pin the limits: the three files of the stdio path within 500 lines with their
docstrings, none of the removed event-loop tricks anywhere in the package, and a transport that is
send, receive and close, with no never-wait twins.
"""

from __future__ import annotations

import re
from pathlib import Path

from mcplab.transports.base import Transport

ROOT = Path(__file__).resolve().parents[1]
STDIO_PATH = ("mcplab/transports/stdio.py", "mcplab/pipes.py", "mcplab/server/stdio.py")
MOST_LINES = 500
# A busy wait before sleeping, answers inside the loop's reader callback, coroutines driven by hand, a pool
# of idle worker tasks: each once bought a benchmark row, and none is what a student should have to read.
TRICKS = re.compile(r"\badd_reader\b|\bsched_yield\b|\.send\(None\)|\bIDLE_WORKERS\b|\bREPLY_SPIN\b")


def test_the_stdio_path_fits_in_500_lines():
    lines = {path: len((ROOT / path).read_text(encoding="utf-8").splitlines()) for path in STDIO_PATH}
    assert sum(lines.values()) <= MOST_LINES, f"{sum(lines.values())} lines, expected at most {MOST_LINES}: {lines}"


def test_no_event_loop_tricks_in_the_package():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in sorted((ROOT / "mcplab").rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if TRICKS.search(line)]
    assert not found, "\n".join(found)


def test_a_transport_has_no_never_wait_members():
    assert [name for name in dir(Transport) if "nowait" in name] == []
