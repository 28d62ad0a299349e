"""Lab 10's pipe cells print what they store when every server is slow to start (issue 28).

The lab's own client code (sections 2 to 7) waits on pipes with ``select``, ``queue.get`` and
``Popen.wait``. Each wait must either be for an event (the first answer, the exit) with a bound
sized for a loaded machine, or be the lesson itself (a server that never answers). These tests run
the cells of the lab, in order, as the notebook does, with every child Python made slow to start,
and compare what each cell prints with what the notebook stores.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from slow_start import slow_start

LABS = Path(__file__).resolve().parent.parent / "labs"
LAST_PIPE_CELL = "13a0e33f"  # section 7's shut_down ladder: after it the lab grades the student's own client


def pipe_cells(notebook: str) -> list[dict]:
    """The code cells up to the shutdown ladder, less the prediction widgets (they print nothing)."""
    cells = []
    for cell in json.loads((LABS / notebook).read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code" and not "".join(cell["source"]).startswith("notebook.predict"):
            cells.append(cell)
        if cell.get("id") == LAST_PIPE_CELL:
            return cells
    raise AssertionError(f"{notebook} has no cell {LAST_PIPE_CELL} (section 7's shut_down)")


def stored_text(cell: dict) -> str:
    return "".join("".join(out.get("text", "")) for out in cell.get("outputs", []) if out["output_type"] == "stream")


@pytest.mark.parametrize("delay", [1.5])
def test_lab10_pipe_cells_print_their_stored_output_when_every_server_is_slow_to_start(
        delay, tmp_path, monkeypatch):
    slow_start(delay, tmp_path, monkeypatch)
    monkeypatch.chdir(LABS)
    namespace: dict = {}
    try:
        for cell in pipe_cells("10_build_client.ipynb"):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile("".join(cell["source"]), f"cell {cell['id']}", "exec"), namespace)
            assert printed.getvalue() == stored_text(cell), f"cell {cell['id']}"
    finally:
        for name in ("server", "fixtures", "silent"):
            if name in namespace and namespace[name].poll() is None:
                namespace[name].kill()
                namespace[name].wait()
