"""What can be drawn on a panel of an economics figure: plain data, no plotting library.

A :class:`Panel` has its two axes and what is drawn on them: :class:`Line` (a curve), :class:`Rule` (a
vertical or horizontal line at one value), :class:`Dots` (points, each maybe labelled), :class:`Segments`
(straight edges, the graph pictures), :class:`Caption` (words at a place) and :class:`Heat` (a grid of
values, coloured). Positions are in data units; sizes and colours are as matplotlib names them (a dot's
``size`` is its area in points², a colour a CSS name or ``#rrggbb``), which Vega-Lite reads as well.
``chart.py`` puts panels together into a figure; ``drawing.py`` and ``vega.py`` draw them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Scale = Literal["linear", "log"]
Point = tuple[float, float]


@dataclass(frozen=True)
class Axis:
    label: str = ""
    scale: Scale = "linear"
    limits: tuple[float, float] | None = None  # None: fit what is drawn
    ticks: tuple[float, ...] | None = None  # None: the renderer's own


@dataclass(frozen=True)
class Line:
    """A curve through ``points``; a point whose y is not finite is left out (a gap, not a zero)."""

    points: tuple[Point, ...]
    color: str
    legend: str = ""
    gid: str = ""
    width: float = 2.0
    dots: bool = False  # a dot at every point


@dataclass(frozen=True)
class Rule:
    """A line across the panel at ``value`` on the x axis (``across="x"``) or the y axis."""

    value: float
    across: Literal["x", "y"] = "x"
    color: str = "gray"
    legend: str = ""
    gid: str = ""
    dash: str = "--"  # matplotlib's linestyle names: "--" dashed, ":" dotted
    width: float = 1.5
    note: str = ""  # written along the rule, at the top


@dataclass(frozen=True)
class Dots:
    """Points; with ``texts`` each is labelled (the renderer finds a spot), else ``legend`` names them."""

    points: tuple[Point, ...]
    color: str
    gid: str = ""
    texts: tuple[str, ...] = ()
    legend: str = ""
    size: float = 40
    shape: Literal["circle", "square"] = "circle"
    fill: str = ""  # "" fills with ``color``; else ``color`` is the edge


@dataclass(frozen=True)
class Segments:
    """Straight edges, each a pair of points, drawn as one group (``gid`` names it)."""

    pairs: tuple[tuple[Point, Point], ...]
    color: str
    gid: str
    width: float = 1.2


@dataclass(frozen=True)
class Caption:
    x: float
    y: float
    text: str
    align: Literal["left", "center", "right"] = "center"
    size: float = 10
    color: str = "black"
    bold: bool = False


@dataclass(frozen=True)
class Heat:
    """``values[i][j]`` at ``(xs[j], ys[i])``, coloured on a log scale from ``low`` (red) to ``high`` (blue)."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    values: tuple[tuple[float, ...], ...]
    low: float
    high: float
    legend: str = ""


@dataclass(frozen=True)
class Panel:
    title: str
    x: Axis = Axis()
    y: Axis = Axis()
    heat: Heat | None = None
    segments: tuple[Segments, ...] = ()
    lines: tuple[Line, ...] = ()
    rules: tuple[Rule, ...] = ()
    dots: tuple[Dots, ...] = ()
    captions: tuple[Caption, ...] = ()
    legend: str = "best"  # a corner ("upper left", ...), or "best": where no line or label is
    grid: bool = True
    frame: bool = True  # False: no axes at all (the graph pictures)
