"""The suite's in-memory part again inside Pyodide: CPython 3.14 compiled to WebAssembly, as the page runs it.

The browser edition's kernel is Pyodide (``mcplab site``), where there are no processes and no sockets
and the event loop is the page's. These tests run a part of the suite there, on Node, with the very
runtime and wheels the site is built from (the site cache, filled by ``mcplab site fetch``), the checkout
mounted as it is: the wire, the lifecycle, the toolkit and both eras' servers, the client over memory, a
bundled server run in process, the trace. Tests that start a process or serve HTTP are left out
(markers), and so is trio (Pyodide has no trio).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import SCHEMAS_MISSING, SPEC_DIR, need, schema_path
from mcplab.wire.versions import ALL_VERSIONS
from mcplab import site
from mcplab.site import build as site_build

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / ".node" / "node_modules" / ".bin" / "node"
# Files whose every in-memory test runs in the page; a test of these that fails there fails here.
IN_THE_PAGE = ["test_endpoint.py", "test_in_process.py", "test_client_memory.py", "test_client_modern.py",
               "test_client_modern_headers.py", "test_trace.py", "test_server_modern_mrtr.py",
               "test_server_cache_hints.py", "test_server_toolkit.py", "test_server_schema.py",
               "test_server_modern.py", "test_asgi_driver.py", "test_http_in_page.py", "test_grade_in_process.py"]
MARKERS = "not subprocess and not http and not interop and not conformance and not browser"

pytestmark = pytest.mark.subprocess


@pytest.fixture(scope="module")
def runtime(tmp_path_factory) -> tuple[Path, Path]:
    """Pyodide unpacked from its locked tarball, and the locked wheels, from the site cache."""
    need(NODE.is_file(), f"Node 22 from `make test` ({NODE.relative_to(ROOT)}) runs Pyodide")
    _, entries = site.read_lock()
    cache = site.cache_dir()
    missing = [e.file for e in entries if not site.cached(e, cache).is_file()]
    need(not missing, f"the site cache lacks {len(missing)} locked files: run `mcplab site fetch`")
    folder = tmp_path_factory.mktemp("pyodide")
    runtime, wheels = folder / "runtime", folder / "wheels"
    runtime.mkdir()
    wheels.mkdir()
    for entry in entries:
        if site.sha256_of(site.cached(entry, cache)) != entry.sha256:
            pytest.fail(f"{entry.file} in the site cache is not the locked file (SHA-256 differs)")
        if entry.kind == "pyodide":  # the runtime's files, and its own lock (the site writes one anew)
            lock = site_build._unpack_pyodide(site.cached(entry, cache), runtime)
            (runtime / "pyodide-lock.json").write_text(json.dumps(lock), encoding="utf-8")
        else:
            shutil.copyfile(site.cached(entry, cache), wheels / entry.file)
    return runtime, wheels


def run_in_pyodide(runtime: tuple[Path, Path], *pytest_args: str, mount: tuple[Path, ...] = ()
                   ) -> subprocess.CompletedProcess:
    folder, wheels = runtime
    return subprocess.run([str(NODE), "--experimental-wasm-jspi", str(ROOT / "tests" / "pyodide_run.mjs"),
                           str(folder), str(wheels), str(ROOT), str(SPEC_DIR), *map(str, mount), "--",
                           *pytest_args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_the_in_memory_suite_passes_in_pyodide_on_python_3_14(runtime, tmp_path):
    report = tmp_path / "report.xml"
    done = run_in_pyodide(runtime, "-q", "-m", MARKERS, "-k", "not trio", f"--junitxml={report}",
                          *(f"tests/{name}" for name in IN_THE_PAGE), mount=(tmp_path,))
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:]
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "failed" not in summary and "error" not in summary, summary
    # Skipped there: the machine's emulation of the page's loop (the page's own test runs), and, with
    # no official schemas here, the tests that need them (as on the machine; under CI=true they fail).
    from xml.etree import ElementTree

    reasons = [skip.get("message", "").removeprefix("Skipped: ")
               for skip in ElementTree.parse(report).getroot().iter("skipped")]
    assert set(reasons) <= {SCHEMAS_MISSING, "asyncio's selector loop needs a socket pair; the page's own loop "
                                             "is the next test's"}, reasons
    if all(schema_path(version) for version in ALL_VERSIONS):
        assert int(re.search(r"(\d+) passed", summary).group(1)) >= 370, summary  # 377 on 2026-12-01


def test_pyodide_is_python_3_14_on_emscripten_and_mcplab_and_its_playground_place_servers_in_process(runtime, tmp_path):
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import sys\n"
        "import pytest\n"
        "from mcplab import place\n"
        "from mcplab.transports.in_process import InProcessTransport\n\n"
        "def test_where():\n"
        "    assert sys.platform == 'emscripten' and sys.version_info[:2] == (3, 14)\n"
        "    assert place.IN_BROWSER\n"
        "    assert type(place.local(['python', 'servers/weather.py'])) is InProcessTransport\n\n"
        "@pytest.fixture\n"
        "def anyio_backend():\n"
        "    return 'asyncio'\n\n"
        "@pytest.mark.anyio\n"
        "async def test_the_playground_starts_a_bundled_server_in_the_page():\n"
        "    from mcplab import notebook\n"
        "    playground = notebook.playground('weather')\n"
        "    await playground.connect()\n"
        "    assert type(playground.client.transport) is InProcessTransport\n"
        "    assert (await playground.client.call_tool('get_weather', {'city': 'Tokyo'})).text.startswith('Tokyo')\n"
        "    await playground.close()\n",
        encoding="utf-8")
    done = run_in_pyodide(runtime, "-q", "-p", "no:randomly", str(probe), "--rootdir", str(tmp_path), mount=(tmp_path,))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout
