"""My MCP server, part two: yours to write (Lab 11), starting from your Lab 09 server.

    python build/my_server_two.py                       # stdio: it waits for JSON-RPC lines on stdin
    python build/my_server_two.py --http --port 0       # Streamable HTTP on 127.0.0.1 (TODO 5)
    mcplab grade server-two labs/build/my_server_two.py      # the report card; in the lab: grade.server_two(...)

The brief. Your Lab 09 server (imported below: its tools, resources and prompt stay) learns five
things, and the grader calls them by these names, in both eras and over both transports:
  1. crunch(steps: int = 10, label: str = "job"): a long tool of `steps` steps, about 0.05 s each,
     that reports its progress after each step (MCP "basic/utilities/progress");
  2. a cancelled crunch stops: no next step, no response (MCP "basic/utilities/cancellation"), and
     steps_done(label: str = "job") -> int says how many steps the job called `label` did;
  3. a long list: 25 resources or more in resources/list, in pages of 10 at most, with a cursor of
     your own: opaque to the client, and -32602 for a cursor you never issued ("server/utilities/pagination");
  4. sign_off(): asks the user for their name in the middle of the call and answers with a text that
     contains it: elicitation/create in 2025-11-25 ("client/elicitation"), an input_required result
     with a requestState in 2026-07-28 ("basic/patterns/mrtr");
  5. all of it over Streamable HTTP too, in both eras ("basic/transports"): run(server) serves it with --http.
"""

from __future__ import annotations

import base64  # noqa: F401  base64.urlsafe_b64encode(...): one way to make a cursor opaque
import json  # noqa: F401
import secrets  # noqa: F401

import anyio  # noqa: F401  await anyio.sleep(0.05): a step where a cancellation can land

from mcplab import InvalidParams  # noqa: F401  raise InvalidParams("..."): the client gets error -32602
from mcplab.server import Context, ToolError, run  # noqa: F401

from my_server import server  # your Lab 09 server: part two adds to it

# The long job's steps, per label: steps_done reads them (Lab 11 §3 says why a side effect shows it).
DONE: dict[str, int] = {}

# TODO 1 (Lab 11 §2, "basic/utilities/progress"): a tool crunch(ctx: Context, steps: int = 10, label: str = "job"):
#        async, one step at a time (await anyio.sleep(0.05)), DONE[label] = step, then
#        await ctx.report_progress(step, total=steps)
# TODO 2 (Lab 11 §3, "basic/utilities/cancellation"): a tool steps_done(label: str = "job") -> int, and a
#        crunch that stops at its next await when cancelled (never catch the cancellation and carry on)

# TODO 3 (Lab 11 §4, "server/utilities/pagination"): 25 resources or more in resources/list (a resource
#        template with lister=...), and page() below: PAGE_SIZE items a page, an opaque cursor, and
#        raise InvalidParams(...) for a cursor this server never issued
PAGE_SIZE = 10


def page(items: list, cursor: object, what: str) -> tuple[list, str | None]:
    """One page of `items` (a whole tools/list, resources/list ...) from `cursor` on, and the next page's
    cursor (None after the last page)."""
    return items, None  # for now: everything on one page, whatever the cursor says


server.page = page  # the toolkit calls it for every list it answers

# TODO 4 (Lab 11 §5, "client/elicitation", "basic/patterns/mrtr"): a tool sign_off(ctx: Context) that asks
#        answer = await ctx.elicit("...", {"type": "object", "properties": {"name": {"type": "string"}}})
#        and keeps what it worked out before asking in ctx.state (2026-07-28 runs the body again on the retry)

# TODO 5 (Lab 11 §6, "basic/transports"): nothing to write here; start it with --http and try both eras


if __name__ == "__main__":
    run(server)
