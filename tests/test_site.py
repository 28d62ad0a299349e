"""The course as a static JupyterLite site (``mcplab site``): built offline from the locked files, served by
``python -m http.server`` on 127.0.0.1, and opened in Debian's headless Chromium with every other host
cut off, where the Pyodide kernel boots and a cell imports mcplab.

The site is built once for the module, by the real command, with no network at all where the machine
lets a test take it away (``unshare --net``, as root). Its inputs are the locked files in the user's
cache, which ``make test`` fetches (``mcplab site fetch``); without them, or without the site extra,
Chromium or Playwright, the tests that need them skip, and fail under CI=true. What the page did is
kept in ``test-output/site/``: a screenshot of the notebook and the times measured (information, not
assertions).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

import mcplab
from conftest import ROOT, need
from mcplab import site
from site_helpers import (APP_READY, OPEN, RAN, RUN_FIRST_CELL, START_RUN_ALL, Outside, StaticServer, closed_port,
                          sanitized, stored_outputs)

CHROMIUM = "/usr/bin/chromium"
OUTPUT = ROOT / "test-output" / "site"
KERNEL_DEADLINE = 300  # s for the first cell of a new kernel: ~16 s here idle, far more on a loaded 2-core machine
# Chromium's own calls home (sign-in, autofill, component updates), which are no request of the site's
QUIET = ["--disable-features=AutofillServerCommunication,OptimizationHints,OptimizationGuideModelDownloading,"
         "MediaRouter,Translate,CertificateTransparencyComponentUpdater,NetworkTimeServiceQuerying",
         "--disable-extensions", "--allow-browser-signin=false",
         "--disable-client-side-phishing-detection", "--disable-default-apps", "--no-pings", "--disable-domain-reliability",
         "--disable-breakpad", "--metrics-recording-only", "--no-default-browser-check", "--allow-pre-commit-input"]
# ... and the two it still calls with every flag above: Chromium's, not the page's (a page's own request
# to them would be in `aborted`, and the site's configuration names no such host)
CHROMIUM_OWN = {"accounts.google.com", "update.googleapis.com"}
CDN_HOSTS = ("cdn.jsdelivr.net", "jsdelivr", "unpkg.com", "pypi.org", "pythonhosted.org", "npmjs.org", "cdnjs",
             "esm.sh", "githubusercontent.com")
CONFIG_NAMES = ("jupyter-lite.json", "jupyter-lite.ipynb", "overrides.json", "all.json", "pyodide-lock.json")
ENTRIES = site.read_lock()[1]


def run_site(*args: str, env: dict | None = None, offline: bool = False) -> subprocess.CompletedProcess:
    prefix = ["unshare", "--net", "--"] if offline and _can_unshare() else []
    return subprocess.run([*prefix, sys.executable, "-m", "mcplab.cli", "site", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=600)


def _can_unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "--net", "--", "true"], capture_output=True).returncode == 0


def digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def need_cache() -> Path:
    cache = site.cache_dir()
    complete = all(site.cached(e, cache).is_file() and site.sha256_of(site.cached(e, cache)) == e.sha256
                   for e in ENTRIES)
    need(complete, f"the site's locked files are not all in {cache} (make test fetches them: mcplab site fetch)")
    return cache


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The site, built once by ``mcplab site build`` from the user's cache: (folder, seconds it took)."""
    need_cache()
    for module in ("jupyterlite_core", "jupyterlite_pyodide_kernel", "hatchling", "jupyter_server"):
        need(importlib.util.find_spec(module) is not None, f"{module} is missing: install the site extra "
                                                           f"(pip install -e '.[site]')")
    out = tmp_path_factory.mktemp("site") / "site"
    started = time.monotonic()
    done = run_site("build", "--out", str(out), offline=True)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    return out, seconds


# --- the lock --------------------------------------------------------------------------------------------

