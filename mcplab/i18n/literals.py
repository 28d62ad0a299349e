"""The words a lab's code cell shows: its printed literals and its comments, translated without touching the code.

Theory of operation
-------------------
A code cell's ``print("the server is running:", server.running)`` shows English to a Chinese student
although the cell's code is the lab's. The translatable part is the string literal, and only when it
is text a person reads, never a key, a method name, a JSON field or a value a server or a model
receives. The rule, decided on the syntax tree (:mod:`ast`), so the code stays valid:

* a literal that is a positional argument of ``print(...)`` is prose, also as a branch of a
  conditional (``"yes" if ok else "no"``) or of ``or``/``and``, an operand of ``+`` or ``%``, or the
  receiver of ``.format(...)``; a literal nested deeper (``print(lb.block("upstream mcp_servers"))``,
  the arguments of a call, an f-string's placeholders) is data and stays, except a placeholder that
  only pads a text (``f"{'for example':25}"``), whose text and width the translator may change;
* so is the text a widget shows: a ``description=``, ``placeholder=`` or ``tooltip=`` argument of
  ``widgets.X(...)`` (a tool's ``description=`` is wire data);
* and the literals a cell names itself, in its metadata, ``{"mcplab": {"translate": ["foreign Origin"]}}``:
  labels a cell keeps in a table and prints through a variable. A name listed there that the cell
  does not hold is an error (:func:`prose` raises), so the list cannot rot unseen.

A comment is read too (``# the session's stream needs the session``): each comment with a word in
it is a unit, found with :mod:`tokenize`, except a tool's directive (``# type: ignore``, ``# noqa``).

A literal must hold a word to count: two Latin letters outside an identifier (``"isError: "``,
``"tools/call →"`` and ``"LocalProtocolError:"`` are code, not prose). Its unit is the literal *as
written*, prefix and quotes included (``f"{case}: asks for {asked}"``, ``"\\nthe client decides:"``):
the translator writes a literal too, so escapes and placeholders are visible and kept; a comment's
unit is the comment as written, ``#`` included. :func:`problem` holds a translation to that: a comment's
must be one comment, a literal's must parse as one literal of the same kind (plain or f-string)
whose placeholders are exactly the English one's, in any order (a padded text's words and width
aside). :func:`replace` puts the translations in place of the English and leaves every other byte
of the cell as it was.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import Counter
from dataclasses import dataclass

from mcplab.i18n import _

__all__ = ["Literal", "prose", "replace", "problem", "FLAG", "WIDGET_TEXT"]

FLAG = "mcplab-code"  # the catalog flag of a code literal's entry (catalogs.problems checks it with problem())
WIDGET_TEXT = ("description", "placeholder", "tooltip")
WIDGET_MODULES = ("widgets", "ipywidgets")
WORD = re.compile(r"[A-Za-z]{2}")
IDENTIFIER = re.compile(r"[\w-]*[/_.][\w./-]*|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*")  # tools/list, isError
MAGIC = ("%", "!")
DIRECTIVE = re.compile(r"#\s*(?:type:|noqa|pragma|fmt:|pylint:|mypy:|!)")


@dataclass(frozen=True)
class Literal:
    """One prose literal or comment of a cell: its text as written, and where it is (character offsets)."""
    text: str
    start: int
    end: int


def _parse(source: str) -> ast.AST | None:
    """The cell's syntax tree; IPython's magic lines are blanked first, so positions stay the source's."""
    lines = ["" if line.lstrip().startswith(MAGIC) else line for line in source.split("\n")]
    try:
        return compile("\n".join(lines), "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError:
        return None


def _is_string(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _shown(node: ast.AST) -> list[ast.AST]:
    """The literals an expression shows as it is (see the module doc for which)."""
    if _is_string(node):
        return [node]
    if isinstance(node, ast.IfExp):
        return _shown(node.body) + _shown(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [literal for value in node.values for literal in _shown(value)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _shown(node.left) + _shown(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _shown(node.func.value)
    return []


def _widget(call: ast.Call) -> bool:
    """``widgets.Button(...)``, ``ipywidgets.Text(...)``: a widget's text is read (a tool's description is not)."""
    func = call.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in WIDGET_MODULES


def _outside_strings(tree: ast.AST) -> list[ast.AST]:
    """Every node of the tree, string literals included, but nothing inside one (an f-string's
    placeholders are part of its literal, and Python before 3.12 misplaces the nodes in them)."""
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        found.append(node)
        if not _is_string(node):
            stack.extend(ast.iter_child_nodes(node))
    return found


def _offsets(source: str) -> list[int]:
    starts, at = [], 0
    for line in source.split("\n"):
        starts.append(at)
        at += len(line) + 1
    return starts


def _span(source: str, starts: list[int], node: ast.AST) -> tuple[int, int]:
    """Character offsets of a node (ast counts columns in UTF-8 bytes)."""
    def at(line: int, column: int) -> int:
        text = source.split("\n")[line - 1]
        return starts[line - 1] + len(text.encode("utf-8")[:column].decode("utf-8"))
    return at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def prose(source: str, translate: tuple[str, ...] | list[str] = ()) -> list[Literal]:
    """The prose literals and the comments of a cell's ``source``, in order; ``translate``: the cell's own
    list of more literals (see the module doc)."""
    tree = _parse(source)
    if tree is None:
        if translate:
            raise ValueError(_("the cell does not parse, so its literals {listed} cannot be translated",
                               listed=list(translate)))
        return []
    chosen: dict[int, ast.AST] = {}
    nodes = _outside_strings(tree)
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            chosen.update((id(literal), literal) for arg in node.args for literal in _shown(arg))
        elif _widget(node):
            chosen.update((id(literal), literal) for keyword in node.keywords
                          if keyword.arg in WIDGET_TEXT for literal in _shown(keyword.value))
    starts = _offsets(source)
    listed = set(translate)
    if listed:
        for node in filter(_is_string, nodes):
            if source[slice(*_span(source, starts, node))] in listed:
                chosen[id(node)] = node
    found = []
    for node in chosen.values():
        start, end = _span(source, starts, node)
        text = source[start:end]
        if WORD.search(IDENTIFIER.sub(" ", _words(node))):
            found.append(Literal(text, start, end))
    found += _comments(source)
    missing = listed - {literal.text for literal in found}
    if missing:
        raise ValueError(_("the cell's metadata lists {missing} to translate, but it holds no such literal with a "
                           "word in it (write each as the code writes it, quotes included)", missing=sorted(missing)))
    return sorted(found, key=lambda literal: literal.start)


def _text_placeholder(part: ast.AST) -> bool:
    """``{'for example':25}``: a placeholder that only pads a fixed text is text too."""
    return (isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Constant)
            and isinstance(part.value.value, str))


def _comments(source: str) -> list[Literal]:
    """The cell's comments that hold a word, directives aside (a magic line holds none: it is blanked)."""
    lines = ["" if line.lstrip().startswith(MAGIC) else line for line in source.split("\n")]
    starts = _offsets(source)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(lines)).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    return [Literal(token.string, starts[token.start[0] - 1] + token.start[1],
                    starts[token.start[0] - 1] + token.end[1])
            for token in tokens if token.type == tokenize.COMMENT
            and WORD.search(token.string) and not DIRECTIVE.match(token.string)]


def _words(node: ast.AST) -> str:
    """The fixed text of a literal: an f-string's parts outside its placeholders, and its padded texts."""
    if isinstance(node, ast.Constant):
        return node.value
    return " ".join(part.value if isinstance(part, ast.Constant) else part.value.value  # type: ignore[attr-defined]
                    for part in node.values if isinstance(part, ast.Constant) or _text_placeholder(part))  # type: ignore[attr-defined]


def replace(source: str, translations: dict[str, str], translate: tuple[str, ...] | list[str] = ()) -> str:
    """``source`` with each prose literal that ``translations`` has (and :func:`problem` accepts) replaced."""
    out, at = [], 0
    for literal in prose(source, translate):
        new = translations.get(literal.text)
        if new is None or problem(literal.text, new):
            continue
        out += [source[at:literal.start], new]
        at = literal.end
    return "".join(out) + source[at:]


def _placeholders(node: ast.AST) -> Counter[str]:
    if isinstance(node, ast.Constant):
        return Counter()
    return Counter(ast.dump(part) if not _text_placeholder(part)
                   else f"text:{part.conversion}"  # type: ignore[attr-defined]
                   for part in node.values if isinstance(part, ast.FormattedValue))  # type: ignore[attr-defined]


def _one_literal(text: str) -> ast.AST | None:
    try:
        tree = ast.parse(f"(\n{text}\n)", mode="eval")
    except SyntaxError:
        return None
    return tree.body if _is_string(tree.body) else None


def problem(english: str, translated: str) -> str | None:
    """Why ``translated`` cannot stand for the literal or comment ``english`` in the code, or None when it can."""
    if english.startswith("#"):
        if not translated.startswith("#") or "\n" in translated or "\r" in translated:
            return _("the translation of a comment must be one comment: a line that starts with #")
        return None
    source, target = _one_literal(english), _one_literal(translated)
    if source is None:
        return _("the English {english} is not one string literal", english=repr(english))
    if target is None:
        return _("the translation is not one string literal: keep the quotes and the prefix of the English and "
                 "escape a quote inside it")
    if type(source) is not type(target):
        return _("the translation must be an f-string exactly when the English is one")
    if _placeholders(source) != _placeholders(target):
        return _("the translation must keep every placeholder in braces of the English exactly as written")
    return None
