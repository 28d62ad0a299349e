"""JupyterLab in the course's language for one launch: ``mcplab lab --lang zh`` opens a Chinese JupyterLab.

Theory of operation
-------------------
JupyterLab translates its own menus with a language pack (``jupyterlab-language-pack-zh-CN``, in the
``lab`` extra) once its translation setting names the locale (``@jupyterlab/translation-extension:plugin``,
``locale: zh_CN``). Its default, ``"default"``, follows the server's system locale, which on most
machines is English or not installed. Writing the setting into the student's own JupyterLab settings
would change every later JupyterLab they open, so the choice goes where a default goes: an
*overrides* file in the application settings folder, which JupyterLab reads at start and which the
student's own settings still override.

The environment's settings folder belongs to the environment (every launch and every user of a
shared install reads it), so this launch gets a folder of its own, in mcplab's cache::

    $XDG_CACHE_HOME/mcplab/jupyterlab/zh_CN/settings/   the folder JupyterLab is pointed at
        overrides.d/*, overrides.json, page_config.json  copied from the folder it replaces
        overrides.d/zz-mcplab-language.json              the locale, read after the environment's own
    $XDG_CACHE_HOME/mcplab/jupyterlab/zh_CN/static/package.json   copied too (JupyterLab reads it beside)

Every file is written under a temporary name and renamed (atomic), and files the replaced folder no
longer has are removed from this one, which only mcplab writes. A launch that already names its own
``--LabApp.app_settings_dir`` keeps what that folder says: it is the one copied.
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib.metadata import entry_points
from pathlib import Path

from mcplab.i18n import LANGUAGES

__all__ = ["FLAG", "PLUGIN", "has_language_pack", "settings_folder", "launch_flags"]

FLAG = "--LabApp.app_settings_dir"
PLUGIN = "@jupyterlab/translation-extension:plugin"
OURS = "zz-mcplab-language.json"  # overrides.d is read in name order: ours after the environment's
COPIED = ("overrides.json", "overrides.json5", "page_config.json", "page_config.json5")


def has_language_pack(locale: str) -> bool:
    """Is JupyterLab's language pack for ``locale`` (``zh_CN``) installed in this environment?"""
    return any(entry.name == locale for entry in entry_points(group="jupyterlab.languagepack"))


def _cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcplab" / "jupyterlab"


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _mirror(source: Path, target: Path, names: list[str]) -> None:
    """``target`` holds exactly ``names`` from ``source`` (regular files only; a link is not followed)."""
    wanted = {name for name in names if (source / name).is_file() and not (source / name).is_symlink()}
    for name in sorted(wanted):
        _write(target / name, (source / name).read_bytes())
    if target.is_dir():
        for stale in target.iterdir():
            if stale.name not in wanted and stale.is_file() and not stale.is_symlink():
                stale.unlink()


def settings_folder(code: str, replaced: Path, cache: Path | None = None) -> Path:
    """The settings folder of a launch in language ``code``: ``replaced``'s files and the locale override."""
    locale = LANGUAGES[code][0]
    home = (cache or _cache()) / locale
    settings = home / "settings"
    _mirror(replaced, settings, list(COPIED))
    given = replaced / "overrides.d"
    theirs = sorted(p.name for p in given.iterdir()) if given.is_dir() and not given.is_symlink() else []
    _mirror(given, settings / "overrides.d", [name for name in theirs if name != OURS])
    _write(settings / "overrides.d" / OURS, (json.dumps({PLUGIN: {"locale": locale}}, indent=1) + "\n").encode())
    _mirror(replaced.parent / "static", home / "static", ["package.json"])
    return settings


def launch_flags(code: str, jupyter_args: list[str]) -> tuple[list[str], bool]:
    """``jupyter_args`` with JupyterLab's settings folder set for language ``code``, and whether it was.

    English, or a language whose pack is not installed, leaves the arguments as they are (False).
    """
    locale = LANGUAGES[code][0]
    if code == "en" or not has_language_pack(locale):
        return jupyter_args, False
    given = [arg for arg in jupyter_args if arg.startswith(FLAG + "=")]
    if given:
        replaced = Path(given[-1].partition("=")[2])
    else:
        from jupyterlab.commands import get_app_dir  # the environment's JupyterLab, as it would start

        replaced = Path(get_app_dir()) / "settings"
    folder = settings_folder(code, replaced)
    return [arg for arg in jupyter_args if not arg.startswith(FLAG + "=")] + [f"{FLAG}={folder}"], True
