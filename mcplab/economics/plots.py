"""Pictures of the N×M versus N+M model, and the live explorer.

Every ``plot_*`` function turns numbers from ``mcplab.economics`` into a new
``matplotlib.figure.Figure`` and returns it. Figures are built without pyplot, so
nothing is registered globally, no figure leaks between tests, and no backend is
needed to render them: ``fig.savefig("x.png")`` or ``"x.svg"`` works headless, and
a notebook with ``%matplotlib inline`` shows the figure a cell returns.

Artists a reader (or a test) may look for carry a ``gid``: ``"adapters"`` and
``"implementations"`` for the edge collections of the graph pictures,
``"seed-point"`` for the seeds' annotated examples, ``"current"`` for a scenario
marked on purpose (``plot_costs(mark=...)``, the explorer), ``"break-even"`` for
break-even lines and ``"revision"`` for revision years.

Labels are placed by a small search (``labels.py``): the spot nearest its point that no
line crosses. It runs once, when the figure is built.

``explore()`` builds an ipywidgets panel: sliders for the scenario and for every
field of ``Costs``; each move recomputes ``summarize`` and redraws a PNG image and
a table. ipywidgets is imported only when ``explore()`` is called.
"""

from __future__ import annotations

import html
import io
import math
from dataclasses import fields, replace
from typing import Any

from matplotlib.collections import LineCollection
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from mcplab.economics.model import (POINT_TO_POINT, PROTOCOL, REGIMES, SEED_COSTS, SEED_EXAMPLES, Costs,
                              Regime, Summary, break_even_density, break_even_n, cost,
                              cumulative_cost, summarize)
from mcplab.economics.labels import place_labels, place_legend
from mcplab.i18n import N_, Texts, _, language

COLORS: dict[Regime, str] = {POINT_TO_POINT: "#c0392b", PROTOCOL: "#1f618d"}
TOOL_NAMES = (N_("Database"), N_("Files"), N_("Search"), "GitHub", "Slack", N_("Browser"), N_("Calendar"),
              N_("Weather"), N_("Mail"), N_("Maps"))  # shown through _()
MAX_DRAWN = 20  # per side: beyond this a graph picture is a smudge; use plot_costs


def plot_graphs(n: int = 3, m: int = 4) -> Figure:
    """The seeds' two diagrams: every adapter drawn (N×M edges), beside the hub (N+M edges)."""
    if not (1 <= n <= MAX_DRAWN and 1 <= m <= MAX_DRAWN):
        raise ValueError(f"draw 1 to {MAX_DRAWN} apps and tools; got n={n}, m={m}")
    fig = _figure(figsize=(12, 5), layout="constrained")
    mesh, hub = fig.subplots(1, 2)
    apps, tools = _spread(n), _spread(m)
    mesh.add_collection(LineCollection(
        [((0, a), (1, t)) for a in apps for t in tools], colors=COLORS[POINT_TO_POINT],
        linewidths=1.2, gid="adapters"))
    centre = (0.5, 0.5)
    hub.add_collection(LineCollection(
        [((0, a), centre) for a in apps] + [(centre, (1, t)) for t in tools],
        colors=COLORS[PROTOCOL], linewidths=1.8, gid="implementations"))
    hub.scatter(*centre, s=2600, color="white", edgecolor=COLORS[PROTOCOL], linewidth=2, zorder=3)
    hub.text(*centre, "MCP", ha="center", va="center", fontsize=13, weight="bold", family="sans-serif", zorder=4)
    hub.text(0.25, -0.08, _("one MCP client per app"), ha="center", fontsize=9, color="dimgray")
    hub.text(0.75, -0.08, _("one MCP server per tool"), ha="center", fontsize=9, color="dimgray")
    for ax in (mesh, hub):
        ax.scatter([0] * n, apps, s=90, color="black", zorder=3)
        ax.scatter([1] * m, tools, s=90, color="dimgray", marker="s", zorder=3)
        for i, y in enumerate(apps):
            ax.text(-0.05, y, _("App {letter}", letter=chr(ord('A') + i)), ha="right", va="center", fontsize=10)
        for j, y in enumerate(tools):
            name = _(TOOL_NAMES[j]) if j < len(TOOL_NAMES) else _("Tool {number}", number=j + 1)
            ax.text(1.05, y, name, ha="left", va="center", fontsize=10)
        ax.set(xlim=(-0.4, 1.4), ylim=(-0.15, 1.08))
        ax.set_axis_off()
    mesh.set_title(_("Without a standard: {n} × {m} = {count} adapters", n=n, m=m, count=n * m), fontsize=12)
    hub.set_title(_("With a protocol: {n} + {m} = {count} implementations", n=n, m=m, count=n + m), fontsize=12)
    return fig


