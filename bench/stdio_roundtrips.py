"""Sequential ``tools/call`` round trips per second over stdio: mcplab's client beside the official SDK's.

    python bench/stdio_roundtrips.py [--calls 500] [--rounds 5] [--json FILE]

Six connections are opened once, in one process, on one asyncio loop:

    mcplab client → servers/weather.py        (the pair this project ships)
    SDK client    → SDK server                (the official pair, mcp==2.3.0)
    mcplab client → SDK server                (same server as the SDK pair: isolates the client)
    SDK client    → servers/weather.py        (same server as ours: isolates the client)
    mcplab client → bare server               (a 20-line loop: what the client alone can do)
    SDK client    → bare server

Each round times ``--calls`` sequential calls of ``get_weather(city="Beijing")`` on every
connection in turn, so background noise on the machine hits all of them alike; the table shows
the median round per connection. Every server answers the same call with the same kind of text.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
WEATHER = [sys.executable, str(ROOT / "servers" / "weather.py")]
SDK_SERVER = [sys.executable, str(Path(__file__).resolve()), "--sdk-server"]
BARE_SERVER = [sys.executable, str(Path(__file__).resolve()), "--bare-server"]
ARGUMENTS = {"city": "Beijing"}


def run_sdk_server() -> None:
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("sdk-weather")

    @app.tool()
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"{city}: sunny (晴), 12 °C, humidity 30%, wind 9 km/h"

    app.run()


def run_bare_server() -> None:
    """Just enough MCP for this benchmark, with no framework: the floor of a server's cost."""
    result = {"content": [{"type": "text", "text": "Beijing: sunny (晴), 12 °C, humidity 30%, wind 9 km/h"}]}
    tools = {"tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}]}
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "initialize":
            answer = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "bare", "version": "0"}}
        else:
            answer = tools if message["method"] == "tools/list" else result
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer}) + "\n")
        sys.stdout.flush()


async def measure(call, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        await call()
    return calls / (time.perf_counter() - started)


async def main(calls: int, rounds: int) -> dict[str, list[float]]:
    from contextlib import AsyncExitStack

    from mcp import Client as SDKClient
    from mcp import StdioServerParameters

    from mcplab import Client, stdio

    def sdk_params(argv: list[str]) -> StdioServerParameters:
        return StdioServerParameters(command=argv[0], args=argv[1:])

    async with AsyncExitStack() as stack:
        ours_weather = await stack.enter_async_context(Client(stdio(WEATHER)))
        sdk_sdk = await stack.enter_async_context(SDKClient(sdk_params(SDK_SERVER), mode="legacy"))
        ours_sdk = await stack.enter_async_context(Client(stdio(SDK_SERVER)))
        sdk_weather = await stack.enter_async_context(SDKClient(sdk_params(WEATHER), mode="legacy"))
        ours_bare = await stack.enter_async_context(Client(stdio(BARE_SERVER)))
        sdk_bare = await stack.enter_async_context(SDKClient(sdk_params(BARE_SERVER), mode="legacy"))
        pairs = {
            "mcplab client → servers/weather.py": lambda: ours_weather.call_tool("get_weather", ARGUMENTS),
            "SDK client    → SDK server": lambda: sdk_sdk.call_tool("get_weather", ARGUMENTS),
            "mcplab client → SDK server": lambda: ours_sdk.call_tool("get_weather", ARGUMENTS),
            "SDK client    → servers/weather.py": lambda: sdk_weather.call_tool("get_weather", ARGUMENTS),
            "mcplab client → bare server": lambda: ours_bare.call_tool("get_weather", ARGUMENTS),
            "SDK client    → bare server": lambda: sdk_bare.call_tool("get_weather", ARGUMENTS),
        }
        for call in pairs.values():  # warm up: imports, caches, the servers' first-call costs
            await measure(call, 50)
        results: dict[str, list[float]] = {name: [] for name in pairs}
        for _ in range(rounds):
            for name, call in pairs.items():
                results[name].append(await measure(call, calls))
        return results


def report(results: dict[str, list[float]], calls: int, rounds: int) -> str:
    lines = [f"sequential tools/call round trips per second over stdio "
             f"({rounds} rounds × {calls} calls, median round; python {sys.version.split()[0]})", ""]
    width = max(map(len, results))
    for name, rates in results.items():
        lines.append(f"  {name.ljust(width)}  {statistics.median(rates):7.0f}/s   "
                     f"(rounds: {', '.join(f'{r:.0f}' for r in rates)})")
    ours = statistics.median(results["mcplab client → servers/weather.py"])
    sdk = statistics.median(results["SDK client    → SDK server"])
    lines += ["", f"  mcplab pair / SDK pair: {ours / sdk:.1f}×"]
    return "\n".join(lines)


if __name__ == "__main__":
    if "--sdk-server" in sys.argv:
        run_sdk_server()
        raise SystemExit(0)
    if "--bare-server" in sys.argv:
        run_bare_server()
        raise SystemExit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the raw rates to this file")
    args = parser.parse_args()
    rates = anyio.run(main, args.calls, args.rounds)
    print(report(rates, args.calls, args.rounds))
    if args.json:
        Path(args.json).write_text(json.dumps({"calls": args.calls, "rounds": args.rounds, "rates": rates},
                                              ensure_ascii=False, indent=2), encoding="utf-8")
