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

Here are the pins, the lock's reading and the cache; ``registry.py`` the two online steps (lock,
fetch), ``build.py`` the offline one;
``steps.py`` the command that runs them.

Layer: files. Of mcplab it imports only ``course`` (where the labs and servers are) and the package's
version; nothing of the wire, since a site is files.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

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
    "jupyterlab-language-pack-zh-cn": "JupyterLab's own menus in Chinese for `mcplab lab --lang zh`: a JupyterLab "
                                      "extension, and the page is JupyterLite",
}
NPM_URL = "https://registry.npmjs.org/{name}/{version}"
PYPI_URL = "https://pypi.org/pypi/{name}/json"
LOCK = Path(__file__).parent.parent / "site-lock.json"
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


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
