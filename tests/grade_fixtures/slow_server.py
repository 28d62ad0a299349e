"""fault_server.py without a fault, but slow: every answer but the opening one waits DELAY seconds, and its
catalogue can be made big (tests/test_redteam_grader.py). Correct in both eras, so any line it fails is
the grader's mistake. (The opening is quick so that a slow start on a loaded machine costs no timeout.)

    python tests/grade_fixtures/slow_server.py DELAY [--tools N] [--variables N] [--fault NAME]

    --tools N       N more tools (extra_1 ... extra_N), each answering like find
    --variables N   its template has N variables (shop://items/{v1}/.../{vN}), and completion/complete
                    offers a value for each: a grader that asks for every one waits N answers
    --fault NAME    fault_server.py's fault of that name (its one broken line)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fault_server as shop  # noqa: E402


def option(name: str, default: int = 0) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


DELAY = float(sys.argv[1])
VARIABLES = option("--variables")
EXTRA = [{"name": f"extra_{n}", "description": "Describes an item of the shop.",
          "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
         for n in range(1, option("--tools") + 1)]

OPENINGS = ("initialize", "server/discover")
plain_answer, plain_capabilities = shop.answer, shop.capabilities


def capabilities() -> dict:
    return {**plain_capabilities(), **({"completions": {}} if VARIABLES else {})}


def answer(method: str, params: dict, era: str, asked: str | None) -> dict:
    if method not in OPENINGS:
        time.sleep(DELAY)
    if VARIABLES and method == "resources/templates/list":
        variables = "/".join(f"{{v{n}}}" for n in range(1, VARIABLES + 1))
        return {"resourceTemplates": [{"uriTemplate": f"shop://items/{variables}", "name": "item"}]}
    if VARIABLES and method == "completion/complete":
        return {"completion": {"values": ["apple"], "hasMore": False}}
    return plain_answer(method, params, era, asked)


shop.answer, shop.capabilities = answer, capabilities
shop.TOOLS = shop.TOOLS + EXTRA

if __name__ == "__main__":
    shop.serve()
