"""A markdown document in another language, block by block: the README and ``README.zh-CN.md``.

Theory of operation
-------------------
A document is cut into blocks: a fenced code block whole (blank lines inside included), otherwise
runs of lines between blank lines (a paragraph, a heading, a table, a list). Each block is one
catalog entry whose English is its own key, so a block that moves keeps its translation and a
changed block comes back fuzzy with its old translation (:mod:`mcplab.i18n.catalogs`). The built
document is the blocks in the source's order, each replaced by its reviewed translation (the
English where there is none), joined by one blank line; a header comment says it is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcplab.i18n import LANGUAGES
from mcplab.i18n.catalogs import Unit

__all__ = ["DOCUMENTS", "present", "blocks", "units", "build", "catalog_path", "built_path"]

DOCUMENTS = ("README.md",)


def present(root: Path) -> list[str]:
    """The documents of :data:`DOCUMENTS` that ``root`` has."""
    return [name for name in DOCUMENTS if (root / name).is_file()]


def blocks(text: str) -> list[str]:
    """The document's blocks, in order: fenced code whole, else the lines between blank lines."""
    found: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if fence is None and stripped.startswith(("```", "~~~")):
            if current:
                found.append("\n".join(current))
                current = []
            fence = stripped[:3]
            current.append(line)
            continue
        if fence is not None:
            current.append(line)
            if stripped.startswith(fence) and len(current) > 1:
                found.append("\n".join(current))
                current, fence = [], None
            continue
        if not stripped:
            if current:
                found.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        found.append("\n".join(current))
    return found


def units(root: Path, name: str) -> list[Unit]:
    return [Unit(None, block, f"{name} · block {index}") for index, block in
            enumerate(blocks((root / name).read_text(encoding="utf-8")))]


def catalog_path(root: Path, name: str, code: str) -> Path:
    return root / "translations" / LANGUAGES[code][0] / Path(name).with_suffix(".po").name


def built_path(root: Path, name: str, code: str) -> Path:
    path = Path(name)
    return root / path.with_name(f"{path.stem}.{LANGUAGES[code][1]}{path.suffix}")


def build(root: Path, name: str, catalog: Any, code: str) -> str:
    """The document in language ``code``: reviewed translations in the English's order."""
    translated = {entry.msgid: entry.msgstr for entry in catalog or ()
                  if not entry.obsolete and not entry.fuzzy and entry.msgstr}
    source = blocks((root / name).read_text(encoding="utf-8"))
    po = catalog_path(root, name, code).relative_to(root).as_posix()
    head = f"<!-- Built from {name} and {po} by `mcplab i18n`: edit those, not this file. -->"
    return "\n\n".join([head, *(translated.get(block, block) for block in source)]) + "\n"
