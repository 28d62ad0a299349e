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
"""

from __future__ import annotations

import base64
import io
import sys
from dataclasses import dataclass
from typing import Any

from mcplab.economics.marks import Panel, Point
from mcplab.i18n import _

# The page's test, as mcplab.place.IN_BROWSER makes it; not imported from there, since the economics
# is a leaf that knows nothing of transports.
IN_BROWSER = sys.platform == "emscripten"


@dataclass(frozen=True)
class Chart:
    """One figure: its panels side by side, ``size`` in inches as matplotlib counts them."""

    panels: tuple[Panel, ...]
    size: tuple[float, float] = (12, 5)

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
        return {"image/png": base64.b64encode(self.png()).decode("ascii"), "text/plain": repr(self)}


VEGA_LITE = "application/vnd.vegalite.v5+json"  # JupyterLab's own Vega extension renders it, offline too
