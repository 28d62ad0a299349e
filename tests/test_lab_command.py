"""`mcplab lab` (what `make lab` runs) really starts JupyterLab on labs/, or on a copy of the course
with --dir: start it headless, ask it over HTTP what it serves, stop it."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from browser_helpers import stop_process

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.subprocess


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("copy", [False, True], ids=["labs-in-place", "a-copy-with---dir"])
def test_mcplab_lab_serves_the_labs_folder(tmp_path, copy):
    port = _free_port()
    course = tmp_path / "my course"
    where = ["--dir", str(course)] if copy else []
    env = dict(os.environ)
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[name] = str(tmp_path / name.lower())
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcplab.cli", "lab", *where, "--no-browser", "--ip=127.0.0.1",
         f"--port={port}", "--ServerApp.token=", "--ServerApp.port_retries=0"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        status = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents", timeout=2) as reply:
                    status = reply.status
                    listing = json.load(reply)
                    break
            except OSError:
                time.sleep(0.3)
        assert status == 200, proc.stderr.read().decode(errors="replace")[-2000:] if proc.poll() is not None else "no answer"
        names = {item["name"] for item in listing["content"]}
        if copy:  # the root it serves is the copy, with the two folders side by side
            assert {"labs", "servers"} <= names and (course / "labs" / "00_start_here.ipynb").is_file()
        else:
            assert "nbval-sanitize.cfg" in names  # the root it serves is labs/ itself
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab", timeout=5) as reply:
            assert reply.status == 200
            assert b"JupyterLab" in reply.read()
    finally:
        stop_process(proc)
    told = proc.stderr.read().decode(errors="replace")
    assert ("copied the course into" in told) == copy


CLOSING = re.compile(r"^mcplab: \S.* (?P<url>http://[!-~]+)")  # the URL ends where ASCII does (Chinese punctuation)


@pytest.mark.parametrize("lang, copy, first", [("en", False, "labs/00_start_here.ipynb"),
                                               ("zh", True, "labs/zh-CN/00_start_here.ipynb")],
                         ids=["english-in-place", "chinese-in-a-copy"])
def test_mcplab_lab_ends_its_start_up_with_one_line_the_url_with_its_token_and_the_first_notebook(tmp_path, lang,
                                                                                                  copy, first):
    port = _free_port()
    course = tmp_path / "course"
    env = dict(os.environ, HOME=str(tmp_path))
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[name] = str(tmp_path / name.lower())
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env.pop("MCPLAB_LANG", None)
    where = ["--dir", str(course)] if copy else []
    # JupyterLab makes up the token, as it does for a student: the line must carry the one it made.
    proc = subprocess.Popen([sys.executable, "-m", "mcplab.cli", "lab", *where, "--lang", lang, "--no-browser",
                             "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            encoding="utf-8")
    lines: list[str] = []
    try:
        for line in proc.stdout:  # JupyterLab's log and ours, in the order the terminal shows them
            lines.append(line.rstrip("\n"))
            if CLOSING.match(line):
                break
        found = CLOSING.match(lines[-1]) if lines else None
        assert found, "\n".join(lines[-30:])
        url = found["url"]
        ours = [i for i, line in enumerate(lines) if line.startswith("mcplab: ")]
        theirs = [i for i, line in enumerate(lines) if line.startswith("[I ")]  # JupyterLab's log
        # said what it was starting before JupyterLab's first line, then nothing until the closing line
        assert ours[-2:] == [ours[-2], len(lines) - 1] and ours[-2] < theirs[0] and "JupyterLab" in lines[ours[-2]]
        assert len(ours) == (3 if copy else 2)  # and before it, in a copy, the copy's report
        running = [i for i, line in enumerate(lines) if "is running at:" in line]
        assert running and running[0] < len(lines) - 1  # after JupyterLab's own start-up lines
        assert lines[-2] == ""  # apart from them
        place = course if copy else ROOT
        assert (" ~/course/" + first if copy else " " + first) in lines[-1]
        assert ("已就绪" in lines[-1]) == (lang == "zh")  # in the language asked for
        parts = urllib.parse.urlsplit(url)
        token = urllib.parse.parse_qs(parts.query)["token"][0]
        assert parts.netloc == f"127.0.0.1:{port}" and len(token) >= 32
        served = first if copy else first.removeprefix("labs/")
        assert parts.path == f"/lab/tree/{served}" and (place / first).is_file()
        with urllib.request.urlopen(url, timeout=30) as reply:  # the line's URL, as a student pastes it
            assert reply.status == 200 and b"JupyterLab" in reply.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents/{served}?content=0&token={token}",
                                    timeout=30) as reply:
            assert json.load(reply)["type"] == "notebook"
        with pytest.raises(urllib.error.HTTPError) as refused:  # the token is what lets it in
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents/{served}?content=0&token=x{token}",
                                   timeout=30)
        assert refused.value.code == 403
    finally:
        stop_process(proc)
    assert proc.returncode in (0, -15, 143), proc.returncode  # SIGTERM was passed on; JupyterLab stopped


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_jupyterlab_stops_when_mcplab_lab_is_killed_outright(tmp_path):
    port = _free_port()
    env = dict(os.environ, HOME=str(tmp_path))
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[name] = str(tmp_path / name.lower())
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "mcplab.cli", "lab", "--no-browser", "--ip=127.0.0.1",
                             f"--port={port}", "--ServerApp.port_retries=0"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
    try:
        for line in proc.stdout:
            if CLOSING.match(line):
                break
        assert proc.poll() is None, "mcplab lab ended before saying JupyterLab was ready"
        server = json.loads(next((tmp_path / "jupyter_runtime_dir").glob("jpserver-*.json")).read_text())
        assert server["pid"] != proc.pid  # JupyterLab is a child of its own
        proc.kill()  # SIGKILL: no handler of mcplab lab runs
        proc.wait()
        deadline = time.monotonic() + 120  # JupyterLab's own shutdown, on a loaded machine
        while time.monotonic() < deadline and _alive(server["pid"]):
            time.sleep(0.2)
        assert not _alive(server["pid"]), "JupyterLab outlived mcplab lab"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for this purpose (nobody here reaps an orphan adopted by init)
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
