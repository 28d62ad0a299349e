"""A real load balancer in front of MCP servers: nginx when it is installed, mcplab's proxy when not.

Theory of operation
-------------------
Lab 07 scales the weather server out behind :mod:`mcplab.ecosystem.proxy`, a round-robin proxy written to be
read. Operators use nginx or HAProxy for that job. This module runs the same demonstration behind
Debian's nginx, with the configuration the project ships in ``deploy/nginx/``: three backends,
round-robin, no sticky routing, Server-Sent Events passed on unbuffered, and an ``X-Upstream: N``
header on every reply naming the backend that answered (mcplab's proxy says ``X-Backend: N``).

    start([url1, url2, url3])  →  Balancer(kind="nginx", url=..., header="x-upstream", config=...)
                                  or, without nginx: Balancer(kind="mcplab.ecosystem.proxy", note="how to get nginx")

nginx runs unprivileged and leaves nothing behind: ``python -m mcplab.ecosystem.balancer URL URL URL`` renders
the template into a private temporary prefix (pid file, logs, temporary files), binds the listening
socket itself on 127.0.0.1 (port 0: a free one, no race) and hands it to nginx the way nginx hands
sockets to its own next binary (the ``NGINX`` environment variable names inherited descriptors),
then runs ``nginx -p PREFIX -c PREFIX/nginx.conf`` in the foreground (``daemon off``). Like the
bundled servers it prints ``mcplab: serving nginx at URL`` on stderr and stops when its stdin
reaches end-of-file, so :func:`mcplab.server.streamable_http.launch` starts it and a killed notebook kernel
takes nginx down with it: on EOF it stops nginx (SIGTERM, then SIGKILL) and removes the prefix.

On a shared machine 127.0.0.1 is every user's, and nginx cannot tell them apart. So before it passes a
request on, nginx asks this process (``auth_request``, over a Unix socket in the private prefix), naming
the connection; the answer is the one every mcplab server gives (:mod:`mcplab.server.streamable_http.owner`):
only the user who started it gets through, anyone else gets 403.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import urlsplit

__all__ = ["start", "Balancer", "render", "find_nginx", "TEMPLATE", "HOW_TO_GET_NGINX", "main"]

REPO = Path(__file__).resolve().parents[2]  # mcplab/ecosystem/ → the checkout
TEMPLATE = REPO / "deploy" / "nginx" / "mcp-balancer.conf.template"
BACKENDS = 3  # the template has three upstream servers
HOW_TO_GET_NGINX = ("nginx is not installed here, so this is mcplab's own proxy; to see a real load balancer, "
                    "install nginx (Debian/Ubuntu: sudo apt-get install nginx; macOS: brew install nginx) "
                    "and run this again")
BANNER = "mcplab: serving nginx at {url}"


def find_nginx() -> str | None:
    """The nginx binary: Debian's /usr/sbin/nginx (not on a normal user's PATH), or one on PATH."""
    for candidate in ("/usr/sbin/nginx", shutil.which("nginx")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def backend_port(url: str) -> int:
    """``http://127.0.0.1:8001/mcp`` → 8001; the backends must be on this machine, at /mcp."""
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname != "127.0.0.1" or not parts.port or parts.path != "/mcp":
        raise ValueError(f"expected a backend such as http://127.0.0.1:8001/mcp, got {url!r}")
    return parts.port


def render(backend_ports: Sequence[int], listen_port: int, prefix: str) -> str:
    """The shipped template with its @NAME@ fields filled in."""
    if len(backend_ports) != BACKENDS:
        raise ValueError(f"the nginx template balances {BACKENDS} backends; got {len(backend_ports)}")
    text = TEMPLATE.read_text(encoding="utf-8")
    fields = {"PREFIX": prefix, "LISTEN_PORT": str(listen_port), "USER": _workers_user(),
              **{f"BACKEND_PORT_{i}": str(port) for i, port in enumerate(backend_ports, 1)}}
    for name, value in fields.items():
        text = text.replace(f"@{name}@", value)
    return text


