"""Every file a lab sends a student to exists, and holds the names the sentence says it holds.

Theory of operation
-------------------
A lab says which file to open beside it ("`mcplab/client/connection.py` (`Connection.exchange`: ...)"),
and a student goes looking. :data:`POINTERS` is the inventory: one row per notebook, cell and file,
with the names the cell gives for that file. For each row, in the English cell and in the Chinese
edition's cell of the same id, the file is named, and so is every name; the file exists, and it
*defines* each name where it says (read with :mod:`ast`, never imported: a def, a class or an
assignment at the top of the module, or a method or attribute of a class in it; a name a module only
imports from elsewhere does not count, since the student would find nothing to read there).

A pointer is a path under ``mcplab/``, ``servers/``, ``deploy/`` or ``labs/build/`` in a markdown cell
or in a code cell's comment. One that has no row fails: a new pointer gets a row, and so a check.

:data:`DROPPED` are the names the stdio engine had for speed and lost when it was rewritten to a plain
design (issue 29): no lab, in either language, may send a student looking for one of them.
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

ROOT = Path(__file__).resolve().parent.parent
LABS = ROOT / "labs"
CHINESE = LABS / "zh-CN"
POINTER = re.compile(r"(?<![\w/.-])((?:mcplab|servers|deploy|labs/build|labs/solutions/build)/[\w./-]*)")


@dataclass(frozen=True)
class Pointer:
    notebook: str             # under labs/
    cell: str                 # the cell's id, the same in both editions
    path: str                 # under the repository's root; a folder ends in "/"
    names: tuple[str, ...] = ()  # what the cell says the file holds: "name" or "Class.attribute"


#: every pointer of every lab, in the order a student meets them
POINTERS: tuple[Pointer, ...] = (
    Pointer("00_start_here.ipynb", "2699755b", "mcplab/wire/jsonrpc.py"),
    Pointer("00_start_here.ipynb", "2699755b", "servers/"),
    Pointer("01_jsonrpc.ipynb", "cell-00", "mcplab/wire/jsonrpc.py"),
    Pointer("01_jsonrpc.ipynb", "cell-00", "mcplab/wire/errors.py"),
    Pointer("01_jsonrpc.ipynb", "cell-00", "mcplab/trace/recorder.py"),
    Pointer("01_jsonrpc.ipynb", "cell-26", "mcplab/wire/errors.py"),
    Pointer("01_jsonrpc.ipynb", "cell-32", "mcplab/exercises/lab01.py"),
    Pointer("02_handshake.ipynb", "cell-00", "mcplab/transports/stdio.py", ("StdioTransport",)),
    Pointer("02_handshake.ipynb", "cell-00", "mcplab/lifecycle/tables.py"),
    Pointer("02_handshake.ipynb", "cell-00", "mcplab/client/client.py", ("Client",)),
    Pointer("02_handshake.ipynb", "cell-00", "mcplab/client/connection.py", ("Connection.exchange",)),
    Pointer("02_handshake.ipynb", "cell-00", "mcplab/endpoint.py", ("Outgoing", "Waiter")),
    Pointer("02_handshake.ipynb", "cell-00", "mcplab/wire/jsonrpc.py", ("IdAllocator",)),
    Pointer("02_handshake.ipynb", "cell-00", "servers/weather.py"),
    Pointer("02_handshake.ipynb", "cell-21", "mcplab/lifecycle/", ("REQUIRED_CAPABILITY",)),
    Pointer("02_handshake.ipynb", "cell-35", "mcplab/exercises/lab02.py"),
    Pointer("03_primitives.ipynb", "cell-00", "servers/weather.py"),
    Pointer("03_primitives.ipynb", "cell-00", "servers/files.py"),
    Pointer("03_primitives.ipynb", "cell-00", "mcplab/client/results.py"),
    Pointer("03_primitives.ipynb", "cell-01", "servers/samples/"),
    Pointer("03_primitives.ipynb", "cc443308", "mcplab/notebook/inspector.py"),
    Pointer("03_primitives.ipynb", "cell-22", "mcplab/exercises/lab03.py"),
    Pointer("04_host.ipynb", "cell-00", "mcplab/client/host.py", ("Host",)),
    Pointer("04_host.ipynb", "cell-23", "mcplab/exercises/lab04.py"),
    Pointer("05_streamable_http.ipynb", "cell-00", "mcplab/server/streamable_http/app.py"),
    Pointer("05_streamable_http.ipynb", "cell-00", "mcplab/transports/http.py"),
    Pointer("05_streamable_http.ipynb", "cell-10", "servers/conformance.py",
            ("test_simple_text", "test_tool_with_progress")),
    Pointer("05_streamable_http.ipynb", "cell-12", "mcplab/wire/sse.py", ("SSEParser",)),
    Pointer("05_streamable_http.ipynb", "cell-12", "mcplab/transports/http.py"),
    Pointer("06_stateless.ipynb", "01f956e7", "mcplab/lifecycle/modern.py"),
    Pointer("06_stateless.ipynb", "01f956e7", "mcplab/client/eras.py"),
    Pointer("06_stateless.ipynb", "01f956e7", "mcplab/server/modern.py"),
    Pointer("06_stateless.ipynb", "01f956e7", "mcplab/wire/headers.py"),
    Pointer("06_stateless.ipynb", "01f956e7", "mcplab/notebook/matrix.py"),
    Pointer("06_stateless.ipynb", "1d08771f", "servers/weather.py"),
    Pointer("07_scaling.ipynb", "7c0a0001", "mcplab/ecosystem/proxy.py"),
    Pointer("07_scaling.ipynb", "7c0a0001", "mcplab/client/mrtr.py"),
    Pointer("07_scaling.ipynb", "7c0a0001", "mcplab/server/mrtr.py"),
    Pointer("07_scaling.ipynb", "7c0a0001", "mcplab/client/results.py"),
    Pointer("07_scaling.ipynb", "7c0a0001", "mcplab/wire/versions.py"),
    Pointer("07_scaling.ipynb", "5c01b703", "servers/files.py"),
    Pointer("07_scaling.ipynb", "78592dd5", "mcplab/notebook/confirm.py", ("ConfirmForm", "always_confirm")),
    Pointer("07_scaling.ipynb", "7a6ccb11", "mcplab/notebook/confirm.py", ("ConfirmForm",)),
    Pointer("07_scaling.ipynb", "6dc22423", "mcplab/client/mrtr.py"),
    Pointer("08_economics.ipynb", "05b46650", "mcplab/economics/model.py"),
    Pointer("08_economics.ipynb", "05b46650", "mcplab/economics/plots.py"),
    Pointer("09_build_server.ipynb", "0fb3310a", "mcplab/server/toolkit.py", ("Server",)),
    Pointer("09_build_server.ipynb", "0fb3310a", "mcplab/server/schema.py"),
    Pointer("09_build_server.ipynb", "0fb3310a", "mcplab/server/content.py"),
    Pointer("09_build_server.ipynb", "0fb3310a", "mcplab/server/runner.py", ("run",)),
    Pointer("09_build_server.ipynb", "0fb3310a", "mcplab/server/modern.py"),
    Pointer("09_build_server.ipynb", "0fb3310a", "labs/build/bookshelf.py"),
    Pointer("09_build_server.ipynb", "0fb3310a", "labs/build/my_server.py"),
    Pointer("09_build_server.ipynb", "a4cbc76c", "labs/build/"),
    Pointer("09_build_server.ipynb", "44d0dfc6", "mcplab/server/runner.py", ("run", "arguments")),
    Pointer("09_build_server.ipynb", "44d0dfc6", "mcplab/server/stdio.py", ("serve_stdio",)),
    Pointer("09_build_server.ipynb", "e77845e4", "labs/build/my_server.py"),
    Pointer("09_build_server.ipynb", "c166378c", "labs/build/my_server.py"),
    Pointer("09_build_server.ipynb", "c166378c", "labs/solutions/build/my_server.py"),
    Pointer("10_build_client.ipynb", "1c380290", "labs/build/my_client.py"),
    Pointer("10_build_client.ipynb", "1c380290", "servers/weather.py"),
    Pointer("10_build_client.ipynb", "1c380290", "servers/files.py"),
    Pointer("10_build_client.ipynb", "ecc50b6a", "labs/build/my_client.py", (
        "StdioClient.start", "StdioClient.send", "StdioClient._read_stdout", "StdioClient._drain_stderr",
        "StdioClient.receive", "StdioClient.request", "StdioClient.initialize", "StdioClient.close", "main")),
    Pointer("10_build_client.ipynb", "51d1555f", "labs/solutions/build/my_client.py"),
    Pointer("11_security.ipynb", "11_security-01", "servers/auth.py"),
    Pointer("11_security.ipynb", "11_security-01", "mcplab/exercises/careless.py"),
    Pointer("11_security.ipynb", "11_security-01", "mcplab/auth/"),
    Pointer("11_security.ipynb", "11_security-01", "mcplab/client/trust.py"),
    Pointer("11_security.ipynb", "11_security-01", "mcplab/client/host.py"),
    Pointer("11_security.ipynb", "11_security-01", "servers/hostile.py"),
    Pointer("11_security.ipynb", "11_security-03", "servers/auth.py"),
    Pointer("11_security.ipynb", "11_security-12", "mcplab/auth/wire.py"),
    Pointer("11_security.ipynb", "11_security-17", "servers/auth.py"),
    Pointer("11_security.ipynb", "11_security-17", "servers/hostile.py"),
    Pointer("11_security.ipynb", "11_security-29", "mcplab/client/trust.py"),
    Pointer("11_security.ipynb", "11_security-33", "mcplab/client/trust.py", ("Permission", "consent_reason")),
    Pointer("11_security.ipynb", "11_security-48", "servers/auth.py"),
    Pointer("11_security.ipynb", "11_security-51", "mcplab/exercises/lab11.py"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-00", "mcplab/ecosystem/hostconfig.py"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-00", "mcplab/ecosystem/wiretap.py"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-00", "servers/weather.py"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-00", "servers/weather_sdk.py"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-00", "deploy/nginx/mcp-balancer.conf.template"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-00", "mcplab/ecosystem/balancer.py"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-00", "servers/weather.server.json"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-00", "mcplab/client/host.py"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-15", "servers/files.py"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-16", "servers/weather_sdk.py"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-16", "servers/weather.py"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-20", "deploy/nginx/"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-34", "mcplab/exercises/lab12.py"),
    Pointer("12_ecosystem.ipynb", "12_ecosystem-34", "servers/weather.py"),
    Pointer("solutions/01_jsonrpc_solutions.ipynb", "cell-01", "mcplab/exercises/lab01.py"),
    Pointer("solutions/02_handshake_solutions.ipynb", "cell-02", "mcplab/exercises/lab02.py"),
    Pointer("solutions/02_handshake_solutions.ipynb", "cell-18", "mcplab/lifecycle/"),
    Pointer("solutions/03_primitives_solutions.ipynb", "cell-02", "mcplab/exercises/lab03.py"),
    Pointer("solutions/04_host_solutions.ipynb", "cell-02", "mcplab/exercises/lab04.py"),
    Pointer("solutions/05_streamable_http_solutions.ipynb", "cell-02", "mcplab/exercises/lab05.py"),
    Pointer("solutions/06_stateless_solutions.ipynb", "08a3194a", "mcplab/exercises/lab06.py"),
    Pointer("solutions/07_scaling_solutions.ipynb", "7c0a5002", "mcplab/exercises/lab07.py"),
    Pointer("solutions/09_build_server_solutions.ipynb", "b32fd326", "labs/solutions/build/my_server.py"),
    Pointer("solutions/10_build_client_solutions.ipynb", "37a9809f", "labs/solutions/build/my_client.py"),
    Pointer("solutions/11_security_solutions.ipynb", "11_security_solutions-03", "mcplab/exercises/lab11.py"),
    Pointer("solutions/12_ecosystem_solutions.ipynb", "12_ecosystem_s-01", "servers/"),
    Pointer("solutions/12_ecosystem_solutions.ipynb", "12_ecosystem_s-02", "mcplab/exercises/lab12.py"),
    Pointer("solutions/12_ecosystem_solutions.ipynb", "12_ecosystem_s-03", "servers/weather.py"),
)

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


def editions(pointer: Pointer) -> list[tuple[str, dict]]:
    """The pointer's cell in the English source and in the built Chinese edition."""
    found = []
    for label, folder in (("English", LABS), ("Chinese", CHINESE)):
        notebook = folder / pointer.notebook
        assert notebook.is_file(), f"{label} edition missing: {notebook.relative_to(ROOT)}"
        cell = cells(notebook).get(pointer.cell)
        assert cell is not None, f"{notebook.relative_to(ROOT)} has no cell {pointer.cell!r}"
        found.append((label, cell))
    return found


def english_notebooks() -> list[Path]:
    return sorted(LABS.glob("*.ipynb")) + sorted((LABS / "solutions").glob("*.ipynb"))


@pytest.mark.parametrize("pointer", POINTERS, ids=lambda p: f"{p.notebook}:{p.cell}:{p.path}")
def test_every_file_a_lab_points_at_exists_and_defines_the_names_the_cell_gives(pointer):
    target = ROOT / pointer.path
    assert target.is_dir() if pointer.path.endswith("/") else target.is_file(), f"{pointer.path} does not exist"
    for label, cell in editions(pointer):
        text = pointing_text(cell)
        assert pointer.path in pointers_in(text), f"the {label} cell {pointer.cell} does not name {pointer.path}"
        missing = [name for name in pointer.names if not set(name.split(".")) <= code_words(cell)]
        assert not missing, f"the {label} cell {pointer.cell} names {pointer.path} without {missing}"
    undefined = [name for name in pointer.names if not defines(target, name)]
    assert not undefined, f"{pointer.path} does not define {undefined}, which {pointer.notebook} sends a student to"


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
