"""fault_client.py without a fault that first prints MIB MiB of chatter on one of its streams
(tests/test_redteam_grader.py): the grader must keep a bounded part of it, and say so.

    python tests/grade_fixtures/loud_client.py stdout|stderr|around MIB --call TOOL JSON --timeout S -- SERVER...

``around`` prints MIB MiB on stdout before the session and as much after it, so the tool's result
lands in the middle of its stdout.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fault_client  # noqa: E402

LINE = b"loud client: chatter that nobody asked for, padded to sixty-four bytes ...........\n"[:64]



def chatter(fd: int, mib: int) -> None:
    block = LINE * (1 << 14)  # 1 MiB
    for _ in range(mib):
        view = memoryview(block)
        while view:
            view = view[os.write(fd, view):]


if __name__ == "__main__":
    where, mib = sys.argv[1], int(sys.argv[2])
    chatter(2 if where == "stderr" else 1, mib)
    if where == "around":
        exit_now = os._exit

        def chatter_then_exit(status: int) -> None:  # fault_client ends with os._exit, after its result
            sys.stdout.flush()
            chatter(1, mib)
            exit_now(status)

        os._exit = chatter_then_exit
    fault_client.main(sys.argv[3:])
