"""``python -m mcplab setup``: what ``make lab`` does, without make: a virtual environment in the
checkout, the pinned packages, the official schemas, then JupyterLab.

Theory of operation
-------------------
A class of thirty installs at once, on whatever machines they brought, so the set-up is fast and
the same for everyone:

1. ``.venv`` beside the checkout, made by the Python that runs this command (3.10 to 3.13, the
   range the suite was run on);
2. uv installs the package with an extra (``lab`` by default) pinned by ``constraints.txt``, so every
   student gets the same versions on the same day. uv is used from PATH when it is there; otherwise
   it is installed from PyPI into the new environment first; when that fails too (no wheel for this
   machine, a proxy that only lets pip through), plain pip installs the same pins, only slower.
   Both leave the packages' bytecode compiled (uv when asked with ``--compile-bytecode``, pip by
   default), and the checkout's own ``mcplab/`` is compiled after them (an editable install is not
   in site-packages, so neither installer compiles it): the first start of the lab, of a kernel and
   of each server then reads bytecode instead of compiling every module it imports, which matters
   where Python may not write its cache (``PYTHONDONTWRITEBYTECODE``, a shared read-only install);
3. ``mcplab schemas`` fetches the official schemas for the trace viewer's badges; offline it says so
   in one sentence and the set-up goes on, since nothing else needs them;
4. ``mcplab lab`` opens JupyterLab (``--no-lab`` stops before; other flags go to JupyterLab).

Each step says what it is about to do before it starts, so a slow one never looks like a hang;
:mod:`mcplab.lab` then says when JupyterLab is ready and where to begin.

Installed from a wheel (pip, pipx, uv) there is no checkout and nothing to install: the wheel's
install was steps 1 and 2, so ``mcplab setup`` fetches the schemas and opens the lab, which copies
the course into a folder of the student's own (:mod:`mcplab.course`).

Step 2 is skipped when ``.venv/.<extra>-installed`` holds the fingerprint of ``pyproject.toml``,
``constraints.txt`` and the extra: running the command again only opens the lab. The Makefile calls
this module, so ``make lab`` and ``python -m mcplab setup`` cannot drift apart. This module runs on
the bare interpreter before anything is installed: it uses the standard library only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from mcplab.i18n import _  # the standard library's gettext underneath: usable before anything is installed

REPO = Path(__file__).resolve().parent.parent
CONSTRAINTS = "constraints.txt"
EXTRAS = ("lab", "test", "dev", "site")
PYTHONS = ((3, 10), (3, 13))  # the oldest and newest Python the whole suite ran on (README, "Tested on")
PAGE_PYTHON = (3, 14)  # the browser edition's (Pyodide): the package allows it, the desktop set-up does not yet
Say = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    """Where and what to install: the checkout, its environment and the extra."""
    root: Path
    venv: Path
    extra: str

    @property
    def python(self) -> Path:
        return self.venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    @property
    def stamp(self) -> Path:
        return self.venv / f".{self.extra}-installed"

    def script(self, name: str) -> Path:
        return self.venv / ("Scripts" if os.name == "nt" else "bin") / (name + (".exe" if os.name == "nt" else ""))

    def fingerprint(self) -> str:
        digest = hashlib.sha256(self.extra.encode())
        for name in ("pyproject.toml", CONSTRAINTS):
            digest.update((self.root / name).read_bytes())
        return digest.hexdigest()

    def up_to_date(self) -> bool:
        return self.python.is_file() and self.stamp.is_file() and self.stamp.read_text().strip() == self.fingerprint()


def _run(argv: Sequence[str | Path], **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], check=False, **kwargs)  # type: ignore[call-overload]


def create_venv(plan: Plan, uv: str | None, say: Say) -> None:
    """``uv venv --seed`` (pip included, for the fallback and a notebook's %pip), else ``python -m venv``."""
    say(_("creating the environment {venv} …", venv=plan.venv.name))
    started = time.monotonic()
    if uv and _run([uv, "venv", "--quiet", "--seed", "--python", sys.executable, plan.venv]).returncode == 0:
        say(_("created {venv} with uv ({seconds:.1f} s)", venv=plan.venv.name, seconds=time.monotonic() - started))
        return
    made = _run([sys.executable, "-m", "venv", plan.venv])
    if made.returncode:
        raise SystemExit(_("mcplab setup: `{python} -m venv {venv}` failed; on Debian and Ubuntu install "
                           "python3-venv first", python=sys.executable, venv=plan.venv))
    say(_("created {venv} with python -m venv ({seconds:.1f} s)", venv=plan.venv.name,
          seconds=time.monotonic() - started))


def find_uv(plan: Plan, say: Say) -> str | None:
    """uv from PATH, else from the environment, else installed there from PyPI; None when that fails."""
    for candidate in (shutil.which("uv"), plan.script("uv")):
        if candidate and Path(candidate).is_file():
            return str(candidate)
    if not plan.python.is_file():
        return None
    say(_("uv is not on PATH: installing it from PyPI into the environment"))
    fetched = _run([plan.python, "-m", "pip", "install", "--quiet", "uv"], capture_output=True, text=True)
    if fetched.returncode == 0 and plan.script("uv").is_file():
        return str(plan.script("uv"))
    say(_("could not install uv ({why}); using pip", why=(fetched.stderr.strip().splitlines() or ["no output"])[-1]))
    return None


def install(plan: Plan, uv: str | None, say: Say) -> str:
    """Install the checkout (editable) with its extra, pinned by constraints.txt, bytecode compiled; the
    installer used."""
    target = [f"--editable={plan.root}[{plan.extra}]", "--constraint", plan.root / CONSTRAINTS]
    extra = f".[{plan.extra}]"
    say(_("installing {extra} as {constraints} pins it, and compiling its bytecode …", extra=extra,
          constraints=CONSTRAINTS))
    started = time.monotonic()
    if uv:
        done = _run([uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", plan.python, *target])
        if done.returncode == 0:
            say(_("installed {extra} from {constraints} with uv ({seconds:.1f} s)", extra=extra,
                  constraints=CONSTRAINTS, seconds=time.monotonic() - started))
            compile_checkout(plan)
            return "uv"
        say(_("uv could not install the packages; trying pip"))
    done = _run([plan.python, "-m", "pip", "install", "--quiet", *target])  # pip compiles unless told --no-compile
    if done.returncode:
        raise SystemExit(_("mcplab setup: installing {extra} failed (see pip's message above)", extra=extra))
    say(_("installed {extra} from {constraints} with pip ({seconds:.1f} s)", extra=extra, constraints=CONSTRAINTS,
          seconds=time.monotonic() - started))
    compile_checkout(plan)
    return "pip"


def compile_checkout(plan: Plan) -> None:
    """The bytecode of the checkout's package, which the installers leave alone (it is not in site-packages).

    Quiet and best effort: a file that does not compile fails where it is imported, with a better message.
    """
    _run([plan.python, "-m", "compileall", "-q", "-j", "0", plan.root / "mcplab"], stdout=subprocess.DEVNULL)


def setup(root: Path = REPO, *, extra: str = "lab", venv: Path | None = None, say: Say = print) -> Plan:
    """Steps 1–3 of the module docstring; the plan, whose ``python`` then runs the lab."""
    oldest, newest = (".".join(map(str, v)) for v in PYTHONS)
    if not PYTHONS[0] <= sys.version_info[:2] <= PYTHONS[1]:
        raise SystemExit(f"mcplab is tested on Python {oldest} to {newest}; this is {sys.version.split()[0]}. "
                         f"Run it with one of those, e.g. python{newest} -m mcplab setup (or make lab "
                         f"PYTHON=python{newest})")
    if extra not in EXTRAS:
        raise SystemExit(f"mcplab setup: --extra must be one of {', '.join(EXTRAS)}, got {extra!r}")
    if not (root / CONSTRAINTS).is_file():
        raise SystemExit(f"mcplab setup: {CONSTRAINTS} is missing from {root}; run it from a checkout")
    plan = Plan(root, venv or root / ".venv", extra)
    if plan.up_to_date():
        say(_("{venv} already has {extra} as {constraints} pins it", venv=plan.venv.name, extra=f".[{extra}]",
              constraints=CONSTRAINTS))
        plan.stamp.touch()  # make compares its date with pyproject.toml's
    else:
        uv = shutil.which("uv")
        if not plan.python.is_file():
            create_venv(plan, uv, say)
        install(plan, uv or find_uv(plan, say), say)
        plan.stamp.write_text(plan.fingerprint() + "\n")
    # Offline this prints its one sentence and fails; the lab works without the badges, so go on.
    say(_("fetching the official MCP schemas for the trace viewer's badges …"))
    _run([plan.python, "-m", "mcplab.cli", "schemas"])
    return plan


def from_wheel(extra: str = "lab", *, say: Say = print) -> Path:
    """Step 3 alone, where mcplab was installed from a wheel; the Python that runs the lab."""
    if extra != "lab":
        raise SystemExit(_("mcplab setup: --extra {extra} installs into a clone's .venv, and this mcplab was installed "
                           "from a wheel; add the extra where it is installed: pip install \"mcplab[{extra}]\"",
                           extra=extra))
    say(_("mcplab is installed from a wheel in {prefix}: nothing to create or install", prefix=sys.prefix))
    say(_("fetching the official MCP schemas for the trace viewer's badges …"))
    _run([sys.executable, "-m", "mcplab.cli", "schemas"])
    return Path(sys.executable)


def main(args: Sequence[str], *, extra: str = "lab", open_lab: bool = True) -> int:
    """``mcplab setup``: set up, then (unless told not to) replace this process with ``mcplab lab ARGS``."""
    from mcplab import course  # the standard library only, like this module

    python = setup(extra=extra).python if course.is_checkout() else from_wheel(extra)
    if not open_lab:
        return 0
    argv = [str(python), "-m", "mcplab.cli", "lab", *args]
    sys.stdout.flush()  # exec replaces the process, and with it whatever print() still buffers (a pipe)
    if os.name == "nt":  # no exec on Windows: run it and hand back its status
        return _run(argv).returncode
    os.execv(argv[0], argv)
    return 0  # not reached
