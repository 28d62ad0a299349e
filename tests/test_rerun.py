"""Running a lab's cells a second time in the same kernel starts no second set of servers.

A real kernel (ipykernel, this environment's interpreter) runs a lab's cells up to its clean-up cell,
then the same cells again, as a student who presses Run All twice does; between runs the test counts
the kernel's live descendant processes. Labs 13 and 14 (the two halves of the security lab) hold every
kind of long-lived peer a lab keeps in a name: HTTP servers from ``launch`` (13) and ``launch_all``
(both), a ``Host`` and a careless one (stdio children each) and a ``Client`` over a stdio transport of
its own (14). The front end here (like nbclient and nbval) sends no cell id, so the kernel knows a cell
run again by its source. Without the kernel's register (``mcplab.notebook.rerun``) the second run
leaves twice the first run's processes (5, then 10 in Lab 13; 6, then 12 in Lab 14).
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Iterator

import nbformat
import pytest
from IPython.core.events import EventManager, available_events

from mcplab import Client, Host, portable
from mcplab.notebook import playground, rerun
from mcplab.notebook.rerun import CellPeers
from mcplab.server.streamable_http import launch
from mcplab.transports.stdio import stdio

psutil = pytest.importorskip("psutil")  # ipykernel's own dependency: present wherever a kernel runs
from jupyter_client import KernelManager  # noqa: E402
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LABS = ROOT / "labs"
WEATHER = [sys.executable, str(ROOT / "servers" / "weather.py")]
CELL_TIMEOUT = 60

pytestmark = [pytest.mark.subprocess, pytest.mark.http]


def alive(pid: int) -> bool:
    """Is ``pid`` running? A zombie has ended (it only awaits its parent); a pid may vanish while we ask."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def live_descendants(pid: int) -> set[int]:
    """The processes below ``pid`` that are still running (a zombie has ended; it only awaits its parent)."""
    found = set()
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                found.add(child.pid)
        except psutil.NoSuchProcess:
            pass
    return found


def run(client, source: str, cell_id: str | None = None) -> None:
    """Execute one cell's source (with the cell id a notebook front end sends) and fail with its error if it raised."""
    if cell_id is None:
        msg_id = client.execute(source, store_history=True)
    else:  # what JupyterLab sends: the execute request's metadata names the cell
        content = {"code": source, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": False, "stop_on_error": True}
        message = client.session.msg("execute_request", content, metadata={"cellId": cell_id})
        client.shell_channel.send(message)
        msg_id = message["header"]["msg_id"]
    deadline = time.monotonic() + CELL_TIMEOUT
    while True:
        try:
            reply = client.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            pytest.fail(f"no reply within {CELL_TIMEOUT} s to:\n{source[:300]}")
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    content = reply["content"]
    assert content["status"] == "ok", f"{content.get('ename')}: {content.get('evalue')}\nin:\n{source[:300]}"


def settled(pid: int, expected: int | None = None, wait: float = 5.0) -> set[int]:
    """The live descendants once their number stops changing (a server that was told to stop takes a moment)."""
    deadline = time.monotonic() + wait
    seen = live_descendants(pid)
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = live_descendants(pid)
        if now == seen and (expected is None or len(now) == expected):
            return now
        seen = now
    return seen


@contextlib.contextmanager
def lab_kernel() -> Iterator[tuple[object, int]]:
    """A real kernel in labs/, as nbval starts one: (its client, its pid); shut down on the way out."""
    manager = KernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    manager.start_kernel(cwd=str(LABS))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        yield client, manager.provisioner.process.pid
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)


