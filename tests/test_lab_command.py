"""`mcplab lab` (what `make lab` runs) really starts JupyterLab on labs/, or on a copy of the course
with --dir: start it headless, ask it over HTTP what it serves, stop it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from browser_helpers import stop_process

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
