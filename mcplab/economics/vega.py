"""A chart's panels (``marks.py``) as a Vega-Lite v5 spec: the browser edition's renderer.

Theory of operation
-------------------
JupyterLab (and so JupyterLite) draws ``application/vnd.vegalite.v5+json`` itself, with the Vega it
bundles: no request leaves the page and nothing is installed. So a chart becomes plain dicts here, with
no plotting library in Python at all. A panel is one layered view (``hconcat`` puts several side by
side); each thing drawn is one layer with its data inline, one row per point:

* a ``Line`` is a ``line`` mark; a ``Rule`` a ``rule`` at its value; ``Segments`` are
  ``rule`` marks from (x, y) to (x2, y2); ``Dots`` are ``point`` marks, their labels a ``text`` layer
  beside them; a ``Caption`` is a ``text`` mark; a ``Heat`` is ``rect`` marks, one per cell, with
  edges halfway (on the log scale) between neighbouring grid values, coloured red to blue on a log scale.
* A row keeps the ``gid`` of its group, so a test (or a reader of the spec) finds what it drew.
* Whatever has a legend entry is coloured through one ``color`` scale per panel whose domain is the
  legend texts and whose range is their colours, so the legend lists exactly those.

A value a log axis cannot show (zero, negative, infinite, NaN) is left out of its layer, as matplotlib
leaves a gap. The labels go beside their points (left of a point in the right half of the panel, right
of it otherwise), with none of the machine's search for a free spot.
"""

from __future__ import annotations

import math
from typing import Any

from mcplab.economics.marks import Axis, Panel

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"  # a name the renderer reads, never fetched
DASHES = {"--": [6, 4], ":": [2, 3], "-": []}
# No null anywhere: the page's kernel drops a null from the data it displays, so "no axis" written as
# null would come out as an axis there. What is not to be drawn is said so, field by field.
NO_AXIS = {"domain": False, "ticks": False, "labels": False, "grid": False, "title": ""}
PIXELS_PER_INCH = 80  # the machine's figures are sized in inches; a panel here about as wide on screen


def spec(panels: tuple[Panel, ...], size: tuple[float, float]) -> dict[str, Any]:
    """One view, or the panels side by side, each legend its own; ``size`` in inches, as matplotlib's."""
    width = size[0] * PIXELS_PER_INCH / len(panels) - 90
    height = size[1] * PIXELS_PER_INCH * 0.7
    views = [_view(panel, round(width), round(height)) for panel in panels]
    if len(views) == 1:
        return {"$schema": SCHEMA, **views[0]}
    return {"$schema": SCHEMA, "hconcat": views,
            "resolve": {"scale": {"color": "independent"}, "legend": {"color": "independent"}}}


def _view(panel: Panel, width: int, height: int) -> dict[str, Any]:
    legends = [(item.legend, item.color) for item in (*panel.lines, *panel.rules, *panel.dots) if item.legend]
    color = {"field": "legend", "type": "nominal", "title": "",
             "scale": {"domain": [text for text, _ in legends], "range": [c for _, c in legends]},
             "legend": {"title": "", "orient": _ORIENT.get(panel.legend, "bottom"), "labelLimit": 320,
                        "columns": 2}}
    x, y = _position(panel.x, panel, "x"), _position(panel.y, panel, "y")
    layers: list[dict[str, Any]] = []
    if panel.heat is not None:  # the axes end where the outer cells do
        x["scale"].update(domain=_span(_edges(panel.heat.xs)), nice=False)
        y["scale"].update(domain=_span(_edges(panel.heat.ys)), nice=False)
        layers.append(_heat(panel, x, y))
    for group in panel.segments:
        rows = [{"x": a[0], "y": a[1], "x2": b[0], "y2": b[1], "gid": group.gid} for a, b in group.pairs]
        layers.append({"data": {"values": rows}, "mark": {"type": "rule", "color": group.color,
                                                          "strokeWidth": group.width},
                       "encoding": {"x": x, "y": y, "x2": {"field": "x2"}, "y2": {"field": "y2"}}})
    for line in panel.lines:
        rows = [{"x": px, "y": py, "gid": line.gid, "legend": line.legend} for px, py in line.points
                if _drawable(px, panel.x) and _drawable(py, panel.y)]
        layers.append({"data": {"values": rows},
                       "mark": {"type": "line", "strokeWidth": line.width, "point": line.dots, "clip": True},
                       "encoding": {"x": x, "y": y, **_colour(line, color)}})
    for rule in panel.rules:
        field = {"field": "value", "type": "quantitative", "scale": x["scale"] if rule.across == "x" else y["scale"]}
        row = {"value": rule.value, "gid": rule.gid, "legend": rule.legend, "note": rule.note}
        layers.append({"data": {"values": [row]},
                       "mark": {"type": "rule", "strokeDash": DASHES.get(rule.dash, []), "strokeWidth": rule.width},
                       "encoding": {rule.across: field, **_colour(rule, color)}})
        if rule.note:
            layers.append({"data": {"values": [row]},
                           "mark": {"type": "text", "align": "left", "dx": 3, "baseline": "top", "color": "dimgray"},
                           "encoding": {"x": field, "y": {"value": 4}, "text": {"field": "note"}}})
    for dots in panel.dots:
        texts = dots.texts or ("",) * len(dots.points)
        rows = [{"x": px, "y": py, "gid": dots.gid, "legend": dots.legend, "text": text}
                for (px, py), text in zip(dots.points, texts)]
        mark = {"type": "point", "shape": dots.shape, "size": dots.size, "filled": True, "opacity": 1}
        if dots.fill:
            mark.update(fill=dots.fill, stroke=dots.color, strokeWidth=2)
        layers.append({"data": {"values": rows}, "mark": mark, "encoding": {"x": x, "y": y, **_colour(dots, color)}})
        if dots.texts:
            for side, chosen in (("left", [r for r in rows if not _right_half(r["x"], panel)]),
                                 ("right", [r for r in rows if _right_half(r["x"], panel)])):
                if chosen:
                    layers.append({"data": {"values": chosen},
                                   "mark": {"type": "text", "align": side, "dx": 8 if side == "left" else -8,
                                            "dy": -8, "color": dots.color, "fontSize": 11},
                                   "encoding": {"x": x, "y": y, "text": {"field": "text"}}})
    for words in panel.captions:
        row = {"x": words.x, "y": words.y, "text": words.text}
        layers.append({"data": {"values": [row]},
                       "mark": {"type": "text", "align": words.align, "baseline": "middle", "fontSize": words.size,
                                "color": words.color, "fontWeight": "bold" if words.bold else "normal"},
                       "encoding": {"x": x, "y": y, "text": {"field": "text"}}})
    view: dict[str, Any] = {"title": {"text": panel.title}, "width": width, "height": height, "layer": layers}
    if not panel.frame:
        view["view"] = {"stroke": "transparent"}
    return view


