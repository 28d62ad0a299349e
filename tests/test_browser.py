"""The labs in a real browser: JupyterLab in Debian's headless Chromium, driven by Playwright.

Every ``labs/*.ipynb`` and every Chinese lab ``labs/zh-CN/*.ipynb`` (found when the tests are
collected, so new labs join by themselves) is opened, its outputs cleared, Run All, and then no cell
may hold an error or stderr output (a glyph missing from a plot's font is a stderr warning too). Lab
08's explorer must redraw its plot and table when a slider moves, the playground in Lab 00 must send a
call from its form and grow its trace, a prediction in Lab 02 must refuse a wrong answer and take the
right one through its Check button, and the Chinese Lab 08's kernel must draw Chinese with a CJK
font, every glyph found. Screenshots of what the student sees (traces, plots, widgets) are written to
``test-output/browser/``.

The layout half measures what the student sees is whole, on Labs 00, 03, 06, 08 and the Chinese Labs 00
and 08 as their Run All left them, at the default width and again at 1024 px (the window resized):
``browser_helpers.LAYOUT`` opens every frame of every trace view and checks that every widget label and
button shows its whole text (``scrollWidth <= clientWidth``, and the text measured in the label's own
font fits its content box: an ellipsis cut into the padding leaves scrollWidth as it was), that the
client and server lanes of each trace view take at least 60% of its output's width, and that no opened
frame's JSON is broken inside a token. JupyterLab styles the tables of an HTML output (``table-layout:
fixed``, right-aligned cells) and breaks the lines of every ``pre`` anywhere (``word-break:
break-all``); the views must hold against both. One screenshot per lab and width, of its first trace
view (two frames open) and of its playground or explorer, goes to ``test-output/layout/``. Where a lab
invites the student to try its playground (Labs 00 and 03), it must still be connected after Run All.

Chromium comes from Debian (``make test`` installs it when missing and it may), never from
``playwright install``. Without it, or without Playwright, the tests skip, and fail under CI=true.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import time
from pathlib import Path

import pytest

from browser_helpers import (APP_READY, CHROMIUM, CHROMIUM_ARGS, CLOSE, KERNEL_IDLE, KERNEL_RUN, LAYOUT, OPEN,
                             PROBLEMS, PROGRESS, RUN_ALL, SHOW, JupyterLab)
from conftest import ROOT, need

pytestmark = pytest.mark.browser

LABS = (sorted(path.name for path in (ROOT / "labs").glob("*.ipynb"))
        + sorted(f"zh-CN/{path.name}" for path in (ROOT / "labs" / "zh-CN").glob("*.ipynb")))
OUTPUT = ROOT / "test-output" / "browser"
RUN_TIMEOUT = 120_000  # ms for one notebook's Run All
CHANGE_TIMEOUT = 20_000  # ms for a widget to react
# The layout half: these labs as their Run All left them, at the default width and a small laptop's.
LAYOUT_LABS = ("00_start_here.ipynb", "03_primitives.ipynb", "06_stateless.ipynb", "08_economics.ipynb",
               "zh-CN/00_start_here.ipynb", "zh-CN/08_economics.ipynb")
VIEWS = {"00_start_here.ipynb", "03_primitives.ipynb", "06_stateless.ipynb", "zh-CN/00_start_here.ipynb"}
PLAY = {"00_start_here.ipynb", "03_primitives.ipynb", "zh-CN/00_start_here.ipynb"}  # their text says "try it"
WIDTHS = (1400, 1024)
MIN_LANES = 0.6
LAYOUT_OUTPUT = ROOT / "test-output" / "layout"
# JupyterLab lays a panel out again in the animation frame after the window's resize event: wait two.
LAID_OUT = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"
KEEP_OPEN = {"02_handshake.ipynb", *LAYOUT_LABS}  # later tests use these pages

TRACE = "th:text-is('stderr')"  # the header of every trace diagram (mcplab.trace.views)


@pytest.fixture(scope="module")
def stored() -> dict[str, bytes]:
    """The lab notebooks as they were before the browser ran them (filled by ``lab``)."""
    return {}


@pytest.fixture(scope="module")
def lab(tmp_path_factory, stored):
    need(Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing (make test installs Debian's chromium when run as root)")
    need(importlib.util.find_spec("playwright") is not None, "Playwright for Python is not installed")
    need(importlib.util.find_spec("jupyterlab") is not None, "JupyterLab is not installed (pip install -e '.[lab]')")
    stored.update({name: (ROOT / "labs" / name).read_bytes() for name in LABS})
    state = tmp_path_factory.mktemp("jupyter-state")
    server = JupyterLab(state, state / "jupyterlab.log")
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def page(lab):
    """One JupyterLab page for every test of this module."""
    from playwright.sync_api import sync_playwright

    for folder in (OUTPUT, LAYOUT_OUTPUT):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = chromium.new_page(viewport={"width": WIDTHS[0], "height": 1000})
        page.goto(f"{lab.url}/lab")
        page.wait_for_function(APP_READY, timeout=60_000)
        yield page
        chromium.close()


@pytest.fixture(scope="module")
def kept(page):
    """Notebooks that later tests look at again, left open after their run: name → panel id."""
    panels: dict[str, str] = {}
    yield panels
    for name in panels:
        page.evaluate(CLOSE, name)


def shoot(page, panel: str, stem: str) -> None:
    """The notebook as opened, and its first trace, plot and widget, each on its own."""
    page.screenshot(path=OUTPUT / f"{stem}.png")
    outputs = page.locator(f"#{panel} .jp-OutputArea-output")
    for what, found in (("trace", outputs.filter(has=page.locator(TRACE))),
                        ("plot", page.locator(f"#{panel} .jp-OutputArea-output.jp-RenderedImage")),
                        ("widget", outputs.filter(has=page.locator(".jupyter-widgets.widget-vbox")))):
        found = found.filter(visible=True)
        if found.count():
            found.first.screenshot(path=OUTPUT / f"{stem}-{what}.png", timeout=10_000)


@pytest.mark.parametrize("name", LABS)
def test_every_cell_of_the_lab_runs_in_the_browser_without_an_error(page, kept, name):
    panel = page.evaluate(OPEN, name)
    try:
        page.wait_for_function(KERNEL_IDLE, arg=name, timeout=60_000)
        page.evaluate(RUN_ALL, name)
        page.wait_for_function(PROGRESS, arg=name, timeout=RUN_TIMEOUT, polling=250)
        problems = page.evaluate(PROBLEMS, name)
        shoot(page, panel, name.removesuffix(".ipynb").replace("/", "-"))
    except BaseException:
        page.evaluate(CLOSE, name)
        raise
    if name in KEEP_OPEN and not problems:
        kept[name] = panel
    else:
        page.evaluate(CLOSE, name)
    assert problems == [], f"{name}:\n" + "\n".join(problems)


def opened(page, kept, name: str):
    """The panel of a notebook that ran cleanly, shown again: a locator for it."""
    assert name in LABS, f"labs/{name} is missing from this checkout"
    if name not in kept:
        pytest.fail(f"labs/{name} did not run cleanly in the browser (see its own test)")
    page.evaluate(SHOW, name)
    return page.locator(f"#{kept[name]}")


def shoot_layout(page, panel: str, stem: str) -> None:
    """The lab's first trace view, its first two frames open, and its first widget, each on its own."""
    page.locator(f"#{panel}").evaluate("lab => lab.querySelectorAll('details').forEach(d => { d.open = false; })")
    outputs = page.locator(f"#{panel} .jp-OutputArea-output").filter(visible=True)
    view = outputs.filter(has=page.locator("table.mcplab-trace-view, table.mcplab-trace-diff"))
    if view.count():
        view.first.evaluate("out => out.querySelectorAll('details').forEach((d, i) => { d.open = i < 2; })")
        view.first.screenshot(path=LAYOUT_OUTPUT / f"{stem}-trace.png", timeout=10_000)
    widget = outputs.filter(has=page.locator(".mcplab-playground, .widget-slider"))
    if widget.count():
        widget.first.screenshot(path=LAYOUT_OUTPUT / f"{stem}-widget.png", timeout=10_000)


