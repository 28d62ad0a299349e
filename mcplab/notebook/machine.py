"""Cells that need a machine: ``%%machine WHAT`` on a cell's first line, the same in both places.

Theory of operation
-------------------
Some cells of the later labs need what only the local install has: processes of their own, a port,
the cryptography package, nginx, the official SDK. The browser edition (Pyodide, in a page) has none
of these, so such a cell opens with one line that says which it needs::

    %%machine processes
    server = subprocess.Popen(WEATHER, stdin=subprocess.PIPE, ...)

On a machine the line is blanked and the cell runs exactly as written: top-level ``await`` and the
last expression's display included, so its outputs are the ones it would give without the line. In
the page the body does not run at all; the cell prints one sentence saying what it needs and why
(:data:`NEEDS`, in the student's language). A key this module does not know is an error in both
places, naming the keys it knows, so a typo fails on the machine too.

The line is rewritten before IPython parses the cell (an input transformer, in IPython's cleanup
stage, which runs before cell magics are recognised), not by a cell magic: a magic receives the
body as text, and running text with top-level ``await`` from inside a cell that is itself running
is what IPython cannot do. ``import mcplab.notebook`` installs it in the kernel (every lab imports
``notebook`` in its first cell, as it does for ``rerun``); ``%load_ext mcplab.notebook.machine`` does too.
Each such cell also carries the cell tag ``needs-machine`` (:data:`TAG`), so tools and tests can find it
without reading code.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from mcplab.i18n import N_, _

__all__ = ["NEEDS", "TAG", "LINE", "UnknownNeed", "sentence", "rewrite", "install"]

TAG = "needs-machine"
LINE = re.compile(r"%%machine(?:[ \t]+(?P<what>\S.*?))?[ \t]*\r?\n?")
# what a cell may need → the one sentence the page prints in its place (looked up through _() at use)
NEEDS = {
    "processes": N_("Not run in the browser: this cell needs the local install, because it starts programs as "
                    "processes of their own, and a browser page can start no process."),
    "cryptography": N_("Not run in the browser: this cell needs the local install, because it needs the "
                       "cryptography package (TLS certificates, signed tokens), which has no build for the "
                       "browser."),
    "sdk": N_("Not run in the browser: this cell needs the local install, because it runs the official MCP SDK "
              "(the mcp package), which needs cryptography, and cryptography has no build for the browser."),
    "nginx": N_("Not run in the browser: this cell needs the local install, because it runs nginx, a program "
                "installed on the machine, which a browser page cannot start."),
}


class UnknownNeed(ValueError):
    """A ``%%machine`` line names no key of :data:`NEEDS` (or none at all)."""


def sentence(what: str) -> str:
    """The sentence the page prints for a cell that needs ``what``, in the current language."""
    if what not in NEEDS:
        raise UnknownNeed(f"%%machine expects one of {', '.join(NEEDS)}, got {what!r}")
    return _(NEEDS[what])


def rewrite(lines: list[str], *, in_browser: bool) -> list[str]:
    """A cell's lines as they should run here: unchanged without a ``%%machine`` first line; with one,
    the body (the line blanked, so line numbers stay) on a machine, one ``print`` of the sentence in the page.

    >>> rewrite(["%%machine processes\\n", "run()\\n"], in_browser=False)
    ['\\n', 'run()\\n']
    """
    found = LINE.fullmatch(lines[0]) if lines else None
    if not found:
        return lines
    what = (found["what"] or "").strip()
    said = sentence(what)  # checked in both places, so a wrong key fails on the machine too
    return [f"print({said!r})\n"] if in_browser else ["\n", *lines[1:]]


def install(shell: Any = None) -> bool:
    """Rewrite each cell's ``%%machine`` line in the running IPython shell (or ``shell``) from now on;
    nothing outside IPython. Idempotent. Whether the shell has it now."""
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
    stages = getattr(shell, "input_transformers_cleanup", None)
    if stages is None:
        return False
    if not any(getattr(stage, "mcplab_machine", False) for stage in stages):
        stages.append(_transform)
    return True


def _transform(lines: list[str]) -> list[str]:
    from IPython.core.error import UsageError

    from mcplab import place

    try:
        return rewrite(lines, in_browser=place.IN_BROWSER)
    except UnknownNeed as exc:  # the author's typo: one line, not a traceback into this module
        raise UsageError(str(exc)) from None


_transform.mcplab_machine = True  # type: ignore[attr-defined]  (what install looks for)
load_ipython_extension = install  # ``%load_ext mcplab.notebook.machine`` does the same
