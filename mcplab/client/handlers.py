"""What a client does when the server asks or tells it something: the handlers, as one frozen record.

Theory of operation
-------------------
A server talks back in two ways. It *asks* (a legacy server sends ``sampling/createMessage``,
``elicitation/create`` or ``roots/list``; a modern one puts the same questions in an
``input_required`` result, 2026-07-28 "multi round-trip requests"), and it *tells* (notifications:
progress, log lines, list changes). :class:`Handlers` holds one optional callable for each::

    Client(transport, elicitation=ask_the_user)                        # one handler by its name
    Client(transport, handlers=Handlers(elicitation=ask_the_user, on_log=print))

A capability is declared only for a question the client can answer (lifecycle "capability
negotiation"): :meth:`Handlers.answers` is that table, method → handler, and ``input_handler``
replaces it for MRTR when a prompt or a form should answer instead. Sampling, Roots and Logging
are deprecated in 2026-07-28 (SEP-2577, ``versions.DEPRECATED``): they still work, and new servers
should not need them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, Sequence

from mcplab.client.mrtr import InputHandler

__all__ = ["Handlers", "Handler", "Callback", "SAMPLING", "ELICITATION", "ROOTS"]

Callback = Callable[..., Any]
Handler = Callable[[dict], Any]

SAMPLING, ELICITATION, ROOTS = "sampling/createMessage", "elicitation/create", "roots/list"


@dataclass(frozen=True)
class Handlers:
    """The client's answers to a server's questions, and its ears for the server's notifications."""

    sampling: Handler | None = None                         # sampling/createMessage → a model's reply
    elicitation: Handler | None = None                      # elicitation/create → the user's answer
    roots: Sequence[str | dict] | Handler | None = None     # roots/list: URIs, or a function of params
    input_handler: InputHandler | None = None               # MRTR: answers every input request itself
    on_progress: Callback | None = None                     # notifications/progress (any request's)
    on_log: Callback | None = None                          # notifications/message
    on_list_changed: Callback | None = None                 # notifications/*/list_changed, by method
    on_notification: Callback | None = None                 # every notification, after the above

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def answers(self) -> dict[str, Handler]:
        """Method → handler, for each question this client can answer (and so declares)."""
        table: dict[str, Handler] = {}
        if self.sampling is not None:
            table[SAMPLING] = self.sampling
        if self.elicitation is not None:
            table[ELICITATION] = self.elicitation
        if self.roots is not None:
            table[ROOTS] = self.roots if callable(self.roots) else _static_roots(self.roots)
        return table


def _static_roots(roots: Sequence[str | dict]) -> Handler:
    listed = [r if isinstance(r, dict) else {"uri": r} for r in roots]
    return lambda params: {"roots": listed}