@pytest.mark.parametrize("name", LAYOUT_LABS)
def test_after_run_all_labels_are_whole_trace_views_wide_and_unbroken_and_playgrounds_open_where_invited(page, kept,
                                                                                                          name):
    notebook = opened(page, kept, name)
    panel = kept[name]
    # After Run All the playground is still connected where the lab invites play: Send can be clicked.
    send = notebook.locator(".mcplab-playground button.mcplab-send")
    playable = send.count() > 0 and send.first.is_enabled()
    stem = name.removesuffix(".ipynb").replace("/", "-")
    found = {}
    try:
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 1000})
            page.evaluate(LAID_OUT)
            found[width] = page.evaluate(LAYOUT, [name, MIN_LANES])
            shoot_layout(page, panel, f"{stem}-{width}")
    finally:
        page.set_viewport_size({"width": WIDTHS[0], "height": 1000})
        page.evaluate(LAID_OUT)
    assert playable == (name in PLAY), f"{name}: the playground is {'open' if playable else 'closed or absent'}"
    for width, seen in found.items():
        assert seen["labels"] > 0, f"{name} at {width} px: no widget label found"
        if name in VIEWS:
            assert seen["views"] > 0 and seen["frames"] > 0, f"{name} at {width} px: no trace view found"
        assert seen["problems"] == [], f"{name} at {width} px:\n" + "\n".join(seen["problems"])


