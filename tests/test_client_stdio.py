"""The stdio transport and the client over real child processes: frames, stderr, faults, shutdown.

Every fault ends in its typed error within the timeout and leaves no process behind.
Every test runs on asyncio and on trio.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import anyio
import pytest

from client_helpers import command, process_alive
from mcplab.wire import jsonrpc
from mcplab.client import Client
from mcplab.course import server_command
from mcplab.wire.errors import LocalProtocolError, RemoteProtocolError, RequestTimeout, ServerExited, TransportError
from mcplab.transports.stdio import SHUTDOWN, StdioTransport, stdio

SHUTDOWN_BUDGET = sum(SHUTDOWN)  # seconds from closing stdin to a reaped process

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


def mini(*flags: str) -> StdioTransport:
    return stdio(command("mini", *flags))


async def gone(pid: int, within: float = 1.0) -> bool:
    deadline = time.monotonic() + within
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.02)
    return True


async def test_every_frame_and_every_stderr_line_is_in_the_trace():
    async with Client(mini(), timeout=5) as client:
        tools = await client.list_tools()  # two pages
        assert [t.name for t in tools] == ["echo", "slow", "progress", "fail"]
        result = await client.call_tool("echo", {"city": "北京"})
    assert json.loads(result.text) == {"city": "北京"}
    stdio_frames = [f for f in client.trace if f.channel == "stdio"]
    assert [(f.direction, getattr(f.message, "method", None)) for f in stdio_frames] == [
        ("c2s", "initialize"), ("s2c", None), ("c2s", "notifications/initialized"),
        ("c2s", "tools/list"), ("s2c", None), ("c2s", "tools/list"), ("s2c", None),
        ("c2s", "tools/call"), ("s2c", None)]
    assert all(jsonrpc.decode(f.raw) == f.message for f in stdio_frames)
    assert '"city":"北京"' in stdio_frames[7].raw  # the wire carries UTF-8, not \\u escapes
    assert [f.raw for f in client.trace if f.channel == "stderr"] == ["mini server ready"]


async def test_the_server_is_killed_mid_call():
    transport = mini()
    async with Client(transport, timeout=5) as client:
        async def kill_soon():
            await anyio.sleep(0.1)
            os.kill(transport.pid, signal.SIGKILL)

        with anyio.fail_after(3):
            async with anyio.create_task_group() as tg:
                tg.start_soon(kill_soon)
                with pytest.raises(ServerExited) as caught:
                    await client.call_tool("slow")
    assert caught.value.returncode == -signal.SIGKILL
    assert "killed by signal 9" in str(caught.value)
    assert await gone(transport.pid)


async def test_a_server_that_never_answers_initialize_times_out():
    transport = mini("--silent")
    started = time.monotonic()
    with pytest.raises(RequestTimeout, match="initialize"):
        async with Client(transport, timeout=0.5):
            pass
    assert time.monotonic() - started < 0.5 + SHUTDOWN_BUDGET
    assert await gone(transport.pid)


async def test_a_wait_keeps_its_deadline_while_the_server_talks_on_stderr():
    # Every stderr line wakes the reader; each wakes it back into the same deadline, neither later
    # (the wait would run on as long as the server chatters) nor sooner.
    async with Client(mini(), timeout=5) as client:
        started = time.monotonic()
        with anyio.fail_after(5), pytest.raises(RequestTimeout, match="tools/call"):
            await client.call_tool("chatty", {}, timeout=0.6)
        waited = time.monotonic() - started
        heard = [f.raw for f in client.trace if f.channel == "stderr"]
        assert 0.6 <= waited < 3, waited
        assert sum(text.startswith("still thinking") for text in heard) >= 3, heard
        assert (await client.call_tool("echo", {"n": 2})).text == '{"n": 2}'


async def test_a_server_that_prints_junk_on_stdout_is_a_protocol_error():
    transport = mini("--junk")
    with anyio.fail_after(3):
        with pytest.raises(RemoteProtocolError) as caught:
            async with Client(transport, timeout=2):
                pass
    assert caught.value.raw == "Hello! I am a server that prints to stdout."
    assert await gone(transport.pid)


async def test_a_server_that_answers_with_the_wrong_id_is_a_protocol_error():
    transport = mini("--wrong-id")
    with anyio.fail_after(3):
        with pytest.raises(RemoteProtocolError, match="id 101"):
            async with Client(transport, timeout=2):
                pass
    assert await gone(transport.pid)


async def test_a_crash_carries_the_exit_code_and_the_last_stderr_lines():
    transport = mini("--exit-on-call", "3")
    async with Client(transport, timeout=5) as client:
        with anyio.fail_after(3):
            with pytest.raises(ServerExited) as caught:
                await client.call_tool("echo")
        with pytest.raises(LocalProtocolError, match="client in state 'error'") as later:  # every later request
            await client.ping()
    assert isinstance(later.value.__cause__, ServerExited) and "crashing on purpose" in str(later.value)
    assert caught.value.returncode == 3
    assert caught.value.stderr_tail[-1] == "mini server: crashing on purpose"
    assert "crashing on purpose" in str(caught.value)


async def test_shutdown_escalates_to_kill_within_the_budget():
    transport = mini("--ignore-eof")
    async with Client(transport, timeout=5) as client:
        await client.ping()
        started = time.monotonic()
    assert time.monotonic() - started < SHUTDOWN_BUDGET + 0.5  # the budget, plus scheduling slack
    assert transport.returncode == -signal.SIGKILL
    assert await gone(transport.pid)


async def test_a_polite_server_exits_on_end_of_file_with_code_zero():
    transport = mini()
    async with Client(transport, timeout=5) as client:
        await client.ping()
    assert transport.returncode == 0


async def test_a_flood_on_stderr_does_not_block_the_call():
    async with Client(mini("--stderr-flood", str(3 * 1024 * 1024)), timeout=5) as client:
        with anyio.fail_after(5):
            assert (await client.call_tool("echo", {"n": 1})).text == '{"n": 1}'
    assert len(client.trace.frames[-1].raw) == 3 * 1024 * 1024 or any(
        len(f.raw) == 3 * 1024 * 1024 for f in client.trace if f.channel == "stderr")


async def test_progress_and_log_notifications_reach_their_callbacks():
    logs, steps = [], []
    async with Client(mini(), timeout=5, on_log=logs.append) as client:
        result = await client.call_tool("progress", on_progress=lambda p: steps.append(p["progress"]))
    assert steps == [1, 2] and logs == [{"level": "info", "data": "progress done"}]
    assert result.text == "{}"


async def test_argv_env_and_cwd_reach_the_child(tmp_path):
    script = ("import json, os, sys; print(json.dumps({'jsonrpc': '2.0', 'method': 'hello', 'params': "
              "{'env': os.environ.get('MCPLAB_TEST'), 'cwd': os.getcwd(), 'argv': sys.argv[1:], "
              "'fds': sorted(int(fd) for fd in os.listdir('/proc/self/fd'))}}))")
    async with stdio(["python", "-c", script, "a b"], env={"MCPLAB_TEST": "yes"}, cwd=str(tmp_path)) as t:
        hello = await t.receive()
        with pytest.raises(ServerExited) as caught:
            await t.receive()
    assert hello.params["env"] == "yes" and hello.params["cwd"] == str(tmp_path)
    assert hello.params["argv"] == ["a b"]
    assert set(hello.params["fds"]) <= {0, 1, 2, 3}  # 3 is listdir's own; nothing of ours leaked
    assert caught.value.returncode == 0


async def test_the_server_gets_its_own_process_group():
    async with mini() as transport:
        assert os.getpgid(transport.pid) == transport.pid


async def test_a_command_that_does_not_exist_is_a_transport_error():
    with pytest.raises(TransportError, match="could not start"):
        async with stdio(["/nonexistent/mcp-server"]):
            pass


async def test_a_half_written_line_then_exit_is_server_exited():
    script = "import sys; sys.stdout.write('{\"jsonrpc\": \"2.0\", '); sys.stdout.flush(); sys.exit(5)"
    async with stdio(["python", "-c", script]) as transport:
        with pytest.raises(ServerExited) as caught:
            await transport.receive()
    assert caught.value.returncode == 5


async def test_a_server_slow_to_exit_after_its_stdout_ends_is_reported_by_its_exit_code_and_stderr():
    # On a busy machine the exit can come seconds after the end of stdout (here: it closes stdout, then
    # takes 3 s); the error must still say how the server ended, not that it is still running.
    script = ("import os, sys, time; os.close(1); time.sleep(3); "
              "sys.exit('slow server: finished closing, a while after stdout')")
    async with stdio(["python", "-c", script]) as transport:
        with pytest.raises(ServerExited) as caught:
            await transport.receive()
    assert caught.value.returncode == 1
    assert caught.value.stderr_tail[-1] == "slow server: finished closing, a while after stdout"


async def test_send_raw_writes_exactly_the_given_line():
    script = "import sys; line = sys.stdin.readline(); sys.stderr.write('got ' + line); sys.stderr.flush()"
    async with stdio(["python", "-c", script]) as transport:
        await transport.send_raw("not json at all")
        with pytest.raises(ServerExited):
            await transport.receive()
    frames = [(f.direction, f.channel, f.raw) for f in transport.trace]
    assert frames == [("c2s", "stdio", "not json at all"), ("s2c", "stderr", "got not json at all")]
    assert isinstance(transport.trace.frames[0].message, jsonrpc.ParseError)


def test_the_server_exits_when_the_client_process_is_killed(tmp_path):
    """nbval kills the kernel with SIGKILL: the server must see end-of-file and go."""
    parent = (
        "import anyio, sys\n"
        f"sys.path.insert(0, {str(os.path.dirname(__file__))!r})\n"
        "from client_helpers import command\n"
        "from mcplab import Client, stdio\n"
        "async def main():\n"
        "    transport = stdio(command('mini'))\n"
        "    client = await Client(transport).connect()\n"
        "    print(transport.pid, flush=True)\n"
        "    await anyio.sleep(60)\n"
        "anyio.run(main)\n")
    process = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    try:
        server_pid = int(process.stdout.readline())
        assert process_alive(server_pid)
        process.kill()
        process.wait()
        deadline = time.monotonic() + 3
        while process_alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not process_alive(server_pid)
    finally:
        process.kill()
        process.wait()


async def test_an_empty_next_cursor_is_a_cursor_and_only_an_absent_one_ends_the_listing():
    # 2026-07-28 pagination: "an empty string is a valid cursor and thus MUST NOT be treated as the end
    # of results"; a client sends it back as given.
    async with Client(mini("--cursor", ""), timeout=5) as client:
        tools = await client.list_tools()
    assert [t.name for t in tools] == ["echo", "slow", "progress", "fail"]
    asked = [f.message.params for f in client.trace
             if f.direction == "c2s" and getattr(f.message, "method", None) == "tools/list"]
    assert asked == [None, {"cursor": ""}]


# --- one writer, one reader: a full pipe, a cancelled wait ------------------------------------------

COUNT_LINES = """
import json, os, sys, time
flag = sys.argv[1]
while not os.path.exists(flag):   # read nothing until the test has filled the pipe
    time.sleep(0.01)
