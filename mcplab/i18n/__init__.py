"""Languages: the course in English (the source) and in Simplified Chinese, chosen once.

Theory of operation
-------------------
Every sentence mcplab shows a student (exercise feedback and hints, grader report cards, the trace
viewer's and the playground's labels, the economics plots, the terminal tour) is written in English
in the code and wrapped where it is written::

    _("expected a dict, got {kind}", kind=type(answer).__name__)     # looked up, then filled
    ngettext("{n} frame", "{n} frames", len(frames))                 # plural-aware (Chinese has one form)
    HINT = N_("tools are model-controlled ...")                      # marked here, looked up at use: _(HINT)
    SCENARIOS = Texts({"a": "the model decides ...", ...})           # a mapping whose values are looked up
    CHOICES = (Text("the GET stream"), ...)                           # a str that prints in the language
    step = Said("catalogue from the last tools/list: {tools}", tools=Said("{n} tool", "{n} tools", 6))

``_`` looks the English up in the catalog of the current language and fills the named fields
afterwards, so a translation may move them; a message without fields is returned as it is (its
braces are literal). The language is chosen once, in this order: ``--lang`` on any ``mcplab``
command (it sets the next one for the command and everything it starts); the environment variable
``MCPLAB_LANG`` ("en" or "zh"), which :func:`set_language` sets; else the locale, read as POSIX
programs read it (the first of ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set: ``zh_CN.UTF-8``
and every other value starting with ``zh`` is Chinese, anything else English). Each lookup reads
the environment, so no module holds the choice and every process a notebook starts inherits it.

The catalogs are gettext's: ``locale/zh_CN/LC_MESSAGES/mcplab.po`` beside this file is what a
translator edits, ``mcplab.mo`` beside it what the standard library's :mod:`gettext` reads (compiled
by ``mcplab i18n``; a test checks it matches the ``.po``). Both ship in the wheel as package data.
Nothing here is imported by ``import mcplab``; the catalog is read on the first lookup in Chinese.

The labs' prose is not in this catalog: the English notebooks are the source, and their Chinese
lives in one catalog per notebook (:mod:`mcplab.i18n.notebooks`).

Layer: this module (with ``fonts``) is the very bottom: it imports no other part of mcplab, and every
layer, the wire included, may import it to look its sentences up. The authors' tool (``catalogs``,
``documents``, ``messages``, ``notebooks``, ``tool``: ``mcplab i18n``) sits near the top, above
``course``; only the command line imports it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import gettext

__all__ = ["LANGUAGES", "ENV", "language", "locale_language", "set_language", "speaking", "_", "N_", "ngettext",
           "Texts", "Text", "Said", "Joined", "columns", "pad", "work_in"]

ENV = "MCPLAB_LANG"
LOCALE_ENV = ("LC_ALL", "LC_MESSAGES", "LANG")  # POSIX order: the first set one wins
START_ENV = "MCPLAB_NOTEBOOK_DIR"  # where a notebook's kernel started (work_in)
DOMAIN = "mcplab"
# os.path, not pathlib: every layer imports this module, and a stdio server need not pay for pathlib.
LOCALE_DIR = os.path.join(os.path.dirname(os.path.realpath(__file__)), "locale")

# language → (gettext locale, folder of the built labs, name in its own words)
LANGUAGES = {"en": ("en", "", "English"), "zh": ("zh_CN", "zh-CN", "简体中文")}
ALIASES = {"zh-cn": "zh", "zh_cn": "zh", "zh-hans": "zh", "cn": "zh", "chinese": "zh", "en-us": "en",
           "en_us": "en", "english": "en"}


def normalize(code: str) -> str:
    """``"zh-CN"``, ``"zh_CN"``, ``"zh-Hans"`` → ``"zh"``; an unknown code is refused by name."""
    key = str(code).strip().lower()
    key = ALIASES.get(key, key)
    if key not in LANGUAGES:
        raise ValueError(f"unknown language {code!r}; expected one of {', '.join(LANGUAGES)} "
                         f"(zh-CN and zh_CN are zh)")
    return key


def language() -> str:
    """The current language: ``MCPLAB_LANG`` when set (an unknown value is English), else the locale's."""
    chosen = os.environ.get(ENV)
    if not chosen:
        return locale_language()
    try:
        return normalize(chosen)
    except ValueError:
        return "en"


def locale_language() -> str:
    """``"zh"`` when the locale names Chinese (``zh_CN.UTF-8``, ``zh_TW``, ``zh``), else ``"en"``.

    The first of ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set and not empty decides, as in POSIX:
    ``LC_ALL=C`` over ``LANG=zh_CN.UTF-8`` is English.
    """
    for name in LOCALE_ENV:
        value = os.environ.get(name)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def set_language(code: str) -> None:
    """Show feedback, labels and plots in ``code`` from now on, here and in every process started after.

    >>> import mcplab; mcplab.set_language("zh")      # doctest: +SKIP
    """
    os.environ[ENV] = normalize(code)
    if language() == "zh":
        import sys

        if "matplotlib" in sys.modules:  # else the plots configure it when they import it
            from mcplab.i18n.fonts import use_cjk_font

            use_cjk_font()


@contextmanager
def speaking(code: str) -> Iterator[None]:
    """Look messages up in ``code`` inside the block, then in the language before it.

    For text that must be in another language than the student's for a reason, e.g. a plot's labels in
    English where no font can draw Chinese (``mcplab.economics.chart.readable``); not for choosing.
    """
    before = os.environ.get(ENV)
    os.environ[ENV] = normalize(code)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


