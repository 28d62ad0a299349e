"""Where the course lives: the bundled servers and the labs, in a checkout or an installed wheel,
and the copy a student works in.

Theory of operation
-------------------
The course is two folders side by side: ``servers/`` (the bundled servers and the file server's
``samples/``) and ``labs/`` (the notebooks, ``solutions/`` and the nbval sanitize file). The
notebooks start servers as ``../servers/weather.py``, so the two folders always travel together::

    a checkout                        an installed wheel (pip, pipx, uv)
    <clone>/mcplab/    the package    site-packages/mcplab/
    <clone>/servers/                  site-packages/mcplab/_course/servers/
    <clone>/labs/                     site-packages/mcplab/_course/labs/

:func:`root` says which: the wheel's ``_course`` when it is there (pyproject.toml maps both
folders into it), else the folder above the package. Everything that starts a bundled server goes
through :func:`server_command`, so ``mcplab serve``, ``demo``, ``inspect`` and the playground
behave the same from either.

A student never works inside site-packages: it may be read-only, every user of a classroom
machine shares it, and the next install wipes it. :func:`copy_course` copies both folders into a
folder of the student's own (``~/mcplab-course`` unless told), and on later runs brings in what
is new or changed in the course without ever overwriting a file the student changed. A manifest,
``.mcplab-course.json``, keeps the SHA-256 of every file as it was copied: a file whose digest
still matches it is the course's and may be updated; any other file is the student's and is kept.
A file the student deleted comes back, which is also how to get a fresh copy of one lab. Each file
is written under a temporary name and renamed over its target (atomic), the manifest last.

The copy is the student's folder on a machine others share, so nothing in it is taken to be what
the course put there. :class:`_Folder` walks it from its top one name at a time, each folder opened
relative to the one above with ``O_NOFOLLOW``, the way the file server's sandbox walks its root
(mcplab/server/confine.py). A link where a course folder or file belongs is the user's: it may
point anywhere, outside the copy too, so it is never read or written through and never replaced;
the report names it and where it points. A temporary file is created (``O_EXCL``) in its folder's
descriptor and renamed in that same descriptor, so a folder swapped for a link after it was opened
changes nothing: the bytes go to the folder that was checked. Without ``dir_fd`` (Windows) the walk
goes by paths and looks at each name with ``lstat`` first, which a quick enough swap could race.

A copy killed half way leaves its temporary files, ``.NAME.XXXXXXXX.part`` beside the course file
NAME. The next run removes those (a regular file of this user, with exactly that shape of name,
beside a file the course writes: nobody else makes them) and completes the copy: the files the
killed run had already written match the course, and count as copied.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from mcplab.i18n import ngettext

__all__ = ["BUNDLED", "DEFAULT_COPY", "MANIFEST", "CopyReport", "root", "is_checkout", "servers_dir",
           "labs_dir", "server_command", "copy_course"]

PACKAGE = Path(__file__).resolve().parent
WHEEL_COURSE = PACKAGE / "_course"      # where pyproject.toml's wheel `sources` put servers/ and labs/
CHECKOUT = PACKAGE.parent
BUNDLED = ("weather", "files", "conformance")
FOLDERS = ("servers", "labs")
DEFAULT_COPY = Path("~") / "mcplab-course"
MANIFEST = ".mcplab-course.json"
SKIPPED_DIRS = frozenset({"__pycache__", ".ipynb_checkpoints"})  # made by running, not part of the course
FILE_MODE = 0o644
# os.replace takes dir_fd arguments wherever os.rename does, but only rename is listed in supports_dir_fd.
DIR_FD = (all(f in os.supports_dir_fd for f in (os.open, os.stat, os.mkdir, os.readlink, os.rename, os.unlink))
          and os.scandir in os.supports_fd and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY"))
"""Can the copy be walked by directory descriptors (Linux, macOS, the BSDs)? If not, by checked paths."""
NOFOLLOW, NONBLOCK, BINARY = (getattr(os, flag, 0) for flag in ("O_NOFOLLOW", "O_NONBLOCK", "O_BINARY"))
PART = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}\.part")  # a temporary file's name; tempfile's shape, as before


class CourseMissing(SystemExit):
    """The servers and labs are neither in the wheel nor beside the package (a broken install)."""


def root() -> Path:
    """The folder that holds ``servers/`` and ``labs/``: the wheel's copy, else the checkout."""
    return WHEEL_COURSE if (WHEEL_COURSE / "servers").is_dir() else CHECKOUT


def is_checkout() -> bool:
    """True when mcplab runs from a clone of its repository (an editable install or a plain path)."""
    return root() == CHECKOUT


def servers_dir() -> Path:
    path = root() / "servers"
    if not (path / "weather.py").is_file():
        raise CourseMissing(f"mcplab: the bundled servers are missing (looked in {path}); reinstall mcplab "
                            f"(pip install --force-reinstall mcplab) or run it from a clone")
    return path


