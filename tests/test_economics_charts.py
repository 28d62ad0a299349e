"""The economics figures as data (mcplab.economics.chart): the same words in both places, a PNG drawn by
matplotlib on a machine, a Vega-Lite spec in the browser edition, and nothing of matplotlib or numpy on
the page's path."""

from __future__ import annotations

import base64
import json
import math
import subprocess
import sys

import pytest

from mcplab import economics
from mcplab.economics import ILLUSTRATIVE_COSTS, chart

CHARTS = {
    "graphs": lambda: economics.plot_graphs(3, 4),
    "costs": lambda: economics.plot_costs(10_000),
    "heatmap": lambda: economics.plot_saving_heatmap(density=0.01),
    "break_even": lambda: economics.plot_break_even(),
    "cumulative": lambda: economics.plot_cumulative(10, 50, 6, app_growth=0.4, tool_growth=0.8,
                                                    revision_years=(3,), density=0.2, costs=ILLUSTRATIVE_COSTS),
}


def layers(spec: dict) -> list[dict]:
    """Every layer of every panel of a spec, in order."""
    return [layer for view in spec.get("hconcat", [spec]) for layer in view["layer"]]


def rows(spec: dict, gid: str) -> list[dict]:
    return [row for layer in layers(spec) for row in layer["data"]["values"] if row.get("gid") == gid]


def test_a_chart_says_in_plain_text_what_it_shows():
    assert repr(economics.plot_graphs(3, 4)) == (
        "Figure: Without a standard: 3 × 4 = 12 adapters | With a protocol: 3 + 4 = 7 implementations")
    assert repr(economics.plot_cumulative(3, 4, 2)) == "Figure: N 3 → 3 apps, M 4 → 4 tools, density 1"
    for make in CHARTS.values():
        assert "<Figure" not in repr(make()) and repr(make()).startswith("Figure: ")


