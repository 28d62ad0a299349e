"""Starting JupyterLab for ``mcplab lab`` and saying, in one line of our own, where to begin.

Theory of operation
-------------------
JupyterLab takes seconds to start (many more on a busy classroom machine), prints a screenful of
log lines, and buries the link a student needs among them, next to a ``file://`` path. So
``mcplab lab`` does not hand its process over to JupyterLab: it says it is starting it, runs it as
a child that writes straight to the same terminal, and waits for two events:

1. the child's server-info file, ``jpserver-<pid>.json`` in Jupyter's runtime folder, which the
   server writes once it listens; it holds the URL and the token (the one JupyterLab generated,
   or the one the user passed);
2. an answer from ``GET <url>api/status`` with that token (JupyterLab's event loop is running), and
   from ``lsp/status`` (its language-server extension, started after the loop, has logged its
   line): the lines JupyterLab prints while starting are out.

Then it prints one line: the URL of the first notebook with the token, and that notebook's name
(``labs/00_start_here.ipynb``, the Chinese edition's with ``--lang zh``, the course folder's in a
copy), after JupyterLab's own start-up lines and apart from them. Neither wait has a deadline: a
slow machine only makes the line come later, and if JupyterLab exits first (a port in use, a bad
flag) its own message says why and its exit status is this command's.

Ctrl-C reaches JupyterLab as it always did (the terminal sends it to both processes; JupyterLab
asks before it stops), so this process ignores it and waits; SIGTERM and SIGHUP are passed on. On
Linux the child also asks the kernel for a SIGTERM when this process dies (``PR_SET_PDEATHSIG``), so
a ``kill -9`` of ``mcplab lab`` stops JupyterLab too, as it did when the command exec'd it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from mcplab.i18n import LANGUAGES, _, normalize

FIRST = "00_start_here.ipynb"
POLL = 0.2  # seconds between two looks at the runtime folder or two status requests: a poll, not a deadline
PASSED_ON = ("SIGTERM", "SIGHUP")
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def first_notebook(folder: Path, code: str | None) -> Path | None:
    """The first lab of the language's edition under ``folder`` (labs/ itself, or a course copy)."""
    edition = LANGUAGES[normalize(code or "en")][1]
    for labs in (folder, folder / "labs"):
        first = labs / edition / FIRST if edition else labs / FIRST
        if first.is_file():
            return first
    return None


def closing_line(info: dict, folder: Path, first: Path | None) -> str:
    """``mcplab: JupyterLab is ready: open URL to start with labs/00_start_here.ipynb``."""
    token = str(info.get("token") or "")
    query = "?" + urllib.parse.urlencode({"token": token}) if token else ""
    base = str(info["url"]).rstrip("/") + "/"
    if first is None:
        return _("mcplab: JupyterLab is ready: open {url}", url=f"{base}lab{query}")
    relative = urllib.parse.quote(first.relative_to(folder).as_posix())
    return _("mcplab: JupyterLab is ready: open {url} to start with {notebook}", url=f"{base}lab/tree/{relative}{query}",
             notebook=_shown(first, folder))


def _shown(first: Path, folder: Path) -> str:
    """``labs/00_start_here.ipynb`` in a clone, ``~/mcplab-course/labs/00_start_here.ipynb`` in a copy."""
    if folder.name == "labs":
        return first.relative_to(folder.parent).as_posix()
    home = Path.home().resolve()  # as the folder is
    return f"~/{first.relative_to(home).as_posix()}" if home in first.parents else str(first)


def _server_info(runtime: Path, pid: int, folder: Path, since: float) -> dict | None:
    """The child's ``jpserver-<pid>.json``; else one written since it started for the same folder (a launcher
    that runs Python as a grandchild, as on Windows, has another pid)."""
    named = runtime / f"jpserver-{pid}.json"
    candidates = [named] if named.is_file() else sorted(runtime.glob("jpserver-*.json"))
    for path in candidates:
        try:
            if path != named and path.stat().st_mtime < since:
                continue
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # gone, or still being written: the next look reads it whole
        if isinstance(info, dict) and "url" in info and (path == named or Path(str(info.get("root_dir"))) == folder):
            return info
    return None


def _answers(info: dict) -> bool:
    """Does the server answer, with every start-up line printed? ``lsp/status`` answers only once the
    language-server extension has looked for servers, the last thing JupyterLab logs as it starts (its
    "Skipped non-installed server(s)" line); without that extension it is a 404, which is an answer too."""
    base = str(info["url"]).rstrip("/") + "/"
    for path, missing_ok in (("api/status", False), ("lsp/status", True)):
        request = urllib.request.Request(base + path, headers={"Authorization": f"token {info.get('token') or ''}"})
        try:
            with urllib.request.urlopen(request, timeout=5) as reply:
                if reply.status != 200:
                    return False
        except urllib.error.HTTPError as error:
            if not (missing_ok and error.code == 404):
                return False
        except OSError:
            return False  # not listening yet, or too slow to answer this time: the next poll asks again
    return True


def wait_until_ready(child: subprocess.Popen, folder: Path, since: float) -> dict | None:
    """The server info once JupyterLab answers; None if it exited first."""
    from jupyter_core.paths import jupyter_runtime_dir

    runtime = Path(jupyter_runtime_dir())
    info = None
    while child.poll() is None:
        info = info or _server_info(runtime, child.pid, folder, since)
        if info is not None and _answers(info):
            return info
        time.sleep(POLL)
    return None


def _end_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent dies, however it dies (Linux only)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def run(argv: list[str], folder: Path, code: str | None) -> int:
    """Start JupyterLab (``argv``) on ``folder``, say where to begin once it answers, wait for it to end."""
    folder = folder.resolve()
    print(_("mcplab: starting JupyterLab on {folder} …", folder=folder), flush=True)
    since = time.time() - 1  # file times may be a little behind the clock
    child = subprocess.Popen(argv, preexec_fn=_end_with_parent if sys.platform.startswith("linux") else None)
    # Ctrl-C goes to the whole foreground group: JupyterLab handles it (it asks first); this process waits.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in PASSED_ON:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), lambda number, frame: child.send_signal(number))
    info = wait_until_ready(child, folder, since)
    if info is not None:
        print("\n" + closing_line(info, folder, first_notebook(folder, code)), flush=True)
    return child.wait()
