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
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

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

    def text(self) -> str:
        """A few lines for the terminal, e.g. ``copied the course into ~/mcplab-course (34 files)``."""
        where = _shown(self.dest)
        if self.added and not (self.updated or self.kept or self.unchanged):
            return f"mcplab: copied the course into {where} ({_files(len(self.added))})"
        lines = [f"mcplab: the course in {where}: {_files(self.unchanged)} unchanged"
                 + "".join(f", {_files(len(paths))} {verb}" for verb, paths in
                           (("added", self.added), ("updated from the course", self.updated)) if paths)]
        if self.kept:
            lines.append(f"mcplab: kept your changes to {_files(len(self.kept))} (delete or rename one and run "
                         f"again for the course's copy): {', '.join(self.kept)}")
        return "\n".join(lines)


def copy_course(dest: str | os.PathLike[str] = DEFAULT_COPY) -> CopyReport:
    """Copy (or bring up to date) ``servers/`` and ``labs/`` into ``dest``, keeping the student's changes."""
    target = Path(dest).expanduser().resolve()
    source = root()
    if target == source or source in target.parents or target in source.parents:
        raise ValueError(f"expected a folder of your own for the course, outside {source}; got {target}")
    target.mkdir(parents=True, exist_ok=True)
    copied = _read_manifest(target / MANIFEST)
    added: list[str] = []
    updated: list[str] = []
    kept: list[str] = []
    unchanged = 0
    for relative, path in _course_files(source):
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        here = target / relative
        if not here.exists():
            added.append(relative)
        else:
            current = _digest(here)
            if current == digest:
                unchanged += 1
                copied[relative] = digest
                continue
            if current is None or current != copied.get(relative):
                kept.append(relative)  # not what we wrote: the student's work, whatever the course says
                continue
            updated.append(relative)
        _write_atomic(here, data)
        copied[relative] = digest
    _write_atomic(target / MANIFEST, (json.dumps({"files": copied}, indent=1, sort_keys=True) + "\n").encode())
    return CopyReport(target, tuple(added), tuple(updated), tuple(kept), unchanged)


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


def _read_manifest(path: Path) -> dict[str, str]:
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}  # no manifest (or a damaged one): no file counts as ours, so none is overwritten
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(files, dict) else {}


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:  # a folder or an unreadable file where a course file belongs: treat it as the student's
        return None


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.chmod(temporary, FILE_MODE)  # the wheel's files may be read-only; the student's copy is not
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def _shown(path: Path) -> str:
    """``~/mcplab-course`` rather than the home folder's full path."""
    home = Path.home()
    return f"~{os.sep}{path.relative_to(home)}" if home in path.parents else str(path)