@pytest.mark.parametrize("lab, servers", [("13_authorization", 5), ("14_attacks", 6)])
def test_running_a_lab_twice_in_one_kernel_leaves_one_set_of_servers_and_none_after_shutdown(lab, servers):
    cells = [cell.source for cell in nbformat.read(str(LABS / f"{lab}.ipynb"), as_version=4).cells
             if cell.cell_type == "code"]
    # the clean-up: from the cell that stops the lab's HTTP servers to the one that removes its folder
    cleanup = next(i for i, source in enumerate(cells) if "stop_all(" in source and "HTTP servers" in source)
    assert "shutil.rmtree(WORK)" in cells[-1]
    every: set[int] = set()
    with lab_kernel() as (client, kernel):
        for source in cells[:cleanup]:
            run(client, source)
        first = settled(kernel)
        every |= first
        run(client, "_first_work = WORK")  # each run makes a folder; the clean-up cell removes the last one
        assert len(first) >= servers, f"expected the lab's servers to be running, found {len(first)} processes"

        for source in cells[:cleanup]:
            run(client, source)
        second = settled(kernel, expected=len(first))
        every |= second
        assert len(second) == len(first), (f"after the second run {len(second)} processes, after the first "
                                            f"{len(first)}: re-running a cell left its old servers behind")
        assert not first & second, "every server of the first run was replaced, none kept"

        for source in cells[cleanup:]:
            run(client, source)
        assert settled(kernel, expected=0) == set(), "the lab's clean-up cells leave nothing running"
        run(client, "shutil.rmtree(_first_work)")
    time.sleep(0.5)
    assert not [pid for pid in every if alive(pid)]


def test_with_the_cell_id_a_front_end_sends_an_edited_cell_is_the_same_cell_and_another_cell_is_another():
    every: set[int] = set()
    with lab_kernel() as (client, kernel):
        run(client, "from mcplab import Client, notebook\nfrom mcplab.transports.stdio import stdio", "imports")
        connect = 'weather = await Client(stdio(["python", "../servers/weather.py"])).connect()'
        run(client, connect, "a")
        every |= settled(kernel, expected=1)
        run(client, connect + "  # edited", "a")                  # the same cell, edited: the old one ends
        assert len(now := settled(kernel, expected=1)) == 1 and not now & every
        every |= now
        run(client, connect, "b")                                   # the same source in another cell: both run
        every |= settled(kernel, expected=2)
        assert len(live_descendants(kernel)) == 2
    time.sleep(0.5)
    assert len(every) == 3
    assert not [pid for pid in every if alive(pid)]


# --- the register itself, in this process: each kind of peer, claimed and ended ----------------------

@pytest.fixture
def anyio_backend():
    return "asyncio"  # what an IPython kernel runs on


def cell(source: str, cell_id: str | None = "c1") -> SimpleNamespace:
    """What IPython hands pre_run_cell: the cell's source, and its id when the front end sent one."""
    return SimpleNamespace(raw_cell=source, cell_id=cell_id)


def ended(pid: int, wait: float = 3.0) -> bool:
    """Has ``pid`` ended within ``wait`` seconds (gone, or a zombie awaiting its parent)?"""
    deadline = time.monotonic() + wait
    while alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


async def start(kind: str):
    """One peer of each kind a lab keeps in a name, and the pids of its processes."""
    if kind == "client":
        peer = await Client(stdio(WEATHER)).connect()
        return peer, [peer.transport.pid]
    if kind == "host":
        peer = await Host({"a": WEATHER, "b": WEATHER}).connect()
        return peer, [t.pid for t in peer.transports.values()]
    if kind == "launch":
        peer = [launch(WEATHER)]  # in a list, as launch_all returns them
        return peer, [peer[0].process.pid]
    if kind == "popen":
        peer = subprocess.Popen(WEATHER, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return peer, [peer.pid]
    peer = playground(WEATHER)
    await peer.connect()
    return peer, [peer.client.transport.pid]


async def close(peer) -> None:
    for one in peer if isinstance(peer, list) else [peer]:
        if hasattr(one, "aclose"):
            await one.aclose()
        elif hasattr(one, "stop"):
            one.stop()
        elif hasattr(one, "client"):
            await one.close()
        else:
            rerun.end(one)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["client", "host", "launch", "popen", "playground"])
async def test_running_a_cell_again_ends_the_processes_its_last_run_started(kind):
    namespace: dict = {}
    register = CellPeers(namespace)
    register.before(cell("peer = ..."))
    namespace["peer"], old = await start(kind)
    register.after(None)
    assert list(register.by_cell) == ["id:c1"]
    register.before(cell("peer = ... (edited: the cell id is the same)"))   # run again
    assert all(ended(pid) for pid in old), f"{kind}: the first run's processes still run"
    try:
        namespace["peer"], new = await start(kind)
        register.after(None)
        assert not any(ended(pid, wait=0.2) for pid in new), "the new run's processes run"
    finally:
        await close(namespace["peer"])


