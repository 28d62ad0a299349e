"""Check for lab 02's cancellation: what each side does with ``notifications/cancelled``, in both eras.

Theory of operation
-------------------
One table, ``AFTER_CANCEL``: a moment in a cancellation's life, and what the side in it does. The
rules come from the cancellation pages of 2025-11-25 (basic/utilities/cancellation) and 2026-07-28
(basic/patterns/cancellation): the receiver SHOULD stop the work and send no response; it MAY ignore a
cancellation for a request it does not know or has already answered (the race the spec asks both sides
to handle gracefully); the sender SHOULD ignore a response that arrives afterwards; ``initialize`` MUST
NOT be cancelled; in 2026-07-28 a server sends ``notifications/cancelled`` only to end a
``subscriptions/listen`` stream, and over Streamable HTTP a client cancels by closing the request's
response stream. Lab 02 shows the first and the third on the wire.
"""

from __future__ import annotations

from typing import Any

from mcplab.exercises._feedback import Feedback, check, each_case, passed
from mcplab.i18n import N_, Texts, _

__all__ = ["check_after_cancel", "AFTER_CANCEL", "CANCEL_ANSWERS"]

AFTER_CANCEL = Texts({
    "a": "a server receives notifications/cancelled for a tools/call it is still running",
    "b": "a server receives notifications/cancelled for a tools/call it answered a moment ago",
    "c": "a server receives notifications/cancelled naming a request id it never saw",
    "d": "a client receives the response to a request it cancelled a moment ago",
    "e": "a legacy client is tired of waiting for the response to its initialize request: notifications/cancelled?",
    "f": "a 2026-07-28 server no longer wants to serve a tools/call: notifications/cancelled to the client?",
    "g": "a 2026-07-28 client over Streamable HTTP gives up on a tools/call whose answer is an event stream",
})
CANCEL_ANSWERS = ("stop, no response", "ignore it", "do not send it", "close the stream")
_EXPECTED = {"a": "stop, no response", "b": "ignore it", "c": "ignore it", "d": "ignore it", "e": "do not send it",
             "f": "do not send it", "g": "close the stream"}
_BECAUSE = Texts({
    "a": "the receiver SHOULD stop the work, free what it held, and send no response for the cancelled request",
    "b": "the notification crossed the response on the wire: the receiver MAY ignore a cancellation for a "
         "request it has already answered",
    "c": "an unknown request id makes the notification invalid, and an invalid cancellation SHOULD be ignored",
    "d": "the sender of a cancellation SHOULD ignore any response to that request that arrives afterwards",
    "e": "the initialize request MUST NOT be cancelled; a client that gives up closes the connection instead",
    "f": "in 2026-07-28 a server sends notifications/cancelled only to end a subscriptions/listen stream",
    "g": "over Streamable HTTP, closing the request's response stream is the cancellation; no notification is "
         "needed",
})


@check(N_('a dict of case → "stop, no response", "ignore it", "do not send it" or "close the stream"'), dict)
def check_after_cancel(answer: Any) -> Feedback:
    """For each of AFTER_CANCEL: what the side in that moment does."""
    hint = _("the receiver of a cancellation stops and stays silent, unless the request is unknown or already "
             "answered; the sender ignores what comes late; initialize is never cancelled; 2026-07-28 lets only "
             "the client cancel, and over HTTP by closing the stream")
    if (wrong := each_case(answer, _EXPECTED, CANCEL_ANSWERS, _BECAUSE, hint)) is not None:
        return wrong
    return passed(_("a cancelled request gets no response, and whatever crosses the cancellation is ignored"))