def plot_costs(m: int, *, n_max: int = 1_000, density: float = 1.0, costs: Costs = SEED_COSTS,
               years: float = 0, revisions: float = 0, mark: int | None = None) -> Figure:
    """Cost against N for fixed M, on linear and on log axes, with the seeds' points annotated."""
    if m < 1 or n_max < 2:
        raise ValueError(f"need m >= 1 and n_max >= 2; got m={m}, n_max={n_max}")
    fig = _figure(figsize=(12, 5), layout="constrained")
    axes = fig.subplots(1, 2)
    model = dict(density=density, costs=costs, years=years, revisions=revisions)
    ns = list(range(1, n_max + 1))
    points = [n for n, seed_m in SEED_EXAMPLES if seed_m == m and n <= n_max]
    points += [mark] if mark is not None and mark not in points else []
    even = break_even_n(m, density=density, costs=costs, years=years, revisions=revisions)
    for ax, scale in zip(axes, ("linear", "log")):
        for regime in REGIMES:
            ax.plot(ns, [cost(n, m, regime, **model) for n in ns], color=COLORS[regime],
                    linewidth=2, label=_curve_label(regime, density, costs))
        if 1 < even <= n_max:
            ax.axvline(even, color="gray", linestyle="--", linewidth=1, gid="break-even",
                       label=_("break-even N ≈ {n:.3g}", n=even))
        ax.set(xscale=scale, yscale=scale, xlabel=_("N, applications"),
               ylabel=_cost_label(costs, years, revisions),
               title=_("M = {m:,} tools, linear axes", m=m) if scale == "linear"
               else _("M = {m:,} tools, log axes", m=m))
        _plain_ticks(ax)
        marks = [((n, cost(n, m, regime, **model)), _point_text(n, m, regime, model),
                  COLORS[regime], "current" if n == mark else "seed-point")
                 for n in points for regime in REGIMES]
        for (x, y), _text, color, _gid in marks:
            ax.scatter([x], [y], color=color, s=40, zorder=3)
        place_legend(ax, place_labels(ax, marks))
        ax.grid(True, which="major", alpha=0.3)
    return fig


def plot_saving_heatmap(*, n_max: int = 1_000, m_max: int = 10_000, density: float = 1.0,
                        costs: Costs = SEED_COSTS, years: float = 0, revisions: float = 0,
                        points: tuple[tuple[int, int], ...] = SEED_EXAMPLES,
                        steps: int = 40) -> Figure:
    """The saving ratio (point-to-point ÷ protocol) over a log grid of N × M."""
    import numpy as np

    model = dict(density=density, costs=costs, years=years, revisions=revisions)
    ns = np.unique(np.round(np.logspace(0, math.log10(n_max), steps)).astype(int))
    ms = np.unique(np.round(np.logspace(0, math.log10(m_max), steps)).astype(int))
    ratio = np.array([[_ratio(int(n), int(m), model) for n in ns] for m in ms])
    bound = max(ratio.max(), 1 / ratio.min(), 10.0)
    fig = _figure(figsize=(8, 6), layout="constrained")
    ax = fig.subplots()
    mesh = ax.pcolormesh(ns, ms, ratio, shading="nearest", cmap="RdBu",
                         norm=LogNorm(vmin=1 / bound, vmax=bound))
    bar = fig.colorbar(mesh, ax=ax,
                       label=_("point-to-point cost ÷ protocol cost  (blue: the protocol saves)"))
    bar.ax.yaxis.set_major_formatter("{x:,.10g}")
    bar.ax.minorticks_off()
    edge = [(break_even_n(m, **model), m) for m in _log_ints(m_max)]
    edge = [(n, m) for n, m in edge if 1 <= n <= n_max]
    if edge:
        ax.plot(*zip(*edge), color="black", linewidth=1.5, gid="break-even",
                label=_("break-even: equal cost"))
        ax.legend(loc="lower right", fontsize=9)
    for n, m in points:
        value = _ratio(n, m, model)
        right = math.log(n) > 0.6 * math.log(n_max)
        top = math.log(m) > 0.6 * math.log(m_max)
        ax.scatter([n], [m], s=40, color="black", zorder=3)
        ax.annotate(_("{n:,} × {m:,}: ratio {value:,.3g}", n=n, m=m, value=value), (n, m),
                    xytext=(-8 if right else 8, -8 if top else 8), textcoords="offset points",
                    ha="right" if right else "left", va="top" if top else "bottom", fontsize=10,
                    gid="seed-point", bbox=dict(boxstyle="round", facecolor="white", alpha=0.85))
    ax.set(xscale="log", yscale="log", xlabel=_("N, applications"), ylabel=_("M, tools"),
           title=_("Saving ratio over N × M, density {density:g}", density=density))
    _plain_ticks(ax)
    return fig


