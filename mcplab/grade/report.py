"""The report card a grader prints: one line per check, and for a failed one what to do about it.

Theory of operation
-------------------
A grader runs a student's program, watches the wire, and turns what it saw into :class:`Line` s.
Each line has one of three marks::

    ✓ pass      the behaviour was seen
    ✗ fail      it was not: the line says what was expected, what came instead, and where to look
                (a section of the specification, a section of a lab)
    – skip      it could not be judged: something outside the student's code is missing (the official
                schemas), or a line it depends on already failed (no tool was called, so no result
                could be printed), or the card's time ran out first ("not judged in time")

A :class:`Report` fails when any line fails; ``mcplab grade`` then exits with status 1. Skips never fail
a card. The text has no times, ports or machine paths, so a notebook can store it: the same program
gets the same card on every machine. Only the schema line differs, where the official schemas are
missing, and it says so in one line; and a card on which a deadline fired says so: each such line
is "not judged in time" with the sentence of what ran out and what to do (a longer ``--timeout``,
less work on the machine), and the verdict counts those lines apart from the rest (how far a slow
program got depends on the machine; the deadline a line names does not).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any, Mapping

from mcplab.i18n import _, ngettext

PASS, FAIL, SKIP = "pass", "fail", "skip"
MARKS = {PASS: "✓", FAIL: "✗", SKIP: "–"}
SPEC = "https://modelcontextprotocol.io/specification"
JSONRPC_ERRORS = "https://www.jsonrpc.org/specification#error_object"
GOT_WIDTH = 240  # characters of an observed frame quoted in a "got" line


def spec(version: str, section: str) -> str:
    """A link to one section of the specification: ``spec("2025-11-25", "server/tools#error-handling")``."""
    return f"{SPEC}/{version}/{section}"


def quote(text: str, width: int = GOT_WIDTH) -> str:
    """``text`` on one line, cut to ``width`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class Line:
    """One check's outcome. ``check`` is a stable name (tests and notebooks look lines up by it)."""
    check: str
    title: str
    status: str
    expected: str = ""
    got: str = ""
    where: tuple[str, ...] = ()
    note: str = ""  # a pass's detail, or why a line was skipped
    late: bool = False  # a skip because a deadline fired first: the verdict counts these apart

    @property
    def mark(self) -> str:
        return MARKS[self.status]

    def text(self) -> str:
        head = f"  {self.mark} {self.title}" + (f" ({self.note})" if self.note else "")
        if self.status != FAIL:
            return head
        rows = [(_("expected"), self.expected), (_("got"), self.got)] + [
            (_("look at") if i == 0 else "", _(w)) for i, w in enumerate(self.where)]  # _(w): a marked constant
        return "\n".join([head] + [f"      {_padded(label, 9)} {value}" for label, value in rows if value])


def _padded(label: str, columns: int) -> str:
    """``label`` padded to ``columns`` terminal columns (a Chinese character takes two)."""
    width = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in label)
    return label + " " * max(columns - width, 0)


def passed(check: str, title: str, note: str = "") -> Line:
    return Line(check, title, PASS, note=note)


def failed(check: str, title: str, expected: str, got: str, *where: str) -> Line:
    return Line(check, title, FAIL, expected, got, tuple(where))


def skipped(check: str, title: str, why: str) -> Line:
    return Line(check, title, SKIP, note=_("not checked: {why}", why=why))


def late(check: str, title: str, why: str) -> Line:
    """A check a deadline fired before: a skip of its own kind, never the student's failure."""
    return Line(check, title, SKIP, note=_("not judged in time: {why}", why=why), late=True)


@dataclass(frozen=True)
class Report:
    """A report card: ``ok`` when no line failed; ``str(report)`` is the card; traces for a closer look.

    >>> card = grade.server("build/my_server.py"); card.ok, card.exit_code
    (False, 1)
    """
    title: str
    lines: tuple[Line, ...]
    traces: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    remarks: tuple[str, ...] = ()  # sentences about the whole card, printed above the verdict
    notes: tuple[str, ...] = ()    # what this machine made the grader do (a run again with a longer --timeout):
                                   # not in the card's text, which must read the same on every machine

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def failed(self) -> list[Line]:
        return [line for line in self.lines if line.status == FAIL]

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def line(self, check: str) -> Line:
        """The line of one check, by its stable name."""
        for line in self.lines:
            if line.check == check:
                return line
        raise KeyError(f"no check {check!r} on this card; it has {', '.join(l.check for l in self.lines)}")

    @property
    def late(self) -> list[Line]:
        """The lines a deadline fired before (a busy machine): counted apart from passes, failures and skips."""
        return [line for line in self.lines if line.late]

    def text(self) -> str:
        late, total = len(self.late), len(self.lines)
        if self.ok:
            verdict = (ngettext("PASS: no line failed ({n} check, {late} not judged in time)",
                                "PASS: no line failed ({n} checks, {late} not judged in time)", total, late=late)
                       if late else ngettext("PASS: no line failed ({n} check)", "PASS: no line failed ({n} checks)",
                                             total))
        else:
            verdict = (_("FAIL: {failed} of {total} checks failed, {late} not judged in time",
                         failed=len(self.failed), total=total, late=late) if late
                       else _("FAIL: {failed} of {total} checks failed", failed=len(self.failed), total=total))
        return "\n".join([_("Report card · {title}", title=self.title), *(line.text() for line in self.lines),
                          *self.remarks, verdict])

    __str__ = text

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython shows the card, not the fields
        printer.text(self.text())
