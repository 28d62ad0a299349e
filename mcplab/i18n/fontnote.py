"""What to tell a student whose machine has no CJK font: one sentence, with the command that installs one.

Theory of operation
-------------------
Without a font that has Chinese glyphs (``mcplab.i18n.fonts``), matplotlib draws every Chinese label as a
box. The plots then keep their labels in English (``mcplab.economics.chart.readable``) and show
:func:`missing_font_note` above the picture, in the student's language: the command that installs a CJK
font on this system (:func:`install_command`: the package of the Linux distribution that
``/etc/os-release`` names, by ``ID`` and then ``ID_LIKE``; Homebrew on macOS; the language settings on
Windows), and where matplotlib's font cache is, since a font installed after the cache was built is
not seen until it goes.

A module of its own, beside ``fonts``: this one looks its sentences up (``_``), and the language switch
imports ``fonts``, so the two directions stay apart.
"""

from __future__ import annotations

import sys

from mcplab.i18n import _

__all__ = ["LINUX_FONT_PACKAGES", "install_command", "missing_font_note"]


# The first family of /etc/os-release's ID and ID_LIKE that has a rule names the command.
LINUX_FONT_PACKAGES = (
    (("debian", "ubuntu"), "sudo apt install fonts-noto-cjk"),
    (("fedora", "rhel", "centos"), "sudo dnf install google-noto-sans-cjk-fonts"),
    (("arch",), "sudo pacman -S noto-fonts-cjk"),
    (("opensuse", "suse"), "sudo zypper install noto-sans-sc-fonts"),
    (("alpine",), "sudo apk add font-noto-cjk"),
)


def _os_release() -> str:
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            with open(path, encoding="utf-8") as file:
                return file.read()
        except OSError:
            continue
    return ""


def install_command(platform: str | None = None, os_release: str | None = None) -> str:
    """The command that installs a CJK font matplotlib can use, on this system (or the one named).

    >>> install_command("linux", 'ID=ubuntu\nID_LIKE=debian\n')
    'sudo apt install fonts-noto-cjk'
    """
    platform = sys.platform if platform is None else platform
    if platform == "darwin":
        return "brew install --cask font-noto-sans-cjk-sc"
    if platform.startswith(("win", "cygwin")):
        return _("Settings → Time & language → Language & region → Add a language → 中文(简体)")
    release = _os_release() if os_release is None else os_release
    names: list[str] = []
    for line in release.splitlines():
        key, _sep, value = line.partition("=")
        if key in ("ID", "ID_LIKE"):
            names += value.strip().strip('"').lower().split()
    for name in names:
        for families, command in LINUX_FONT_PACKAGES:
            if any(name == family or name.startswith(family + "-") for family in families):
                return command
    return _("your package manager's Noto Sans CJK font package")


def missing_font_note() -> str:
    """The one sentence a plot shows beside English labels drawn for want of a CJK font."""
    import matplotlib

    return _("This machine has no font with Chinese characters, so the plots keep their labels in English "
             "(Chinese would be drawn as boxes); to see them in Chinese, install one ({command}), then delete "
             "matplotlib's font cache (the fontlist-*.json files in {cache}) and restart the kernel.",
             command=install_command(), cache=matplotlib.get_cachedir())
