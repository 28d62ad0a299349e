"""Every file a lab sends a student to exists, and holds the names the sentence says it holds.

Theory of operation
-------------------
A lab says which file to open beside it ("`mcplab/client/connection.py` (`Connection.exchange`: ...)"),
and a student goes looking. :data:`POINTERS` is the inventory (``lab_pointers.json``): one row per notebook, cell and file,
with the names the cell gives for that file. For each row, in the English cell and in the Chinese
edition's cell of the same id, the file is named, and so is every name; the file exists, and it
*defines* each name where it says (read with :mod:`ast`, never imported: a def, a class or an
assignment at the top of the module, or a method or attribute of a class in it; a name a module only
imports from elsewhere does not count, since the student would find nothing to read there).

A pointer is a path under ``mcplab/``, ``servers/``, ``deploy/`` or ``labs/build/`` in a markdown cell
or in a code cell's comment. One that has no row fails: a new pointer gets a row, and so a check.

:data:`DROPPED` are the names the stdio engine had for speed and lost when it was rewritten to a plain
design: no lab, in either language, may send a student looking for one of them.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest

from mcplab.i18n.notebooks import STARTERS

ROOT = Path(__file__).resolve().parent.parent
LABS = ROOT / "labs"
CHINESE = LABS / "zh-CN"
POINTER = re.compile(r"(?<![\w/.-])((?:mcplab|servers|deploy|labs/build|labs/solutions/build|labs/zh-CN/build)/[\w./-]*)")
# A starter file a build lab hands out has a Chinese twin, which the Chinese lab names instead (mcplab.i18n.notebooks).
TWINS = {f"labs/{starter}": f"labs/zh-CN/{starter}" for starter in STARTERS}


@dataclass(frozen=True)
class Pointer:
    notebook: str             # under labs/
    cell: str                 # the cell's id, the same in both editions
    path: str                 # under the repository's root; a folder ends in "/"
    names: tuple[str, ...] = ()  # what the cell says the file holds: "name" or "Class.attribute"


#: every pointer of every lab, in the order a student meets them: a table in lab_pointers.json beside this
#: file, one row [notebook, cell id, path, [names]]
POINTERS: tuple[Pointer, ...] = tuple(
    Pointer(notebook, cell, path, tuple(names))
    for notebook, cell, path, names in json.loads((Path(__file__).with_name("lab_pointers.json")).read_text("utf-8")))

#: what the stdio engine lost in its plain rewrite: a lab naming one sends a student looking for nothing
DROPPED = ("REPLY_SPIN", "WatchedPipe", "ThreadedPipe", "send_nowait", "receive_nowait", "answers_at_once",
           "answer_now", "run_at_once", "IDLE_WORKERS", "MAX_CHUNKS", "one_write", "sched_yield", "add_reader")


@lru_cache(maxsize=None)
def cells(path: Path) -> dict[str, dict]:
    return {cell["id"]: cell for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]}


def pointing_text(cell: dict) -> str:
    """What of a cell a student reads as directions: all of a markdown cell, a code cell's comments."""
    source = "".join(cell["source"])
    if cell["cell_type"] == "markdown":
        return source
    return "\n".join(line.split("#", 1)[1] for line in source.splitlines() if "#" in line)


def pointers_in(text: str) -> set[str]:
    return {found.rstrip(".") for found in POINTER.findall(text)}


def code_words(cell: dict) -> set[str]:
    """Every identifier a cell writes as code: between backticks in markdown, anywhere in a code cell."""
    source = "".join(cell["source"])
    spans = re.findall(r"`([^`]+)`", source) if cell["cell_type"] == "markdown" else [source]
    return {word for span in spans for word in re.findall(r"\w+", span)}


