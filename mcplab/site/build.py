"""The site's offline step: the course as a JupyterLite site, from the cache and the checkout.

See :mod:`mcplab.site` for the whole theory of operation.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from mcplab import __version__, course
from mcplab.site import (CDN, CONFIG_FILES, EXTENSIONS, KERNEL_PLUGIN, LEFT_OUT, LOCK, MARKER, PYODIDE, PYODIDE_FILES,
                         SiteError, cached, canonical, read_lock, sha256_of)


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
        badges = _add_schemas(mcplab, epoch)
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
                      "pyodide": PYODIDE[1], "schemas": badges}
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


def _add_schemas(wheel: Path, epoch: int) -> list[str]:
    """The official schemas into the page's mcplab wheel (``mcplab/_spec/<version>/schema.json``, where
    ``schemas.spec_dir()`` finds them in the page): each revision found where the machine's badges find
    theirs, taken only when its digest is the pinned one. The revisions taken; none when ``mcplab
    schemas`` never ran here (the page's trace views then show no badges, as on a machine)."""
    import base64

    from mcplab import schemas

    found = {version: path.read_bytes() for version in schemas.ALL_VERSIONS
             if (path := schemas.schema_file(version)) is not None}
    taken = {version: data for version, data in found.items() if schemas.digest(data) == schemas.DIGESTS[version]}
    if not taken:
        return []
    stamp = datetime.fromtimestamp(max(epoch, 315532800), timezone.utc).timetuple()[:6]
    with zipfile.ZipFile(wheel) as source:
        members = [(info.filename, source.read(info)) for info in source.infolist()]
    record_name = next(name for name, _ in members if name.endswith(".dist-info/RECORD"))
    added = [(f"mcplab/{schemas.PACKAGED}/{version}/{schemas.SCHEMA_FILE}", data) for version, data in taken.items()]
    lines = [line for line in dict(members)[record_name].decode().splitlines() if line]
    for name, data in added:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.insert(-1, f"{name},sha256={digest},{len(data)}")  # before RECORD's own line, which stays last
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in [*[(n, d) for n, d in members if n != record_name], *added]:
            archive.writestr(zipfile.ZipInfo(name, stamp), data)
        archive.writestr(zipfile.ZipInfo(record_name, stamp), "\n".join([*lines, ""]))
    return sorted(taken)


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


