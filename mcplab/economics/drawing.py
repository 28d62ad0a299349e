"""A chart's panels (``marks.py``) drawn by matplotlib: the machine's renderer.

Theory of operation
-------------------
:func:`draw` builds a new ``matplotlib.figure.Figure`` without pyplot, so nothing is registered globally,
no figure leaks between tests and no backend is needed: ``savefig`` works headless. One axes per panel,
side by side; on each, in this order: the heat map (``pcolormesh`` and its colour bar), the segments
(one ``LineCollection`` per group), the lines, the rules (``axvline``/``axhline``), the dots, the captions.
A group's ``gid`` goes on its artist; a labelled dot's goes on its label, which the search in
``labels.py`` puts where no line crosses, before the legend is placed where no line or label is.

In Chinese a CJK font goes first in line (``mcplab.i18n.fonts``), so no glyph is a box. matplotlib and
numpy are imported here and only here: the browser edition never imports this module.
"""

from __future__ import annotations

import math
from typing import Any

from matplotlib.collections import LineCollection
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from mcplab.economics.marks import Panel
from mcplab.economics.labels import place_labels, place_legend
from mcplab.i18n import language


def draw(panels: tuple[Panel, ...], size: tuple[float, float]) -> Figure:
    """A new figure, ``size`` inches, with one axes per panel, side by side."""
    if language() == "zh":
        from mcplab.i18n.fonts import use_cjk_font

        use_cjk_font()
    fig = Figure(figsize=size, layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, panel in zip(axes, panels):
        _draw_panel(fig, ax, panel)
    return fig


def _draw_panel(fig: Figure, ax: Any, panel: Panel) -> None:
    if panel.heat is not None:
        heat = panel.heat
        mesh = ax.pcolormesh(heat.xs, heat.ys, heat.values, shading="nearest", cmap="RdBu",
                             norm=LogNorm(vmin=heat.low, vmax=heat.high))
        bar = fig.colorbar(mesh, ax=ax, label=heat.legend)
        bar.ax.yaxis.set_major_formatter("{x:,.10g}")
        bar.ax.minorticks_off()
    for group in panel.segments:
        ax.add_collection(LineCollection(group.pairs, colors=group.color, linewidths=group.width, gid=group.gid))
    for line in panel.lines:
        ax.plot([x for x, _ in line.points], [y if math.isfinite(y) else math.nan for _, y in line.points],
                color=line.color, linewidth=line.width, marker="o" if line.dots else None,
                label=line.legend or "_nolegend_", gid=line.gid or None)
    for rule in panel.rules:
        across = ax.axvline if rule.across == "x" else ax.axhline
        across(rule.value, color=rule.color, linestyle=rule.dash, linewidth=rule.width,
               label=rule.legend or "_nolegend_", gid=rule.gid or None)
        if rule.note:
            ax.text(rule.value, 0.97, " " + rule.note, transform=ax.get_xaxis_transform(), va="top",
                    fontsize=9, color="dimgray")
    labels = []
    for dots in panel.dots:
        xs, ys = [x for x, _ in dots.points], [y for _, y in dots.points]
        ax.scatter(xs, ys, s=dots.size, marker="s" if dots.shape == "square" else "o", zorder=3,
                   color=dots.fill or dots.color, edgecolor=dots.color if dots.fill else None,
                   linewidth=2 if dots.fill else None, label=dots.legend or "_nolegend_",
                   gid=None if dots.texts else dots.gid or None)
        labels += [(point, text, dots.color, dots.gid) for point, text in zip(dots.points, dots.texts)]
    for words in panel.captions:
        ax.text(words.x, words.y, words.text, ha=words.align, va="center", fontsize=words.size,
                color=words.color, weight="bold" if words.bold else "normal",
                family="sans-serif" if words.bold else None, zorder=4)
    if not panel.frame:
        ax.set(xlim=panel.x.limits, ylim=panel.y.limits)
        ax.set_axis_off()
        ax.set_title(panel.title, fontsize=12)
        return
    ax.set(xscale=panel.x.scale, yscale=panel.y.scale, xlabel=panel.x.label, ylabel=panel.y.label,
           title=panel.title)
    if panel.x.limits:
        ax.set_xlim(panel.x.limits)
    if panel.y.limits:
        ax.set_ylim(panel.y.limits)
    if panel.x.ticks:
        ax.set_xticks(panel.x.ticks)
    _plain_ticks(ax)
    obstacles = place_labels(ax, labels) if labels else []
    if ax.get_legend_handles_labels()[1]:
        if panel.legend == "best":
            place_legend(ax, obstacles)
        else:
            ax.legend(loc=panel.legend, fontsize=9)
    if panel.grid:
        ax.grid(True, which="major", alpha=0.3)


def _plain_ticks(ax: Any) -> None:
    """Tick labels as plain numbers (1,000 not 10³): students read them as counts."""
    from matplotlib.ticker import LogLocator, NullLocator

    ax.autoscale_view()
    for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if axis.get_scale() == "log":
            decades = math.log10(max(limits) / min(limits))
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades < 3.3 else (1.0,)))
            axis.set_minor_locator(NullLocator())  # unlabelled, and each tick costs at draw
        axis.set_major_formatter("{x:,.10g}")