def labs_dir() -> Path:
    path = root() / "labs"
    if not path.is_dir():
        raise CourseMissing(f"mcplab: the labs are missing (looked in {path}); reinstall mcplab or run it from a clone")
    return path


def server_command(name: str, *flags: str) -> list[str]:
    """The argv that starts a bundled server over stdio, e.g. for ``stdio(...)``.

    >>> server_command("weather", "--era", "modern")[-3:]      # doctest: +ELLIPSIS
    ['.../weather.py', '--era', 'modern']
    """
    if name not in BUNDLED:
        raise ValueError(f"unknown bundled server {name!r}; expected one of {', '.join(BUNDLED)}")
    return [sys.executable, str(servers_dir() / f"{name}.py"), *flags]


# --- the student's copy ------------------------------------------------------------------------------

@dataclass(frozen=True)
class CopyReport:
    """What :func:`copy_course` did, each tuple a list of paths relative to ``dest``."""
    dest: Path
    added: tuple[str, ...]      # not there before (the first run copies everything)
    updated: tuple[str, ...]    # the course changed them and the student had not
    kept: tuple[str, ...]       # the student changed them: left exactly as they are
    unchanged: int              # already the course's current version
    linked: tuple[tuple[str, str], ...] = ()  # (path, where it points): a link of the user's, left alone

    def text(self) -> str:
        """A few lines for the terminal, e.g. ``copied the course into ~/mcplab-course (34 files)``."""
        where = _shown(self.dest)
        if self.added and not (self.updated or self.kept or self.unchanged):
            lines = [f"mcplab: copied the course into {where} ({_files(len(self.added))})"]
        else:
            lines = [f"mcplab: the course in {where}: {_files(self.unchanged)} unchanged"
                     + "".join(f", {_files(len(paths))} {verb}" for verb, paths in
                               (("added", self.added), ("updated from the course", self.updated)) if paths)]
        if self.kept:
            lines.append(f"mcplab: kept your changes to {_files(len(self.kept))} (delete or rename one and run "
                         f"again for the course's copy): {', '.join(self.kept)}")
        if self.linked:
            lines.append(ngettext(
                "mcplab: left {n} link in your copy alone, as the course is never copied through a link "
                "(remove it and run again for the course's copy): {links}",
                "mcplab: left {n} links in your copy alone, as the course is never copied through a link "
                "(remove one and run again for the course's copy): {links}",
                len(self.linked), links=", ".join(f"{path} → {target}" for path, target in self.linked)))
        return "\n".join(lines)


def copy_course(dest: str | os.PathLike[str] = DEFAULT_COPY) -> CopyReport:
    """Copy (or bring up to date) ``servers/`` and ``labs/`` into ``dest``, keeping the student's changes."""
    target = Path(dest).expanduser().resolve()
    source = root()
    if target == source or source in target.parents or target in source.parents:
        raise ValueError(f"expected a folder of your own for the course, outside {source}; got {target}")
    target.mkdir(parents=True, exist_ok=True)
    files = _course_files(source)
    ours: dict[str, set[str]] = {"": {MANIFEST}}  # folder → the names the course writes in it
    for relative, _ in files:
        parent, _, name = relative.rpartition("/")
        ours.setdefault(parent, set()).add(name)
    top = _Folder.top(target)
    folders: dict[str, _Folder | None] = {"": top}
    linked: dict[str, str] = {}
    added: list[str] = []
    updated: list[str] = []
    kept: list[str] = []
    unchanged = 0
    try:
        top.remove_leftovers(ours[""])
        copied = _read_manifest(top.read(MANIFEST))
        for relative, path in files:
            parent, _, name = relative.rpartition("/")
            folder = _reach(folders, parent, linked, ours)
            if folder is None:
                continue  # below a link: the user's
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            seen = folder.lstat(name)
            if seen is not None and stat.S_ISLNK(seen.st_mode):
                linked[relative] = folder.readlink(name)
                continue
            if seen is None:
                added.append(relative)
            else:
                there = folder.read(name)  # None: not a regular file (a folder, a FIFO ...)
                current = None if there is None else hashlib.sha256(there).hexdigest()
                if current == digest:
                    unchanged += 1
                    copied[relative] = digest
                    continue
                if current is None or current != copied.get(relative):
                    kept.append(relative)  # not what we wrote: the student's work, whatever the course says
                    continue
                updated.append(relative)
            folder.write(name, data)
            copied[relative] = digest
        top.write(MANIFEST, (json.dumps({"files": copied}, indent=1, sort_keys=True) + "\n").encode())
    finally:
        for folder in folders.values():
            if folder is not None:
                folder.close()
    return CopyReport(target, tuple(added), tuple(updated), tuple(kept), unchanged, tuple(linked.items()))


def _course_files(source: Path) -> list[tuple[str, Path]]:
    """Every file of the course as (path relative to the course root with "/" separators, absolute path)."""
    files = []
    for folder in FOLDERS:
        for directory, subdirs, names in os.walk(source / folder):
            subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_DIRS)
            for name in sorted(names):
                if not name.endswith(".pyc"):
                    path = Path(directory) / name
                    files.append((path.relative_to(source).as_posix(), path))
    return files


