"""A correct server or client (fault_server.py, fault_client.py without a fault) that first leaves a process
behind the way careless or daemonizing programs do (tests/test_redteam_grader.py).

    python tests/grade_fixtures/escapes.py server ESCAPE MARKER
    python tests/grade_fixtures/escapes.py client ESCAPE MARKER --call TOOL JSON --timeout S -- SERVER...

Every process this file makes carries MARKER in its argv (a fork keeps it), so a test finds what is left
by reading the command lines of /proc. The one left behind ignores SIGTERM and SIGHUP and sleeps an hour:
only SIGKILL ends it before the test does. The escapes:

    fork-and-exit   the process the grader started forks and exits at once; the copy does the work,
                    then lingers instead of exiting
    group           a child forks a grandchild and exits: the grandchild, in the program's process
                    group but no longer its descendant, lingers
    setsid          the same, and the grandchild calls setsid(): a session and group of its own
    double-fork     the daemon recipe: a child calls setsid() and forks, the child exits, the grandchild
                    lingers
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ESCAPES = ("fork-and-exit", "group", "setsid", "double-fork")
LINGER = 3600.0


def linger() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    time.sleep(LINGER)
    os._exit(0)


def leave_a_grandchild(escape: str) -> None:
    """Fork a child that leaves a lingering grandchild and exits; wait for the child only."""
    child = os.fork()
    if child == 0:
        if escape == "double-fork":
            os.setsid()
        if os.fork() == 0:
            if escape == "setsid":
                os.setsid()
            linger()
        os._exit(0)
    os.waitpid(child, 0)


def main(argv: list[str]) -> None:
    role, escape, rest = argv[0], argv[1], argv[3:]  # argv[2] is the marker: only its presence counts
    if escape not in ESCAPES:
        raise SystemExit(f"escapes.py: expected one of {', '.join(ESCAPES)}, got {escape!r}")
    if escape == "fork-and-exit":
        if os.fork() != 0:
            os._exit(0)  # the process the grader started is gone; its copy carries on
    else:
        leave_a_grandchild(escape)
    if role == "server":
        import fault_server

        fault_server.serve()
    else:
        import fault_client

        if escape == "fork-and-exit":
            os._exit = lambda status: (sys.stdout.flush(), linger())  # fault_client ends with os._exit
        fault_client.main(rest)
    if escape == "fork-and-exit":
        linger()


if __name__ == "__main__":
    main(sys.argv[1:])
