"""Installing mcplab the ways a user will: the version written once, every dependency pinned in
constraints.txt within the bounds pyproject.toml states, ``python -m mcplab setup`` on a fresh copy
(uv, the pins, the schemas, then nothing to do), and pytest without nbval."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

import mcplab
from conftest import ROOT, need
from mcplab import install, lifecycle

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest itself depends on tomli before 3.11
    import tomli as tomllib

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def pins() -> dict[str, list[tuple[Version, str]]]:
    """constraints.txt: package name → [(version, environment marker)], one per line that pins it."""
    found: dict[str, list[tuple[Version, str]]] = {}
    for line in (ROOT / install.CONSTRAINTS).read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            requirement = Requirement(line)
            (version,) = [spec.version for spec in requirement.specifier]
            found.setdefault(requirement.name.lower(), []).append((Version(version), str(requirement.marker or "")))
    return found


def test_the_version_is_written_once_and_read_everywhere():
    assert PYPROJECT["project"]["dynamic"] == ["version"] and "version" not in PYPROJECT["project"]
    assert PYPROJECT["tool"]["hatch"]["version"]["path"] == "mcplab/__init__.py"
    assert importlib.metadata.version("mcplab") == mcplab.__version__
    assert lifecycle.CLIENT_INFO["version"] == mcplab.__version__
    from mcplab.transports.http import USER_AGENT
    assert USER_AGENT == f"mcplab/{mcplab.__version__}"
    written = [p for p in (ROOT / "mcplab").rglob("*.py") if re.search(r"^__version__\s*=", p.read_text(), re.M)]
    assert written == [ROOT / "mcplab" / "__init__.py"]


def test_every_dependency_of_every_extra_is_pinned_within_its_stated_bounds():
    pinned = pins()
    wanted = [*PYPROJECT["project"]["dependencies"]]
    for extra, requirements in PYPROJECT["project"]["optional-dependencies"].items():
        wanted += [r for r in requirements if not r.startswith("mcplab[")]
    problems = []
    for text in wanted:
        requirement = Requirement(text)
        lines = pinned.get(requirement.name.lower())
        if not lines:
            problems.append(f"{requirement.name} is not in {install.CONSTRAINTS}")
        problems += [f"{requirement.name}=={version} ({marker or 'all'}) is outside {requirement.specifier}"
                     for version, marker in lines or [] if version not in requirement.specifier]
    assert problems == []


@pytest.mark.parametrize("tested", [((99, 0), (99, 9)), ((2, 0), (2, 7))], ids=["too old", "too new"])
def test_an_interpreter_outside_the_tested_range_is_refused_with_the_range(monkeypatch, tmp_path, tested):
    monkeypatch.setattr(install, "PYTHONS", tested)
    low, high = (f"{major}.{minor}" for major, minor in tested)
    with pytest.raises(SystemExit, match=rf"mcplab is tested on Python {low} to {high}; this is 3\.\d+\.\d+"):
        install.setup(tmp_path)


def test_the_tested_range_is_the_one_pyproject_requires():
    """pyproject allows the desktop range and the browser edition's Python (tests/test_pyodide.py)."""
    low, high = install.PYTHONS[0], max(install.PYTHONS[1], install.PAGE_PYTHON)
    assert PYPROJECT["project"]["requires-python"] == f">={low[0]}.{low[1]},<{high[0]}.{high[1] + 1}"
    classifiers = {c for c in PYPROJECT["project"]["classifiers"] if c.startswith("Programming Language :: Python :: ")}
    assert classifiers == {f"Programming Language :: Python :: 3.{minor}" for minor in range(low[1], high[1] + 1)}


def test_pytest_without_nbval_still_runs_the_python_tests():
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:nbval", "-p", "no:cacheprovider", "-q",
                           "tests/test_framing.py", "labs"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"\d+ passed", done.stdout) and ".ipynb" not in done.stdout


def test_without_uv_and_without_an_index_setup_says_it_falls_back_to_pip(tmp_path, monkeypatch):
    plan = install.Plan(tmp_path, tmp_path / "venv", "lab")
    subprocess.run([sys.executable, "-m", "venv", str(plan.venv)], check=True, timeout=120)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no uv on it
    for name in [key for key in os.environ if key.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # nor in any index or wheel folder pip knows of
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    said: list[str] = []
    assert install.find_uv(plan, said.append) is None
    assert said[0] == "uv is not on PATH: installing it from PyPI into the environment"
    assert said[-1].startswith("could not install uv (") and said[-1].endswith("); using pip")
    assert not plan.script("uv").exists()


@pytest.mark.subprocess
def test_setup_on_a_fresh_copy_installs_the_pins_fetches_the_schemas_then_has_nothing_to_do(tmp_path):
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    need(uv is not None, "uv is not installed (make test puts it in .venv)")
    copy = tmp_path / "course" / "mcplab"  # no ../shared beside it
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("MCPLAB_", "VIRTUAL_ENV"))}
    env.update(PATH=f"{Path(uv).parent}{os.pathsep}/usr/bin:/bin", XDG_CACHE_HOME=str(tmp_path / "cache"),
               MCPLAB_SCHEMA_URL="http://127.0.0.1:9/schema")  # offline, as far as the schemas go
    first = subprocess.run([sys.executable, "-m", "mcplab", "setup", "--no-lab"], cwd=copy, env=env,
                           capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "created .venv with uv" in first.stdout and "installed .[lab] from constraints.txt with uv" in first.stdout
    said = [line for line in first.stdout.splitlines() if line.endswith(" …")]  # each step said before it began
    assert said == ["creating the environment .venv …",
                    "installing .[lab] as constraints.txt pins it, and compiling its bytecode …",
                    "fetching the official MCP schemas for the trace viewer's badges …"], first.stdout
    assert "badges stay off" in first.stderr  # the one offline sentence, and the set-up went on
    venv_python = copy / ".venv" / "bin" / "python"
    # Bytecode compiled at install, though this machine may set PYTHONDONTWRITEBYTECODE: the packages' (uv's
    # --compile-bytecode) and the checkout's own package (an editable install, which no installer compiles).
    tag = sys.implementation.cache_tag
    site = next((copy / ".venv" / "lib").glob("python3.*/site-packages"))
    for module in ("jupyterlab/__pycache__/labapp", "anyio/__pycache__/__init__", "matplotlib/__pycache__/pyplot"):
        assert (site / f"{module}.{tag}.pyc").is_file(), module
    assert (copy / "mcplab" / "__pycache__" / f"cli.{tag}.pyc").is_file()
    assert (copy / "mcplab" / "wire" / "__pycache__" / f"jsonrpc.{tag}.pyc").is_file()
    listed = subprocess.run([uv, "pip", "freeze", "--python", str(venv_python)], capture_output=True, text=True,
                            check=True).stdout
    installed = dict(line.split("==") for line in listed.splitlines() if "==" in line)
    for name in ("anyio", "httpx", "jupyterlab", "ipywidgets", "matplotlib", "platformdirs"):
        assert any(str(version) == installed[name] for version, _ in pins()[name]), (name, installed[name])
    second = subprocess.run([sys.executable, "-m", "mcplab", "setup", "--no-lab"], cwd=copy, env=env,
                            capture_output=True, text=True, timeout=120)
    assert second.returncode == 0 and ".venv already has .[lab] as constraints.txt pins it" in second.stdout
    assert "installed" not in second.stdout
