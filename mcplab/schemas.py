"""The official MCP schemas: where mcplab finds them, and how ``mcplab schemas`` fetches them.

Theory of operation
-------------------
The schema badges of the trace viewer (``notebook/schema_check.py``) and the test suite's oracle read each
revision's ``<version>/schema.json`` from the first of these folders that is there:

1. ``$MCPLAB_SPEC_DIR`` when it is set (a teacher's own copy; an empty folder turns the badges off);
2. ``../shared/mcp-spec`` beside the checkout, when that folder exists;
3. in the browser edition, ``_spec/`` beside this module: ``mcplab site build`` copies the schemas it
   finds here (each checked against its digest) into the page's mcplab wheel;
4. the user's cache folder (platformdirs: ``~/.cache/mcplab`` on Linux, ``~/Library/Caches/mcplab``
   on macOS, ``%LOCALAPPDATA%\\mcplab\\Cache`` on Windows), which :func:`fetch` fills.

No schema ships with mcplab's own wheel: the files belong to the specification. :func:`fetch` downloads each
one from the official specification repository at one pinned commit, so every classroom checks
against the same bytes, and keeps a file only when its SHA-256 digest is the one written below:
a file changed upstream or on the way is refused and nothing is cached. A file is written under a
temporary name beside its place and then renamed, so a reader never sees half a schema and an
interrupted download leaves nothing behind. A cached file is trusted on later runs only after its
digest is checked again, so a damaged cache is fetched afresh. Offline, :func:`summary` says so in
one sentence: the badges stay off, and nothing else in mcplab needs the schemas.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Iterable, Mapping
from urllib.parse import urlsplit

from mcplab.i18n import _
from mcplab.wire.versions import ALL_VERSIONS

if TYPE_CHECKING:
    import httpx

SPEC_REPOSITORY = "modelcontextprotocol/modelcontextprotocol"
PINNED_COMMIT = "b0f60ba5409db7a6582440a7b473cc0398890f15"  # 2026-08-22, with 2026-07-28 final
DEFAULT_BASE_URL = f"https://raw.githubusercontent.com/{SPEC_REPOSITORY}/{PINNED_COMMIT}/schema"
SPEC_DIR_ENV = "MCPLAB_SPEC_DIR"      # a folder of <version>/schema.json that wins over everything
BASE_URL_ENV = "MCPLAB_SCHEMA_URL"    # a mirror of <version>/schema.json (a classroom's own server)
SCHEMA_FILE = "schema.json"
PACKAGED = "_spec"  # beside this module in the browser edition's mcplab wheel only (never in a checkout)
REPO = Path(__file__).resolve().parent.parent
DIGESTS: Mapping[str, str] = MappingProxyType({  # sha256 of schema/<version>/schema.json at PINNED_COMMIT
    "2024-11-05": "61cea2392d4f284092d09bc84b9ac488c0d5618ac2b38a56942fc5b99fd960ce",
    "2025-03-26": "e720669548c8100a4282c49e580efd6ddf7f28899ea786fc8db251dbdb356131",
    "2025-06-18": "af845e7e5b9d27107d1690f0936022546177a1403e63ffb11470135b296a2e01",
    "2025-11-25": "268a5f82ba70fd7e4b6dc4aa1e64f116f74b4d0edcb69dc046829c79dd4e97e7",
    "2026-07-28": "ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203",
})
MAX_BYTES = 2 * 1024 * 1024  # the largest schema is 180 kB: a bigger answer is not one of them
TIMEOUT = 20.0               # seconds per request; a classroom network can be slow, not silent
CACHED, DOWNLOADED, REFUSED, FAILED = "cached", "downloaded", "refused", "failed"


# --- where the schemas are ---------------------------------------------------------------------------

def shared_dir() -> Path:
    """``<checkout>/../shared/mcp-spec``: the folder a workshop keeps beside its checkouts."""
    return REPO.parent / "shared" / "mcp-spec"


def cache_dir() -> Path:
    """The user's cache folder for the schemas of the pinned commit."""
    from platformdirs import user_cache_dir  # a few ms; only the lookup and the download need it

    return Path(user_cache_dir("mcplab", appauthor=False)) / "mcp-spec" / PINNED_COMMIT[:12]


def spec_dir() -> Path:
    """The folder the badges and the tests read: ``$MCPLAB_SPEC_DIR``, else ``../shared/mcp-spec``, else the
    copies a browser edition's mcplab carries (``mcplab site build`` puts them in), else the cache."""
    explicit = os.environ.get(SPEC_DIR_ENV)
    if explicit:
        return Path(explicit)
    packaged = Path(__file__).parent / PACKAGED
    return shared_dir() if shared_dir().is_dir() else packaged if packaged.is_dir() else cache_dir()


def schema_file(version: str, folder: Path | None = None) -> Path | None:
    """``<folder>/<version>/schema.json`` when that file is there (default folder: :func:`spec_dir`)."""
    path = (folder or spec_dir()) / version / SCHEMA_FILE
    return path if path.is_file() else None


def source(folder: Path) -> str:
    """How a folder is named to a user: what put it there, and a path without the home folder in it."""
    if os.environ.get(SPEC_DIR_ENV) and folder == Path(os.environ[SPEC_DIR_ENV]):
        where = f"${SPEC_DIR_ENV}"
    elif folder == shared_dir():
        where = _("../shared/mcp-spec beside the checkout")
    elif folder == Path(__file__).parent / PACKAGED:
        where = _("the site, put in when it was built")
    else:
        where = _("the cache")
    home = str(Path.home())
    shown = str(folder)
    return f"{where} ({'~' + shown[len(home):] if shown.startswith(home + os.sep) else shown})"


