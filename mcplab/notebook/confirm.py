"""An input request answered in the notebook: a form a student clicks, or a callback when nobody does.

Theory of operation
-------------------
A 2026-07-28 server that needs the user answers a request with ``resultType: "input_required"``
and a map of input requests (2026-07-28, MRTR); an ``elicitation/create`` one carries a
``message`` and a ``requestedSchema``. The client's *input handler* turns each into an answer:
``{"action": "accept", "content": {...}}``, ``{"action": "decline"}`` or ``{"action": "cancel"}``
(Client: Elicitation). :class:`ConfirmForm` is that handler as ipywidgets: the message, one field
per property (:func:`mcplab.notebook.inspector.form_for`), Accept and Decline; a click stores the
answer in :attr:`ConfirmForm.answer`. :func:`always_confirm` is the same handler as a plain function,
for when nobody clicks (a test, nbval): accept, every boolean field ticked.

Each button has a method twin (:meth:`ConfirmForm.choose`), so a test drives what a click drives.
The stored output is the same on every run: ``text/plain`` names the message and the fields, never
a widget's model id. ipywidgets is imported on first use.
"""

from __future__ import annotations

import html
from typing import Any, Mapping

from mcplab.i18n import N_, _
from mcplab.notebook.inspector import arguments_from, form_for

__all__ = ["ConfirmForm", "always_confirm", "ACTIONS"]

ACTIONS = ("accept", "decline")   # the buttons; "cancel" is what closing the form without a click means
LABELS = {"accept": N_("Accept"), "decline": N_("Decline")}  # what the buttons say; the actions are wire values


def _params(request: Mapping[str, Any]) -> Mapping[str, Any]:
    params = request.get("params") if isinstance(request, Mapping) else None
    if not isinstance(params, Mapping) or not isinstance(params.get("requestedSchema"), Mapping):
        raise ValueError("expected an elicitation/create input request with params.requestedSchema, "
                         f"got {str(request)[:80]!r}")
    return params


class ConfirmForm:
    """One ``elicitation/create`` input request as a form; Accept or Decline stores the answer."""

    def __init__(self, request: Mapping[str, Any]) -> None:
        import ipywidgets as widgets

        params = _params(request)
        self.message: str = str(params.get("message", ""))
        self.schema: dict[str, Any] = dict(params["requestedSchema"])
        self.fields = form_for(self.schema)
        self.answer: dict[str, Any] | None = None    # None until a button is clicked
        self.status = widgets.Label(_("not answered yet"))
        self.buttons = {action: widgets.Button(description=_(LABELS[action])) for action in ACTIONS}
        for action, button in self.buttons.items():
            button.on_click(lambda _button, action=action: self.choose(action))
        self.widget = widgets.VBox([widgets.HTML(f"<b>{html.escape(self.message)}</b>"),
                                    *self.fields.values(), widgets.HBox(list(self.buttons.values())), self.status])

    def choose(self, action: str) -> dict[str, Any]:
        """What a button does: store the answer (Accept sends the fields' values) and return it."""
        if action not in ACTIONS:
            raise ValueError(f"expected one of {list(ACTIONS)}, got {action!r}")
        answer: dict[str, Any] = {"action": action}
        if action == "accept":
            answer["content"] = arguments_from(self.fields, self.schema)
        self.answer = answer
        self.status.value = _("answered: {action}", action=action)
        return answer

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = f"ConfirmForm: {self.message} [{', '.join(self.fields)}]"  # the same on every run
        return bundle


def always_confirm(request: Mapping[str, Any]) -> dict[str, Any]:
    """The input handler for when nobody clicks: accept, with every boolean field ticked."""
    properties = _params(request)["requestedSchema"].get("properties") or {}
    return {"action": "accept",
            "content": {name: True for name, field in properties.items()
                        if isinstance(field, Mapping) and field.get("type") == "boolean"}}
