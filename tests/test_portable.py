"""The portable paths, forced on Linux: what mcplab does where POSIX calls are missing (Windows).

* In this process, ``portable``'s flags are switched to the Windows column (threads serve the
  pipes, terminate()/kill() end the child) and the stdio transport's own tests run again through
  it, on asyncio and trio, against real servers; plus what only the threaded pipes can get wrong.
* In a child process started through ``tests/windows_like.py``, ``fcntl``/``termios``/``tty``/``pty``
  cannot be imported and the event loop cannot watch a descriptor: every mcplab module imports,
  and a real client talks to a real weather server that reads its stdin in a thread.
* What Linux cannot run (``CREATE_NEW_PROCESS_GROUP``) is checked as the table it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest

import test_client_stdio as stdio_tests
from client_helpers import command, process_alive
from mcplab import portable
from mcplab.client import Client
from mcplab.course import server_command
from mcplab.wire.errors import RemoteError
from mcplab.transports.stdio import stdio

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]
SHIM = Path(__file__).with_name("windows_like.py")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


@pytest.fixture(autouse=True)
def windows_column(monkeypatch):
    monkeypatch.setattr(portable, "WATCHES_PIPES", False)
    monkeypatch.setattr(portable, "SIGNALS_GROUPS", False)


# The stdio transport's behaviours, again, through the threaded pipes and terminate()/kill().
test_every_frame_and_every_stderr_line_is_in_the_trace = stdio_tests.test_every_frame_and_every_stderr_line_is_in_the_trace
test_the_server_is_killed_mid_call = stdio_tests.test_the_server_is_killed_mid_call
test_a_server_that_never_answers_initialize_times_out = stdio_tests.test_a_server_that_never_answers_initialize_times_out
test_a_wait_keeps_its_deadline_while_the_server_talks_on_stderr = \
    stdio_tests.test_a_wait_keeps_its_deadline_while_the_server_talks_on_stderr
test_a_crash_carries_the_exit_code_and_the_last_stderr_lines = \
    stdio_tests.test_a_crash_carries_the_exit_code_and_the_last_stderr_lines
test_shutdown_escalates_to_kill_within_the_budget = stdio_tests.test_shutdown_escalates_to_kill_within_the_budget
test_a_polite_server_exits_on_end_of_file_with_code_zero = stdio_tests.test_a_polite_server_exits_on_end_of_file_with_code_zero
test_a_flood_on_stderr_does_not_block_the_call = stdio_tests.test_a_flood_on_stderr_does_not_block_the_call
test_a_command_that_does_not_exist_is_a_transport_error = stdio_tests.test_a_command_that_does_not_exist_is_a_transport_error
test_a_half_written_line_then_exit_is_server_exited = stdio_tests.test_a_half_written_line_then_exit_is_server_exited
test_send_raw_writes_exactly_the_given_line = stdio_tests.test_send_raw_writes_exactly_the_given_line


def _pipe_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("mcplab-pipe") and t.is_alive()]


async def test_the_forced_column_really_uses_threads_and_they_end_with_the_server():
    earlier = set(_pipe_threads())  # an earlier test's readers end once their loop runs again: not ours
    transport = stdio(server_command("weather"))
    async with Client(transport, era="legacy", timeout=10) as client:
        result = await client.call_tool("get_weather", {"city": "Beijing"})
        ours = set(_pipe_threads()) - earlier
        assert len(ours) == 2  # stdout's reader and stderr's
        pid = transport.pid
    assert result.text.startswith("Beijing: sunny")
    assert not process_alive(pid)
    deadline = time.monotonic() + 10
    while any(t.is_alive() for t in ours) and time.monotonic() < deadline:  # each closes its end at end of file
        await anyio.sleep(0.02)
    assert not [t for t in ours if t.is_alive()]


async def test_a_message_bigger_than_any_pipe_buffer_crosses_whole_both_ways():
    city = "北京" * 100_000  # 600 kB of UTF-8 on one line (more back): many partial writes and reads
    async with Client(stdio(command("mini")), timeout=20) as client:
        result = await client.call_tool("echo", {"city": city})
    assert json.loads(result.text) == {"city": city}


async def test_concurrent_sends_never_interleave_their_lines():
    async with Client(stdio(command("mini")), timeout=20) as client:
        async with anyio.create_task_group() as tg:
            results = {}

            async def call(i: int) -> None:
                results[i] = await client.call_tool("echo", {"city": f"{i}" * 50_000})
            for i in range(8):
                tg.start_soon(call, i)
    assert {i: json.loads(r.text)["city"] for i, r in results.items()} == {i: f"{i}" * 50_000 for i in range(8)}


def test_the_posix_column_is_what_linux_uses(monkeypatch):
    monkeypatch.undo()  # this test reads the real flags
    assert portable.WATCHES_PIPES and portable.SIGNALS_GROUPS


@pytest.mark.parametrize(("platform", "options"), [
    ("linux", {"start_new_session": True}),
    ("darwin", {"start_new_session": True}),
    ("win32", {"creationflags": 0x00000200}),  # CREATE_NEW_PROCESS_GROUP: Ctrl-C stays with the parent
])
def test_each_platform_starts_the_server_in_a_group_of_its_own(platform, options):
    assert portable.new_group(platform) == options


def test_a_pipe_buffer_request_the_system_refuses_is_not_an_error():
    read, write = os.pipe()
    try:
        portable.grow_pipe(read, 1 << 40)  # far above any limit: EPERM/EINVAL, ignored
    finally:
        os.close(read)
        os.close(write)


async def test_the_watched_column_is_what_the_transport_picks_on_posix(monkeypatch):
    monkeypatch.setattr(portable, "WATCHES_PIPES", True)
    monkeypatch.setattr(portable, "SIGNALS_GROUPS", True)
    earlier = set(_pipe_threads())  # an earlier test's readers end once their loop runs again: not ours
    async with Client(stdio(server_command("weather")), era="legacy", timeout=10) as client:
        result = await client.call_tool("get_weather", {"city": "Beijing"})
        assert set(_pipe_threads()) <= earlier  # the event loop watches the pipes: no thread of ours reads them
    assert result.text.startswith("Beijing: sunny")


WITHOUT_POSIX = """
import asyncio, importlib, json, pkgutil, sys, threading
import mcplab
failed = {}
for module in pkgutil.walk_packages(mcplab.__path__, "mcplab."):
    try:
        importlib.import_module(module.name)
    except Exception as exc:
        failed[module.name] = repr(exc)