def plot_break_even(*, costs: Costs = SEED_COSTS, years: float = 0, revisions: float = 0,
                    tool_counts: tuple[int, ...] = (4, 100, 10_000),
                    densities: tuple[float, ...] = (1.0, 0.1, 0.01),
                    n_max: int = 1_000, m_max: int = 10_000) -> Figure:
    """Break-even density against N (one curve per M), and break-even N against M (per density)."""
    fig = _figure(figsize=(12, 5), layout="constrained")
    by_n, by_m = fig.subplots(1, 2)
    life = dict(costs=costs, years=years, revisions=revisions)
    ns = _log_ints(n_max)
    seeds: list[tuple[tuple[float, float], str, str]] = []
    for m in tool_counts:
        line, = by_n.plot(ns, [break_even_density(n, m, **life) for n in ns], linewidth=2,
                          label=_("M = {m:,} tools", m=m))
        for n, seed_m in SEED_EXAMPLES:
            if seed_m == m and n <= n_max:
                value = break_even_density(n, m, **life)
                by_n.scatter([n], [value], color=line.get_color(), zorder=3)
                seeds.append(((n, value), f"{n:,} × {m:,}: {value:.3g}", line.get_color()))
    by_n.axhline(1.0, color="gray", linestyle=":", label=_("every pair wanted"))
    by_n.set(xscale="log", yscale="log", xlabel=_("N, applications"),
             ylabel=_("break-even density (share of pairs wanted)"),
             title=_("Protocol cheaper above its curve"))
    placed = place_labels(by_n, [(anchor, text, color, "seed-point") for anchor, text, color in seeds])
    place_legend(by_n, placed)
    ms = _log_ints(m_max)
    for density in densities:
        values = [break_even_n(m, density=density, **life) for m in ms]
        by_m.plot(ms, [v if math.isfinite(v) else math.nan for v in values], linewidth=2,
                  gid="break-even", label=_("density {density:g}", density=density))
    by_m.scatter([pair[1] for pair in SEED_EXAMPLES], [pair[0] for pair in SEED_EXAMPLES], color="black",
                 zorder=3, gid="seed-point", label=_("the seeds' examples"))
    by_m.set(xscale="log", yscale="log", ylim=(1, n_max), xlabel=_("M, tools"),
             ylabel=_("break-even N (applications)"),
             title=_("Protocol cheaper above the curve for its density"))
    by_m.legend(loc="upper right", fontsize=9)
    for ax in (by_n, by_m):
        _plain_ticks(ax)
        ax.grid(True, which="major", alpha=0.3)
    return fig


def plot_cumulative(n: int, m: int, years: int, *, app_growth: float = 0.0,
                    tool_growth: float = 0.0, revision_years: tuple[int, ...] = (),
                    density: float = 1.0, costs: Costs = SEED_COSTS) -> Figure:
    """Cumulative spend of both regimes, year by year, as N and M grow; revisions marked."""
    rows = cumulative_cost(n, m, years, app_growth=app_growth, tool_growth=tool_growth,
                           revision_years=revision_years, density=density, costs=costs)
    fig = _figure(figsize=(9, 5), layout="constrained")
    ax = fig.subplots()
    x = [row.year for row in rows]
    ax.plot(x, [row.point_to_point for row in rows], marker="o", color=COLORS[POINT_TO_POINT],
            linewidth=2, label=_("point-to-point"))
    ax.plot(x, [row.protocol for row in rows], marker="o", color=COLORS[PROTOCOL],
            linewidth=2, label=_("protocol"))
    for year in revision_years:
        ax.axvline(year, color="gray", linestyle="--", linewidth=1, gid="revision")
        ax.text(year, 0.97, " " + _("revision"), transform=ax.get_xaxis_transform(), va="top",
                fontsize=9, color="dimgray")
    last = rows[-1]
    ax.set(xlabel=_("year"), ylabel=_("cumulative cost (adapter-builds)"), xticks=x,
           title=_("N {n:,} → {last_n:,} apps, M {m:,} → {last_m:,} tools, density {density:g}", n=n,
                   last_n=last.n, m=m, last_m=last.m, density=density))
    ax.yaxis.set_major_formatter("{x:,.0f}")
    ax.legend(loc="upper left")
    ax.grid(True, alpha=0.3)
    return fig