@lru_cache(maxsize=None)
def definitions(path: Path) -> frozenset[str]:
    """What a module defines: its top-level names, and ``Class.name`` for each method and attribute."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        found |= assigned(node)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                found |= {f"{node.name}.{name}" for name in assigned(item)}
            for item in ast.walk(node):  # self.x = ... inside the methods
                if isinstance(item, (ast.Assign, ast.AnnAssign)):
                    targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                    found |= {f"{node.name}.{t.attr}" for t in targets
                              if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
    return frozenset(found)


def assigned(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def defines(path: Path, name: str) -> bool:
    """``path`` (a file, or any module of a folder) defines ``name``."""
    modules = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return any(name in definitions(module) for module in modules)


def editions(pointer: Pointer) -> list[tuple[str, dict, str]]:
    """The pointer's cell in the English source and in the built Chinese edition, with the path each names."""
    found = []
    for label, folder in (("English", LABS), ("Chinese", CHINESE)):
        notebook = folder / pointer.notebook
        assert notebook.is_file(), f"{label} edition missing: {notebook.relative_to(ROOT)}"
        cell = cells(notebook).get(pointer.cell)
        assert cell is not None, f"{notebook.relative_to(ROOT)} has no cell {pointer.cell!r}"
        twin = label == "Chinese" and "/" not in pointer.notebook and pointer.path in TWINS
        found.append((label, cell, TWINS[pointer.path] if twin else pointer.path))
    return found


def english_notebooks() -> list[Path]:
    return sorted(LABS.glob("*.ipynb")) + sorted((LABS / "solutions").glob("*.ipynb"))


@pytest.mark.parametrize("pointer", POINTERS, ids=lambda p: f"{p.notebook}:{p.cell}:{p.path}")
def test_every_file_a_lab_points_at_exists_and_defines_the_names_the_cell_gives(pointer):
    target = ROOT / pointer.path
    assert target.is_dir() if pointer.path.endswith("/") else target.is_file(), f"{pointer.path} does not exist"
    for label, cell, path in editions(pointer):
        text = pointing_text(cell)
        assert path in pointers_in(text), f"the {label} cell {pointer.cell} does not name {path}"
        missing = [name for name in pointer.names if not set(name.split(".")) <= code_words(cell)]
        assert not missing, f"the {label} cell {pointer.cell} names {path} without {missing}"
        undefined = [name for name in pointer.names if not defines(ROOT / path, name)]
        assert not undefined, f"{path} does not define {undefined}, which {pointer.notebook} sends a student to"


def test_every_pointer_in_a_lab_has_its_row():
    inventory = {(p.notebook, p.cell, p.path) for p in POINTERS}
    found = {(str(notebook.relative_to(LABS)), cell_id, path)
             for notebook in english_notebooks()
             for cell_id, cell in cells(notebook).items()
             for path in pointers_in(pointing_text(cell))}
    assert not found - inventory, f"pointers with no row in POINTERS: {sorted(found - inventory)}"
    assert not inventory - found, f"rows no lab points at any more: {sorted(inventory - found)}"


@pytest.mark.parametrize("notebook", sorted(LABS.rglob("*.ipynb")), ids=lambda p: str(p.relative_to(LABS)))
def test_no_lab_names_what_the_plain_stdio_engine_dropped(notebook):
    # Sources and stored outputs alike: a traceback kept in an output would name the file's old insides too.
    text = notebook.read_text(encoding="utf-8")
    named = [name for name in DROPPED if re.search(rf"\b{name}\b", text)]
    assert not named, f"{notebook.relative_to(ROOT)} names {named}, which the stdio engine no longer has"


def test_no_row_sends_a_student_to_a_dropped_name():
    assert not [p for p in POINTERS if set(p.names) & set(DROPPED)]


@pytest.mark.parametrize("notebook", english_notebooks(), ids=lambda p: str(p.relative_to(LABS)))
def test_every_dotted_mcplab_name_a_lab_writes_can_be_imported(notebook):
    unknown = []
    for cell in cells(notebook).values():
        if cell["cell_type"] != "markdown":
            continue
        for dotted in re.findall(r"`(mcplab(?:\.\w+)+)", "".join(cell["source"])):
            if not resolves(dotted):
                unknown.append(dotted)
    assert not unknown, f"{notebook.name} names {unknown}, which nothing in mcplab answers to"


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False
