"""``mcplab site``: the course as a static JupyterLite site, built from registry packages only.

Theory of operation
-------------------
A teacher serves one folder (``python -m http.server``) and every student opens the labs in the
browser: JupyterLite's JupyterLab with the Pyodide kernel, Python 3.14 compiled to WebAssembly,
nothing installed, nothing asked of any other host. Three steps make the folder::

    mcplab site lock     for authors, online: site-lock.json from the versions written below
    mcplab site fetch    online: every locked file into the cache, each checked against its SHA-256
    mcplab site build    offline: the site, from the cache and the checkout (default: site/)

The lock (``site-lock.json`` beside this module) holds one entry per file the page loads: the npm
tarball of Pyodide (:data:`PYODIDE`), the pure-Python wheels the kernel boots with (:data:`BOOT`, at
the versions Pyodide's own ``pyodide-lock.json`` names) and the wheels mcplab needs in the page
(:data:`PAGE`, at the versions constraints.txt pins): name, version, the registry URL, size and
SHA-256, read from the npm registry and PyPI's JSON API. The cache is content-addressed
(``$XDG_CACHE_HOME/mcplab/site/<sha256>/<file>``, default ``~/.cache``): a file is written under a
temporary name, renamed into place only when its digest is the locked one, and checked again
before every use, so a damaged or tampered file is named, refused and never built into a site.

The build copies Pyodide into ``static/pyodide/`` with the wheels beside it and writes that
folder's ``pyodide-lock.json`` anew: only the packages the site holds, each with the digest of the
file it holds (Pyodide re-packs even pure wheels, so its own digests never match PyPI's), plus
mcplab's wheel, built from the checkout by hatchling (or re-packed from an installed mcplab). The
kernel loads, before every cell, the lock's packages that the cell imports, so ``import mcplab``
brings mcplab and its dependencies with no ``%pip`` cell and no cost at boot; a package the site
does not hold is a plain ``ModuleNotFoundError``. mcplab's dependencies that no page can load
(:data:`LEFT_OUT`) are left out of its entry. The labs and the bundled servers go into the site's
contents side by side, as in a checkout. ``jupyter lite build`` then runs in a fresh folder (no
stale ``.jupyterlite.doit.db``), with every environment default ignored, the two lab extensions
named, the PyPI fallback off and every timestamp clamped to the lock's date: building twice gives
the same bytes. The result is checked for CDN URLs in its configuration, then renamed over the
output folder, which is replaced only when it is empty or a site this command built.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from mcplab import __version__, course

PYODIDE = ("pyodide", "314.0.7")  # the kernel package pins 314.0.6; npm serves 314.0.7, which boots it
BOOT = {  # what the Pyodide kernel loads as it starts, at the versions of Pyodide's pyodide-lock.json
    "micropip": "0.11.1", "packaging": "26.1", "ipython": "9.12.0", "traitlets": "5.14.3", "pygments": "2.20.0",
    "prompt-toolkit": "3.0.52", "jedi": "0.19.2", "parso": "0.8.6", "asttokens": "3.0.1", "decorator": "5.2.1",
    "executing": "2.2.1", "matplotlib-inline": "0.2.1", "pure-eval": "0.2.3", "six": "1.17.0",
    "stack-data": "0.6.3", "wcwidth": "0.6.0",
}
PAGE = {  # what mcplab needs in the page, at constraints.txt's versions
    "anyio": "4.16.0", "idna": "3.20", "httpx": "0.28.1", "httpcore": "1.0.9", "h11": "0.16.0",
    "certifi": "2026.10.19.post1", "typing-extensions": "4.16.0", "starlette": "1.10.0", "platformdirs": "4.14.9",
    "ipywidgets": "8.1.9", "comm": "0.2.3",
    # The trace viewer's schema badges and the tools' argument checks in the page: jsonschema 4.17.3 is
    # the last release before `referencing`, whose rpds-py has no WebAssembly wheel; it needs attrs and
    # pyrsistent, whose 0.20.0 is a pure-Python wheel. The only pins here that constraints.txt does not
    # hold (a machine keeps the newer jsonschema).
    "jsonschema": "4.17.3", "attrs": "26.1.0", "pyrsistent": "0.20.0",
}
PAGE_ONLY = {"jsonschema", "pyrsistent"}  # pinned for the page alone (see above)
TESTS = {  # not in the site: what the suite needs to run in Pyodide too (tests/test_pyodide.py)
    "pytest": "9.2.0", "pluggy": "1.7.0", "iniconfig": "2.3.1",
}
LEFT_OUT = {  # mcplab's dependencies (core and the lab extra) that its page entry does not name
    "authlib": "needs cryptography (no WebAssembly wheel on PyPI)",
    "joserfc": "needs cryptography", "mcp": "needs cryptography", "trustme": "needs cryptography",
    "matplotlib": "needs numpy and other compiled wheels PyPI has none of for WebAssembly",
    "uvicorn": "serves sockets, and a page can bind none",
    "jupyterlab": "the page is JupyterLite", "ipykernel": "the Pyodide kernel brings its own",
    "widgetsnbextension": "the widgets' front end: the site's lab extension", "jupyterlab-widgets": "the same",
}
NPM_URL = "https://registry.npmjs.org/{name}/{version}"
PYPI_URL = "https://pypi.org/pypi/{name}/json"
LOCK = Path(__file__).with_name("site-lock.json")
MIRROR_ENV = "MCPLAB_SITE_MIRROR"  # a folder served over HTTP holding the locked files by name (a classroom's own)
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
EXTENSIONS = ("@jupyterlite/pyodide-kernel-extension", "@jupyter-widgets/jupyterlab-manager")
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "package.json")
MARKER = ".mcplab-site.json"  # in every site this builds: what may be replaced by the next build
CONFIG_FILES = ("jupyter-lite.json", "jupyter-lite.ipynb", "overrides.json", "all.json", "pyodide-lock.json",
                MARKER)
# hosts that serve code or packages: a page reaching one is not offline (a schema's $id or a docs link is not fetched)
CDN_HOSTS = ("cdn.jsdelivr.net", "fastly.jsdelivr.net", "unpkg.com", "cdnjs.cloudflare.com", "esm.sh", "pypi.org",
             "files.pythonhosted.org", "registry.npmjs.org", "raw.githubusercontent.com", "conda.anaconda.org",
             "prefix.dev")
CDN = re.compile(r"(?:https?:)?//(?:[a-z0-9-]+\.)*(?:" + "|".join(map(re.escape, CDN_HOSTS)) + r")\b[^\s\"'<>]*")
TIMEOUT = 60.0  # seconds per request: a classroom network is slow, not silent


class SiteError(Exception):
    """What ``mcplab site`` refuses or lacks, said in full; the command exits 1 with it."""


@dataclass(frozen=True)
class Locked:
    """One file of the lock: where it comes from and what its bytes must hash to."""
    name: str
    version: str
    kind: str  # "pyodide", "boot", "page" or "tests" (fetched, never built into the site)
    file: str
    url: str
    size: int
    sha256: str


def read_lock(path: Path = LOCK) -> tuple[str, list[Locked]]:
    """The lock's date (YYYY-MM-DD) and its entries."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return data["made"], [Locked(**entry) for entry in data["files"]]


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/mcplab/site`` (default ``~/.cache/mcplab/site``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcplab" / "site"


def cached(entry: Locked, cache: Path) -> Path:
    return cache / entry.sha256 / entry.file


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- lock (authors, online) ----------------------------------------------------------------------------

def lock(path: Path = LOCK, *, today: str | None = None) -> list[Locked]:
    """Look every file of :data:`PYODIDE`, :data:`BOOT`, :data:`PAGE` and :data:`TESTS` up and write the lock."""
    import httpx

    entries = []
    with httpx.Client(timeout=TIMEOUT, follow_redirects=True) as client:
        name, version = PYODIDE
        dist = _get(client, NPM_URL.format(name=name, version=version))["dist"]
        tarball = client.get(dist["tarball"]).raise_for_status().content  # npm gives sha512 only: hash it here
        entries.append(Locked(name, version, "pyodide", dist["tarball"].rsplit("/", 1)[1], dist["tarball"],
                              len(tarball), hashlib.sha256(tarball).hexdigest()))
        for kind, table in (("boot", BOOT), ("page", PAGE), ("tests", TESTS)):
            for name, version in table.items():
                entries.append(_pure_wheel(_get(client, PYPI_URL.format(name=name)), name, version, kind))
    made = today or datetime.now(timezone.utc).date().isoformat()
    document = {"made": made, "files": [asdict(entry) for entry in entries]}
    _write_atomically(path, (json.dumps(document, indent=1) + "\n").encode())
    return entries


def _get(client, url: str) -> dict:
    reply = client.get(url)
    if reply.status_code != 200:
        raise SiteError(f"{url} answered HTTP {reply.status_code}")
    return reply.json()


def _pure_wheel(project: dict, name: str, version: str, kind: str) -> Locked:
    files = project.get("releases", {}).get(version, [])
    wheels = [f for f in files if f["filename"].endswith("-none-any.whl") and "py3" in f["filename"].split("-")[-3]]
    if not wheels:
        raise SiteError(f"PyPI has no pure-Python wheel of {name} {version}")
    wheel = wheels[0]
    return Locked(name, version, kind, wheel["filename"], _pythonhosted(wheel["url"]), wheel["size"],
                  wheel["digests"]["sha256"])


def _pythonhosted(url: str) -> str:
    """The file's address on files.pythonhosted.org, where PyPI keeps it under /packages/xx/yy/<digest>/.

    Some index mirrors answer with a path of their own (relative, or on their host): the lock names
    the registry itself, so any mirror can serve it.
    """
    parts = url.split("/")
    layout = len(parts) >= 4 and re.fullmatch(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{60}", "/".join(parts[-4:-1]))
    if not layout:
        raise SiteError(f"PyPI answered {url}, which is not laid out as files.pythonhosted.org/packages/...")
    return "https://files.pythonhosted.org/packages/" + "/".join(parts[-4:])


# --- fetch (online) ---------------------------------------------------------------------------------------

def fetch(entries: list[Locked], cache: Path, *, mirror: str | None = None) -> tuple[int, list[str], str]:
    """Download every locked file the cache lacks: how many are still missing, one sentence per file that
    could not be had (or was refused), and a one-line summary."""
    import httpx

    problems: list[str] = []
    unreachable: dict[str, str] = {}  # host → why: the next files from it would only wait again
    with httpx.Client(timeout=TIMEOUT, follow_redirects=True) as client:
        for entry in entries:
            target = cached(entry, cache)
            if target.is_file():
                found = sha256_of(target)
                if found == entry.sha256:
                    continue
                target.unlink()
                problems.append(f"mcplab site: the cached {entry.file} has SHA-256 {found}, not the locked "
                                f"{entry.sha256}: removed, fetched again")
            url = f"{mirror.rstrip('/')}/{entry.file}" if mirror else entry.url
            host = httpx.URL(url).host
            problem = unreachable.get(host) or _download(client, url, entry, target)
            if problem:
                problems.append(f"mcplab site: {entry.file} is not in the cache: {problem}")
                if "could not be reached" in problem:
                    unreachable[host] = problem
    missing = sum(1 for e in entries if not cached(e, cache).is_file())
    summary = (f"mcplab site: {len(entries) - missing} of {len(entries)} locked files are in {cache}, each checked "
               f"against its SHA-256" + (f"; {missing} missing: run `mcplab site fetch` online" if missing else ""))
    return missing, problems, summary


def _download(client, url: str, entry: Locked, target: Path) -> str:
    """Stream ``url`` into ``target`` when its size and digest are the locked ones; else why not."""
    import httpx

    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{entry.file}.", suffix=".part", dir=target.parent)
    digest = hashlib.sha256()
    try:
        with os.fdopen(handle, "wb") as out, client.stream("GET", url) as reply:
            if reply.status_code != 200:
                return f"{url} answered HTTP {reply.status_code}"
            size = 0
            for chunk in reply.iter_bytes():
                size += len(chunk)
                if size > entry.size:
                    return f"{url} sent more than the locked {entry.size:,} bytes: refused"
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != entry.sha256:
            return (f"{url} has SHA-256 {digest.hexdigest()}, not the locked {entry.sha256}: refused, "
                    f"nothing cached")
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would keep the file from a site served by another user
        os.replace(temporary, target)  # atomic: the cache holds the whole checked file or none
        return ""
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        return f"{httpx.URL(url).host} could not be reached ({type(exc).__name__}: {exc}); run `mcplab site fetch` online"
    except httpx.HTTPError as exc:
        return f"{url}: {type(exc).__name__}: {exc}"
    finally:
        Path(temporary).unlink(missing_ok=True)


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


# --- build (offline) --------------------------------------------------------------------------------------

def default_out() -> Path:
    """``site/`` in the checkout; ``site/`` in the current folder when mcplab runs from a wheel."""
    return course.CHECKOUT / "site" if course.is_checkout() else Path("site").absolute()


def build(out: Path, cache: Path) -> Path:
    """Build the site into ``out`` from the cache alone; ``out`` is replaced only if it is a site of ours."""
    _replaceable(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    made, entries = read_lock()
    missing = [f"{e.file} ({e.name} {e.version})" for e in entries
               if not cached(e, cache).is_file() or sha256_of(cached(e, cache)) != e.sha256]
    if missing:
        raise SiteError(f"mcplab site build: {len(missing)} of the {len(entries)} locked files are not in {cache} "
                        f"with their locked SHA-256: {', '.join(missing)}; run `mcplab site fetch` (online) first")
    epoch = int(datetime.fromisoformat(made).replace(tzinfo=timezone.utc).timestamp())
    with tempfile.TemporaryDirectory(prefix="mcplab-site-") as scratch:
        lite = Path(scratch) / "lite"
        pyodide = lite / "static" / "pyodide"
        pyodide.mkdir(parents=True)
        tarball = next(e for e in entries if e.kind == "pyodide")
        npm_lock = _unpack_pyodide(cached(tarball, cache), pyodide)
        wheels = [(e.kind, Path(shutil.copyfile(cached(e, cache), pyodide / e.file)))
                  for e in entries if e.kind in ("boot", "page")]
        mcplab = _mcplab_wheel(Path(scratch) / "wheel", epoch)
        wheels.append(("mcplab", Path(shutil.copyfile(mcplab, pyodide / mcplab.name))))
        lock_json = _pyodide_lock(npm_lock, wheels)
        (pyodide / "pyodide-lock.json").write_text(json.dumps(lock_json, indent=1, sort_keys=True) + "\n")
        _copy_course(lite / "files")
        _copy_extensions(lite / "labextensions")
        _write_configs(lite, epoch)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
        try:
            _jupyter_lite_build(lite, staging, epoch)
            marker = {"built by": "mcplab site build", "mcplab": __version__, "lock": sha256_of(LOCK),
                      "pyodide": PYODIDE[1]}
            (staging / MARKER).write_text(json.dumps(marker, indent=1) + "\n")
            urls = cdn_urls(staging)
            if urls:
                raise SiteError(f"mcplab site build: the built configuration names other hosts: {'; '.join(urls)}")
            _replace(out, staging)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return out


def _replaceable(out: Path) -> None:
    """Refuse a link, a file, or a folder that holds something other than a site this command built."""
    if out.is_symlink():
        raise SiteError(f"mcplab site build: {out} is a symbolic link; it is left alone (choose another --out)")
    if out.exists() and not out.is_dir():
        raise SiteError(f"mcplab site build: {out} is a file, not a folder; it is left alone (choose another --out)")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise SiteError(f"mcplab site build: {out} holds files and no {MARKER}, so it is not a site mcplab built: "
                        f"it is left alone (empty it or choose another --out)")


def _replace(out: Path, staging: Path) -> None:
    _replaceable(out)  # again: the folder is the user's, and may have changed while the build ran
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        os.replace(out, old)
    os.replace(staging, out)
    shutil.rmtree(old, ignore_errors=True)


def _unpack_pyodide(tarball: Path, folder: Path) -> dict:
    """The runtime's files from the npm tarball into ``folder``; Pyodide's own lock, parsed."""
    with tarfile.open(tarball) as archive:
        for name in PYODIDE_FILES:
            source = archive.extractfile(f"package/{name}")
            if source is None:
                raise SiteError(f"mcplab site build: {tarball.name} has no package/{name}")
            (folder / name).write_bytes(source.read())
        return json.load(archive.extractfile("package/pyodide-lock.json"))


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyodide_lock(npm_lock: dict, wheels: list[tuple[str, Path]]) -> dict:
    """Pyodide's lock cut down to the wheels the site holds, each with its file's digest and its imports."""
    from packaging.requirements import Requirement
    from packaging.utils import parse_wheel_filename

    version = npm_lock["info"]["python"]
    environment = {"python_version": version.rpartition(".")[0], "python_full_version": version,
                   "implementation_version": version, "sys_platform": "emscripten", "platform_system": "Emscripten",
                   "platform_machine": "wasm32", "os_name": "posix", "implementation_name": "cpython",
                   "platform_python_implementation": "CPython"}
    held = {canonical(parse_wheel_filename(path.name)[0]) for _, path in wheels}
    packages = {}
    for kind, path in wheels:
        name, wheel_version = canonical(parse_wheel_filename(path.name)[0]), str(parse_wheel_filename(path.name)[1])
        entry = {"name": name, "version": wheel_version, "file_name": path.name, "install_dir": "site",
                 "package_type": "package", "sha256": sha256_of(path), "unvendored_tests": False}
        if kind == "boot":  # Pyodide's entry knows what it loads with; only the file and its digest change
            theirs = npm_lock["packages"].get(name)
            if not theirs or theirs["version"] != wheel_version:
                raise SiteError(f"mcplab site build: BOOT has {name} {wheel_version}, Pyodide's lock "
                                f"{theirs and theirs['version']}: make them agree and run `mcplab site lock`")
            packages[name] = {**theirs, **entry, "depends": sorted(canonical(d) for d in theirs["depends"])}
            continue
        extras = ("", "lab") if kind == "mcplab" else ("",)
        depends = set()
        for line in _metadata(path).get_all("Requires-Dist") or []:
            requirement = Requirement(line)
            wanted = requirement.marker is None or any(
                requirement.marker.evaluate({**environment, "extra": extra}) for extra in extras)
            dependency = canonical(requirement.name)
            if not wanted or dependency in LEFT_OUT:
                continue
            if dependency not in held:
                raise SiteError(f"mcplab site build: {name} needs {dependency}, of which the lock holds no wheel: "
                                f"add it to PAGE (then `mcplab site lock`) or to LEFT_OUT with the reason")
            depends.add(dependency)
        packages[name] = {**entry, "imports": _imports(path), "depends": sorted(depends)}
    return {"info": npm_lock["info"], "packages": dict(sorted(packages.items()))}


def _metadata(wheel: Path):
    from email.parser import BytesParser

    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        return BytesParser().parsebytes(archive.read(name))


def _imports(wheel: Path) -> list[str]:
    """The top-level modules a wheel installs: what a cell imports to have the kernel load it."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    found = {n.split("/")[0] for n in names if n.count("/") == 1 and n.endswith("/__init__.py")}
    found |= {n[:-3] for n in names if "/" not in n and n.endswith(".py")}
    return sorted(found)


def _mcplab_wheel(folder: Path, epoch: int) -> Path:
    """mcplab's wheel: hatchling on the checkout, or the installed package re-packed."""
    folder.mkdir()
    if not course.is_checkout():
        return _repack_installed(folder, epoch)
    program = "import sys; from hatchling.build import build_wheel; print(build_wheel(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", program, str(folder)], cwd=course.CHECKOUT, capture_output=True,
                          text=True, env={**os.environ, "SOURCE_DATE_EPOCH": str(epoch)})
    if done.returncode:
        raise SiteError(f"mcplab site build: hatchling could not build mcplab's wheel (install the site extra: "
                        f"pip install -e '.[site]'): {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
    return folder / done.stdout.strip().splitlines()[-1]


INSTALLERS_FILES = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json", "uv_cache.json"}  # written by installers


def _repack_installed(folder: Path, epoch: int) -> Path:
    """A wheel of the installed mcplab: its recorded files (bytecode left out) and a RECORD made anew."""
    import base64
    from importlib.metadata import distribution

    dist = distribution("mcplab")
    info = next(f for f in dist.files if f.parts[0].endswith(".dist-info")).parts[0]
    wheel = folder / f"mcplab-{dist.version}-py3-none-any.whl"
    stamp = datetime.fromtimestamp(max(epoch, 315532800), timezone.utc).timetuple()[:6]
    record = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(dist.files, key=str):
            name = file.as_posix()
            if (name.endswith(".pyc") or not name.startswith(("mcplab/", info + "/"))
                    or name.removeprefix(info + "/") in INSTALLERS_FILES):
                continue
            data = Path(file.locate()).read_bytes()
            archive.writestr(zipfile.ZipInfo(name, stamp), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(data)}")
        archive.writestr(zipfile.ZipInfo(f"{info}/RECORD", stamp), "\n".join([*record, f"{info}/RECORD,,", ""]))
    return wheel


def _copy_course(contents: Path) -> None:
    """labs/ and servers/ side by side (the notebooks start ``../servers/...``); links are left out."""
    for folder in course.FOLDERS:
        source = course.root() / folder
        for path in sorted(source.rglob("*")):
            relative = path.relative_to(source)
            if path.is_symlink() or not path.is_file() or course.SKIPPED_DIRS & set(relative.parts):
                continue
            if path.suffix == ".pyc" or any(part.startswith(".") for part in relative.parts):
                continue
            target = contents / folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())


def _copy_extensions(folder: Path) -> None:
    """The two lab extensions the page needs, from this environment (the site extra installs them)."""
    from jupyter_core.paths import jupyter_path

    for name in EXTENSIONS:
        found = [Path(p) / name for p in jupyter_path("labextensions") if (Path(p) / name / "package.json").is_file()]
        if not found:
            raise SiteError(f"mcplab site build: the lab extension {name} is not installed; install the site extra "
                            f"(pip install -e '.[site]')")
        shutil.copytree(found[0], folder / name)


def _write_configs(lite: Path, epoch: int) -> None:
    kernel = {"disablePyPIFallback": True}
    # exposeAppInBrowser: window.jupyterapp, so a script (the site's test too) can drive the lab by its commands
    config = {"jupyter-lite-schema-version": 0,
              "jupyter-config-data": {"appName": "mcplab", "exposeAppInBrowser": True,
                                      "litePluginSettings": {KERNEL_PLUGIN: kernel}}}
    (lite / "jupyter-lite.json").write_text(json.dumps(config, indent=1) + "\n")
    news = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}
    (lite / "overrides.json").write_text(json.dumps(news, indent=1) + "\n")
    build = {"FederatedExtensionAddon": {"extra_labextensions_path": [str(lite / "labextensions")]},
             "LiteBuildConfig": {
        "contents": ["files"], "ignore_sys_prefix": True, "no_sourcemaps": True, "source_date_epoch": epoch,
        # not the defaults, which leave out every folder called build/ or lib/ (labs/build/ is a lab's)
        "ignore_contents": [r"/\.", r"/__pycache__/", r"\.pyc$", r"jupyter-lite\.(json|ipynb)$",
                            r"jupyter_lite_config\.json$", r"/overrides\.json$", r"doit\.db$"]}}
    (lite / "jupyter_lite_config.json").write_text(json.dumps(build, indent=1) + "\n")


