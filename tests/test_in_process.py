"""A bundled server run in this process, as the browser edition runs it: the same frames as over stdio.

The page has no processes; place.in_process runs the server's file here and serves it over memory
streams (transports/in_process.py). These tests run it on a machine, beside the real child process,
and compare what the client sees. asyncio only: in the page the loop is asyncio's.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from mcplab import place
from mcplab.client import Client
from mcplab.transports.in_process import InProcessTransport
from mcplab.transports.stdio import SHUTDOWN, StdioTransport, stdio
from mcplab import lifecycle
from mcplab.wire import jsonrpc
from mcplab.wire.errors import PARSE_ERROR, ServerExited, TransportError

ROOT = Path(__file__).resolve().parent.parent
WEATHER = ["python", str(ROOT / "servers" / "weather.py")]
FILES = ["python", str(ROOT / "servers" / "files.py")]

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def frames(client: Client) -> list[tuple]:
    return [(frame.direction, frame.channel, frame.raw) for frame in client.trace.frames]


async def weather_session(transport, era: str) -> list[tuple]:
    async with Client(transport, era=era) as client:
        assert (await client.call_tool("get_weather", {"city": "Beijing"})).text.startswith("Beijing: sunny")
        await client.list_tools()
    return frames(client)


@pytest.mark.subprocess
@pytest.mark.parametrize("era, flags", [("legacy", []), ("modern", ["--era", "modern"]), ("auto", [])])
async def test_the_weather_server_in_process_sends_the_very_frames_of_its_child_process(era, flags):
    over_stdio = await weather_session(stdio([*WEATHER, *flags]), era)
    here = await weather_session(place.in_process([*WEATHER, *flags]), era)
    assert here == over_stdio
    assert {channel for _, channel, _ in here} <= {"stdio", "note"}  # a note: how the auto era was decided


async def test_a_server_opened_in_one_task_answers_in_the_next_and_closes_in_a_third():
    """A lab opens a client in one cell and uses it in the next: each cell is a task of its own."""
    client = Client(place.in_process(WEATHER))
    await asyncio.get_running_loop().create_task(client.connect())
    result = await asyncio.get_running_loop().create_task(client.call_tool("get_weather", {"city": "Beijing"}))
    assert result.text.startswith("Beijing: sunny")
    transport = client.transport
    await asyncio.get_running_loop().create_task(client.aclose())
    assert transport.returncode == 0  # it ended at the end of its input, as a polite process does


@pytest.mark.subprocess
async def test_the_files_server_takes_its_own_flags_in_process(tmp_path):
    (tmp_path / "note.txt").write_text("hello from the page", encoding="utf-8")
    argv = [*FILES, "--root", str(tmp_path)]
    async with Client(place.in_process(argv)) as client:
        text = (await client.call_tool("read_file", {"path": "note.txt"})).text
    assert "hello from the page" in text


def server_file(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "mine.py"
    path.write_text(textwrap.dedent('''\
        import logging
        import anyio
        from mcplab.server import Server, run

        server = Server("mine")
        log = logging.getLogger("mine")
        ''') + textwrap.dedent(body) + "\nif __name__ == '__main__':\n    run(server)\n", encoding="utf-8")
    return ["python", str(path)]


@pytest.mark.subprocess
async def test_what_the_server_logs_is_its_stderr_in_the_trace_as_over_a_pipe(tmp_path):
    argv = server_file(tmp_path, '''
        @server.tool()
        def shout(word: str) -> str:
            """Say it louder."""
            log.warning("asked to shout %s", word)
            return word.upper()
        ''')
    seen = {}
    for name, transport in (("stdio", stdio(argv)), ("here", place.in_process(argv))):
        async with Client(transport) as client:
            assert (await client.call_tool("shout", {"word": "hi"})).text == "HI"
        seen[name] = [raw for _, channel, raw in frames(client) if channel == "stderr"]
    assert seen["here"] == seen["stdio"] == ["mine: WARNING mine: asked to shout hi"]


async def test_another_tasks_log_records_are_not_the_servers_stderr():
    async with Client(place.in_process(WEATHER)) as client:
        import logging

        logging.getLogger("elsewhere").warning("the notebook's own warning")
        await client.list_tools()
    assert [frame for frame in client.trace.frames if frame.channel == "stderr"] == []


@pytest.mark.subprocess
@pytest.mark.parametrize("where", ["stdio", "in process"])
async def test_sys_exit_in_a_tool_ends_the_server_with_its_code_in_both_places(tmp_path, where):
    argv = server_file(tmp_path, '''
        @server.tool()
        def leave() -> str:
            """Leave the way a process does when it calls sys.exit."""
            raise SystemExit(3)
        ''')
    async with Client(stdio(argv) if where == "stdio" else place.in_process(argv)) as client:
        with pytest.raises(ServerExited) as caught:
            await client.call_tool("leave", {})
    assert caught.value.returncode == 3


async def test_a_server_that_crashes_is_server_exited_with_its_traceback_on_stderr(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("from mcplab.server import Server, run\n"
                    "server = Server('broken')\n"
                    "server.handle = None  # every message now fails outside any handler\n"
                    "run(server)\n", encoding="utf-8")
    client = Client(place.in_process(["python", str(path)]))
    with pytest.raises(ServerExited) as caught:
        await client.connect()
    assert caught.value.returncode == 1
    assert any("TypeError" in line for line in caught.value.stderr_tail)


@pytest.mark.parametrize("seconds, ends", [(3, True), (3600, False)], ids=["past the grace", "forever"])
async def test_a_server_busy_past_its_grace_leaves_close_within_the_shutdown_budget(tmp_path, seconds, ends):
    """A tool shielded from cancels outlives the end of input and both cancels: close() gives up in time.
    One that then ends reads as killed; one that never ends runs on, since, unlike a process, a task
    cannot be killed (the loop's end cancels it)."""
    client = Client(place.in_process(server_file(tmp_path, f'''
        @server.tool()
        async def slow() -> str:
            """Take longer than the grace a closing server gives its requests."""
            with anyio.CancelScope(shield=True):
                await anyio.sleep({seconds})
            return "late"
        ''')))
    await client.connect()

    async def call() -> None:
        with pytest.raises(TransportError):  # the transport closes under it
            await client.call_tool("slow", {}, timeout=3600)
    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await anyio.sleep(0.1)
        started = anyio.current_time()
        await client.transport.close()
    assert anyio.current_time() - started <= sum(SHUTDOWN) + 1.0
    if ends:
        with anyio.fail_after(30):  # its shielded sleep ends, and then the cancel it was sent
            await client.transport._process.wait()
        assert client.transport.returncode == -signal.SIGKILL
    else:
        assert client.transport.returncode is None


def test_end_now_from_sync_code_cancels_the_server():
    async def main() -> InProcessTransport:
        transport = place.in_process(WEATHER)
        await transport.open()
        assert transport.end_now() is True
        await anyio.sleep(0.05)  # the cancel is delivered on the loop's next turn
        return transport
    transport = asyncio.run(main())
    assert transport.returncode == -signal.SIGTERM
    assert transport.end_now() is False  # twice is nothing


@pytest.mark.parametrize("argv, words", [
    (["node", "server.js"], "expected a Python file to run here"),
    (["python", "-m", "mcplab"], "expected a Python file to run here"),
    (["python", "-c", "pass", "--flag"], "no arguments after CODE"),
    ([*WEATHER, "--http"], "has no port"),
    ([*WEATHER, "--era", "yesterday"], "refused its flags"),
])
def test_what_cannot_run_in_process_is_refused_with_the_reason(argv, words):
    with pytest.raises(ValueError, match=words):
        place.in_process(argv)


def test_a_file_that_never_calls_run_is_refused(tmp_path):
    path = tmp_path / "idle.py"
    path.write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="without calling mcplab.server.run"):
        place.in_process(["python", str(path)])


