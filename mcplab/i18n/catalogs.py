"""gettext catalogs kept in step with their English source: merge, read, write, count. Authors' tool.

Theory of operation
-------------------
A source (a notebook, the README, the package's code) is cut into :class:`Unit` s: a piece of English
to translate, with a context that says where it is (a notebook cell's id; none for the package's
messages, whose English is their own key). :func:`merge` brings a catalog up to date with the units,
as gettext's ``msgmerge`` does, and with a memory of every translation of the language, so that a
cell moved to another notebook, a notebook renamed or a lab split in two keeps its translations:

    the same English, anywhere in the memory      → the translation, as reviewed (or not) as it was
    changed English: the old entry of the cell,   → the old translation, marked ``fuzzy``, the old
      or the most similar English in the memory     English kept as ``#| msgid`` so the change shows
    English never seen before                     → untranslated (an empty ``msgstr``)

A fuzzy entry is not used (gettext's rule): the built text shows the English until a translator has
read the change, updated the translation and removed the ``fuzzy`` flag. :func:`problems` lists what
is left to do; the tests fail on any of it.

Catalogs are read and written with polib, one entry per unit in source order, no line wrapping and
no dates in the header, so that an unchanged source rewrites a catalog byte for byte.
"""

from __future__ import annotations

import difflib
import os
import string
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import polib

from mcplab.i18n import _, literals

__all__ = ["Unit", "Memory", "merge", "read", "write", "problems", "fields", "content", "HEADER"]

FUZZY = "fuzzy"
BRACE_FORMAT = "python-brace-format"
SIMILAR = 0.75  # difflib ratio above which changed English inherits the old translation, as fuzzy
HEADER = ("Simplified Chinese (zh_CN) for mcplab. Written by hand; kept in step with the English by\n"
          "`mcplab i18n` (make translations). An entry marked fuzzy is not used until it is reviewed.")


@dataclass(frozen=True)
class Unit:
    """One piece of English to translate: ``context`` (a cell id, or None), ``text``, where it is."""
    context: str | None
    text: str
    where: str = ""
    plural: str | None = None        # ngettext's plural English
    flags: tuple[str, ...] = ()


@dataclass
class Memory:
    """Every translation of one language, across its catalogs: English → (translation, fuzzy)."""
    exact: dict[tuple[str, str | None], polib.POEntry] = field(default_factory=dict)

    def learn(self, catalog: polib.POFile) -> None:
        for entry in catalog:
            if entry.obsolete or not _translation(entry):
                continue
            key = (entry.msgid, entry.msgid_plural or None)
            known = self.exact.get(key)
            if known is None or (known.fuzzy and not entry.fuzzy):  # a reviewed one wins
                self.exact[key] = entry

    def similar(self, text: str) -> polib.POEntry | None:
        """The entry whose English is most like ``text`` (ratio ≥ SIMILAR), or None."""
        best, score = None, SIMILAR
        for (english, _plural), entry in self.exact.items():
            matcher = difflib.SequenceMatcher(None, english, text, autojunk=False)
            if matcher.real_quick_ratio() > score and matcher.quick_ratio() > score:
                ratio = matcher.ratio()
                if ratio > score:
                    best, score = entry, ratio
        return best


def _translation(entry: polib.POEntry) -> bool:
    return bool(entry.msgstr or any(entry.msgstr_plural.values()))


def _copy_translation(entry: polib.POEntry, source: polib.POEntry) -> None:
    entry.msgstr = source.msgstr
    if entry.msgid_plural:
        entry.msgstr_plural = dict(source.msgstr_plural) or {0: source.msgstr}