def _read_manifest(data: bytes | None) -> dict[str, str]:
    try:
        files = json.loads(data)["files"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return {}  # no manifest (or a damaged one): no file counts as ours, so none is overwritten
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(files, dict) else {}


def _reach(folders: dict[str, _Folder | None], relative: str, linked: dict[str, str],
           ours: dict[str, set[str]]) -> _Folder | None:
    """The copy's folder ``relative`` (``labs/build``), made if missing; None if a link is on the way."""
    if relative not in folders:
        above, _, name = relative.rpartition("/")
        parent = _reach(folders, above, linked, ours)
        folder = None
        if parent is not None:
            try:
                folder = parent.child(name)
            except _Linked as link:
                linked[relative] = link.target
            else:
                folder.remove_leftovers(ours.get(relative, set()))
        folders[relative] = folder
    return folders[relative]


class _Linked(Exception):
    """A link where the copy expected a folder; ``target`` is where it points."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.target = target


class _Folder:
    """One folder of the copy, reached without following a link: held open as a descriptor, or (without
    ``dir_fd``) known by a path whose every name was looked at with ``lstat`` on the way."""

    def __init__(self, path: Path, fd: int = -1) -> None:
        self.path, self.fd = path, fd

    @classmethod
    def top(cls, path: Path) -> _Folder:
        return cls(path, os.open(path, os.O_RDONLY | os.O_DIRECTORY) if DIR_FD else -1)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _at(self, name: str) -> tuple[str, dict[str, int]]:
        """How an os function reaches ``name``: relative to the descriptor, or by its path."""
        return (name, {"dir_fd": self.fd}) if self.fd >= 0 else (os.path.join(self.path, name), {})

    def lstat(self, name: str) -> os.stat_result | None:
        where, at = self._at(name)
        try:
            return os.stat(where, **at, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def readlink(self, name: str) -> str:
        where, at = self._at(name)
        return os.readlink(where, **at)

    def child(self, name: str) -> _Folder:
        """The folder ``name`` in this one, made if missing; :class:`_Linked` when a link is there."""
        where, at = self._at(name)
        try:
            os.mkdir(where, **at)
        except FileExistsError:
            pass  # a folder already, or a link or a file: told apart below
        failure: OSError = NotADirectoryError(errno.ENOTDIR, "not a folder", str(self.path / name))
        if self.fd >= 0:
            try:
                return _Folder(self.path / name, os.open(name, os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW, dir_fd=self.fd))
            except OSError as exc:  # ELOOP (ENOTDIR, EMLINK on some systems): a link, or not a folder
                failure = exc
        seen = self.lstat(name)
        if seen is not None and stat.S_ISLNK(seen.st_mode):
            raise _Linked(self.readlink(name))
        if self.fd < 0 and seen is not None and stat.S_ISDIR(seen.st_mode):
            return _Folder(self.path / name)
        raise failure

    def read(self, name: str) -> bytes | None:
        """A regular file's bytes, never through a link nor waiting on a FIFO; None for anything else."""
        where, at = self._at(name)
        try:
            fd = os.open(where, os.O_RDONLY | NOFOLLOW | NONBLOCK | BINARY, **at)
        except OSError:
            return None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        with os.fdopen(fd, "rb") as file:
            return file.read()

    def write(self, name: str, data: bytes) -> None:
        """``data`` as ``name``, atomically: a temporary file made in this folder, then renamed over ``name``."""
        temporary = f".{name}.{secrets.token_hex(4)}.part"
        where, at = self._at(temporary)
        # FILE_MODE less the user's umask, whatever mode the wheel's file has: writable, and private if they say so
        fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | BINARY, FILE_MODE, **at)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(fd)
            if self.fd >= 0:
                os.replace(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
            else:
                os.replace(where, os.path.join(self.path, name))
        except BaseException:
            try:
                os.unlink(where, **at)
            except OSError:
                pass
            raise

    def remove_leftovers(self, names: set[str]) -> None:
        """Remove the temporary files a killed copy left here beside the course files ``names``."""
        with os.scandir(self.fd if self.fd >= 0 else self.path) as entries:
            found = [entry.name for entry in entries if (part := PART.fullmatch(entry.name)) and part["name"] in names]
        for name in found:
            seen = self.lstat(name)
            # only this user's (where there are no owners, as on Windows, st_uid is 0 for every file)
            if seen is not None and stat.S_ISREG(seen.st_mode) and seen.st_uid == getattr(os, "geteuid", lambda: 0)():
                where, at = self._at(name)
                os.unlink(where, **at)


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def _shown(path: Path) -> str:
    """``~/mcplab-course`` rather than the home folder's full path."""
    home = Path.home()
    return f"~{os.sep}{path.relative_to(home)}" if home in path.parents else str(path)
