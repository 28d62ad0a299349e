"""The site test's two servers and the JavaScript that drives JupyterLite.

:class:`StaticServer` is what a teacher runs, ``python -m http.server --bind 127.0.0.1``, on a port
the kernel picks (``0``); its first line says which, so the test waits for that line, not a clock.

:class:`Outside` stands for every host that is not 127.0.0.1. Chromium is started with it as its
proxy, so whatever the page, its workers or its service worker ask of another host arrives here
(Chromium never sends loopback through a proxy): each request line is counted and refused. Playwright's
own routing sees the page's requests too and aborts any to another host; the proxy also sees what
routing may not (a service worker's fetches), so a count of zero from both means nothing left.
"""

from __future__ import annotations

import re
import socket
import socketserver
import subprocess
import sys
import threading
from pathlib import Path

from browser_helpers import APP_READY, OPEN, stop_process  # noqa: F401  (APP_READY, OPEN: for the site test)

SERVING = re.compile(rb"port (\d+)")


class StaticServer:
    """``python -m http.server`` on 127.0.0.1 serving ``folder``; ``url`` once it says its port."""

    def __init__(self, folder: Path, log: Path) -> None:
        self._log = log.open("wb")
        self.process = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1",
                                         "--directory", str(folder), "0"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._log)
        line = self.process.stdout.readline()  # "Serving HTTP on 127.0.0.1 port 41234 ...", or EOF if it died
        found = SERVING.search(line)
        if not found:
            self.stop()
            raise RuntimeError(f"http.server did not start: {line!r} (exit {self.process.returncode})")
        self.url = f"http://127.0.0.1:{int(found.group(1))}"

    def stop(self) -> None:
        stop_process(self.process)
        self.process.stdout.close()
        self._log.close()


class _Refuse(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        line = self.rfile.readline(4096).decode("latin-1").strip()
        if line:
            self.server.seen.append(line)  # type: ignore[attr-defined]
        self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


class Outside(socketserver.ThreadingTCPServer):
    """A proxy on 127.0.0.1 that answers 403 to everything and keeps each request line in ``seen``.

    It runs in a thread of its own because the test drives the browser synchronously from its thread.
    """

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Refuse)
        self.seen: list[str] = []
        self.address = f"127.0.0.1:{self.server_address[1]}"
        self._thread = threading.Thread(target=self.serve_forever, name="outside-proxy", daemon=True)
        self._thread.start()

    def hosts(self) -> set[str]:
        """The hosts asked for: ``CONNECT host:443`` (HTTPS) or ``GET http://host/...`` (plain HTTP)."""
        found = set()
        for line in self.seen:
            target = line.split(" ")[1] if " " in line else line
            found.add(re.sub(r"^[a-z]+://", "", target).split("/")[0].rsplit(":", 1)[0])
        return found

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join()


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then closed): a connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- JavaScript run in the page (the site exposes window.jupyterapp) -------------------------------------

# The site's JupyterLab (JupyterLite) exposes window.jupyterapp as the desktop one does: the same
# APP_READY and OPEN (tests/browser_helpers.py) open a notebook there.

# A new first cell with the code, run as Shift+Enter runs it: resolved when the kernel has answered it
# (the first cell of a new kernel waits for Pyodide to boot), or rejected when the deadline fires.
RUN_FIRST_CELL = """async ([code, seconds]) => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  panel.content.activeCellIndex = 0;
  await app.commands.execute('notebook:insert-cell-above');
  const cell = panel.content.activeCell;
  cell.model.sharedModel.setSource(code);
  const ran = app.commands.execute('notebook:run-cell');
  let timer;
  const deadline = new Promise((_, reject) => { timer = setTimeout(
    () => reject(new Error(`deadline fired: the kernel had not answered the cell after ${seconds} s`)), seconds * 1000); });
  await Promise.race([ran, deadline]);
  clearTimeout(timer);
  const outputs = cell.model.outputs.toJSON();
  return outputs.map(o => o.output_type === 'stream' ? [].concat(o.text).join('')
                        : o.output_type === 'error' ? `${o.ename}: ${o.evalue}` : JSON.stringify(o.data)).join('');
}"""


# --- a whole lab in the page, and its outputs as nbval compares them -----------------------------------

# Run All as the menu does, resolved once every cell has run (or rejected when the deadline fires);
# then each code cell's outputs: stream text, the plain text of a result, an error's name and value.
RUN_ALL = """async ([path, seconds]) => {
  const app = window.jupyterapp;
  await app.restored;
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await panel.context.ready;
  await panel.sessionContext.ready;
  app.shell.activateById(panel.id);  // Run All acts on the notebook in front
  let timer;
  const deadline = new Promise((_, reject) => { timer = setTimeout(
    () => reject(new Error(`deadline fired: ${path} had not run through after ${seconds} s`)), seconds * 1000); });
  // A new Pyodide kernel boots first: Run All before its kernel_info reply would run nothing.
  const booted = async () => {
    while (!panel.sessionContext.session?.kernel) await new Promise(resolve => setTimeout(resolve, 200));
    return panel.sessionContext.session.kernel.info;
  };
  await Promise.race([booted(), deadline]);
  await Promise.race([app.commands.execute('notebook:run-all-cells'), deadline]);
  clearTimeout(timer);
  const cells = panel.content.model.sharedModel.cells.filter(cell => cell.cell_type === 'code');
  return cells.map(cell => cell.toJSON().outputs.map(o =>
    o.output_type === 'stream' ? [o.name, [].concat(o.text).join('')]
    : o.output_type === 'error' ? ['error', `${o.ename}: ${o.evalue}`]
    : ['result', [].concat((o.data || {})['text/plain'] || '').join('')]));
}"""


def stored_outputs(notebook: Path) -> list[list[list[str]]]:
    """The same view of a notebook's stored outputs: per code cell, [kind, text] per output."""
    import json

    cells = [c for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    return [[[o["name"], "".join(o["text"])] if o["output_type"] == "stream"
             else ["error", f"{o['ename']}: {o['evalue']}"] if o["output_type"] == "error"
             else ["result", "".join(o.get("data", {}).get("text/plain", ""))] for o in c.get("outputs", [])]
            for c in cells]


def sanitized(outputs: list[list[list[str]]], config: Path) -> list[list[list[str]]]:
    """``outputs`` as nbval compares them: one stream output where the same stream wrote twice in a row
    (a kernel may send a cell's printing in one part or in several), then labs/nbval-sanitize.cfg's
    substitutions."""
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    parser.read(config, encoding="utf-8")
    rules = [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]

    def clean(text: str) -> str:
        for pattern, replacement in rules:
            text = pattern.sub(replacement, text)
        return text

    def coalesced(cell: list[list[str]]) -> list[list[str]]:
        merged: list[list[str]] = []
        for kind, text in cell:
            if merged and kind in ("stdout", "stderr") and merged[-1][0] == kind:
                merged[-1][1] += text
            else:
                merged.append([kind, text])
        return merged
    return [[[kind, clean(text)] for kind, text in coalesced(cell)] for cell in outputs]

# The same, started and left running (a page runs its kernel on its own), its outcome put on the window:
# so the test can have two labs running at once, one per core, and collect each when it is done.
START_RUN_ALL = f"""([path, seconds]) => {{
  window.mcplabRan = undefined;
  ({RUN_ALL})([path, seconds]).then(ran => {{ window.mcplabRan = {{ran}}; }},
                                    error => {{ window.mcplabRan = {{failed: String(error)}}; }});
}}"""
RAN = "() => window.mcplabRan"

