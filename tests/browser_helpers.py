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
