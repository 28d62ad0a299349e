"""A program that is slow to start, then behaves as another one: a student's server or client on a busy machine.

    python tests/grade_fixtures/slow_start.py SECONDS SCRIPT [ARGUMENTS...]
    python tests/grade_fixtures/slow_start.py forever SCRIPT [ARGUMENTS...]

It sleeps SECONDS before it reads a byte of its stdin or writes one, as a server that imports for a
while does (on a machine under load, with no bytecode cache, importing takes seconds), then runs
SCRIPT as ``__main__`` with the ARGUMENTS. ``forever`` never gets that far: a process that has not
read its stdin when the grader gives up (tests/test_grade_slow.py).
"""

from __future__ import annotations

import os
import runpy
import sys
import time

if __name__ == "__main__":
    delay, script = sys.argv[1], sys.argv[2]
    time.sleep(3600 if delay == "forever" else float(delay))
    sys.argv = [script, *sys.argv[3:]]
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as if SCRIPT had been started itself
    runpy.run_path(script, run_name="__main__")