# --- fetching them into the cache ------------------------------------------------------------------------

@dataclass(frozen=True)
class Fetched:
    """What became of one revision's schema: cached, downloaded, refused (wrong digest) or failed."""
    version: str
    status: str
    path: Path | None = None
    detail: str = ""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(versions: Iterable[str] = ALL_VERSIONS, *, base_url: str | None = None,
          cache: Path | None = None, timeout: float = TIMEOUT) -> list[Fetched]:
    """Make sure ``cache`` (default :func:`cache_dir`) holds each revision's verified schema.

    >>> [f.status for f in fetch()]                 # doctest: +SKIP
    ['downloaded', 'downloaded', 'downloaded', 'downloaded', 'downloaded']
    """
    import httpx  # a dependency anyway; loaded here so the lookup above stays light

    versions = list(versions)
    unknown = [v for v in versions if v not in DIGESTS]
    if unknown:
        raise ValueError(f"no digest for {', '.join(unknown)}; known revisions: {', '.join(DIGESTS)}")
    folder = cache or cache_dir()
    base = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
    results: list[Fetched] = []
    unreachable = ""
    with httpx.Client(timeout=timeout) as client:
        for version in versions:
            target = folder / version / SCHEMA_FILE
            if _verified(target, version):
                results.append(Fetched(version, CACHED, target))
            elif unreachable:
                results.append(Fetched(version, FAILED, None, unreachable))
            else:
                fetched, reached = _download(client, f"{base}/{version}/{SCHEMA_FILE}", version, target)
                results.append(fetched)
                unreachable = "" if reached else fetched.detail  # the next files would only wait again
    return results


def _verified(path: Path, version: str) -> bool:
    """Is the cached file there with the right digest? A damaged one is removed, to be fetched again."""
    try:
        if digest(path.read_bytes()) == DIGESTS[version]:
            return True
    except FileNotFoundError:
        return False
    path.unlink(missing_ok=True)
    return False


def _download(client: httpx.Client, url: str, version: str, target: Path) -> tuple[Fetched, bool]:
    """One file into ``target`` if its digest is right; and whether the server could be reached at all."""
    import httpx

    try:
        with client.stream("GET", url) as response:
            if response.status_code != 200:
                return Fetched(version, FAILED, None, f"{url} answered HTTP {response.status_code}"), True
            data = bytearray()
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > MAX_BYTES:
                    return Fetched(version, FAILED, None, f"{url} sent more than {MAX_BYTES:,} bytes: "
                                                          f"not a schema"), True
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        why = f"{urlsplit(url).netloc} could not be reached ({type(exc).__name__}: {exc})"
        return Fetched(version, FAILED, None, why), False
    except httpx.HTTPError as exc:
        return Fetched(version, FAILED, None, f"{url}: {type(exc).__name__}: {exc}"), True
    found = digest(bytes(data))
    if found != DIGESTS[version]:
        return Fetched(version, REFUSED, None, f"{url} has SHA-256 {found[:16]}…, not the {DIGESTS[version][:16]}… "
                                               f"mcplab expects: refused, nothing cached"), True
    _write_atomically(target, bytes(data))
    return Fetched(version, DOWNLOADED, target), True


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)  # atomic on one file system: readers see the old file or the new one
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def summary(results: list[Fetched]) -> tuple[int, list[str]]:
    """The exit status and the lines ``mcplab schemas`` prints for ``results``."""
    lines = [f"  {r.version}  {r.status}" for r in results if r.path]
    failed = [r for r in results if not r.path]
    folders = sorted({source(r.path.parent.parent) for r in results if r.path})
    where = _(" in {folders}", folders=", ".join(folders)) if folders else ""
    if not failed:
        return 0, [_("the official MCP schemas ({repository} at {commit}){where}, each checked against its "
                     "SHA-256 digest:", repository=SPEC_REPOSITORY, commit=PINNED_COMMIT[:12], where=where), *lines]
    if all(r.status == FAILED and r.detail == failed[0].detail for r in failed) and not lines:
        return 1, [_("mcplab schemas: {problem}, so the official MCP schemas are not here: the trace viewer's "
                     "schema badges stay off until `mcplab schemas` runs online, and nothing else needs them.",
                     problem=failed[0].detail)]
    problems = [f"  {r.version}  {r.status}: {r.detail}" for r in failed]
    # "are" even for one: the count is "{n} of {total}", and the sentence reads the same in every case.
    return 1, [_("mcplab schemas: {n} of {total} official schemas are missing{where}; badges for {versions} "
                 "stay off:", n=len(failed), total=len(results), where=where,
                 versions=", ".join(r.version for r in failed)), *lines, *problems]


def command(base_url: str | None = None, cache: Path | None = None) -> tuple[int, list[str]]:
    """What ``mcplab schemas`` does: nothing when a folder that wins over the cache holds every
    revision (unless ``cache`` is named), else :func:`fetch`; the exit status and the lines to print."""
    folder = spec_dir()
    if cache is None and folder != cache_dir() and all(schema_file(v, folder) for v in DIGESTS):
        return 0, [_("the official MCP schemas: all {n} revisions are in {folder}; nothing to download",
                     n=len(DIGESTS), folder=source(folder))]
    status, lines = summary(fetch(base_url=base_url, cache=cache))
    if cache is None and folder != cache_dir():
        lines.append(_("note: the badges read {folder}, which wins over the cache", folder=source(folder)))
    return status, lines
