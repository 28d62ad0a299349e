"""The layers of mcplab, as one table, and a check that no module imports against it.

Theory of operation
-------------------
Every module of the package (and every bundled server) belongs to one row of :data:`LAYERS`, found
by the longest dotted prefix that names it. A row says which rows sit right below it; what those may
import, it may import too (the table is read transitively), and modules of one row import each other
freely. Everything else is an import against the layering: a lower layer reaching up (the wire
importing the client), or a sideways one between rows that do not build on each other (the client
importing the server: a client reaches a server only through a transport).

Imports are read from the source with :mod:`ast`, never by importing: ``import x``, ``from x import
y`` (``y`` counts as the module ``x.y`` when there is such a file), relative imports, imports inside
functions and under ``TYPE_CHECKING`` (a lazy import is still a dependency a reader must follow), and
``importlib.import_module("mcplab...")`` with a constant name. Two names of the root package are not
layers: ``from mcplab import __version__`` reads the one place the version is written (the root
imports nothing when loaded), and a public name of the root (``from mcplab import Client``) counts as
the module the root hands it on from.

Reading the table from the bottom: the wire, then what only needs the wire (the trace, the
lifecycle, the schema cache), the transports, the two sides, then what builds on whole servers and
clients (the ecosystem, the notebook views, the graders), and the command line on top.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Layer:
    name: str
    modules: tuple[str, ...]     # dotted prefixes: a package covers its submodules
    builds_on: tuple[str, ...]   # the rows right below; what they may import, this row may too
    why: str = ""


#: bottom first; a row names only rows above it in this list
LAYERS: tuple[Layer, ...] = (
    Layer("languages", ("mcplab.i18n", "mcplab.i18n.fonts"), (),
          "the language switch and the message lookup (_): every layer's text goes through it"),
    Layer("wire", ("mcplab.wire",), ("languages",), "messages, framing, versions, errors, SSE, headers: sans-IO"),
    Layer("platform", ("mcplab.portable", "mcplab.pipes"), (),
          "POSIX and Windows differences for a child process; its pipes read and written from anyio"),
    Layer("in-page HTTP", ("mcplab.transports.asgi", "mcplab.transports.background", "mcplab.transports.server_files"),
          (), "httpx calling an ASGI app in this process, the page's port table, a served server's sys streams: "
              "where the page has no socket and no process"),
    Layer("terminal text", ("mcplab.terminal",), ("languages",), "what a server wrote, made safe to print: escapes, cuts, tables"),
    Layer("oauth wire", ("mcplab.auth", "mcplab.auth.wire", "mcplab.auth.discovery", "mcplab.auth.story"), ("languages",),
          "challenges, masks, the well-known URLs, the flow told from a trace: OAuth's sans-IO parts"),
    Layer("files", ("mcplab.course", "mcplab.schemas", "mcplab.site"), ("wire",),
          "where the course and the official schemas are, and the course as a static JupyterLite site"),
    Layer("lifecycle", ("mcplab.lifecycle",), ("wire",), "both roles' handshake table and modern stamping"),
    Layer("trace", ("mcplab.trace",), ("wire",), "every frame that crossed, and its text and HTML"),
    Layer("transports", ("mcplab.transports",), ("trace", "platform", "oauth wire", "in-page HTTP"),
          "stdio, Streamable HTTP, memory: bytes to a server and back, recorded"),
    Layer("oauth resource server", ("mcplab.auth.resource", "mcplab.auth.scopes", "mcplab.auth.middleware"),
          ("oauth wire",),
          "token and scope checks the server runner wraps around its app (--auth)"),
    Layer("endpoint", ("mcplab.endpoint",), ("wire",),
          "what both sides do alike: answers matched to the requests sent, by id (anyio, no transport)"),
    Layer("client", ("mcplab.client",), ("lifecycle", "transports", "endpoint"), "Client, eras, MRTR, results"),
    Layer("server", ("mcplab.server",), ("lifecycle", "platform", "oauth resource server", "endpoint",
                                    "in-page HTTP"),
          "the toolkit, its handlers and runners, Streamable HTTP"),
    Layer("oauth client flow", ("mcplab.auth.client", "mcplab.auth.browser", "mcplab.auth.steps"), ("oauth wire", "server"),
          "the client's OAuth flow; its user agent listens for the redirect with the server's bind()"),
    Layer("bundled servers", ("servers",), ("server", "oauth resource server"),
          "servers/*.py: built on the toolkit alone"),
    Layer("place", ("mcplab.place",), ("transports", "server"),
          "where a lab runs: a child process on a machine, the same server file in process in the page"),
    Layer("host", ("mcplab.client.host",), ("client", "place"),
          "many servers, one catalogue, the agent loop: it starts its servers the way the place allows"),
    Layer("ecosystem", ("mcplab.ecosystem",), ("server", "trace"), "host configs, wiretap, proxy, balancer"),
    Layer("economics", ("mcplab.economics",), ("languages",), "the N×M model and its plots: knows nothing of the wire"),
    Layer("notebook", ("mcplab.notebook",), ("host", "ecosystem", "files"),
          "viewer, schema check, inspector, matrix"),
    Layer("grade", ("mcplab.grade",), ("notebook",), "the build labs' graders (their schema line is the notebook's)"),
    Layer("demo", ("mcplab.demo",), ("client", "server", "economics", "files"), "the terminal tour"),
    Layer("exercises", ("mcplab.exercises",), ("host", "ecosystem", "economics", "files"),
          "each lab's checks (a check that starts a process asks the place first), and the careless variants "
          "Lab 14's attacks succeed against"),
    Layer("translation tool", ("mcplab.i18n.catalogs", "mcplab.i18n.documents", "mcplab.i18n.messages",
                               "mcplab.i18n.notebooks", "mcplab.i18n.tool"), ("languages", "files"),
          "mcplab i18n: catalogs kept in step with the English, the Chinese edition built"),
    Layer("command line", ("mcplab.cli", "mcplab.install", "mcplab.launch", "mcplab.__main__",
                           "mcplab.lab_language"),
          ("demo", "grade", "translation tool", "terminal text"),
          "the mcplab command, its set-up and JupyterLab's launch; nothing imports it"),
)

ROOT_PACKAGE = "mcplab"  # the root: a face whose names load on first use; not a layer of its own


def reachable(layers: tuple[Layer, ...]) -> dict[str, set[str]]:
    """Each row → every row it may import (the transitive closure of ``builds_on``)."""
    below = {layer.name: set(layer.builds_on) for layer in layers}
    closed: dict[str, set[str]] = {}

    def walk(name: str, seen: tuple[str, ...]) -> set[str]:
        if name in seen:
            raise ValueError(f"the table goes round: {' → '.join((*seen, name))}")
        if name not in closed:
            found = set(below[name])
            for lower in below[name]:
                found |= walk(lower, (*seen, name))
            closed[name] = found
        return closed[name]

    for name in below:
        walk(name, ())
    return closed


def layer_of(module: str, layers: tuple[Layer, ...]) -> Layer | None:
    """The row whose longest prefix names ``module``."""
    best: tuple[int, Layer | None] = (-1, None)
    for layer in layers:
        for prefix in layer.modules:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best[0]:
                best = (len(prefix), layer)
    return best[1]


def modules_under(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted name → file, for every .py file below ``root/<package>``."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if "__pycache__" in parts or any(part.startswith(".") for part in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def imports_of(module: str, path: Path, known: set[str], faces: dict[str, str]) -> list[tuple[int, str]]:
    """(line, imported module) for every import of the project's own modules in one file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                name = f"{source}.{alias.name}"
                if name in known:
                    found.append((node.lineno, name))  # a module imported from its package
                elif source == ROOT_PACKAGE and alias.name == "__version__":
                    continue  # the version string; the root loads nothing with it
                elif source == ROOT_PACKAGE and alias.name in faces:
                    found.append((node.lineno, faces[alias.name]))
                else:
                    found.append((node.lineno, source))
        elif (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))
              and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value))
    return [(line, name) for line, name in found if name.split(".")[0] in {ROOT_PACKAGE, "servers"}]


