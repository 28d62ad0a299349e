"""The labs in another language, built from the English notebooks and one catalog per notebook.

Theory of operation
-------------------
The English notebooks are the source. Each markdown cell is one catalog entry keyed by the cell's
id (nbformat 4.5 ids, which JupyterLab keeps when a cell is edited or moved). A code cell's code is
not translated, only the words it prints: each prose string literal (:mod:`mcplab.i18n.literals`
says which) is one entry with the cell's id as context and the literal as written as its English,
so a Chinese lab runs the English lab's code with its printed sentences in Chinese; identifiers,
keys, method names and wire strings stay byte for byte. :func:`ensure_ids` gives a cell
without an id (a notebook written by a tool that does not know ids) one derived from the notebook's
name, the cell's place and its text, so the same notebook always gets the same ids.

:func:`build` makes the translated notebook: the source's cells in order, each markdown cell's text
replaced by its translation (the English stays where the catalog has none, or only a fuzzy one, as
gettext does), and after the title two cells of its own: a note that links the English original and
the glossary, and a setup cell that switches mcplab's language and runs the code in the English
notebook's folder (``../servers/weather.py`` and ``build/my_server.py`` then mean what they mean in
English). One exception to "the same code": the files a build lab hands the student to fill in
(:data:`STARTERS`) have a twin in the edition's folder, ``labs/zh-CN/build/my_server.py``, whose
comments, TODOs and messages are translated; a lab of that folder names the twin
(``zh-CN/build/my_server.py``), so the Chinese student edits and grades the Chinese file. Outputs are
made by running it (``mcplab i18n`` executes it with nbconvert), so feedback,
labels and plots are the Chinese ones, and nbval checks them like any other lab's.

Layout, for a source ``labs/solutions/01_jsonrpc_solutions.ipynb`` and Chinese (zh, zh_CN, zh-CN)::

    translations/zh_CN/labs/solutions/01_jsonrpc_solutions.po   the catalog a translator edits
    labs/zh-CN/solutions/01_jsonrpc_solutions.ipynb             built from it: never edit by hand
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

import nbformat

from mcplab.i18n import LANGUAGES, N_, _catalog, literals
from mcplab.i18n.catalogs import Unit

__all__ = ["LABS", "sources", "missing_ids", "ensure_ids", "units", "build", "comparable", "SETUP_ID", "NOTE_ID",
           "GLOSSARY", "STARTERS"]

LABS = "labs"
SETUP_ID = "i18n-setup"
NOTE_ID = "i18n-note"
GLOSSARY = {"zh": "术语表.md"}
# The files a build lab gives the student to fill in, as its code names them (run from labs/).
STARTERS = ("build/my_server.py", "build/my_client.py", "build/my_http_client.py", "build/my_server_two.py",
            "build/my_client_two.py")
LANGUAGE_FOLDERS = {folder for _, folder, _ in LANGUAGES.values() if folder}
SKIPPED = {".ipynb_checkpoints"} | LANGUAGE_FOLDERS


def sources(root: Path) -> list[Path]:
    """The English notebooks under ``root/labs`` (solutions included, the built languages not)."""
    labs = root / LABS
    return sorted(path for path in labs.rglob("*.ipynb") if not SKIPPED & set(path.relative_to(labs).parts[:-1]))


def relative(root: Path, notebook: Path) -> PurePosixPath:
    """``labs/solutions/x.ipynb`` → ``solutions/x.ipynb``: the same path in every language's folder."""
    return PurePosixPath((notebook.relative_to(root / LABS)).as_posix())


def built_path(root: Path, notebook: Path, code: str) -> Path:
    return root / LABS / LANGUAGES[code][1] / relative(root, notebook)


def catalog_path(root: Path, notebook: Path, code: str) -> Path:
    return root / "translations" / LANGUAGES[code][0] / LABS / relative(root, notebook).with_suffix(".po")


def read(path: Path) -> Any:
    return nbformat.read(str(path), as_version=4)


def missing_ids(path: Path) -> list[int]:
    """The places of the cells that have no id in the file itself (nbformat would invent random ones)."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    return [index for index, cell in enumerate(cells) if not cell.get("id")]


def ensure_ids(path: Path) -> int:
    """Give each cell of the notebook at ``path`` that has none a deterministic id; how many it gave."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    cells = raw.get("cells", [])
    taken = {cell.get("id") for cell in cells if cell.get("id")}
    given = 0
    for index, cell in enumerate(cells):
        if cell.get("id"):
            continue
        source = "".join(cell.get("source", ""))
        seed = f"{path.stem}\0{index}\0{cell.get('cell_type')}\0{source}"
        digest = hashlib.sha256(seed.encode("utf-8")).hexdigest()
        cell_id = next(digest[k:k + 8] for k in range(0, len(digest) - 8) if digest[k:k + 8] not in taken)
        cell["id"] = cell_id
        taken.add(cell_id)
        given += 1
    if given:
        if (raw.get("nbformat", 4), raw.get("nbformat_minor", 0)) < (4, 5):
            raw["nbformat"], raw["nbformat_minor"] = 4, 5
        nbformat.write(nbformat.from_dict(raw), str(path))
    return given


