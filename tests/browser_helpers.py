"""JupyterLab for the browser test: started headless on 127.0.0.1 with every Jupyter, IPython,
matplotlib and XDG directory in a temporary folder, and the JavaScript that drives it.

JupyterLab is started with ``expose_app_in_browser``, so the page has ``window.jupyterapp`` and the
test runs the same commands a menu does (``notebook:run-all-cells``) and reads the notebook's model
(outputs, tags, execution counts) instead of guessing from pixels. Settings overrides hide the news
toast, keep every cell in the DOM (no windowing) and turn autosave off: the test executes the
stored lab notebooks and must never write them back.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
}
STATE_DIRS = ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR",
              "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class JupyterLab:
    """``mcplab lab`` in the background; ``url`` once it answers, ``stop()`` to end it."""

    def __init__(self, state: Path, log: Path) -> None:
        env = dict(os.environ, JUPYTER_PLATFORM_DIRS="1")
        for name in STATE_DIRS:
            env[name] = str(state / name.lower())
            os.makedirs(env[name], exist_ok=True)
        settings = state / "lab-settings"
        settings.mkdir()
        (settings / "overrides.json").write_text(json.dumps(OVERRIDES), encoding="utf-8")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcplab.cli", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
             "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.port_retries=0",
             "--LabApp.expose_app_in_browser=True", f"--LabApp.app_settings_dir={settings}"],
            cwd=state, env=env, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with code {self.process.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError(f"JupyterLab did not answer within {timeout:g} s")

    def stop(self) -> None:
        stop_process(self.process)
        self._log.close()


def stop_process(process: subprocess.Popen) -> None:
    """SIGTERM, then after 10 s SIGKILL; reaped either way."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# --- JavaScript run in the page -------------------------------------------------------------------
# One page serves every notebook: JupyterLab starts once, and each notebook is opened in it, run,
# checked and closed. Open notebooks are kept in window.mcplab by path.

APP_READY = "() => !!(window.jupyterapp && window.jupyterapp.shell)"

OPEN = """async path => {
  const app = window.jupyterapp;
  await app.restored;
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await panel.context.ready;
  await panel.sessionContext.ready;
  (window.mcplab = window.mcplab || {})[path] = panel;
  return panel.id;
}"""

KERNEL_IDLE = """path => {
  const session = window.mcplab[path].sessionContext.session;
  return !!(session && session.kernel && session.kernel.status === 'idle');
}"""

# Clear the stored outputs first: otherwise "every cell has an execution count" holds before anything ran.
RUN_ALL = """async path => {
  const app = window.jupyterapp;
  app.shell.activateById(window.mcplab[path].id);
  await app.commands.execute('notebook:clear-all-cell-outputs');
  app.commands.execute('notebook:run-all-cells');  // not awaited: the test polls, with a timeout
}"""

# Done when the kernel is idle and every code cell has run, or as soon as an untagged error appears
# (Run All stops there, so waiting longer would only time out).
PROGRESS = """path => {
  const panel = window.mcplab[path];
  const cells = panel.content.widgets.filter(c => c.model.type === 'code' && c.model.sharedModel.getSource().trim());
  const failed = cells.some(c => !(c.model.getMetadata('tags') || []).includes('raises-exception')
                                 && c.model.outputs.toJSON().some(o => o.output_type === 'error'));
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const idle = !!kernel && kernel.status === 'idle';
  const ran = cells.every(c => c.model.executionCount !== null
                               && !c.node.querySelector('.jp-InputPrompt').textContent.includes('*'));
  return failed ? 'failed' : (idle && ran ? 'done' : false);
}"""

# Every output that is an error or stderr, outside cells tagged raises-exception: from the model
# (the ground truth) and from the DOM (what the student sees).
PROBLEMS = """path => {
  const problems = [];
  window.mcplab[path].content.widgets.forEach((cell, index) => {
    if (cell.model.type !== 'code' || (cell.model.getMetadata('tags') || []).includes('raises-exception')) return;
    for (const o of cell.model.outputs.toJSON()) {
      if (o.output_type === 'error') problems.push(`cell ${index}: ${o.ename}: ${o.evalue}`);
      if (o.output_type === 'stream' && o.name === 'stderr')
        problems.push(`cell ${index}: stderr: ${[].concat(o.text).join('').slice(0, 300)}`);
    }
    const shown = cell.node.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]');
    if (shown.length) problems.push(`cell ${index}: ${shown.length} error or stderr output(s) on the page`);
    if (cell.model.executionCount === null && cell.model.sharedModel.getSource().trim())
      problems.push(`cell ${index}: never ran`);
  });
  return problems;
}"""