def test_on_trio_the_in_process_server_says_it_needs_asyncio():
    async def main() -> None:
        with pytest.raises(TransportError, match="runs on asyncio"):
            await place.in_process(WEATHER).open()
    anyio.run(main, backend="trio")


def test_local_is_a_child_process_on_a_machine_and_in_process_in_the_browser(monkeypatch):
    assert place.IN_BROWSER is (sys.platform == "emscripten")
    monkeypatch.setattr(place, "IN_BROWSER", False)
    assert type(place.local(WEATHER)) is StdioTransport
    monkeypatch.setattr(place, "IN_BROWSER", True)
    assert type(place.local(WEATHER)) is InProcessTransport


class RefusingLoop(asyncio.SelectorEventLoop):
    """asyncio's loop with the Pyodide loop's rules: call_at goes through call_later, which refuses a
    timer whose moment has passed."""

    def call_at(self, when, callback, *args, **options):
        return self.call_later(when - self.time(), callback, *args, **options)

    def call_later(self, delay, callback, *args, **options):
        if delay < 0:
            raise ValueError("Can't schedule in the past")
        return super().call_at(self.time() + delay, callback, *args, **options)


@pytest.mark.skipif(sys.platform == "emscripten", reason="asyncio's selector loop needs a socket pair; the page's "
                    "own loop is the next test's")
