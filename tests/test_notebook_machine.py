"""``%%machine WHAT``: a cell that needs the local install runs as written on a machine, and in the
page prints the one sentence saying what it needs, its body not run.

A real IPython shell runs the cells here, with the extension loaded as a lab's first cell loads it;
"the page" is ``place.IN_BROWSER`` set, which is all the extension reads (the site test runs the labs
in a real page). The labs' notebooks are checked too: a cell opens with ``%%machine`` exactly when it
carries the ``needs-machine`` tag, and a cell before the first such cell imports ``mcplab.notebook``,
which installs the rewriting.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from mcplab import place
from mcplab.notebook import machine

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted([*ROOT.glob("labs/*.ipynb"), *ROOT.glob("labs/zh-CN/*.ipynb"), *ROOT.glob("labs/solutions/*.ipynb")])
LOAD = "%load_ext mcplab.notebook.machine"
IMPORTS_NOTEBOOK = re.compile(r"^(from mcplab import .*\bnotebook\b|import mcplab\.notebook\b)", re.M)


@pytest.fixture
def shell():
    shell = InteractiveShell.instance()
    shell.run_cell(LOAD)
    yield shell
    shell.user_ns.pop("ran", None)
    InteractiveShell.clear_instance()


A_CELL = """%%machine processes
import anyio
await anyio.sleep(0)
ran = "the body"
ran.upper()"""


def test_on_a_machine_the_cell_runs_as_written_awaits_and_its_last_value_included(shell, capsys):
    result = shell.run_cell(A_CELL)
    assert result.success and result.result == "THE BODY" and shell.user_ns["ran"] == "the body"
    assert capsys.readouterr().out.endswith("]: 'THE BODY'\n")  # displayed, as the last value is


def test_in_the_page_the_cell_prints_its_sentence_and_runs_nothing(shell, capsys, monkeypatch):
    monkeypatch.setattr(place, "IN_BROWSER", True)
    result = shell.run_cell(A_CELL)
    assert result.success and result.result is None and "ran" not in shell.user_ns
    assert capsys.readouterr().out == machine.sentence("processes") + "\n"
    assert machine.sentence("processes").startswith("Not run in the browser: this cell needs the local install")


@pytest.mark.parametrize("in_browser", [False, True], ids=["on a machine", "in the page"])
@pytest.mark.parametrize("line", ["%%machine", "%%machine subprocess", "%%machine processes http"])
def test_a_line_that_names_no_known_need_is_an_error_in_both_places_and_runs_nothing(shell, capsys, monkeypatch,
                                                                                     in_browser, line):
    monkeypatch.setattr(place, "IN_BROWSER", in_browser)
    result = shell.run_cell(f"{line}\nran = 'the body'")
    assert not result.success and "ran" not in shell.user_ns
    said = capsys.readouterr()
    assert "UsageError: %%machine expects one of processes, cryptography, sdk, nginx, got" in said.out + said.err


def test_a_cell_without_the_line_is_left_alone_and_loading_twice_rewrites_once(shell, monkeypatch):
    shell.run_cell(LOAD)
    assert machine.install(shell) and machine.install()  # by load_ext, by name, and as the shell running
    assert sum(getattr(stage, "mcplab_machine", False) for stage in shell.input_transformers_cleanup) == 1
    monkeypatch.setattr(place, "IN_BROWSER", True)
    assert shell.run_cell("ran = '%%machine processes'").success and shell.user_ns["ran"] == "%%machine processes"


def test_every_need_has_its_own_sentence():
    sentences = [machine.sentence(what) for what in machine.NEEDS]
    assert len(set(sentences)) == len(machine.NEEDS) and all(s.endswith(".") and "\n" not in s for s in sentences)


def _code_cells(path: Path) -> list[dict]:
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_labs_cell_opens_with_machine_exactly_when_it_is_tagged_and_a_cell_before_imports_notebook(path):
    loaded = False
    for index, cell in enumerate(_code_cells(path)):
        source = "".join(cell["source"])
        tagged = machine.TAG in cell.get("metadata", {}).get("tags", [])
        opens = source.startswith("%%machine")
        assert tagged == opens, (index, source[:80])
        if opens:
            assert loaded, f"code cell {index} opens with %%machine, and no cell before it imports mcplab.notebook"
            machine.sentence(source.splitlines()[0].split(maxsplit=1)[1])  # a known need
        loaded = loaded or bool(IMPORTS_NOTEBOOK.search(source))
