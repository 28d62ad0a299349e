"""The server a part-two client is graded against: a booking desk that pages, pings, asks and tests.

    python -m mcplab.grade.desk --era legacy|modern            (stdio; the recorder wraps it)

Theory of operation
-------------------
Lab 12's client must do what a part-one client never had to: read a list that comes in pages, and
answer what the server asks. This server makes it, in a few lines of the toolkit (server/toolkit.py):

* five tools, two a page: ``tools/list`` comes in three pages, each but the last with an opaque
  ``nextCursor`` (2025-11-25 "server/utilities/pagination"; the same in 2026-07-28);
* ``book_table(day)`` asks the user for a name and a number of seats (``ctx.elicit``, form mode). In
  the legacy era that is an ``elicitation/create`` request on the pipe; in 2026-07-28 it is an
  ``input_required`` result, and the body runs again on the client's retry (server/mrtr.py). Before
  asking it writes a note in ``ctx.state``, so the result carries a ``requestState`` the client must
  echo (the toolkit seals it: a changed one is refused with -32602);
* in the legacy era, before asking, it sends the client ``ping`` (2025-11-25 "basic/utilities/ping":
  either side may) and ``roots/list``, a request for a capability no graded client declares: the
  answer it should get is -32601. Both go through the connection itself (``Peer.request``):
  ``ctx.request`` would refuse to send ``roots/list`` to a client that did not declare roots, and
  here it is sent on purpose. 2026-07-28 has no server→client requests at all, so
  the modern era sends neither.

The server judges nothing: the recorder (recorder.py) writes down every frame both ways, and
client_two_checks.py reads them. Whatever the client answers to ``ping`` and ``roots/list``, the tool
goes on, so one wrong answer spoils one line of the card, not the rest of the session.
"""

from __future__ import annotations

import argparse
from typing import Sequence

from mcplab.server import Context, Server, run

TOOLS_PER_PAGE = 2
FORM = {"type": "object",
        "properties": {"name": {"type": "string", "title": "Name", "minLength": 1},
                       "seats": {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 8}},
        "required": ["name", "seats"]}
"""The form ``book_table`` asks the user to fill in (elicitation's ``requestedSchema``)."""
QUESTION = "Who is the table for, and how many seats?"
ASK_TIMEOUT = 60.0  # seconds the client has to answer ping and roots/list: a client that never answers
                    # is seen on the card (no response in the trace); this only lets the tool go on

server = Server("booking-desk", "1.0.0", title="Booking desk (graded)", page_size=TOOLS_PER_PAGE,
                instructions="Books a table. Lists its tools two at a time; asks before it books.")
server.ask_timeout = ASK_TIMEOUT


@server.tool
def opening_hours(day: str) -> str:
    """The hours the restaurant opens on one day.

    Args:
        day: A day of the week, e.g. "Friday".
    """
    return f"{day}: 11:30-14:00 and 17:30-22:00"


@server.tool
def menu(course: str = "main") -> str:
    """Today's dishes for one course.

    Args:
        course: "starter", "main" or "dessert".
    """
    return {"starter": "dumplings", "dessert": "mango pudding"}.get(course, "noodles with greens")


@server.tool
def list_bookings(day: str) -> str:
    """The bookings already made for one day.

    Args:
        day: A day of the week.
    """
    return f"{day}: no bookings yet"


@server.tool
def cancel_booking(reference: str) -> str:
    """Cancel a booking by its reference.

    Args:
        reference: The reference book_table gave.
    """
    return f"{reference}: cancelled"


@server.tool
async def book_table(day: str, ctx: Context) -> str:
    """Book a table for one day: it asks who the table is for and how many seats.

    Args:
        day: A day of the week, e.g. "Friday".
    """
    if ctx.connection.era != "modern":
        await _try(ctx, "ping")
        await _try(ctx, "roots/list")
    ctx.state["day"] = day  # rides in requestState (modern): the retry must bring it back unchanged
    answer = await ctx.elicit(QUESTION, FORM, key="booking")
    if answer.get("action") != "accept":
        return f"no booking for {day}: the user chose {answer.get('action')}"
    form = answer.get("content") or {}
    return f"booked: {form['seats']} seats on {day} for {form['name']}"


async def _try(ctx: Context, method: str) -> None:
    """Send ``method`` to the client on the connection itself and go on, whatever it answers."""
    try:
        await ctx.connection.peer.request(method, related_to=ctx.request_id)
    except Exception:  # an error response is the answer the recorder shows; a timeout, none at all
        pass


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mcplab.grade.desk", description=__doc__.split("\n\n")[0])
    parser.add_argument("--era", choices=("legacy", "modern"), required=True, help="the one era to speak")
    args = parser.parse_args(argv)
    run(server, ["--era", args.era])


if __name__ == "__main__":
    main()
