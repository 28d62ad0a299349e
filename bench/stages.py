"""Where one stdio round trip's time goes, stage by stage, on each side: µs per call, no profiler.

    python bench/stages.py [--calls 5000] [--repeat 20000]

Two parts, printed as one table each:

* **CPU per call of each side**, in real processes over real pipes: the CPU time (user + system,
  from os.times / /proc/PID/stat) one side spends per sequential ``tools/call``, for our client and
  the raw client (both against the floor), and for our weather server and the floor (both driven by
  the raw client). The difference is what our code costs on each side; wall time per call is given too.
* **The stages**, each timed alone in this process with the very messages of a round trip (timeit,
  best of five): what each step of the client's and the server's path costs, encoding, framing,
  decoding, the trace, result building, the event-loop machinery. A stage's figure is a lower
  bound (warm caches, no syscall); their sum next to the CPU per call shows what is left for the kernel
  and the event loop's own turns.

cProfile (bench/hotpath.py) doubles the cost of every Python call and so overstates small functions;
these figures are the plain ones.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import timeit
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # mcplab, servers/, from a checkout

from driver import ARGUMENTS, open_raw_stdio  # noqa: E402  (bench/driver.py, beside this file)
from harness import FLOOR, WEATHER  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


# --- CPU per call, in real processes ----------------------------------------------------------------

def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (/proc/PID/stat, in clock ticks)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _own_cpu() -> float:
    times = os.times()
    return times.user + times.system


async def _loop(call: Callable, calls: int, server_pid: Callable[[], int]) -> dict[str, float]:
    for _ in range(200):
        await call()
    pid = server_pid()
    wall, mine, theirs = time.perf_counter(), _own_cpu(), _cpu_of(pid)
    for _ in range(calls):
        await call()
    per = 1e6 / calls
    return {"wall_us": (time.perf_counter() - wall) * per, "client_cpu_us": (_own_cpu() - mine) * per,
            "server_cpu_us": (_cpu_of(pid) - theirs) * per}


async def cpu_per_call(client: str, server: list[str], calls: int) -> dict[str, float]:
    from harness import children

    async with AsyncExitStack() as stack:
        if client == "raw":
            call = await open_raw_stdio(stack, server)
        else:
            from mcplab import Client, stdio

            ours = await stack.enter_async_context(Client(stdio(server)))

            async def call() -> Any:
                return await ours.call_tool("get_weather", ARGUMENTS)
        return await _loop(call, calls, lambda: children()[0])


# --- the stages, alone ------------------------------------------------------------------------------

REPLY_LINE = (b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Beijing: sunny (\xe6\x99\xb4), '
              b'12 \xc2\xb0C, humidity 30%, wind 9 km/h"}],"isError":false}}')


def best(statement: Callable[[], Any], repeat: int) -> float:
    """µs of CPU per run of ``statement``, best of seven batches of ``repeat`` (this thread's CPU time:
    on a shared machine, the time other processes take the core away is not counted)."""
    return min(timeit.repeat(statement, number=repeat, repeat=7, timer=time.thread_time)) / repeat * 1e6


def client_stages(repeat: int) -> dict[str, float]:
    from mcplab.client.results import ToolResult
    from mcplab.trace.recorder import Trace
    from mcplab.wire import jsonrpc

    params = {"name": "get_weather", "arguments": ARGUMENTS}
    request = jsonrpc.Request(7, "tools/call", params)
    raw = jsonrpc.encode(request)
    reply = jsonrpc.decode(REPLY_LINE)
    framer, trace = jsonrpc.LineFramer(), Trace()
    r, w = os.pipe()
    os.set_blocking(r, False)

    def empty_read() -> None:
        try:
            os.read(r, 1 << 16)
        except BlockingIOError:
            pass

    stages = {
        "Request(...) built": lambda: jsonrpc.Request(7, "tools/call", params),
        "encode (to_dict + JSON text)": lambda: jsonrpc.encode(request),
        "trace.record c2s": lambda: trace.record("c2s", "stdio", raw, request),
        "text → bytes + newline": lambda: raw.encode("utf-8") + b"\n",
        "read on an empty pipe (BlockingIOError), ×1": empty_read,
        "framing: LineFramer.lines": lambda: framer.lines(REPLY_LINE + b"\n"),
        "decode (parse + classify)": lambda: jsonrpc.decode(REPLY_LINE),
        "trace.record s2c (bytes → str)": lambda: trace.record("s2c", "stdio", REPLY_LINE, reply),
        "matching: PendingRequests add + resolve": lambda: _match(jsonrpc.PendingRequests(), reply),
        "result building: ToolResult.from_json": lambda: ToolResult.from_json(reply.result),
    }
    out = {name: best(stage, repeat) for name, stage in stages.items()}
    out.update(asyncio.run(_loop_stages(repeat)))
    os.close(r), os.close(w)
    return out


def _match(pending: Any, reply: Any) -> None:
    pending.add(7, None)
    pending.resolve(reply)


async def _loop_stages(repeat: int) -> dict[str, float]:
    """The machinery each call goes through inside the event loop (anyio on asyncio, as the client runs)."""
    import anyio

    from mcplab.pipes import Reader

    r, w = os.pipe()
    os.set_blocking(r, False)  # as the stdio transport makes its own ends
    stdout = Reader(r)
    n = max(1000, repeat // 10)

    async def timed(body: Callable[[], Any]) -> float:
        runs = []
        for _ in range(7):
            started = time.thread_time()
            for _ in range(n):
                await body()
            runs.append((time.thread_time() - started) / n * 1e6)
        return min(runs)

    async def scope() -> None:
        with anyio.move_on_after(30):
            pass

    async def waited() -> None:  # the stdio receive's read when the reply is not there yet: a wait, then a read
        done = anyio.Event()

        async def read() -> None:
            await stdout.read()
            done.set()
        group.start_soon(read)
        await asyncio.sleep(0)  # the reader waits in the loop
        os.write(w, b"x")
        await done.wait()

    async def at_hand() -> None:  # the same read when the reply has come already: no wait
        os.write(w, b"x")
        await stdout.read()

    async def task() -> None:  # the server's task per request: started in the session's task group, run, ended
        done = anyio.Event()

        async def answer() -> None:
            done.set()
        group.start_soon(answer)
        await done.wait()

    async def turn() -> None:  # one trip through the event loop (a task that yields once)
        await asyncio.sleep(0)

    async with anyio.create_task_group() as group:
        return {"anyio.move_on_after enter + exit (Connection.exchange, StdioTransport.receive)": await timed(scope),
                "a read of a reply already there (a 1-byte write + read)": await timed(at_hand),
                "a read that waits for its reply (a task, a wait, a write, the read)": await timed(waited),
                "  of which one event-loop turn (sleep(0))": await timed(turn),
                "a task of a task group, started and ended (the server's per request)": await timed(task)}
    stdout.close()
    os.close(w)


def server_stages(repeat: int) -> dict[str, float]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "servers"))
    from mcplab.wire import jsonrpc
    from mcplab.wire.versions import allows_batches
    from weather import server  # servers/weather.py

    line = (jsonrpc.encode(jsonrpc.Request(7, "tools/call", {"name": "get_weather", "arguments": ARGUMENTS}))
            .encode())
    request = jsonrpc.decode(line)
    framer = jsonrpc.LineFramer()

    class Peer:  # the least a connection needs: the tools/call path never writes through it
        def post(self, *args: Any, **kwargs: Any) -> None: ...
        def deliver(self, *args: Any) -> None: ...

    connection = server.connect(Peer(), "legacy")
    loop = asyncio.new_event_loop()
    init = jsonrpc.Request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "bench", "version": "0"}})
    loop.run_until_complete(server.handle(init, connection))
    loop.run_until_complete(server.handle(jsonrpc.Notification("notifications/initialized"), connection))
    reply = loop.run_until_complete(server.handle(request, connection))
    assert isinstance(reply, jsonrpc.Response), reply

    async def handled(n: int) -> float:  # the handler's own work, in the task the runner gives it
        started = time.thread_time()
        for _ in range(n):
            await server.handle(request, connection)
        return (time.thread_time() - started) / n * 1e6

    from mcplab.server.schema import compile_validator

    check = compile_validator(server.tools["get_weather"].input_schema)
    n = max(1000, repeat // 10)
    out = {
        "framing: LineFramer.lines": best(lambda: framer.lines(line + b"\n"), repeat),
        "batch check: allows_batches(version)": best(lambda: allows_batches("2025-06-18"), repeat),
        "decode (parse + classify)": best(lambda: jsonrpc.decode(line), repeat),
        "Server.handle tools/call (arguments checked, tool run, result built)":
            min(loop.run_until_complete(handled(n)) for _ in range(7)),
        "  of which the arguments check (jsonschema)": best(lambda: check(ARGUMENTS), repeat),
        "encode the reply + newline → bytes": best(lambda: (jsonrpc.encode(reply) + "\n").encode("utf-8"), repeat),
    }
    loop.close()
    return out


def table(title: str, rows: dict[str, float], unit: str = "µs") -> str:
    width = max(map(len, rows))
    lines = [title] + [f"  {name:{width}s} {value:8.2f} {unit}" for name, value in rows.items()]
    total = sum(value for name, value in rows.items() if not name.startswith(" "))  # "  of which": inside another
    return "\n".join(lines + [f"  {'sum':{width}s} {total:8.2f} {unit}"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000, help="round trips per process measurement")
    parser.add_argument("--repeat", type=int, default=20000, help="runs per stage batch")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for client, server, label in (("raw", FLOOR, "raw → floor"), ("mcplab", FLOOR, "mcplab client → floor"),
                                  ("raw", WEATHER, "raw → mcplab weather server")):
        figures = asyncio.run(cpu_per_call(client, server, args.calls))
        print(f"{label:30s} " + "  ".join(f"{k} {v:7.1f}" for k, v in figures.items()))
    print()
    print(table("client stages (µs per call)", client_stages(args.repeat)))
    print()
    print(table("server stages (µs per call)", server_stages(args.repeat)))


if __name__ == "__main__":
    main()
