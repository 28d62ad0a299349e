"""Pictures of the N×M versus N+M model, and the live explorer.

Every ``plot_*`` function turns numbers from ``mcplab.economics`` into a new
:class:`~mcplab.economics.chart.Chart`, plain data saying what is drawn where, and returns it. It draws
nothing and imports no plotting library: a notebook shows the chart it returns as a PNG drawn by
matplotlib on a machine, and as Vega-Lite in the browser edition, where matplotlib and numpy cannot load
(``chart.py``). ``chart.savefig("x.png")`` or ``"x.svg"`` works headless; ``chart.to_matplotlib()`` is the
``Figure`` itself.

Artists a reader (or a test) may look for carry a ``gid``: ``"adapters"`` and
``"implementations"`` for the edges of the graph pictures,
``"seed-point"`` for the seeds' annotated examples, ``"current"`` for a scenario
marked on purpose (``plot_costs(mark=...)``, the explorer), ``"break-even"`` for
break-even lines and ``"revision"`` for revision years.

On a machine, labels are placed by a small search (``labels.py``): the spot nearest its point that no
line crosses. It runs once, when the figure is drawn.

``explore()`` builds an ipywidgets panel: sliders for the scenario and for every
field of ``Costs``; each move recomputes ``summarize`` and redraws the figure (a PNG
image on a machine, a Vega-Lite view in the page) and a table. ipywidgets is imported
only when ``explore()`` is called.
"""

from __future__ import annotations

import html
import math
from dataclasses import fields, replace
from typing import Any

from mcplab.economics import chart
from mcplab.economics.chart import VEGA_LITE, Chart
from mcplab.economics.marks import Axis, Caption, Dots, Heat, Line, Panel, Rule, Segments
from mcplab.economics.model import (POINT_TO_POINT, PROTOCOL, REGIMES, SEED_COSTS, SEED_EXAMPLES, Costs,
                                    Regime, Summary, break_even_density, break_even_n, cost,
                                    cumulative_cost, summarize)
from mcplab.i18n import N_, Texts, _

COLORS: dict[Regime, str] = {POINT_TO_POINT: "#c0392b", PROTOCOL: "#1f618d"}
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")  # one per curve of a family
TOOL_NAMES = (N_("Database"), N_("Files"), N_("Search"), "GitHub", "Slack", N_("Browser"), N_("Calendar"),
              N_("Weather"), N_("Mail"), N_("Maps"))  # shown through _()
MAX_DRAWN = 20  # per side: beyond this a graph picture is a smudge; use plot_costs


@chart.readable
def plot_graphs(n: int = 3, m: int = 4) -> Chart:
    """The seeds' two diagrams: every adapter drawn (N×M edges), beside the hub (N+M edges)."""
    if not (1 <= n <= MAX_DRAWN and 1 <= m <= MAX_DRAWN):
        raise ValueError(f"draw 1 to {MAX_DRAWN} apps and tools; got n={n}, m={m}")
    apps, tools = _spread(n), _spread(m)
    centre = (0.5, 0.5)
    nodes = (Dots(tuple((0, a) for a in apps), "black", size=90),
             Dots(tuple((1, t) for t in tools), "dimgray", size=90, shape="square"))
    names = tuple(Caption(-0.05, y, _("App {letter}", letter=chr(ord("A") + i)), align="right")
                  for i, y in enumerate(apps))
    names += tuple(Caption(1.05, y, _(TOOL_NAMES[j]) if j < len(TOOL_NAMES) else _("Tool {number}", number=j + 1),
                        align="left") for j, y in enumerate(tools))
    frame = dict(x=Axis(limits=(-0.4, 1.4)), y=Axis(limits=(-0.15, 1.08)), frame=False, grid=False)
    mesh = Panel(_("Without a standard: {n} × {m} = {count} adapters", n=n, m=m, count=n * m),
                 segments=(Segments(tuple(((0, a), (1, t)) for a in apps for t in tools),
                                    COLORS[POINT_TO_POINT], "adapters"),),
                 dots=nodes, captions=names, **frame)
    hub = Panel(_("With a protocol: {n} + {m} = {count} implementations", n=n, m=m, count=n + m),
                segments=(Segments(tuple(((0, a), centre) for a in apps) + tuple((centre, (1, t)) for t in tools),
                                   COLORS[PROTOCOL], "implementations", width=1.8),),
                dots=(*nodes, Dots((centre,), COLORS[PROTOCOL], size=2600, fill="white")),
                captions=(*names, Caption(*centre, "MCP", size=13, bold=True),
                       Caption(0.25, -0.08, _("one MCP client per app"), size=9, color="dimgray"),
                       Caption(0.75, -0.08, _("one MCP server per tool"), size=9, color="dimgray")),
                **frame)
    return Chart((mesh, hub), size=(12, 5))


