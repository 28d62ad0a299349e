"""The stdio runner is anyio all through: a real server process serves on trio as it does on asyncio.

A small server (written here, its tools awaiting only anyio) runs under ``MCPLAB_ASYNC_BACKEND=trio``
and under the default, driven by mcplab's client over real pipes: tools/list, tools/call (a plain
tool answered in line too), a request the server sends back to the client, a cancelled call (no
response, the tool sees the cancellation), and the exit when stdin closes or SIGTERM comes.
"""

from __future__ import annotations

import signal
import sys
import textwrap

import anyio
import pytest

from mcplab.client import Client
from mcplab.server.runner import BACKEND_VARIABLE
from mcplab.transports.stdio import stdio

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

SERVER = textwrap.dedent('''
    import sys

    import anyio
    import sniffio

    from mcplab.server import Context, Server, run

    server = Server("backends", "1.0.0")


    @server.tool
    async def backend() -> str:
        """The async library this server runs on."""
        return sniffio.current_async_library()


    @server.tool
    def echo(text: str) -> str:
        """A plain function: the runner answers it in line, without a task of its own."""
        return text


    @server.tool
    async def wait(seconds: float) -> str:
        """Sleep, then say so; a cancelled sleep says so on stderr."""
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            print("wait: cancelled", file=sys.stderr, flush=True)
            raise
        return "woke"


    @server.tool
    async def client_roots(ctx: Context) -> str:
        """Ask the client for its roots (a server-to-client request)."""
        result = await ctx.request("roots/list")
        return ",".join(root["uri"] for root in result["roots"])


    run(server)
''')


@pytest.fixture
def anyio_backend():
    return "asyncio"  # the client's loop; the server's backend is the parameter below


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
async def test_a_stdio_server_serves_lists_calls_cancels_and_exits_on_either_backend(tmp_path, backend):
    script = tmp_path / "backends.py"
    script.write_text(SERVER, encoding="utf-8")
    transport = stdio([sys.executable, str(script)], env={BACKEND_VARIABLE: backend})
    client = Client(transport, era="legacy", timeout=10, roots=["file:///lab"])
    async with client:
        assert {tool.name for tool in await client.list_tools()} == {"backend", "echo", "wait", "client_roots"}
        assert (await client.call_tool("backend")).text == backend
        assert (await client.call_tool("echo", {"text": backend})).text == backend
        assert (await client.call_tool("client_roots")).text == "file:///lab"

        with anyio.move_on_after(0.5) as waited:
            await client.call_tool("wait", {"seconds": 30})
        assert waited.cancelled_caught
        assert (await client.call_tool("wait", {"seconds": 0})).text == "woke"  # still serving
        cancelled = [f.message.params["requestId"] for f in client.trace.frames
                     if f.direction == "c2s" and getattr(f.message, "method", None) == "notifications/cancelled"]
        assert len(cancelled) == 1
        assert not [f for f in client.trace.frames if f.direction == "s2c" and f.channel == "stdio"
                    and getattr(f.message, "id", None) == cancelled[0]]  # a cancelled request gets no response
        transport._pipes[0].close()  # end of file, as when the client goes away: the server exits by itself
        with anyio.fail_after(5):
            assert await transport._process.wait() == 0
    assert "wait: cancelled" in transport.stderr_lines  # the tool saw its cancellation


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
async def test_sigterm_ends_a_stdio_server_cleanly_on_either_backend(tmp_path, backend):
    script = tmp_path / "backends.py"
    script.write_text(SERVER, encoding="utf-8")
    transport = stdio([sys.executable, str(script)], env={BACKEND_VARIABLE: backend})
    async with Client(transport, era="legacy", timeout=10) as client:
        assert (await client.call_tool("backend")).text == backend
        transport._process.send_signal(signal.SIGTERM)  # "basic/lifecycle": the second step of a shutdown
        with anyio.fail_after(5):
            assert await transport._process.wait() == 0  # ended as at end of file, not killed by the signal
