"""An errand runner: Lab 11's example server, on mcplab's server toolkit.

    python build/errands.py                      # stdio
    python build/errands.py --http --port 0      # Streamable HTTP on 127.0.0.1, both eras

Three things Lab 09's bookshelf did not do, each with the spec section it follows:
  * run_errand(stops) is long: it reports progress after each stop (basic/utilities/progress), and a
    cancelled run stops at its next await, sending nothing more (basic/utilities/cancellation);
    stops_made() says how far each run got;
  * 40 errands are listed as resources, 10 a page: the toolkit's own cursor (server/utilities/pagination);
  * confirm_errand asks the user in the middle of the call (client/elicitation; in 2026-07-28 the
    question travels as an input_required result, basic/patterns/mrtr).
"""

from __future__ import annotations

import anyio

from mcplab.server import Context, Server, ToolError, run

server = Server("errands", "0.1.0", title="Errand runner", page_size=10,
                instructions="Runs errands: run_errand reports each stop; confirm_errand asks you first.")

ERRANDS = {n: f"errand {n}: pick up parcel {n}" for n in range(1, 41)}
MADE: list[int] = []  # stops made by each run, in order: a cancelled run stays where it stopped


@server.tool
async def run_errand(ctx: Context, stops: int = 5) -> str:
    """Run an errand of `stops` stops, about 0.05 s each, reporting each one.

    Args:
        stops: How many stops (1 to 100).
    """
    if not 1 <= stops <= 100:
        raise ToolError(f"stops must be between 1 and 100, got {stops}")
    run = len(MADE)
    MADE.append(0)
    for stop in range(1, stops + 1):
        await anyio.sleep(0.05)  # where a cancellation lands
        MADE[run] = stop
        await ctx.report_progress(stop, total=stops, message=f"stop {stop} of {stops}")
    return f"errand done: {stops} stops"


@server.tool(annotations={"readOnlyHint": True})
def stops_made() -> list:
    """How many stops each run_errand made, in the order they started."""
    return MADE


@server.resource("errands://{number}", name="errand", mime_type="text/plain",
                 lister=lambda: [{"uri": f"errands://{n}", "name": f"errand-{n}"} for n in ERRANDS])
def errand(number: str) -> str:
    """One errand, by its number."""
    if not number.isdigit() or int(number) not in ERRANDS:
        raise LookupError(number)
    return ERRANDS[int(number)]


@server.tool
async def confirm_errand(ctx: Context, number: int = 1) -> str:
    """Ask the user whether to run errand `number`, and say what they chose.

    Args:
        number: The errand's number.
    """
    answer = await ctx.elicit(f"Run errand {number}?", {
        "type": "object", "properties": {"go": {"type": "boolean", "title": "Go ahead"}}, "required": ["go"]})
    if answer["action"] == "accept" and answer["content"]["go"]:
        return f"errand {number}: confirmed"
    return f"errand {number}: not run ({answer['action']})"


if __name__ == "__main__":
    run(server)