@chart.readable
def plot_costs(m: int, *, n_max: int = 1_000, density: float = 1.0, costs: Costs = SEED_COSTS,
               years: float = 0, revisions: float = 0, mark: int | None = None) -> Chart:
    """Cost against N for fixed M, on linear and on log axes, with the seeds' points annotated."""
    if m < 1 or n_max < 2:
        raise ValueError(f"need m >= 1 and n_max >= 2; got m={m}, n_max={n_max}")
    model = dict(density=density, costs=costs, years=years, revisions=revisions)
    ns = range(1, n_max + 1)
    points = [n for n, seed_m in SEED_EXAMPLES if seed_m == m and n <= n_max]
    points += [mark] if mark is not None and mark not in points else []
    even = break_even_n(m, density=density, costs=costs, years=years, revisions=revisions)
    lines = tuple(Line(tuple((n, cost(n, m, regime, **model)) for n in ns), COLORS[regime],
                       _curve_label(regime, density, costs)) for regime in REGIMES)
    rules = (Rule(even, legend=_("break-even N ≈ {n:.3g}", n=even), gid="break-even", width=1),) \
        if 1 < even <= n_max else ()
    marks = tuple(Dots(((n, cost(n, m, regime, **model)),), COLORS[regime],
                       "current" if n == mark else "seed-point", texts=(_point_text(n, m, regime, model),))
                  for n in points for regime in REGIMES)
    return Chart(tuple(
        Panel(_("M = {m:,} tools, linear axes", m=m) if scale == "linear" else _("M = {m:,} tools, log axes", m=m),
              x=Axis(_("N, applications"), scale), y=Axis(_cost_label(costs, years, revisions), scale),
              lines=lines, rules=rules, dots=marks)
        for scale in ("linear", "log")), size=(12, 5))


@chart.readable
def plot_saving_heatmap(*, n_max: int = 1_000, m_max: int = 10_000, density: float = 1.0,
                        costs: Costs = SEED_COSTS, years: float = 0, revisions: float = 0,
                        points: tuple[tuple[int, int], ...] = SEED_EXAMPLES,
                        steps: int = 40) -> Chart:
    """The saving ratio (point-to-point ÷ protocol) over a log grid of N × M."""
    model = dict(density=density, costs=costs, years=years, revisions=revisions)
    ns, ms = _log_grid(n_max, steps), _log_grid(m_max, steps)
    ratio = tuple(tuple(_ratio(n, m, model) for n in ns) for m in ms)
    flat = [value for row in ratio for value in row]
    bound = max(max(flat), 1 / min(flat), 10.0)
    edge = [(break_even_n(m, **model), m) for m in _log_ints(m_max)]
    edge = tuple((n, m) for n, m in edge if 1 <= n <= n_max)
    panel = Panel(
        _("Saving ratio over N × M, density {density:g}", density=density),
        x=Axis(_("N, applications"), "log"), y=Axis(_("M, tools"), "log"),
        heat=Heat(ns, ms, ratio, 1 / bound, bound,
                  _("point-to-point cost ÷ protocol cost  (blue: the protocol saves)")),
        lines=(Line(edge, "black", _("break-even: equal cost"), "break-even", width=1.5),) if edge else (),
        dots=tuple(Dots(((n, m),), "black", "seed-point",
                        texts=(_("{n:,} × {m:,}: ratio {value:,.3g}", n=n, m=m, value=_ratio(n, m, model)),))
                   for n, m in points),
        legend="lower right", grid=False)
    return Chart((panel,), size=(8, 6))