def test_a_deadline_that_has_just_passed_expires_on_a_loop_that_refused_it_before():
    from mcplab.portable import allow_past_deadlines

    loop = RefusingLoop()
    try:
        with pytest.raises(ValueError, match="in the past"):
            loop.call_at(loop.time() - 1, lambda: None)
        allow_past_deadlines(RefusingLoop)
        allow_past_deadlines(RefusingLoop)  # twice is once
        fired = []
        loop.call_at(loop.time() - 1, fired.append, True)
        loop.run_until_complete(asyncio.sleep(0.01))
        assert fired == [True]
    finally:
        loop.close()


@pytest.mark.skipif(sys.platform != "emscripten", reason="the page's own loop: tests/test_pyodide.py runs this there")
async def test_in_the_page_a_deadline_that_has_just_passed_expires_at_once():
    fired = []
    asyncio.get_running_loop().call_later(-1.0, fired.append, True)  # Pyodide's loop refused this before mcplab
    with anyio.move_on_after(-1.0):  # an anyio deadline already passed: cancelled, never a ValueError
        await anyio.sleep(3600)
    await anyio.sleep(0.01)
    assert fired == [True]


async def test_a_servers_log_level_is_the_notebooks_again_once_it_closes(tmp_path):
    import logging

    before = logging.getLogger().level
    async with Client(place.in_process([*WEATHER, "--log-level", "debug"])) as client:
        assert logging.getLogger().level == logging.DEBUG  # as basicConfig in the server's process
        await client.list_tools()
    assert logging.getLogger().level == before


# --- python -c CODE: a one-line server, as Lab 02 shows a process's ways ------------------------------

ON_A_PIPE = pytest.param("stdio", marks=pytest.mark.subprocess)
DASH_C_ENDINGS = [  # CODE, its exit code, its stderr lines: what CPython's python -c does
    ("import sys; print('loading config...', file=sys.stderr); sys.exit(3)", 3, ["loading config..."]),
    ("import sys; sys.exit('weather: WEATHER_API_KEY is not set')", 1, ["weather: WEATHER_API_KEY is not set"]),
    ("1/0", 1, ["Traceback (most recent call last):", '  File "<string>", line 1, in <module>',
                "ZeroDivisionError: division by zero"]),
    ("1 +", 1, ['  File "<string>", line 1', "    1 +", "       ^", "SyntaxError: invalid syntax"]),
    ("pass", 0, []),
]


@pytest.mark.parametrize("where", [ON_A_PIPE, "in process"])
@pytest.mark.parametrize("code, returncode, stderr", DASH_C_ENDINGS, ids=["exit 3", "exit message", "raises",
                                                                         "syntax error", "ends"])
async def test_python_dash_c_ends_with_the_exit_code_and_stderr_of_its_child_process(where, code, returncode,
                                                                                     stderr):
    argv = ["python", "-c", code]
    client = Client(stdio(argv) if where == "stdio" else place.in_process(argv))
    with pytest.raises(ServerExited) as caught:
        await client.connect()
    assert (caught.value.returncode, caught.value.stderr_tail) == (returncode, stderr)
    assert frames(client)[1:] == [("s2c", "stderr", line) for line in stderr]


