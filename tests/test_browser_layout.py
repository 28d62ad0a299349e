"""What the student sees is whole: the labs' trace views and widgets measured in a real browser.

Labs 00, 03, 06, 08 and the Chinese Labs 00 and 08 are opened in JupyterLab in Debian's headless Chromium,
Run All, and then, at the default width and again at 1024 px (the same run, the window resized),
``browser_helpers.LAYOUT`` opens every frame of every trace view and measures: every widget label and
button shows its whole text (``scrollWidth <= clientWidth``, and the text measured in the label's own
font fits its content box: an ellipsis cut into the padding leaves scrollWidth as it was), the client and server lanes of each trace
view take at least 60% of its output's width, and no opened frame's JSON is broken inside a token. One
screenshot per lab and width, of its first trace view (two frames open) and of its playground or
explorer, goes to ``test-output/layout/``. Where a lab invites the student to try its playground
(Labs 00 and 03), the playground must still be connected after Run All.

JupyterLab styles the tables of an HTML output (``table-layout: fixed``, right-aligned cells) and breaks
the lines of every ``pre`` anywhere (``word-break: break-all``); the views must hold against both.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from browser_helpers import (APP_READY, CHROMIUM, CHROMIUM_ARGS, CLOSE, KERNEL_IDLE, LAYOUT, OPEN, PROBLEMS,
                             PROGRESS, RUN_ALL, JupyterLab)
from conftest import ROOT, need

pytestmark = pytest.mark.browser

LABS = ("00_start_here.ipynb", "03_primitives.ipynb", "06_stateless.ipynb", "08_economics.ipynb",
        "zh-CN/00_start_here.ipynb", "zh-CN/08_economics.ipynb")
VIEWS = {"00_start_here.ipynb", "03_primitives.ipynb", "06_stateless.ipynb", "zh-CN/00_start_here.ipynb"}
PLAY = {"00_start_here.ipynb", "03_primitives.ipynb", "zh-CN/00_start_here.ipynb"}  # their text says "try it"
WIDTHS = (1400, 1024)  # the other tests' viewport, and a small laptop's
MIN_LANES = 0.6
OUTPUT = ROOT / "test-output" / "layout"
RUN_TIMEOUT = 120_000  # ms for one notebook's Run All
# JupyterLab lays a panel out again in the animation frame after the window's resize event: wait two.
LAID_OUT = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    need(Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing (make test installs Debian's chromium when run as root)")
    need(importlib.util.find_spec("playwright") is not None, "Playwright for Python is not installed")
    need(importlib.util.find_spec("jupyterlab") is not None, "JupyterLab is not installed (pip install -e '.[lab]')")
    from playwright.sync_api import sync_playwright

    shutil.rmtree(OUTPUT, ignore_errors=True)
    OUTPUT.mkdir(parents=True)
    state = tmp_path_factory.mktemp("jupyter-state")
    lab = JupyterLab(state, state / "jupyterlab.log")
    try:
        lab.wait_ready()
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = chromium.new_page(viewport={"width": WIDTHS[0], "height": 1000})
            page.goto(f"{lab.url}/lab")
            page.wait_for_function(APP_READY, timeout=60_000)
            yield page
            chromium.close()
    finally:
        lab.stop()


def shoot(page, panel: str, stem: str) -> None:
    """The lab's first trace view, its first two frames open, and its first widget, each on its own."""
    page.locator(f"#{panel}").evaluate("lab => lab.querySelectorAll('details').forEach(d => { d.open = false; })")
    outputs = page.locator(f"#{panel} .jp-OutputArea-output").filter(visible=True)
    view = outputs.filter(has=page.locator("table.mcplab-trace-view, table.mcplab-trace-diff"))
    if view.count():
        view.first.evaluate("out => out.querySelectorAll('details').forEach((d, i) => { d.open = i < 2; })")
        view.first.screenshot(path=OUTPUT / f"{stem}-trace.png", timeout=10_000)
    widget = outputs.filter(has=page.locator(".mcplab-playground, .widget-slider"))
    if widget.count():
        widget.first.screenshot(path=OUTPUT / f"{stem}-widget.png", timeout=10_000)


@pytest.mark.parametrize("name", LABS)
def test_after_run_all_labels_are_whole_trace_views_wide_and_unbroken_and_playgrounds_open_where_invited(page, name):
    page.set_viewport_size({"width": WIDTHS[0], "height": 1000})
    panel = page.evaluate(OPEN, name)
    try:
        page.wait_for_function(KERNEL_IDLE, arg=name, timeout=60_000)
        page.evaluate(RUN_ALL, name)
        page.wait_for_function(PROGRESS, arg=name, timeout=RUN_TIMEOUT, polling=250)
        assert page.evaluate(PROBLEMS, name) == []
        # After Run All the playground is still connected where the lab invites play: Send can be clicked.
        send = page.locator(f"#{panel} .mcplab-playground button.mcplab-send")
        playable = send.count() > 0 and send.first.is_enabled()
        stem = name.removesuffix(".ipynb").replace("/", "-")
        found = {}
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 1000})
            page.evaluate(LAID_OUT)
            found[width] = page.evaluate(LAYOUT, [name, MIN_LANES])
            shoot(page, panel, f"{stem}-{width}")
    finally:
        page.evaluate(CLOSE, name)
    assert playable == (name in PLAY), f"{name}: the playground is {'open' if playable else 'closed or absent'}"
    for width, seen in found.items():
        assert seen["labels"] > 0, f"{name} at {width} px: no widget label found"
        if name in VIEWS:
            assert seen["views"] > 0 and seen["frames"] > 0, f"{name} at {width} px: no trace view found"
        assert seen["problems"] == [], f"{name} at {width} px:\n" + "\n".join(seen["problems"])
