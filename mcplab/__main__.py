"""``python -m mcplab ...`` is the ``mcplab`` command, e.g. ``python -m mcplab setup`` on a fresh checkout.

Theory of operation
-------------------
``python3 -m mcplab setup`` runs on the bare interpreter and puts mcplab's dependencies into the
checkout's ``.venv``, not into that interpreter; ``mcplab`` itself is then on no PATH until the
environment is activated. A student who goes on with ``python3 -m mcplab demo`` would meet a
``ModuleNotFoundError`` for anyio deep inside the command: instead, a dependency missing from the
running Python is one sentence, in the student's language, naming the command that works
(``.venv/bin/mcplab demo``, or activating the environment first), or the set-up when there is no
``.venv`` yet. A module of mcplab itself that is missing is a broken install, not this: it is raised.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from mcplab.cli import main

CHECKOUT = Path(__file__).resolve().parent.parent


def _shown(path: Path) -> str:
    """``path`` as the student would type it from here (relative when under the current folder)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def missing_dependency(module: str, args: list[str]) -> str:
    """The sentence that replaces the traceback when ``module`` is not installed in this Python."""
    from mcplab.i18n import _

    venv = CHECKOUT / ".venv"
    windows = os.name == "nt"
    mcplab = venv / ("Scripts/mcplab.exe" if windows else "bin/mcplab")
    words = shlex.join(args)
    if mcplab.is_file():
        activate = (_shown(venv / "Scripts" / "activate") if windows
                    else "source " + _shown(venv / "bin" / "activate"))
        return _("mcplab: this Python ({python}) does not have mcplab's dependencies ({module} is missing): they "
                 "are in .venv, so run {command}, or activate it first ({activate}) and then mcplab {args}.",
                 python=sys.executable, module=module, command=f"{_shown(mcplab)} {words}".strip(),
                 activate=activate, args=words)
    return _("mcplab: this Python ({python}) does not have mcplab's dependencies ({module} is missing): set "
             "them up first with {setup}, then run {command}.", python=sys.executable, module=module,
             setup="python3 -m mcplab setup --no-lab", command=f"{_shown(mcplab)} {words}".strip())


def run(argv: list[str]) -> int:
    try:
        return main(argv)
    except ModuleNotFoundError as exc:
        top = (exc.name or "").partition(".")[0]
        if not top or top == "mcplab":
            raise
        raise SystemExit(missing_dependency(top, argv)) from None


if __name__ == "__main__":  # importing the module (a tool walking the package) runs nothing
    raise SystemExit(run(sys.argv[1:]))
