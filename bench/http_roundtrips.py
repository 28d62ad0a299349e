"""Sequential ``tools/call`` round trips per second over Streamable HTTP: mcplab beside the official SDK.

    python bench/http_roundtrips.py [--calls 300] [--rounds 5] [--json FILE]

Two servers run as child processes on 127.0.0.1, each on a port it picked itself:

    servers/weather.py --http                 mcplab's server (JSON replies for plain results)
    this file --sdk-server --http             the official SDK's MCPServer (mcp==2.3.0), its default app

and four connections are opened once, in one process, on one asyncio loop:

    mcplab client → mcplab server     the pair this project ships
    SDK client    → SDK server        the official pair
    mcplab client → SDK server        same server as the SDK pair: isolates the client
    SDK client    → mcplab server     same server as ours: isolates the server

Each round times ``--calls`` sequential ``get_weather(city="Beijing")`` calls on every connection in
turn, so noise on the machine hits all four alike; the table shows the median round per connection.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
from contextlib import AsyncExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ARGUMENTS = {"city": "Beijing"}
OURS, SDK = "mcplab client → mcplab server", "SDK client    → SDK server"


def run_sdk_server(argv: list[str]) -> None:
    """The SDK's HTTP server, started the way ``mcplab.server.http.launch`` expects (URL on stderr)."""
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    from mcplab.server.http import BANNER, bind, endpoint_url

    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    app = MCPServer("sdk-weather")

    @app.tool()
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"{city}: sunny (晴), 12 °C, humidity 30%, wind 9 km/h"

    sock = bind(args.host, args.port)
    server = uvicorn.Server(uvicorn.Config(app.streamable_http_app(host=args.host), log_config=None,
                                           access_log=False, timeout_graceful_shutdown=1))

    async def serve() -> None:
        loop = asyncio.get_running_loop()

        def watch_stdin() -> None:  # exit with the parent, as mcplab's servers do
            while os.read(0, 1 << 16):
                pass
            loop.call_soon_threadsafe(setattr, server, "should_exit", True)

        threading.Thread(target=watch_stdin, daemon=True).start()
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.005)
        print(BANNER.format(name="sdk-weather", url=endpoint_url(sock)), file=sys.stderr, flush=True)
        await task

    asyncio.run(serve())


async def measure(call, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        await call()
    return calls / (time.perf_counter() - started)


async def main(calls: int, rounds: int) -> dict[str, list[float]]:
    from mcp import Client as SDKClient

    from mcplab import Client
    from mcplab.server.http import launch
    from mcplab.transports.http import http

    with launch([sys.executable, str(ROOT / "servers" / "weather.py")]) as ours, \
            launch([sys.executable, str(Path(__file__).resolve()), "--sdk-server"]) as sdk:
        async with AsyncExitStack() as stack:
            ours_ours = await stack.enter_async_context(Client(http(ours.url)))
            sdk_sdk = await stack.enter_async_context(SDKClient(sdk.url, mode="legacy"))
            ours_sdk = await stack.enter_async_context(Client(http(sdk.url)))
            sdk_ours = await stack.enter_async_context(SDKClient(ours.url, mode="legacy"))
            pairs = {
                OURS: lambda: ours_ours.call_tool("get_weather", ARGUMENTS),
                SDK: lambda: sdk_sdk.call_tool("get_weather", ARGUMENTS),
                "mcplab client → SDK server": lambda: ours_sdk.call_tool("get_weather", ARGUMENTS),
                "SDK client    → mcplab server": lambda: sdk_ours.call_tool("get_weather", ARGUMENTS),
            }
            for call in pairs.values():  # warm up: imports, caches, connection pools
                await measure(call, 50)
            results: dict[str, list[float]] = {name: [] for name in pairs}
            for _ in range(rounds):
                for name, call in pairs.items():
                    results[name].append(await measure(call, calls))
            return results


def report(results: dict[str, list[float]], calls: int, rounds: int) -> str:
    lines = [f"sequential tools/call round trips per second over Streamable HTTP on 127.0.0.1 "
             f"({rounds} rounds × {calls} calls, median round; python {sys.version.split()[0]})", ""]
    width = max(map(len, results))
    for name, rates in results.items():
        lines.append(f"  {name.ljust(width)}  {statistics.median(rates):7.0f}/s   "
                     f"(rounds: {', '.join(f'{r:.0f}' for r in rates)})")
    ratio = statistics.median(results[OURS]) / statistics.median(results[SDK])
    lines += ["", f"  mcplab pair / SDK pair: {ratio:.2f}×"]
    return "\n".join(lines)


if __name__ == "__main__":
    if "--sdk-server" in sys.argv:
        run_sdk_server([a for a in sys.argv[1:] if a != "--sdk-server"])
        raise SystemExit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the raw rates to this file")
    args = parser.parse_args()
    rates = asyncio.run(main(args.calls, args.rounds))
    print(report(rates, args.calls, args.rounds))
    if args.json:
        Path(args.json).write_text(json.dumps({"calls": args.calls, "rounds": args.rounds, "rates": rates},
                                              ensure_ascii=False, indent=2), encoding="utf-8")