async def test_what_the_notebook_prints_while_code_runs_here_stays_the_notebooks(capsys):
    printing = place.in_process(["python", "-c", "import sys; print('to the client'); print('log', file=sys.stderr)"])
    await printing.open()
    print("the notebook's line")
    assert await printing._process.wait() == 0
    stdout, stderr = (b"".join(iter(pipe.read_now, b"")) for pipe in printing._pipes[1:])  # up to their end
    assert (capsys.readouterr().out, stdout, stderr) == ("the notebook's line\n", b"to the client\n", b"log\n")
    await printing.close()
    assert not any(type(stream).__name__ == "Routed" for stream in (sys.stdin, sys.stdout, sys.stderr))


@pytest.mark.parametrize("where", [ON_A_PIPE, "in process"])
async def test_a_tools_print_is_a_line_of_its_stderr_in_process_as_over_a_pipe(tmp_path, where):
    argv = server_file(tmp_path, '''
        @server.tool()
        def chatty() -> str:
            """Print, as a careless tool does."""
            print("printed, not sent")
            return "sent"
        ''')
    async with Client(stdio(argv) if where == "stdio" else place.in_process(argv)) as client:
        assert (await client.call_tool("chatty", {})).text == "sent"
    assert [raw for _, channel, raw in frames(client) if channel == "stderr"] == ["printed, not sent"]


async def test_python_dash_c_reading_stdin_waits_for_its_end_in_the_page_and_elsewhere_says_why_it_cannot():
    from mcplab.wire.errors import RequestTimeout

    silent = place.in_process(["python", "-c", "import sys; sys.stdin.read()"])
    if sys.platform != "emscripten":  # sync code can wait for a task only through the page's JSPI
        with pytest.raises(ServerExited) as caught:
            await Client(silent).connect()
        assert caught.value.returncode == 1
        assert "can do only in the page (pyodide.ffi.run_sync)" in caught.value.stderr_tail[-1]
        return
    with pytest.raises(RequestTimeout):
        await Client(silent, timeout=0.5).connect()
    assert silent.returncode == 0  # the client closed its stdin: read() returned, the code ended
    answering = place.in_process(["python", "-c", textwrap.dedent("""\
        import json, sys
        hello = json.loads(sys.stdin.readline())
        print(json.dumps({"jsonrpc": "2.0", "id": hello["id"], "result": {"protocolVersion": "2025-11-25",
              "capabilities": {}, "serverInfo": {"name": "by-hand", "version": "1"}}}))
        for line in sys.stdin:
            print("heard", line.strip(), file=sys.stderr)""")])
    async with Client(answering) as client:
        assert client.server_info["name"] == "by-hand"
    assert answering.returncode == 0
    assert [raw for _, channel, raw in frames(client) if channel == "stderr"] == [
        'heard {"jsonrpc":"2.0","method":"notifications/initialized"}']


@pytest.mark.parametrize("where", [ON_A_PIPE, "in process"])
async def test_what_a_server_file_prints_before_run_is_on_its_stdout_and_stderr_as_from_its_process(tmp_path, where):
    path = tmp_path / "noisy.py"
    path.write_text("import sys\n"
                    "from mcplab.server import Server, run\n"
                    "print('loading')\n"
                    "print('warming up', file=sys.stderr)\n"
                    "run(Server('noisy'))\n", encoding="utf-8")
    argv = ["python", str(path)]
    async with stdio(argv) if where == "stdio" else place.in_process(argv) as transport:
        await transport.send(lifecycle.initialize_request(1, "2025-11-25"))
        with anyio.fail_after(60):  # a line that never comes fails the test (sized for a loaded machine)
            first, second = await transport.receive(), await transport.receive()
    assert first.code == PARSE_ERROR and second.result["serverInfo"]["name"] == "noisy"
    came = [(f.channel, f.raw) for f in transport.trace.frames if f.direction == "s2c"]
    assert [raw for channel, raw in came if channel == "stderr"] == ["warming up"]
    assert [raw for channel, raw in came if channel == "stdio"][0] == "loading"


# --- what a host does with a command, and killing a server: Lab 04 -----------------------------------

@pytest.mark.parametrize("in_browser, kind", [(False, StdioTransport), (True, InProcessTransport)])
def test_a_host_starts_a_server_given_as_a_command_the_way_the_place_allows(monkeypatch, in_browser, kind):
    from mcplab import Host

    monkeypatch.setattr(place, "IN_BROWSER", in_browser)
    assert type(Host({"weather": WEATHER}).transports["weather"]) is kind