def test_the_lock_holds_one_registry_file_for_pyodide_and_each_wheel_the_module_names():
    expected = {site.PYODIDE, *site.BOOT.items(), *site.PAGE.items(), *site.TESTS.items()}
    assert {(e.name, e.version) for e in ENTRIES} == expected and len(ENTRIES) == len(expected)
    for entry in ENTRIES:
        assert re.fullmatch(r"https://(registry\.npmjs\.org|files\.pythonhosted\.org)/\S+/" + re.escape(entry.file),
                            entry.url), entry
        assert re.fullmatch(r"[0-9a-f]{64}", entry.sha256) and entry.size > 0


def test_the_page_wheels_are_the_versions_constraints_txt_pins_for_python_3_11_and_later():
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        found = re.match(r"([A-Za-z0-9_.-]+)==(\S+)(?:\s*;\s*([^#]+))?", line)
        if found and (not found.group(3) or ">= '3.11'" in found.group(3) or "sys_platform" not in found.group(3)
                      and "<" not in found.group(3)):
            pins[site.canonical(found.group(1))] = found.group(2)
    shared = {name: version for name, version in {**site.PAGE, **site.TESTS}.items() if name not in site.PAGE_ONLY}
    assert {name: pins.get(name) for name in shared} == shared
    assert all(pins.get(name) != site.PAGE[name] for name in site.PAGE_ONLY)  # else it would not be page-only


# --- fetch -------------------------------------------------------------------------------------------