def _jupyter_lite_build(lite: Path, output: Path, epoch: int) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTERLITE_", "JUPYTER_"))}
    env.update(SOURCE_DATE_EPOCH=str(epoch), JUPYTER_CONFIG_DIR=str(lite / ".jupyter"), JUPYTER_NO_CONFIG="1")
    (lite / ".jupyterlite.doit.db").unlink(missing_ok=True)  # a stale one keeps a CDN pyodideUrl
    done = subprocess.run([sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(lite),
                           "--output-dir", str(output)], cwd=lite, env=env, capture_output=True, text=True)
    if done.returncode:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise SiteError(f"mcplab site build: `jupyter lite build` failed (exit {done.returncode}):\n{tail}")


def cdn_urls(site: Path) -> list[str]:
    """Every URL to another host in the site's configuration files (what would make the page go out)."""
    found = []
    for path in sorted(site.rglob("*")):
        if path.name in CONFIG_FILES and path.is_file():
            found += [f"{path.relative_to(site)}: {url}" for url in CDN.findall(path.read_text(encoding="utf-8"))]
    return found


# --- the command --------------------------------------------------------------------------------------------

def command(step: str, *, out: Path | None = None, cache: Path | None = None, mirror: str | None = None) -> int:
    """``mcplab site lock|fetch|build``: the exit status; what went wrong is printed in full."""
    cache = cache or cache_dir()
    try:
        if step == "lock":
            import httpx
            try:
                entries = lock()
            except httpx.HTTPError as exc:
                raise SiteError(f"mcplab site lock: {type(exc).__name__}: {exc}") from None
            print(f"mcplab site: {LOCK.name} now holds {len(entries)} files")
            return 0
        if step == "fetch":
            missing, problems, summary = fetch(read_lock()[1], cache, mirror=mirror or os.environ.get(MIRROR_ENV))
            for problem in problems:  # stderr: `make test` shows only the summary, and pytest runs
                print(problem, file=sys.stderr)
            print(summary)
            return 1 if missing else 0
        built = build((out or default_out()).absolute(), cache)  # not resolve(): a link named as --out is not followed
        print(f"mcplab site: the course is in {built}; serve it with `python -m http.server -d {built}` "
              f"and open http://127.0.0.1:8000/lab/index.html")
        return 0
    except SiteError as exc:
        print(exc, file=sys.stderr)
        return 1
