"""The package's own messages, found in its source: what ``_``, ``N_``, ``ngettext`` and ``Texts`` wrap.

Theory of operation
-------------------
The source is parsed (:mod:`ast`), never run, and every call of the markers of
:mod:`mcplab.i18n` yields a :class:`~mcplab.i18n.catalogs.Unit` whose English is its own key::

    _("the method is {method!r}", method=...)   one message; named fields make it a format string
    N_("a hint defined once")                  one message, looked up where it is shown
    Text("a constant a notebook prints")       one message, shown in the language when printed
    ngettext("{n} frame", "{n} frames", n)     a singular and a plural
    Said("up for {days}", days=...)            a filled-in message that keeps its English as its value
    Texts({"a": "the model decides ..."})      every string value of the dict

The English must be written out where it is wrapped (a literal, or literals joined by Python's
implicit concatenation): ``_(f"...")`` and ``_(variable)`` cannot be looked up by a translator, so an
f-string or a computed first argument is reported as a problem (a variable is fine when it holds a
message marked with ``N_`` elsewhere: then it is found there, and only a call that wraps neither is
reported).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from mcplab.i18n.catalogs import BRACE_FORMAT, Unit

__all__ = ["extract", "Found"]

MARKERS = {"_", "N_", "ngettext", "Texts", "Text", "Said"}
# A message that fills fields: {name}, {name!r}, {name:>8}; JSON in a hint ({"jsonrpc": ...}) is not.
FIELD = re.compile(r"(?<!\{)\{[A-Za-z_][A-Za-z0-9_]*(![rsa])?(:[^{}]*)?\}(?!\})")


@dataclass(frozen=True)
class Found:
    """What :func:`extract` found: the units, and the calls it could not read (file:line and why)."""
    units: tuple[Unit, ...]
    problems: tuple[str, ...]


def _name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "i18n":
        return func.attr  # i18n.N_("..."), i18n.Texts({...})
    return None


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _flags(text: str, formatted: bool) -> tuple[str, ...]:
    return (BRACE_FORMAT,) if formatted or FIELD.search(text) else ()


def extract(package: Path, root: Path) -> Found:
    """Every marked message of the ``.py`` files under ``package``, in file and line order."""
    units: list[Unit] = []
    problems: list[str] = []
    for path in sorted(package.rglob("*.py")):
        where_file = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=where_file)
        calls = sorted((node for node in ast.walk(tree) if isinstance(node, ast.Call)),
                       key=lambda node: (node.lineno, node.col_offset))
        for call in calls:
            name = _name(call)
            if name not in MARKERS or not call.args:
                continue
            where = f"{where_file}:{call.lineno}"
            first = call.args[0]
            if isinstance(first, ast.Starred):  # ngettext(*FORMS[kind], n): the forms are marked with N_
                continue
            if name == "Texts":
                if not isinstance(first, ast.Dict):
                    problems.append(f"{where}: Texts() takes a dict literal")
                    continue
                for value in first.values:
                    text = _literal(value)
                    if text is None:
                        problems.append(f"{where}: a Texts() value is not a string literal")
                    else:
                        units.append(Unit(None, text, where, flags=_flags(text, False)))
                continue
            text = _literal(first)
            if text is None:
                if isinstance(first, ast.JoinedStr):
                    problems.append(f"{where}: {name}() of an f-string cannot be translated; "
                                    f"write _(\"... {{field}} ...\", field=value)")
                elif name not in ("_", "Said"):  # _(CONSTANT) looks up a message marked with N_ where it was defined
                    problems.append(f"{where}: {name}() of something that is not a string literal")
                continue
            if name == "ngettext" or (name == "Said" and len(call.args) > 1):  # Said(singular, plural, n)
                plural = _literal(call.args[1]) if len(call.args) > 1 else None
                if plural is None:
                    problems.append(f"{where}: ngettext() needs two string literals")
                    continue
                units.append(Unit(None, text, where, plural=plural, flags=(BRACE_FORMAT,)))
            else:
                units.append(Unit(None, text, where, flags=_flags(text, bool(call.keywords))))
    return Found(tuple(units), tuple(problems))
