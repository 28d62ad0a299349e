"""Lab cells that wait on a server print what they store when every server is slow to start (issue 28).

Lab 10's own client code (sections 2 to 7) waits on pipes with ``select``, ``queue.get`` and
``Popen.wait``; Lab 02 shows a request timeout on a server that never answers. Each wait must either
be for an event (the first answer, the exit) with a bound sized for a loaded machine, or be the
lesson itself (a server that never answers, whatever the machine). These tests run the cells, in
order, as the notebook does, with every child Python made slow to start, and compare what each cell
prints with what the notebook stores.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
from pathlib import Path

import anyio
import pytest

from mcplab.notebook import machine
from slow_start import slow_start

pytestmark = pytest.mark.subprocess
LABS = Path(__file__).resolve().parent.parent / "labs"
SILENT_CELL = "cell-34"  # Lab 02: a server that reads everything and answers nothing
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


def test_lab10_pipe_cells_print_their_stored_output_when_every_server_is_slow_to_start(tmp_path, monkeypatch):
    # 1.5 s: past the 1 s the stubborn server had to ignore SIGTERM, and the chatty one to answer.
    slow_start(1.5, tmp_path, monkeypatch)
    monkeypatch.chdir(LABS)
    namespace: dict = {}
    try:
        shown = anyio.run(run_cells, pipe_cells("10_build_client.ipynb"), namespace)
        assert [(cell_id, printed) for cell_id, printed, _ in shown] == [(cell_id, stored) for cell_id, _, stored in shown]
    finally:
        for name in ("server", "fixtures", "silent"):
            if name in namespace and namespace[name].poll() is None:
                namespace[name].kill()
                namespace[name].wait()


def lab_cell(notebook: str, cell_id: str) -> dict:
    return next(c for c in json.loads((LABS / notebook).read_text(encoding="utf-8"))["cells"] if c.get("id") == cell_id)


async def run_cells(cells: list[dict], namespace: dict) -> list[tuple[str, str, str]]:
    """Each cell run as a notebook on a machine runs it (top-level ``await`` allowed, a ``%%machine`` line
    blanked): (id, printed, stored)."""
    shown = []
    for cell in cells:
        source = "".join(machine.rewrite("".join(cell["source"]).splitlines(keepends=True), in_browser=False))
        code = compile(source, f"cell {cell['id']}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            awaited = eval(code, namespace)
            if awaited is not None:
                await awaited
        shown.append((cell["id"], printed.getvalue(), stored_text(cell)))
    return shown


def test_lab02_times_out_on_initialize_and_prints_its_stored_trace_when_the_silent_server_is_slow_to_start(
        tmp_path, monkeypatch):
    # The lesson is the timeout itself: the silent server never answers, so a slow start changes nothing.
    slow_start(3, tmp_path, monkeypatch)
    monkeypatch.chdir(LABS)
    cells = [lab_cell("02_handshake.ipynb", "cell-01"), lab_cell("02_handshake.ipynb", SILENT_CELL)]
    shown = anyio.run(run_cells, cells, {})
    assert [(cell_id, printed) for cell_id, printed, _ in shown] == [(cell_id, stored) for cell_id, _, stored in shown]
    assert "RequestTimeout: no response to initialize (id 1) within 0.5 s" in shown[-1][1]