@pytest.mark.anyio
async def test_a_cell_that_only_uses_a_peer_never_ends_it_and_without_a_cell_id_the_source_is_the_key():
    namespace: dict = {}
    register = CellPeers(namespace)
    register.before(cell("weather = ...", cell_id=None))
    namespace["weather"] = await Client(stdio(WEATHER)).connect()
    register.after(None)
    pid = namespace["weather"].transport.pid
    try:
        for _ in range(2):  # a later cell names it too (a loop variable), and runs twice
            register.before(cell("for each in (weather,): pass", cell_id=None))
            namespace["each"] = namespace["weather"]
            register.after(None)
        register.before(cell("weather = ... (edited)", cell_id=None))  # another source: another cell
        assert not ended(pid, wait=0.3)
        assert list(register.by_cell) == ["source:weather = ..."]
        register.before(cell("weather = ...", cell_id=None))
        assert ended(pid)
    finally:
        await namespace["weather"].aclose()


@pytest.mark.anyio
async def test_a_peer_closed_by_its_cell_is_forgotten_and_nothing_is_ended_twice():
    namespace: dict = {}
    register = CellPeers(namespace)
    register.before(cell("async with ..."))
    async with Client(stdio(WEATHER)) as namespace["client"]:
        pass
    register.after(None)
    assert register.by_cell == {}
    register.before(cell("async with ..."))
    assert register.ended == []


def test_end_now_follows_close_s_order_and_kills_a_server_that_ignores_eof_and_sigterm():
    stubborn = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "print('ready', flush=True); time.sleep(60)"]

    async def opened():
        transport = stdio(stubborn)
        await transport.open()
        return transport

    import anyio

    async def main():
        transport = await opened()
        begun = time.monotonic()
        assert transport.end_now() is True
        assert time.monotonic() - begun >= 1.4  # stdin closed, 1 s; SIGTERM, 0.5 s; then SIGKILL
        assert ended(transport.pid) and transport.end_now() is False
        with anyio.fail_after(3):
            await transport._process.wait()
        assert transport.returncode == -9

    anyio.run(main)


def test_install_gives_an_ipython_shell_one_register_and_does_nothing_elsewhere():
    assert rerun.install() is None  # no IPython shell in this process
    shell = SimpleNamespace(user_ns={})
    shell.events = EventManager(shell, available_events)
    register = rerun.install(shell)
    assert rerun.install(shell) is register and rerun.installed(shell) is register
    assert shell.events.callbacks["pre_run_cell"] == [register.before]
    assert shell.events.callbacks["post_run_cell"] == [register.after]


@pytest.mark.anyio
async def test_a_peer_that_cannot_be_ended_is_noted_and_the_cell_still_runs(monkeypatch):
    namespace: dict = {}
    register = CellPeers(namespace)
    register.before(cell("weather = ..."))
    namespace["weather"] = await Client(stdio(WEATHER)).connect()
    register.after(None)

    def broken(peer):
        raise OSError("no such thing")

    monkeypatch.setattr(rerun, "end", broken)
    try:
        register.before(cell("weather = ..."))   # no exception reaches the cell
        assert register.failures == ["Client: OSError('no such thing')"] and register.ended == []
    finally:
        await namespace["weather"].aclose()


def test_has_exited_asks_without_reaping_so_the_child_s_own_waiter_still_gets_its_exit_code():
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit(3)"], stdin=subprocess.PIPE)
    if not hasattr(os, "waitid"):  # Windows cannot ask without reaping: it says it does not know
        assert portable.has_exited(child.pid) is None
        child.stdin.close()
        assert child.wait(5) == 3
        return
    assert portable.has_exited(child.pid) is False
    child.stdin.close()
    deadline = time.monotonic() + 5
    while not portable.has_exited(child.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert portable.has_exited(child.pid) is True
    assert child.wait(5) == 3                   # still there to be reaped by its owner, with its code
    assert portable.has_exited(child.pid) is True  # reaped: no longer our child, and ended
