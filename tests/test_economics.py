"""mcplab.economics and its pictures: the seeds' numbers, break-even points, monotonicity
(hypothesis), what each figure contains, saving as PNG and SVG, and the live explorer."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcplab import economics
from mcplab.economics import (
    ILLUSTRATIVE_COSTS, POINT_TO_POINT, PROTOCOL, SEED_COSTS, Comparison, Costs,
)

sizes = st.integers(min_value=1, max_value=5_000)
densities = st.floats(min_value=1e-4, max_value=1.0)
prices = st.floats(min_value=0.1, max_value=20.0)
costs_strategy = st.builds(Costs, adapter_build=prices, implementation_build=prices,
                           adapter_upkeep=st.floats(0, 2), implementation_upkeep=st.floats(0, 2),
                           adapter_revision=st.floats(0, 2), implementation_revision=st.floats(0, 2))
FEW = settings(max_examples=60, deadline=None)


# --- the seeds' numbers ---------------------------------------------------------------------

def test_three_apps_and_four_tools_need_12_adapters_or_7_implementations():
    assert economics.compare(3, 4) == Comparison(3, 4, 12, 7, 5, 12 / 7)


def test_a_hundred_apps_and_ten_thousand_tools_need_a_million_adapters_or_10100():
    result = economics.compare(100, 10_000)
    assert (result.point_to_point, result.protocol, result.saving) == (1_000_000, 10_100, 989_900)
    assert result.ratio == pytest.approx(99.0099, rel=1e-5)


def test_comparison_reads_as_a_sentence():
    assert str(economics.compare(100, 10_000)) == (
        "100 apps × 10,000 tools: 1,000,000 adapters vs 10,100 implementations "
        "(saves 989,900, ratio 99.01)")


def test_comparison_reads_in_chinese_with_the_same_numbers(monkeypatch):
    monkeypatch.setenv("MCPLAB_LANG", "zh")
    assert str(economics.compare(100, 10_000)) == (
        "100 个应用 × 10,000 个工具：1,000,000 个适配器，对比 10,100 个实现（省下 989,900 个，比值 99.01）")


@pytest.mark.parametrize("n, m, p2p, protocol", [
    (0, 0, 0, 0), (1, 1, 1, 2), (1, 5, 5, 6), (2, 2, 4, 4), (3, 4, 12, 7), (100, 10_000, 1_000_000, 10_100),
])
def test_adapter_counts_multiply_without_a_standard_and_add_with_one(n, m, p2p, protocol):
    assert economics.adapters(n, m, POINT_TO_POINT) == p2p
    assert economics.adapters(n, m, PROTOCOL) == protocol


@pytest.mark.parametrize("call", [
    lambda: economics.adapters(-1, 4, PROTOCOL),
    lambda: economics.adapters(3, 4.5, PROTOCOL),
    lambda: economics.adapters(True, 4, PROTOCOL),
    lambda: economics.adapters(3, 4, "usb-c"),
    lambda: economics.pieces(3, 4, PROTOCOL, density=1.5),
    lambda: Costs(adapter_upkeep=-1),
    lambda: Costs(implementation_build=0),
    lambda: Costs(adapter_build=math.nan),
])
def test_impossible_inputs_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_default_costs_are_the_seeds_counting():
    assert economics.cost(3, 4, POINT_TO_POINT, years=5, revisions=2) == 12
    assert economics.cost(3, 4, PROTOCOL, years=5, revisions=2) == 7


# --- the richer model -----------------------------------------------------------------------

def test_break_even_density_of_the_seeds_examples():
    assert economics.break_even_density(3, 4) == pytest.approx(7 / 12)
    assert economics.break_even_density(100, 10_000) == pytest.approx(0.0101)


def test_break_even_density_is_infinite_without_pairs():
    assert economics.break_even_density(0, 4) == math.inf


def test_break_even_n_for_four_tools_is_four_thirds():
    assert economics.break_even_n(4) == pytest.approx(4 / 3)


def test_one_tool_never_pays_for_a_protocol_at_equal_cost():
    assert economics.break_even_n(1) == math.inf


def test_a_bigger_implementation_moves_break_even_n():
    assert economics.break_even_n(10, costs=Costs(implementation_build=4)) == pytest.approx(20 / 3)


def test_sparse_wiring_makes_point_to_point_cheaper():
    # Each of 3 apps wants 2 of the 4 tools: 6 adapters against 7 implementations.
    assert economics.pieces(3, 4, POINT_TO_POINT, density=0.5) == 6
    assert economics.cost(3, 4, POINT_TO_POINT, density=0.5) < economics.cost(3, 4, PROTOCOL)


def test_a_revision_touches_every_adapter_or_every_implementation_once():
    costs = Costs(adapter_revision=0.5, implementation_revision=2)
    assert economics.revision_cost(100, 10_000, POINT_TO_POINT, costs=costs) == 500_000
    assert economics.revision_cost(100, 10_000, PROTOCOL, costs=costs) == 20_200
    assert economics.revision_cost(20, 500, POINT_TO_POINT, density=0.1, costs=costs) == pytest.approx(500)


def test_summary_table_lists_both_bills_and_break_even_points():
    table = economics.summarize(100, 10_000, density=0.002, costs=ILLUSTRATIVE_COSTS, years=5,
                                revisions=1).table()
    assert "pieces built                   2,000        10,100" in table
    assert "total, 5 y + 1 rev             5,500        70,700" in table
    assert "cheaper: point-to-point" in table
    assert "break-even density 0.02571" in table


def test_cumulative_cost_without_growth_or_upkeep_stays_at_the_first_build():
    rows = economics.cumulative_cost(3, 4, 3)
    assert [(row.point_to_point, row.protocol) for row in rows] == [(12, 7)] * 4


def test_cumulative_cost_adds_upkeep_new_pieces_and_revisions():
    costs = Costs(adapter_upkeep=0.5, implementation_upkeep=1, adapter_revision=2,
                  implementation_revision=3)
    rows = economics.cumulative_cost(2, 2, 2, app_growth=0.5, revision_years=[2], costs=costs)
    assert [(row.n, row.m) for row in rows] == [(2, 2), (3, 2), (4, 2)]  # round(2·1.5²) = 4
    # Year 1: 2 new adapters + 6 × 0.5 upkeep; year 2: 2 new + 8 × 0.5 + 8 × 2 revision.
    assert [row.point_to_point for row in rows] == [4, 4 + 2 + 3, 9 + 2 + 4 + 16]
    # Year 1: 1 new implementation + 5 upkeep; year 2: 1 new + 6 upkeep + 6 × 3 revision.
    assert [row.protocol for row in rows] == [4, 4 + 1 + 5, 10 + 1 + 6 + 18]


@FEW
@given(n=sizes, m=sizes, costs=costs_strategy, years=st.integers(0, 10), revisions=st.integers(0, 3))
def test_both_regimes_cost_the_same_at_the_break_even_density(n, m, costs, years, revisions):
    density = economics.break_even_density(n, m, costs=costs, years=years, revisions=revisions)
    if density <= 1:
        life = dict(costs=costs, years=years, revisions=revisions)
        assert economics.cost(n, m, POINT_TO_POINT, density=density, **life) == pytest.approx(
            economics.cost(n, m, PROTOCOL, density=density, **life))


@FEW
@given(m=sizes, density=densities, costs=costs_strategy)
def test_both_regimes_cost_the_same_at_the_break_even_n(m, density, costs):
    n = economics.break_even_n(m, density=density, costs=costs)
    if math.isfinite(n):
        # cost() wants whole apps; the identity holds for the real N, so check it by hand.
        per_adapter, per_implementation = costs.per_piece(POINT_TO_POINT), costs.per_piece(PROTOCOL)
        assert density * n * m * per_adapter == pytest.approx((n + m) * per_implementation)


@FEW
@given(n=sizes, m=sizes, density=densities, costs=costs_strategy, years=st.integers(0, 10))
def test_point_to_point_grows_with_n_m_and_density_but_the_protocol_ignores_density(
        n, m, density, costs, years):
    def p2p(n: int, m: int, d: float) -> float:
        return economics.cost(n, m, POINT_TO_POINT, density=d, costs=costs, years=years)

    assert p2p(n + 1, m, density) >= p2p(n, m, density)
    assert p2p(n, m + 1, density) >= p2p(n, m, density)
    assert p2p(n, m, min(1.0, density * 2)) >= p2p(n, m, density)
    assert economics.cost(n, m, PROTOCOL, density=density, costs=costs, years=years) == \
        economics.cost(n, m, PROTOCOL, costs=costs, years=years)


@FEW
@given(n=st.integers(0, 200), m=st.integers(0, 200))
def test_protocol_needs_fewer_pieces_exactly_when_n_minus_1_times_m_minus_1_exceeds_1(n, m):
    comparison = economics.compare(n, m)
    assert (comparison.protocol < comparison.point_to_point) == ((n - 1) * (m - 1) > 1)


@FEW
@given(n=sizes, m=sizes, density=densities, costs=costs_strategy)
def test_the_protocol_is_cheaper_above_the_break_even_density(n, m, density, costs):
    threshold = economics.break_even_density(n, m, costs=costs)
    p2p = economics.cost(n, m, POINT_TO_POINT, density=density, costs=costs)
    protocol = economics.cost(n, m, PROTOCOL, density=density, costs=costs)
    if density > threshold * (1 + 1e-9):
        assert protocol < p2p
    elif density < threshold * (1 - 1e-9):
        assert protocol > p2p


@FEW
@given(n=st.integers(1, 50), m=st.integers(1, 50), growth=st.floats(0, 1), density=densities,
       costs=costs_strategy, revision=st.integers(1, 6))
def test_cumulative_cost_never_decreases(n, m, growth, density, costs, revision):
    rows = economics.cumulative_cost(n, m, 6, app_growth=growth, tool_growth=growth,
                                     revision_years=[revision], density=density, costs=costs)
    for before, after in zip(rows, rows[1:]):
        assert after.point_to_point >= before.point_to_point
        assert after.protocol >= before.protocol


# --- imports --------------------------------------------------------------------------------

def test_importing_the_model_does_not_import_matplotlib_or_ipywidgets():
    code = ("import mcplab.economics, sys; "
            "assert 'matplotlib' not in sys.modules and 'ipywidgets' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_plotting_functions_are_re_exported_lazily():
    from mcplab.economics import plots as economics_plots

    assert economics.plot_graphs is economics_plots.plot_graphs
    assert economics.explore is economics_plots.explore
    with pytest.raises(AttributeError):
        economics.plot_nothing  # noqa: B018


# --- pictures -------------------------------------------------------------------------------

def _by_gid(fig, gid):
    return [artist for artist in fig.findobj() if artist.get_gid() == gid]


def _texts(ax):
    return [text.get_text() for text in ax.texts]


def test_graph_pictures_draw_every_adapter_and_every_implementation():
    fig = economics.plot_graphs(3, 4).to_matplotlib()
    mesh, hub = fig.axes
    adapters, = _by_gid(fig, "adapters")
    implementations, = _by_gid(fig, "implementations")
    assert len(adapters.get_segments()) == 12
    assert len(implementations.get_segments()) == 7
    assert mesh.get_title() == "Without a standard: 3 × 4 = 12 adapters"
    assert hub.get_title() == "With a protocol: 3 + 4 = 7 implementations"
    assert {"App A", "App B", "App C", "Database", "Files", "Search", "GitHub"} <= set(_texts(mesh))
    assert "MCP" in _texts(hub)


def test_graph_pictures_refuse_sizes_too_big_to_read():
    with pytest.raises(ValueError):
        economics.plot_graphs(3, 50)


def test_cost_curves_annotate_the_seeds_points_on_linear_and_log_axes():
    fig = economics.plot_costs(10_000).to_matplotlib()
    linear, log = fig.axes
    assert (linear.get_xscale(), log.get_xscale(), log.get_yscale()) == ("linear", "log", "log")
    for ax in (linear, log):
        assert ax.get_xlabel() == "N, applications"
        assert [line.get_label() for line in ax.lines[:2]] == [
            "point-to-point: N × M adapters", "protocol: N + M implementations"]
        assert set(_texts(ax)) == {"100 × 10,000 = 1,000,000", "100 + 10,000 = 10,100"}
        assert ax.get_legend() is not None
    small = economics.plot_costs(4, n_max=10).to_matplotlib()
    assert {"3 × 4 = 12", "3 + 4 = 7"} <= set(_texts(small.axes[0]))
    assert len(_by_gid(small, "break-even")) == 2  # break-even N = 4/3, on both panels


def test_cost_curves_mark_a_chosen_n_with_the_richer_model():
    fig = economics.plot_costs(10_000, n_max=300, density=0.002, costs=ILLUSTRATIVE_COSTS,
                               years=5, revisions=1, mark=100).to_matplotlib()
    assert {"N = 100: 5,500", "N = 100: 70,700"} <= set(_texts(fig.axes[0]))
    assert len(_by_gid(fig, "current")) == 4


def test_heat_map_shows_the_ratio_with_the_seeds_points_and_the_break_even_line():
    fig = economics.plot_saving_heatmap(density=0.01).to_matplotlib()
    ax, bar = fig.axes
    assert "saving ratio" in ax.get_title().lower() and "density 0.01" in ax.get_title()
    assert "protocol cost" in bar.get_ylabel()
    assert ax.collections[0].get_array().size > 100  # the grid of ratios
    assert set(_texts(ax)) == {"3 × 4: ratio 0.0171", "100 × 10,000: ratio 0.99"}
    assert _by_gid(fig, "break-even")


def test_break_even_curves_show_each_tool_count_and_density():
    fig = economics.plot_break_even().to_matplotlib()
    by_n, by_m = fig.axes
    assert [line.get_label() for line in by_n.lines[:3]] == ["M = 4 tools", "M = 100 tools",
                                                             "M = 10,000 tools"]
    assert set(_texts(by_n)) == {"3 × 4: 0.583", "100 × 10,000: 0.0101"}
    assert [line.get_label() for line in by_m.lines] == ["density 1", "density 0.1", "density 0.01"]
    assert by_m.get_xlabel() == "M, tools"


def test_cumulative_picture_marks_each_revision_year():
    fig = economics.plot_cumulative(10, 50, 6, app_growth=0.4, tool_growth=0.8,
                                    revision_years=(3, 5), costs=ILLUSTRATIVE_COSTS).to_matplotlib()
    ax, = fig.axes
    assert [line.get_label() for line in ax.lines[:2]] == ["point-to-point", "protocol"]
    assert len(ax.lines[0].get_xdata()) == 7
    assert len(_by_gid(fig, "revision")) == 2


PLOTS = {
    "graphs": lambda: economics.plot_graphs(3, 4),
    "costs": lambda: economics.plot_costs(4, n_max=10),
    "heatmap": lambda: economics.plot_saving_heatmap(steps=12),
    "break_even": lambda: economics.plot_break_even(),
    "cumulative": lambda: economics.plot_cumulative(3, 4, 3, app_growth=1.0),
}


@pytest.mark.parametrize("name", PLOTS)
@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_every_plot_saves_as_png_and_svg(name, suffix, tmp_path):
    path = tmp_path / f"{name}.{suffix}"
    PLOTS[name]().savefig(path)
    data = path.read_bytes()
    if suffix == "png":
        assert data.startswith(b"\x89PNG")
    else:
        assert b"<svg" in data[:2000]


def test_plots_leave_no_figure_registered_with_pyplot():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    for make in PLOTS.values():
        make().to_matplotlib()
    assert plt.get_fignums() == before


# --- the explorer ---------------------------------------------------------------------------

def test_explorer_has_a_slider_for_the_scenario_and_every_cost():
    panel = economics.explore()
    assert set(panel.sliders) == {"n", "m", "density", "years", "revisions", "adapter_build",
                                  "implementation_build", "adapter_upkeep", "implementation_upkeep",
                                  "adapter_revision", "implementation_revision"}
    assert panel.summary == economics.summarize(3, 4)
    assert bytes(panel.image.value).startswith(b"\x89PNG")


def test_moving_a_slider_redraws_the_table_and_the_figure():
    panel = economics.explore(3, 4)
    table, figure, image, redraws = panel.table_text, panel.figure, bytes(panel.image.value), panel.redraws
    panel.sliders["n"].value = 10
    assert panel.redraws == redraws + 1
    assert panel.table_text != table and "N = 10, M = 4" in panel.table_text
    assert panel.figure is not figure
    assert panel.figure.to_matplotlib().axes[0].get_title() == "Against N, at M = 4 and density 1"
    assert bytes(panel.image.value) != image
    assert "<pre>" in panel.table.value and "N = 10, M = 4" in panel.table.value


def test_moving_a_cost_slider_changes_the_bill():
    panel = economics.explore(3, 4)
    panel.sliders["implementation_build"].value = 3.0
    assert panel.summary.protocol.build == 21
    assert panel.costs == Costs(implementation_build=3.0)


def test_explorer_shows_the_same_text_every_run():
    panel = economics.explore()
    bundle = panel._repr_mimebundle_()
    assert bundle["text/plain"] == "Explorer with 11 sliders: move one to redraw the figure and table"
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_seed_costs_are_the_default():
    assert Costs() == SEED_COSTS
