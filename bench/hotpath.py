"""Where the time goes in one side of a round trip: cProfile of mcplab's server or client, the other side a floor.

    python bench/hotpath.py server [--calls 5000] [--http] [--top 25]
        servers/weather.py under cProfile, driven by the raw client of driver.py (no MCP library)
    python bench/hotpath.py client [--calls 5000] [--http] [--top 25]
        mcplab's Client under cProfile, against bench/floor.py (a server that does almost nothing)

Each prints the rate it reached (lower than unprofiled: cProfile roughly doubles the cost of Python
calls) and the functions with the most time of their own, then the most time including callees. The
other side is the floor so that what shows is this side's cost. Stats go to bench/results/*.prof for
``python -m pstats`` or snakeviz.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
import time
from contextlib import AsyncExitStack

from driver import open_raw_http, open_raw_stdio
from harness import FLOOR, RESULTS, WEATHER, launch_http, python_env

ARGUMENTS = {"city": "Beijing"}


async def profile_server(calls: int, http: bool, out: str) -> float:
    argv = [sys.executable, "-m", "cProfile", "-o", out, *WEATHER[1:]]  # the server writes its stats at exit
    async with AsyncExitStack() as stack:
        if http:
            server = launch_http(argv, env=python_env())
            stack.callback(server.stop)
            call = await open_raw_http(stack, server.url)
        else:
            call = await open_raw_stdio(stack, argv)
        return await timed(call, calls)


async def profile_client(calls: int, http: bool, out: str) -> float:
    from mcplab import Client
    from mcplab import http as http_transport
    from mcplab import stdio

    async with AsyncExitStack() as stack:
        if http:
            server = launch_http(FLOOR, env=python_env())
            stack.callback(server.stop)
            transport = http_transport(server.url)
        else:
            transport = stdio(FLOOR)
        client = await stack.enter_async_context(Client(transport))
        profiler = cProfile.Profile()
        profiler.enable()
        try:
            return await timed(lambda: client.call_tool("get_weather", ARGUMENTS), calls)
        finally:
            profiler.disable()
            profiler.dump_stats(out)


async def timed(call, calls: int) -> float:
    for _ in range(min(100, calls)):
        await call()
    started = time.perf_counter()
    for _ in range(calls):
        await call()
    return calls / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("side", choices=("server", "client"))
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--http", action="store_true", help="Streamable HTTP instead of stdio")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    out = str(RESULTS / f"{args.side}-{'http' if args.http else 'stdio'}.prof")
    run = profile_server if args.side == "server" else profile_client
    rate = asyncio.run(run(args.calls, args.http, out))
    print(f"{args.side}, {'http' if args.http else 'stdio'}: {rate:,.0f} round trips/s under cProfile; stats in {out}\n")
    stats = pstats.Stats(out)
    stats.sort_stats("tottime").print_stats(args.top)
    stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