def units(root: Path, path: Path) -> list[Unit]:
    """The notebook's markdown cells and its code cells' prose literals, one :class:`Unit` each (context:
    the cell id; a literal's English is the literal as the code writes it, flagged ``mcplab-code``)."""
    name = (PurePosixPath(LABS) / relative(root, path)).as_posix()
    missing = missing_ids(path)
    if missing:
        raise ValueError(f"{name}: cells {missing} have no id; run `mcplab i18n update` to give them one")
    found = []
    for index, cell in enumerate(read(path).cells):
        if cell.cell_type == "markdown" and cell.source.strip():
            found.append(Unit(cell["id"], cell.source, f"{name} · cell {index} (markdown)"))
        elif cell.cell_type == "code":
            try:
                shown = literals.prose(cell.source, _listed(cell))
            except ValueError as exc:
                raise ValueError(f"{name} · cell {index} ({cell['id']}): {exc}") from None
            found += [Unit(cell["id"], literal.text, f"{name} · cell {index} (code)", flags=(literals.FLAG,))
                      for literal in shown]
    return found


def _listed(cell: Any) -> list[str]:
    """The literals a code cell's metadata asks to translate besides what it prints (see literals)."""
    return list(cell.get("metadata", {}).get("mcplab", {}).get("translate", []))


def _setup_source(root: Path, path: Path, code: str) -> str:
    here = built_path(root, path, code).parent
    folder = Path(os.path.relpath(path.parent, here)).as_posix()
    return "\n".join([
        "from mcplab import i18n",
        f'i18n.set_language("{code}")  # ' + _in(code, N_("feedback, labels and plots in this language")),
        f'i18n.work_in("{folder}")  # ' + _in(code, N_("run where the English lab runs: the same relative paths")),
    ])


def _in(code: str, message: str) -> str:
    """``message`` in the language ``code``, whatever the current one is."""
    return message if code == "en" else _catalog(code).gettext(message)


def _note_source(root: Path, path: Path, code: str) -> str:
    here = built_path(root, path, code).parent
    original = Path(os.path.relpath(path, here)).as_posix()
    glossary = Path(os.path.relpath(root / LABS / LANGUAGES[code][1] / GLOSSARY[code], here)).as_posix()
    template = _in(code, N_("> The {language} edition of [{name}]({original}), built from it: the code is the "
                         "same, the text and the sentences the code prints are translated. Terms: [the glossary]({glossary}). The first code cell "
                         "below switches feedback, labels and plots to {language}."))
    return template.format(language=LANGUAGES[code][2], name=path.name, original=original, glossary=glossary)


def build(root: Path, path: Path, catalog: Any, code: str) -> Any:
    """The notebook at ``path`` in language ``code``, from its catalog (a polib file, or None); no outputs."""
    source = read(path)
    usable = [entry for entry in catalog or () if not entry.obsolete and not entry.fuzzy and entry.msgstr]
    translated = {entry.msgctxt: entry.msgstr for entry in usable if literals.FLAG not in entry.flags}
    english = {entry.msgctxt: entry.msgid for entry in catalog or ()
               if not entry.obsolete and literals.FLAG not in entry.flags}
    printed: dict[str, dict[str, str]] = {}
    for entry in usable:
        if literals.FLAG in entry.flags:
            printed.setdefault(entry.msgctxt, {})[entry.msgid] = entry.msgstr
    notebook = copy.deepcopy(source)
    notebook.metadata.pop("widgets", None)  # the source's widget state belongs to its own run
    notebook.metadata["mcplab"] = {"language": LANGUAGES[code][1], "source": relative(root, path).as_posix()}
    twins = _twins(root, path, code)
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and cell.get("id") in translated and english.get(cell["id"]) == cell.source:
            cell.source = translated[cell["id"]]
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
            if cell.get("id") in printed:
                cell.source = literals.replace(cell.source, printed[cell["id"]], _listed(cell))
            for starter, twin in twins:
                cell.source = re.sub(rf"(?<![\w/.-]){re.escape(starter)}", twin, cell.source)
    at = 1 if notebook.cells and notebook.cells[0].cell_type == "markdown" else 0
    note = nbformat.v4.new_markdown_cell(_note_source(root, path, code), id=NOTE_ID)
    setup = nbformat.v4.new_code_cell(_setup_source(root, path, code), id=SETUP_ID)
    notebook.cells[at:at] = [note, setup]
    return notebook


def _twins(root: Path, path: Path, code: str) -> list[tuple[str, str]]:
    """(starter, its twin) as the code of a lab in ``labs/`` names them, for each twin the edition has."""
    if path.parent != root / LABS:  # a solution runs in labs/solutions/, where build/ holds the solved files
        return []
    edition = LANGUAGES[code][1]
    return [(starter, f"{edition}/{starter}") for starter in STARTERS
            if (root / LABS / edition / starter).is_file()]


def comparable(notebook: Any) -> list[tuple[str, str, str]]:
    """What a built notebook must share with a fresh build: each cell's id, type and text (a code cell's
    with its prose literals translated, as the build writes them)."""
    return [(cell.get("id", ""), cell.cell_type, cell.source) for cell in notebook.cells]
