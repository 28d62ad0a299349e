"""My MCP server, part two (solved): Lab 09's to-do list, plus a long job, a long list and a question.

    python my_server_two.py                      # stdio: it waits for JSON-RPC lines on stdin
    python my_server_two.py --http --port 0      # Streamable HTTP on 127.0.0.1, both eras
    mcplab grade server-two build/my_server_two.py    # the report card (from labs/solutions/)

The brief (Lab 11), and where this file meets it:
  1. a long tool that reports progress             crunch(steps, label): one notifications/progress a step
  2. that stops when cancelled, and shows it        steps_done(label): the steps a job really did
  3. a long list, in pages, with an opaque cursor   30 notes in resources/list, 10 a page; page() below
  4. a question to the user in the middle of a call sign_off: elicitation/create (2025-11-25), or an
                                                    input_required result with requestState (2026-07-28)
  5. Streamable HTTP in both eras                   run(server): --http serves /mcp, dual-era
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets

import anyio

from mcplab import InvalidParams
from mcplab.server import Context, ToolError, run

from my_server import TASKS, server  # Lab 09's server: its tools, resources and prompt stay

STEP_SECONDS = 0.05  # one step of the long job
MAX_STEPS = 1000
DONE: dict[str, int] = {}  # job label → steps done so far: what a cancelled job leaves behind


# --- 1 and 2: progress, and a job that stops when cancelled ------------------------------------------

@server.tool
async def crunch(ctx: Context, steps: int = 10, label: str = "job") -> str:
    """A long job of `steps` steps; it reports its progress after each step.

    Args:
        steps: How many steps (1 to 1000), each about 0.05 s.
        label: A name for the job; steps_done(label) says how far it got.
    """
    if not 1 <= steps <= MAX_STEPS:
        raise ToolError(f"steps must be between 1 and {MAX_STEPS}, got {steps}")
    DONE[label] = 0
    for step in range(1, steps + 1):
        # The await where a cancellation lands (basic/utilities/cancellation): the toolkit cancels this
        # task, anyio raises here, and neither the next step nor a response ever comes.
        await anyio.sleep(STEP_SECONDS)
        DONE[label] = step
        # Only if the request carried a progressToken; progress increases, total is known here.
        await ctx.report_progress(step, total=steps, message=f"step {step} of {steps}")
    return f"{label}: {steps} steps done"


@server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
def steps_done(label: str = "job") -> int:
    """How many steps the job called `label` has done (0 for a job never started).

    Args:
        label: The label given to crunch.
    """
    return DONE.get(label, 0)


# --- 3: a long list, in pages -----------------------------------------------------------------------

NOTES = {n: f"Note {n}: something worth remembering." for n in range(1, 31)}
PAGE_SIZE = 10


def every_note() -> list[dict]:
    return [{"uri": f"notes://{n}", "name": f"note-{n}", "mimeType": "text/plain"} for n in NOTES]


@server.resource("notes://{number}", name="note", mime_type="text/plain", lister=every_note)
def note(number: str) -> str:
    """One note, by its number."""
    if not number.isdigit() or int(number) not in NOTES:
        raise LookupError(number)
    return NOTES[int(number)]


def page(items: list, cursor: object, what: str) -> tuple[list, str | None]:
    """One page of `items` from `cursor` on, and the cursor of the next page (None after the last).

    The cursor is base64 of {"list": what, "from": offset}: opaque to the client (server/utilities/pagination),
    and a cursor this server did not issue for this list is -32602 Invalid params.
    """
    start = 0
    if cursor is not None:
        try:
            place = json.loads(base64.urlsafe_b64decode(str(cursor).encode()))
            start = place["from"] if place["list"] == what else -1
        except (binascii.Error, ValueError, TypeError, KeyError):
            start = -1
        if not isinstance(start, int) or not 0 < start < len(items):
            raise InvalidParams(f"expected a cursor from an earlier {what} page's nextCursor, got {cursor!r}")
    end = start + PAGE_SIZE
    if end >= len(items):
        return items[start:], None
    return items[start:end], base64.urlsafe_b64encode(json.dumps({"list": what, "from": end}).encode()).decode()


server.page = page  # the toolkit calls it for tools/list, resources/list, prompts/list ...


# --- 4: asking the user in the middle of a call ------------------------------------------------------

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string", "title": "Your name"}}, "required": ["name"]}


@server.tool
async def sign_off(ctx: Context) -> str:
    """Sign off the finished tasks: asks the user for their name, then signs with it."""
    if not ctx.can_ask("elicitation"):
        raise ToolError("sign_off asks its user for a name, and this client cannot ask (no elicitation capability)")
    # Drawn before the question. In 2026-07-28 the retry runs this body again: ctx.state rides in
    # requestState, so the retry finds the same receipt instead of drawing a new one.
    receipt = ctx.state.setdefault("receipt", secrets.token_hex(4))
    answer = await ctx.elicit("Who signs off the finished tasks?", NAME_FORM)
    if answer["action"] != "accept":
        return f"receipt {receipt}: not signed off (the user chose {answer['action']})"
    finished = sum(task["done"] for task in TASKS.values())
    return f"receipt {receipt}: {finished} finished task(s) signed off by {answer['content']['name']}"


if __name__ == "__main__":
    run(server)