def test_moving_a_slider_in_lab_07_redraws_the_plot_and_the_table(page, kept):
    notebook = opened(page, kept, "08_economics.ipynb")
    explorer = notebook.locator(".jp-OutputArea-output").filter(has=page.locator(".widget-slider")).filter(
        has=page.locator(".widget-image")).first
    explorer.scroll_into_view_if_needed()
    image, table = explorer.locator(".widget-image").first, explorer.locator(".widget-html pre").first
    readout = explorer.locator(".widget-slider .widget-readout").first
    before = (image.get_attribute("src"), table.inner_text(), readout.inner_text())
    explorer.locator(".widget-slider .noUi-handle").first.press("ArrowRight")
    page.wait_for_function(
        """([out, src, text]) => out.querySelector('.widget-image').getAttribute('src') !== src
                                && out.querySelector('.widget-html pre').textContent !== text""",
        arg=[explorer.element_handle(), before[0], before[1]], timeout=CHANGE_TIMEOUT)
    assert int(readout.inner_text()) == int(before[2]) + 1
    assert image.get_attribute("src") != before[0] and table.inner_text() != before[1]
    explorer.screenshot(path=OUTPUT / "08_economics-explorer-after-slider.png")


def test_sending_from_the_playground_grows_its_trace(page, kept):
    notebook = opened(page, kept, "00_start_here.ipynb")
    panel = notebook.locator(".mcplab-playground").first
    panel.scroll_into_view_if_needed()
    count = panel.locator(".mcplab-trace-count")
    frames = lambda: int(re.search(r"(\d+) frames", count.inner_text()).group(1))  # noqa: E731
    before = frames()
    panel.locator(".mcplab-arg-city input").fill("Beijing")
    # The typed value reaches the kernel as a comm message, which the page may hold back while an
    # earlier one of the widget's is unanswered; the click's message is not held. So click only once
    # the kernel has the value (each probe also lets the page send what it held).
    deadline = time.monotonic() + CHANGE_TIMEOUT / 1000
    while page.evaluate(KERNEL_RUN, ["00_start_here.ipynb", "print(pg.form['city'].value, end='')"]) != "Beijing":
        assert time.monotonic() < deadline, "the kernel never saw the city typed into the playground"
        page.wait_for_timeout(100)
    panel.locator("button.mcplab-send").click()
    page.wait_for_function("([node, n]) => { const m = node.textContent.match(/(\\d+) frames/);"
                           " return m && Number(m[1]) > n; }",
                           arg=[count.element_handle(), before], timeout=CHANGE_TIMEOUT)
    assert frames() == before + 2  # one tools/call request, one response
    assert "Beijing: sunny" in panel.locator(".mcplab-result").inner_text()
    assert panel.locator(".mcplab-trace tr").count() == before + 2 + 1  # a row per frame, and the header
    panel.screenshot(path=OUTPUT / "00_start_here-playground-after-send.png")