def _mirror(folder: Path, cache: Path, tampered: str | None = None) -> None:
    """``folder`` holding every locked file by name: links to the cache, one a real file with a byte changed."""
    folder.mkdir()
    for entry in ENTRIES:
        if entry.file == tampered:
            data = bytearray(site.cached(entry, cache).read_bytes())
            data[len(data) // 2] ^= 0xFF
            (folder / entry.file).write_bytes(bytes(data))
        else:
            (folder / entry.file).symlink_to(site.cached(entry, cache))


SMALL = min(ENTRIES, key=lambda e: e.size)  # the file a row tampers with


@pytest.mark.http
@pytest.mark.parametrize("where", ["in the cache", "at the source"])
def test_fetch_refuses_a_file_whose_sha256_differs_and_names_both_digests(tmp_path, where):
    cache = need_cache()
    mine = tmp_path / "cache"
    if where == "in the cache":
        shutil.copytree(cache, mine)  # a tampered cached copy; the mirror serves the genuine file
        target = site.cached(SMALL, mine)
        target.write_bytes(target.read_bytes() + b"\0")
    _mirror(tmp_path / "mirror", cache, tampered=SMALL.file if where == "at the source" else None)
    server = StaticServer(tmp_path / "mirror", tmp_path / "http.log")
    try:
        done = run_site("fetch", "--cache-dir", str(mine), "--mirror", server.url)
    finally:
        server.stop()
    named = [line for line in done.stderr.splitlines() if SMALL.file in line]
    assert len(named) == 1 and SMALL.sha256 in named[0] and re.search(r"SHA-256 [0-9a-f]{64}, not the locked", named[0])
    if where == "in the cache":  # refused, removed, and the genuine file fetched in its place
        assert done.returncode == 0, done.stderr
        assert site.sha256_of(site.cached(SMALL, mine)) == SMALL.sha256
    else:  # refused: nothing of it cached, not even a temporary file; every other file is
        assert done.returncode == 1 and "refused, nothing cached" in named[0]
        assert not (mine / SMALL.sha256).exists() or not any((mine / SMALL.sha256).iterdir())
        assert all(site.sha256_of(site.cached(e, mine)) == e.sha256 for e in ENTRIES if e is not SMALL)
    assert "1 missing" in done.stdout if where == "at the source" else f"{len(ENTRIES)} of {len(ENTRIES)}" in done.stdout


def test_fetch_with_no_registry_in_reach_says_one_sentence_per_missing_file_and_exits_1(tmp_path):
    mine = tmp_path / "cache"
    done = run_site("fetch", "--cache-dir", str(mine), "--mirror", f"http://127.0.0.1:{closed_port()}")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == len(ENTRIES)
    for entry, line in zip(ENTRIES, lines):
        assert line.startswith(f"mcplab site: {entry.file} is not in the cache: 127.0.0.1 could not be reached")
    assert done.stdout.strip() == (f"mcplab site: 0 of {len(ENTRIES)} locked files are in {mine}, each checked "
                                   f"against its SHA-256; {len(ENTRIES)} missing: run `mcplab site fetch` online")
    assert not any(p.is_file() for p in mine.rglob("*"))


# --- build: refusals -----------------------------------------------------------------------------------

def test_build_with_an_empty_cache_exits_1_naming_every_file_and_the_fetch(tmp_path):
    out = tmp_path / "site"
    done = run_site("build", "--out", str(out), "--cache-dir", str(tmp_path / "empty"))
    assert done.returncode == 1
    assert done.stderr.startswith(f"mcplab site build: {len(ENTRIES)} of the {len(ENTRIES)} locked files are not in ")
    assert all(entry.file in done.stderr for entry in ENTRIES)
    assert done.stderr.strip().endswith("run `mcplab site fetch` (online) first")
    assert not out.exists() and not list(tmp_path.glob(".site.building-*"))


def _link(out: Path) -> None:
    (out.parent / "elsewhere").mkdir()
    (out.parent / "elsewhere" / "notes.txt").write_text("mine")
    out.symlink_to(out.parent / "elsewhere")


def _folder(out: Path) -> None:
    out.mkdir()
    (out / "notes.txt").write_text("mine")


def _file(out: Path) -> None:
    out.write_text("mine")


@pytest.mark.parametrize("make, said", [(_link, "is a symbolic link"), (_folder, "is not a site mcplab built"),
                                        (_file, "is a file, not a folder")], ids=["link", "someone's folder", "file"])
def test_build_leaves_an_output_it_did_not_make_alone(tmp_path, make, said):
    out = tmp_path / "site"
    make(out)
    before = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    done = run_site("build", "--out", str(out), "--cache-dir", str(tmp_path / "empty"))
    assert done.returncode == 1 and said in done.stderr and "left alone" in done.stderr
    assert {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


# --- build: the site -------------------------------------------------------------------------------------

@pytest.mark.subprocess
def test_no_configuration_file_of_the_site_names_a_cdn_and_pyodide_is_local(built):
    out, _ = built
    configs = [p for p in out.rglob("*") if p.name in CONFIG_NAMES]
    assert len(configs) > 5
    for path in configs:
        text = path.read_text(encoding="utf-8")
        assert not [host for host in CDN_HOSTS if host in text], path
    settings = json.loads((out / "jupyter-lite.json").read_text())["jupyter-config-data"]["litePluginSettings"]
    kernel = settings[site.KERNEL_PLUGIN]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.mjs" and kernel["disablePyPIFallback"] is True
    assert all(url.startswith("./") for url in kernel["pipliteUrls"])


@pytest.mark.subprocess
def test_the_sites_pyodide_lock_names_exactly_the_wheels_beside_it_with_their_digests(built):
    out, _ = built
    folder = out / "static" / "pyodide"
    lock = json.loads((folder / "pyodide-lock.json").read_text())
    packages = lock["packages"]
    assert lock["info"]["python"].startswith("3.14")
    assert {p["file_name"] for p in packages.values()} == {p.name for p in folder.glob("*.whl")}
    for package in packages.values():
        assert hashlib.sha256((folder / package["file_name"]).read_bytes()).hexdigest() == package["sha256"]
        assert set(package["depends"]) <= set(packages), package["name"]
    mcplab_entry = packages["mcplab"]
    assert mcplab_entry["version"] == mcplab.__version__ and mcplab_entry["imports"] == ["mcplab"]
    assert {"anyio", "httpx", "starlette", "ipywidgets", "jsonschema"} <= set(mcplab_entry["depends"])
    assert packages["jsonschema"]["version"] == "4.17.3" and packages["pyrsistent"]["depends"] == []
    assert not {"rpds-py", "referencing", "cryptography", "matplotlib", "numpy"} & set(packages)
    assert (out / "files" / "labs" / "00_start_here.ipynb").is_file() and (out / "files" / "servers" / "weather.py").is_file()
    assert (out / "files" / "labs" / "build" / "my_server.py").is_file()  # not left out as a "build" folder


@pytest.mark.subprocess
def test_deleting_the_site_and_building_again_gives_the_same_bytes(built):
    out, _ = built
    first = digests(out)
    shutil.rmtree(out)
    done = run_site("build", "--out", str(out), offline=True)
    assert done.returncode == 0, done.stderr
    second = digests(out)
    assert len(first) > 100 and first == second


@pytest.mark.subprocess
def test_from_a_wheel_install_the_build_repacks_the_installed_mcplab_into_the_same_files(built, tmp_path):
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    need(uv is not None, "uv is not installed (the test extra has it)")
    wheel = next((built[0] / "static" / "pyodide").glob("mcplab-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    subprocess.run([uv, "pip", "install", "--quiet", "--offline", "--no-deps", "--python", str(venv / "bin" / "python"),
                    str(wheel)], check=True)
    program = ("import sys; from pathlib import Path; from mcplab import course; from mcplab.site import build as site_build; "
               "assert not course.is_checkout(); "
               "print(site_build._repack_installed(Path(sys.argv[1]), 1796083200))")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", program, str(tmp_path)], capture_output=True, text=True,
                          cwd=tmp_path, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(done.stdout.strip()) as repacked, zipfile.ZipFile(wheel) as built_wheel:
        names = set(repacked.namelist())
        assert names == set(built_wheel.namelist())
        assert [n for n in names if not n.endswith("/RECORD") and repacked.read(n) != built_wheel.read(n)] == []


def launch(playwright, *args: str):
    """Debian's Chromium, headless, with every quieting flag (QUIET) and ``args``."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=[
        "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", *QUIET, *args])


def only_loopback(url: str, aborted: list[str]):
    """A route that lets through what ``url`` serves and aborts (and records) every other request."""
    def route(request_route) -> None:
        if request_route.request.url.startswith(url + "/"):
            request_route.continue_()
        else:
            aborted.append(request_route.request.url)
            request_route.abort()
    return route


def test_the_sites_mcplab_carries_the_official_schemas_found_here_each_with_its_pinned_digest(built):
    """The page's badges need the schemas in the page: the build puts each revision it finds (where the
    machine's badges find theirs) into the page's mcplab wheel, at the pinned digest, and says which."""
    from mcplab import schemas

    need(all(schemas.schema_file(v) for v in schemas.ALL_VERSIONS),
         f"the official schemas are not all in {schemas.source(schemas.spec_dir())} (mcplab schemas fetches them)")
    out, _ = built
    wheel = next((out / "static" / "pyodide").glob("mcplab-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        record = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/RECORD"))
        for version in schemas.ALL_VERSIONS:
            name = f"mcplab/{schemas.PACKAGED}/{version}/{schemas.SCHEMA_FILE}"
            assert schemas.digest(archive.read(name)) == schemas.DIGESTS[version], name
            assert f"\n{name},sha256=" in record, name
    assert json.loads((out / site.MARKER).read_text())["schemas"] == sorted(schemas.ALL_VERSIONS)


# The official schemas as the page's badges find them: how many revisions, and from where.
IN_PAGE_SCHEMAS = """from mcplab import schemas
print(sum(schemas.schema_file(v) is not None for v in schemas.ALL_VERSIONS), schemas.source(schemas.spec_dir()).split(" (")[0])"""


# The bundled weather server started the way the place allows (in the page: its file, from the site's
# contents beside the labs, run in the kernel), and asked over the client as on a machine.
IN_PAGE_WEATHER = """from mcplab import Client, place
async with Client(place.local(["python", "../servers/weather.py"])) as client:
    result = await client.call_tool("get_weather", {"city": "Beijing"})
print(type(client.transport).__name__, result.text, client.protocol_version)"""


@pytest.mark.browser
@pytest.mark.http
def test_the_lab_boots_the_pyodide_kernel_offline_and_a_cell_imports_mcplab(built, tmp_path):
    need(Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing (make test installs Debian's chromium when run as root)")
    need(importlib.util.find_spec("playwright") is not None, "Playwright for Python is not installed")
    from playwright.sync_api import sync_playwright

    out, build_seconds = built
    OUTPUT.mkdir(parents=True, exist_ok=True)
    server, outside = StaticServer(out, tmp_path / "http.log"), Outside()
    aborted: list[str] = []
    try:
        with sync_playwright() as playwright:
            chromium = launch(playwright, f"--proxy-server=http://{outside.address}")
            context = chromium.new_context(viewport={"width": 1400, "height": 1000})
            context.route("**/*", only_loopback(server.url, aborted))
            page = context.new_page()
            started = time.monotonic()
            page.goto(f"{server.url}/lab/index.html")
            page.wait_for_function(APP_READY, timeout=120_000)
            page.evaluate(OPEN, "labs/00_start_here.ipynb")
            printed = page.evaluate(RUN_FIRST_CELL, ["import sys, mcplab; print(sys.platform, mcplab.__version__)",
                                                     KERNEL_DEADLINE])
            answered = time.monotonic() - started
            weather = page.evaluate(RUN_FIRST_CELL, [IN_PAGE_WEATHER, KERNEL_DEADLINE])
            badges = page.evaluate(RUN_FIRST_CELL, [IN_PAGE_SCHEMAS, KERNEL_DEADLINE])
            page.screenshot(path=OUTPUT / "lab-first-cell.png")
            chromium.close()
    finally:
        server.stop()
        outside.stop()
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    (OUTPUT / "measured.json").write_text(json.dumps({
        "build seconds": round(build_seconds, 1), "site bytes": size,
        "open to first cell answered seconds": round(answered, 1),
        "Chromium's own calls refused": len(outside.seen)}, indent=1) + "\n")
    assert printed == f"emscripten {mcplab.__version__}\n"
    assert weather == "InProcessTransport Beijing: sunny (晴), 12 °C, humidity 30%, wind 9 km/h 2025-11-25\n", weather
    carried = json.loads((out / site.MARKER).read_text())["schemas"]
    assert badges == (f"{len(carried)} the site, put in when it was built\n" if carried else "0 the cache\n"), badges
    assert aborted == [] and outside.hosts() - CHROMIUM_OWN == set(), outside.seen


# The labs that run top to bottom in the page, each in both editions. Where a cell shows what only a process
# has (its stderr, its exit code, a signal), the page runs its own equivalent (mcplab/place.py), and every
# cell's outputs are still the stored ones.
IN_THE_PAGE = [f"labs/{edition}{name}.ipynb"
               for name in ("00_start_here", "01_jsonrpc", "02_handshake", "03_primitives", "04_host",
                            "05_streamable_http", "06_stateless", "07_scaling", "08_economics", "09_build_server",
                            "11_build_server_two")
               for edition in ("", "zh-CN/")]
DRAW_DEADLINE = 60_000  # ms for Vega to draw a view once its output is in the page (a second or two here)


AT_ONCE = 2  # labs running at once: a page's kernel keeps one core busy, and this machine has two
RUN_ALL_TESTS = {"test_a_lab_that_runs_wholly_in_the_page_runs_top_to_bottom_with_its_stored_outputs",
                 "test_a_lab_that_needs_the_local_install_in_part_runs_the_rest_in_the_page_and_says_so_for_each_cell_it_cannot"}


@pytest.fixture(scope="module")
def site_in_chromium(built, tmp_path_factory):
    """The built site served on 127.0.0.1 and one headless Chromium for the module: (server, chromium, aborted),
    ``aborted`` every request the pages asked of another host."""
    need(Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing (make test installs Debian's chromium when run as root)")
    need(importlib.util.find_spec("playwright") is not None, "Playwright for Python is not installed")
    from playwright.sync_api import sync_playwright

    out, _ = built
    server, aborted = StaticServer(out, tmp_path_factory.mktemp("served") / "http.log"), []
    OUTPUT.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as playwright:
            chromium = launch(playwright)
            yield server, chromium, aborted
            chromium.close()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def ran_in_the_page(site_in_chromium, request):
    """Run All of every selected lab of IN_THE_PAGE, each in a new browser context (as each student opens a
    link), AT_ONCE at a time: {path: the code cells' outputs, or the error that stopped the run}."""
    server, chromium, aborted = site_in_chromium
    selected = [item.callspec.params["path"] for item in request.session.items
                if getattr(item, "originalname", "") in RUN_ALL_TESTS]
    ran: dict = {}
    running: list = []
    while selected or running:
        while selected and len(running) < AT_ONCE:
            path = selected.pop(0)
            context = chromium.new_context(viewport={"width": 1400, "height": 1000})
            context.route("**/*", only_loopback(server.url, aborted))
            page = context.new_page()
            page.goto(f"{server.url}/lab/index.html")
            page.wait_for_function(APP_READY, timeout=120_000)
            page.evaluate(START_RUN_ALL, [path, KERNEL_DEADLINE])
            running.append((path, context, page))
        path, context, page = running.pop(0)
        # RUN_ALL's own deadline fires first; this one only keeps a page that never settles from hanging
        page.wait_for_function(RAN, timeout=(KERNEL_DEADLINE + 60) * 1000)
        ran[path] = page.evaluate(RAN)
        page.screenshot(path=OUTPUT / f"run-all-{Path(path).stem}-{Path(path).parent.name}.png")
        context.close()
    return ran, aborted


@pytest.mark.browser
@pytest.mark.http
@pytest.mark.parametrize("path", IN_THE_PAGE)
def test_a_lab_that_runs_wholly_in_the_page_runs_top_to_bottom_with_its_stored_outputs(ran_in_the_page, path):
    """Run All in a new page's kernel: every code cell's outputs are the stored ones under nbval's rules;
    no request left 127.0.0.1."""
    ran, aborted = ran_in_the_page
    assert "failed" not in ran[path], ran[path]
    config = ROOT / "labs" / "nbval-sanitize.cfg"
    page, stored = sanitized(ran[path]["ran"], config), sanitized(stored_outputs(ROOT / path), config)
    assert page == stored, path
    assert aborted == []



# The first Vega-Lite view drawn in an open notebook (cells run by RUN_FIRST_CELL go on top, so: the
# newest one): how many pixels of its canvas are ink, not background, and the canvas as a data URL;
# [0, ""] while none is drawn.
VEGA_VIEW = """id => {
  const canvas = document.querySelector(`#${id} .jp-Cell .vega-embed canvas`);
  if (!canvas || !canvas.width || !canvas.height) return [0, ''];
  const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let ink = 0;
  for (let i = 0; i < pixels.length; i += 4) if (pixels[i + 3] > 0 && pixels[i] + pixels[i + 1] + pixels[i + 2] < 600) ink++;
  return [ink, canvas.toDataURL()];
}"""
VEGA_DRAWN = f"([id, before]) => {{ const [ink, url] = ({VEGA_VIEW})(id); return ink > 1000 && url !== before; }}"


@pytest.mark.browser
@pytest.mark.http
def test_a_lab_08_figure_and_its_explorer_are_drawn_in_the_page_by_jupyterlabs_own_vega_lite(site_in_chromium):
    """No matplotlib in the page: a plot cell's chart comes out as Vega-Lite, which the site's JupyterLab
    draws offline (a canvas with ink on it), and the explorer's figure is drawn anew when a student moves a
    slider."""
    server, chromium, aborted = site_in_chromium
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    context.route("**/*", only_loopback(server.url, aborted))
    try:
        page = context.new_page()
        page.goto(f"{server.url}/lab/index.html")
        page.wait_for_function(APP_READY, timeout=120_000)
        panel = page.evaluate(OPEN, "labs/08_economics.ipynb")
        said = page.evaluate(RUN_FIRST_CELL, ["from mcplab import economics\n"
                                              "figure = economics.plot_graphs(3, 4)\n"
                                              "import sys; print(sorted({'matplotlib', 'numpy'} & set(sys.modules)))\n"
                                              "figure", KERNEL_DEADLINE])
        page.wait_for_function(VEGA_DRAWN, arg=[panel, ""], timeout=DRAW_DEADLINE)
        figure_ink, figure = page.evaluate(VEGA_VIEW, panel)
        page.evaluate(RUN_FIRST_CELL, ["panel = economics.explore(3, 4)\npanel", KERNEL_DEADLINE])
        page.wait_for_function(VEGA_DRAWN, arg=[panel, figure], timeout=DRAW_DEADLINE)
        explorer_ink, explorer = page.evaluate(VEGA_VIEW, panel)
        # A student moves the first slider (N apps) one step with the keyboard: the widget tells the
        # kernel, which redraws the figure into the explorer's output area.
        page.locator(f"#{panel} .widget-slider .noUi-handle").first.press("ArrowRight")
        page.wait_for_function(VEGA_DRAWN, arg=[panel, explorer], timeout=DRAW_DEADLINE)
        moved = page.evaluate(RUN_FIRST_CELL, ["print(panel.sliders['n'].value, panel.redraws)", KERNEL_DEADLINE])
        OUTPUT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=OUTPUT / "08_economics-explorer-in-the-page.png")
    finally:
        context.close()
    assert said.startswith("[]\n"), said  # neither was loaded to draw the figure
    assert figure_ink > 1_000 and explorer_ink > 1_000 and moved == "4 2\n", moved
    assert aborted == []


# The labs that run what they can in the page, each in both editions: a cell that needs the local install
# opens with `%%machine WHAT` (mcplab/notebook/machine.py) and carries the `needs-machine` tag; in the page it
# prints the sentence for WHAT, in the notebook's language, and nothing else.
PART_IN_THE_PAGE = [f"labs/{edition}{name}.ipynb" for name in ("10_build_client", "12_build_client_two", "13_authorization", "14_attacks", "15_ecosystem")
                    for edition in ("", "zh-CN/")]


def machine_sentences(path: str) -> dict[int, str]:
    """The tagged code cells of ``path`` by position → the line the page prints for each, in the current language."""
    from mcplab.notebook import machine

    cells = [c for c in json.loads((ROOT / path).read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    return {i: machine.sentence("".join(c["source"]).splitlines()[0].split(maxsplit=1)[1]) + "\n"
            for i, c in enumerate(cells) if machine.TAG in c.get("metadata", {}).get("tags", [])}


@pytest.mark.browser
@pytest.mark.http
@pytest.mark.parametrize("path", PART_IN_THE_PAGE)
def test_a_lab_that_needs_the_local_install_in_part_runs_the_rest_in_the_page_and_says_so_for_each_cell_it_cannot(
        ran_in_the_page, path, monkeypatch):
    """Run All in a new page's kernel: each `needs-machine` cell prints its one sentence (no error, its body
    not run), and every other code cell's outputs are the stored ones under nbval's rules."""
    from mcplab import i18n

    ran, aborted = ran_in_the_page
    assert "failed" not in ran[path], ran[path]
    config = ROOT / "labs" / "nbval-sanitize.cfg"
    page, stored = sanitized(ran[path]["ran"], config), sanitized(stored_outputs(ROOT / path), config)
    assert len(page) == len(stored), path
    monkeypatch.setenv(i18n.ENV, "zh" if "/zh-CN/" in path else "en")  # as the notebook's first cell sets it
    said = machine_sentences(path)
    assert said, f"{path} has no cell tagged needs-machine"
    for index, sentence in said.items():
        assert page[index] == [["stdout", sentence]], (path, index, page[index])
        page[index] = stored[index] = ["needs the local install"]
    assert page == stored, path
    assert aborted == []
