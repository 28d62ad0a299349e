"""The Chinese route in a real browser: ``mcplab lab --lang zh`` (what ``make lab LAB_LANG=zh`` runs) opens
Chinese Lab 00 in a JupyterLab whose own menus are Chinese, and leaves the student's settings alone.

JupyterLab is started as a student starts it, every Jupyter and XDG folder in a temporary one, and
Debian's headless Chromium loads its root URL: the redirect must land on the Chinese Lab 00 (the start
page is ``LabApp.default_url``; ``ServerApp.default_url`` is overridden by JupyterLab's launcher), the
menu bar must read 文件 · 编辑 · 查看 from the language pack, and the notebook's first cell must be the
Chinese one. A screenshot is kept in ``test-output/chinese-route/``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from browser_helpers import CHROMIUM, CHROMIUM_ARGS, OVERRIDES, STATE_DIRS, free_port, stop_process
from conftest import ROOT, need
from mcplab import lab_language

pytestmark = pytest.mark.browser

OUTPUT = ROOT / "test-output" / "chinese-route"
MENUS = ("文件", "编辑", "查看", "运行", "内核", "帮助")


def start_lab(state: Path, *flags: str) -> tuple[subprocess.Popen, str]:
    env = dict(os.environ, JUPYTER_PLATFORM_DIRS="1")
    for name in STATE_DIRS:
        env[name] = str(state / name.lower())
        os.makedirs(env[name], exist_ok=True)
    env.pop("MCPLAB_LANG", None)
    settings = state / "lab-settings"  # the student's environment's folder, as the browser test makes it
    settings.mkdir()
    (settings / "overrides.json").write_text(json.dumps(OVERRIDES), encoding="utf-8")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mcplab.cli", "lab", *flags, "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.port_retries=0",
         f"--LabApp.app_settings_dir={settings}"],
        cwd=state, env=env, stdin=subprocess.DEVNULL, stdout=(state / "lab.log").open("wb"),
        stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=2):
                return process, url
        except OSError:
            time.sleep(0.2)
    stop_process(process)
    raise AssertionError((state / "lab.log").read_text(errors="replace")[-3000:])


def test_the_settings_folder_of_a_chinese_launch_keeps_the_environment_s_and_adds_the_locale(tmp_path):
    environment = tmp_path / "env" / "settings"
    (environment / "overrides.d").mkdir(parents=True)
    (environment / "overrides.json").write_text('{"a:plugin": {"x": 1}}')
    (environment / "overrides.d" / "some-package.json").write_text('{"b:plugin": {"y": 2}}')
    cache = tmp_path / "cache"
    folder = lab_language.settings_folder("zh", environment, cache)
    assert folder == cache / "zh_CN" / "settings"
    assert (folder / "overrides.json").read_text() == '{"a:plugin": {"x": 1}}'
    assert (folder / "overrides.d" / "some-package.json").is_file()
    ours = json.loads((folder / "overrides.d" / lab_language.OURS).read_text())
    assert ours == {"@jupyterlab/translation-extension:plugin": {"locale": "zh_CN"}}
    (environment / "overrides.d" / "some-package.json").unlink()  # gone there: gone from the copy too
    lab_language.settings_folder("zh", environment, cache)
    assert sorted(p.name for p in (folder / "overrides.d").iterdir()) == [lab_language.OURS]
    assert sorted(p.name for p in environment.rglob("*")) == ["overrides.d", "overrides.json"]  # untouched


def test_an_english_launch_keeps_jupyterlab_s_arguments_as_given():
    assert lab_language.launch_flags("en", ["--port=1"]) == (["--port=1"], False)


def test_mcplab_lab_lang_zh_opens_chinese_lab_00_in_a_chinese_jupyterlab(tmp_path):
    need(Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing (make test installs Debian's chromium when run as root)")
    need(importlib.util.find_spec("playwright") is not None, "Playwright for Python is not installed")
    assert lab_language.has_language_pack("zh_CN"), "the lab and test extras install jupyterlab-language-pack-zh-CN"
    from playwright.sync_api import sync_playwright

    process, url = start_lab(tmp_path, "--lang", "zh")
    try:
        OUTPUT.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = chromium.new_page(viewport={"width": 1400, "height": 900})
                page.goto(f"{url}/")
                page.wait_for_selector(".jp-Notebook .jp-MarkdownOutput h1", timeout=90_000)
                assert page.url.endswith("/lab/tree/zh-CN/00_start_here.ipynb")
                page.wait_for_selector(".lm-MenuBar-itemLabel:text-is('文件')", timeout=30_000)
                page.screenshot(path=OUTPUT / "00_start_here-zh.png")
                menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
                heading = page.locator(".jp-Notebook .jp-MarkdownOutput h1").first.inner_text()
                tab = page.locator(".lm-TabBar-tab.jp-mod-current .lm-TabBar-tabLabel").first.inner_text()
            finally:
                chromium.close()
    finally:
        stop_process(process)
    assert all(menu in menus for menu in MENUS), menus
    assert "File" not in menus and "Edit" not in menus
    assert heading.startswith("实验 00") and tab == "00_start_here.ipynb"
    user_settings = tmp_path / "jupyter_config_dir" / "lab" / "user-settings"
    assert not list(user_settings.rglob("translation-extension*")), "the student's own settings were written"
    assert sorted(p.name for p in (tmp_path / "lab-settings").iterdir()) == ["overrides.json"]
