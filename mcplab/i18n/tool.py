"""``mcplab i18n`` (``make translations``): keep every language's catalogs and built files in step.

Theory of operation
-------------------
Three steps, each safe to run at any time, in a clone of the repository:

``update``  give every English cell an id (:func:`~mcplab.i18n.notebooks.ensure_ids`), then bring
            every catalog up to date with its source: the package's messages (``translations/zh_CN/
            mcplab.po``, compiled to ``mcplab/i18n/locale/zh_CN/LC_MESSAGES/mcplab.mo``), one catalog
            per notebook, the README's. Changed English comes back fuzzy, new English untranslated
            (:mod:`mcplab.i18n.catalogs`); a catalog whose notebook is gone is removed once its
            translations have been offered to the others (a renamed or split lab keeps them).
``build``   write the built files from the catalogs: each notebook (executed, so its outputs are
            the language's) and ``README.zh-CN.md``.
``status``  what is left to translate or review, one line per entry; exit status 1 when anything is.

``check`` is what the tests assert: nothing to update, nothing to translate or review, the compiled
catalog and every built file equal to what the catalogs give (outputs aside: nbval checks those). A
catalog counts as up to date when its entries say the same (context, English, translation, fuzzy):
the comments saying where each comes from (a line, a cell's place) drift with every edit of the
source, and the next ``update`` refreshes them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from mcplab.i18n import LANGUAGES, _, catalogs, documents, messages, notebooks

__all__ = ["Plan", "plan", "update", "build", "status", "check", "main"]


def mo_path(root: Path, code: str) -> Path:
    return root / "mcplab" / "i18n" / "locale" / LANGUAGES[code][0] / "LC_MESSAGES" / "mcplab.mo"


def package_catalog(root: Path, code: str) -> Path:
    return root / "translations" / LANGUAGES[code][0] / "mcplab.po"


@dataclass
class Plan:
    """Every catalog of a language as an update would write it: path → catalog, and what to remove."""
    catalogs: dict[Path, object] = field(default_factory=dict)
    stale: list[Path] = field(default_factory=list)
    extraction_problems: tuple[str, ...] = ()


def plan(root: Path, code: str) -> Plan:
    """The catalogs :func:`update` would write (nothing is written)."""
    folder = root / "translations" / LANGUAGES[code][0]
    existing = sorted(folder.rglob("*.po")) if folder.is_dir() else []
    memory = catalogs.Memory()
    loaded = {path: catalogs.read(path) for path in existing}
    for catalog in loaded.values():
        memory.learn(catalog)
    result = Plan()
    found = messages.extract(root / "mcplab", root)
    result.extraction_problems = found.problems
    path = package_catalog(root, code)
    result.catalogs[path] = catalogs.merge(found.units, loaded.get(path), memory)
    for notebook in notebooks.sources(root):
        path = notebooks.catalog_path(root, notebook, code)
        result.catalogs[path] = catalogs.merge(notebooks.units(root, notebook), loaded.get(path), memory)
    for name in documents.present(root):
        path = documents.catalog_path(root, name, code)
        result.catalogs[path] = catalogs.merge(documents.units(root, name), loaded.get(path), memory)
    result.stale = [path for path in existing if path not in result.catalogs]
    return result


def _compiled(catalog: object) -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "mcplab.mo"
        catalog.save_as_mofile(str(target))  # type: ignore[attr-defined]
        return target.read_bytes()


def update(root: Path, code: str = "zh") -> list[str]:
    """Ids, catalogs and the compiled catalog brought up to date; the lines saying what changed."""
    said = []
    for notebook in notebooks.sources(root):
        given = notebooks.ensure_ids(notebook)
        if given:
            said.append(_("gave {n} cell(s) an id: {path}", n=given, path=notebook.relative_to(root).as_posix()))
    result = plan(root, code)
    said += [_("cannot extract: {problem}", problem=problem) for problem in result.extraction_problems]
    for path, catalog in result.catalogs.items():
        if catalogs.write(catalog, path):
            said.append(_("updated {path}", path=path.relative_to(root).as_posix()))
    for path in result.stale:
        path.unlink()
        said.append(_("removed {path} (its notebook is gone; its translations went to wherever the same "
                      "English is now)", path=path.relative_to(root).as_posix()))
    target = mo_path(root, code)
    compiled = _compiled(result.catalogs[package_catalog(root, code)])
    if not target.is_file() or target.read_bytes() != compiled:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(compiled)
        said.append(_("compiled {path}", path=target.relative_to(root).as_posix()))
    return said


def _execute(notebook: object, folder: Path) -> None:
    """Run every cell in a fresh kernel in ``folder``; the notebook's own setup cell picks the language."""
    from nbclient import NotebookClient

    env = {key: value for key, value in os.environ.items() if key not in ("MCPLAB_LANG", "MCPLAB_NOTEBOOK_DIR")}
    NotebookClient(notebook, timeout=180, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(folder)}}).execute(env=env)


