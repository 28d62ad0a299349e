"""A host's configuration file is the user's data: read strictly, changed under a lock, backed up first.

Theory of operation
-------------------
``mcplab config --write FILE`` changes a file that the user owns and that a desktop app or an editor
reads, and another program (a second ``mcplab config``, the user's editor) may be at it meanwhile.
:func:`mcplab.ecosystem.hostconfig.write` decides what goes in; this module keeps the file whole:

* :func:`load` accepts only what a rewrite would carry over intact: UTF-8 JSON whose objects hold
  each key once. UTF-16 text, a key written twice (the parser would keep the last one without a
  word), nesting deeper than the parser follows: each is refused in one sentence naming the file
  and what came, and the file is left as it is.
* ``.FILE.mcplab`` beside FILE is mcplab's own. A writer holds an exclusive lock on it
  (:func:`locked`: ``fcntl.flock``, or ``msvcrt.locking`` where there is no fcntl; none in the browser
  edition, one process with no other writer, whose fcntl has no flock) from reading FILE
  to renaming the new FILE into place, so two writers take turns and neither loses the other's
  entry. The lock is waited for, as long as the other writer takes: no clock decides. The same file
  holds the SHA-256 of every entry mcplab wrote (:class:`Written`): an entry whose digest is there
  is mcplab's to replace, any other is the user's. It is rewritten in place under the lock; a crash
  half way leaves it unreadable, and then no entry counts as mcplab's: the safe side.
* Before FILE changes, its bytes are kept as ``FILE.bak`` (``FILE.bak.2``, ``FILE.bak.3`` ... when
  that name is taken: a backup is never written over), with FILE's permissions (:func:`backup`).
* The new FILE is written to a temporary file beside it, flushed to the disk, given FILE's mode and
  renamed over it (:func:`replace`): a crash leaves the old file or the new one, never half of each.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from mcplab.i18n import _

try:
    import fcntl
except ImportError:  # Windows: msvcrt's byte-range lock instead
    fcntl = None  # type: ignore[assignment]

__all__ = ["HostConfigError", "load", "locked", "Written", "digest", "backup", "replace"]

NOFOLLOW, BINARY = getattr(os, "O_NOFOLLOW", 0), getattr(os, "O_BINARY", 0)
UTF16_MARKS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


class HostConfigError(ValueError):
    """A configuration that cannot be built or written; the message says what was expected."""


class _Twice(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Twice(key)
        found[key] = value
    return found


def load(path: Path) -> tuple[Any, bytes | None]:
    """FILE's JSON value (``{}`` when it is missing or blank) and its bytes (None when it is missing)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}, None
    name = path.name
    if data.startswith(UTF16_MARKS) or b"\0" in data:
        raise HostConfigError(_("{name} is UTF-16 text (a UTF-16 byte-order mark or NUL bytes), and a JSON object "
                                "in UTF-8 was expected: save it as UTF-8 and run again, or leave it and paste the "
                                "block in by hand", name=name))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise HostConfigError(_("{name} is not UTF-8 (byte {offset} is 0x{byte:02x}), and a JSON object in UTF-8 "
                                "was expected: save it as UTF-8 and run again, or leave it and paste the block in "
                                "by hand", name=name, offset=exc.start, byte=data[exc.start])) from None
    if not text.strip():
        return {}, data
    try:
        return json.loads(text, object_pairs_hook=_once), data
    except _Twice as twice:
        raise HostConfigError(_("{name} has the key {key!r} twice in one object, and a rewrite would keep only the "
                                "last one: remove one of them and run again", name=name, key=twice.key)) from None
    except RecursionError:
        raise HostConfigError(_("{name} is nested deeper than mcplab reads (about a thousand levels), and a JSON "
                                "object a few levels deep was expected, as a host's configuration is", name=name)) from None
    except json.JSONDecodeError as exc:
        raise HostConfigError(f"{name} is not plain JSON ({exc.msg}, line {exc.lineno}); it may have "
                              f"comments, which a rewrite would lose. Leave it as it is: run without --write "
                              f"and paste the block in by hand") from None


