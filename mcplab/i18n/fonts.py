"""A font with Chinese glyphs for matplotlib, so a plot's Chinese title is never a row of boxes.

Theory of operation
-------------------
matplotlib's default font, DejaVu Sans, has no CJK glyphs: every Chinese character would be drawn
as an empty box, with a "Glyph … missing from font(s)" warning on stderr. Since 3.6 matplotlib
falls back glyph by glyph along the ``font.family`` list, so :func:`use_cjk_font` adds the first CJK
font this machine has after the default family: Latin letters and digits keep their usual look,
Chinese comes from the CJK font. Only an installed font goes on the list (a missing one would make
matplotlib log a warning of its own on every figure). Most CJK fonts have no bold: a bold label in a
Chinese plot would make matplotlib warn, so a plot's bold Latin label names its family itself.

The candidates are the usual ones per system: WenQuanYi Micro Hei (Debian's ``fonts-wqy-microhei``,
what ``make test`` installs), Noto Sans CJK / Source Han Sans (most Linux desktops), PingFang and
Heiti (macOS), Microsoft YaHei and SimHei (Windows). :func:`resolved` says which font a text will be
drawn with and which of its characters that font lacks: the tests' glyph check.

A machine with none of them would draw every Chinese label as boxes: the plots then keep their labels
in English and say why (``mcplab.i18n.fontnote``).
"""

from __future__ import annotations

__all__ = ["CJK_FONTS", "cjk_font", "use_cjk_font", "fallback_files", "resolved", "missing_glyphs"]

CJK_FONTS = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC",
             "Source Han Sans CN", "PingFang SC", "Heiti SC", "Hiragino Sans GB", "Microsoft YaHei",
             "SimHei", "Droid Sans Fallback", "Arial Unicode MS")


def cjk_font() -> str | None:
    """The first of :data:`CJK_FONTS` installed here, or None."""
    from matplotlib import font_manager

    installed = {entry.name for entry in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in installed), None)


def use_cjk_font() -> str | None:
    """Add this machine's CJK font to matplotlib's fallback list; return its name (None: none found)."""
    import matplotlib

    name = cjk_font()
    if name is not None:
        families = [family for family in matplotlib.rcParams["font.family"] if family != name]
        # Last: Latin text keeps its usual font (and its bold, which most CJK fonts lack), and
        # only a glyph that font does not have comes from the CJK font.
        matplotlib.rcParams["font.family"] = [*families, name]
    return name


def fallback_files() -> list:
    """The font files matplotlib falls back along for default text, in order (one per family)."""
    import matplotlib
    from matplotlib import font_manager

    files: list = []
    for family in matplotlib.rcParams["font.family"]:
        try:  # a generic family (sans-serif) is its first installed member, as the renderer takes it
            path = font_manager.findfont(font_manager.FontProperties(family=[family]), fallback_to_default=False)
        except ValueError:  # not installed: the renderer skips it too
            continue
        if path not in files:
            files.append(path)
    return files


def resolved(text: str) -> list[tuple[str, str]]:
    """For each character of ``text``: (the character, the file of the font matplotlib draws it with).

    Walks the fallback list the renderer walks: the first font whose character map has the character.
    """
    from matplotlib.ft2font import FT2Font

    maps = [(str(path), FT2Font(path).get_charmap()) for path in fallback_files()]
    return [(char, next((path for path, cmap in maps if ord(char) in cmap), ""))
            for char in text if not char.isspace()]


def missing_glyphs(text: str) -> str:
    """The characters of ``text`` no font on the fallback list can draw (empty: none is missing)."""
    return "".join(char for char, path in resolved(text) if not path)

