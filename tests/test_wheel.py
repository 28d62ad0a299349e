"""A built wheel gives the whole course: build it, install it into a fresh venv outside the clone, run
``mcplab demo``, ``mcplab serve weather`` with a real handshake, ``mcplab inspect --server``, and the
copy step twice (the second run keeps an edited notebook), and check nothing was written into
site-packages.

One test, because the build and the install are most of its time (a few seconds with uv's cache)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import need

pytestmark = pytest.mark.subprocess
ROOT = Path(__file__).resolve().parent.parent
LATEST = "2025-11-25"


def _uv() -> list[str]:
    if importlib.util.find_spec("uv") is not None:  # the test extra installs it into the venv
        return [sys.executable, "-m", "uv"]
    found = shutil.which("uv")
    need(found is not None, "uv is not installed (pip install uv, or the test extra)")
    return [str(found)]


def _run(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, capture_output=True, text=True, encoding="utf-8", timeout=180, **kwargs)
    assert done.returncode == 0, f"{argv[:4]} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _handshake(mcplab: Path, env: dict[str, str], cwd: Path) -> list[dict]:
    """initialize → result → notifications/initialized → tools/list, over the pipes of `mcplab serve weather`."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": LATEST, "capabilities": {},
                         "clientInfo": {"name": "wheel-test", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    done = subprocess.run([str(mcplab), "serve", "weather"], input="".join(json.dumps(m) + "\n" for m in lines),
                          capture_output=True, text=True, encoding="utf-8", env=env, cwd=cwd, timeout=30)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_wheel_installs_outside_the_clone_and_gives_the_whole_course(tmp_path):
    uv = _uv()
    dist, venv, home, elsewhere = (tmp_path / name for name in ("dist", "venv", "home", "elsewhere"))
    home.mkdir()
    elsewhere.mkdir()
    _run([*uv, "build", "--wheel", "--quiet", "--out-dir", str(dist), str(ROOT)])
    wheel, = dist.glob("mcplab-*.whl")
    with zipfile.ZipFile(wheel) as archive:  # the wheel ships no bytecode cache, whatever the checkout holds
        assert not [n for n in archive.namelist() if "__pycache__" in n or n.endswith(".pyc")]
    _run([*uv, "venv", "--quiet", "--python", sys.executable, str(venv)])
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    # Compiled as pip compiles by default: the installer writes the course's own .py files' cache too.
    _run([*uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(python), str(wheel)])
    mcplab = python.with_name("mcplab")
    # A student's shell: the venv's scripts first, a home of its own, nothing of this clone on any path.
    env = {"PATH": os.pathsep.join([str(python.parent), "/usr/bin", "/bin"]), "HOME": str(home),
           "SYSTEMROOT": os.environ.get("SYSTEMROOT", ""), "NO_COLOR": "1"}

    located = _run([str(python), "-c", "import mcplab, mcplab.course as c; print(mcplab.__file__); "
                                       "print(c.root()); print(c.is_checkout())"], env=env, cwd=elsewhere)
    package, course_root, checkout = located.stdout.split("\n")[:3]
    assert Path(package).is_relative_to(venv) and Path(course_root) == Path(package).parent / "_course"
    assert checkout == "False"
    installed = Path(course_root)
    before = _snapshot(installed)
    cache = {k for k in before if "__pycache__/" in k}
    assert "servers/samples/src/__pycache__/greet.cpython-%d%d.pyc" % sys.version_info[:2] in cache
    course = {k: v for k, v in before.items() if k not in cache}  # what the copy takes: not the interpreter's cache
    assert {"servers/weather.py", "servers/files.py", "servers/conformance.py", "servers/samples/notes.md",
            "labs/00_start_here.ipynb", "labs/nbval-sanitize.cfg",
            "labs/solutions/01_jsonrpc_solutions.ipynb", "labs/zh-CN/00_start_here.ipynb",
            "labs/zh-CN/solutions/01_jsonrpc_solutions.ipynb", "labs/zh-CN/术语表.md"} <= set(before)
    assert (Path(package).parent / "i18n" / "locale" / "zh_CN" / "LC_MESSAGES" / "mcplab.mo").is_file()

    # The tour runs alongside the rest: it is the slowest part.
    tour = subprocess.Popen([str(mcplab), "demo", "--no-color"], env=env, cwd=elsewhere, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, encoding="utf-8")
    try:
        replies = _handshake(mcplab, env, elsewhere)
        assert [r.get("id") for r in replies] == [1, 2]
        assert replies[0]["result"]["protocolVersion"] == LATEST
        assert replies[0]["result"]["serverInfo"]["name"] == "weather"
        assert {"get_weather", "get_forecast"} <= {t["name"] for t in replies[1]["result"]["tools"]}

        inspected = _run([str(mcplab), "inspect", "--server", "files", "--era", "legacy", "--no-trace"],
                         env=env, cwd=elsewhere).stdout
        assert "server        files" in inspected and "notes.md" in inspected  # the samples the wheel carries
        assert "src/greet.py" in inspected and "__pycache__" not in inspected and ".pyc" not in inspected

        first = _run([str(mcplab), "lab", "--copy-only"], env=env, cwd=elsewhere)
        copy = home / "mcplab-course"
        assert f"copied the course into ~{os.sep}mcplab-course ({len(course)} files)" in first.stderr
        assert {k: v for k, v in _snapshot(copy).items() if k != ".mcplab-course.json"} == course

        # The copy is what the notebooks expect: from labs/, ../servers/weather.py answers.
        from_labs = _run([str(mcplab), "inspect", "--stdio", "python ../servers/weather.py", "--era", "legacy",
                          "--no-trace"], env=env, cwd=copy / "labs").stdout
        assert "server        weather" in from_labs

        notebook = copy / "labs" / "02_handshake.ipynb"
        edited = json.loads(notebook.read_text(encoding="utf-8"))
        edited["cells"][0]["source"] = ["my own notes\n"]
        notebook.write_text(json.dumps(edited), encoding="utf-8")
        second = _run([str(mcplab), "lab", "--copy-only"], env=env, cwd=elsewhere)
        assert "kept your changes to 1 file" in second.stderr and "labs/02_handshake.ipynb" in second.stderr
        assert f"{len(course) - 1} files unchanged" in second.stderr
        assert json.loads(notebook.read_text(encoding="utf-8"))["cells"][0]["source"] == ["my own notes\n"]

        chinese = _run([str(mcplab), "demo", "--lang", "zh", "--step", "1", "--no-color"], env=env, cwd=elsewhere)
        assert "JSON-RPC 2.0：请求、响应、错误、通知" in chinese.stdout  # the catalog ships in the wheel

        no_lab = subprocess.run([str(mcplab), "lab"], env=env, cwd=elsewhere, capture_output=True, text=True)
        assert no_lab.returncode == 1 and "pip install 'mcplab[lab]'" in no_lab.stderr

        # `mcplab setup`, offered by --help, works here too: the wheel's install was the set-up, the schemas are left.
        offline = {**env, "MCPLAB_SCHEMA_URL": "http://127.0.0.1:9/schema"}
        set_up = _run([str(mcplab), "setup", "--no-lab"], env=offline, cwd=elsewhere)
        assert f"mcplab is installed from a wheel in {venv}: nothing to create or install" in set_up.stdout
        assert "badges stay off" in set_up.stderr and not (elsewhere / ".venv").exists()
        other = subprocess.run([str(mcplab), "setup", "--extra", "test", "--no-lab"], env=offline, cwd=elsewhere,
                               capture_output=True, text=True)
        assert other.returncode == 1 and 'pip install "mcplab[test]"' in other.stderr, other.stderr

        out, err = tour.communicate(timeout=120)
    finally:
        if tour.poll() is None:
            tour.kill()
            tour.wait()
    assert tour.returncode == 0, err
    assert "6 steps in" in out and "every server stopped" in out
    for wire in ('"method":"initialize"', "'..' is not allowed in a path", "HTTP/1.1 200 OK", "server/discover"):
        assert wire in out, wire
    assert _snapshot(installed) == before, "something wrote into site-packages"
