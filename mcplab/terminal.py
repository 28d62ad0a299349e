"""What a server wrote, made safe to print on a terminal: escapes, one-line cuts, aligned tables.

Theory of operation
-------------------
A server chooses every name, title, description, result and error message ``mcplab inspect`` and
``mcplab call`` print, and a terminal obeys some characters instead of showing them: ESC and the C1
controls start sequences
that set the window title or clear the screen, a carriage return or a backspace writes over the line,
the bidi controls reorder it, and a lone surrogate cannot even be encoded. So whatever a server
supplied goes through :func:`visible` (a message, the trace), :func:`cut` (one line, one cell) or
:func:`visible_json` (the result ``call`` prints, which stays JSON), which print those characters as
escapes (``\\x1b``, ``\\u202e``) and keep every other character as it is. A long cell is cut to
its column and the table says how much it left out; the cut looks at no more of a cell than it
shows, so a 4 MB description costs what a short one does.

:func:`line` and :func:`message` are the two shapes ``mcplab inspect`` and ``mcplab call`` print a server's
text in: one line cut at a width, or a message with its lines kept, cut after a number of characters.
Both say how much they left out.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from mcplab.i18n import ngettext

__all__ = ["visible", "visible_json", "cut", "line", "message", "table", "text_width", "LINE", "MESSAGE"]

# What a terminal obeys rather than shows: C0 but the newline and the tab, DEL, C1, the bidi
# embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), and the surrogates, which JSON's
# "\ud800" puts in a str and which no encoding writes.
_OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_WORD = re.compile(r"\S+")  # the whitespace str.split() splits at: a run of it reads as one space in a line
LINE = 2_000     # columns of one line a server fills (its instructions, a reason with its words) before the cut
MESSAGE = 4_000  # characters of a server's message (an error, a question) shown before the cut


def _escape(match: re.Match[str]) -> str:
    """An obeyed character as Python writes it in a string: ``\\r``, ``\\x1b``, ``\\u202e``."""
    code = ord(match.group())
    return "\\r" if code == 0x0D else f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` as a terminal should show it: what it would obey is an escape; newlines stay.

    >>> visible("hi\\x1b]0;pwned\\x07")
    'hi\\\\x1b]0;pwned\\\\x07'
    """
    return _OBEYED.sub(_escape, text.replace("\r\n", "\n"))  # a lone \r writes over the line; \r\n ends it


def visible_json(value: Any) -> str:
    """``value`` as indented JSON that a terminal shows as it is, and that still parses to ``value``.

    ``json.dumps`` escapes C0 already; what else a terminal obeys (DEL, C1, bidi, a lone surrogate)
    can only be inside a string, and gets JSON's own escape: ``"\\u202e"``.
    """
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return _OBEYED.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _width(text: str) -> int:
    """Columns a string takes in a terminal: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def text_width(text: str) -> int:
    """Columns a string takes in a terminal: CJK characters take two (a label padded to a column)."""
    return _width(text)


def cut(text: str, limit: int) -> tuple[str, int]:
    """``text`` as one line of at most ``limit`` columns, and how many of its characters were left out.

    Whitespace runs read as one space, controls as escapes (one is never split); a cut line ends in
    "…". The walk stops at the first character that does not fit: what is not shown is not measured.

    >>> cut("get the\\nweather now", 12)
    ('get the wea…', 8)
    """
    pieces: list[str] = []
    width, kept, end = 0, 0, 0  # kept: pieces that fit with room for "…"; end: where the text after them starts
    for word in _WORD.finditer(text):
        for index in range(word.start(), word.end()):
            piece = (" " if pieces and index == word.start() else "") + visible(text[index])
            columns = _width(piece)
            if width + columns > limit:
                return "".join(pieces[:kept]) + "…", len(text) - end
            pieces.append(piece)
            width += columns
            if width <= limit - 1:
                kept, end = len(pieces), index + 1
    return "".join(pieces), 0


def line(text: str, limit: int = LINE) -> str:
    """A server's text as one line, cut at ``limit`` columns with how much was left out."""
    shown, left = cut(text, limit)
    return shown + (" " + ngettext("({n} more character)", "({n} more characters)", left) if left else "")


def message(text: str, limit: int = MESSAGE) -> str:
    """A server's message, its lines kept, escaped, cut after ``limit`` characters."""
    more = "… " + ngettext("({n} more character)", "({n} more characters)", len(text) - limit) \
        if len(text) > limit else ""
    return visible(text[:limit]) + more


def table(rows: list[tuple[str, ...]], limit: int = 60) -> str:
    """Rows of text as aligned columns; the first row is the header; long cells are cut, and a line says so.

    >>> print(table([("name", "description"), ("x", "d" * 30)], limit=12))
      name  description
      x     ddddddddddd…
      (cut to 12 columns: 19 characters of 1 cell not shown)
    """
    cells = [[cut(str(cell), limit) for cell in row] for row in rows]
    widths = [[_width(shown) for shown, _ in row] for row in cells]
    columns = [max(row[i] for row in widths) for i in range(len(rows[0]))]
    lines = ["  " + "  ".join(shown + " " * (column - width)
                              for (shown, _), width, column in zip(row, row_widths, columns)).rstrip()
             for row, row_widths in zip(cells, widths)]
    left = [count for row in cells for _, count in row if count]
    if left:
        lines.append("  " + ngettext("(cut to {limit} columns: {chars} characters of {n} cell not shown)",
                                     "(cut to {limit} columns: {chars} characters of {n} cells not shown)",
                                     len(left), limit=limit, chars=sum(left)))
    return "\n".join(lines)
