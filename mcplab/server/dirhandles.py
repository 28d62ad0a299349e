"""How the confinement walk (confine.py) holds a folder it has reached: open, or by path and checked.

Theory of operation
-------------------
The walk in ``confine.py`` goes from the root one name at a time; each folder it reaches is one of two
objects with the same small interface (``lstat``, ``readlink``, ``child``, ``open``, ``names``,
``replace``, ``unlink``, ``close``), so the walk itself is written once:

* :class:`DescriptorFolder` holds the folder open as a directory descriptor, and every name is looked
  up relative to it (``openat``, ``fstatat``, ``renameat``) with ``O_NOFOLLOW``: the kernel never
  follows a link on our behalf. Where ``dir_fd`` exists (Linux, macOS, the BSDs), this is the walk.
* :class:`PathFolder` knows the folder by its path, for a platform without ``dir_fd`` (Windows). A
  path can be raced, so whatever is opened through it is checked afterwards through the open
  handle: :func:`locate` asks the system where the handle really is, and it must be exactly where
  the walk expected; where the system cannot say, the handle's identity (device, inode) must equal
  what the walk saw. Nothing is read from, or written to, a handle that fails the check, and a file
  that an exclusive create made in the wrong place is removed again (:func:`_take_back`).

An ``OSError`` with ``ELOOP`` means "not where the walk expected": ``O_NOFOLLOW`` met a link, or a
check failed. The walk turns it into a refusal that asks the peer to try again.
"""

from __future__ import annotations

import errno
import os
from itertools import islice

__all__ = ["DescriptorFolder", "PathFolder", "locate", "NOFOLLOW", "DIRECTORY"]

NOFOLLOW, DIRECTORY = getattr(os, "O_NOFOLLOW", 0), getattr(os, "O_DIRECTORY", 0)
BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation


class DescriptorFolder:
    """A folder held as a directory descriptor: each name is looked up relative to it, links not followed."""

    def __init__(self, fd: int, rel: tuple[str, ...], owned: bool = True) -> None:
        self.fd, self.rel, self.owned = fd, rel, owned

    def lstat(self, name: str) -> os.stat_result:
        return os.stat(name, dir_fd=self.fd, follow_symlinks=False)

    def readlink(self, name: str) -> str:
        return os.readlink(name, dir_fd=self.fd)

    def child(self, name: str) -> DescriptorFolder:
        return DescriptorFolder(os.open(name, os.O_RDONLY | DIRECTORY | NOFOLLOW, dir_fd=self.fd), (*self.rel, name))

    def open(self, name: str, flags: int, mode: int = 0o666, seen: os.stat_result | None = None) -> int:
        return os.open(name, flags | NOFOLLOW, mode, dir_fd=self.fd)

    def names(self, most: int) -> list[str]:
        with os.scandir(self.fd) as entries:
            return [entry.name for entry in islice(entries, most)]

    def replace(self, src: str, dst: str) -> None:
        os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        os.unlink(name, dir_fd=self.fd)

    def close(self) -> None:
        if self.owned:
            os.close(self.fd)


class PathFolder:
    """A folder known by its path (no dir_fd here): what is opened in it is checked through the handle."""

    def __init__(self, real: str, rel: tuple[str, ...]) -> None:
        self.real, self.rel = real, rel  # the root's real path, and this folder's names below it
        self.path = os.path.join(real, *rel)

    def lstat(self, name: str) -> os.stat_result:
        return os.lstat(os.path.join(self.path, name))

    def readlink(self, name: str) -> str:
        return os.readlink(os.path.join(self.path, name))

    def child(self, name: str) -> PathFolder:
        return PathFolder(self.real, (*self.rel, name))

    def open(self, name: str, flags: int, mode: int = 0o666, seen: os.stat_result | None = None) -> int:
        path = os.path.join(self.path, name)
        fd = os.open(path, flags | NOFOLLOW | BINARY, mode)
        where = locate(fd)
        info = os.fstat(fd)
        if where is not None:
            ok = os.path.normcase(where) == os.path.normcase(path)
        else:  # nothing can say where the handle is: it must be the very file the walk saw
            ok = seen is not None and (info.st_dev, info.st_ino) == (seen.st_dev, seen.st_ino)
        if not ok:
            os.close(fd)
            if flags & os.O_CREAT and flags & os.O_EXCL and where is not None:
                _take_back(where, info)  # this open made the file, wherever the raced path led: undo it
            raise OSError(errno.ELOOP, "the opened file is not where the walk found it")
        return fd

    def names(self, most: int) -> list[str]:
        try:
            fd = os.open(self.path, os.O_RDONLY | DIRECTORY)
        except OSError:
            fd = -1
        if fd >= 0 and os.listdir in os.supports_fd:  # POSIX: list through a handle whose location is checked
            try:
                where = locate(fd)
                if where is not None and os.path.normcase(where) != os.path.normcase(self.path):
                    raise OSError(errno.ELOOP, "the folder is not where the walk found it")
                return os.listdir(fd)[:most]
            finally:
                os.close(fd)
        if fd >= 0:
            os.close(fd)
        # Windows cannot open a folder through os.open: check its real location before and after listing.
        if os.path.realpath(self.path) != self.path:
            raise OSError(errno.ELOOP, "the folder is not where the walk found it")
        found = os.listdir(self.path)[:most]
        return found if os.path.realpath(self.path) == self.path else []

    def replace(self, src: str, dst: str) -> None:
        os.replace(os.path.join(self.path, src), os.path.join(self.path, dst))

    def unlink(self, name: str) -> None:
        os.unlink(os.path.join(self.path, name))

    def close(self) -> None:
        pass


def _take_back(where: str, made: os.stat_result) -> None:
    """Remove the file an exclusive create just made at ``where``, if ``where`` is still that file.

    Its name is one nobody else chose (a temporary name, created with ``O_EXCL``), and it is removed
    only while it is the very file the create made (same device and inode); otherwise it is left."""
    try:
        now = os.lstat(where)
        if (now.st_dev, now.st_ino) == (made.st_dev, made.st_ino):
            os.unlink(where)
    except OSError:
        pass


def locate(fd: int) -> str | None:
    """Where an open handle really is, asked of the system; None where the system cannot say."""
    if os.path.isdir("/proc/self/fd"):  # Linux
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
    if os.name == "nt":
        import ctypes
        import msvcrt

        buffer = ctypes.create_unicode_buffer(32768)
        size = ctypes.windll.kernel32.GetFinalPathNameByHandleW(msvcrt.get_osfhandle(fd), buffer, 32768, 0)
        return buffer.value.removeprefix("\\\\?\\") if size else None
    try:
        import fcntl

        return fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024)).split(b"\0", 1)[0].decode()  # macOS, BSDs
    except (ImportError, AttributeError, OSError):
        return None