def _workers_user() -> str:
    """nginx's ``user`` line: started by root, its workers would run as nobody, whom the backends refuse
    (they answer only their owner, mcplab/server/streamable_http/owner.py); so they stay root. Anyone else's
    nginx keeps its own user and needs no such line."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "# (workers run as the user who started nginx)"
    import grp
    import pwd

    return f"user {pwd.getpwuid(os.geteuid()).pw_name} {grp.getgrgid(os.getegid()).gr_name};  # the backends answer only their owner"


class _OwnerCheck(BaseHTTPRequestHandler):
    """nginx's ``auth_request``: 204 when the connection it names comes from our own user, else 403."""

    timeout = 5  # seconds for nginx to send its short request: a stuck one must not stop the stdin watch

    def check(self) -> None:
        from mcplab.server.streamable_http.owner import admit

        try:
            peer_host, peer_port, local_host, local_port = self.headers.get("X-Connection", "").split()
            refused = admit((peer_host, int(peer_port)), (local_host, int(local_port)), public=False)
        except ValueError:  # not what our nginx.conf sends
            refused = -1
        self.send_response(204 if refused is None else 403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_OPTIONS = check

    def log_message(self, *args: Any) -> None:  # nginx's own log already has every request
        pass


@dataclass(frozen=True)
class Balancer:
    """A running balancer: where to send requests, which reply header names the backend, how it is set up."""
    kind: str          # "nginx" or "mcplab.ecosystem.proxy"
    url: str
    header: str        # the reply header that names the backend: "x-upstream" or "x-backend"
    config: str        # nginx's configuration as rendered (prefix shown as <prefix>), or a sentence
    note: str          # what to know: nginx's version, or how to get nginx
    process: Any       # the ServerProcess

    def served_by(self, frame: Any) -> str | None:
        """Which backend answered the reply in ``frame`` (a trace frame with HTTP headers)."""
        headers = (getattr(frame, "http", None) or {}).get("headers") or {}
        # Header names are case-insensitive (RFC 9110 §5.1): nginx says X-Upstream, uvicorn x-backend.
        return next((value for name, value in headers.items() if name.lower() == self.header), None)

    def block(self, head: str) -> str:
        """The block of nginx's configuration that opens with ``head`` (``"upstream mcp_servers"``), to its brace."""
        lines = self.config.splitlines()
        start = next((n for n, line in enumerate(lines) if line.strip().startswith(head + " {")), None)
        if start is None:
            raise LookupError(f"expected a block '{head} {{' in the {self.kind} configuration, found none")
        depth = 0
        for end in range(start, len(lines)):
            code = lines[end].split("#", 1)[0]  # a comment's braces are not the block's
            depth += code.count("{") - code.count("}")
            if depth == 0:
                break
        return "\n".join(lines[start:end + 1])

    def stop(self) -> int | None:
        return self.process.stop()


def start(backends: Sequence[str], *, use: str = "auto", timeout: float | None = None) -> Balancer:
    """nginx in front of ``backends`` when it is installed (``use="auto"`` or ``"nginx"``), else mcplab's proxy.

    ``timeout`` bounds the start; by default launch's own, sized for a busy machine."""
    from mcplab.ecosystem import proxy
    from mcplab.server.streamable_http.process import START_TIMEOUT, launch

    timeout = START_TIMEOUT if timeout is None else timeout

    nginx = find_nginx() if use in ("auto", "nginx") else None
    if use == "nginx" and nginx is None:
        raise FileNotFoundError(HOW_TO_GET_NGINX)
    if nginx is None:
        child = proxy.start(backends, timeout=timeout)
        return Balancer("mcplab.ecosystem.proxy", child.url, proxy.BACKEND_HEADER.lower(),
                        "mcplab.ecosystem.proxy: round-robin over " + ", ".join(backends), HOW_TO_GET_NGINX, child)
    ports = [backend_port(url) for url in backends]
    child = launch(["python", "-m", "mcplab.ecosystem.balancer", *backends], timeout=timeout)
    version = subprocess.run([nginx, "-v"], capture_output=True, text=True, timeout=10).stderr.strip()
    return Balancer("nginx", child.url, "x-upstream", render(ports, urlsplit(child.url).port or 0, "<prefix>"),
                    version.replace("nginx version: ", ""), child)


# --- python -m mcplab.ecosystem.balancer: nginx as a child that dies with its parent ----------------------------------

def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(256)
    sock.set_inheritable(True)
    return sock


def _stop(process: subprocess.Popen) -> int:
    """nginx's fast shutdown (SIGTERM; its graceful SIGQUIT waits on idle keep-alive connections), then SIGKILL."""
    for signal_it in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal_it)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(3)
    return process.wait()


