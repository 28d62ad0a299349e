"""Where a label goes on a figure: the spot nearest its point that no line crosses. Pure geometry.

Theory of operation
-------------------
matplotlib can place a legend itself (``loc="best"``), and annotations can be nudged apart, but both
search again at every draw, over every point of every line, and neither keeps a label off the
curves it names. Here the search runs once, when the figure is built:

* every line is sampled into evenly spaced points, in axes fractions (0..1 both ways);
* a label's box (its width from the text: :func:`ems`, a Chinese character counts nearly double)
  is tried at every spot of a 2 % grid, and scored by the points under it (×100) plus its
  distance from the point it names; the lowest score wins, and the box and its leader line
  become obstacles for the next label (:func:`place_labels`, in both orders, the better kept);
* the legend then goes where no line or label is, nearest a corner (:func:`place_legend`).

Only the machine's renderer (``drawing.py``) uses it; numpy is imported on first use, so the browser
edition, which has no numpy, never needs it.
"""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["place_labels", "place_legend", "ems"]


def ems(text: str) -> float:
    """How wide ``text`` is in average Latin characters: a Chinese character is nearly twice as wide."""
    return sum(1.7 if unicodedata.east_asian_width(ch) in "WF" else 1.0 for ch in text)


def place_labels(ax: Any, labels: list[tuple[tuple[float, float], str, str, str]],
                  fontsize: float = 10) -> list[Any]:
    """Write each (anchor, text, colour, gid) at a nearby spot that no line crosses.

    Spots are searched on a grid of axes fractions against points sampled along every
    line and along the labels and leader lines already placed; the labels are placed in
    the given order and in reverse, and the order with fewer crossings wins. Returns all
    those points, so a legend can then be put where they are not.
    """
    import numpy as np

    ax.autoscale_view()
    to_axes = ax.transData - ax.transAxes
    lines = [_along((line.get_transform() - ax.transAxes).transform(line.get_path().vertices))
             for line in ax.lines]
    inches = _axes_inches(ax)
    height = 1.5 * fontsize / 72 / inches[1] + 0.02

    def place(order: list[int]) -> tuple[float, dict[int, tuple[float, float, float]], list[Any]]:
        obstacles, spots, total = list(lines), {}, 0.0
        for k in order:
            anchor, text, *_ = labels[k]
            ax_x, ax_y = to_axes.transform(anchor)
            width = 0.6 * fontsize / 72 * ems(text) / inches[0] + 0.02
            points = np.concatenate([np.array([[ax_x, ax_y]]), *obstacles])
            xs = np.arange(0.02, 0.98 - width, 0.02)
            ys = np.arange(0.02, 0.98 - height, 0.02)
            in_x = (points[:, 0] > xs[:, None] - 0.015) & (points[:, 0] < xs[:, None] + width + 0.015)
            in_y = (points[:, 1] > ys[:, None] - 0.015) & (points[:, 1] < ys[:, None] + height + 0.015)
            crossings = in_x.astype(int) @ in_y.T.astype(int)  # [x, y] → points under the box
            distance = np.hypot(xs[:, None] + width / 2 - ax_x, ys[None, :] + height / 2 - ax_y)
            # Fewest crossings first (ideally none), then the spot nearest the point.
            score = crossings * 100.0 + distance
            i, j = np.unravel_index(np.argmin(score), score.shape)
            x, y = float(xs[i]), float(ys[j])
            total += float(score[i, j])
            spots[k] = (x, y, width)
            end = (min(max(ax_x, x), x + width), min(max(ax_y, y), y + height))
            obstacles += [_box(x, y, width, height), _along(np.array([[ax_x, ax_y], end]), 30)]
        return total, spots, obstacles

    forward, backward = list(range(len(labels))), list(reversed(range(len(labels))))
    _score, spots, obstacles = min(place(forward), place(backward), key=lambda result: result[0])
    to_data = ax.transAxes - ax.transData
    for k, (anchor, text, color, gid) in enumerate(labels):
        x, y, width = spots[k]
        ax_x, ax_y = to_axes.transform(anchor)
        # A plain leader line, drawn in data space: an annotation arrow would clip its path
        # against the text box at every draw, which costs more than the whole rest.
        centre = to_data.transform((x + width / 2, y + height / 2))
        ax.plot([anchor[0], centre[0]], [anchor[1], centre[1]], color=color, linewidth=0.8,
                scalex=False, scaley=False, zorder=2.5)
        # Centred in its (generous) box on a white patch, so the leader stops at the text.
        ax.text(x + width / 2, y + height / 2, text, transform=ax.transAxes, ha="center",
                va="center", fontsize=fontsize, color=color, gid=gid, zorder=4,
                bbox=dict(facecolor="white", edgecolor="none", pad=1.5))
    return obstacles


def place_legend(ax: Any, obstacles: list[Any] = (), fontsize: float = 9) -> None:
    """Put the legend where no line or label is, as near a corner as possible.

    ``loc="best"`` searches too, but again at every draw over every point of every line.
    """
    import numpy as np

    handles, names = ax.get_legend_handles_labels()
    inches = _axes_inches(ax)
    width = (0.55 * fontsize / 72 * max(map(ems, names)) + 0.6) / inches[0]
    height = (1.45 * fontsize / 72 * len(names) + 0.15) / inches[1]
    ax.autoscale_view()
    points = np.concatenate([
        *(_along((line.get_transform() - ax.transAxes).transform(line.get_path().vertices))
          for line in ax.lines), *obstacles, np.empty((0, 2))])
    xs = np.arange(0.01, 0.99 - width, 0.02)
    ys = np.arange(0.01, 0.99 - height, 0.02)
    in_x = (points[:, 0] > xs[:, None]) & (points[:, 0] < xs[:, None] + width)
    in_y = (points[:, 1] > ys[:, None]) & (points[:, 1] < ys[:, None] + height)
    crossings = in_x.astype(int) @ in_y.T.astype(int)
    corner = np.minimum(xs, 1 - width - xs)[:, None] + np.minimum(ys, 1 - height - ys)[None, :]
    i, j = np.unravel_index(np.argmin(crossings * 100.0 + corner), crossings.shape)
    ax.legend(handles, names, loc="lower left", bbox_to_anchor=(float(xs[i]), float(ys[j])),
              fontsize=fontsize, borderaxespad=0.0)


def _axes_inches(ax: Any) -> Any:
    # The pre-layout axes box is smaller than the final one, so sizes err on the safe side.
    return ax.get_position().size * ax.figure.get_size_inches()


def _box(x: float, y: float, width: float, height: float) -> Any:
    import numpy as np

    grid = np.meshgrid(np.linspace(x, x + width, 12), np.linspace(y, y + height, 4))
    return np.stack(grid, -1).reshape(-1, 2)


def _along(vertices: Any, count: int = 400) -> Any:
    """``count`` points spread evenly along a polyline's length (in axes fractions)."""
    import numpy as np

    xy = vertices[np.isfinite(vertices).all(axis=1)]
    if len(xy) < 2:
        return xy.reshape(-1, 2)
    length = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy, axis=0).T))])
    at = np.linspace(0.0, length[-1], count)
    return np.column_stack([np.interp(at, length, xy[:, 0]), np.interp(at, length, xy[:, 1])])
