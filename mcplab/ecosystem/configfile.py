"""A host's configuration file is the user's data: read strictly, replaced in one step.

Theory of operation
-------------------
``mcplab config --write FILE`` changes a file that the user owns and that a desktop app or an editor
reads. :func:`mcplab.ecosystem.hostconfig.write` decides what goes in; this module keeps the file whole:

* :func:`load` accepts only what a rewrite would carry over intact: UTF-8 JSON whose objects hold
  each key once. UTF-16 text, a key written twice (the parser would keep the last one without a
  word), nesting deeper than the parser follows: each is refused in one sentence naming the file
  and what came, and the file is left as it is.
* The new FILE is written to a temporary file beside it, flushed to the disk, given FILE's mode and
  renamed over it (:func:`replace`): a crash leaves the old file or the new one, never half of each.
"""

from __future__ import annotations

import codecs
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from mcplab.i18n import _

__all__ = ["HostConfigError", "load", "replace"]

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