def test_a_prediction_answered_wrongly_then_rightly_says_so_in_the_browser(page, kept):
    from playwright.sync_api import expect

    notebook = opened(page, kept, "02_handshake.ipynb")
    for key, wrong, right, pick in (("02-completions", "logging", "completions", "radio"),
                                    ("02-downgrade", "2024-10-07", "2025-11-25", "text")):
        widget = notebook.locator(f".mcplab-predict-{key}").first
        widget.scroll_into_view_if_needed()
        feedback = widget.locator(".mcplab-predict-feedback")
        expect(feedback).to_have_text("")  # nothing said, nothing marked, before the student tries
        for answer, said in ((wrong, "✗ Not this one."), (right, "✓ Right.")):
            if pick == "radio":
                widget.locator(".mcplab-predict-answer label", has_text=answer).click()
            else:
                widget.locator(".mcplab-predict-answer input").fill(answer)
            widget.locator(".mcplab-predict-check").click()
            expect(feedback).to_contain_text(said, timeout=CHANGE_TIMEOUT)
        widget.screenshot(path=OUTPUT / f"02_handshake-predict-{key}.png")


# Run in the kernel of the Chinese Lab 08 after its Run All: the language its setup cell chose, the CJK
# font matplotlib resolved there, and the characters of every plot's text that no font could draw.
FONT_PROBE = """
import json, matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from mcplab import economics, i18n
from mcplab.economics import plots
from mcplab.i18n import fonts
figures = [plots.plot_graphs(3, 4), plots.plot_costs(4), plots.plot_break_even(),
           plots._explorer_figure(economics.summarize(3, 4), economics.SEED_COSTS)]
figures = [chart.to_matplotlib() for chart in figures]
for figure in figures:
    FigureCanvasAgg(figure).draw()
text = "".join(t.get_text() for figure in figures for t in figure.findobj(matplotlib.text.Text))
chinese = sorted({path.rsplit("/", 1)[-1] for char, path in fonts.resolved(text) if "\u4e00" <= char <= "\u9fff"})
print(json.dumps({"language": i18n.language(), "font": fonts.cjk_font(), "files": chinese,
                  "missing": fonts.missing_glyphs(text), "chinese": sum("\u4e00" <= c <= "\u9fff" for c in text)}))
"""


def test_the_chinese_economics_lab_draws_chinese_with_a_cjk_font_and_no_missing_glyph(page, kept):
    opened(page, kept, "zh-CN/08_economics.ipynb")
    probe = json.loads(page.evaluate(KERNEL_RUN, ["zh-CN/08_economics.ipynb", FONT_PROBE]))
    assert probe["language"] == "zh" and probe["font"] and probe["chinese"] > 50
    assert probe["missing"] == "" and probe["files"] and "DejaVuSans.ttf" not in probe["files"], probe


def test_the_browser_run_wrote_no_notebook_back(lab, stored):
    """Autosave is off and nothing is saved: the stored outputs are nbval's reference, not ours."""
    changed = [name for name, before in stored.items() if (ROOT / "labs" / name).read_bytes() != before]
    assert changed == []
