"""Confinement: every path a peer names is opened inside one folder, and nowhere else, even while links change.

Theory of operation
-------------------
A tool argument is written by a model, so a path is hostile until proven otherwise. Checking a path
and then opening it is a race: between the two, a folder on the way can become a symlink to
anywhere, and the open follows it. Resolving the path first (``realpath``) does not help: the kernel
walks the resolved path again when it opens it.

So :class:`Folder` never hands the kernel more than one name at a time. It holds the root open as a
directory descriptor and walks a path one component at a time, each step relative to the folder
before it, with ``O_NOFOLLOW`` so that the kernel refuses a name that became a link meanwhile::

    "src/greet.py"  →  openat(root, "src", O_DIRECTORY|O_NOFOLLOW)  →  openat(src, "greet.py", O_NOFOLLOW)

A symlink is followed by the walk itself: it reads the link's text and walks that text from the
folder the link sits in (an absolute target from the root, if it lies under the root's real path);
``..`` pops the walk's own stack of folders and never goes above the root. What is opened is reached
from the root through folders that were inside it when they were opened, however links change. More
than :data:`MAX_LINKS` links on one walk is a loop. A write goes to a temporary file created in the
destination folder's descriptor and renamed over the target in that same descriptor: atomic, inside.
A write that waited (for the user to confirm it) walks again from the root when it finally writes.

Without ``dir_fd`` (Windows: :data:`DIR_FD_WALK` is False) the same walk goes by paths, and whatever
it opens is checked through the open handle before a byte is read or written (dirhandles.py).

Names starting with a dot are left out of listings: hidden files, and this module's temporary files.
So is Python's bytecode cache (``__pycache__`` folders, ``*.pyc`` files): an installer compiles every
``.py`` it installs, the sample ``src/greet.py`` of an installed wheel too, and those files are the
interpreter's, not the folder's content.
No message carries the root's real path: a refusal names the path as the peer gave it.
"""

from __future__ import annotations

import asyncio
import errno
import os
import secrets
import stat
from contextlib import closing, contextmanager
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import PurePath
from typing import Callable, Iterator, Literal

from mcplab.server.content import ToolError
from mcplab.server.dirhandles import DIRECTORY, DescriptorFolder, PathFolder

__all__ = ["Folder", "Entry", "Refused", "NotFound", "DIR_FD_WALK", "MAX_LINKS"]