def digest(entry: Any) -> str:
    """The SHA-256 of one server entry, the same however its keys are ordered."""
    return hashlib.sha256(json.dumps(entry, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class Written:
    """What mcplab wrote into FILE: for each servers key, name → digest of the entry as written."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        try:
            record = json.loads(b"".join(chunks))
        except (ValueError, RecursionError):
            record = {}  # new, cut short by a crash, or not ours at all: no entry is provably mcplab's
        self.digests: dict[str, dict[str, str]] = {
            key: {name: value for name, value in names.items() if isinstance(value, str)}
            for key, names in (record.items() if isinstance(record, dict) else ()) if isinstance(names, dict)}

    def of(self, key: str) -> dict[str, str]:
        return dict(self.digests.get(key, {}))

    def save(self, key: str, servers: Mapping[str, Any], written: Mapping[str, Any]) -> None:
        """Remember the entries just ``written``; forget those of ours that ``servers`` no longer holds as we wrote them."""
        mine = {name: value for name, value in self.digests.get(key, {}).items()
                if name in servers and digest(servers[name]) == value}
        self.digests = {**self.digests, key: {**mine, **{name: digest(entry) for name, entry in written.items()}}}
        data = json.dumps(self.digests, indent=1, sort_keys=True).encode()
        os.lseek(self.fd, 0, os.SEEK_SET)
        os.ftruncate(self.fd, 0)
        os.write(self.fd, data)
        os.fsync(self.fd)


@contextmanager
def locked(path: Path) -> Iterator[Written]:
    """Hold the lock beside ``path`` until the block ends (module docstring); what mcplab wrote comes with it."""
    fd = os.open(path.with_name(f".{path.name}.mcplab"), os.O_RDWR | os.O_CREAT | NOFOLLOW | BINARY, 0o600)
    try:
        _lock(fd, exclusive=True)
        try:
            yield Written(fd)
        finally:
            _lock(fd, exclusive=False)
    finally:
        os.close(fd)


def _lock(fd: int, *, exclusive: bool) -> None:
    """Take (waiting until the other writer lets go) or let go of the lock on ``fd``."""
    if fcntl is not None and not hasattr(fcntl, "flock"):
        return  # Pyodide, in a page: its fcntl has no flock, and no other program is there to take turns with
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_UN)
        return
    import msvcrt

    while True:
        os.lseek(fd, 0, os.SEEK_SET)  # msvcrt locks bytes from the current position: byte 0, always
        try:
            msvcrt.locking(fd, msvcrt.LK_LOCK if exclusive else msvcrt.LK_UNLCK, 1)
            return
        except OSError:
            if not exclusive:
                raise
            continue  # LK_LOCK gives up after ten tries a second apart: the other writer is still at it


def backup(path: Path, data: bytes, mode: int) -> Path:
    """``data`` (FILE as it was) kept as FILE.bak, or FILE.bak.N when that is taken; never over another file."""
    number = 1
    while True:
        kept = path.with_name(f"{path.name}.bak" + (f".{number}" if number > 1 else ""))
        try:
            fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | BINARY, 0o600)
        except FileExistsError:
            number += 1  # an earlier backup (or a link, or anything else of that name): never written over
            continue
        try:
            with os.fdopen(fd, "wb") as file:
                if hasattr(os, "fchmod"):
                    os.fchmod(fd, mode)  # no more readable than FILE: it may hold tokens in an env block
                file.write(data)
                file.flush()
                os.fsync(fd)
        except BaseException:
            kept.unlink(missing_ok=True)
            raise
        return kept


def replace(path: Path, text: str, mode: int) -> None:
    """``text`` as FILE, atomically: a temporary file beside it, on the disk, with ``mode``, renamed over it."""
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.",
                                     suffix=".tmp", delete=False) as tmp:
        try:
            tmp.write(text)
            tmp.flush()
            os.fsync(tmp.fileno())
            os.chmod(tmp.name, mode)
        except BaseException:
            tmp.close()
            os.unlink(tmp.name)
            raise
    try:
        os.replace(tmp.name, path)  # atomic on one file system: the old file or the new, never half
    except BaseException:
        os.unlink(tmp.name)
        raise
