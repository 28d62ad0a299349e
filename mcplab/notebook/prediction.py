"""Predict, then run: a question a student answers before a cell runs a live exchange.

Theory of operation
-------------------
A :class:`Prediction` is a question about what the next exchange will bring back, with either a
few choices (radio buttons) or a short value to type (a text box), and a Check button. The course's
predictions live in :mod:`mcplab.notebook.predictions`, one table per lab, and a lab asks one by
its key, right before the cell that runs the exchange::

    notebook.predict("02.downgrade")     # the question; the next cell sends initialize and shows the reply

The right answer is not stored anywhere a glance can find it: a prediction keeps only a digest
(SHA-256 of the prediction's key and the normalised answer, :func:`digest_of`), never the answer,
so neither the notebook's source, its stored outputs nor the widget's state (what the browser
holds) carries it, and every choice looks the same until the student checks. That hides the answer
from a glance, not from a student who hashes every choice on purpose, which is all a prediction
needs. A wrong prediction gets a sentence that points at the frame to look at (``wrong``); a right
one says so (and ``right`` adds why). The student may try again as often as they like.

Every sentence is looked up with :func:`mcplab.i18n._` when the widget is built, so a Chinese lab
asks in Chinese; a choice's English stays its value (what is hashed), its translation is its label.
The stored output is the same on every run: ``text/plain`` is the question and its choices, never a
widget's model id (the widget view's own mimetype, which carries one, is one nbval skips).

The Check button has a method twin, :meth:`Asked.check`, and :meth:`Asked.choose` sets the answer
a click would read, so a test drives exactly what a click drives (``asked.choose(...)``, then
``asked.button.click()`` or ``asked.check()``). ipywidgets is imported on first use.
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass
from typing import Any

from mcplab.i18n import _

__all__ = ["Prediction", "Asked", "normalise", "digest_of"]

DIGEST_PREFIX = "sha256:"
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")  # plain decimals only: no exponent, no "nan"


def normalise(value: object) -> str:
    """What is compared: ``"  -32602 "``, ``"−32602"`` and ``'"-32602"'`` are the same answer, and so
    are ``"10.5"``, ``"10.50"`` and ``"+10.5"`` (a number is compared as a number, written plainly)."""
    text = " ".join(str(value).split()).replace("\u2212", "-")  # a typographic minus is a minus
    text = text.strip("\"'`").strip().casefold()
    return _plain_number(text) if NUMBER.fullmatch(text) else text


def _plain_number(text: str) -> str:
    """A decimal written plainly: 10.50 → 10.5, +010.5 → 10.5, 7. → 7, .5 → 0.5, -0 → 0. Done on the
    digits, not by arithmetic, so a student's million-digit answer is only a long string."""
    sign = "-" if text.startswith("-") else ""
    whole, _dot, fraction = text.lstrip("+-").partition(".")
    plain = (whole.lstrip("0") or "0") + ("." + fraction.rstrip("0") if fraction.rstrip("0") else "")
    return plain if plain == "0" else sign + plain


def digest_of(key: str, answer: object) -> str:
    """The digest a prediction keeps instead of its answer (salted with its key, so equal answers differ)."""
    return DIGEST_PREFIX + hashlib.sha256(f"{key}\n{normalise(answer)}".encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Prediction:
    """One question. ``choices`` empty means a short value to type. Texts are English, marked with ``N_``."""
    key: str                        # "02.downgrade": the lab and a name; it salts the digest
    question: str
    choices: tuple[str, ...]
    digest: str                     # digest_of(key, the right answer): the only trace of it
    wrong: str                      # where to look, when the prediction was wrong
    right: str = ""                 # one more sentence, when it was right

    def __post_init__(self) -> None:
        if not self.digest.startswith(DIGEST_PREFIX):
            raise ValueError(f"prediction {self.key}: expected a digest ({DIGEST_PREFIX}...), got {self.digest[:12]!r}")
        if self.choices and not any(digest_of(self.key, choice) == self.digest for choice in self.choices):
            raise ValueError(f"prediction {self.key}: none of its {len(self.choices)} choices is the right one")

    def is_right(self, answer: object) -> bool:
        return digest_of(self.key, answer) == self.digest


class Asked:
    """A prediction on screen: the question, the choices or a text box, Check, and the feedback."""

    def __init__(self, prediction: Prediction) -> None:
        import ipywidgets as widgets

        self.prediction = prediction
        self.attempts: list[str] = []       # what was checked, in order
        self.right: bool | None = None      # None until checked
        asked = html.escape(_(prediction.question), quote=False)
        question = widgets.HTML(f"<b>{html.escape(_('Predict:'))}</b> {asked}")
        if prediction.choices:
            # (label, value): the browser gets the labels and an index, the English values stay here
            self.answer = widgets.RadioButtons(options=[(_(c), c) for c in prediction.choices], value=None,
                                               layout={"width": "max-content"})
        else:
            self.answer = widgets.Text(placeholder=_("your prediction"), layout={"width": "260px"})
        self.button = widgets.Button(description=_("Check"), button_style="primary")
        self.button.on_click(lambda _button: self.check())
        self.feedback = widgets.HTML("")
        self.widget = widgets.VBox([question, self.answer, widgets.HBox([self.button]), self.feedback])
        # classes a browser test (or a stylesheet) finds them by; the key says nothing of the answer
        self.widget.add_class("mcplab-predict")
        self.widget.add_class("mcplab-predict-" + prediction.key.replace(".", "-"))
        for part, name in ((self.answer, "answer"), (self.button, "check"), (self.feedback, "feedback")):
            part.add_class(f"mcplab-predict-{name}")

    def choose(self, value: str) -> None:
        """Pick a choice (its English or its label) or type a value, as the student would."""
        if self.prediction.choices:
            by_label = {_(choice): choice for choice in self.prediction.choices}
            if value not in self.prediction.choices and value not in by_label:
                raise ValueError(f"expected one of {list(self.prediction.choices)}, got {value!r}")
            self.answer.value = by_label.get(value, value)
        else:
            self.answer.value = str(value)

    def check(self) -> bool | None:
        """What the Check button does: compare the current answer, say right or where to look."""
        value = self.answer.value
        if value is None or not normalise(value):
            self.feedback.value = html.escape(_("Pick one first.") if self.prediction.choices
                                              else _("Type a value first."))
            return None
        self.attempts.append(str(value))
        self.right = self.prediction.is_right(value)
        if self.right:
            text = _("✓ Right.") + (" " + _(self.prediction.right) if self.prediction.right else "")
            # Not "on the wire": some labs (the economics) have none; every lab's next cell has an output.
            text += " " + _("Run the next cell and find it in its output.")
        else:
            text = _("✗ Not this one.") + " " + _(self.prediction.wrong) + " " + _("Then try again.")
        self.feedback.value = html.escape(text, quote=False)
        return self.right

    def text(self) -> str:
        """The question as plain text: what a notebook stores and nbval compares (the same on every run)."""
        lines = [_("Predict:") + " " + _(self.prediction.question)]
        lines += [f"  ( ) {_(choice)}" for choice in self.prediction.choices] or ["  [ " + _("your prediction") + " ]"]
        return "\n".join(lines)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.text()
        return bundle
