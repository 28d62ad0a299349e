"""What a figure of the economics shows, written down once and drawn by whichever renderer the place has.

Theory of operation
-------------------
A :class:`Chart` is plain data: one or more panels side by side (``marks.py``: each panel's axes and its
lines, rules, dots, edges, captions and heat map) and a size. ``plots.py`` computes the numbers and
fills these in; it draws nothing and imports no plotting library.

Two renderers read the same chart:

* on a machine, matplotlib (``drawing.py``): ``chart.to_matplotlib()`` is a ``Figure``, shown as a PNG;
* in the browser edition, where matplotlib and numpy cannot load, Vega-Lite (``vega.py``):
  ``chart.to_vega_lite()`` is a spec of plain dicts that JupyterLab's built-in Vega extension draws.

A notebook shows a chart by returning it: :meth:`Chart._repr_mimebundle_` picks the renderer of the
place (:data:`IN_BROWSER`). Its ``text/plain`` is the same in both places and says what the
figure shows, so the stored outputs of a lab hold the same words wherever it ran. What a reader (or a
test) may ask of a figure, the labels on a panel or the edges of a group, is asked of the chart, not of
a renderer's objects: ``chart.labels(0)``, ``chart.segments("adapters")``.

Every artist a reader may look for carries a ``gid`` (the names are listed in ``plots.py``); both
renderers keep it (matplotlib's ``gid``, a field of each Vega-Lite datum).

In Chinese, matplotlib needs a CJK font for the labels (``mcplab.i18n.fonts``). A machine without one
would draw boxes, so :func:`readable` builds the chart in English there and gives it a ``note``, the one
sentence saying why and which command installs a font; the notebook shows it above the picture (as
HTML, which the browser draws with its own fonts). The page is never in that case: the browser draws
the Vega-Lite labels with the fonts it has.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ParamSpec

from mcplab.economics.marks import Panel, Point
from mcplab.i18n import _, language, speaking

# The page's test, as mcplab.place.IN_BROWSER makes it; not imported from there, since the economics
# is a leaf that knows nothing of transports.
IN_BROWSER = sys.platform == "emscripten"


@dataclass(frozen=True)
class Chart:
    """One figure: its panels side by side, ``size`` in inches as matplotlib counts them."""

    panels: tuple[Panel, ...]
    size: tuple[float, float] = (12, 5)
    note: str = ""  # why the labels are not in the student's language (readable), shown above the picture

    def labels(self, panel: int = 0) -> list[str]:
        """The texts written beside points on one panel, in the order they were given."""
        return [text for dots in self.panels[panel].dots for text in dots.texts]

    def segments(self, gid: str) -> list[tuple[Point, Point]]:
        """Every edge of the groups named ``gid``, on every panel."""
        return [pair for panel in self.panels for group in panel.segments if group.gid == gid
                for pair in group.pairs]

    def to_matplotlib(self) -> Any:
        """A new matplotlib ``Figure`` of this chart (on a machine: the page has no matplotlib)."""
        from mcplab.economics.drawing import draw

        return draw(self.panels, self.size)

    def to_vega_lite(self) -> dict[str, Any]:
        """A Vega-Lite v5 spec of this chart, plain dicts that ``json.dumps`` takes as they are."""
        from mcplab.economics.vega import spec

        return spec(self.panels, self.size)

    def savefig(self, path: Any, **options: Any) -> None:
        """Save as matplotlib does (``.png``, ``.svg``, ...): ``chart.savefig("costs.png")``."""
        self.to_matplotlib().savefig(path, **options)

    def png(self, dpi: float = 100) -> bytes:
        """The figure as PNG bytes, drawn by matplotlib: what a machine's notebook shows, cropped to what is
        drawn as the notebook's inline backend crops a matplotlib figure (``bbox_inches="tight"``)."""
        buffer = io.BytesIO()
        self.to_matplotlib().savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
        return buffer.getvalue()

    def __repr__(self) -> str:
        return _("Figure: {titles}", titles=" | ".join(panel.title for panel in self.panels))

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        if IN_BROWSER:
            return {VEGA_LITE: self.to_vega_lite(), "text/plain": repr(self)}
        picture = base64.b64encode(self.png()).decode("ascii")
        bundle = {"image/png": picture, "text/plain": repr(self)}
        if self.note:  # HTML outranks the PNG in JupyterLab: the sentence, then the same picture
            bundle["text/html"] = (f"<p>{html.escape(self.note)}</p>"
                                   f'<img src="data:image/png;base64,{picture}" alt="{html.escape(repr(self))}"/>')
        return bundle


VEGA_LITE = "application/vnd.vegalite.v5+json"  # JupyterLab's own Vega extension renders it, offline too


Built = ParamSpec("Built")


def readable(build: Callable[Built, Chart]) -> Callable[Built, Chart]:
    """Build the chart in English, with a note saying why, where matplotlib has no font for Chinese."""

    @functools.wraps(build)
    def in_a_drawable_language(*args: Built.args, **kwargs: Built.kwargs) -> Chart:
        if language() != "zh" or IN_BROWSER:
            return build(*args, **kwargs)
        from mcplab.i18n import fontnote, fonts

        if fonts.cjk_font() is not None:
            return build(*args, **kwargs)
        note = fontnote.missing_font_note()
        with speaking("en"):
            return replace(build(*args, **kwargs), note=note)

    return in_a_drawable_language