def build(root: Path, code: str = "zh", only: Sequence[str] = (), execute: bool = True) -> list[str]:
    """Write the built notebooks (executed unless told) and documents; the lines saying what was written."""
    import nbformat

    said = []
    for source in notebooks.sources(root):
        name = notebooks.relative(root, source).as_posix()
        if only and not any(name == pick or Path(name).stem.startswith(pick) for pick in only):
            continue
        catalog = catalogs.read(notebooks.catalog_path(root, source, code))
        notebook = notebooks.build(root, source, catalog, code)
        target = notebooks.built_path(root, source, code)
        target.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        if execute:
            _execute(notebook, target.parent)
        nbformat.write(notebook, str(target))
        said.append(_("built {path} (ran in {seconds:.1f} s)", path=target.relative_to(root).as_posix(),
                      seconds=time.monotonic() - started) if execute
                    else _("built {path}", path=target.relative_to(root).as_posix()))
    if not only:
        for name in documents.present(root):
            text = documents.build(root, name, catalogs.read(documents.catalog_path(root, name, code)), code)
            target = documents.built_path(root, name, code)
            if not target.is_file() or target.read_text(encoding="utf-8") != text:
                target.write_text(text, encoding="utf-8")
                said.append(_("built {path}", path=target.relative_to(root).as_posix()))
    return said


def status(root: Path, code: str = "zh") -> tuple[list[str], dict[str, int]]:
    """(what is left to do, one line each; counts) for the catalogs on disk."""
    folder = root / "translations" / LANGUAGES[code][0]
    todo: list[str] = []
    counts = {"catalogs": 0, "entries": 0, "translated": 0, "fuzzy": 0, "untranslated": 0}
    for path in sorted(folder.rglob("*.po")):
        catalog = catalogs.read(path)
        name = path.relative_to(root).as_posix()
        counts["catalogs"] += 1
        for entry in catalog:
            if entry.obsolete:
                continue
            counts["entries"] += 1
            if entry.fuzzy:
                counts["fuzzy"] += 1
            elif entry.translated():
                counts["translated"] += 1
            else:
                counts["untranslated"] += 1
        todo += catalogs.problems(catalog, name)
    return todo, counts


def check(root: Path, code: str = "zh") -> list[str]:
    """Everything that is not as ``mcplab i18n`` would leave it, one line each (empty: all in step)."""
    found = []
    for notebook in notebooks.sources(root):
        if notebooks.missing_ids(notebook):
            found.append(_("{path}: cells without an id (run mcplab i18n update)",
                           path=notebook.relative_to(root).as_posix()))
    if found:
        return found
    result = plan(root, code)
    found += [_("cannot extract: {problem}", problem=problem) for problem in result.extraction_problems]
    for path, catalog in result.catalogs.items():  # where an entry comes from may drift: only what it says counts
        if not path.is_file() or catalogs.content(catalogs.read(path)) != catalogs.content(catalog):
            found.append(_("{path}: not up to date with its source (run mcplab i18n update)",
                           path=path.relative_to(root).as_posix()))
    found += [_("{path}: its source is gone (run mcplab i18n update)", path=path.relative_to(root).as_posix())
              for path in result.stale]
    target = mo_path(root, code)
    if not target.is_file() or target.read_bytes() != _compiled(result.catalogs[package_catalog(root, code)]):
        found.append(_("{path}: not compiled from the catalog (run mcplab i18n update)",
                       path=target.relative_to(root).as_posix()))
    found += status(root, code)[0]
    for source in notebooks.sources(root):
        target = notebooks.built_path(root, source, code)
        expected = notebooks.build(root, source, result.catalogs[notebooks.catalog_path(root, source, code)], code)
        if not target.is_file():
            found.append(_("{path}: missing (run mcplab i18n build)", path=target.relative_to(root).as_posix()))
        elif notebooks.comparable(notebooks.read(target)) != notebooks.comparable(expected):
            found.append(_("{path}: differs from what the catalogs give (run mcplab i18n build)",
                           path=target.relative_to(root).as_posix()))
    built = {notebooks.built_path(root, source, code) for source in notebooks.sources(root)}
    folder = root / notebooks.LABS / LANGUAGES[code][1]
    found += [_("{path}: has no English source (remove it)", path=path.relative_to(root).as_posix())
              for path in sorted(folder.rglob("*.ipynb")) if path not in built and ".ipynb_checkpoints" not in path.parts]
    for name in documents.present(root):
        target = documents.built_path(root, name, code)
        text = documents.build(root, name, result.catalogs[documents.catalog_path(root, name, code)], code)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            found.append(_("{path}: differs from what the catalogs give (run mcplab i18n build)",
                           path=target.relative_to(root).as_posix()))
    return found


def main(command: str | None, code: str, only: Sequence[str] = (), execute: bool = True) -> int:
    from mcplab import course

    if not course.is_checkout():
        raise SystemExit(_("mcplab i18n: works in a clone of the repository (it writes the catalogs and the labs)"))
    root = course.CHECKOUT
    started = time.monotonic()
    if command in (None, "update"):
        print("\n".join(update(root, code) or [_("catalogs: already up to date")]))
    if command in (None, "build"):
        print("\n".join(build(root, code, only, execute) or [_("nothing to build")]))
    if command == "check":
        found = check(root, code)
        print("\n".join(found or [_("everything is in step")]))
        return 1 if found else 0
    todo, counts = status(root, code)
    if command == "status":
        print("\n".join(todo))
    summary = _("{catalogs} catalogs, {entries} entries: {translated} translated, {fuzzy} fuzzy, {untranslated} "
                "untranslated", **counts)
    print(summary + (_(" ({seconds:.1f} s)", seconds=time.monotonic() - started) if command is None else ""))
    return 1 if command == "status" and todo else 0
