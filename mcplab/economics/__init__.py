"""The N×M versus N+M economics: ``model.py`` (pure arithmetic) and ``plots.py`` (the pictures, the explorer).

A picture is data (``chart.py``, ``marks.py``), drawn by matplotlib on a machine (``drawing.py``) and as
Vega-Lite in the browser edition (``vega.py``), where matplotlib and numpy cannot load.

Layer: a leaf. Of mcplab it imports only ``i18n`` (the plots' labels), since a model of costs knows
nothing of the wire; the demo and the Lab 08 exercises import it.

``from mcplab import economics`` hands on both: every name of the model at once, and the plots when
first asked for (PEP 562), so that importing the model never imports matplotlib or ipywidgets.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from mcplab.economics.model import (  # noqa: F401  (handed on: the labs call economics.compare(...))
    ILLUSTRATIVE_COSTS, POINT_TO_POINT, PROTOCOL, REGIMES, SEED_COSTS, SEED_EXAMPLES, Comparison, Costs, Regime,
    RegimeCost, Summary, YearCost, adapters, break_even_density, break_even_n, compare, cost, cumulative_cost,
    pieces, revision_cost, summarize,
)

_PLOTTING = frozenset({"plot_graphs", "plot_costs", "plot_saving_heatmap", "plot_break_even",
                       "plot_cumulative", "explore", "Explorer"})


def __getattr__(name: str) -> Any:
    if name in _PLOTTING:
        return getattr(import_module("mcplab.economics.plots"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_PLOTTING])  # so tab completion offers the plots too
