"""JupyterHub for an mcplab classroom: every student logs in and finds their own copy of the course.

    pip install 'mcplab[hub]'                     # mcplab, JupyterLab and JupyterHub, in one environment
    npm install -g configurable-http-proxy        # JupyterHub's proxy
    jupyterhub -f deploy/jupyterhub/jupyterhub_config.py

What it sets, and why:

* Each student's server starts with ``mcplab lab --copy-only --dir ~/mcplab-course``, run as the
  student, so the copy is theirs: the first login copies the labs and the bundled servers; a later
  login brings in what the course changed and keeps every file the student edited (it says so in
  the server's log). Then the usual single-user server starts, on that folder, on Lab 00.
* The servers the labs start (weather, files, ...) are the kernel's children over stdio: they exit
  when the kernel stops (they watch their stdin), so culling an idle server frees everything.
* Everything else is JupyterHub's defaults, for a Linux machine with one system account per
  student: PAM log-in (``PAMAuthenticator``) and local processes (``LocalProcessSpawner``). For a
  first try on one machine, uncomment the two "trial" lines: any name logs in, without a password,
  with home folders under /tmp.

* Where it listens: passwords cross the hub's connection (PAM log-in), so it never serves plain
  HTTP to a network. By default it listens on 127.0.0.1:8000 only, for a TLS proxy on the same
  machine (nginx, Caddy, Apache) that serves the network over HTTPS and forwards to it. To have the
  hub serve HTTPS itself, on every interface, set MCPLAB_HUB_SSL_CERT and MCPLAB_HUB_SSL_KEY to the
  certificate and key files (MCPLAB_HUB_IP picks another address).

Students share one machine here, and so one loopback interface: a server a lab starts on
127.0.0.1 can be reached by every other student's processes. mcplab's servers answer only the user
who started them (each connection's owner is looked up; mcplab/server/streamable_http/owner.py),
so a classmate gets 403. For loopbacks that are private by construction, give each student a
container: DockerSpawner, or KubeSpawner on Zero to JupyterHub with Kubernetes, where every
single-user server has a network namespace of its own.

Containers: put mcplab[lab] in the single-user image and run the same copy step as the container
starts (a ``postStart`` lifecycle hook on Kubernetes: ``mcplab lab --copy-only --dir
/home/jovyan/mcplab-course``), with ``notebook_dir`` and ``default_url`` as below.

The REST API needs a token for scripts (log students in, start their servers): see the ``services``
example at the end. The classroom test in tests/test_jupyterhub.py loads this file and sets only
what a test needs on top (ports, the trial log-in, a token).
"""

import os
import shlex
import sys

c = get_config()  # noqa: F821 (JupyterHub provides it)

# The environment JupyterHub runs in is the one the students' servers and kernels run in: the
# local spawners start `python -m ...` with this interpreter, which has mcplab installed.
PYTHON = shlex.quote(sys.executable)
COURSE = "mcplab-course"  # under each student's home folder

# The copy runs as the student, in their home, every time their server starts; its report goes to
# the server's log. `exec` hands the process over, so the hub stops the real server, not a shell.
# Kernels talk to their server over Unix sockets, not TCP ports on 127.0.0.1: a port is picked free
# and bound a moment later, and with a class opening its kernels at once on a shared loopback another
# student's kernel can take it in between (measured: 25 students on 2 cores, one kernel failed five
# restarts with "Address already in use"). The sockets live in a runtime folder of the student's own,
# made by mktemp (0700, a name nobody could have taken first) under /tmp, because a socket's path
# must stay under 108 bytes and a home folder's runtime path is often longer. One such small folder
# is left per server start; the system's /tmp cleaning removes them.
c.Spawner.cmd = [
    "sh", "-c",
    f'{PYTHON} -m mcplab.cli lab --copy-only --dir "$HOME/{COURSE}" && '
    'JUPYTER_RUNTIME_DIR="$(mktemp -d /tmp/mcplab-run.XXXXXXXX)" && export JUPYTER_RUNTIME_DIR && '
    f'exec {PYTHON} -m jupyterhub.singleuser --KernelManager.transport=ipc "$@"',
    "mcplab-singleuser",  # $0 for the shell; JupyterHub's arguments for the server follow as "$@"
]
c.Spawner.notebook_dir = f"~/{COURSE}"
c.Spawner.default_url = "/lab/tree/labs/00_start_here.ipynb"

# Measured (bench/classroom.py): a student's single-user server ~150 MiB, their kernel with the MCP
# server a lab runs ~100 MiB at its peak; 1 GiB leaves room for their own code. Container spawners
# enforce these limits; local processes only see them as MEM_LIMIT / CPU_LIMIT in their environment.
c.Spawner.mem_limit = "1G"
c.Spawner.cpu_limit = 1.0

# Never plain HTTP on a network (see the top): HTTPS from the hub itself, or loopback behind a TLS proxy.
CERT, KEY = os.environ.get("MCPLAB_HUB_SSL_CERT"), os.environ.get("MCPLAB_HUB_SSL_KEY")
if CERT and KEY:
    c.JupyterHub.ssl_cert, c.JupyterHub.ssl_key = CERT, KEY
    c.JupyterHub.ip = os.environ.get("MCPLAB_HUB_IP", "0.0.0.0")
else:
    c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = 8000

# Trial on one machine (never on a network): any name logs in, homes under /tmp/<name>.
# c.JupyterHub.authenticator_class = "dummy"
# c.JupyterHub.spawner_class = "simple"
# c.Authenticator.allow_all = True

# A token for scripts that drive the hub through its REST API (here: the teacher's).
# c.JupyterHub.services = [{"name": "teacher", "api_token": "<a long random string>"}]
# c.JupyterHub.load_roles = [{"name": "teacher", "services": ["teacher"],
#                             "scopes": ["admin:users", "admin:servers", "access:servers"]}]