SCENARIO_SLIDERS: tuple[tuple[str, str, float, float, float], ...] = (
    # name, description, min, max, step (density is on a log slider: exponents)
    ("n", N_("N apps"), 1, 1_000, 1),
    ("m", N_("M tools"), 1, 10_000, 1),
    ("density", N_("density"), -4, 0, 0.1),
    ("years", N_("years"), 0, 10, 1),
    ("revisions", N_("revisions"), 0, 5, 1),
)
COST_LABELS = Texts({"adapter_build": "adapter build", "implementation_build": "implementation build",
                     "adapter_upkeep": "adapter upkeep", "implementation_upkeep": "implementation upkeep",
                     "adapter_revision": "adapter revision", "implementation_revision": "implementation revision"})


class Explorer:
    """A live panel: move a slider, and the figure and the table are recomputed.

    ``sliders`` maps each scenario name (n, m, density, years, revisions) and each
    ``Costs`` field to its widget; ``figure`` and ``summary`` are the latest drawn.
    """

    def __init__(self, n: int, m: int, density: float, costs: Costs, years: int,
                 revisions: int) -> None:
        import ipywidgets as widgets

        start = dict(n=n, m=m, density=density, years=years, revisions=revisions)
        self.sliders: dict[str, Any] = {}
        for name, label, low, high, step in SCENARIO_SLIDERS:
            kind = (widgets.FloatLogSlider if name == "density" else widgets.IntSlider)
            self.sliders[name] = kind(value=start[name], min=low, max=high, step=step,
                                      description=_(label), continuous_update=False)
        for field in fields(Costs):
            low = 0.1 if field.name.endswith("build") else 0.0
            self.sliders[field.name] = widgets.FloatSlider(
                value=getattr(costs, field.name), min=low, max=10.0 if low else 2.0, step=0.05,
                description=COST_LABELS.get(field.name, field.name.replace("_", " ")), continuous_update=False,
                style={"description_width": "150px"}, layout={"width": "420px"})
        self.image = widgets.Image(format="png")
        self.table = widgets.HTML()
        scenario = [self.sliders[name] for name, *_ in SCENARIO_SLIDERS]
        priced = [self.sliders[field.name] for field in fields(Costs)]
        self.widget = widgets.VBox([widgets.HBox([widgets.VBox(scenario), widgets.VBox(priced)]),
                                    self.image, self.table])
        self.redraws = 0
        for slider in self.sliders.values():
            slider.observe(self._changed, names="value")
        self.redraw()

    @property
    def costs(self) -> Costs:
        return replace(SEED_COSTS, **{f.name: self.sliders[f.name].value for f in fields(Costs)})

    @property
    def table_text(self) -> str:
        return self.summary.table()

    def redraw(self) -> None:
        """Recompute the scenario from the sliders and redraw the figure and the table."""
        value = {name: self.sliders[name].value for name, *_ in SCENARIO_SLIDERS}
        self.summary = summarize(value["n"], value["m"], density=value["density"],
                                 costs=self.costs, years=value["years"],
                                 revisions=value["revisions"])
        self.figure = _explorer_figure(self.summary, self.costs)
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=80)
        self.image.value = buffer.getvalue()
        self.table.value = f"<pre>{html.escape(self.summary.table())}</pre>"
        self.redraws += 1

    def _changed(self, change: dict[str, Any]) -> None:
        self.redraw()

    def __repr__(self) -> str:
        return _("Explorer with {count} sliders: move one to redraw the figure and table", count=len(self.sliders))

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # The widget's own text/plain names its model id; ours stays the same on every run.
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = repr(self)
        return bundle