def serve(backends: Sequence[str], host: str, port: int) -> int:
    nginx = find_nginx()
    if nginx is None:
        print(f"mcplab.ecosystem.balancer: {HOW_TO_GET_NGINX}", file=sys.stderr)
        return 2
    if host != "127.0.0.1":
        raise SystemExit("mcplab.ecosystem.balancer: the template listens on 127.0.0.1 only")
    ports = [backend_port(url) for url in backends]
    sock = _bind(host, port)
    listen_port = sock.getsockname()[1]
    prefix = tempfile.mkdtemp(prefix="mcplab-nginx-")  # 0700: the owner check's socket is ours alone
    checker = socketserver.UnixStreamServer(f"{prefix}/owner.sock", _OwnerCheck)
    try:
        conf = Path(prefix, "nginx.conf")
        conf.write_text(render(ports, listen_port, prefix), encoding="utf-8")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NGINX": f"{sock.fileno()};"}
        process = subprocess.Popen([nginx, "-p", prefix, "-c", str(conf), "-e", f"{prefix}/error.log"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env,
                                   pass_fds=[sock.fileno()])
        sock.close()  # nginx holds it now
        pid_file = Path(prefix, "nginx.pid")
        deadline = time.monotonic() + 10
        while not pid_file.exists():  # written once the configuration is loaded and the socket taken over
            if process.poll() is not None or time.monotonic() > deadline:
                log = Path(prefix, "error.log")
                print(log.read_text(errors="replace") if log.exists() else "nginx did not start", file=sys.stderr)
                return _stop(process) or 1
            time.sleep(0.01)
        print(BANNER.format(url=f"http://{host}:{listen_port}/mcp"), file=sys.stderr, flush=True)
        signal.signal(signal.SIGTERM, lambda *_: _stop(process))
        try:  # the parent holds our stdin: end-of-file means it is done, or gone; nginx asks who may pass
            while process.poll() is None:
                ready = select.select([0, checker], [], [], 0.5)[0]
                if checker in ready:
                    checker.handle_request()
                if 0 in ready and not os.read(0, 1 << 16):
                    break
        except (OSError, KeyboardInterrupt):
            pass
        return _stop(process)
    finally:
        checker.server_close()
        shutil.rmtree(prefix, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m mcplab.ecosystem.balancer URL URL URL [--host 127.0.0.1] [--port 0]``"""
    parser = argparse.ArgumentParser(description="nginx (deploy/nginx/) in front of three MCP servers.")
    parser.add_argument("backends", nargs=BACKENDS, help="backend endpoint URLs, e.g. http://127.0.0.1:8001/mcp")
    parser.add_argument("--host", default="127.0.0.1", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--http", action="store_true", help=argparse.SUPPRESS)  # launch() passes it
    args = parser.parse_args(argv)
    raise SystemExit(serve(args.backends, args.host, args.port))


if __name__ == "__main__":
    main()