from mcplab.client import Client
from mcplab.transports.stdio import stdio

async def main():
    transport = stdio([sys.executable, SHIM, WEATHER, "--log-level", "debug"])
    async with Client(transport, era="auto", timeout=20) as client:
        era = client.era
        result = await client.call_tool("get_weather", {"city": "Tokyo"})
        pid = transport.pid
        threads = sorted({t.name for t in threading.enumerate() if t.name.startswith("mcplab-pipe")})
    return {"era": era, "text": result.text, "pid": pid, "pipes": threads,
            "stderr": [f.raw for f in transport.trace if f.channel == "stderr"]}

report = asyncio.run(main())
report.update(failed=failed, hidden_loaded=sorted({"fcntl", "termios", "tty", "pty"} & set(sys.modules)),
              loop=type(asyncio.new_event_loop()).__name__)
print(json.dumps(report))
"""


def test_without_posix_modules_everything_imports_and_a_real_session_runs():
    code = WITHOUT_POSIX.replace("SHIM", repr(str(SHIM))).replace("WEATHER", repr(server_command("weather")[1]))
    done = subprocess.run([sys.executable, str(SHIM), "-c", code], capture_output=True, text=True,
                          encoding="utf-8", timeout=120, cwd=SHIM.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["failed"] == {}, report["failed"]
    assert report["hidden_loaded"] == [] and report["loop"] == "CannotWatchLoop"
    assert report["pipes"] == ["mcplab-pipe-reader"]  # threads read the pipes
    assert report["era"] == "modern" and report["text"].startswith("Tokyo: light rain")
    assert any("reading stdin in a thread" in line for line in report["stderr"]), report["stderr"]
    assert not process_alive(report["pid"])


def test_the_shim_really_hides_the_posix_modules():
    done = subprocess.run([sys.executable, str(SHIM), "-c", "import fcntl"], capture_output=True, text=True)
    assert done.returncode == 1 and "No module named 'fcntl'" in done.stderr


@pytest.mark.http
def test_an_http_server_is_launched_and_read_without_pread(monkeypatch):
    # Windows has no os.pread: the child's output goes to named files, read through handles of our own.
    monkeypatch.delattr(os, "pread")
    from mcplab.server.streamable_http import launch

    import httpx

    server = launch(server_command("weather"))
    try:
        names = [server._stderr.name, server._stdout.name]
        assert all(isinstance(name, str) and Path(name).is_file() for name in names)
        assert "mcplab: serving weather at http://127.0.0.1:" in server.stderr()
        reply = httpx.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            headers={"Accept": "application/json, text/event-stream"}, trust_env=False)
        assert reply.status_code == 200 and "serverInfo" in reply.text
    finally:
        code = server.stop()
    assert code is not None and "serving weather" in server.stderr()
    assert not any(Path(name).exists() for name in names)  # stop() removed the capture files


async def test_through_threaded_pipes_the_probe_timeout_still_counts_from_the_write():
    # Where the client cannot see whether the server has read its stdin (Windows pipes), silence is
    # counted from the write, as before: a modern server that starts reading late is taken for legacy.
    client = Client(stdio(stdio_tests.late_starter(1.5, *server_command("weather"), "--era", "modern")),
                    era="auto", timeout=30)
    client.probe_timeout = 0.2
    with anyio.fail_after(30), pytest.raises(RemoteError) as refused:
        async with client:
            pass
    assert refused.value.code == -32601 and refused.value.method == "initialize"
    probe = [f.raw for f in client.trace if f.channel == "note"][1]  # the trace says why it fell back
    assert "got no answer in time: not a modern answer" in probe and "of the server reading it" not in probe


def test_a_pipe_counts_what_its_reader_has_not_taken():
    read, write = os.pipe()
    try:
        os.write(write, b'{"id":1}\n')
        assert portable.unread(write) == 9  # asked on the write end
        assert os.read(read, 4) == b'{"id' and portable.unread(write) == 5
        os.read(read, 5)
        assert portable.unread(write) == 0
    finally:
        os.close(write)
        os.close(read)


async def test_through_threaded_pipes_the_transport_cannot_tell_what_the_server_has_read():
    async with stdio(server_command("weather")) as transport:  # the Windows column: threads write
        await transport.send_raw('{"jsonrpc":"2.0","id":1,"method":"ping"}')
        assert await transport.wait_read() is False  # Windows pipes keep that to themselves