def violations(root: Path, layers: tuple[Layer, ...], packages: tuple[str, ...] = ("mcplab", "servers"),
               faces: dict[str, str] | None = None) -> list[str]:
    """One sentence per import against the table, and per module the table does not place."""
    allowed = reachable(layers)
    modules = modules_under(root, packages)
    problems: list[str] = []
    for module, path in modules.items():
        if module == ROOT_PACKAGE:
            continue
        mine = layer_of(module, layers)
        if mine is None:
            problems.append(f"{module} ({path.relative_to(root)}) belongs to no layer: add it to a row")
            continue
        for line, target in imports_of(module, path, set(modules), faces or {}):
            if target == ROOT_PACKAGE:
                continue
            theirs = layer_of(target, layers)
            if theirs is None:
                problems.append(f"{path.relative_to(root)}:{line}: {module} imports {target}, which no layer holds")
            elif theirs.name != mine.name and theirs.name not in allowed[mine.name]:
                problems.append(f"{path.relative_to(root)}:{line}: {module} (layer {mine.name!r}) imports "
                                f"{target} (layer {theirs.name!r}); {mine.name!r} may import "
                                f"{sorted(allowed[mine.name]) or 'nothing of mcplab'}")
    return problems


def cycles_within(root: Path, package: str) -> list[list[str]]:
    """The import cycles among the modules below ``package`` (its ``__init__``, the face, left out): each a
    sorted list of the modules that import each other round (Tarjan's strongly connected components)."""
    modules = modules_under(root, (package.split(".")[0],))
    inside = {name: path for name, path in modules.items() if name.startswith(package + ".")}
    graph = {name: sorted({target for _, target in imports_of(name, path, set(modules), {})
                           if target in inside and target != name}) for name, path in inside.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(name: str) -> None:
        order[name] = low[name] = len(order)
        stack.append(name)
        for target in graph[name]:
            if target not in order:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in stack:
                low[name] = min(low[name], order[target])
        if low[name] == order[name]:
            component = []
            while not component or component[-1] != name:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in order:
            visit(name)
    return sorted(found)


def root_faces() -> dict[str, str]:
    """A public name of ``mcplab`` → the module it comes from (the root's own lazy table)."""
    import mcplab

    return {name: module for name, (module, _) in mcplab._LAZY.items()}


# --- the project ----------------------------------------------------------------------------------

def test_no_module_imports_against_the_layer_table():
    assert violations(ROOT, LAYERS, faces=root_faces()) == []


def test_the_table_is_ordered_bottom_first_and_never_goes_round():
    seen: set[str] = set()
    for layer in LAYERS:
        assert set(layer.builds_on) <= seen, f"{layer.name} builds on a row listed after it"
        seen.add(layer.name)
    reachable(LAYERS)  # raises on a cycle
    assert len(seen) == len(LAYERS), "two rows share a name"


def test_every_package_says_its_layer_in_its_docstring():
    for init in sorted((ROOT / "mcplab").glob("*/**/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "Layer:" in doc, f"{init.relative_to(ROOT)} does not say which layer it is and what it may import"


@pytest.mark.parametrize("package", ["mcplab", "servers", "mcplab.server", "mcplab.client", "mcplab.lifecycle", "mcplab.wire"])
def test_imports_inside_a_package_point_one_way(package):
    # A lazy or TYPE_CHECKING import counts: a reader following it would still go round.
    assert cycles_within(ROOT, package) == []


#: the old layout's flat names, written without their "mcplab." so that no rewrite of imports touches them
OLD_NAMES = (
    "jsonrpc", "versions", "errors", "sse", "headers", "connection", "opening", "eras", "mrtr", "results", "host",
    "trust", "agent", "careless", "trace_views", "trace_http", "schema_check", "playground", "matrix",
    "economics_plots", "hostconfig", "wiretap", "proxy", "balancer", "server.http", "server.http_legacy",
    "server.http_modern", "server.http_replies", "server.http_runner", "server.http_deadlines",
    "server.header_checks",
)


@pytest.mark.parametrize("old", [f"{ROOT_PACKAGE}.{name}" for name in OLD_NAMES])
def test_a_flat_module_name_of_the_old_layout_is_gone(old):
    # No shims: one name per module, so a reader who opens the file the import names finds the code.
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


# --- the check itself, on a small package made for it ---------------------------------------------

TOY_LAYERS = (
    Layer("wire", ("mcplab.wire",), ()),
    Layer("client", ("mcplab.client",), ("wire",)),
    Layer("server", ("mcplab.server",), ("wire",)),
    Layer("top", ("mcplab.cli",), ("client", "server")),
)


def _toy(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"mcplab/__init__.py": "__version__ = '0'\n", "mcplab/wire/__init__.py": "",
                       "mcplab/wire/jsonrpc.py": "", "mcplab/client/__init__.py": "",
                       "mcplab/server/__init__.py": "", **files}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_a_toy_package_that_follows_the_table_passes(tmp_path):
    root = _toy(tmp_path, {
        "mcplab/client/client.py": "from mcplab.wire import jsonrpc\nfrom mcplab import __version__\n",
        "mcplab/cli.py": "from mcplab.client import client\nimport mcplab.server\n",
    })
    assert violations(root, TOY_LAYERS, packages=("mcplab",)) == []


@pytest.mark.parametrize("wrong, culprit", [
    ("from mcplab.client import client\n", "mcplab.client.client"),           # up, by from-import
    ("import mcplab.cli\n", "mcplab.cli"),                                    # up, by import
    ("def later():\n    from mcplab import cli\n", "mcplab.cli"),             # up, lazily
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mcplab.server import x\n", "mcplab.server.x"),
    ("from importlib import import_module\nimport_module('mcplab.client.client')\n", "mcplab.client.client"),
    ("from .. import cli\n", "mcplab.cli"),                                   # up, relatively
])
def test_the_wire_importing_a_higher_layer_fails_the_check(tmp_path, wrong, culprit):
    root = _toy(tmp_path, {"mcplab/client/client.py": "", "mcplab/cli.py": "", "mcplab/server/x.py": "",
                           "mcplab/wire/bad.py": wrong})
    problems = violations(root, TOY_LAYERS, packages=("mcplab",))
    assert len(problems) == 1, problems
    assert problems[0].startswith("mcplab/wire/bad.py:") and f"imports {culprit} " in problems[0]
    assert "(layer 'wire')" in problems[0]


def test_a_sideways_import_between_the_two_sides_fails_the_check(tmp_path):
    root = _toy(tmp_path, {"mcplab/server/x.py": "", "mcplab/client/client.py": "from mcplab.server import x\n"})
    problems = violations(root, TOY_LAYERS, packages=("mcplab",))
    assert len(problems) == 1 and "(layer 'client') imports mcplab.server.x (layer 'server')" in problems[0]


def test_a_root_name_counts_as_the_module_that_holds_it(tmp_path):
    root = _toy(tmp_path, {"mcplab/client/client.py": "", "mcplab/wire/bad.py": "from mcplab import Client\n"})
    problems = violations(root, TOY_LAYERS, packages=("mcplab",), faces={"Client": "mcplab.client.client"})
    assert len(problems) == 1 and "imports mcplab.client.client (layer 'client')" in problems[0]


def test_a_module_no_row_holds_fails_the_check(tmp_path):
    root = _toy(tmp_path, {"mcplab/stray.py": ""})
    assert violations(root, TOY_LAYERS, packages=("mcplab",)) == [
        "mcplab.stray (mcplab/stray.py) belongs to no layer: add it to a row"]


@pytest.mark.parametrize("back", [
    "from mcplab.server import toolkit\n",                                      # at the top
    "def later():\n    from mcplab.server.toolkit import Server\n",            # lazily
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mcplab.server.toolkit import Server\n",
])
def test_a_cycle_inside_a_package_is_found_however_it_is_imported(tmp_path, back):
    root = _toy(tmp_path, {"mcplab/server/toolkit.py": "from mcplab.server import handlers\n",
                           "mcplab/server/handlers.py": "from mcplab.server import view\n",
                           "mcplab/server/view.py": back, "mcplab/server/content.py": ""})
    assert cycles_within(root, "mcplab.server") == [
        ["mcplab.server.handlers", "mcplab.server.toolkit", "mcplab.server.view"]]
    (root / "mcplab/server/view.py").write_text("from mcplab.server import content\n", encoding="utf-8")
    assert cycles_within(root, "mcplab.server") == []


def test_a_table_that_goes_round_is_refused():
    with pytest.raises(ValueError, match="goes round"):
        reachable((Layer("a", ("x",), ("b",)), Layer("b", ("y",), ("a",))))