async def test_a_host_in_the_page_lists_calls_and_restarts_a_server_it_runs_in_process(monkeypatch):
    from mcplab import Host

    monkeypatch.setattr(place, "IN_BROWSER", True)
    async with Host({"weather": WEATHER}) as host:
        assert (await host.call("get_weather", {"city": "Beijing"})).text.startswith("Beijing: sunny")
        first = host.transports["weather"]
        assert await host.reconnect("weather") == "up"
        assert type(host.transports["weather"]) is InProcessTransport and host.transports["weather"] is not first
    assert first.returncode == 0 and host.transports["weather"].returncode == 0


@pytest.mark.parametrize("where", [ON_A_PIPE, "in process"])
async def test_a_server_killed_with_sigkill_is_server_exited_with_minus_9_in_both_places(where):
    transport = stdio(WEATHER) if where == "stdio" else place.in_process(WEATHER)
    async with Client(transport) as client:
        place.kill(transport, signal.SIGKILL)
        with pytest.raises(ServerExited) as caught:
            await client.call_tool("get_weather", {"city": "Beijing"})
    assert caught.value.returncode == transport.returncode == -9
    assert str(caught.value).startswith("the server was killed by signal 9 (SIGKILL)")


@pytest.mark.parametrize("where", [ON_A_PIPE, "in process"])
async def test_sigterm_ends_a_bundled_servers_session_as_its_end_of_input_does_in_both_places(where):
    """serve_stdio stops on SIGTERM as at the end of its input: a subscriptions/listen gets its result, then
    the one notifications/cancelled a server sends, and the server exits 0. In process the same stop."""
    fixtures = ["python", str(ROOT / "servers" / "conformance.py"), "--era", "modern"]
    transport = stdio(fixtures) if where == "stdio" else place.in_process(fixtures)
    modern = "2026-07-28"
    async with transport as pipe:
        await pipe.send(jsonrpc.Request("listen-1", "subscriptions/listen",
                                        lifecycle.stamp({"notifications": {"toolsListChanged": True}}, modern, {})))
        acknowledged = await pipe.receive()
        place.kill(pipe, signal.SIGTERM)
        result, cancelled = await pipe.receive(), await pipe.receive()
    assert transport.returncode == 0  # it stopped itself: closing found it gone, nothing was killed
    assert acknowledged.method == "notifications/subscriptions/acknowledged"
    assert result.id == "listen-1" and result.result["resultType"] == "complete"
    assert cancelled.method == "notifications/cancelled" and cancelled.params["requestId"] == "listen-1"
    assert cancelled.params["reason"] == "the server is stopping: it received SIGTERM"


async def test_a_server_in_process_takes_no_signal_but_the_two_that_end_it():
    async with Client(place.in_process(WEATHER)) as client:
        with pytest.raises(ValueError, match="only be ended, with SIGTERM or SIGKILL; got signal 2"):
            place.kill(client.transport, signal.SIGINT)
        assert (await client.call_tool("get_weather", {"city": "Beijing"})).text.startswith("Beijing: sunny")
    with pytest.raises(ValueError, match="no server process to signal"):
        place.kill(stdio(WEATHER), signal.SIGKILL)  # never opened


async def test_the_bookshelf_shares_its_file_between_copies_where_fcntl_has_no_flock(tmp_path, monkeypatch):
    import fcntl

    monkeypatch.delattr(fcntl, "flock")  # as in the browser edition's Pyodide
    bookshelf = ["python", str(ROOT / "labs" / "build" / "bookshelf.py"), "--store", str(tmp_path / "books.json")]
    async with Client(place.in_process(bookshelf)) as one, Client(place.in_process(bookshelf)) as other:
        added = await one.call_tool("add_book", {"title": "Dune", "author": "Frank Herbert"})
        found = await other.call_tool("find_book", {"title": "Dune"})
    assert not added.is_error and added.text == "Dune by Frank Herbert is on the fiction shelf"
    assert not found.is_error and '"author": "Frank Herbert"' in found.text
