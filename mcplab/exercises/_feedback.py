"""The one result type every exercise check returns, and the guard every check runs behind.

A student's answer is hostile input, not only a wrong one: a check is written for the answer's
expected shape, and :func:`check` wraps it so that anything else comes back as feedback too. The
placeholder ``...`` (alone, or filling every slot of the dict or list the lab hands out, or an empty
``def``) is "not answered yet", with no hint: a hint is for a wrong attempt, so a lab's stored output
gives nothing away. A coroutine (a call not awaited), an async function where a function is wanted, an
answer of the wrong type, or an answer that makes the check itself fail, each becomes one sentence
that names what was expected and what came, never a traceback.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from dataclasses import dataclass
from types import FunctionType
from typing import Any, Callable

from mcplab.i18n import N_, _

NOT_ANSWERED = N_("Not answered yet")
COMPARE = N_("the question above the cell shows the shape of the answer: compare yours with it")
LONGEST = 800  # characters of feedback: a sentence, and a piece of the answer it quotes
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # <function f at 0x7f...>: differs on every run


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
    message = ADDRESS.sub("", message)
    if len(message) > LONGEST:  # an answer quoted back whole (100 kB of it) would bury the sentence
        message = message[:LONGEST - 1] + "…"
    return Feedback(False, message, hint)


def unanswered() -> Feedback:
    """Feedback for the placeholder ``...`` a lab leaves for the student to replace: no hint yet."""
    return Feedback(False, _(NOT_ANSWERED) + _(": replace the ... with your answer."))


def _stub(*args: Any) -> None:
    ...


def _documented_stub(*args: Any) -> None:
    """A docstring and nothing else."""


_EMPTY_BODIES = frozenset({_stub.__code__.co_code, _documented_stub.__code__.co_code})


def is_placeholder(answer: Any) -> bool:
    """``...``; a dict, list or tuple whose every slot is still ``...``; a function with an empty body."""
    if answer is ...:
        return True
    if isinstance(answer, dict):
        return bool(answer) and all(value is ... for value in answer.values())
    if isinstance(answer, (list, tuple)):
        return bool(answer) and all(is_placeholder(item) for item in answer)
    if isinstance(answer, FunctionType):  # the same instructions as an empty def, and no value but None
        code = answer.__code__
        return code.co_code in _EMPTY_BODIES and all(const is None or const is answer.__doc__
                                                     for const in code.co_consts)
    return False


def kind(answer: Any) -> str:
    """What came, in a few words: ``None``, ``int 42``, ``an async function``, ``Client``."""
    if answer is None:
        return "None"
    if inspect.iscoroutinefunction(answer):
        return _("an async function")
    name = type(answer).__name__
    if type(answer) in (str, int, float, bytes):
        shown = repr(answer)
        return f"{name} {shown}" if len(shown) <= 40 else name
    return name


def check(expects: str, accepts: type | tuple[type, ...] | None = None, *,
          function: bool = False) -> Callable[[Callable[[Any], Feedback]], Callable[[Any], Feedback]]:
    """Guard a check: ``expects`` (marked with N_) says what it wants, ``accepts`` the types it reads,
    ``function`` that it wants a plain function. See the module doc for what the guard answers."""

    def decorate(run: Callable[[Any], Feedback]) -> Callable[[Any], Feedback]:
        @functools.wraps(run)
        def checked(answer: Any) -> Feedback:
            if is_placeholder(answer):
                return unanswered()
            wanted = _(expects)
            if inspect.iscoroutine(answer):
                answer.close()  # never awaited, and never warned about: the feedback says it
                return failed(_("expected {expects}, got a coroutine: the call was not awaited", expects=wanted),
                              _("write await before the call, then pass what it returns"))
            if function and inspect.iscoroutinefunction(answer):
                return failed(_("expected {expects}, got an async function", expects=wanted),
                              _("write the function with def, not async def: the check calls it directly"))
            if function and (not callable(answer) or isinstance(answer, type)):
                return failed(_("expected {expects}, got {kind}", expects=wanted, kind=kind(answer)), _(COMPARE))
            if accepts is not None and not isinstance(answer, accepts):
                return failed(_("expected {expects}, got {kind}", expects=wanted, kind=kind(answer)), _(COMPARE))
            try:
                return run(answer)
            except Exception as exc:  # the check met an answer it was not written for: say so, never crash
                error = ADDRESS.sub("", f"{type(exc).__name__}: {exc}")[:200]
                return failed(_("expected {expects}; this {kind} could not be read ({error})", expects=wanted,
                                kind=kind(answer), error=error), _(COMPARE))

        return checked

    return decorate


def decoded(answer: Any, *, refused: str, start: str, write: str) -> tuple[Any, Feedback | None]:
    """The JSON-RPC message a student wrote (a dict or JSON text), or the feedback for an answer that is none.

    Each lab words its own hints, marked with ``N_``: ``refused`` (with ``{code}``, ``{name}`` and
    ``{message}``) says who would refuse it, ``start`` where to start again, ``write`` how to write it.
    """
    from mcplab.wire import jsonrpc
    from mcplab.wire.errors import JSONRPCError, error_name

    if isinstance(answer, dict):
        try:
            answer = json.dumps(answer, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            return None, failed(_("the dict cannot be written as JSON: {exc}", exc=exc),
                                _("use only dicts, lists, strings, numbers, True/False and None"))
    if not isinstance(answer, (str, bytes)):
        return None, failed(_("expected a dict or a JSON string, got {kind}", kind=type(answer).__name__), _(write))
    try:
        return jsonrpc.decode(answer), None
    except JSONRPCError as exc:
        return None, failed(_(refused, code=exc.code, name=error_name(exc.code), message=exc.message), _(start))


def each_case(answer: dict, expected: dict[str, str], choices: tuple[str, ...], because: Any,
              hint: str) -> Feedback | None:
    """A dict of case → one of ``choices``, checked case by case against ``expected``; None when all are right.

    The first wrong case is named with ``because[case]``, the rule that decides it.
    """
    if set(answer) != set(expected):
        return failed(_("expected a dict with the keys {keys}", keys=sorted(expected)), hint)
    for key, right in expected.items():
        if answer[key] not in choices:
            return failed(_("{key}: expected one of {choices}, got {answer!r}", key=key, choices=list(choices),
                            answer=answer[key]), hint)
        if answer[key] != right:
            return failed(_("{key}: {expected}, not {answer!r}: {because}", key=key, expected=right,
                            answer=answer[key], because=because[key]), hint)
    return None
