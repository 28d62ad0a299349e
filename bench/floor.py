"""The physical floor: the least a Python process can do per round trip, with no MCP library at all.

    python bench/floor.py                        # JSON-lines echo on stdin/stdout
    python bench/floor.py --loop asyncio         # the same echo inside an asyncio event loop
    python bench/floor.py --loop anyio           # ... inside anyio's (on asyncio), as mcplab's server runs
    python bench/floor.py --loop anyio-tasks     # ... each message answered in a task of a task group
    python bench/floor.py --http [--port 0]      # one raw Starlette endpoint, POST /mcp, under uvicorn

Both parse each message and answer it with the same result the weather server gives for
``get_weather(city="Beijing")``, so the bytes on the wire match a real round trip. They also answer
``initialize`` and ``tools/list``, just enough that an MCP client can connect: then a client's own
cost shows on its own. Nothing else of MCP is here (no capabilities checked, no sessions, no errors).
The ``--loop`` echoes are there for the cold start, what an event loop and anyio over it cost a server
before it has done anything of its own, and for the round trips: the most a server reading stdin in
anyio's loop can answer (``anyio``), and the same when every request is a task of its own, so that a
slow tool does not hold up the next request, as in mcplab's runner (``anyio-tasks``).
Like mcplab's servers, the HTTP one prints ``mcplab: serving NAME at URL`` on stderr and exits when
a piped stdin reaches end of file.
"""

from __future__ import annotations

import json
import sys

TEXT = "Beijing: sunny (晴), 12 °C, humidity 30%, wind 9 km/h"
TOOLS = {"tools": [{"name": "get_weather", "inputSchema": {"type": "object",
                                                           "properties": {"city": {"type": "string"}}}}]}


def answer(message: dict) -> dict | None:
    """The reply to one message (None for a notification)."""
    if "id" not in message:
        return None
    method = message.get("method")
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "floor", "version": "0"}}
    elif method == "tools/list":
        result = TOOLS
    else:
        result = {"content": [{"type": "text", "text": TEXT}], "isError": False}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def serve_stdio() -> None:
    write, flush = sys.stdout.write, sys.stdout.flush
    for line in sys.stdin:
        reply = answer(json.loads(line))
        if reply is not None:
            write(json.dumps(reply, ensure_ascii=False) + "\n")
            flush()


def serve_in_loop(loop: str) -> None:
    """The echo, reading stdin when the event loop says it is readable."""
    import os

    def reply_to(message: dict) -> None:
        reply = answer(message)
        if reply is not None:
            os.write(1, (json.dumps(reply, ensure_ascii=False) + "\n").encode())

    async def serve(wait_readable, start=None) -> None:
        pending = b""
        while True:
            await wait_readable(0)
            data = os.read(0, 1 << 16)
            if not data:
                return
            *lines, pending = (pending + data).split(b"\n")
            for line in lines:
                if start is None:
                    reply_to(json.loads(line))
                else:
                    start(json.loads(line))

    if loop.startswith("anyio"):
        import anyio

        async def in_tasks() -> None:
            async def one(message: dict) -> None:
                reply_to(message)
            async with anyio.create_task_group() as group:
                await serve(anyio.wait_readable, lambda message: group.start_soon(one, message))
                group.cancel_scope.cancel()

        if loop == "anyio-tasks":
            anyio.run(in_tasks)
        else:
            anyio.run(serve, anyio.wait_readable)
    else:
        import asyncio

        async def wait_readable(fd: int) -> None:
            loop = asyncio.get_running_loop()
            ready = loop.create_future()
            loop.add_reader(fd, ready.set_result, None)
            try:
                await ready
            finally:
                loop.remove_reader(fd)

        asyncio.run(serve(wait_readable))


def serve_http(host: str, port: int) -> None:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from harness import serve_uvicorn  # bench/harness.py, beside this file

    async def endpoint(request: Request) -> Response:
        reply = answer(await request.json())
        return JSONResponse(reply) if reply is not None else Response(status_code=202)

    serve_uvicorn(Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])]), "floor", host, port)


if __name__ == "__main__":
    if "--http" in sys.argv:
        from harness import flag

        serve_http(flag("--host", "127.0.0.1"), int(flag("--port", "0")))
    elif "--loop" in sys.argv:
        from harness import flag

        serve_in_loop(flag("--loop", "asyncio"))
    else:
        serve_stdio()