# os.rename stands for os.replace: both take src_dir_fd and dst_dir_fd, but CPython lists only rename in
# supports_dir_fd, so asking about replace would always answer no and send every platform down the path walk.
DIR_FD_WALK = (all(f in os.supports_dir_fd for f in (os.open, os.stat, os.readlink, os.rename, os.unlink))
               and os.scandir in os.supports_fd and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY"))
"""Can this platform walk by directory descriptors (Linux, macOS, the BSDs)? If not, the portable walk."""

MAX_LINKS = 40      # symlinks one walk may follow, as Linux counts before ELOOP
MAX_DEPTH = 32      # folders below the start a recursive listing descends
STEP = 64           # names a search looks at between two turns of the event loop
NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO must not hang a read
CACHE_DIR, CACHE_SUFFIX = "__pycache__", ".pyc"  # Python's bytecode cache: left out of listings, like dot files
RACED = (errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", errno.ELOOP))  # O_NOFOLLOW/O_DIRECTORY refusals


class Refused(ToolError):
    """A path this folder will not serve, and why, in the peer's own words for the path."""


class NotFound(Refused):
    """Nothing is at that path (a resource read answers "Resource not found" for it)."""


@dataclass(frozen=True)
class Entry:
    """One thing inside the root: its path (``/``-separated, ``.`` is the root), kind, size and mtime."""
    path: str
    kind: Literal["file", "folder", "other"]
    size: int
    modified: float

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def listed(name: str) -> bool:
    """Is ``name`` shown in a listing? Not when hidden (a dot) nor when it is Python's bytecode cache."""
    return not (name.startswith(".") or name == CACHE_DIR or name.endswith(CACHE_SUFFIX))


def _parts(text: str) -> list[str]:
    return [part for part in PurePath(text).parts if part not in ("", ".", "/", "\\")]


def _problem(shown: str, exc: OSError) -> Refused:
    """An OSError as a refusal naming the peer's path (``exc`` carries the real one: never shown)."""
    if isinstance(exc, FileNotFoundError):
        return NotFound(f"{shown}: no such file or folder")
    if exc.errno in RACED:
        return Refused(f"refused {shown!r}: it changed while it was being opened (a folder or a link was "
                       f"swapped); try again")
    return Refused(f"{shown}: {exc.strerror or type(exc).__name__}")


@dataclass
class _Found:
    """Where a walk ended: its stack of folders, and the last name in the top one (None: the top itself)."""
    dirs: list[DescriptorFolder | PathFolder]
    name: str | None
    seen: os.stat_result | None  # lstat of ``name``; None if it does not exist

    @property
    def rel(self) -> str:
        return "/".join((*self.dirs[-1].rel, *([self.name] if self.name else []))) or "."


# --- the folder ------------------------------------------------------------------------------------------

class Folder:
    """One folder, served: read, list, search and write inside it, and nowhere else (module docstring)."""

    def __init__(self, root: str | os.PathLike[str], *, dir_fd: bool | None = None) -> None:
        self.real = os.path.realpath(root)  # for absolute link targets; never put in a message
        if not os.path.isdir(self.real):
            raise NotADirectoryError(f"{root}: not a folder")
        self.dir_fd = DIR_FD_WALK if dir_fd is None else dir_fd
        self._fd = os.open(self.real, os.O_RDONLY | DIRECTORY) if self.dir_fd else -1

    def close(self) -> None:
        """Let go of the root's descriptor (the server is done with this folder)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()

    def _root(self) -> DescriptorFolder | PathFolder:
        return DescriptorFolder(self._fd, (), owned=False) if self.dir_fd else PathFolder(self.real, ())

    # --- the walk ----------------------------------------------------------------------------------------
    @contextmanager
    def _walk(self, path: str, *, missing_ok: bool = False) -> Iterator[_Found]:
        dirs = [self._root()]
        try:
            yield self._resolve(path, dirs, missing_ok)
        except OSError as exc:
            raise _problem(path, exc) from None
        finally:
            for folder in dirs:
                folder.close()

    def _resolve(self, path: str, dirs: list, missing_ok: bool) -> _Found:
        if "\0" in path:
            raise Refused(f"refused {path!r}: the path contains a NUL byte")
        if path.startswith(("/", "\\")) or PurePath(path).is_absolute() or PurePath(path).drive:
            raise Refused(f"refused {path!r}: absolute paths are not allowed; give a path relative to the root, "
                          f"e.g. notes.md")
        pending = _parts(path)
        if ".." in pending:
            raise Refused(f"refused {path!r}: '..' is not allowed in a path")
        outside = Refused(f"refused {path!r}: it leads outside the served folder (through a symlink)")
        links = 0
        while pending:
            name = pending.pop(0)
            if name == "..":  # only ever from a link's text: the peer's own '..' was refused above
                if len(dirs) == 1:
                    raise outside
                dirs.pop().close()
                continue
            try:
                seen = dirs[-1].lstat(name)
            except FileNotFoundError:
                if not pending and missing_ok:
                    return _Found(dirs, name, None)
                raise NotFound(f"{path}: no such file or folder") from None
            if stat.S_ISLNK(seen.st_mode):
                links += 1
                if links > MAX_LINKS:
                    raise Refused(f"refused {path!r}: a symlink loop (more than {MAX_LINKS} links on the way)")
                target = dirs[-1].readlink(name)
                if os.path.isabs(target):
                    below = self._below_root(target)
                    if below is None:
                        raise outside
                    while len(dirs) > 1:
                        dirs.pop().close()
                    pending = below + pending
                else:
                    pending = _parts(target) + pending
            elif not pending:
                return _Found(dirs, name, seen)
            elif stat.S_ISDIR(seen.st_mode):
                dirs.append(dirs[-1].child(name))
            else:
                raise NotFound(f"{path}: no such file or folder ({name} is not a folder)")
        return _Found(dirs, None, None)

    def _below_root(self, target: str) -> list[str] | None:
        """An absolute link target's names below the root, or None if it lies elsewhere."""
        target = os.path.normcase(target.removeprefix("\\\\?\\"))
        real = os.path.normcase(self.real)
        if target == real:
            return []
        prefix = real.rstrip(os.sep) + os.sep
        return _parts(target[len(prefix):]) if target.startswith(prefix) else None

    # --- what the server asks --------------------------------------------------------------------------
    def info(self, path: str) -> Entry:
        """The file or folder at ``path`` (links followed, inside the root only)."""
        with self._walk(path) as found:
            entry = self._entry(found)
        if entry is None:
            raise NotFound(f"{path}: no such file or folder")
        return entry

    def read(self, path: str, limit: int) -> tuple[bytes, Entry]:
        """A regular file's bytes (at most ``limit``) and its entry; a folder, FIFO or device is refused."""
        with self._walk(path) as found:
            if found.name is None or stat.S_ISDIR(found.seen.st_mode):
                raise Refused(f"{path} is a folder, not a file")
            if not stat.S_ISREG(found.seen.st_mode):
                raise Refused(f"refused {path}: not a regular file (a device, FIFO or socket)")
            fd = found.dirs[-1].open(found.name, os.O_RDONLY | NONBLOCK, seen=found.seen)
            with os.fdopen(fd, "rb") as file:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):  # swapped for a FIFO since the walk saw it
                    raise Refused(f"refused {path}: not a regular file (a device, FIFO or socket)")
                data = file.read(limit + 1) if info.st_size <= limit else b""
                if info.st_size > limit or len(data) > limit:
                    size = max(info.st_size, len(data))
                    raise Refused(f"refused {path}: it is {size} bytes and this server reads at most {limit} "
                                  f"bytes ({limit / (1 << 20):g} MiB)")
            return data, Entry(found.rel, "file", len(data), info.st_mtime)

    def list(self, path: str = ".", *, visits: int = 10_000) -> list[Entry]:
        """What a folder holds, sorted by name: links that dangle, loop or lead out are left out."""
        entries = []
        with self._walk(path) as found:
            folder = self._folder(found, path)
            for name in sorted(folder.names(visits)):
                if listed(name):
                    entry, _ = self._classify(folder, name)
                    if entry is not None:
                        entries.append(entry)
        return entries

    def files(self, path: str = ".", *, limit: int, visits: int = 10_000,
              keep: Callable[[Entry], bool] | None = None) -> list[Entry]:
        """Regular files under ``path`` (those ``keep`` accepts), depth first as ``os.walk`` yields them.

        Links to folders are not followed. Stops after ``limit`` files or ``visits`` names looked at.
        """
        with closing(self._under(path, visits)) as walk:
            return list(islice((e for e in walk if e is not None and (keep is None or keep(e))), limit))

    async def search(self, path: str = ".", *, limit: int, visits: int, keep: Callable[[Entry], bool]) -> list[Entry]:
        """:meth:`files`, stepping aside for the event loop every few names: a search never holds it up."""
        hits: list[Entry] = []
        with closing(self._under(path, visits)) as walk:
            for number, entry in enumerate(walk, 1):
                if entry is not None and keep(entry):
                    hits.append(entry)
                    if len(hits) >= limit:
                        break
                if number % STEP == 0:
                    await asyncio.sleep(0)
        return hits

    def _under(self, path: str, visits: int) -> Iterator[Entry | None]:
        """Each name under ``path`` looked at, in order: its entry if it is a file, else None."""
        with self._walk(path) as found:
            yield from self._names_under(self._folder(found, path), [visits], 0)

    def _names_under(self, folder: DescriptorFolder | PathFolder, budget: list[int], depth: int) -> Iterator[Entry | None]:
        below = []
        for name in sorted(folder.names(budget[0])):
            if budget[0] <= 0:
                return
            budget[0] -= 1
            entry, linked = self._classify(folder, name) if listed(name) else (None, False)
            yield entry if entry is not None and entry.kind == "file" else None
            if entry is not None and entry.kind == "folder" and not linked and depth < MAX_DEPTH:
                below.append(name)
        for name in below:
            try:
                child = folder.child(name)
            except OSError:
                continue  # gone, or swapped for a link, since it was listed
            try:
                yield from self._names_under(child, budget, depth + 1)
            finally:
                child.close()

    def check_write(self, path: str) -> Entry | None:
        """What a write to ``path`` would replace (None: it would create it); refuses what cannot be written."""
        with self._walk(path, missing_ok=True) as found:
            return self._writable(found, path)

    def write(self, path: str, data: bytes) -> tuple[str, bool]:
        """Write ``data`` to ``path`` atomically (temporary file, then rename): its path inside, and whether
        it replaced a file. The walk starts again from the root: whatever changed since a check counts."""
        with self._walk(path, missing_ok=True) as found:
            existing = self._writable(found, path)
            parent, name = found.dirs[-1], found.name
            temp = f".{name}.{secrets.token_hex(6)}.tmp"
            fd = parent.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            try:
                with os.fdopen(fd, "wb") as file:
                    if existing is not None and hasattr(os, "fchmod"):
                        os.fchmod(fd, stat.S_IMODE(found.seen.st_mode))
                    file.write(data)
                    file.flush()
                    os.fsync(fd)  # the bytes are on disk before the rename makes them visible
                parent.replace(temp, name)  # atomic: readers see the old file or the new one
            except BaseException:
                try:
                    parent.unlink(temp)
                except OSError:
                    pass
                raise
            return found.rel, existing is not None

    # --- helpers -----------------------------------------------------------------------------------------
    def _writable(self, found: _Found, path: str) -> Entry | None:
        if found.name is None or (found.seen is not None and stat.S_ISDIR(found.seen.st_mode)):
            raise Refused(f"refused {path}: it is a folder")
        if found.seen is not None and not stat.S_ISREG(found.seen.st_mode):
            raise Refused(f"refused {path}: not a regular file")
        return self._entry(found) if found.seen is not None else None

    def _folder(self, found: _Found, shown: str) -> DescriptorFolder | PathFolder:
        """The folder a walk ended on, opened (and left for the walk to close)."""
        if found.name is None:
            return found.dirs[-1]
        if not stat.S_ISDIR(found.seen.st_mode):
            raise Refused(f"{shown} is not a folder")
        found.dirs.append(found.dirs[-1].child(found.name))
        return found.dirs[-1]

    def _entry(self, found: _Found) -> Entry | None:
        """The entry a walk ended on; a file's size comes from its checked handle on the portable walk."""
        if found.name is None:
            folder = found.dirs[-1]
            info = os.fstat(folder.fd) if isinstance(folder, DescriptorFolder) else os.stat(folder.path)
            return Entry(found.rel, "folder", 0, info.st_mtime)
        seen = found.seen
        if seen is None:
            return None
        if stat.S_ISREG(seen.st_mode) and isinstance(found.dirs[-1], PathFolder):
            fd = found.dirs[-1].open(found.name, os.O_RDONLY | NONBLOCK, seen=seen)
            try:
                seen = os.fstat(fd)
            finally:
                os.close(fd)
        kind = "file" if stat.S_ISREG(seen.st_mode) else "folder" if stat.S_ISDIR(seen.st_mode) else "other"
        return Entry(found.rel, kind, seen.st_size if kind == "file" else 0, seen.st_mtime)

    def _classify(self, folder: DescriptorFolder | PathFolder, name: str) -> tuple[Entry | None, bool]:
        """One listed name as an entry (None if it is a link that dangles, loops or leads out), and: a link?"""
        rel = "/".join((*folder.rel, name))
        try:
            seen = folder.lstat(name)
            if stat.S_ISLNK(seen.st_mode):
                return replace(self.info(rel), path=rel), True  # a fresh walk from the root judges the link
            return self._entry(_Found([folder], name, seen)), False
        except (OSError, ToolError):
            return None, False
