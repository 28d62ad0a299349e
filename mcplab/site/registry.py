"""The site's two online steps: ``lock`` (authors: every pinned file looked up on npm and PyPI, its
digest written to the lock) and ``fetch`` (everyone, once: every locked file into the cache, checked).

See :mod:`mcplab.site` for the whole theory of operation.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

from mcplab.i18n import _
from mcplab.site import BOOT, LOCK, NPM_URL, PAGE, PYODIDE, PYPI_URL, TESTS, TIMEOUT, Locked, SiteError, cached, sha256_of


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
                problems.append(_("mcplab site: the cached {file} has SHA-256 {found}, not the locked {locked}: "
                                  "removed, fetched again", file=entry.file, found=found, locked=entry.sha256))
            url = f"{mirror.rstrip('/')}/{entry.file}" if mirror else entry.url
            host = httpx.URL(url).host
            problem = unreachable.get(host) or _download(client, url, entry, target)
            if problem:
                problems.append(_("mcplab site: {file} is not in the cache: {problem}", file=entry.file,
                                  problem=problem))
                if "could not be reached" in problem:
                    unreachable[host] = problem
    missing = sum(1 for e in entries if not cached(e, cache).is_file())
    summary = (_("mcplab site: {present} of {total} locked files are in {cache}, each checked against its SHA-256",
                 present=len(entries) - missing, total=len(entries), cache=cache)
               + (_("; {missing} missing: run `mcplab site fetch` online", missing=missing) if missing else ""))
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


