"""The one result type every exercise check returns."""

from __future__ import annotations

from dataclasses import dataclass

from mcplab.i18n import N_, _

NOT_ANSWERED = N_("Not answered yet")


@dataclass(frozen=True)
class Feedback:
    """The outcome of one check: ``ok``, what was found, and a hint when it is not ok.

    ``bool(feedback)`` is ``ok``, so a solution notebook can ``assert check(...)``.
    """

    ok: bool
    message: str
    hint: str = ""

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        mark = "✓" if self.ok else "✗"
        text = f"{mark} {self.message}"
        if self.hint and not self.ok:
            text += "\n  " + _("hint: {hint}", hint=self.hint)
        return text

    __str__ = __repr__

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython shows repr, never the dataclass fields
        printer.text(repr(self))


def passed(message: str) -> Feedback:
    return Feedback(True, message)


def failed(message: str, hint: str = "") -> Feedback:
    return Feedback(False, message, hint)


def unanswered(hint: str) -> Feedback:
    """Feedback for the placeholder ``...`` a lab leaves for the student to replace."""
    return Feedback(False, _(NOT_ANSWERED) + _(": replace the ... with your answer."), hint)
