"""A classroom on JupyterHub, for real: the shipped deploy/jupyterhub/jupyterhub_config.py on 127.0.0.1
with its proxy, three students logged in through the REST API, each given the course by the start
command, each running Lab 02's cells in their own kernel at the same time; no cell over 15 s, and no
MCP server left behind when a kernel stops. (bench/classroom.py measures how far one machine goes.)"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, need

sys.path.insert(0, str(ROOT / "bench"))
import classroom  # noqa: E402  (bench/classroom.py: the students, shared with the measurement)
import classroom_hub as hubs  # noqa: E402  (bench/classroom_hub.py: JupyterHub, the students' processes)

pytestmark = [pytest.mark.subprocess, pytest.mark.http]
STUDENTS = 3
LAB = "labs/02_handshake.ipynb"
EXTRA = (  # cells each student runs after the lab's
    # A student who leaves a connection open when the kernel stops: its server must still go.
    'held = await Client(local(WEATHER)).connect()\nprint("held open:", held.server_info["name"])',
    # Its kernel talks to its server over Unix sockets in a folder only the student can open,
    # not over TCP ports on the loopback the class shares (a class opening kernels at once
    # took each other's ports). Jupyter adds the sticky bit (so no /tmp cleaner removes the sockets).
    "import json, os\nfrom ipykernel import get_connection_file\n"
    "with open(get_connection_file()) as f:\n    print('kernel transport:', json.load(f)['transport'])\n"
    "print('runtime folder mode:', oct(os.stat(os.path.dirname(get_connection_file())).st_mode & 0o777))")


async def _processes_settle(hub: hubs.Hub, name: str, expected: int, within: float) -> int:
    deadline = time.monotonic() + within
    while True:
        count = hubs.by_student(hub.mark).get(name, {}).get("processes", 0)
        if count == expected or time.monotonic() > deadline:
            return count
        await asyncio.sleep(0.2)


async def _classroom(hub: hubs.Hub) -> None:
    names = [f"student{i}" for i in range(STUDENTS)]
    async with hub.client() as client:
        await asyncio.gather(*(classroom.start_student(client, name) for name in names))
        for name in names:  # the start command copied the course into each student's own home
            home = hub.work / "home" / name / "mcplab-course"
            assert (home / LAB).is_file() and (home / "servers" / "weather.py").is_file()
            listing = (await client.get(f"/user/{name}/api/contents")).json()
            assert {"labs", "servers"} <= {item["name"] for item in listing["content"]}, listing

        runs = await asyncio.gather(*(classroom.run_lab(hub, client, name, LAB, EXTRA, stop=False)
                                      for name in names))
        for run in runs:
            assert run.errors == [], (run.student, run.errors)
            slowest = max(run.cell_seconds)
            assert slowest < classroom.CELL_BUDGET, f"{run.student}: a cell took {slowest:.1f} s"
            printed = "".join(run.outputs)
            assert "agreed version:      2024-11-05" in printed and "held open: weather" in printed
            assert "kernel transport: ipc" in printed and "runtime folder mode: 0o700" in printed, printed[-300:]

        before = hubs.by_student(hub.mark)
        for name in names:  # the single-user server, the kernel, and the weather server held open
            assert before[name]["processes"] >= 3 and before[name]["mcp_servers"] >= 1, before[name]
        sessions = {name: (await client.get(f"/user/{name}/api/sessions")).json() for name in names}
        for name, opened in sessions.items():
            assert len(opened) == 1, opened
            reply = await client.delete(f"/user/{name}/api/sessions/{opened[0]['id']}")
            assert reply.status_code == 204
        for name in names:  # only the single-user server stays: the kernel and its MCP server are gone
            assert await _processes_settle(hub, name, 1, within=15) == 1, hubs.by_student(hub.mark)


def test_three_students_run_a_lab_at_once_on_jupyterhub(tmp_path):
    need(importlib.util.find_spec("jupyterhub") is not None, "JupyterHub is not installed (the test extra has it)")
    proxy = hubs.proxy_command()
    need(proxy is not None, "configurable-http-proxy is not installed (make test puts it in .node/)")
    work = Path(tmp_path)
    with hubs.Hub(work, proxy) as hub:
        try:
            asyncio.run(_classroom(hub))
        except BaseException:
            print(hub.log_tail())
            raise
        left = hub.stop()
    assert left == [], "processes left behind after the hub stopped"


HUB_ADDRESSES = [  # (what, environment, ip, TLS files)
    ("nothing set: loopback, for a TLS proxy in front", {}, "127.0.0.1", None),
    ("a certificate and its key: HTTPS on every interface",
     {"MCPLAB_HUB_SSL_CERT": "/etc/hub.pem", "MCPLAB_HUB_SSL_KEY": "/etc/hub.key"}, "0.0.0.0", ("/etc/hub.pem", "/etc/hub.key")),
    ("a certificate, a key and an address", {"MCPLAB_HUB_SSL_CERT": "/etc/hub.pem", "MCPLAB_HUB_SSL_KEY": "/etc/hub.key",
                                           "MCPLAB_HUB_IP": "10.0.0.5"}, "10.0.0.5", ("/etc/hub.pem", "/etc/hub.key")),
    ("a certificate without its key: still loopback", {"MCPLAB_HUB_SSL_CERT": "/etc/hub.pem"}, "127.0.0.1", None),
]


@pytest.mark.parametrize("what, env, ip, tls", HUB_ADDRESSES, ids=[row[0] for row in HUB_ADDRESSES])
def test_the_shipped_hub_never_serves_plain_http_to_a_network(monkeypatch, what, env, ip, tls) -> None:
    """PAM passwords cross the hub's connection: plain HTTP only on loopback, behind a TLS proxy."""
    from traitlets.config import Config

    for name in ("MCPLAB_HUB_SSL_CERT", "MCPLAB_HUB_SSL_KEY", "MCPLAB_HUB_IP"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = Config()
    exec(compile(hubs.SHIPPED.read_text(encoding="utf-8"), str(hubs.SHIPPED), "exec"), {"get_config": lambda: config})
    hub = config.JupyterHub
    assert hub.ip == ip, what
    assert (tuple((hub.ssl_cert, hub.ssl_key)) if "ssl_cert" in hub else None) == tls, what
