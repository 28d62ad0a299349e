"""JupyterHub on 127.0.0.1 for a classroom run, and the students' processes read from /proc.

Theory of operation
-------------------
:class:`Hub` starts JupyterHub with the shipped ``deploy/jupyterhub/jupyterhub_config.py`` and sets,
on top, only what a run on one machine needs: 127.0.0.1 and free ports, the trial log-in (any name,
homes in a folder of the run), a service token for the REST API, and ``--allow-root`` when run as
root. Its configurable-http-proxy comes from npm (``.node/`` or PATH). Every process the hub starts
carries a marker in its environment (the students' through ``Spawner.environment``), so
:func:`processes` finds them all in /proc, :func:`by_student` weighs each student's (their
single-user server, their kernel and the MCP servers it started), and :meth:`Hub.stop` can prove
that nothing of the run is left. Used by bench/classroom.py and tests/test_jupyterhub.py.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "deploy" / "jupyterhub" / "jupyterhub_config.py"
MARK = "MCPLAB_CLASSROOM_MARK"  # in the environment of every process of a run
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def proxy_command() -> str | None:
    """configurable-http-proxy from the checkout's .node/ (what `make test` installs), else PATH."""
    local = ROOT / ".node" / "node_modules" / ".bin" / "configurable-http-proxy"
    return str(local) if local.is_file() else shutil.which("configurable-http-proxy")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


OVERLAY = """
c = get_config()
load_subconfig({shipped!r})
c.JupyterHub.ip = c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.pid_file = {work!r} + "/proxy.pid"
c.JupyterHub.db_url = "sqlite:///" + {work!r} + "/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = {work!r} + "/cookie_secret"
c.JupyterHub.authenticator_class = "dummy"
c.JupyterHub.spawner_class = "simple"
c.Authenticator.allow_all = True
c.SimpleLocalProcessSpawner.home_dir_template = {work!r} + "/home/{{username}}"
c.JupyterHub.services = [{{"name": "teacher", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "teacher", "services": ["teacher"],
                             "scopes": ["admin:users", "admin:servers", "access:servers"]}}]
c.Spawner.environment = {{{mark!r}: {mark_value!r}}}
c.Spawner.args = {args!r}
c.Spawner.start_timeout = c.Spawner.http_timeout = 300
c.JupyterHub.log_level = "WARN"
"""


class Hub:
    """JupyterHub and its proxy on 127.0.0.1, for the length of a ``with`` block."""

    def __init__(self, work: Path, proxy: str) -> None:
        self.work = work
        self.token = secrets.token_hex(24)
        self.mark = uuid.uuid4().hex
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = work / "jupyterhub.log"
        args = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        (work / "home").mkdir(parents=True, exist_ok=True)
        self.config = work / "jupyterhub_config.py"
        self.config.write_text(OVERLAY.format(
            shipped=str(SHIPPED), port=self.port, hub_port=_free_port(), proxy_api_port=_free_port(), proxy=proxy,
            work=str(work), token=self.token, mark=MARK, mark_value=self.mark, args=args), encoding="utf-8")
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Hub:
        hub = Path(sys.executable).with_name("jupyterhub")
        env = {**os.environ, MARK: self.mark}  # the hub and its proxy carry the mark too
        self.process = subprocess.Popen([str(hub), "-f", str(self.config)], cwd=self.work, env=env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=self.log.open("wb"))
        import httpx

        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyterhub exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/hub/api/", timeout=2, trust_env=False).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyterhub did not answer within 60 s:\n{self.log_tail()}")
            time.sleep(0.2)

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> list[int]:
        """Stop the hub (it stops the students' servers and its proxy); kill and return whatever of ours is left."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        left = [p.pid for p in processes(self.mark)]
        for pid in left:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        return left

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def client(self):
        import httpx

        return httpx.AsyncClient(base_url=self.url, headers={"Authorization": f"token {self.token}"},
                                 timeout=300, trust_env=False)


# --- processes, from /proc ----------------------------------------------------------------------

@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    user: str          # JUPYTERHUB_USER of the process, "" for the hub and its proxy
    rss: int           # bytes
    cmdline: str


def processes(mark: str) -> list[Proc]:
    """Every live process whose environment carries ``MARK=mark`` (zombies have none)."""
    found = []
    needle = f"{MARK}={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            if needle not in environ:
                continue
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            user = next((v[len(b"JUPYTERHUB_USER="):].decode() for v in environ if v.startswith(b"JUPYTERHUB_USER=")), "")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            found.append(Proc(int(entry.name), int(fields[1]), user, int(fields[21]) * PAGE, cmdline))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return found


def by_student(mark: str) -> dict[str, dict[str, int]]:
    """Per student: the single-user server's memory, the rest (kernel and the MCP servers it started), counts."""
    procs = [p for p in processes(mark) if p.user]
    pids = {p.pid for p in procs}
    out: dict[str, dict[str, int]] = {}
    for p in procs:
        row = out.setdefault(p.user, {"server_rss": 0, "kernel_rss": 0, "processes": 0, "mcp_servers": 0})
        row["processes"] += 1
        if p.ppid not in pids:  # the root of the student's tree: the single-user server
            row["server_rss"] += p.rss
        else:
            row["kernel_rss"] += p.rss
            row["mcp_servers"] += "ipykernel" not in p.cmdline
    return out
