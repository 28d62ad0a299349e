"""Running a cell again ends the servers its last run started: the kernel's register of live peers.

Theory of operation
-------------------
A lab keeps a connection open across cells by giving it a name::

    weather = await Client(stdio(WEATHER)).connect()      # a server process, for the rest of the lab
    weather_http = launch(WEATHER)                         # an HTTP server process

Run that cell again and the name holds a new connection, while the old one, and its server process,
lives on with no name until the kernel dies. :class:`CellPeers` ends it instead, so a student may
re-run any cell, or Run All twice, without servers piling up, and without a line of the lab changing.

It listens to two of IPython's events. After each cell (``post_run_cell``) it looks through the
user's names, and one level into a list, tuple, set or dict held by a name, for a running *peer* it
has not seen before: a ``Client`` or a ``StdioTransport`` with a server child, a ``Host`` (a child
per server), a playground (``notebook.playground``), a ``ServerProcess`` from ``launch``, a balancer,
or a plain ``subprocess.Popen``. That cell started it, and it is remembered under the cell's key.
Before a cell runs (``pre_run_cell``) the peers its previous run started and that still run are
ended, in the order of their own ``close``: stdin first (a server ends at end of file), then
SIGTERM, then SIGKILL.

A peer is claimed by the first cell that names it, so a later cell that only uses it (``for each in
(careless, host)``) never ends it. A peer that is already closed is skipped: ``async with`` closed it.

The key is the cell id the front end sends (JupyterLab, Notebook 7 and VS Code send one with every
execute request; IPython hands it over as ``info.cell_id``); where none comes (nbclient, nbval, a
terminal), it is the cell's source, which is how those front ends run a cell again.

What it cannot do: await. IPython's events are synchronous, so a peer is ended synchronously
(``StdioTransport.end_now``, ``ServerProcess.stop``); a ``Client`` over HTTP holds no process and is
left alone (its server is a peer of the cell that launched it). A cell whose source was edited, in a
front end that sends no cell id, is a new cell: its old peers stay until the kernel ends, when their
stdin closes and they exit (``launch`` and ``stdio`` both hold the server's stdin for that reason).

State: one :class:`CellPeers` per IPython shell, made by :func:`install` and held by the shell's own
event list (no module-level state); ``install`` finds it there and never registers twice. Peers are
recognised by class, looked up in ``sys.modules`` so that nothing is imported for the check: a class
whose module was never loaded has no instances to find.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from typing import Any, Iterator

__all__ = ["CellPeers", "install", "installed", "end", "running"]

#: ((module, class), how to reach its processes) for every kind of peer
KINDS = (
    (("mcplab.client.client", "Client"), "transport"),
    (("mcplab.client.host", "Host"), "transports"),
    (("mcplab.notebook.inspector", "Playground"), "playground"),
    (("mcplab.transports.stdio", "StdioTransport"), "stdio"),
    (("mcplab.server.streamable_http.process", "ServerProcess"), "process"),
    (("mcplab.ecosystem.balancer", "Balancer"), "balancer"),
    (("subprocess", "Popen"), "popen"),
)
SCAN_LIMIT = 1000          # items of one container looked at: a name holding a long list costs little
POPEN_BUDGET = (1.0, 0.5)  # seconds a Popen gets after its stdin closes, then after SIGTERM


def _kind(value: object) -> str | None:
    for (module, name), kind in KINDS:
        loaded = sys.modules.get(module)
        cls = getattr(loaded, name, None) if loaded is not None else None
        if isinstance(cls, type) and isinstance(value, cls):
            return kind
    return None


def _processes(peer: Any, kind: str) -> Iterator[Any]:
    """The objects that own a process, behind one peer: stdio transports, ServerProcesses, Popens."""
    if kind in ("transport", "playground"):
        client = peer if kind == "transport" else peer.client
        if client is not None and _kind(client.transport) == "stdio":
            yield client.transport
    elif kind == "transports":
        yield from (t for t in list(peer.transports.values()) if _kind(t) == "stdio")
    elif kind == "balancer":
        yield peer.process
    else:
        yield peer


def running(peer: Any) -> bool:
    """Does this peer still have a process running?"""
    kind = _kind(peer)
    for owner in _processes(peer, kind) if kind else ():
        if _kind(owner) == "stdio":
            if owner.running:
                return True
        elif (owner.process if _kind(owner) == "process" else owner).poll() is None:
            return True
    return False


def end(peer: Any) -> int:
    """End every process behind ``peer``, the way its own close would; return how many were running."""
    kind, ended = _kind(peer), 0
    for owner in _processes(peer, kind) if kind else ():
        owned = _kind(owner)
        if owned == "stdio":
            ended += owner.end_now()
        elif owned == "process":
            ended += owner.process.poll() is None
            owner.stop()
        elif owner.poll() is None:
            ended += 1
            _end_popen(owner)
    return ended


def _end_popen(process: subprocess.Popen) -> None:
    if process.stdin and not process.stdin.closed:
        with contextlib.suppress(OSError):
            process.stdin.close()
    for signal_it, wait in ((None, POPEN_BUDGET[0]), (process.terminate, POPEN_BUDGET[1]), (process.kill, None)):
        if signal_it is not None:
            with contextlib.suppress(OSError):
                signal_it()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(wait)
            return


class CellPeers:
    """The peers each cell started, ended when that cell runs again (see the module docstring)."""

    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace
        self.by_cell: dict[str, list[Any]] = {}   # cell key → the peers its last run started
        self.ended: list[tuple[str, int]] = []    # (cell key, processes ended), the last few, for a reader
        self.failures: list[str] = []             # a peer that could not be ended, and why (the last few)
        self._key: str | None = None

    @staticmethod
    def key(info: Any) -> str | None:
        cell_id = getattr(info, "cell_id", None)
        return f"id:{cell_id}" if cell_id else (f"source:{info.raw_cell}" if getattr(info, "raw_cell", None) else None)

    def before(self, info: Any) -> None:
        """pre_run_cell: end what this cell's last run started, if it still runs."""
        self._key = self.key(info)
        count = 0
        for peer in self.by_cell.pop(self._key, ()):
            try:
                count += end(peer) if running(peer) else 0
            except Exception as exc:  # never a traceback in the student's cell for plumbing; kept for a reader
                self.failures = [*self.failures[-9:], f"{type(peer).__name__}: {exc!r}"]
        if count:
            self.ended = [*self.ended[-9:], (self._key, count)]

    def after(self, result: Any) -> None:
        """post_run_cell: claim for this cell every running peer no cell has claimed yet."""
        claimed = {id(peer) for peers in self.by_cell.values() for peer in peers}
        fresh = []
        for value in self._values():
            if id(value) not in claimed and _kind(value) and _safely(running, value):
                claimed.add(id(value))
                fresh.append(value)
        if fresh and self._key is not None:
            self.by_cell[self._key] = fresh
        # forget what has ended on its own (a close, an async with): the table stays as small as what runs
        self.by_cell = {key: alive for key, peers in self.by_cell.items()
                        if (alive := [p for p in peers if _safely(running, p)])}

    def _values(self) -> Iterator[Any]:
        for name, value in list(self.namespace.items()):
            if name.startswith("_"):  # IPython's own (_, __, _i3, _oh): what a student named is enough
                continue
            yield value
            if isinstance(value, dict):
                value = value.values()
            if isinstance(value, (list, tuple, set, frozenset, type({}.values()))):
                for index, item in enumerate(value):
                    if index >= SCAN_LIMIT:
                        break
                    yield item


def _safely(check: Any, peer: Any) -> bool:
    """A check that fails (a peer in a state nobody foresaw) counts as "no": the cell runs on, unbothered."""
    try:
        return bool(check(peer))
    except Exception:
        return False


def installed(shell: Any) -> CellPeers | None:
    """The register this shell already has, if any."""
    for callback in shell.events.callbacks.get("post_run_cell", ()):
        owner = getattr(callback, "__self__", None)
        if type(owner).__name__ == CellPeers.__name__:
            return owner
    return None


def install(shell: Any = None) -> CellPeers | None:
    """Give the running IPython shell (or ``shell``) its register; nothing outside IPython. Idempotent."""
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "events"):
        return None
    register = installed(shell)
    if register is None:
        register = CellPeers(shell.user_ns)
        shell.events.register("pre_run_cell", register.before)
        shell.events.register("post_run_cell", register.after)
    return register