def merge(units: Iterable[Unit], old: polib.POFile | None, memory: Memory) -> polib.POFile:
    """A new catalog for ``units``, carrying over what ``old`` and ``memory`` know (see the module doc)."""
    own: dict[str, list[polib.POEntry]] = {}
    for entry in old or ():
        if not entry.obsolete and entry.msgctxt is not None:
            own.setdefault(entry.msgctxt, []).append(entry)
    catalog = new_catalog()
    seen: set[tuple[str | None, str]] = set()
    for unit in units:
        if (unit.context, unit.text) in seen:  # the same English twice: one entry serves both
            continue
        seen.add((unit.context, unit.text))
        entry = polib.POEntry(msgctxt=unit.context, msgid=unit.text, msgid_plural=unit.plural or "",
                              comment=unit.where, flags=list(unit.flags))
        if unit.plural:
            entry.msgstr_plural = {0: ""}
        same = memory.exact.get((unit.text, unit.plural))
        before = _closest(own.get(unit.context, []), unit.text)
        if same is not None:
            _copy_translation(entry, same)
            if same.fuzzy:
                entry.flags.append(FUZZY)
                entry.previous_msgid = same.previous_msgid
        else:
            earlier = before if before is not None and _translation(before) else memory.similar(unit.text)
            if earlier is not None:
                _copy_translation(entry, earlier)
                entry.flags.append(FUZZY)
                entry.previous_msgid = earlier.previous_msgid if earlier.fuzzy else earlier.msgid
        catalog.append(entry)
    return catalog


def _closest(entries: list[polib.POEntry], text: str) -> polib.POEntry | None:
    """The old entry of the same context that ``text`` replaces: the only one (a cell), or, where a
    context holds several (a code cell's literals), the one whose English is most like ``text``."""
    if len(entries) < 2:
        return entries[0] if entries else None
    return max(entries, key=lambda entry: difflib.SequenceMatcher(None, entry.msgid, text, autojunk=False).ratio())


def new_catalog() -> polib.POFile:
    catalog = polib.POFile(wrapwidth=0)
    catalog.header = HEADER
    catalog.metadata = {"Project-Id-Version": "mcplab", "Language": "zh_CN", "MIME-Version": "1.0",
                        "Content-Type": "text/plain; charset=UTF-8", "Content-Transfer-Encoding": "8bit",
                        "Plural-Forms": "nplurals=1; plural=0;"}
    return catalog


def read(path: Path) -> polib.POFile | None:
    return polib.pofile(str(path), wrapwidth=0) if path.is_file() else None


def write(catalog: polib.POFile, path: Path) -> bool:
    """Write ``catalog`` to ``path`` atomically, only if it changed; True when it did."""
    text = str(catalog) + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    return True


def content(catalog: polib.POFile | None) -> set[tuple]:
    """What a catalog says, without where its entries come from (a line number, a cell's place), which
    moves with every edit of the source: (context, English, plural, translation, fuzzy) per entry."""
    return {(entry.msgctxt, entry.msgid, entry.msgid_plural, entry.msgstr,
             tuple(sorted(entry.msgstr_plural.items())), entry.fuzzy)
            for entry in catalog or () if not entry.obsolete}


def fields(text: str) -> list[str]:
    """The ``{names}`` a ``str.format`` message fills, sorted (``"{n} of {total!r}"`` → n, total)."""
    try:
        return sorted(name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(text)
                      if name is not None)
    except ValueError:
        return ["<unbalanced braces>"]


def problems(catalog: polib.POFile, name: str) -> list[str]:
    """What a translator still has to do in one catalog, one line each (empty: nothing)."""
    found = []
    for entry in catalog:
        if entry.obsolete:
            continue
        where = f"{name}: {entry.msgctxt or entry.comment or entry.msgid[:40]!r}"
        if literals.FLAG in entry.flags:  # a code cell's literals share its id: say which one
            where += f" {entry.msgid[:60]!r}"
        if not _translation(entry):
            found.append(_("{where}: not translated", where=where))
        elif entry.fuzzy:
            found.append(_("{where}: fuzzy (the English changed; review the translation, then drop the flag)",
                           where=where))
        elif literals.FLAG in entry.flags and (why := literals.problem(entry.msgid, entry.msgstr)):
            found.append(f"{where}: {why}")
        elif BRACE_FORMAT in entry.flags:
            translations = [entry.msgstr] if not entry.msgid_plural else list(entry.msgstr_plural.values())
            for translated in translations:
                if fields(translated) != fields(entry.msgid):
                    found.append(_("{where}: the translation fills {theirs}, the English {ours}", where=where,
                                   theirs=fields(translated), ours=fields(entry.msgid)))
    return found
