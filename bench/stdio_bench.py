"""Cold start of the stdio servers, kept for tests/test_server_interop_sdk.py: the measuring now lives in
bench/run.py (``cold_start``) and bench/harness.py; this module only keeps the old names.

    python bench/stdio_bench.py [--starts 30]      # same as: python bench/run.py --only cold_start
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # harness.py and run.py, when loaded by path

from harness import FLOOR, SDK_WEATHER, WEATHER  # noqa: E402
from run import cold_start  # noqa: E402

SERVERS = {"mcplab": WEATHER, "official SDK (MCPServer)": SDK_WEATHER, "raw JSON echo": FLOOR}


def cold_start_ms(argv: list[str], env: dict) -> float:
    """Spawn ``argv`` → initialize → tools/list answered, in milliseconds."""
    return cold_start(argv, env)[0]


if __name__ == "__main__":
    from run import main

    main(["--only", "cold_start", *sys.argv[1:]])