def explore(n: int = 3, m: int = 4, *, density: float = 1.0, costs: Costs = SEED_COSTS,
            years: int = 0, revisions: int = 0) -> Explorer:
    """The live explorer, starting at the given scenario (the seeds' 3 × 4 by default)."""
    return Explorer(n, m, density, costs, years, revisions)


def _explorer_figure(summary: Summary, costs: Costs) -> Figure:
    n, m, density = summary.n, summary.m, summary.density
    life = dict(costs=costs, years=summary.years, revisions=summary.revisions)
    fig = _figure(figsize=(12, 4.5), layout="constrained")
    by_n, by_density = fig.subplots(1, 2)
    ns = _log_ints(max(1_000, n))
    ds = [10 ** (k / 20) for k in range(-80, 1)]
    for regime in REGIMES:
        by_n.plot(ns, [cost(x, m, regime, density=density, **life) for x in ns],
                  color=COLORS[regime], linewidth=2, label=_(regime))
        by_density.plot(ds, [cost(n, m, regime, density=d, **life) for d in ds],
                        color=COLORS[regime], linewidth=2, label=_(regime))
        by_n.scatter([n], [cost(n, m, regime, density=density, **life)], color=COLORS[regime],
                     s=60, zorder=3, gid="current")
        by_density.scatter([density], [cost(n, m, regime, density=density, **life)],
                           color=COLORS[regime], s=60, zorder=3, gid="current")
    if math.isfinite(summary.break_even_n) and summary.break_even_n >= 1:
        by_n.axvline(summary.break_even_n, color="gray", linestyle="--", gid="break-even",
                     label=_("break-even N ≈ {n:.3g}", n=summary.break_even_n))
    if summary.break_even_density <= 1:
        by_density.axvline(summary.break_even_density, color="gray", linestyle="--",
                           gid="break-even",
                           label=_("break-even density ≈ {density:.3g}", density=summary.break_even_density))
    by_n.set(xscale="log", yscale="log", xlabel=_("N, applications"), ylabel=_("total cost"),
             title=_("Against N, at M = {m:,} and density {density:.3g}", m=m, density=density))
    by_density.set(xscale="log", yscale="log", xlabel=_("density (share of pairs wanted)"),
                   ylabel=_("total cost"), title=_("Against density, at N = {n:,}, M = {m:,}", n=n, m=m))
    for ax in (by_n, by_density):
        _plain_ticks(ax)
        ax.legend(loc="upper left", fontsize=9)
        ax.grid(True, alpha=0.3)
    return fig


def _figure(**options: Any) -> Figure:
    """A new figure; in Chinese, with a CJK font first in line (mcplab.i18n.fonts), so no glyph is a box."""
    if language() == "zh":
        from mcplab.i18n.fonts import use_cjk_font

        use_cjk_font()
    return Figure(**options)


def _spread(count: int) -> list[float]:
    """``count`` heights spread evenly over 0..1, centred when there is just one."""
    return [0.5] if count == 1 else [1 - i / (count - 1) for i in range(count)]


def _log_ints(top: int, steps: int = 200) -> list[int]:
    return sorted({max(1, round(10 ** (math.log10(top) * k / steps))) for k in range(steps + 1)})


def _ratio(n: int, m: int, model: dict[str, Any]) -> float:
    return cost(n, m, POINT_TO_POINT, **model) / cost(n, m, PROTOCOL, **model)


def _seed_model(density: float, costs: Costs) -> bool:
    return density == 1 and costs == SEED_COSTS


def _curve_label(regime: Regime, density: float, costs: Costs) -> str:
    if _seed_model(density, costs):
        return _("point-to-point: N × M adapters") if regime == POINT_TO_POINT else \
            _("protocol: N + M implementations")
    return _("{regime}, density {density:g}", regime=_(regime), density=density)


def _cost_label(costs: Costs, years: float, revisions: float) -> str:
    if costs == SEED_COSTS:
        return _("pieces to build (adapters or implementations)")
    return _("cost in adapter-builds ({years:g} y, {revisions:g} revisions)", years=years, revisions=revisions)


def _point_text(n: int, m: int, regime: Regime, model: dict[str, Any]) -> str:
    value = cost(n, m, regime, **model)
    if _seed_model(model["density"], model["costs"]):
        sign = "×" if regime == POINT_TO_POINT else "+"
        return f"{n:,} {sign} {m:,} = {value:,.0f}"
    return f"N = {n:,}: {value:,.0f}"


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