_ORIENT = {"upper left": "top-left", "upper right": "top-right", "lower right": "bottom-right",
           "lower left": "bottom-left", "best": "bottom"}  # below the plot: it covers no line


def _position(axis: Axis, panel: Panel, name: str) -> dict[str, Any]:
    scale: dict[str, Any] = {"type": axis.scale}
    if axis.limits:
        scale.update(domain=list(axis.limits), nice=False)
    if axis.scale == "linear" and not axis.limits:
        scale["zero"] = False
    encoding: dict[str, Any] = {"field": name, "type": "quantitative", "scale": scale}
    if panel.frame:
        encoding["axis"] = {"title": axis.label, "format": ",~r", "grid": panel.grid,
                            **({"values": list(axis.ticks)} if axis.ticks else {})}
    else:
        encoding["axis"] = NO_AXIS
    return encoding


def _colour(item: Any, color: dict[str, Any]) -> dict[str, Any]:
    return {"color": color} if item.legend else {"color": {"value": item.color}}


def _heat(panel: Panel, x: dict[str, Any], y: dict[str, Any]) -> dict[str, Any]:
    heat = panel.heat
    xs, ys = _edges(heat.xs), _edges(heat.ys)
    rows = [{"x": xs[j], "x2": xs[j + 1], "y": ys[i], "y2": ys[i + 1], "value": value, "gid": "heat"}
            for i, row in enumerate(heat.values) for j, value in enumerate(row)]
    return {"data": {"values": rows}, "mark": {"type": "rect"},
            "encoding": {"x": x, "y": y, "x2": {"field": "x2"}, "y2": {"field": "y2"},
                         "color": {"field": "value", "type": "quantitative",
                                   "scale": {"type": "log", "domain": [heat.low, heat.high], "scheme": "redblue"},
                                   "legend": {"title": heat.legend, "format": ",~r", "orient": "right",
                                              "titleLimit": 400}}}}


def _edges(values: tuple[float, ...]) -> list[float]:
    """Cell edges around log-spaced centres: halfway between neighbours, as far again at both ends."""
    logs = [math.log(v) for v in values]
    if len(logs) == 1:
        return [values[0] / 1.5, values[0] * 1.5]
    middles = [(a + b) / 2 for a, b in zip(logs, logs[1:])]
    return [math.exp(v) for v in [2 * logs[0] - middles[0], *middles, 2 * logs[-1] - middles[-1]]]


def _span(edges: list[float]) -> list[float]:
    return [edges[0], edges[-1]]


def _drawable(value: float, axis: Axis) -> bool:
    return math.isfinite(value) and (axis.scale != "log" or value > 0)


def _right_half(value: float, panel: Panel) -> bool:
    """Is ``value`` in the right half of what the panel's lines span (on its own scale)?"""
    xs = [px for line in panel.lines for px, _ in line.points] + [px for d in panel.dots for px, _ in d.points]
    low, high = min(xs), max(xs)
    if panel.x.scale == "log":
        low, high, value = math.log(low), math.log(high), math.log(value)
    return high > low and (value - low) / (high - low) > 0.55