@chart.readable
def plot_break_even(*, costs: Costs = SEED_COSTS, years: float = 0, revisions: float = 0,
                    tool_counts: tuple[int, ...] = (4, 100, 10_000),
                    densities: tuple[float, ...] = (1.0, 0.1, 0.01),
                    n_max: int = 1_000, m_max: int = 10_000) -> Chart:
    """Break-even density against N (one curve per M), and break-even N against M (per density)."""
    life = dict(costs=costs, years=years, revisions=revisions)
    ns, ms = _log_ints(n_max), _log_ints(m_max)
    curves, seeds = [], []
    for m, color in zip(tool_counts, PALETTE):
        curves.append(Line(tuple((n, break_even_density(n, m, **life)) for n in ns), color,
                           _("M = {m:,} tools", m=m)))
        for n, seed_m in SEED_EXAMPLES:
            if seed_m == m and n <= n_max:
                value = break_even_density(n, m, **life)
                seeds.append(Dots(((n, value),), color, "seed-point", texts=(f"{n:,} × {m:,}: {value:.3g}",)))
    by_n = Panel(_("Protocol cheaper above its curve"), x=Axis(_("N, applications"), "log"),
                 y=Axis(_("break-even density (share of pairs wanted)"), "log"), lines=tuple(curves),
                 rules=(Rule(1.0, "y", legend=_("every pair wanted"), dash=":"),), dots=tuple(seeds))
    by_m = Panel(_("Protocol cheaper above the curve for its density"), x=Axis(_("M, tools"), "log"),
                 y=Axis(_("break-even N (applications)"), "log", limits=(1, n_max)),
                 lines=tuple(Line(tuple((m, break_even_n(m, density=density, **life)) for m in ms), color,
                                  _("density {density:g}", density=density), "break-even")
                             for density, color in zip(densities, PALETTE)),
                 dots=(Dots(tuple((m, n) for n, m in SEED_EXAMPLES), "black", "seed-point",
                            legend=_("the seeds' examples")),),
                 legend="upper right")
    return Chart((by_n, by_m), size=(12, 5))


@chart.readable
def plot_cumulative(n: int, m: int, years: int, *, app_growth: float = 0.0,
                    tool_growth: float = 0.0, revision_years: tuple[int, ...] = (),
                    density: float = 1.0, costs: Costs = SEED_COSTS) -> Chart:
    """Cumulative spend of both regimes, year by year, as N and M grow; revisions marked."""
    rows = cumulative_cost(n, m, years, app_growth=app_growth, tool_growth=tool_growth,
                           revision_years=revision_years, density=density, costs=costs)
    last = rows[-1]
    panel = Panel(
        _("N {n:,} → {last_n:,} apps, M {m:,} → {last_m:,} tools, density {density:g}", n=n,
          last_n=last.n, m=m, last_m=last.m, density=density),
        x=Axis(_("year"), ticks=tuple(row.year for row in rows)),
        y=Axis(_("cumulative cost (adapter-builds)")),
        lines=(Line(tuple((row.year, row.point_to_point) for row in rows), COLORS[POINT_TO_POINT],
                    _("point-to-point"), dots=True),
               Line(tuple((row.year, row.protocol) for row in rows), COLORS[PROTOCOL], _("protocol"), dots=True)),
        rules=tuple(Rule(year, gid="revision", width=1, note=_("revision")) for year in revision_years),
        legend="upper left")
    return Chart((panel,), size=(9, 5))


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
    ``Costs`` field to its widget; ``figure`` (a Chart) and ``summary`` are the latest drawn, and
    ``picture`` the widget that shows the figure (``image`` names it too).
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
                # Wide enough for "implementation revision" whole (150 px cut it to "implementation revi…").
                style={"description_width": "170px"}, layout={"width": "440px"})
        # The figure's own renderer: a PNG on a machine; in the page, where there is no matplotlib, an
        # output area showing the chart's Vega-Lite, set as data (no capture of a cell's output needed).
        self.picture = widgets.Output() if chart.IN_BROWSER else widgets.Image(format="png")
        self.image = self.picture
        self.table = widgets.HTML()
        scenario = [self.sliders[name] for name, *_ in SCENARIO_SLIDERS]
        priced = [self.sliders[field.name] for field in fields(Costs)]
        # The two columns of sliders wrap: side by side they need about 750 px, and an output at 1024 px
        # with the file browser open has less (the prices' readouts were cut off).
        self.widget = widgets.VBox([widgets.HBox([widgets.VBox(scenario), widgets.VBox(priced)],
                                                 layout={"flex_flow": "row wrap"}),
                                    self.picture, self.table])
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
        if chart.IN_BROWSER:
            self.picture.outputs = ({"output_type": "display_data", "metadata": {},
                                     "data": {VEGA_LITE: self.figure.to_vega_lite(), "text/plain": repr(self.figure)}},)
        else:
            self.picture.value = self.figure.png(dpi=80)
        note = f"<p>{html.escape(self.figure.note)}</p>" if self.figure.note else ""  # no CJK font: see readable
        self.table.value = f"{note}<pre>{html.escape(self.summary.table())}</pre>"
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


