"""Check for lab 12's form: which answers fit the form the booking desk asks its user to fill in.

Theory of operation
-------------------
One table, ``FORM_ANSWERS``: what a user might type into the desk's form (``FORM``, an elicitation's
``requestedSchema``: the one ``mcplab.grade.desk`` asks, which a test keeps equal to this copy, since
an exercise does not import a grader), and whether it fits. A client that accepts a form sends the
answer as ``content``; the spec (2025-11-25 "client/elicitation") has the client check it against the
requested schema first, and the server checks it again (here with jsonschema, mcplab/server/mrtr.py).
The verdicts are those of JSON Schema itself: a boolean is not an integer, a required field may not be
left out, and a field the form did not ask for is allowed, since the schema does not forbid others.
A test keeps the table equal to what jsonschema says.
"""

from __future__ import annotations

from typing import Any

from mcplab.exercises._feedback import Feedback, check, each_case, passed
from mcplab.i18n import N_, Texts, _

__all__ = ["check_form_answers", "FORM", "FORM_ANSWERS", "FORM_VERDICTS"]

FORM = {"type": "object",
        "properties": {"name": {"type": "string", "title": "Name", "minLength": 1},
                       "seats": {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 8}},
        "required": ["name", "seats"]}
FORM_ANSWERS = {
    "a": {"name": "Ada", "seats": 2},
    "b": {"name": "Ada", "seats": "2"},
    "c": {"name": "Ada", "seats": 9},
    "d": {"seats": 2},
    "e": {"name": "Ada", "seats": True},
    "f": {"name": "Ada", "seats": 2, "table": "window"},
    "g": {"name": "", "seats": 2},
}
FORM_VERDICTS = ("fits", "does not fit")
_EXPECTED = {"a": "fits", "b": "does not fit", "c": "does not fit", "d": "does not fit", "e": "does not fit",
             "f": "fits", "g": "does not fit"}
_BECAUSE = Texts({
    "a": "name is a non-empty string and seats an integer from 1 to 8",
    "b": '"2" is a string, and seats must be an integer',
    "c": "seats has maximum 8",
    "d": "name is required",
    "e": "true is a boolean, which JSON Schema never counts as an integer",
    "f": "the form does not say additionalProperties: false, so a field it did not ask for is allowed",
    "g": "name has minLength 1",
})


@check(N_('a dict of answer → "fits" or "does not fit"'), dict)
def check_form_answers(answer: Any) -> Feedback:
    """For each of FORM_ANSWERS: does it fit FORM, the requestedSchema of the desk's question?"""
    hint = _("read FORM as JSON Schema does: required fields present, each value of its type (a boolean is no "
             "integer), minimum, maximum and minLength kept; fields the form did not ask for are allowed")
    if (wrong := each_case(answer, _EXPECTED, FORM_VERDICTS, _BECAUSE, hint)) is not None:
        return wrong
    return passed(_("only what fits the requested schema is sent with action accept"))