SHOW = "path => window.jupyterapp.shell.activateById(window.mcplab[path].id)"

# Run code in an open notebook's own kernel (nothing is added to the notebook) and return what it printed.
KERNEL_RUN = """async ([path, code]) => {
  const kernel = window.mcplab[path].sessionContext.session.kernel;
  const future = kernel.requestExecute({code, silent: false, store_history: false});
  let out = '';
  future.onIOPub = msg => {
    if (msg.header.msg_type === 'stream') out += msg.content.text;
    if (msg.header.msg_type === 'error') out += msg.content.ename + ': ' + msg.content.evalue;
  };
  await future.done;
  return out;
}"""

# Closing a run notebook would ask whether to save it: it is marked clean first, and never saved.
CLOSE = """async path => {
  const panel = window.mcplab[path];
  delete window.mcplab[path];
  panel.context.model.dirty = false;
  await panel.sessionContext.shutdown();
  panel.dispose();
}"""

# --- layout: what a student sees is whole -----------------------------------------------------------
# Opens every frame of every trace view (the viewer, the diff, the playground's trace) in a notebook and
# reports what is cut or crowded: a widget label or button whose text is wider than its box, a trace
# view whose lanes take less than MIN_LANES of its output's width, and an opened frame's JSON whose
# line boxes split a token (two non-blank characters on two lines with no newline between them).
# Each line box is read from the characters' own rectangles: what the eye sees, whatever CSS made it.
LAYOUT = """([path, minLanes]) => {
  const root = window.mcplab[path].node;
  const seen = node => node.offsetParent !== null;
  const found = {labels: 0, views: 0, frames: 0, problems: []};
  // A label's text may run into its box's padding and be cut there with an ellipsis while scrollWidth
  // still equals clientWidth: the text is measured as well, in the label's own font, against its content box.
  const pen = document.createElement('canvas').getContext('2d');
  for (const label of root.querySelectorAll('.widget-label, .widget-toggle-button, .jupyter-button')) {
    const text = label.textContent.trim();
    if (!seen(label) || !text) continue;
    found.labels++;
    const style = getComputedStyle(label);
    pen.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const room = label.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const needs = Math.ceil(pen.measureText(text).width);
    if (label.scrollWidth > label.clientWidth || needs > room)
      found.problems.push(`label "${text}" cut: it needs ${needs} px, its box has ${room} px`
                          + ` (scrollWidth ${label.scrollWidth}, clientWidth ${label.clientWidth})`);
  }
  for (const view of root.querySelectorAll('table.mcplab-trace-view, table.mcplab-trace-diff')) {
    if (!seen(view)) continue;
    found.views++;
    const output = view.closest('.jp-OutputArea-output');
    const head = view.rows[0].cells;
    const lanes = view.classList.contains('mcplab-trace-view') ? head[1].offsetWidth
                                                               : head[1].offsetWidth + head[2].offsetWidth;
    if (lanes < minLanes * output.clientWidth)
      found.problems.push(`${view.className}: lanes ${lanes} px of an output ${output.clientWidth} px wide`);
    for (const details of view.querySelectorAll('details')) {
      details.open = true;
      found.frames++;
      const pre = details.querySelector('pre');
      const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
      const range = document.createRange();
      let previous = null;
      while (walker.nextNode()) {
        const node = walker.currentNode;
        for (let i = 0; i < node.length; i++) {
          const char = node.data[i];
          if (char === '\\n') { previous = null; continue; }
          range.setStart(node, i); range.setEnd(node, i + 1);
          const box = range.getClientRects()[0];
          if (!box) continue;
          if (previous && box.top > previous.top + 1 && /\\S/.test(previous.char) && /\\S/.test(char)) {
            found.problems.push(`${view.className}: a token split across lines: `
                                + JSON.stringify(node.data.slice(Math.max(0, i - 24), i) + ' / ' + node.data.slice(i, i + 24)));
            previous = null;
            break;
          }
          previous = {char, top: box.top};
        }
      }
    }
  }
  return found;
}"""