@chart.readable
def _explorer_figure(summary: Summary, costs: Costs) -> Chart:
    n, m, density = summary.n, summary.m, summary.density
    life = dict(costs=costs, years=summary.years, revisions=summary.revisions)
    ns = _log_ints(max(1_000, n))
    ds = [10 ** (k / 20) for k in range(-80, 1)]
    by_n = [Line(tuple((x, cost(x, m, regime, density=density, **life)) for x in ns), COLORS[regime], _(regime))
            for regime in REGIMES]
    by_density = [Line(tuple((d, cost(n, m, regime, density=d, **life)) for d in ds), COLORS[regime], _(regime))
                  for regime in REGIMES]

    def current(x: float) -> tuple[Dots, ...]:  # the scenario itself, on each curve
        return tuple(Dots(((x, cost(n, m, regime, density=density, **life)),), COLORS[regime], "current", size=60)
                     for regime in REGIMES)

    even_n = (Rule(summary.break_even_n, gid="break-even",
                   legend=_("break-even N ≈ {n:.3g}", n=summary.break_even_n)),) \
        if math.isfinite(summary.break_even_n) and summary.break_even_n >= 1 else ()
    even_density = (Rule(summary.break_even_density, gid="break-even",
                         legend=_("break-even density ≈ {density:.3g}", density=summary.break_even_density)),) \
        if summary.break_even_density <= 1 else ()
    return Chart((
        Panel(_("Against N, at M = {m:,} and density {density:.3g}", m=m, density=density),
              x=Axis(_("N, applications"), "log"), y=Axis(_("total cost"), "log"), lines=tuple(by_n),
              rules=even_n, dots=current(n), legend="upper left"),
        Panel(_("Against density, at N = {n:,}, M = {m:,}", n=n, m=m),
              x=Axis(_("density (share of pairs wanted)"), "log"), y=Axis(_("total cost"), "log"),
              lines=tuple(by_density), rules=even_density, dots=current(density), legend="upper left"),
    ), size=(12, 4.5))


def _spread(count: int) -> list[float]:
    """``count`` heights spread evenly over 0..1, centred when there is just one."""
    return [0.5] if count == 1 else [1 - i / (count - 1) for i in range(count)]


def _log_ints(top: int, steps: int = 200) -> list[int]:
    return sorted({max(1, round(10 ** (math.log10(top) * k / steps))) for k in range(steps + 1)})


def _log_grid(top: int, steps: int) -> tuple[int, ...]:
    """``steps`` whole numbers spread evenly on a log scale over 1..top (the duplicates once)."""
    return tuple(sorted({round(10 ** (math.log10(top) * k / (steps - 1))) for k in range(steps)}))


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