@cache
def _catalog(code: str) -> gettext.NullTranslations:
    """The compiled catalog of a language (English has none: its messages are the source)."""
    import gettext  # the standard library's; here so that importing this module costs nothing

    locale = LANGUAGES[code][0]
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[locale], fallback=True)


def _(message: str, /, **fields: Any) -> str:
    """``message`` in the current language, with ``fields`` filled in (``str.format``) when given."""
    code = language()
    text = message if code == "en" else _catalog(code).gettext(message)
    return text.format(**fields) if fields else text


def N_(message: str) -> str:
    """Mark a message for the catalog where it is defined; look it up with ``_`` where it is shown."""
    return message


def ngettext(singular: str, plural: str, n: int, /, **fields: Any) -> str:
    """The form of a counted message for ``n`` (Chinese has one), filled with ``n`` and ``fields``."""
    code = language()
    if code == "en":
        text = singular if n == 1 else plural
    else:
        catalog = _catalog(code)
        text = catalog.ngettext(singular, plural, n)
        if text in (singular, plural):  # a pair marked with N_ elsewhere: two plain entries
            text = catalog.gettext(singular if n == 1 else plural)
    return text.format(n=n, **fields)


class Texts(Mapping[str, str]):
    """A read-only mapping of keys to English texts whose values come back in the current language.

    The exercises' scenarios and rules are such tables: the keys are the answers a student types
    (``"a"``, ``"jsonrpc"``), so they stay; the texts are read.
    """

    def __init__(self, texts: Mapping[str, str]) -> None:
        self._texts = dict(texts)

    def __getitem__(self, key: str) -> str:
        return _(self._texts[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def english(self) -> dict[str, str]:
        """The source texts, whatever the language."""
        return dict(self._texts)


class Text(str):
    """A constant whose value (what code compares) is its English, and which prints in the current language.

    ``print(text)``, ``repr(text)`` and ``f"{text}"`` show the translation; ``text == "the English"``
    still holds, so an answer a student picks from a tuple of these is checked as before.
    """

    def __str__(self) -> str:
        return _(str(self[:]))

    def __repr__(self) -> str:
        return repr(self.__str__())

    def __format__(self, spec: str) -> str:
        return format(self.__str__(), spec)


def _english(value: Any) -> Any:
    return str.__str__(value) if isinstance(value, Text) else value


class Said(Text):
    """A message filled in, whose value is its English and which prints in the current language.

    A record that code reads keeps the English (``step.startswith("started again")`` holds in every
    language), and the same object shows in the student's language wherever it is printed or
    formatted. A field that is itself a :class:`Text` goes into the English as its English and into
    the translation as its translation. ``Said(singular, plural, n, **fields)`` is a counted one::

        Said("catalogue from the last tools/list: {tools}", tools=Said("{n} tool", "{n} tools", 6))
    """

    _message: str
    _plural: str | None
    _fields: dict[str, Any]

    def __new__(cls, message: str, plural: str | None = None, n: int | None = None, /, **fields: Any) -> "Said":
        if plural is not None:
            fields = {"n": n, **fields}
        form = plural if plural is not None and n != 1 else message
        english = form.format(**{key: _english(value) for key, value in fields.items()}) if fields else form
        self = str.__new__(cls, english)
        self._message, self._plural, self._fields = message, plural, fields
        return self

    def __str__(self) -> str:
        if self._plural is not None:
            fields = {key: value for key, value in self._fields.items() if key != "n"}
            forms = (self._message, self._plural)  # marked where the Said is made (the catalogs' tool reads it there)
            return ngettext(*forms, self._fields["n"], **fields)
        return _(self._message, **self._fields)


class Joined(Text):
    """``separator.join(parts)`` of :class:`Text` parts: English as its value, printed in the language."""

    _separator: str
    _parts: tuple[Any, ...]

    def __new__(cls, separator: str, parts: Iterable[Any]) -> "Joined":
        parts = tuple(parts)
        self = str.__new__(cls, separator.join(str(_english(part)) for part in parts))
        self._separator, self._parts = separator, parts
        return self

    def __str__(self) -> str:
        return self._separator.join(str(part) for part in self._parts)


def columns(text: str) -> int:
    """How many columns ``text`` takes in a monospaced font: a CJK or full-width character takes two,
    so a table whose cells are Chinese still lines up (``str.ljust`` counts characters)."""
    return sum(2 if "\u2e80" <= char <= "\u9fff" or "\uff00" <= char <= "\uffef" else 1 for char in text)


def pad(text: Any, width: int) -> str:
    """``text`` followed by spaces up to ``width`` columns, as ``f"{text:<{width}}"`` pads it, except that a
    Chinese character counts as the two columns it takes: the rows of a translated table stay in line."""
    text = str(text)
    return text + " " * max(0, width - columns(text))


def work_in(folder: str) -> None:
    """Run this notebook's code in ``folder``, a path from the notebook's own folder.

    A translated lab lives in ``labs/zh-CN/`` but runs its code where the English one runs, so the
    same cells reach ``../servers/`` and ``build/``. The kernel's first folder is remembered, so the
    cell can run again (or the notebook be run twice) without wandering off.
    """
    start = os.environ.setdefault(START_ENV, os.getcwd())
    os.chdir(os.path.join(start, folder))