count = 0
for line in sys.stdin:
    message = json.loads(line)    # a line cut in two would not decode
    if message["method"] == "notifications/initialized":  # the test's "that was all"
        break
    count += 1
print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"count": count}}), flush=True)
"""


async def test_senders_wait_while_the_pipe_is_full_and_every_line_arrives_whole(tmp_path):
    flag = tmp_path / "read now"
    note = jsonrpc.Notification("notifications/message", {"level": "info", "data": "x" * 1000})
    async with stdio(["python", "-c", COUNT_LINES, str(flag)]) as transport:
        sent = []

        async def sender() -> None:
            for _ in range(100):  # 20 senders x 100 lines of 1 kB: many times what a pipe holds
                await transport.send(note)
                sent.append(1)
        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(sender)
            with anyio.fail_after(10):
                while len(sent) < 30:  # the pipe takes some lines, then every sender waits for room
                    await anyio.sleep(0.01)
            await anyio.sleep(0.2)
            assert len(sent) < 2000
            flag.touch()
        await transport.send(jsonrpc.Notification("notifications/initialized"))
        with anyio.fail_after(10):
            answer = await transport.receive()
    assert answer.params == {"count": 2000}  # every line the child read decoded: none was cut or glued


async def test_a_receive_cancelled_while_it_waits_loses_nothing():
    script = ("import sys; sys.stdin.readline(); "
              "print('{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"n\":1}}', flush=True); "
              "sys.stdin.readline()")
    async with stdio(["python", "-c", script]) as transport:
        with anyio.move_on_after(0.2) as waited:
            await transport.receive()  # the child writes only once it has read a line
        assert waited.cancelled_caught
        await transport.send_raw("go")
        with anyio.fail_after(10):
            message = await transport.receive()
        assert message == jsonrpc.Notification("notifications/message", {"n": 1})


async def test_a_call_that_went_out_at_once_times_out_from_when_it_was_made():
    async with Client(mini(), timeout=5) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout, match="tools/call"):
            await client.call_tool("slow", {}, timeout=0.3)  # the mini server never answers "slow"
        assert 0.3 <= time.monotonic() - started < 3
        cancelled = [f.message for f in client.trace if f.direction == "c2s"][-1]
        assert cancelled.method == "notifications/cancelled"
        assert (await client.call_tool("echo", {"n": 1})).text == '{"n": 1}'  # and the connection goes on


# --- the era probe: silence counts from the server's read, not from the write ------------------------------

def late_starter(seconds: float, *server: str) -> list[str]:
    """A real server that sleeps before it reads its stdin, as a Python server still importing on a busy machine."""
    script, *flags = (server or server_command("weather"))[1:]
    start = (f"import runpy, sys, time; time.sleep({seconds}); sys.argv = [{script!r}, *sys.argv[1:]]; "
             f"runpy.run_path({script!r}, run_name='__main__')")
    return [sys.executable, "-c", start, *flags]  # flags appended later (--era) reach the server too


async def test_a_modern_server_that_starts_reading_late_is_still_found_modern():
    # 1.5 s before the server reads anything, a probe timeout of 0.2 s: counted from the write, the
    # client called it legacy, fell back to initialize, and the modern-only server refused that.
    client = Client(stdio(late_starter(1.5, *server_command("weather"), "--era", "modern")), era="auto", timeout=30)
    client.probe_timeout = 0.2
    with anyio.fail_after(30):
        async with client:
            result = await client.call_tool("get_weather", {"city": "Beijing"})
    assert (client.era, client.protocol_version) == ("modern", "2026-07-28")
    assert [f.message.method for f in client.trace if f.direction == "c2s" and f.message is not None][0] == \
        "server/discover"
    assert "initialize" not in [getattr(f.message, "method", None) for f in client.trace]
    assert result.text.startswith("Beijing: sunny")


async def test_a_silent_legacy_server_is_still_legacy_after_the_probe_timeout_from_its_read():
    # The spec's silent legacy server: it reads server/discover and never answers it, then answers initialize.
    client = Client(stdio(late_starter(0.5, *command("mini", "--quiet-before-init"))), era="auto", timeout=30)
    client.probe_timeout = 0.3
    with anyio.fail_after(30):
        async with client:
            assert client.era == "legacy"
            assert (await client.call_tool("echo", {"n": 3})).text == '{"n": 3}'
    sent = [f.message.method for f in client.trace if f.direction == "c2s" and hasattr(f.message, "method")]
    assert sent[:3] == ["server/discover", "initialize", "notifications/initialized"]
    assert "no answer within 0.3 s of the server reading it" in client.era_reason
    assert client.era_reason.endswith("fall back to initialize")