def test_building_every_chart_and_its_vega_lite_imports_neither_matplotlib_nor_numpy():
    code = ("import sys, json; from mcplab import economics; "
            "charts = [economics.plot_graphs(3, 4), economics.plot_costs(4, n_max=10), "
            "economics.plot_saving_heatmap(steps=12), economics.plot_break_even(), "
            "economics.plot_cumulative(3, 4, 3, revision_years=(2,))]; "
            "[json.dumps(c.to_vega_lite()) for c in charts]; "
            "assert not {'matplotlib', 'numpy'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_chart_shows_as_a_png_on_a_machine_and_as_vega_lite_in_the_page(monkeypatch):
    figure = economics.plot_graphs(3, 4)
    on_machine = figure._repr_mimebundle_()
    assert set(on_machine) == {"image/png", "text/plain"}
    assert base64.b64decode(on_machine["image/png"]).startswith(b"\x89PNG")
    monkeypatch.setattr(chart, "IN_BROWSER", True)
    in_page = figure._repr_mimebundle_()
    assert set(in_page) == {chart.VEGA_LITE, "text/plain"}
    assert in_page["text/plain"] == on_machine["text/plain"]
    assert in_page[chart.VEGA_LITE]["$schema"].endswith("/vega-lite/v5.json")


@pytest.mark.parametrize("name", CHARTS)
def test_every_chart_is_a_vega_lite_spec_of_plain_json_with_a_view_per_panel(name):
    figure = CHARTS[name]()
    spec = figure.to_vega_lite()
    assert json.loads(json.dumps(spec, allow_nan=False)) == spec  # no NaN, no inf, no objects of ours
    views = spec.get("hconcat", [spec])
    assert [view["title"]["text"] for view in views] == [panel.title for panel in figure.panels]


def test_the_vega_lite_graph_pictures_draw_every_adapter_and_every_implementation():
    figure = economics.plot_graphs(3, 4)
    spec = figure.to_vega_lite()
    assert len(rows(spec, "adapters")) == len(figure.segments("adapters")) == 12
    assert len(rows(spec, "implementations")) == len(figure.segments("implementations")) == 7
    words = {row.get("text") for layer in layers(spec) for row in layer["data"]["values"]}
    assert {"App A", "App C", "Database", "GitHub", "MCP"} <= words


def test_the_vega_lite_cost_curves_keep_the_seeds_labels_on_log_axes():
    figure = economics.plot_costs(10_000)
    spec = figure.to_vega_lite()
    assert figure.labels(1) == ["100 × 10,000 = 1,000,000", "100 + 10,000 = 10,100"]
    assert {row["text"] for row in rows(spec, "seed-point")} == {"100 × 10,000 = 1,000,000",
                                                                 "100 + 10,000 = 10,100"}
    log_view = spec["hconcat"][1]
    scales = {layer["encoding"]["x"].get("scale", {}).get("type") for layer in log_view["layer"]}
    assert scales == {"log"}
    legends = {row.get("legend") for layer in log_view["layer"] for row in layer["data"]["values"]}
    assert {"point-to-point: N × M adapters", "protocol: N + M implementations"} <= legends


def test_vega_lite_leaves_out_what_cannot_be_drawn_on_a_log_axis():
    # Below one tool per app a density never pays for a protocol: break-even N is infinite there.
    figure = economics.plot_break_even()
    assert any(not math.isfinite(y) for line in figure.panels[1].lines for _x, y in line.points)
    spec = figure.to_vega_lite()
    drawn = [row["y"] for row in rows(spec, "break-even")]
    assert drawn and all(math.isfinite(y) and y > 0 for y in drawn)


def test_the_heat_map_in_vega_lite_colours_every_cell_on_a_log_scale():
    figure = economics.plot_saving_heatmap(steps=12)
    heat, = [layer for layer in layers(figure.to_vega_lite()) if layer["mark"]["type"] == "rect"]
    assert len(heat["data"]["values"]) == len(figure.panels[0].heat.xs) * len(figure.panels[0].heat.ys)
    assert heat["encoding"]["color"]["scale"]["type"] == "log"


def test_the_explorer_in_the_page_shows_its_figure_as_vega_lite_and_redraws_it(monkeypatch):
    monkeypatch.setattr(chart, "IN_BROWSER", True)
    panel = economics.explore(3, 4)
    (shown,) = panel.picture.outputs
    assert shown["output_type"] == "display_data" and chart.VEGA_LITE in shown["data"]
    assert shown["data"]["text/plain"] == repr(panel.figure)
    panel.sliders["n"].value = 10
    (after,) = panel.picture.outputs
    assert after["data"]["text/plain"] == "Figure: Against N, at M = 4 and density 1 | Against density, at N = 10, M = 4"
    assert after != shown and "N = 10, M = 4" in panel.table.value


def nulls(value, where="spec"):
    """Where a None sits in a spec, as paths."""
    if value is None:
        return [where]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in nulls(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in nulls(item, f"{where}[{index}]")]
    return []


@pytest.mark.parametrize("name", CHARTS)
def test_a_vega_lite_spec_says_everything_without_null(name):
    # The page's kernel drops a null from the data it displays, so a "no axis" or "no title" written as
    # null would come out as the renderer's default (an axis, a title) in the page.
    assert nulls(CHARTS[name]().to_vega_lite()) == []


def test_the_graph_pictures_in_vega_lite_have_no_axes_and_the_heat_map_no_margin_beyond_its_cells():
    graphs = economics.plot_graphs(3, 4).to_vega_lite()
    assert all(layer["encoding"][axis]["axis"] == chart_axis_off()
               for layer in layers(graphs) for axis in ("x", "y"))
    heat = economics.plot_saving_heatmap(steps=12).to_vega_lite()
    cells = [layer for layer in layers(heat) if layer["mark"]["type"] == "rect"][0]["data"]["values"]
    assert heat["layer"][0]["encoding"]["x"]["scale"]["domain"] == [
        min(c["x"] for c in cells), max(c["x2"] for c in cells)]


def chart_axis_off():
    from mcplab.economics import vega

    return vega.NO_AXIS
