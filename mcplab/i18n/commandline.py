"""The command line's language: ``--lang`` read before anything is printed, and argparse's own words.

Theory of operation
-------------------
A command's help is built when its parser is built, so the language has to be known first:
:func:`chosen` finds ``--lang CODE`` (or ``--lang=CODE``) in the arguments before argparse reads
them, and the command line sets it with :func:`mcplab.i18n.set_language` for itself and every
process it starts. Without it, ``MCPLAB_LANG`` and then the locale decide (:func:`mcplab.i18n.language`).
``mcplab i18n --lang`` names the catalog an author works on, not the language to speak: it is left alone.

argparse writes some words of its own: ``usage:``, the ``options`` heading, the ``-h`` line and its
errors ("the following arguments are required", "invalid choice" ...). It looks each one up with the
standard library's ``gettext``, through names it imported into its own module; :func:`speak_argparse`
points those two names at this package's catalog, so they come out in the chosen language like every
other sentence of the command. The words are listed here (:data:`ARGPARSE_WORDS`) so that the catalog
extraction finds them; their ``%`` fields are argparse's and are filled by argparse after the lookup.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcplab.i18n import N_, _

__all__ = ["chosen", "speak_argparse", "ARGPARSE_WORDS"]

ARGPARSE_WORDS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("the following arguments are required: %s"),
    N_("one of the arguments %s is required"),
    N_("not allowed with argument %s"),
    N_("unrecognized arguments: %s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("expected %s argument"),
    N_("expected %s arguments"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("ignored explicit argument %r"),
    N_("unknown parser %(parser_name)r (choices: %(choices)s)"),
)


def chosen(argv: Sequence[str]) -> str | None:
    """The value of ``--lang`` in ``argv`` (None: not given, or the command is ``i18n``).

    >>> chosen(["inspect", "--server", "weather", "--lang", "zh"])
    'zh'
    """
    words = list(argv)
    if "--" in words:  # what follows goes to another program
        words = words[:words.index("--")]
    command = next((word for word in words if not word.startswith("-")), None)
    if command == "i18n":
        return None
    for i, word in enumerate(words):
        if word == "--lang" and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("--lang="):
            return word.partition("=")[2]
    return None


def _gettext(message: str) -> str:
    return _(message)  # a message without fields comes back as the catalog has it: argparse fills the %s


def _ngettext(singular: str, plural: str, n: int) -> str:
    return _(singular if n == 1 else plural)  # the two forms are two entries (Chinese has one form)


def speak_argparse() -> None:
    """Make argparse look its own words up in mcplab's catalog, in the language of each lookup.

    argparse did ``from gettext import gettext as _, ngettext``: replacing those two names in its
    module is the one way to reach its words without a catalog in the system's gettext domain. Only
    the ``mcplab`` command calls this, in its own process; the language is still read at every lookup.
    """
    import argparse

    argparse._ = _gettext  # type: ignore[attr-defined]
    argparse.ngettext = _ngettext  # type: ignore[attr-defined]
