"""Checks for Lab 11 (build a server, part two): what a server sends next.

Theory of operation
-------------------
``check_server_next`` is a table: for each situation of :data:`SERVER_SITUATIONS`, what the server
sends next, one of :data:`SERVER_MOVES` (wire words, the same in every language). Each expected move
is the one the lab's solution server really makes, and the rule that decides it is the sentence a
wrong answer gets: progress only for a request that carried a ``progressToken`` (basic/utilities/progress),
nothing at all for a cancelled request (basic/utilities/cancellation), -32602 for a cursor the server
never issued (server/utilities/pagination), and a question asked the way the request's revision asks
it (client/elicitation; 2026-07-28, basic/patterns/mrtr).
"""

from __future__ import annotations

from typing import Any

from mcplab.exercises._feedback import Feedback, check, each_case, passed
from mcplab.i18n import N_, Texts, _

__all__ = ["check_server_next", "SERVER_SITUATIONS", "SERVER_MOVES"]

SERVER_MOVES = ("notifications/progress", "nothing", "-32602", "result", "elicitation/create", "input_required")

SERVER_SITUATIONS = Texts({
    "a": "crunch(steps=3) arrives with _meta.progressToken 7; step 1 is done",
    "b": "crunch(steps=3) arrives with no _meta at all; step 1 is done",
    "c": "notifications/cancelled names the crunch that is on step 2",
    "d": "resources/list arrives with a cursor the server never issued",
    "e": "resources/list arrives with the nextCursor of the page before, unchanged",
    "f": "in a 2025-11-25 session whose client declared elicitation, sign_off reaches ctx.elicit(...)",
    "g": "a 2026-07-28 tools/call sign_off arrives without inputResponses",
})

_NEXT = {"a": "notifications/progress", "b": "nothing", "c": "nothing", "d": "-32602", "e": "result",
         "f": "elicitation/create", "g": "input_required"}

_WHY = Texts({
    "a": "the request carried a progressToken, so each step is a notifications/progress with that token",
    "b": "no progressToken, no progress: the server sends progress only for a request that asked for it",
    "c": "a cancelled request gets no response at all, and its work stops at the next await",
    "d": "a cursor the server did not issue is invalid params: error -32602, not a page",
    "e": "a cursor passed back unchanged gets the next page, a result like any other",
    "f": "in 2025-11-25 the server asks with a request of its own, elicitation/create, on the same connection",
    "g": "a 2026-07-28 server sends no requests: it answers input_required, and the client retries with the answer",
})


@check(N_('a dict of situation → what the server sends next ("notifications/progress", "nothing", "-32602", '
          '"result", "elicitation/create" or "input_required")'), dict)
def check_server_next(answer: Any) -> Feedback:
    """For each of SERVER_SITUATIONS: what the server sends next."""
    hint = _("progress only with a progressToken; nothing at all after a cancellation; -32602 for a cursor "
             "the server never issued; a question as a request in 2025-11-25, as an input_required result in "
             "2026-07-28")
    if (wrong := each_case(answer, _NEXT, SERVER_MOVES, _WHY, hint)) is not None:
        return wrong
    return passed(_("progress when asked, silence after a cancel, -32602 for a stranger's cursor, and each "
                    "era's way of asking"))
